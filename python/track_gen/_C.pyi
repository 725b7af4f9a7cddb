"""Type stubs of the compiled extension ``track_gen._C`` (python/csrc/bindings.hpp, built by
module.cu with CUDA or module_cpu.cpp without).

The extension is the low-level layer under :mod:`track_gen.course`: use ``Course`` there, which
checks its arguments, preallocates outputs and documents units and shapes. ``Course`` (CUDA
builds only) and ``HostCourse`` (both builds) have the same methods but the graph ones; so have
``GateSequences`` (CUDA builds only) and ``HostGateSequences`` (both builds), the gate sequences
under ``track_gen.generator.GateGenerator``. Tensors here are CUDA tensors on the course's
device (CPU tensors for the ``Host`` types) unless said otherwise; ``stream`` is ``None`` (torch's
current stream) or a ``cudaStream_t`` handle as an int (``Host`` types: ``None`` only). Every call
is asynchronous on that stream unless said otherwise (``Host`` types: synchronous). C++ ``std::invalid_argument`` arrives as ``ValueError``;
``track_gen::capture_error`` as ``track_gen.exec.errors.CaptureError``.
``python/tests/test_binding_tables.py`` keeps this file's names in step with the bindings.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import torch

#: The course types this build has: ("cuda", "cpu") or ("cpu",).
backends: Tuple[str, ...]

class _CourseBase:
    """The methods of both course types (not a class of the extension: a stub-only base)."""
    def __init__(
        self,
        preset: str,
        num_envs: int,
        overrides: Dict[str, object],
        checkpoint_spacing: float,
        device: int,
        tracks: Sequence[torch.Tensor] = ...,
        kind: str = "control_points",
        recentre: bool = False,
        variants: Sequence[Dict[str, object]] = ...,
        env_variant: Sequence[int] = ...,
    ) -> None:
        """Allocates and generates every env's track (synchronous). ``tracks``: float32 [P, 3]
        CPU tensors (user tracks); ``preset`` one of track, drone_track, elevated_drone_track,
        gate_course (then ``checkpoint_spacing`` must be 0); ``variants`` (flat override dicts) and
        ``env_variant`` ([E] indices) give per-env parameters (C++ track_variants)."""
    def bind(
        self,
        position: torch.Tensor,
        orientation: Optional[torch.Tensor] = None,
        half_extents: Optional[torch.Tensor] = None,
        stream: Optional[int] = None,
    ) -> None:
        """position float32 [E, 3]; orientation float32 [E, 4] (x, y, z, w) and half_extents
        float32 [E, 2] [m], both or neither (checked once: synchronises the stream)."""
    def step(
        self,
        stream: Optional[int] = None,
        passed: Optional[torch.Tensor] = None,
        wrong_way: Optional[torch.Tensor] = None,
        oob: Optional[torch.Tensor] = None,
    ) -> None: ...
    def regenerate(
        self, mask: Optional[torch.Tensor], advance: bool, stream: Optional[int], conditional: bool, capture_mode: int
    ) -> None:
        """mask: None or [E] int32 / bool / uint8; capture_mode 0 global, 1 thread-local, 2 relaxed."""
    def generation_launches(self, stream: Optional[int] = None) -> int:
        """Synchronises the stream."""
    def enable_ahead(self, refill_at: int = 0, stream: Optional[int] = None) -> None:
        """Tracks built ahead (C++ course::enable_ahead): refill_at 0 (automatic) or in [1, E].
        Allocates one more batch of tracks and fills it on the stream: not while capturing.
        ValueError: refill_at out of range; RuntimeError: already enabled."""
    @property
    def ahead_enabled(self) -> bool: ...
    @property
    def ahead_refill_at(self) -> int:
        """The refill threshold in use (refill_at resolved); 0 when not enabled."""
    def ahead_statistics(self, stream: Optional[int] = None) -> Dict[str, int]:
        """{"served", "missed", "refilled"} since enable_ahead (zeros when not enabled).
        Synchronises the stream; CaptureError while it is capturing."""
    def tensors(self) -> Dict[str, torch.Tensor]:
        """Every track, progress and contact array as a tensor over the course's memory."""
    def owner_use_count(self) -> int: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def num_samples(self) -> int: ...
    @property
    def max_gates(self) -> int: ...
    @property
    def checkpoint_spacing(self) -> float: ...
    @property
    def device(self) -> int: ...
    @property
    def pipeline(self) -> str:
        """The presets:: pipeline make_course chose: "track_pipeline", "elevated_track_pipeline",
        "elevated_<family>_pipeline" (bezier, hull, voronoi, checkpoint), "elevated_family_pipeline",
        "elevated_any_family_pipeline", "elevated_relaxed_family_pipeline", "polar_gate_course_pipeline" or
        "gate_course_pipeline"."""
    def params(self) -> Dict[str, object]: ...
    def localize(
        self,
        position: torch.Tensor,
        hints: torch.Tensor,
        window: int,
        s: torch.Tensor,
        n: torch.Tensor,
        vertical: torch.Tensor,
        curvature: torch.Tensor,
        heading: torch.Tensor,
        lost: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None: ...
    def track_ahead(
        self,
        s: torch.Tensor,
        position: torch.Tensor,
        yaw: torch.Tensor,
        count: int,
        spacing: float,
        out: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None: ...
    def progress_delta(
        self, s_prev: torch.Tensor, s_now: torch.Tensor, out: torch.Tensor, stream: Optional[int] = None
    ) -> None: ...
    def spawn(
        self,
        mask: Optional[torch.Tensor],
        s: torch.Tensor,
        lateral: Optional[torch.Tensor],
        position: torch.Tensor,
        yaw: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None: ...
    def collide(
        self,
        position: torch.Tensor,
        orientation: torch.Tensor,
        half_extents: torch.Tensor,
        hints: torch.Tensor,
        window: int,
        flags: torch.Tensor,
        clearance: torch.Tensor,
        nearest: torch.Tensor,
        normal: torch.Tensor,
        side: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None: ...
    def gate_frame_collision(
        self,
        position: torch.Tensor,
        radius: float,
        half_thickness: float,
        half_depth: float,
        scope: int,
        flags: torch.Tensor,
        depth: torch.Tensor,
        distance: torch.Tensor,
        point: torch.Tensor,
        normal: torch.Tensor,
        member: torch.Tensor,
        gate: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None:
        """position float32 [E, 3]; scope 0 the next and previous gate, 1 every gate; flags, member,
        gate int32 [E], depth, distance float32 [E], point, normal float32 [E, 3] (written).
        ValueError: radius not in (0, 1e6], a half size not in [1e-4, 1e6], scope not 0 or 1."""
    def speed_profile(
        self,
        a_lat_max: float,
        a_accel: float,
        a_brake: float,
        v_cap: float,
        out: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None: ...
    def cones(
        self,
        side: int,
        spacing: float,
        capacity: int,
        out: torch.Tensor,
        count: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None: ...
    def walls(
        self,
        side: int,
        spacing: float,
        capacity: int,
        scratch: torch.Tensor,
        out: torch.Tensor,
        count: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None:
        """Wall pieces along a border (border_walls): side 0 left, 1 right; scratch float32
        [E, C + 1, 3]; out float32 [E, C, 5] (x, y, z, yaw, length), NaN-padded; count int32 [E]."""
    def attach_heightfield(self, resolution: int, margin: float, stream: Optional[int] = None) -> None:
        """Allocates a heightfield (heightfield.hpp) of R = resolution texels per side and margin
        [m], attaches it (baked now, then by each regenerate for its envs); replaces the one
        attached before. Not while capturing."""
    def heightfield_tensors(self) -> Dict[str, torch.Tensor]:
        """{"heights": float32 [E, R, R] [m], "headers": float32 [E, 4] (x0, y0, cell, inv_cell)},
        over the field's memory; RuntimeError when none is attached."""
    def sample_heights(
        self, x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, stream: Optional[int] = None
    ) -> None:
        """x, y, out float32 [E] or [E, K] (one shape): bilinear heights [m], clamped to the grid."""
    def attach_sdf(self, resolution: int, stream: Optional[int] = None) -> None:
        """Allocates an SDF collision field (sdf.hpp) of R = resolution texels per side, attaches it
        (baked now, then by each regenerate for its envs); replaces the one attached before. Not
        while capturing."""
    def sdf_tensors(self) -> Dict[str, torch.Tensor]:
        """{"distances": float32 [E, R, R] [m], "headers": float32 [E, 4] (x0, y0, cell, inv_cell)},
        over the field's memory; RuntimeError when none is attached."""
    def collide_sdf(
        self,
        position: torch.Tensor,
        orientation: torch.Tensor,
        half_extents: torch.Tensor,
        flags: torch.Tensor,
        clearance: torch.Tensor,
        nearest: torch.Tensor,
        normal: torch.Tensor,
        side: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None:
        """collide's boxes and outputs against the attached SDF (collide_boxes_sdf; no hints)."""
    def collide_discs(
        self,
        position: torch.Tensor,
        orientation: torch.Tensor,
        half_extents: torch.Tensor,
        discs: torch.Tensor,
        radius: float,
        flags: torch.Tensor,
        depth: torch.Tensor,
        point: torch.Tensor,
        normal: torch.Tensor,
        disc: torch.Tensor,
        stream: Optional[int] = None,
    ) -> None:
        """Boxes as collide's against discs float32 [E, K, 3] of one radius [m] (collide_box_discs):
        flags, disc int32 [E]; depth float32 [E]; point, normal float32 [E, 3]."""

class Course(_CourseBase):
    """A course on a CUDA device (CUDA builds only)."""
    def retain_capture(self, stream: Optional[int] = None) -> None: ...
    def retain_graph(self, graph: torch.cuda.CUDAGraph) -> None: ...

class HostCourse(_CourseBase):
    """A course on the CPU (C++ backend::host); ``device`` is ignored, ``stream`` must be None."""

class _GateSequencesBase:
    """The methods of both gate-sequence types (a stub-only base): C++ ``gate_sequences``
    (gate_sequence.hpp) of one backend, for ``track_gen.generator.GateGenerator``."""
    def __init__(self, preset: str, num_envs: int, overrides: Dict[str, object], device: int) -> None:
        """Allocates E sequences of ``gates.max_gates`` slots, zeroed (count 0, status 0, NaN
        frames) on the stream; builds nothing (call ``generate``). ``preset`` as the courses'.
        ValueError: a parameter out of range, or a 'voronoi' / 'checkpoint' / 'repulsive' family
        (not built here), or polar.control_points > 256."""
    def generate(self, mask: Optional[torch.Tensor] = None, advance: bool = False, stream: Optional[int] = None) -> None:
        """Builds the sequences of the envs ``mask`` selects (None: every env; [E] int32 / bool /
        uint8), ``advance``: their next episode first; then their orientations and posts."""
    def tensors(self) -> Dict[str, torch.Tensor]:
        """{"centre", "forward", "left", "right": float32 [E, G, 3] [m]; "orientation": float32
        [E, G, 4] (x, y, z, w); "count", "status", "episode": int32 [E]}; NaN past each count.
        centre, forward, count, status, episode view the sequences' memory; the others are
        tensors this object rewrites at each generate."""
    def owner_use_count(self) -> int: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def max_gates(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def half_width(self) -> float:
        """[m]"""
    @property
    def half_height(self) -> float:
        """[m]"""
    def params(self) -> Dict[str, object]: ...

class GateSequences(_GateSequencesBase):
    """Gate sequences on a CUDA device (CUDA builds only)."""

class HostGateSequences(_GateSequencesBase):
    """Gate sequences on the CPU (C++ backend::host); ``device`` is ignored, ``stream`` must be None."""

def capture_info(stream: int) -> Tuple[int, int]:  # CUDA builds only
    """(status, id) of a stream's capture: status 0 none, 1 active, 2 invalidated."""

def track_fields() -> List[Tuple[str, str]]: ...
def progress_fields() -> List[Tuple[str, str]]: ...
def contact_fields() -> List[Tuple[str, str]]: ...
def status_bits() -> Dict[str, int]: ...
def progress_flag_bits() -> Dict[str, int]: ...
def release_deferred() -> None:
    """Not inside a capture."""

def shard_of(total_envs: int, world_size: int, rank: int, base: int = 0) -> Tuple[int, int]:
    """(first, num_envs) of the rank's shard. Host only, synchronous."""

def preset_params(preset: str, num_envs: int, overrides: Dict[str, object]) -> Dict[str, object]: ...

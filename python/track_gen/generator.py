"""Generate-only use, with the seed system's names: ``TrackGenerator(params).generate()`` returns a
``Track`` of the batch's tracks (centre line, inner and outer edges, frames, arc lengths, validity,
winding) without binding agents or tracking progress::

    from track_gen.generator import TrackGenerator
    from track_gen.pipeline import presets

    gen = TrackGenerator(presets.track(num_envs=4096, device="cuda:0", seed=7))
    track = gen.generate()                   # the current episode's tracks (episode 0 at first)
    track = gen.generate(advance=True)       # every env's next track
    track.center, track.inner, track.outer   # float32 [E, N, 3]

It is a :class:`~track_gen.course.Course` underneath (``gen.course``): the same tracks, the same
devices (CUDA or ``"cpu"``), and everything a course offers when you need more.

Gates alone, the seed system's ``GateGenerator(...).generate()`` returning a ``GateSequence``
(C++ ``gate_sequences``, include/track_gen/gate_sequence.hpp: no course line, one thread per
env, about a thirtieth of a gate course's cost: docs/drones.md)::

    from track_gen.generator import GateGenerator

    gen = GateGenerator(presets.gate_course(num_envs=4096, device="cuda:0", seed=7))
    seq = gen.generate()                     # episode 0's gates
    seq = gen.generate(advance=True)         # every env's next sequence
    seq.position, seq.forward                # float32 [E, G, 3]; NaN at and past seq.count
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from .course import Course, _checked_tensor, _given_as, _impl_class, _stream_arg, _torch_stream
from .pipeline.presets import TrackParams

__all__ = ["GateGenerator", "GateSequence", "Track", "TrackGenerator"]


class Track(NamedTuple):
    """A batch of tracks with the seed system's ``Track`` names, ``[E, N, ...]`` tensors on the
    generator's device (E envs, N samples). ``center``, ``tangent``, ``normal``, ``arclen``,
    ``length`` are views of the course's memory (rewritten by the next ``generate``); ``inner``,
    ``outer``, ``valid``, ``winding``, ``count`` are new tensors."""
    center: object   #: float32 [E, N, 3] [m]: centreline samples, uniform in arc length
    outer: object    #: float32 [E, N, 3] [m]: the outer road edge (the right one on a counter-clockwise loop)
    inner: object    #: float32 [E, N, 3] [m]: the inner road edge (the left one on a counter-clockwise loop)
    tangent: object  #: float32 [E, N, 3]: unit tangents (direction of travel)
    normal: object   #: float32 [E, N, 3]: unit LEFT normals (facing the inner edge on counter-clockwise loops)
    arclen: object   #: float32 [E, N] [m]: arc length of each sample from the start line
    length: object   #: float32 [E] [m]: centreline length
    valid: object    #: bool [E]: the track passed validation (status bit valid; a fallback ellipse is not)
    count: object    #: int32 [E]: samples in use, N for every env
    winding: object  #: float32 [E]: +1 counter-clockwise, -1 clockwise, 0 degenerate (sign of the xy area)


class TrackGenerator:
    """Generates a batch of tracks (one per env) and regenerates all of them on request: the
    seed system's ``TrackGenerator`` over a :class:`~track_gen.course.Course` of the ``track``
    pipeline (or another, as the parameters ask: a family's own for a batch of one family,
    ``elevated_any_family_pipeline``
    when they can draw the repulsive family, ``elevated_relaxed_family_pipeline`` when they turn
    the centreline relaxation on, e.g. the seed system's ``relax_enable=True``: see
    ``Course.pipeline``)."""

    def __init__(self, params: TrackParams, checkpoint_spacing: float = 0.6):
        """Builds every env's episode-0 track now (see :class:`~track_gen.course.Course`).

        Raises:
            TypeError, ValueError: as ``Course.track`` (a parameter out of range names itself).
        """
        self.course = Course.track(params, checkpoint_spacing)  #: the course underneath
        self.num_envs = self.course.num_envs
        self._fresh = True

    def generate(self, num_envs: Optional[int] = None, advance: bool = False) -> Track:
        """The batch's tracks. ``advance=False``: the current episode's tracks, rebuilt bit for bit
        (as the seed's ``generate()`` without seeds reproduces its batch); ``advance=True``: every
        env's next episode (new tracks). The first call returns the tracks built at construction.

        Args:
            num_envs: ``None`` or the batch size (the batch is fixed: any other number raises).
            advance: move every env to its next track.
        Raises:
            ValueError: ``num_envs`` is not the batch's size.
            TypeError: ``advance`` is not a bool.
        """
        if num_envs is not None and (isinstance(num_envs, bool) or num_envs != self.num_envs):
            raise ValueError(f"track_gen: TrackGenerator.generate: num_envs = {num_envs!r}; the batch is fixed at "
                             f"{self.num_envs} envs (build another generator for another size)")
        if not isinstance(advance, bool):
            raise TypeError(f"advance must be a bool, got {type(advance).__name__} {advance!r}")
        if advance or not self._fresh:
            self.course.regenerate(mask=None, advance=advance)
        self._fresh = False
        return self._track()

    def _track(self) -> Track:
        import torch  # noqa: PLC0415 - loaded with the course

        from .course import status_bits  # noqa: PLC0415

        t = self.course.tracks
        p = t.position
        x, y = p[..., 0], p[..., 1]
        area = 0.5 * (x * torch.roll(y, -1, dims=1) - torch.roll(x, -1, dims=1) * y).sum(dim=1)
        winding = torch.sign(area)
        ccw = (winding >= 0).view(-1, 1, 1)
        inner = torch.where(ccw, t.border_left, t.border_right)
        outer = torch.where(ccw, t.border_right, t.border_left)
        valid = (t.status & status_bits()["valid"]) != 0
        count = torch.full_like(t.num_gates, self.course.num_samples)
        return Track(p, outer, inner, t.tangent, t.normal, t.arc_length, t.length, valid, count, winding)


class GateSequence(NamedTuple):
    """A batch of gate sequences with the seed system's ``GateSequence`` names, on the generator's
    device (E envs, G = ``gates.max_gates`` gate slots per env; gate ``g`` of env ``e`` at
    ``[e, g]``, the seed's flat ``[E * G]`` index ``e * G + g``). Slots ``g >= count[e]`` hold NaN
    in every per-gate field. Units: metres.

    ``position``, ``forward``, ``orientation``, ``left``, ``right``, ``count``, ``status`` and
    ``episode`` are the generator's tensors (views of its memory that keep it alive), rewritten in
    place by the next ``generate`` (for the envs it touches): ``.clone()`` what you keep. ``valid`` is a new tensor each call;
    ``half_size`` one tensor made at construction.

    The seed's ``tangent`` (the 3D course tangent where ``forward`` is its level projection) is
    not here: the library keeps the gate-plane normal only (C++ ``gate_sequence_ref::forward``).
    """
    position: object     #: float32 [E, G, 3] [m]: gate centres
    forward: object      #: float32 [E, G, 3]: unit gate-plane normals, the crossing direction
    orientation: object  #: float32 [E, G, 4]: unit quaternions (x, y, z, w), world from gate axes (x forward, y left, z up)
    half_size: object    #: float32 [E] [m]: half the opening's width (params half_width; every gate of a batch alike)
    left: object         #: float32 [E, G, 3] [m]: left posts, position + half_size * left axis (level)
    right: object        #: float32 [E, G, 3] [m]: right posts, position - half_size * left axis
    valid: object        #: int32 [E]: 1 when the sequence passed its tests (status bit valid), else 0 (as the seed)
    count: object        #: int32 [E]: gates of each env, in [0, G]
    status: object       #: int32 [E]: status bits (``status_bits()``: valid or the failed tests; attempts in bits 8-15)
    episode: object      #: int32 [E]: each env's episode (0 at construction, +1 per advancing generate)


class GateGenerator:
    """Generates a batch of drone-racing gate sequences, one per env, without a course line: the
    seed system's ``GateGenerator`` over C++ ``track_gen::gate_sequences`` (gate_sequence.hpp).

    Per env and episode: the family's anchors (polar, bezier or hull; ``generator=`` or
    ``generator_weights=``), ordered (``gates.ordering``), thinned to a count drawn in
    [``gates.min_gates``, ``gates.max_gates``], lifted onto the elevation profile, pushed at least
    ``gates.min_spacing`` apart in 3D, each facing along the closed centripetal Catmull-Rom
    spline through the gates (level for ``gates.align`` 0), then tested, with up to
    ``validate.max_attempts`` attempts. Use :meth:`~track_gen.course.Course.gates` instead when you
    need the course line (progress, localization, observations).

    On a CUDA device every call is asynchronous on torch's current stream (or ``stream=``); on the
    CPU (``device="cpu"``) it runs to completion on the calling thread.
    """

    def __init__(self, params: TrackParams):
        """Allocates the sequences and builds every env's episode-0 sequence (on torch's current
        stream of ``params.device``; on the CPU now).

        Args:
            params: a :class:`~track_gen.pipeline.presets.TrackParams`, normally
                ``presets.gate_course(num_envs, device=..., seed=..., gates={...})``. Read:
                num_envs, env_offset, seed, half_width, gate_half_height, generator,
                generator_weights, polar, bezier, hull, elevation, gates and
                validate.max_attempts.
        Raises:
            TypeError: ``params`` is not a TrackParams.
            ValueError: a parameter out of range (the message names it and its range), or a
                family whose anchors are not built here ('voronoi', 'checkpoint': use
                ``Course.gates``; 'repulsive': no gate course draws it), or polar.control_points > 256.
            track_gen.exec.errors.CaptureError: the stream is capturing (construction allocates).
            RuntimeError: a CUDA device asked of an extension built without CUDA.
        """
        if not isinstance(params, TrackParams):
            raise TypeError(f"params must be a track_gen.pipeline.presets.TrackParams "
                            f"(presets.gate_course(...)), got {type(params).__name__}")
        import torch  # noqa: PLC0415 - loaded with the extension

        from . import _extension  # noqa: PLC0415 - lazy: loads torch and the extension
        ext = _extension()
        impl_type = _impl_class(ext, params, "GateSequences", "HostGateSequences")
        self.params = params  #: the TrackParams it was built from
        try:
            self._impl = impl_type(params.preset, params.num_envs, dict(params.overrides), params.device_index)
        except ValueError as e:
            if "gate_course_pipeline" in str(e):  # the C++ advice, in Python's terms
                raise ValueError(f"{e} (from Python: Course.gates(params))") from None
            named = _given_as(params, e)
            if named is e:
                raise
            raise named from None
        #: environments E, gate slots per env G (gates.max_gates), device
        self.num_envs = int(self._impl.num_envs)
        self.max_gates = int(self._impl.max_gates)
        self.device = "cpu" if params.is_cpu else f"cuda:{self._impl.device}"
        #: half-width [m] and half-height [m] of every gate's opening
        self.half_width = float(self._impl.half_width)
        self.half_height = float(self._impl.half_height)
        self._tensors = self._impl.tensors()
        self._half_size = torch.full((self.num_envs,), self.half_width, dtype=torch.float32, device=self.device)
        self._valid_bit = int(ext.status_bits()["valid"])
        self._impl.generate(None, False, None)
        self._fresh = True

    def generate(self, num_envs: Optional[int] = None, advance: bool = False, mask=None,
                 stream=None) -> GateSequence:
        """The batch's gate sequences. ``advance=False``: the current episode's sequences, built
        again bit for bit; ``advance=True``: the next episode's (new gates). With ``mask``, only
        the envs it selects are built (and advanced); the others keep their sequences, bit for
        bit. The first call without ``advance`` or ``mask`` returns the sequences built at
        construction.

        Asynchronous on ``stream`` (CUDA; the tensors are written in stream order, read them on
        or after it); allocates only the returned ``valid`` tensor. On the CPU it runs now. On a
        capturing stream (``torch.cuda.graph``) the call is recorded; the graph does not hold the
        generator's memory, so keep the generator or its tensors alive while the graph lives.

        Args:
            num_envs: ``None`` or the batch size (the batch is fixed: any other number raises).
            advance: move the selected envs to their next episode first.
            mask: ``None`` (every env) or an ``[E]`` int32, bool or uint8 tensor (or DLPack
                array) on the generator's device, contiguous; nonzero selects. Read in place.
            stream: ``None`` (torch's current stream), a ``torch.cuda.Stream`` or an int handle;
                ``None`` only on the CPU.
        Returns:
            a :class:`GateSequence` (see there for shapes and which tensors are views).
        Raises:
            ValueError: ``num_envs`` is not the batch's size; a mask of the wrong dtype, shape,
                device or layout; a stream given on the CPU.
            TypeError: ``advance`` is not a bool.
        """
        import torch  # noqa: PLC0415 - loaded with the extension

        if num_envs is not None and (isinstance(num_envs, bool) or num_envs != self.num_envs):
            raise ValueError(f"track_gen: GateGenerator.generate: num_envs = {num_envs!r}; the batch is fixed at "
                             f"{self.num_envs} envs (build another generator for another size)")
        if not isinstance(advance, bool):
            raise TypeError(f"advance must be a bool, got {type(advance).__name__} {advance!r}")
        if mask is not None:
            mask = _checked_tensor(mask, self.device, "GateGenerator.generate: mask", ("int32", "bool", "uint8"),
                                   (self.num_envs,), f"an int32, bool or uint8 tensor of shape [{self.num_envs}]")
        handle = _stream_arg(stream)
        if advance or mask is not None or not self._fresh:
            self._impl.generate(mask, advance, handle)
        self._fresh = False
        t = self._tensors
        with _torch_stream(stream):
            valid = ((t["status"] & self._valid_bit) != 0).to(torch.int32)
        return GateSequence(t["centre"], t["forward"], t["orientation"], self._half_size, t["left"], t["right"],
                            valid, t["count"], t["status"], t["episode"])

    def __repr__(self) -> str:
        return (f"GateGenerator(preset={self.params.preset!r}, num_envs={self.num_envs}, device={self.device!r}, "
                f"max_gates={self.max_gates})")

"""``Course``: a batch of closed race tracks on one CUDA device or on the CPU (one per environment),
their gates, and the progress of one agent per environment, driven from PyTorch::

    from track_gen.course import Course
    from track_gen.pipeline import presets

    course = Course.track(presets.track(num_envs=64, device="cuda:0"), checkpoint_spacing=0.6)
    course.bind(position=positions)          # float32 [64, 3] CUDA tensor, yours, updated in place
    out = course.step()                      # progress, gates, laps, off-track (torch's current stream)
    out.events.checkpoint_passed             # int32 [64]: the gate passed this step, -1 when none
    # with boxes: course.bind(position=p, orientation=q_wxyz, half_extents=h); course.step().contacts
    course.regenerate(mask=done, advance=True)   # [64] int32 or bool: nonzero = episode ended
    course.laps, course.next_gate, course.tracks.position   # tensors over the course's memory

Every call is asynchronous on torch's current CUDA stream (or ``stream=``), allocates nothing and
synchronises nothing, except construction (allocation + generation), ``enable_ahead``
(allocation) and ``generation_launches`` / ``ahead_statistics``. Calls on a capturing stream
(inside ``torch.cuda.graph``) are recorded into the capture; see :mod:`track_gen.interop.torch`.

The output tensors view the course's device memory without a copy and keep it alive (not the
``Course`` object); they change in place with every ``step`` / ``regenerate`` (or graph replay):
``.clone()`` what you want to keep.

On the CPU (``presets.track(..., device="cpu")``: the C++ host backend, the same tracks as on
the GPU up to float rounding) every call runs to completion on the calling thread, tensors are
CPU tensors, ``stream`` must be None and there are no graphs to record into.
"""
from __future__ import annotations

import ctypes
import functools
import math
import numbers
import operator
import os
import re
from typing import Mapping, NamedTuple, Optional, Sequence

from .exec import recording
from .pipeline.presets import TrackParams

__all__ = ["BoxContact", "Cones", "Course", "DiscHit", "Events", "GateFrameHit", "MAX_PER_ENV", "Progress", "Spawn",
           "StepOutputs", "TrackFrame", "Tracks", "Walls", "progress_flag_bits", "status_bits"]


def _record_type(name: str, fields, doc: str):
    """A NamedTuple type with one field per (name, description) row of a C++ field table."""
    lines = [doc, "", "Fields (C++ ``detail/fields.hpp``, the one place they are written down):", ""]
    lines += [f"- ``{field}``: {description}" for field, description in fields]
    base = NamedTuple(name + "Base", [(field, object) for field, _ in fields])
    return type(name, (base,), {"__doc__": "\n".join(lines), "__slots__": ()})


@functools.lru_cache(maxsize=None)
def _record_types() -> dict:
    """``Progress`` and ``Tracks`` from the extension's field tables (loads torch and the extension)."""
    from . import _extension  # noqa: PLC0415 - lazy: loads torch and the extension
    ext = _extension()
    progress = _record_type(
        "Progress", ext.progress_fields(),
        "Progress state, [E] tensors over the course's memory (E = num_envs; last_position [E, 3]); "
        "uint32 fields are int32 tensors of the same bits.")
    tracks = _record_type(
        "Tracks", ext.track_fields(),
        "Track arrays over the course's memory: per-sample fields [E, N], per-gate fields [E, G] "
        "(G = max_gates; slots >= num_gates[e] unused), per-env fields [E]; float3 fields get a "
        "trailing 3. Rewritten by ``regenerate`` for the envs it touches.")
    tracks.half_width = property(
        lambda self: self.half_widths.amin(dim=-1),
        doc="float32 [E, N] [m]: the narrower of the two half-widths (half_widths[..., 0] left, "
            "[..., 1] right); a new tensor, not a view (the two are equal on generated tracks)")
    return {"Progress": progress, "Tracks": tracks}


def __getattr__(name: str):
    """``Progress`` and ``Tracks`` are built from the C++ field tables on first use (PEP 562)."""
    if name in ("Progress", "Tracks"):
        return _record_types()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TrackFrame(NamedTuple):
    """Where each agent is on its track (:meth:`Course.localize`), ``[E]`` tensors on the course's
    device, overwritten by the next call (``.clone()`` what you keep). Names of the seed system's
    ``TrackFrame`` where it has them."""
    s: object          #: float32 [E] [m]: arc length of the nearest centreline point, in [0, L)
    n: object          #: float32 [E] [m]: lateral offset, positive LEFT (positive right with seed_convention=True)
    n_up: object       #: float32 [E] [m]: height above the centreline at that point
    curvature: object  #: float32 [E] [1/m]: signed curvature there, positive turning left
    heading: object    #: float32 [E] [rad]: yaw of the centreline there, in (-pi, pi]
    lost: object       #: bool [E]: the windowed search failed and every segment was searched, or the position is not finite (then s, n, n_up, curvature, heading are NaN)
    segment: object    #: int32 [E]: sample index of the foot's segment (the warm start of the next call)


class BoxContact(NamedTuple):
    """Each agent's box against its road band (:meth:`Course.collide`), ``[E]`` tensors (``[E, 3]``
    for points), overwritten by the next call. Names of the seed system's ``BoxContact`` where
    the meaning is the same."""
    oob: object       #: int32 [E]: 1 when a corner is off the road (flags bit 0)
    distance: object  #: float32 [E] [m]: + clearance to the nearer border, - deepest corner penetration; NaN when invalid
    nearest: object   #: float32 [E, 3] [m]: border point facing the critical corner
    normal: object    #: float32 [E, 3]: unit inward normal there
    side: object      #: int32 [E]: 0 the left border, 1 the right one (not the seed's inner/outer)
    flags: object     #: int32 [E]: C++ contact_flags bits: 1 out_of_bounds, 2 lost, 4 invalid box


class DiscHit(NamedTuple):
    """Each agent's box against its row of discs (:meth:`Course.collide_discs`; C++
    ``collide_box_discs``, collision.hpp ``collide_discs``): the deepest disc, ``[E]`` tensors
    (``[E, 3]`` for points), overwritten by the next call."""
    hit: object       #: bool [E]: the box touches or overlaps a disc (flags bit 8)
    depth: object     #: float32 [E] [m]: penetration of the deepest disc (- the gap when none hits; -inf with no disc, NaN when invalid)
    point: object     #: float32 [E, 3] [m]: nearest point of the box's outline to that disc
    normal: object    #: float32 [E, 3]: unit horizontal normal from the box toward the disc
    disc: object      #: int32 [E]: that disc's index in the env's row, -1 when none or invalid
    flags: object     #: int32 [E]: C++ contact_flags bits: 4 invalid box or radius, 8 hit


class GateFrameHit(NamedTuple):
    """Each agent, a sphere, against the frames of the gates near its target
    (:meth:`Course.gate_frame_collision`; C++ ``collide_gate_frames``, gate_collision.hpp),
    ``[E]`` tensors (``[E, 3]`` for points), overwritten by the next call."""
    hit: object       #: bool [E]: the sphere touches or overlaps a frame (flags bit 8)
    depth: object     #: float32 [E] [m]: penetration, >= 0 (0 when no hit or invalid); push the sphere along normal by it
    distance: object  #: float32 [E] [m]: signed distance of the centre to the frame, negative inside a post or bar; NaN when invalid
    point: object     #: float32 [E, 3] [m]: nearest point of the frame's surface, track frame
    normal: object    #: float32 [E, 3]: unit contact normal from the frame toward the sphere
    member: object    #: int32 [E]: 0 left post, 1 right post, 2 top bar, 3 bottom bar; -1 when invalid
    gate: object      #: int32 [E]: index of the gate hit (or nearest); -1 when invalid
    flags: object     #: int32 [E]: C++ contact_flags bits: 4 invalid input (non-finite position), 8 hit


class Events(NamedTuple):
    """The gate events of the last :meth:`Course.step`, ``[E]`` int32 tensors on the course's device,
    overwritten by the next step (``.clone()`` what you keep). The seed system's ``ProgressEvents``
    names; views of the progress state (``Course.progress``) except ``passed`` and ``wrong_way``,
    which the step fills from ``flags``. Unlike the seed system, one step credits every gate it
    crosses in order (``checkpoint_passed`` is the last of them), and ``next_checkpoint`` starts at
    1 (gate 0 is the start line)."""
    passed: object             #: int32 [E]: 1 when the step passed a gate in order
    checkpoint_passed: object  #: int32 [E]: that gate (the last one when several), -1 when none
    next_checkpoint: object    #: int32 [E]: the next gate to pass (progress.next_gate)
    laps: object               #: int32 [E]: laps since the env's last reset (progress.laps)
    progress: object           #: int32 [E]: gates passed since the last reset (progress.gates_passed)
    wrong_way: object          #: int32 [E]: 1 when the step moved against the track tangent (not the seed's gate-based event)
    wrong_checkpoint: object   #: int32 [E]: a gate crossed either way other than the next one and those passed, -1 when none
    flags: object              #: int32 [E]: every progress_flags bit (track_gen.course.progress_flag_bits())


class StepOutputs(NamedTuple):
    """What :meth:`Course.step` returns: tensors over buffers reused by every step."""
    events: Events                   #: the gate events
    contacts: Optional[BoxContact]   #: each env's box against its road, or None when no boxes are bound


class Spawn(NamedTuple):
    """Where to put the spawned agents (:meth:`Course.spawn`): entries of envs outside the mask keep
    their previous values (zeros before the first spawn)."""
    position: object  #: float32 [E, 3] [m]: centreline height (add your ride height)
    yaw: object       #: float32 [E] [rad]: heading of the direction of travel


class Cones(NamedTuple):
    """Cones along one border (:meth:`Course.cones`)."""
    position: object  #: float32 [E, C, 3] [m]: count[e] cones then NaN padding (cut at C)
    count: object     #: int32 [E]: cones of each env's border; more than C means its row was cut


class Walls(NamedTuple):
    """Wall pieces along one border (:meth:`Course.walls`): the segments between consecutive
    cones, as instancing transforms (views of one float32 [E, C, 5] buffer)."""
    position: object  #: float32 [E, C, 3] [m]: each piece's midpoint, then NaN padding (cut at C)
    yaw: object       #: float32 [E, C] [rad]: its heading about +z from +x, in (-pi, pi]
    length: object    #: float32 [E, C] [m]: its length
    count: object     #: int32 [E]: pieces of each env's border; more than C means its row was cut


def _stream_arg(stream) -> Optional[int]:
    """None (torch's current stream on the course's device), a torch.cuda.Stream or an int handle.
    (A CPU course refuses any stream but None: ValueError from the extension.)"""
    if stream is None:
        return None
    handle = getattr(stream, "cuda_stream", stream)
    if isinstance(handle, bool) or not isinstance(handle, int):
        raise TypeError(f"stream must be None, a torch.cuda.Stream or an int handle, got {type(stream).__name__}")
    return handle


# Points, cones or wall pieces per env that track_ahead, cones and walls make room for: 2**20, a
# 100 km look-ahead or border at 0.1 m spacing (longer than any circuit), 12 MiB per env of
# float32 points. A bigger count is a slip (a length in metres, an env count), not a request.
MAX_PER_ENV = 2**20
_INT32 = (-2**31, 2**31 - 1)   # a C++ int (localize's and collide's window)


def _int_arg(fn: str, name: str, value) -> int:
    """`value` as a Python int: an int, a NumPy integer or a 0-d integer tensor (``__index__``).
    TypeError naming `name` for anything else, floats included, even integral ones (2.0): the
    library never truncates a count, as ``range`` and ``torch.zeros`` do not; bools too."""
    if isinstance(value, bool) or "bool" in str(getattr(value, "dtype", "")):
        raise TypeError(f"track_gen: {fn}: {name} must be an int, got the bool {value!r}")
    if getattr(value, "ndim", 0) != 0:  # a one-element tensor or array has __index__ too
        raise TypeError(f"track_gen: {fn}: {name} must be an int or a 0-d integer tensor, got a "
                        f"{type(value).__name__} of shape {tuple(value.shape)}")
    try:
        return operator.index(value)
    except TypeError:
        why = " (a float is not truncated)" if isinstance(value, numbers.Real) else ""
        raise TypeError(f"track_gen: {fn}: {name} must be an int{why}, "
                        f"got {type(value).__name__} {value!r}") from None


def _window_arg(fn: str, window) -> int:
    """`window` as an int in C++ int's range (every value there is meaningful: <= 0 or at least
    N / 2 searches every segment); TypeError / ValueError naming it otherwise."""
    w = _int_arg(fn, "window", window)
    if not _INT32[0] <= w <= _INT32[1]:
        raise ValueError(f"track_gen: {fn}: window = {w}, expected an int in [-2**31, 2**31 - 1] (segments searched "
                         f"around the last foot; <= 0 or >= num_samples / 2: every segment)")
    return w


def _spacing_arg(fn: str, spacing, allow_negative: bool) -> float:
    """`spacing` [m] as a float: finite and > 0 (or non-zero with `allow_negative`)."""
    if isinstance(spacing, bool) or not isinstance(spacing, numbers.Real):
        raise TypeError(f"track_gen: {fn}: spacing must be a number [m], got {type(spacing).__name__} {spacing!r}")
    try:  # as the C++ call will read it: a float32 (1e-46 rounds to 0, 1e39 to inf)
        x = ctypes.c_float(float(spacing)).value
    except OverflowError:  # an int beyond double's range
        x = math.inf
    if not math.isfinite(x) or (x == 0.0 if allow_negative else x <= 0.0):
        want = "finite and non-zero (negative looks behind)" if allow_negative else "finite and > 0"
        raise ValueError(f"track_gen: {fn}: spacing = {spacing!r} m, expected {want} as a float32")
    return x


@functools.lru_cache(maxsize=None)
def _device_memory(device: str) -> Optional[int]:
    """Total memory of `device` [bytes] ("cpu": physical RAM), None where it cannot be read."""
    if device == "cpu":
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):   # not POSIX
            return None
    import torch  # noqa: PLC0415 - a CUDA course: torch is loaded
    return int(torch.cuda.get_device_properties(torch.device(device)).total_memory)


def _size_arg(fn: str, name: str, value, num_envs: int, device: str, bytes_per_env) -> int:
    """`value`, a count per env (K points, C cones or pieces), as an int in [1, MAX_PER_ENV]
    whose output tensors, ``num_envs * bytes_per_env(value)`` bytes, fit in `device`'s total
    memory: TypeError (not an int) or ValueError naming `name`, the range and those bytes, before
    anything is allocated (the allocator's own error names neither)."""
    v = _int_arg(fn, name, value)
    need = num_envs * bytes_per_env(v) if v > 0 else 0
    size = f"{need} bytes ({need / 2**30:,.1f} GiB) for {num_envs} envs"
    if not 1 <= v <= MAX_PER_ENV:
        raise ValueError(f"track_gen: {fn}: {name} = {v}, expected an int in [1, 2**20 = {MAX_PER_ENV}]"
                         + (f"; its outputs would take {size}" if v > 0 else ""))
    total = _device_memory(device)
    if total is not None and need > total:
        raise ValueError(f"track_gen: {fn}: {name} = {v}: its outputs would take {size}, more than the "
                         f"{total} bytes of {device}'s memory")
    return v


def _torch_stream(stream):
    """A context that makes torch run on `stream` (the stream the library's call ran on), so that
    torch's own work on the outputs is ordered after it."""
    import contextlib  # noqa: PLC0415

    import torch  # noqa: PLC0415 - only with the extension
    if stream is None:
        return contextlib.nullcontext()
    if isinstance(stream, torch.cuda.Stream):
        return torch.cuda.stream(stream)
    return torch.cuda.stream(torch.cuda.ExternalStream(_stream_arg(stream)))


def _user_points(tracks) -> list:
    """User tracks as float32 [P, 3] CPU tensors (z = 0 added to [P, 2] ones); ValueError naming
    ``tracks[i]`` otherwise. One 2-D array is one track shared by every env."""
    import torch  # noqa: PLC0415 - only with the extension

    def as_points(t, name):
        try:
            x = torch.as_tensor(t, dtype=torch.float32).detach().to("cpu")
        except (TypeError, ValueError, RuntimeError) as err:
            raise ValueError(f"track_gen: {name} must be a [P, 2] or [P, 3] array of points [m]: {err}") from None
        if x.dim() != 2 or x.shape[1] not in (2, 3):
            raise ValueError(f"track_gen: {name} must be a [P, 2] or [P, 3] array of points [m], "
                             f"got shape {list(x.shape)}")
        if x.shape[1] == 2:
            x = torch.cat([x, torch.zeros(x.shape[0], 1, dtype=x.dtype)], dim=1)
        return x.contiguous()

    if isinstance(tracks, torch.Tensor) and tracks.dim() == 2:
        return [as_points(tracks, "tracks")]
    if hasattr(tracks, "ndim") and getattr(tracks, "ndim") == 2:  # one NumPy array
        return [as_points(tracks, "tracks")]
    try:
        items = list(tracks)
    except TypeError:
        raise ValueError(f"track_gen: tracks must be a sequence of [P, 2] or [P, 3] arrays, "
                         f"got {type(tracks).__name__}") from None
    if not items:
        raise ValueError("track_gen: tracks is empty; give one track per env or one shared by every env")
    return [as_points(t, f"tracks[{i}]") for i, t in enumerate(items)]


_BATCH_WIDE = ("seed", "env_offset", "num_samples", "gate_half_height")


def _variants(variants, env_variant, num_envs: int):
    """([flat override dicts], [E] ints) for the extension from Course.track's arguments, or
    ([], []); ValueError / TypeError naming what is wrong."""
    from .pipeline.presets import _flatten  # noqa: PLC0415

    if variants is None and env_variant is None:
        return [], []
    if variants is None or env_variant is None:
        raise ValueError("track_gen: variants and env_variant go together: give both or neither")
    if isinstance(variants, Mapping) or not isinstance(variants, Sequence) or len(variants) == 0:
        raise TypeError(f"track_gen: variants must be a non-empty list of override dicts, got {variants!r}")
    flat = []
    for i, v in enumerate(variants):
        if not isinstance(v, Mapping):
            raise TypeError(f"track_gen: variants[{i}] must be a dict of overrides, got {type(v).__name__}")
        f = _flatten(v)
        fixed = [k for k in f if k in _BATCH_WIDE]
        if fixed:
            raise ValueError(f"track_gen: variants[{i}] sets {fixed}: batch-wide parameters are the batch's "
                             f"(set them in the preset call); a variant may change every other parameter")
        flat.append(f)
    try:
        items = list(env_variant.tolist() if hasattr(env_variant, "tolist") else env_variant)
    except TypeError:
        raise TypeError(f"track_gen: env_variant must be a sequence of {num_envs} ints") from None
    ids = []
    for e, x in enumerate(items):  # an index: a float (1.5, or 1.0 of a float array) is refused, not truncated
        try:
            ids.append(_int_arg("Course.track", f"env_variant[{e}]", x))
        except TypeError as err:
            raise TypeError(f"{err}; env_variant must be a sequence of {num_envs} int variant indices in "
                            f"[0, {len(flat) - 1}]") from None
    if len(ids) != num_envs:
        raise ValueError(f"track_gen: env_variant has {len(ids)} entries; expected one per env ({num_envs})")
    bad = [e for e, k in enumerate(ids) if not 0 <= k < len(flat)]
    if bad:
        raise ValueError(f"track_gen: env_variant[{bad[0]}] = {ids[bad[0]]} is not a variant index in "
                         f"[0, {len(flat) - 1}]")
    return flat, ids


def _torch_view(t):
    """``t`` as a torch tensor: itself when it is one (or None, or no array at all), else a
    zero-copy view through ``torch.from_dlpack`` of any array that speaks DLPack (``__dlpack__``:
    Warp, JAX, CuPy, NumPy arrays), which shares its memory: in-place writes by the array's owner
    are seen by the course, and the view keeps that memory alive."""
    import torch  # noqa: PLC0415

    if t is None or isinstance(t, torch.Tensor) or not hasattr(t, "__dlpack__"):
        return t
    return torch.from_dlpack(t)


def _checked_tensor(t, device: str, name: str, dtypes, shape, wanted: str):
    """`t` as a torch tensor (itself, or a zero-copy view of a DLPack array: _torch_view);
    ValueError unless it is contiguous, on `device`, with one of `dtypes` (names: "float32",
    "int32", "bool", "uint8") and `shape`. Checked here, before the extension, which checks again
    (interop/torch.hpp) for C++ callers: on the H200 machine a std::invalid_argument thrown inside
    the extension crashed the interpreter."""
    import torch  # noqa: PLC0415 - torch is loaded by the extension already

    t = _torch_view(t)
    ok = (isinstance(t, torch.Tensor) and t.device == torch.device(device)
          and t.is_contiguous() and str(t.dtype).replace("torch.", "") in dtypes and tuple(t.shape) == shape)
    if not ok:
        got = (f"{str(t.dtype).replace('torch.', '')} {list(t.shape)} on {t.device}"
               f"{'' if t.is_contiguous() else ' (not contiguous)'}" if isinstance(t, torch.Tensor)
               else type(t).__name__)
        raise ValueError(f"track_gen: {name} must be {wanted} on {device}, contiguous; got {got}")
    return t


def _given_as(params, err: Exception) -> Exception:
    """`err` (a ValueError or TypeError) with the seed system's aliases the caller wrote
    (z_max=...) named beside the library's fields it mentions (`track_params.<field>` or
    `'<field>'`), in the message's order; `err` itself when none is mentioned."""
    found = []
    for name, alias in getattr(params, "given_as", {}).items():
        m = re.search(r"(?:track_params\.|')" + re.escape(name) + r"(?![\w.])", str(err))
        if m:
            found.append((m.start(), f"{alias} is track_params.{name}"))
    if not found:
        return err
    return type(err)(f"{err} (given as {', '.join(text for _, text in sorted(found))})")


def _impl_class(ext, params, cuda_name: str, host_name: str):
    """The extension's class for `params.device`: `host_name` on the CPU, `cuda_name` on CUDA;
    RuntimeError when the extension was built without CUDA."""
    if params.is_cpu:
        return getattr(ext, host_name)
    if hasattr(ext, cuda_name):
        return getattr(ext, cuda_name)
    raise RuntimeError(
        f"track_gen: device={params.device!r}, but this track_gen was built without CUDA (CPU only: at "
        "install time torch had no CUDA, nvcc was not found, or no GPU was visible and neither CUDAARCHS nor "
        "TORCH_CUDA_ARCH_LIST named one). Use device='cpu', or reinstall with a CUDA build of torch, the CUDA "
        "toolkit and a GPU visible (or CUDAARCHS=90, say): pip install ./python")


def status_bits() -> dict:
    """The masks of ``tracks.status`` by name (C++ ``status.hpp``): the one-bit flags ``valid``,
    ``fallback``, ``user_track``, ``far_from_origin``, the ``fail_*`` reasons, ... (test one with
    ``(course.tracks.status & bits["valid"]) != 0``), and ``attempts_mask`` = 0xff00, not a flag
    but a field: bits 8-15 hold the number of generation attempts of the track, 1 to 255 (the
    fallback ellipse not counted: a fallback track has ``validate.max_attempts``; a user track 1).
    Read it with ``(status & bits["attempts_mask"]) >> 8`` (C++ ``status::attempts``)."""
    from . import _extension  # noqa: PLC0415 - loads torch and the extension
    return dict(_extension().status_bits())


@functools.lru_cache(maxsize=None)
def _progress_flag_bits() -> dict:
    """The bits of ``progress.flags`` by name (C++ ``progress_flags``)."""
    from . import _extension  # noqa: PLC0415 - loads torch and the extension
    return dict(_extension().progress_flag_bits())


def progress_flag_bits() -> dict:
    """The bits of ``progress.flags`` (and ``course.step().events.flags``) by name (C++
    ``progress_flags``: ``has_last``, ``off_track``, ``wrong_way``, ...). Test one with
    ``(flags & bits["off_track"]) != 0``."""
    return dict(_progress_flag_bits())


def _progress_field(name: str, doc: str) -> property:
    """A shortcut to one of the progress tensors (the property cannot be assigned; the tensor is
    the course's state: read it, do not write it)."""
    return property(lambda self: getattr(self._progress, name), doc=doc)


class Course:
    """A batch of tracks, gates and progress on one CUDA device (C++ ``track_gen::course`` with
    the library's default policy: conditional skipping available, anchored ownership), or on the
    CPU (``device="cpu"``: ``backend::host``, the same methods, no graphs).

    Build it with :meth:`Course.track` outside any capture. Not thread-safe; do not replay two
    graphs of one course concurrently (they share its state).
    """

    def __init__(self, params: TrackParams, checkpoint_spacing: float = 0.6, tracks=None,
                 kind: str = "control_points", recentre: bool = False, variants=None, env_variant=None):
        """Allocates the course and generates every env's track (episode 0) on torch's current
        stream of ``params.device`` (on the CPU: now, on the calling thread).

        Args:
            params: a :class:`~track_gen.pipeline.presets.TrackParams` (``presets.track(...)``).
            checkpoint_spacing: gate spacing [m], in [0.001, 1e6] (docs/parameters.md): each track
                gets floor(L / spacing) gates.
            tracks: ``None`` (random tracks) or user tracks, see :meth:`from_tracks`.
            kind, recentre: how ``tracks`` are read, see :meth:`from_tracks`.
            variants, env_variant: per-env parameter sets, see :meth:`track`.
        Raises:
            TypeError: ``params`` is not a TrackParams.
            ValueError: a parameter out of range (the message names it and its range), or bad
                ``tracks`` / ``kind``.
            track_gen.exec.errors.CaptureError: the stream is capturing (construction allocates).
            RuntimeError: a CUDA device asked of an extension built without CUDA (CPU only).
        """
        if not isinstance(params, TrackParams):
            raise TypeError(f"params must be a track_gen.pipeline.presets.TrackParams "
                            f"(presets.track(...)), got {type(params).__name__}")
        if isinstance(checkpoint_spacing, bool) or not isinstance(checkpoint_spacing, (int, float)):
            raise TypeError(f"checkpoint_spacing must be a number [m], got {checkpoint_spacing!r}")
        if kind not in ("control_points", "centreline"):
            raise ValueError(f"track_gen: kind must be 'control_points' or 'centreline', got {kind!r}")
        if not isinstance(recentre, bool):
            raise TypeError(f"recentre must be a bool, got {type(recentre).__name__} {recentre!r}")
        user = [] if tracks is None else _user_points(tracks)
        flat_variants, env_variant = _variants(variants, env_variant, params.num_envs)
        from . import _extension  # noqa: PLC0415 - lazy: loads torch and the extension
        ext = _extension()
        impl_type = _impl_class(ext, params, "Course", "HostCourse")
        self.params = params  #: the TrackParams it was built from
        try:
            self._impl = impl_type(params.preset, params.num_envs, dict(params.overrides),
                                   float(checkpoint_spacing), params.device_index, user, kind, recentre,
                                   flat_variants, env_variant)
        except (ValueError, TypeError) as e:
            named = _given_as(params, e)  # the seed system's alias the caller wrote, beside the field
            if named is e:
                raise
            raise named from None
        #: environments E, samples per track N, gate slots per track G, gate spacing [m], device
        self.num_envs = int(self._impl.num_envs)
        self.num_samples = int(self._impl.num_samples)
        self.max_gates = int(self._impl.max_gates)
        self.checkpoint_spacing = float(self._impl.checkpoint_spacing)
        self.device = "cpu" if params.is_cpu else f"cuda:{self._impl.device}"
        t = self._impl.tensors()
        types = _record_types()
        self._progress = types["Progress"](**{k: t[k] for k in types["Progress"]._fields})
        self._tracks = types["Tracks"](**{k: t[k] for k in types["Tracks"]._fields})
        self._impl_tensors = {k: t[k] for k in ("contact_flags", "clearance", "contact_point", "contact_normal",
                                                 "contact_border")}
        self._position = None
        self._boxes = None

    @classmethod
    def track(cls, params: TrackParams, checkpoint_spacing: float = 0.6, variants=None,
              env_variant=None) -> "Course":
        """A course of the ``track`` pipeline (random polar control points, bounded repulsion,
        centripetal Catmull-Rom spline, arc-length resampling, frames, gates, validation with
        retries and a fallback ellipse) built from ``params``. See ``__init__``.

        Per-env parameters (curriculum levels, mixed difficulties; C++ ``track_variants``):
        ``variants`` a list of override dicts (the preset functions' names, e.g.
        ``{"polar": {"radius_max": 9.0}}``), each applied on top of ``params``; ``env_variant`` an
        ``[E]`` sequence of ints (list, NumPy or CPU tensor of an integer dtype; a float, even 1.0,
        is refused with a TypeError rather than truncated) choosing each env's variant. An env's
        track depends only on its own variant: envs of one variant are the same, bit for bit, as
        in a batch built with that variant's parameters alone. Batch-wide parameters (seed,
        env_offset, num_samples, gate_half_height) cannot vary: ValueError.
        """
        return cls(params, checkpoint_spacing, variants=variants, env_variant=env_variant)

    @classmethod
    def gates(cls, params: TrackParams) -> "Course":
        """A course of drone-racing gate courses (C++ ``course<presets::gate_course_pipeline>``, or
        ``polar_gate_course_pipeline`` when ``generator`` is polar without weights, as in the preset;
        docs/drones.md) from ``presets.gate_course(...)`` parameters: per env, gates.min_gates to
        gates.max_gates gates at a generator family's anchors, spaced at least gates.min_spacing
        apart in 3D, and the course line (a closed spline through the gate centres) as the track.
        ``bind`` / ``step`` / ``regenerate`` and every query work as for tracks: progress counts
        the gates in order (each gate's opening is ``half_width`` x ``gate_half_height`` about its
        centre, in its own frame), laps, and the lateral offset from the course line.
        ``tracks.gate_centre`` / ``gate_normal`` hold the gates ([E, G_max, 3], slots >=
        ``tracks.num_gates`` unused).

        Raises:
            ValueError: ``params`` is not a ``gate_course`` preset, or a parameter out of range.
        """
        if not isinstance(params, TrackParams) or params.preset != "gate_course":
            raise ValueError("Course.gates takes presets.gate_course(...) parameters, got "
                             f"{getattr(params, 'preset', type(params).__name__)!r}")
        return cls(params, 0.0)

    @classmethod
    def from_tracks(cls, params: TrackParams, tracks, kind: str = "control_points", recentre: bool = False,
                    checkpoint_spacing: float = 0.6) -> "Course":
        """A course of your own closed tracks (a real circuit) instead of random ones: C++
        ``user_tracks``. They go through the ``track`` pipeline's shared tail (spline for control
        points, resampling to ``params`` num_samples, frames, gates, validation); a track that
        fails validation is kept and flagged (``tracks.status`` lacks ``valid``).

        Args:
            tracks: one closed track per env, or one shared by every env: a sequence of ``[P, 2]``
                or ``[P, 3]`` array-likes (lists, NumPy arrays, tensors on any device) [m], or one
                such array for a single shared track. z = 0 when two columns are given. The first
                point need not be repeated at the end; see docs/parameters.md for the limits.
            kind: ``"control_points"`` (a closed centripetal Catmull-Rom spline passes through
                them) or ``"centreline"`` (the polyline is the centreline).
            recentre: move each track to a frame centred on it (origin: the mean of its points
                rounded to whole metres, exact in float32) and report that origin in
                ``tracks.origin`` ``[E, 3]``; bind positions in that frame (yours minus
                ``tracks.origin``). Use it for circuits far from the origin (map or UTM
                coordinates): beyond 8192 m float32 resolves less than 1 mm and a track not
                re-centred there gets the ``far_from_origin`` status bit (``status_bits()``).
        Raises:
            ValueError: a track of the wrong shape, non-finite points, too few or too many
                points, a wrong number of tracks (the message names ``tracks[i]``).
        """
        return cls(params, checkpoint_spacing, tracks=tracks, kind=kind, recentre=recentre)

    # ---- inputs and calls ---------------------------------------------------------------------

    def bind(self, position, orientation=None, half_extents=None, xyzw: bool = False, stream=None) -> None:
        """Binds the agents' positions and, optionally, their boxes: then every :meth:`step` also
        computes each env's box contact with its road band (C++ ``course::bind`` /
        ``collide_box``, exact backend; ``step().contacts``). The course keeps references and
        reads them at every ``step``: update them in place (``position.copy_(...)``).

        Args:
            position: float32 ``[E, 3]`` [m, env-local frames], contiguous, on the course's device
                (the box centres when boxes are bound).
            orientation: ``None`` (no boxes) or float32 ``[E, 4]`` unit quaternions, body to track
                frame, in Isaac Lab's **(w, x, y, z)** order by default (as :meth:`collide`);
                ``xyzw=True`` for (x, y, z, w) (Warp's, the seed system's). Only the yaw counts.
                (w, x, y, z) is reordered into a buffer of the course at every ``step``.
            half_extents: ``None`` (no boxes) or float32 ``[E, 2]`` [m], forward and left half
                extents, > 0. Give both or neither.
            stream: the stream the boxes are checked on (default: torch's current stream).
        The boxes' current values are checked here, once (fill them before ``bind``): a quaternion
        with a non-finite component or a norm not within 1e-3 of 1, or a half extent not finite in
        (0, 1e7] m raises ValueError naming the env and the component. That copies them to the host
        and synchronises the stream: bind before capturing. Values written later are not checked
        on the host: an invalid box then gets flags 4 (invalid) and NaN distance in its contact.

        Raises:
            ValueError: wrong dtype, shape, device or layout (the message says what is expected),
                only one of orientation / half_extents, or a bad box.
            track_gen.exec.errors.CaptureError: boxes given while the stream is capturing.
        """
        position = self._check_tensor(position, "position", ("float32",), (self.num_envs, 3),
                           f"a float32 tensor of shape [{self.num_envs}, 3]")
        if (orientation is None) != (half_extents is None):
            missing = "orientation" if orientation is None else "half_extents"
            raise ValueError(f"track_gen: bind: {missing} is None but the other is not: give both (boxes) or neither")
        if not isinstance(xyzw, bool):
            raise TypeError(f"xyzw must be a bool, got {type(xyzw).__name__} {xyzw!r}")
        if orientation is None:
            self._impl.bind(position)
            self._position, self._boxes = position, None
            self._bound_memory = self._memory_of(position, None)
            return
        orientation = self._points_e(orientation, "orientation", 4)
        half_extents = self._points_e(half_extents, "half_extents", 2)
        quat = orientation
        if not xyzw:
            import torch  # noqa: PLC0415
            quat = self._buffers("bind_quat", lambda: torch.zeros(self.num_envs, 4, dtype=torch.float32, device=self.device))
            self._reorder(orientation, quat, stream)
        self._impl.bind(position, quat, half_extents, _stream_arg(stream))
        self._position = position
        self._boxes = {"orientation": orientation, "quat": quat, "half_extents": half_extents, "reorder": not xyzw}
        self._bound_memory = self._memory_of(position, self._boxes)

    @staticmethod
    def _memory_of(position, boxes) -> tuple:
        """The addresses the C++ course keeps from ``bind`` (the tensors it reads at every step)."""
        kept = [position] if boxes is None else [position, boxes["quat"], boxes["half_extents"]]
        return tuple(t.data_ptr() for t in kept)

    def _check_bound_memory(self) -> None:
        """ValueError when a bound tensor now lives elsewhere (``t.data = ...``, ``set_``,
        ``resize_`` beyond its storage): the course would read the old, maybe freed, memory."""
        boxes = self.__dict__.get("_boxes")
        if self._memory_of(self._position, boxes) != self._bound_memory:
            raise ValueError("track_gen: step: a bound tensor (position, orientation or half_extents) has new memory "
                             "since bind (t.data = ..., set_ or resize_); the course reads the memory given to bind: "
                             "write into it in place (t.copy_(...)) or call bind again")

    @staticmethod
    def _reorder(wxyz, xyzw, stream) -> None:
        """(w, x, y, z) -> (x, y, z, w) into `xyzw`, on `stream` (no allocation)."""
        with _torch_stream(stream):
            xyzw[:, :3].copy_(wxyz[:, 1:])
            xyzw[:, 3].copy_(wxyz[:, 0])

    def _check_tensor(self, t, name: str, dtypes, shape, wanted: str):
        """_checked_tensor on this course's device."""
        return _checked_tensor(t, self.device, name, dtypes, shape, wanted)

    def step(self, stream=None) -> StepOutputs:
        """Advances every env's progress to its bound position: nearest centreline point, lateral
        offset, off-track, wrong way, gates passed in order, laps, and this step's gate events;
        with boxes bound (:meth:`bind`), each env's box contact too. Asynchronous on ``stream``
        (default: torch's current stream); recorded when that stream is capturing (with the kernel
        that fills ``passed``, ``wrong_way`` and ``oob``, and the torch ops that reorder (w, x, y, z)
        quaternions, into buffers made by the first call: make it before capturing).

        Returns:
            :class:`StepOutputs` (``events``: :class:`Events`; ``contacts``: :class:`BoxContact`
            or None without boxes): tensors overwritten by the next step.
        Raises:
            RuntimeError: no position bound.
            track_gen.exec.errors.CaptureError: the stream's capture was invalidated.
        """
        if self._position is None:
            raise RuntimeError("track_gen: course::step: no positions bound; call bind(position=...) first")
        self._check_bound_memory()
        reg = recording.current()
        if reg is not None:
            reg.note(self)
        boxes = self.__dict__.get("_boxes")
        if boxes is not None and boxes["reorder"]:
            self._reorder(boxes["orientation"], boxes["quat"], stream)
        b = self._step_buffers()
        # One launch after the step fills the 0/1 columns from the flag bits.
        self._impl.step(_stream_arg(stream), b["passed"], b["wrong_way"], b["oob"] if boxes is not None else None)
        return self._step_outputs(boxes is not None)

    def _step_buffers(self) -> dict:
        """The [E] int32 buffers of the step's 0/1 columns (made by the first step)."""
        import torch  # noqa: PLC0415
        E, dev = self.num_envs, self.device
        return self._buffers("step", lambda: {k: torch.zeros(E, dtype=torch.int32, device=dev)
                                              for k in ("passed", "wrong_way", "oob")})

    def _step_outputs(self, with_contacts: bool) -> StepOutputs:
        """The step's tensors: views of the course's memory, and the flag bits as 0/1 int32."""
        b = self._step_buffers()
        p, t = self._progress, self._impl_tensors
        events = Events(b["passed"], p.checkpoint_passed, p.next_gate, p.laps, p.gates_passed, b["wrong_way"],
                        p.wrong_checkpoint, p.flags)
        contacts = None
        if with_contacts:
            contacts = BoxContact(b["oob"], t["clearance"], t["contact_point"], t["contact_normal"],
                                  t["contact_border"], t["contact_flags"])
        return StepOutputs(events, contacts)

    def regenerate(self, mask=None, advance: bool = True, stream=None) -> None:
        """Rebuilds the tracks of the envs whose ``mask`` entry is nonzero and resets their
        progress; ``advance=True`` moves them to their next episode (a new track), ``False``
        rebuilds the same track. Other envs are untouched, bit for bit.

        Args:
            mask: ``None`` (every env) or an ``[E]`` int32, bool or uint8 tensor on the course's
                device, contiguous (read in place, never copied).
            advance: next episode (True) or the same track again (False).
            stream: ``None`` (torch's current stream), a ``torch.cuda.Stream`` or an int handle.
        Recording: inside ``track_gen.interop.torch.registered(conditional=True)`` a masked call
        on a capturing stream becomes an IF conditional node; otherwise it is recorded
        unconditionally. With :meth:`enable_ahead`, a masked call records two plain nodes instead
        (no IF node) and copies the envs' tracks built ahead: the same results, bit for bit.
        Raises:
            ValueError: a mask of the wrong dtype, shape, device or layout.
            track_gen.exec.errors.CaptureError: the stream's capture was invalidated.
        """
        if not isinstance(advance, bool):
            raise TypeError(f"advance must be a bool, got {type(advance).__name__} {advance!r}")
        if mask is not None:
            mask = self._check_tensor(mask, "mask", ("int32", "bool", "uint8"), (self.num_envs,),
                               f"an int32, bool or uint8 tensor of shape [{self.num_envs}]")
        reg = recording.current()
        if reg is not None:
            reg.note(self)
            conditional, mode = reg.conditional, reg.capture_mode
        else:
            conditional, mode = False, recording.CAPTURE_MODES["global"]
        self._impl.regenerate(mask, advance, _stream_arg(stream), conditional, mode)

    def generation_launches(self, stream=None) -> int:
        """Generation launches that ran so far (construction, each eager or replayed
        regeneration; a regeneration skipped by its conditional node does not count).
        Synchronises the stream. Raises CaptureError on a capturing stream."""
        return int(self._impl.generation_launches(_stream_arg(stream)))

    # ---- tracks built ahead (C++ course::enable_ahead) ------------------------------------------

    def enable_ahead(self, refill_at: int = 0, stream=None) -> None:
        """Builds each env's next-episode track ahead, into a slot of its own, so that a masked
        :meth:`regenerate` copies it instead of building it (C++ ``course::enable_ahead``). The
        tracks, progress resets and statuses are those of building them, bit for bit (of the
        per-gate fields, the gates in use: the unused slots beyond ``tracks.num_gates`` may hold
        other bytes); what changes is when the building happens: ending episodes cost a copy,
        and the building moves to a later call, many slots at once.

        A regenerated env whose slot holds the episode it is rebuilt at (its next one with
        ``advance=True``) gets a copy, and its slot turns stale. Stale slots are refilled in the
        launch of a later masked regenerate, beside the envs it serves: once at least
        ``refill_at`` of them are stale, or when a regenerated env finds its own slot stale (it
        ended again before the refill; it is then built as without slots, a miss; so is an
        ``advance=False`` rebuild of an env whose slot already holds its next episode).
        ``regenerate`` with ``mask=None`` fills every slot again. :meth:`ahead_statistics`
        counts what happened.

        Memory: one more batch of tracks (as much as the course's own tracks again), allocated
        now; every slot is filled now, on ``stream`` (about one whole-batch generation).

        Call it before capturing (``torch.cuda.graph``): a graph holds the course's arguments as
        they were when it was recorded, so regenerates recorded before this call do not use the
        slots. Once enabled, a masked regenerate records two plain graph nodes (the listing,
        which also chooses the refills, and one kernel whose blocks return at once when there is
        no work) whatever the skip policy: ``registered(conditional=True)`` adds no IF node for
        it. Every masked call counts one generation launch.

        Args:
            refill_at: refill the stale slots once this many are stale: 0 (automatic:
                min(E / 8, the blocks that fit on the GPU at once), at least 1; on the CPU 1) or
                an int in [1, E].
            stream: ``None`` (torch's current stream), a ``torch.cuda.Stream`` or an int handle.
        Raises:
            TypeError: ``refill_at`` is not an int.
            ValueError: ``refill_at`` out of range (the message names ``refill_at``).
            RuntimeError: already enabled.
            track_gen.exec.errors.CaptureError: the stream is capturing (this allocates).
        """
        r = _int_arg("enable_ahead", "refill_at", refill_at)
        if not self.ahead_enabled and not 0 <= r <= self.num_envs:  # "already enabled" first, as in C++
            raise ValueError(f"track_gen: enable_ahead: refill_at = {r}, expected 0 (automatic) "
                             f"or a count in [1, num_envs = {self.num_envs}]")
        self._impl.enable_ahead(r, _stream_arg(stream))

    @property
    def ahead_enabled(self) -> bool:
        """Whether :meth:`enable_ahead` was called."""
        return bool(self._impl.ahead_enabled)

    @property
    def ahead_refill_at(self) -> int:
        """The refill threshold in use (:meth:`enable_ahead`'s ``refill_at``, 0 resolved to the
        automatic count); 0 when the tracks built ahead are not enabled."""
        return int(self._impl.ahead_refill_at)

    def ahead_statistics(self, stream=None) -> dict:
        """What the tracks built ahead did since :meth:`enable_ahead`, as ints:
        ``{"served": ..., "missed": ..., "refilled": ...}``: regenerated envs whose track was
        copied from their slot, regenerated envs whose slot did not hold the episode they were
        rebuilt at (built as without slots: an env that ended again before its slot's refill, or
        an ``advance=False`` rebuild of an env whose slot holds its next episode), and slots
        refilled by masked regenerates. Zeros when not enabled. Replayed graphs count too.
        Synchronises the stream. Raises CaptureError on a capturing stream."""
        return {k: int(v) for k, v in self._impl.ahead_statistics(_stream_arg(stream)).items()}

    # ---- outputs ------------------------------------------------------------------------------

    @property
    def progress(self) -> Progress:
        """The progress tensors (views of the course's memory, updated in place). Read them; do not
        write into them: they are the state :meth:`step` continues from. A ``next_gate`` written
        outside ``[0, num_gates)`` is caught (that env's steps skip their gate tests and report
        ``progress_flag_bits()["invalid_state"]`` and ``status_bits()["invalid_input"]``) but
        counts no gates until it is valid again. Reset an env's progress with :meth:`spawn` or
        :meth:`regenerate` instead."""
        return self._progress

    @property
    def tracks(self) -> Tracks:
        """The track tensors (views of the course's memory, updated in place). Read them; do not
        write into them: every query reads them (a ``num_gates`` outside ``[1, max_gates]`` reads
        as no gates: steps report ``invalid_state``, spawns reset to the start line);
        :meth:`from_tracks` and :meth:`regenerate` are the ways to change a track."""
        return self._tracks

    next_gate = _progress_field("next_gate", "int32 [E]: index of each env's next gate.")
    laps = _progress_field("laps", "int32 [E]: laps completed since each env's last reset.")
    gates_passed = _progress_field("gates_passed", "int32 [E]: gates passed since each env's last reset.")
    lap_progress = _progress_field("lap_progress", "float32 [E] [m]: arc length of each agent's last projection.")

    @property
    def position(self):
        """The bound position tensor (None before ``bind``)."""
        return self._position

    # ---- batch queries (C++ queries.hpp) --------------------------------------------------------
    #
    # Each runs one kernel (one thread per env) on ``stream`` (torch's current stream by default)
    # and writes into output tensors the Course allocates on the first call of each query (and
    # of each shape: num_points, capacity, side) and reuses afterwards, so a captured graph
    # replays into the same tensors: make that first call before capturing (it also loads the
    # kernel). The returned tensors are overwritten by the next call: ``.clone()`` what you keep.
    # Positions are in each env's track frame (bound positions are). Lateral offsets and
    # curvature are positive to the LEFT of the direction of travel.

    def _buffers(self, key, make):
        """The output tensors of query `key`, made by `make()` on first use."""
        bufs = self.__dict__.setdefault("_query_buffers", {})
        if key not in bufs:
            bufs[key] = make()
        return bufs[key]

    def _note(self):
        reg = recording.current()
        if reg is not None:
            reg.note(self)

    def _float_e(self, t, name):
        return self._check_tensor(t, name, ("float32",), (self.num_envs,), f"a float32 tensor of shape [{self.num_envs}]")

    def _points_e(self, t, name, width=3):
        return self._check_tensor(t, name, ("float32",), (self.num_envs, width),
                           f"a float32 tensor of shape [{self.num_envs}, {width}]")

    def localize(self, position=None, window: int = 8, seed_convention: bool = False, stream=None) -> TrackFrame:
        """Localizes every agent (C++ ``localize``): arc length ``s``, lateral offset ``n``, height
        ``n_up``, curvature and heading at the nearest centreline point, warm-started from the
        previous call's ``segment`` (searching ``window`` segments around it, every segment
        when that fails: ``lost``).

        Args:
            position: float32 ``[E, 3]`` [m] on the course's device, or ``None``: the bound position.
            window: segments searched around the last foot, an int in [-2**31, 2**31 - 1] (C++
                int; a float is refused, not truncated); ``<= 0`` or ``>= num_samples / 2``: every
                segment (the first call always searches every segment; after ``regenerate`` or a
                teleport the next call reports ``lost`` once and recovers).
            seed_convention: ``n`` positive to the RIGHT, as the seed system's ``TrackFrame.n``
                (negated in place after the query).
        Returns:
            :class:`TrackFrame` of tensors reused by the next call.
        Raises:
            TypeError: ``window`` not an int.
            ValueError: ``window`` out of range, a tensor of the wrong dtype, shape, device or layout.
            RuntimeError: ``position`` is None and nothing is bound.
        """
        import torch  # noqa: PLC0415
        window = _window_arg("localize", window)
        if position is None:
            position = self._position
            if position is None:
                raise RuntimeError("track_gen: localize: no position given and none bound; pass position= or bind()")
        position = self._points_e(position, "position")
        E, dev = self.num_envs, self.device
        b = self._buffers("localize", lambda: {
            **{k: torch.zeros(E, dtype=torch.float32, device=dev) for k in ("s", "n", "n_up", "curvature", "heading")},
            "lost": torch.zeros(E, dtype=torch.uint8, device=dev),
            "segment": torch.zeros(E, dtype=torch.int32, device=dev)})
        self._note()
        # The first call has no previous foot: search every segment instead of reporting lost.
        cold = not b.setdefault("warm", False)
        b["warm"] = True
        self._impl.localize(position, b["segment"], 0 if cold else window, b["s"], b["n"], b["n_up"],
                            b["curvature"], b["heading"], b["lost"], _stream_arg(stream))
        if seed_convention:
            with _torch_stream(stream):
                torch.neg(b["n"], out=b["n"])
        return TrackFrame(b["s"], b["n"], b["n_up"], b["curvature"], b["heading"], b["lost"].view(torch.bool),
                          b["segment"])

    def track_ahead(self, num_points: int, spacing: float, yaw, position=None, s=None, stream=None):
        """The centreline ahead of every agent in its own frame (C++ ``track_ahead``): point i of
        env e at arc length s[e] + spacing (i + 1), as (x forward, y left, z up) [m] relative to
        the agent at ``position[e]`` with heading ``yaw[e]``.

        Args:
            num_points: K points per env, an int in [1, 2**20] (:data:`MAX_PER_ENV`; a float is
                refused, not truncated) whose output (12 E K bytes) fits in the device's memory.
            spacing: arc length between them [m], finite and non-zero (negative looks behind).
            yaw: float32 ``[E]`` [rad], the agents' headings about +z from +x (e.g. from a
                quaternion: atan2(2 (w z + x y), 1 - 2 (y^2 + z^2))).
            position: float32 ``[E, 3]`` or ``None`` (the bound position).
            s: float32 ``[E]`` [m] arc lengths to start from (any real, wrapped around the loop),
                or ``None``: :meth:`localize` of ``position`` is run first (pass
                ``localize(...).s`` to save that kernel). A non-finite ``s[e]`` (NaN, +-inf) is
                read as 0 (C++ ``wrap_arc_length``): env e gets the points ahead of the start
                line, without an error or a flag (s is not read on the host: no
                synchronisation). A NaN position or yaw gives NaN points.
        Returns:
            float32 ``[E, K, 3]``, reused by the next call with the same K.
        Raises:
            TypeError: ``num_points`` not an int, ``spacing`` not a number.
            ValueError: ``num_points`` out of range (the message says the bytes it would take),
                spacing zero or not finite, a tensor of the wrong kind. Checked before anything
                runs (with ``s=None``, before the localize).
        """
        import torch  # noqa: PLC0415
        k = _size_arg("track_ahead", "num_points", num_points, self.num_envs, self.device, lambda k: 12 * k)
        spacing = _spacing_arg("track_ahead", spacing, allow_negative=True)
        if position is None:
            position = self._position
            if position is None:
                raise RuntimeError("track_gen: track_ahead: no position given and none bound")
        yaw = self._float_e(yaw, "yaw")
        position = self._points_e(position, "position")
        if s is None:
            s = self.localize(position, stream=stream).s
        s = self._float_e(s, "s")
        out = self._buffers(("track_ahead", k), lambda: torch.zeros(self.num_envs, k, 3, dtype=torch.float32, device=self.device))
        self._note()
        self._impl.track_ahead(s, position, yaw, k, spacing, out, _stream_arg(stream))
        return out

    def progress_delta(self, s_prev, s_now, stream=None):
        """Signed progress from ``s_prev`` to ``s_now`` (float32 ``[E]`` [m]) along each loop,
        wrap-aware at the start line, in (-L/2, L/2] (C++ ``progress_delta``): a reward term.
        Returns float32 ``[E]`` [m], reused by the next call."""
        import torch  # noqa: PLC0415
        s_prev = self._float_e(s_prev, "s_prev")
        s_now = self._float_e(s_now, "s_now")
        out = self._buffers("progress_delta", lambda: torch.zeros(self.num_envs, dtype=torch.float32, device=self.device))
        self._note()
        self._impl.progress_delta(s_prev, s_now, out, _stream_arg(stream))
        return out

    def spawn(self, mask, s, lateral=None, stream=None) -> Spawn:
        """Spawns the masked agents at arc length ``s`` (C++ ``spawn``): resets their progress as
        if they stood there (next gate = the first gate ahead; no lap before a full circuit from
        there) and returns the pose to put them at.

        Args:
            mask: ``None`` (every env) or an ``[E]`` int32, bool or uint8 tensor (nonzero: spawn).
            s: float32 ``[E]`` [m], any real (wrapped into [0, L)).
            lateral: float32 ``[E]`` [m] left of the centreline (negative: right), or ``None``: 0.
            A non-finite ``s`` or ``lateral`` resets that env to the start line (the pose returned:
            the start line, on the centreline) and sets its ``invalid_input`` status bit.
        Returns:
            :class:`Spawn` (position ``[E, 3]``, yaw ``[E]``): entries of unmasked envs are not
            written (they keep the previous call's values).
        """
        import torch  # noqa: PLC0415
        if mask is not None:
            mask = self._check_tensor(mask, "mask", ("int32", "bool", "uint8"), (self.num_envs,),
                               f"an int32, bool or uint8 tensor of shape [{self.num_envs}]")
        s = self._float_e(s, "s")
        if lateral is not None:
            lateral = self._float_e(lateral, "lateral")
        b = self._buffers("spawn", lambda: Spawn(torch.zeros(self.num_envs, 3, dtype=torch.float32, device=self.device),
                                                 torch.zeros(self.num_envs, dtype=torch.float32, device=self.device)))
        self._note()
        self._impl.spawn(mask, s, lateral, b.position, b.yaw, _stream_arg(stream))
        return b

    def collide(self, position, orientation, half_extents, xyzw: bool = False, window: int = 8,
                backend: str = "exact", stream=None) -> BoxContact:
        """Each agent's box against its road band (C++ ``collide_boxes``, exact backend): out of
        bounds when a corner leaves the road; signed clearance; the border point and inward normal
        facing the critical corner. Warm-started from the previous call (its own hints).
        ``backend="sdf"``: the attached signed-distance grid instead (:meth:`attach_sdf`; C++
        ``collide_boxes_sdf``): O(1) per box, within about one cell of the exact answer, ``side``
        always 0, no warm start (``window`` unused).

        Args:
            position: float32 ``[E, 3]`` [m], box centres.
            orientation: float32 ``[E, 4]`` unit quaternions, body to track frame, in Isaac Lab's
                **(w, x, y, z)** order (``root_quat_w``) by default; ``xyzw=True`` for (x, y, z, w)
                (Warp's, the seed system's). Only the yaw counts.
            half_extents: float32 ``[E, 2]`` [m], forward and left half extents, > 0.
            window: segments searched around the last foot, as :meth:`localize`.
        A box with NaN/Inf, extents <= 0 or a quaternion norm outside [0.5, 2] gets flags 4
        (invalid), distance NaN, oob 0; the other envs are unaffected.
        Returns:
            :class:`BoxContact`, reused by the next call.
        """
        import torch  # noqa: PLC0415
        window = _window_arg("collide", window)
        if backend not in ("exact", "sdf"):
            raise ValueError(f"track_gen: collide: backend must be 'exact' or 'sdf', got {backend!r}")
        if backend == "sdf" and self.__dict__.get("_sdf") is None:
            raise RuntimeError("track_gen: collide(backend='sdf'): no SDF is attached (call attach_sdf first)")
        position = self._points_e(position, "position")
        orientation = self._points_e(orientation, "orientation", 4)
        half_extents = self._points_e(half_extents, "half_extents", 2)
        E, dev = self.num_envs, self.device
        b = self._buffers("collide" if backend == "exact" else "collide_sdf", lambda: {
            "quat": torch.zeros(E, 4, dtype=torch.float32, device=dev), "hints": torch.zeros(E, dtype=torch.int32, device=dev),
            "flags": torch.zeros(E, dtype=torch.int32, device=dev), "oob": torch.zeros(E, dtype=torch.int32, device=dev),
            "distance": torch.zeros(E, dtype=torch.float32, device=dev), "nearest": torch.zeros(E, 3, dtype=torch.float32, device=dev),
            "normal": torch.zeros(E, 3, dtype=torch.float32, device=dev), "side": torch.zeros(E, dtype=torch.int32, device=dev)})
        self._note()
        quat = orientation
        if not xyzw:  # (w, x, y, z) -> (x, y, z, w), into a buffer of the course's (no allocation)
            self._reorder(orientation, b["quat"], stream)
            quat = b["quat"]
        if backend == "sdf":
            self._impl.collide_sdf(position, quat, half_extents, b["flags"], b["distance"], b["nearest"], b["normal"],
                                   b["side"], _stream_arg(stream))
        else:
            cold = not b.setdefault("warm", False)  # the first call: no previous foot, no window
            b["warm"] = True
            self._impl.collide(position, quat, half_extents, b["hints"], 0 if cold else window, b["flags"],
                               b["distance"], b["nearest"], b["normal"], b["side"], _stream_arg(stream))
        with _torch_stream(stream):
            torch.bitwise_and(b["flags"], 1, out=b["oob"])
        return BoxContact(b["oob"], b["distance"], b["nearest"], b["normal"], b["side"], b["flags"])

    def collide_discs(self, position, orientation, half_extents, discs, radius: float, xyzw: bool = False,
                      stream=None) -> DiscHit:
        """Each agent's box against its own row of discs (cones, gate posts: vertical cylinders of
        one ``radius``, heights ignored; C++ ``collide_box_discs``): the deepest disc, its depth,
        the nearest point of the box and the normal toward the disc. NaN rows (the padding of
        :meth:`cones`) are skipped, so ``cones(...).position`` can be passed as it is.

        Args:
            position, orientation, half_extents, xyzw: the boxes, as :meth:`collide`.
            discs: float32 ``[E, K, 3]`` [m], K >= 1, each env's disc centres in its track frame.
            radius: the discs' radius [m], in [0, 1e7].
        Returns:
            :class:`DiscHit`, reused by the next call with the same K.
        Raises:
            ValueError: a tensor of the wrong dtype, shape, device or layout; radius out of range.
        """
        import torch  # noqa: PLC0415
        position = self._points_e(position, "position")
        orientation = self._points_e(orientation, "orientation", 4)
        half_extents = self._points_e(half_extents, "half_extents", 2)
        E, dev = self.num_envs, self.device
        k = discs.shape[1] if isinstance(discs, torch.Tensor) and discs.dim() == 3 else 1
        discs = self._check_tensor(discs, "discs", ("float32",), (E, max(k, 1), 3),
                                   f"a float32 tensor of shape [{E}, K, 3] with K >= 1")
        if isinstance(radius, bool) or not isinstance(radius, (int, float)):
            raise TypeError(f"radius must be a number [m], got {radius!r}")
        b = self._buffers("collide_discs", lambda: {
            "quat": torch.zeros(E, 4, dtype=torch.float32, device=dev), "flags": torch.zeros(E, dtype=torch.int32, device=dev),
            "hit": torch.zeros(E, dtype=torch.bool, device=dev), "depth": torch.zeros(E, dtype=torch.float32, device=dev),
            "point": torch.zeros(E, 3, dtype=torch.float32, device=dev), "normal": torch.zeros(E, 3, dtype=torch.float32, device=dev),
            "disc": torch.zeros(E, dtype=torch.int32, device=dev)})
        self._note()
        quat = orientation
        if not xyzw:
            self._reorder(orientation, b["quat"], stream)
            quat = b["quat"]
        self._impl.collide_discs(position, quat, half_extents, discs, float(radius), b["flags"], b["depth"], b["point"],
                                 b["normal"], b["disc"], _stream_arg(stream))
        with _torch_stream(stream):
            torch.ne(torch.bitwise_and(b["flags"], 8), 0, out=b["hit"])
        return DiscHit(b["hit"], b["depth"], b["point"], b["normal"], b["disc"], b["flags"])

    def gate_frame_collision(self, position, radius: float, frame_half_thickness: float = 0.05,
                             frame_half_depth: float = 0.05, scope: str = "adjacent", stream=None) -> GateFrameHit:
        """Each agent as a sphere against the frames of the gates near its target (C++
        ``collide_gate_frames``, docs/drones.md): each gate's two posts and two bars are boxes
        around its opening (``half_width`` x ``gate_half_height``, the opening progress counts),
        ``2 frame_half_thickness`` across and ``2 frame_half_depth`` deep along the gate normal.
        Exact sphere-box tests (Ericson, Real-Time Collision Detection, 5.1.3 / 5.2.5) in each
        gate's frame; a centre inside a post or bar gets depth = radius + the distance to the
        nearest face it can leave by.

        Args:
            position: float32 ``[E, 3]`` [m] sphere centres (the drones), each env's track frame,
                or ``None``: the bound position.
            radius: the sphere's radius [m], in (0, 1e6].
            frame_half_thickness, frame_half_depth: the members' half sizes [m], each in
                [1e-4, 1e6] (docs/parameters.md).
            scope: ``"adjacent"`` (default): each env's next gate (``next_gate``) and the gate
                before it, the one passed last (gate 0 after a reset), so a drone clipping a gate
                just after flying through it counts; ``"all"``: every gate of the env (O(G)).

        Reads the progress: call it after :meth:`step` on the same stream. A non-finite position
        gives flags 4 (invalid), hit False, depth 0, NaN distance in its env only.

        Returns:
            :class:`GateFrameHit`, reused by the next call: among the gates tested, the one of
            least signed distance (the deepest hit, or with no hit the nearest frame).
        Raises:
            ValueError: radius or a half size out of range, scope not "adjacent" / "all", a tensor
                of the wrong dtype, shape, device or layout.
            RuntimeError: ``position`` is None and nothing is bound.
        """
        import torch  # noqa: PLC0415
        if position is None:
            position = self._position
            if position is None:
                raise RuntimeError("track_gen: gate_frame_collision: no position given and none bound; pass "
                                   "position= or bind()")
        if scope not in ("adjacent", "all"):
            raise ValueError(f"track_gen: gate_frame_collision: scope must be 'adjacent' or 'all', got {scope!r}")
        position = self._points_e(position, "position")
        E, dev = self.num_envs, self.device
        b = self._buffers("gate_frame_collision", lambda: {
            "flags": torch.zeros(E, dtype=torch.int32, device=dev), "bit": torch.zeros(E, dtype=torch.int32, device=dev),
            "hit": torch.zeros(E, dtype=torch.bool, device=dev), "depth": torch.zeros(E, dtype=torch.float32, device=dev),
            "distance": torch.zeros(E, dtype=torch.float32, device=dev), "point": torch.zeros(E, 3, dtype=torch.float32, device=dev),
            "normal": torch.zeros(E, 3, dtype=torch.float32, device=dev), "member": torch.zeros(E, dtype=torch.int32, device=dev),
            "gate": torch.zeros(E, dtype=torch.int32, device=dev)})
        self._note()
        self._impl.gate_frame_collision(position, float(radius), float(frame_half_thickness), float(frame_half_depth),
                                        0 if scope == "adjacent" else 1, b["flags"], b["depth"], b["distance"],
                                        b["point"], b["normal"], b["member"], b["gate"], _stream_arg(stream))
        with _torch_stream(stream):
            torch.bitwise_and(b["flags"], 8, out=b["bit"])
            torch.ne(b["bit"], 0, out=b["hit"])
        return GateFrameHit(b["hit"], b["depth"], b["distance"], b["point"], b["normal"], b["member"], b["gate"],
                            b["flags"])

    def speed_profile(self, a_lat_max: float, a_accel: float, a_brake: float, v_cap: float, stream=None):
        """The curvature-limited speed profile of every track (C++ ``speed_profile``; the seed
        system's argument names): ``v = min(sqrt(a_lat_max / |curvature|), v_cap)`` at each sample,
        then acceleration (a_accel) and braking (a_brake) passes around the loop [m/s^2, m/s].
        O(N) per env: call it after a regeneration, not every step.
        Returns float32 ``[E, N]`` [m/s], reused by the next call.
        Raises ValueError naming a limit out of range (a_lat_max, v_cap > 0; a_accel, a_brake >= 0)."""
        import torch  # noqa: PLC0415
        out = self._buffers("speed_profile", lambda: torch.zeros(self.num_envs, self.num_samples, dtype=torch.float32, device=self.device))
        self._note()
        self._impl.speed_profile(float(a_lat_max), float(a_accel), float(a_brake), float(v_cap), out,
                                 _stream_arg(stream))
        return out

    def cones(self, side: str = "left", spacing: float = 1.0, capacity: int = 256, stream=None) -> Cones:
        """Cones along the ``"left"`` or ``"right"`` border of every track (C++ ``border_cones``),
        round(border length / spacing) of them (at least 3) at an even spacing, closing the loop.
        The first ``capacity`` go to ``position[e]``, the rest of the row is NaN; ``count[e]`` >
        capacity means the row was cut. ``capacity``: an int in [1, 2**20] (:data:`MAX_PER_ENV`;
        a float is refused) whose output (12 E C bytes) fits in the device's memory. Returns
        :class:`Cones`, reused by the next call with the same side and capacity.
        Raises TypeError (capacity not an int, spacing not a number) or ValueError (side not
        "left"/"right", spacing not finite or below 1e-3 m (C++ ``min_prop_spacing``), capacity
        out of range: the message says the bytes it would take), before anything is allocated."""
        import torch  # noqa: PLC0415
        c, spacing = self._prop_arguments("cones", side, spacing, capacity, lambda c: 12 * c + 4)
        b = self._buffers(("cones", side, c), lambda: Cones(torch.zeros(self.num_envs, c, 3, dtype=torch.float32, device=self.device),
                                                            torch.zeros(self.num_envs, dtype=torch.int32,
                                                                        device=self.device)))
        self._note()
        self._impl.cones(0 if side == "left" else 1, spacing, c, b.position, b.count, _stream_arg(stream))
        return b

    def walls(self, side: str = "left", spacing: float = 2.0, capacity: int = 256, stream=None) -> Walls:
        """Wall pieces along the ``"left"`` or ``"right"`` border of every track (C++
        ``border_walls``): the segments between the cones :meth:`cones` would place at ``spacing``
        (the last closing the loop), each as an instancing transform (midpoint, yaw, length) for a
        renderer. The first ``capacity`` go to row e, the rest is NaN; ``count[e]`` > capacity
        means the row was cut. ``capacity``: as :meth:`cones` (its outputs and scratch take
        32 E C + 16 E bytes). Returns :class:`Walls`, reused by the next call with the same side
        and capacity. Raises TypeError / ValueError as :meth:`cones`."""
        import torch  # noqa: PLC0415
        c, spacing = self._prop_arguments("walls", side, spacing, capacity, lambda c: 12 * (c + 1) + 20 * c + 4)
        E, dev = self.num_envs, self.device

        def make():
            pieces = torch.zeros(E, c, 5, dtype=torch.float32, device=dev)
            return {"scratch": torch.zeros(E, c + 1, 3, dtype=torch.float32, device=dev), "pieces": pieces,
                    "walls": Walls(pieces[..., :3], pieces[..., 3], pieces[..., 4],
                                   torch.zeros(E, dtype=torch.int32, device=dev))}
        b = self._buffers(("walls", side, c), make)
        self._note()
        self._impl.walls(0 if side == "left" else 1, spacing, c, b["scratch"], b["pieces"], b["walls"].count,
                         _stream_arg(stream))
        return b["walls"]

    def _prop_arguments(self, fn: str, side, spacing, capacity, bytes_per_env) -> tuple:
        """(capacity as an int, spacing as a float) after checking `side` and them (TypeError /
        ValueError naming them); `bytes_per_env(capacity)`: the bytes of the outputs per env."""
        if side not in ("left", "right"):
            raise ValueError(f"track_gen: {fn}: side must be 'left' or 'right', got {side!r}")
        spacing = _spacing_arg(fn, spacing, allow_negative=False)
        from . import _extension  # noqa: PLC0415 - a course exists: the extension is loaded
        low = float(_extension().min_prop_spacing)
        if spacing < low:  # C++ refuses it too (props.hpp min_prop_spacing), after our allocation
            raise ValueError(f"track_gen: {fn}: spacing = {spacing!r} m, expected a finite value >= {low:g} m")
        return _size_arg(fn, "capacity", capacity, self.num_envs, self.device, bytes_per_env), spacing

    # ---- heightfield (C++ heightfield.hpp) -------------------------------------------------------

    def attach_sdf(self, resolution: int = 128, stream=None) -> None:
        """Allocates and attaches a signed-distance collision field (C++ ``sdf_field``,
        docs/runtime-utilities.md): per env, an R x R grid (R = ``resolution``, in [8, 512]) over
        its borders' bounding box plus two cells, each texel the signed distance [m] to the road's
        edge at its centre (+ on the road), for :meth:`collide` with ``backend="sdf"``. Baked now
        for every env, then every :meth:`regenerate` re-bakes the envs it regenerates (one more
        kernel on the same stream, recorded with it). Attach before capturing. A second call
        replaces the field. Memory: E (4 R^2 + 16) bytes (537 MB at E = 8192, R = 128).

        Raises:
            TypeError: ``resolution`` not an int.
            ValueError: ``resolution`` out of range (the message names sdf_field.resolution).
            track_gen.exec.errors.CaptureError: the stream is capturing (this allocates).
        """
        if isinstance(resolution, bool) or not isinstance(resolution, int):
            raise TypeError(f"resolution must be an int, got {type(resolution).__name__} {resolution!r}")
        self._impl.attach_sdf(int(resolution), _stream_arg(stream))
        t = self._impl.sdf_tensors()
        self._sdf = (t["distances"], t["headers"])

    def sdf(self):
        """The attached SDF's distances: float32 ``[E, R, R]`` [m], ``sdf()[e, j, i]`` at the
        centre of texel (i, j) (row j along +y; x0, y0, cell from :meth:`sdf_headers`), + on the
        road. A view, updated in place by each regenerate. RuntimeError when none is attached."""
        if self.__dict__.get("_sdf") is None:
            raise RuntimeError("track_gen: sdf: no SDF is attached (call attach_sdf first)")
        return self._sdf[0]

    def sdf_headers(self):
        """float32 ``[E, 4]``: each env's SDF grid as (x0, y0, cell, inv_cell) [m, m, m, 1/m]. A
        view. RuntimeError when none is attached."""
        if self.__dict__.get("_sdf") is None:
            raise RuntimeError("track_gen: sdf_headers: no SDF is attached (call attach_sdf first)")
        return self._sdf[1]

    def attach_heightfield(self, resolution: int = 64, margin: float = 0.0, stream=None) -> None:
        """Allocates and attaches a heightfield: per env, an R x R grid (R = ``resolution``, in
        [2, 512]) of terrain heights around the track, each texel the height z [m] of the
        nearest centreline cross-section in the xy plane (the centreline's z at the planar foot).
        The grid covers each track's borders' bounding box plus ``margin`` metres (in [0, 1e6])
        on every side, in square cells. It is baked now for every env on ``stream``, then every
        :meth:`regenerate` re-bakes the envs it regenerates (one more kernel on the same stream,
        recorded with it into a capture, after its conditional node: it runs on every replay,
        baking only the masked envs). Attach before capturing: a graph bakes the field that was
        attached when it was recorded. A second call replaces the field (tensors of the old one
        stay valid while they live). Memory: E (4 R^2 + 16) bytes (docs/runtime-utilities.md).

        Raises:
            TypeError: ``resolution`` not an int, ``margin`` not a number.
            ValueError: ``resolution`` or ``margin`` out of range (the message names
                heightfield.resolution or heightfield.margin and the range).
            track_gen.exec.errors.CaptureError: the stream is capturing (this allocates).
        """
        if isinstance(resolution, bool) or not isinstance(resolution, int):
            raise TypeError(f"resolution must be an int, got {type(resolution).__name__} {resolution!r}")
        if isinstance(margin, bool) or not isinstance(margin, (int, float)):
            raise TypeError(f"margin must be a number [m], got {type(margin).__name__} {margin!r}")
        self._impl.attach_heightfield(int(resolution), float(margin), _stream_arg(stream))
        t = self._impl.heightfield_tensors()
        self._heightfield = (t["heights"], t["headers"])

    def _heightfield_tensors(self, fn: str):
        hf = self.__dict__.get("_heightfield")
        if hf is None:
            raise RuntimeError(f"track_gen: {fn}: no heightfield is attached (call attach_heightfield first)")
        return hf

    def heightfield(self):
        """The attached heightfield's heights: float32 ``[E, R, R]`` [m], ``heightfield()[e, j, i]``
        the height at the centre of texel (i, j) of env e: (x0 + (i + 0.5) cell, y0 + (j + 0.5)
        cell) in the env's track frame (row j along +y, column i along +x; x0, y0, cell from
        :meth:`heightfield_headers`). A view of the field's memory, updated in place by each
        regenerate. Raises RuntimeError when none is attached."""
        return self._heightfield_tensors("heightfield")[0]

    def heightfield_headers(self):
        """float32 ``[E, 4]``: each env's grid as (x0, y0, cell, inv_cell) [m, m, m, 1/m] (see
        :meth:`heightfield`). A view, updated in place. Raises RuntimeError when none is attached."""
        return self._heightfield_tensors("heightfield_headers")[1]

    def sample_height(self, x, y, stream=None):
        """The terrain height at points of each env (C++ ``sample_heights``): the bilinear
        interpolation of the four texels around (x, y) [m, the env's track frame], the point
        first clamped to the square of the texel centres (outside the grid the edge texels extend
        as constants); NaN for a non-finite point. One thread per point.

        Args:
            x, y: float32 ``[E]`` (one point per env) or ``[E, K]`` (K points per env), one shape,
                on the course's device, contiguous.
        Returns float32 of the same shape [m], reused by the next call of that shape.
        Raises:
            RuntimeError: no heightfield is attached.
            ValueError: a tensor of the wrong dtype, shape, device or layout.
        """
        import torch  # noqa: PLC0415
        self._heightfield_tensors("sample_height")
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else None
        if shape is None or len(shape) not in (1, 2) or shape[0] != self.num_envs or (len(shape) == 2 and shape[1] < 1):
            shape = (self.num_envs,)  # reported by the check below
        wanted = f"a float32 tensor of shape [{self.num_envs}] or [{self.num_envs}, K], K >= 1"
        self._check_tensor(x, "x", ("float32",), shape, wanted)
        self._check_tensor(y, "y", ("float32",), shape, wanted + " (x's shape)")
        out = self._buffers(("sample_height", shape), lambda: torch.zeros(shape, dtype=torch.float32, device=self.device))
        self._note()
        self._impl.sample_heights(x, y, out, _stream_arg(stream))
        return out

    @property
    def pipeline(self) -> str:
        """The C++ pipeline that builds this course's tracks, chosen from its parameters at
        construction: ``"track_pipeline"`` when every env draws polar tracks with a flat profile
        (the defaults), ``"polar_gate_course_pipeline"`` or ``"gate_course_pipeline"`` for
        :meth:`gates` (polar anchors, as the preset's, or another family or a mix), else
        ``"elevated_<family>_pipeline"`` for a batch of one family chosen with ``generator=``
        (bezier, hull, voronoi, checkpoint: that family's own kernel), ``"elevated_track_pipeline"``
        for polar with an elevation profile, ``"elevated_family_pipeline"`` (a mix, or weights), or
        ``"elevated_any_family_pipeline"`` (a batch that can draw the repulsive family), or
        ``"elevated_relaxed_family_pipeline"`` (a batch that turns the centreline relaxation on:
        ``relaxation.max_iterations`` > 0, of the batch or of any variant; gate courses refuse it).
        They build the same tracks bit for bit where more than one can (on the CPU; on a GPU the
        same to float rounding), the one-family kernels in less time than the family pipeline's
        (docs/performance-log.md, entries 14, 26 and 40)."""
        return self._impl.pipeline

    def __repr__(self) -> str:
        return (f"Course(preset={self.params.preset!r}, num_envs={self.num_envs}, device={self.device!r}, "
                f"checkpoint_spacing={self.checkpoint_spacing:.7g}, pipeline={self.pipeline!r})")

"""PyTorch interop: recording track_gen work into ``torch.cuda.graph`` captures.

Library calls made inside a plain ``torch.cuda.graph(g)`` capture are recorded into ``g``:
``Course.step`` and ``Course.regenerate`` run on torch's current stream, which is the capture
stream there, and the C++ library records into any capturing stream. Each capture that records
course work also takes a reference on the course's device memory (a CUDA user object on the
captured graph), so ``g`` may be replayed after the ``Course`` is gone. Outside
:func:`registered`, a masked ``regenerate`` is recorded unconditionally (always correct: every
env with a zero mask entry is left untouched, at the cost of a launch per replay).

:func:`registered` opts a block of the capture into more: ``conditional=True`` records a masked
``regenerate`` under a CUDA IF conditional node (nothing of it runs on a replay where no env is
done), ``capture_mode=`` gives the mode of the captures the library begins itself (the bodies of
those nodes), and ``graph=`` ties the courses used in the block to the torch graph
(:func:`retain`)::

    import torch
    import track_gen.interop.torch

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with track_gen.interop.torch.registered(graph=g, conditional=True):
            course.step()
            course.regenerate(mask=done, advance=True)
    track_gen.interop.torch.retain(g, course)   # no-op here: graph= already did it
    g.replay()

Unlike the reference (Warp) library, the conditional node is inserted WITHOUT ending torch's
capture: the capture id does not change, torch ops that allocate after it still draw from the
graph's private memory pool, side streams forked from the capture may record course work (with
conditional nodes) and join back, and every ``capture_error_mode`` works. What remains: a graph
holding a conditional node cannot be cloned or embedded as a child graph (a CUDA rule).

This module imports torch and the compiled extension lazily (only when ``registered`` enters a
capture); :func:`retain` is pure Python.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional

from ..exec import recording
from ..exec.errors import CaptureError

__all__ = ["registered", "retain"]

_OWNERS_ATTR = "_track_gen_owners"


def _capture_mode(mode) -> int:
    """``None`` -> global (torch.cuda.graph's default ``capture_error_mode``); otherwise one of
    torch's mode names. Returns the cudaStreamCaptureMode value."""
    if mode is None:
        return recording.CAPTURE_MODES["global"]
    if isinstance(mode, str) and mode in recording.CAPTURE_MODES:
        return recording.CAPTURE_MODES[mode]
    raise ValueError(f"capture_mode must be None or one of {sorted(recording.CAPTURE_MODES)}, got {mode!r}")


def _stream_handle(stream) -> int:
    """The cudaStream_t (as an int) of ``stream``: None -> torch's current stream on the current
    CUDA device; a ``torch.cuda.Stream`` (or anything with ``cuda_stream``); an int handle."""
    if stream is None:
        import torch  # noqa: PLC0415 - lazy: never at track_gen import time
        return int(torch.cuda.current_stream().cuda_stream)
    handle = getattr(stream, "cuda_stream", stream)
    if isinstance(handle, bool) or not isinstance(handle, int):
        raise TypeError(f"stream must be None, a torch.cuda.Stream or an int handle, got {type(stream).__name__}")
    return handle


@contextlib.contextmanager
def registered(stream=None, graph=None, capture_mode=None,
               conditional: bool = False) -> Iterator[recording.Registration]:
    """Opt a block of an open ``torch.cuda.graph`` capture into conditional recording, a capture
    mode for the library's own captures, and graph lifetime anchoring.

    Use INSIDE ``torch.cuda.graph(g)``. For the calls this thread makes on ``Course`` objects
    during the block:

    - ``conditional=True``: a masked ``Course.regenerate(mask=...)`` recorded into a capture
      becomes an any-of-mask kernel, a one-thread kernel setting the condition, and an IF
      conditional node around the generation kernel; a replay where no mask entry is set runs
      none of the generation. ``False`` (default, as in the reference library): the generation
      kernel is recorded unconditionally and its blocks exit per env (same results, bit for bit).
      The node is added to torch's capture without ending it, on whichever capturing stream the
      call uses (side streams forked from the capture included).
    - ``capture_mode``: the mode torch began the capture with
      (``torch.cuda.graph(..., capture_error_mode=...)``): ``"global"`` (default, torch's
      default), ``"thread_local"`` or ``"relaxed"``; used for the conditional bodies the library
      captures itself.
    - ``graph``: the ``torch.cuda.CUDAGraph`` being captured; every ``Course`` used in the block
      is :func:`retain`-ed on it at the end of the block.

    Nested in another ``registered()`` block of the same capture, the outer block's choices stay
    in force (only ``graph=`` is honoured). The block registers nothing with CUDA or torch: the
    capture itself is untouched.

    Args:
        stream: the capturing stream to check: ``None`` (torch's current stream, the capture
            stream inside ``torch.cuda.graph``), a ``torch.cuda.Stream`` or an int handle.
        graph: optional ``torch.cuda.CUDAGraph`` being captured.
        capture_mode: ``None``, ``"global"``, ``"thread_local"`` or ``"relaxed"``.
        conditional: record masked regeneration under conditional nodes.

    Yields:
        The block's registration (``.courses`` lists the courses that recorded work in it).

    Raises:
        ValueError: ``capture_mode`` is not one of the names above (checked first, before any
            CUDA query).
        TypeError: ``stream`` is not a stream, or ``conditional`` is not a bool.
        track_gen.exec.errors.CaptureError: the stream is not capturing (not inside
            ``torch.cuda.graph``), or its capture was invalidated.
    """
    mode = _capture_mode(capture_mode)
    if not isinstance(conditional, bool):
        raise TypeError(f"conditional must be a bool, got {type(conditional).__name__} {conditional!r}")
    handle = None if stream is None else _stream_handle(stream)  # its type checked before loading anything
    from .. import _extension  # noqa: PLC0415 - lazy: loads torch and the compiled extension
    ext = _extension()
    if not hasattr(ext, "capture_info"):
        raise CaptureError("track_gen.interop.torch.registered(): this track_gen was built without CUDA (CPU only), "
                           "so there are no graphs to record into")
    if handle is None:
        handle = _stream_handle(None)
    status, capture_id = ext.capture_info(handle)
    if status != 1:
        what = "its capture was invalidated by an earlier error" if status == 2 else "it is not capturing"
        raise CaptureError(
            f"track_gen.interop.torch.registered() must be used inside torch.cuda.graph(...): the stream "
            f"{hex(handle)} given to it (default: torch's current stream) cannot record, {what}. Open the "
            "capture first (with torch.cuda.graph(g): with registered(graph=g): ...).")
    outer: Optional[recording.Registration] = recording.current()
    if outer is not None and outer.capture_id == capture_id:
        registration = recording.Registration(capture_id, outer.conditional, outer.capture_mode)
    else:
        registration = recording.Registration(capture_id, conditional, mode)
    recording.push(registration)
    try:
        yield registration
    finally:
        recording.pop(registration)
        if outer is not None and outer.capture_id == capture_id:
            for course in registration.courses:
                outer.note(course)
        if graph is not None:
            retain(graph, *registration.courses)


def retain(torch_graph, *owners) -> None:
    """Keep ``owners`` alive for as long as ``torch_graph`` is.

    A CUDA graph stores raw device pointers. The course's own memory is already held by every
    graph that recorded its work (a CUDA user object), but the Python objects around it (the
    ``Course``, the position tensor it is bound to, your mask tensors) are not: ``retain(g,
    course, done)`` stores strong references in an attribute of the torch graph object
    (``g._track_gen_owners``), so they are released together with ``g``. Idempotent per object
    (by identity); ``None`` owners are ignored. Pure Python.

    Raises:
        TypeError: ``torch_graph`` cannot carry attributes (no ``__dict__``).
    """
    try:
        held = vars(torch_graph).setdefault(_OWNERS_ATTR, [])
    except TypeError:
        raise TypeError(
            f"retain(): cannot attach owners to a {type(torch_graph).__name__} (it has no __dict__); "
            "keep the owners alive yourself for as long as the graph may be replayed") from None
    for owner in owners:
        if owner is not None and not any(o is owner for o in held):
            held.append(owner)

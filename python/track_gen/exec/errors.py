"""Errors of the execution layer."""

__all__ = ["CaptureError"]


class CaptureError(RuntimeError):
    """A call was made where the capture state of its stream does not allow it: for example
    ``track_gen.interop.torch.registered()`` outside ``torch.cuda.graph``, or building a
    ``Course`` while its stream is capturing. The message says what to do instead. The C++
    library's ``track_gen::capture_error`` is raised as this class too."""

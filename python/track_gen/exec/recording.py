"""Per-thread recording state set by ``track_gen.interop.torch.registered`` and read by every
``Course`` call made in that thread during the block. Pure Python (no torch, no CUDA)."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import List, Optional

__all__ = ["Registration", "current", "push", "pop"]

#: cudaStreamCaptureMode values by torch's ``capture_error_mode`` names.
CAPTURE_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


@dataclass
class Registration:
    """One ``registered()`` block: the capture it belongs to, how the library records into it,
    and the courses that recorded work in it (for ``graph=``)."""

    capture_id: int
    conditional: bool = False
    capture_mode: int = 0
    courses: List[object] = field(default_factory=list)

    def note(self, course) -> None:
        """Remembers ``course`` (once) as having recorded work in this block."""
        if not any(c is course for c in self.courses):
            self.courses.append(course)


_local = threading.local()


def _stack() -> List[Registration]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current() -> Optional[Registration]:
    """The innermost active registration of this thread, or None."""
    stack = _stack()
    return stack[-1] if stack else None


def push(registration: Registration) -> None:
    _stack().append(registration)


def pop(registration: Registration) -> None:
    stack = _stack()
    if not stack or stack[-1] is not registration:
        raise RuntimeError("track_gen: registered() blocks must be exited in the order they were entered")
    stack.pop()

"""Execution layer: capture errors and the per-thread recording state of ``registered``."""
from .errors import CaptureError

__all__ = ["CaptureError"]

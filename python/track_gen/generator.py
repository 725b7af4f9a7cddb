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
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from .course import Course
from .pipeline.presets import TrackParams

__all__ = ["Track", "TrackGenerator"]


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
    pipeline (or the family pipeline, as the parameters ask)."""

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

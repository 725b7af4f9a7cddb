"""The step's copy of each env's next gate (progress fields ``held_gate``, ``held_gate_centre``,
``held_gate_normal``; C++ ``progress_tracker_ref::step``): after a step that tested gates, the
copy is the track's next gate, index and bits; a regenerate forgets it (-1), so that a new track
under the same next gate index is read again. Run once per device (the ``device`` fixture)."""
import torch

import track_gen.course
from track_gen.course import Course
from track_gen.pipeline import presets

E = 24


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int32)


def check_held(course: Course, tested: torch.Tensor) -> int:
    """Every env in `tested` holds its next gate, bit for bit; returns how many were checked."""
    p, t = course.progress, course.tracks
    rows = tested.nonzero().squeeze(1)
    nxt = p.next_gate[rows].long()
    assert torch.equal(p.held_gate[rows], p.next_gate[rows])
    assert torch.equal(bits(p.held_gate_centre[rows]), bits(t.gate_centre[rows, nxt]))
    assert torch.equal(bits(p.held_gate_normal[rows]), bits(t.gate_normal[rows, nxt]))
    return rows.numel()


def test_the_held_gate_is_the_tracks_next_gate_after_every_step(device):
    course = Course.track(presets.track(E, device=device, seed=5), checkpoint_spacing=1.0)
    pos = torch.zeros(E, 3, device=device)
    course.bind(position=pos)
    has_last = track_gen.course.progress_flag_bits()["has_last"]
    env = torch.arange(E, device=device)
    start = torch.zeros(E, dtype=torch.int64, device=device)
    speed = 1 + env % 2
    checked = 0
    for i in range(40):
        if i == 4:  # every other env rebuilt while it holds gate 1, the index a reset makes next
            held_before = course.progress.held_gate.clone()
            mask = env % 2 == 0
            course.regenerate(mask=mask, advance=True)
            assert torch.all(course.progress.held_gate[mask] == -1)
            assert bool((held_before[mask] == 1).any())
            start = torch.where(mask, -4 * speed, start)
        tested = (course.progress.flags & has_last) != 0  # a last position before this step
        k = (start + speed * i) % course.num_samples
        pos.copy_(course.tracks.position[env, k])
        course.step()
        checked += check_held(course, tested)
    assert checked > 30 * E
    assert int(course.progress.gates_passed.sum()) > E  # gates passed: the copies were refreshed

"""The track and progress tensors come from the C++ field tables (``detail/fields.hpp``): their
names, shapes and dtypes follow the table, and the derived fields agree with the ones they are
derived from (road edges = position +- half-width x left normal, arc length = k L / N, the sign
of the curvature = the side the track turns to)."""
import pytest
import torch

import track_gen
from track_gen.course import Course
from track_gen.pipeline import presets

pytestmark = pytest.mark.gpu


def test_fields_follow_the_table_and_agree_with_each_other():
    E = 32
    course = Course.track(presets.track(num_envs=E, device="cuda:0", seed=3), checkpoint_spacing=0.6)
    N, G = course.num_samples, course.max_gates
    ext = track_gen._extension()
    assert course.tracks._fields == tuple(name for name, _ in ext.track_fields())
    assert course.progress._fields == tuple(name for name, _ in ext.progress_fields())
    t = course.tracks
    assert t.half_widths.shape == (E, N, 2) and t.half_widths.dtype == torch.float32
    assert t.border_left.shape == (E, N, 3) and t.curvature.shape == (E, N) and t.arc_length.shape == (E, N)
    assert t.gate_centre.shape == (E, G, 3) and t.status.shape == (E,) and t.status.dtype == torch.int32
    assert course.progress.last_position.shape == (E, 3)
    torch.cuda.synchronize()

    left = t.position + t.half_widths[..., 0:1] * t.normal
    right = t.position - t.half_widths[..., 1:2] * t.normal
    assert torch.allclose(t.border_left, left, atol=1e-5) and torch.allclose(t.border_right, right, atol=1e-5)
    k = torch.arange(N, device=t.length.device, dtype=torch.float32)
    assert torch.allclose(t.arc_length, k[None, :] * (t.length[:, None] / N), rtol=1e-6, atol=1e-5)
    assert torch.equal(t.half_width, t.half_widths.amin(-1))

    # Signed curvature: the z of (b - a) x (c - b) around each sample, from the samples themselves.
    a, b, c = t.position.roll(1, 1), t.position, t.position.roll(-1, 1)
    turn = (b - a)[..., 0] * (c - b)[..., 1] - (b - a)[..., 1] * (c - b)[..., 0]
    strong = turn.abs() > 1e-4 * (b - a).norm(dim=-1) * (c - b).norm(dim=-1)
    assert strong.any()
    assert torch.equal(torch.sign(t.curvature[strong]), torch.sign(turn[strong]))

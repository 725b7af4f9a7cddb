"""Your own tracks from Python (C++ ``user_tracks``): ``Course.from_tracks`` builds them on the
GPU; a circuit far from the origin is flagged ``far_from_origin``, or, with ``recentre=True``,
moved to a frame centred on it, reported in ``tracks.origin``, and then the same track, bit for
bit, as the one given at the origin (issue 17, item 7)."""
import math

import pytest
import torch

from track_gen.course import Course, status_bits
from track_gen.pipeline import presets

pytestmark = pytest.mark.gpu


def stadium(points=2000, a=75.0, r=10.0):
    """[P, 2] centreline of a stadium (straights 2a, radius r) on the 1/128 m grid, so that it
    moved by whole metres up to 131072 m is exact in float32."""
    length = 4 * a + 2 * math.pi * r
    out = []
    for i in range(points):
        s = length * i / points
        if s < 2 * a:
            x, y = -a + s, -r
        elif s < 2 * a + math.pi * r:
            phi = -math.pi / 2 + (s - 2 * a) / r
            x, y = a + r * math.cos(phi), r * math.sin(phi)
        elif s < 4 * a + math.pi * r:
            x, y = a - (s - 2 * a - math.pi * r), r
        else:
            phi = math.pi / 2 + (s - 4 * a - math.pi * r) / r
            x, y = -a + r * math.cos(phi), r * math.sin(phi)
        out.append((round(x * 128) / 128, round(y * 128) / 128))
    return torch.tensor(out, dtype=torch.float64)


def params(num_envs):
    return presets.track(num_envs=num_envs, device="cuda:0", num_samples=512, validate={"length_max": 400.0})


def test_far_circuit_flagged_or_recentred_bit_for_bit():
    bits = status_bits()
    s = stadium()
    shift = torch.tensor([[100000.0, 100000.0], [-120000.0, 70000.0]], dtype=torch.float64)
    far = [s + shift[0], s + shift[1]]
    at_origin = Course.from_tracks(params(2), [s], kind="centreline", checkpoint_spacing=10.0)
    as_given = Course.from_tracks(params(2), far, kind="centreline", checkpoint_spacing=10.0)
    recentred = Course.from_tracks(params(2), far, kind="centreline", recentre=True, checkpoint_spacing=10.0)
    torch.cuda.synchronize()
    a, g, r = at_origin.tracks, as_given.tracks, recentred.tracks
    for t in (a, g, r):
        assert ((t.status & bits["valid"]) != 0).all() and ((t.status & bits["user_track"]) != 0).all()
    assert ((g.status & bits["far_from_origin"]) != 0).all()
    assert ((a.status & bits["far_from_origin"]) == 0).all() and ((r.status & bits["far_from_origin"]) == 0).all()
    assert torch.equal(a.origin, torch.zeros(2, 3, device="cuda:0")) and torch.equal(g.origin, a.origin)
    expected = torch.zeros(2, 3, device="cuda:0")
    expected[:, :2] = shift.to(torch.float32).to("cuda:0")
    assert torch.equal(r.origin, expected)
    for name in ("position", "tangent", "normal", "curvature", "border_left", "length", "num_gates"):
        assert torch.equal(getattr(r, name), getattr(a, name)), name
    # Agents 0.7 m left of the line, given in the re-centred frame: the same progress as at the origin.
    pos_a = a.position[:, 100] + 0.7 * a.normal[:, 100]
    at_origin.bind(pos_a.clone())
    recentred.bind(pos_a.clone())
    at_origin.step()
    recentred.step()
    torch.cuda.synchronize()
    assert torch.equal(at_origin.progress.lateral, recentred.progress.lateral)
    assert torch.allclose(recentred.progress.lateral, torch.full((2,), 0.7, device="cuda:0"), atol=1e-4)


def test_from_tracks_shapes_and_errors():
    s = stadium(400)
    one = Course.from_tracks(params(3), s.numpy(), kind="centreline", checkpoint_spacing=10.0)  # one shared [P, 2]
    torch.cuda.synchronize()
    assert torch.equal(one.tracks.position[0], one.tracks.position[2])
    with_z = torch.cat([s, torch.full((s.shape[0], 1), 2.5, dtype=torch.float64)], dim=1)
    lifted = Course.from_tracks(params(1), [with_z], kind="centreline", checkpoint_spacing=10.0)
    torch.cuda.synchronize()
    assert torch.allclose(lifted.tracks.position[0, :, 2], torch.full((512,), 2.5, device="cuda:0"))
    with pytest.raises(ValueError, match=r"tracks\[1\] must be a \[P, 2\] or \[P, 3\]"):
        Course.from_tracks(params(2), [s, s[:, :1]], kind="centreline")
    with pytest.raises(ValueError, match=r"num_envs = 2"):
        Course.from_tracks(params(2), [s, s, s], kind="centreline")
    with pytest.raises(ValueError, match=r"not finite"):
        bad = s.clone()
        bad[7, 0] = float("nan")
        Course.from_tracks(params(1), [bad], kind="centreline")
    with pytest.raises(ValueError, match=r"kind must be"):
        Course.from_tracks(params(1), [s], kind="spline")

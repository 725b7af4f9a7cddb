"""The batch queries from Python (C++ ``queries.hpp`` through ``Course.localize``, ``track_ahead``,
``progress_delta``, ``spawn``, ``collide``, ``speed_profile``, ``cones``) against closed forms on
a circle given as user control points (every answer known analytically, to the tolerance of the
spline and of its 512 samples), plus bad boxes, the outputs' reuse under a captured graph, and the
argument checks."""
import math

import pytest
import torch

from track_gen.course import Course, status_bits
from track_gen.pipeline import presets

# Every test runs on each device of the `device` fixture (conftest.py: "cpu" marked cpu,
# "cuda:0" marked gpu) but the graph test, which is GPU only.
R = 50.0      # circle radius [m], run counter-clockwise from (R, 0): the left normal points inward
E = 8
HW = 0.5      # the road's half-width [m] (set below: the track preset's is 0.3)


def circle_course(device, num_envs=E):
    angles = torch.arange(64, dtype=torch.float64) * (2 * math.pi / 64)
    pts = torch.stack([R * torch.cos(angles), R * torch.sin(angles)], dim=1)
    params = presets.track(num_envs=num_envs, device=device, num_samples=512, half_width=HW,
                           validate={"length_max": 400.0})
    course = Course.from_tracks(params, [pts], kind="control_points", checkpoint_spacing=10.0)
    if device != "cpu":
        torch.cuda.synchronize()
    return course


def at(theta, device, left=0.0, z=0.0):
    """Points at angles theta [E] (tensor), `left` metres inside the circle, height z: [E, 3] float32."""
    r = R - left
    return torch.stack([r * torch.cos(theta), r * torch.sin(theta), torch.full_like(theta, z)], dim=1).float().to(device)


def wrap(a):
    return torch.remainder(a + math.pi, 2 * math.pi) - math.pi


def quat_wxyz(yaw, device):
    return torch.stack([torch.cos(yaw / 2), torch.zeros_like(yaw), torch.zeros_like(yaw), torch.sin(yaw / 2)],
                       dim=1).float().to(device)


def test_localize_on_a_circle_is_closed_form_and_warm_started(device):
    course = circle_course(device)
    length = course.tracks.length.double()
    theta = torch.linspace(0.1, 6.0, E, dtype=torch.float64)
    left = torch.linspace(-0.4, 0.4, E, dtype=torch.float64)
    pos = torch.stack([(R - left) * torch.cos(theta), (R - left) * torch.sin(theta), torch.full_like(theta, 0.05)],
                      dim=1).float().to(device)
    f = course.localize(position=pos, window=0)
    s_ref = (theta * R).to(device)
    ds = torch.remainder(f.s.double() - s_ref + length / 2, length) - length / 2
    assert ds.abs().max() < 0.05, ds
    assert (f.n.double() - left.to(device)).abs().max() < 0.02          # positive left (inward)
    assert (f.n_up.double() - 0.05).abs().max() < 1e-3
    assert (f.curvature.double() - 1.0 / R).abs().max() < 0.05 / R      # +1/R: counter-clockwise is positive
    assert wrap(f.heading.double() - (theta + math.pi / 2).to(device)).abs().max() < 2e-3
    assert not f.lost.any()  # window 0: the full search is the only one
    # Warm start: a small move keeps its window; a half-lap jump is lost once.
    pos2 = pos.clone()
    pos2[0] = at(torch.tensor([theta[0].item() + 0.01]), device)[0]
    pos2[1] = at(torch.tensor([theta[1].item() + math.pi]), device)[0]
    g = course.localize(position=pos2, window=8)
    assert not bool(g.lost[0]) and bool(g.lost[1])
    # The seed system's convention: positive right.
    h = course.localize(position=pos, window=8, seed_convention=True)
    assert (h.n.double() + left.to(device)).abs().max() < 0.02
    assert h.s.data_ptr() == f.s.data_ptr()  # outputs are the Course's, reused


def test_localize_of_a_non_finite_position_is_nan_and_lost(device):
    course = circle_course(device, 3)
    pos = at(torch.tensor([0.5, 1.0, 1.5], dtype=torch.float64), device)
    pos[1, 0] = float("nan")
    pos[2, 2] = float("inf")
    f = course.localize(position=pos, window=8)
    assert torch.isfinite(f.s[0]) and not bool(f.lost[0])
    for e in (1, 2):
        assert bool(f.lost[e]) and all(math.isnan(float(v[e])) for v in (f.s, f.n, f.n_up, f.curvature, f.heading))


def test_track_ahead_progress_delta_speed_profile_on_a_circle(device):
    course = circle_course(device)
    theta = torch.linspace(0.3, 5.5, E, dtype=torch.float64)
    pos = at(theta, device)
    yaw = (theta + math.pi / 2).float().to(device)
    k, spacing = 5, 2.0
    pts = course.track_ahead(k, spacing, yaw, position=pos)
    delta = spacing * torch.arange(1, k + 1, dtype=torch.float64) / R        # angle ahead of each point
    want = torch.stack([R * torch.sin(delta), R * (1 - torch.cos(delta)), torch.zeros_like(delta)], dim=1)
    assert (pts.double().cpu() - want.unsqueeze(0)).abs().max() < 0.02       # x forward, y left (turning left)

    length = course.tracks.length
    s_prev = (torch.rand(E, device=device) * length)
    step = (torch.rand(E, device=device) - 0.5) * 0.8 * length
    s_now = torch.remainder(s_prev + step, length)
    d = course.progress_delta(s_prev, s_now)
    assert (d - step).abs().max() < 1e-3

    v = course.speed_profile(a_lat_max=4.0, a_accel=2.0, a_brake=5.0, v_cap=30.0)
    assert v.shape == (E, course.num_samples)
    assert (v - math.sqrt(4.0 * R)).abs().max() < 0.03 * math.sqrt(4.0 * R)  # constant curvature 1/R
    v2 = course.speed_profile(a_lat_max=4.0, a_accel=2.0, a_brake=5.0, v_cap=10.0)
    assert torch.allclose(v2, torch.full_like(v2, 10.0))


def test_spawn_pose_on_the_centreline_and_progress_reset(device):
    course = circle_course(device)
    course.bind(position=torch.zeros(E, 3, device=device))
    length = float(course.tracks.length[0])
    s = torch.linspace(1.0, length + 30.0, E, device=device)           # beyond L too: wrapped
    lateral = torch.linspace(-0.3, 0.3, E, device=device)
    mask = torch.ones(E, dtype=torch.bool, device=device)
    mask[3] = False
    sp = course.spawn(mask, s, lateral)
    angle = s.double() / R
    want = torch.stack([(R - lateral.double()) * torch.cos(angle), (R - lateral.double()) * torch.sin(angle)], dim=1)
    ok = mask.cpu()
    assert (sp.position[:, :2].double() - want).abs()[mask].max() < 0.02
    assert wrap(sp.yaw.double() - (angle + math.pi / 2))[mask].abs().max() < 2e-3
    assert torch.equal(sp.position[3].cpu(), torch.zeros(3)) and float(sp.yaw[3]) == 0.0  # not written
    assert (course.laps[ok.to(device)] == 0).all() and (course.gates_passed[ok.to(device)] == 0).all()
    # The tracker's lap progress is the spawn's (wrapped) arc length.
    lp = course.lap_progress.double()
    ds = torch.remainder(lp - torch.remainder(s.double(), length) + length / 2, length) - length / 2
    assert ds[mask].abs().max() < 0.05


def test_spawn_with_a_non_finite_input_gives_the_start_line_not_nan(device):
    course = circle_course(device)
    course.bind(position=torch.zeros(E, 3, device=device))
    s = torch.full((E,), 20.0, device=device)
    lateral = torch.full((E,), 0.2, device=device)
    s[1] = float("nan")
    lateral[2] = float("nan")
    lateral[3] = float("inf")
    sp = course.spawn(None, s, lateral)
    start = course.tracks.position[:, 0]                               # the start line, on the centreline
    for e in (1, 2, 3):
        assert torch.isfinite(sp.position[e]).all(), (e, sp.position[e])
        assert (sp.position[e] - start[e]).abs().max() < 1e-3, e
        assert abs(float(wrap(sp.yaw[e].double().cpu() - math.pi / 2))) < 2e-3   # (R, 0) heading +y
    invalid = (course.tracks.status.cpu() & status_bits()["invalid_input"]) != 0
    assert invalid.tolist() == [False, True, True, True, False, False, False, False]
    angle = 20.0 / R                                                   # the finite envs as asked
    assert abs(float(sp.position[0, 0]) - (R - 0.2) * math.cos(angle)) < 0.02


def test_collide_inside_outside_orientation_order_and_bad_boxes(device):
    course = circle_course(device)
    theta = torch.linspace(0.2, 6.0, E, dtype=torch.float64)
    tangent_yaw = theta + math.pi / 2
    centres = at(theta, device)
    ext = torch.tensor([[0.1, 0.05]] * E, device=device)
    # Env 1 far outside (3 m beyond the outer, right border); env 2 across the road (yaw + 90 deg,
    # forward half extent 0.3); env 5 a NaN quaternion; env 6 zero extents.
    centres[1] = at(theta[1:2], device, left=-3.0)[0]
    yaw = tangent_yaw.clone()
    yaw[2] += math.pi / 2
    ext[2] = torch.tensor([0.3, 0.05])
    q = quat_wxyz(yaw, device)
    q[5, 0] = float("nan")
    ext[6] = 0.0
    c = course.collide(centres, q, ext)
    flags = c.flags.cpu()
    dist = c.distance.double().cpu()
    good = [0, 3, 4, 7]
    for e in good:
        assert c.oob[e] == 0 and abs(dist[e] - (HW - 0.05)) < 0.01, (e, dist[e])
    assert c.oob[1] == 1 and abs(dist[1] - -(3.0 + 0.05 - HW)) < 0.02
    assert int(c.side[1]) == 1  # the right border (outer on a counter-clockwise circle)
    inward = torch.tensor([-math.cos(theta[1]), -math.sin(theta[1]), 0.0])
    assert (c.normal[1].double().cpu() - inward).abs().max() < 1e-2
    assert abs(dist[2] - (HW - 0.3)) < 0.01                            # across the road: w first was read right
    assert flags[5] & 4 and flags[6] & 4 and math.isnan(dist[5]) and math.isnan(dist[6])
    assert all(not (flags[e] & 4) for e in (0, 1, 2, 3, 4, 7))
    # (x, y, z, w) given as such agrees.
    q_xyzw = torch.cat([q[:, 1:], q[:, :1]], dim=1).contiguous()
    first = c.distance.clone()
    c2 = course.collide(centres, q_xyzw, ext, xyzw=True)
    assert torch.equal(c2.distance.nan_to_num(7.0), first.nan_to_num(7.0))


def test_cones_on_a_circle(device):
    course = circle_course(device, 2)
    spacing = 2.0
    want = round(2 * math.pi * (R - HW) / spacing)      # the left border is the inner circle
    cones = course.cones("left", spacing, capacity=want + 5)
    assert (cones.count == want).all()
    r = cones.position[:, :want, :2].norm(dim=-1)
    assert (r - (R - HW)).abs().max() < 0.01
    assert torch.isnan(cones.position[:, want:]).all()
    cut = course.cones("right", spacing, capacity=10)
    assert (cut.count > 10).all() and not torch.isnan(cut.position).any()


def test_sdf_texels_are_the_closed_form_and_collide_agrees_with_the_exact_backend(device):
    course = circle_course(device, 2)
    course.attach_sdf(resolution=256)
    d, head = course.sdf().double().cpu(), course.sdf_headers().double().cpu()
    r_tex = d.shape[-1]
    assert d.shape == (2, 256, 256) and r_tex == 256
    x0, y0, cell = head[0, 0], head[0, 1], head[0, 2]
    centres = (torch.arange(r_tex, dtype=torch.float64) + 0.5) * cell
    x, y = x0 + centres.view(1, -1), y0 + centres.view(-1, 1)     # texel (i, j): row j along +y
    n = R - torch.sqrt(x * x + y * y)                             # lateral offset, positive left (inward)
    want = HW - n.abs()                                           # d = min(hw - n, n + hw)
    near = (n.abs() < 3.0)                                        # the band and 2.5 m around it
    assert (d[0][near] - want[near]).abs().max() < 0.02
    # Boxes across the road: the SDF's clearance within a cell diagonal of the exact one.
    theta = torch.linspace(0.1, 6.0, 2, dtype=torch.float64)
    pos = at(theta, device, left=0.3)
    q = quat_wxyz(theta + math.pi / 2, device)
    ext = torch.tensor([[0.3, 0.1]] * 2, device=device)
    exact = course.collide(pos, q, ext).distance.clone()
    sdf = course.collide(pos, q, ext, backend="sdf")
    assert (sdf.distance.double() - exact.double()).abs().max() <= math.sqrt(2) * float(cell)
    assert torch.equal(sdf.oob, (exact < 0).int()) and (sdf.side == 0).all()
    # A regeneration re-bakes: a new user track is not possible here, but the same track is, bit for bit.
    before = course.sdf().clone()
    course.regenerate(mask=torch.ones(2, dtype=torch.bool, device=device), advance=False)
    assert torch.equal(course.sdf(), before)
    with pytest.raises(ValueError, match="backend"):
        course.collide(pos, q, ext, backend="grid")
    with pytest.raises(ValueError, match="resolution"):
        course.attach_sdf(resolution=4)


def test_box_against_discs_is_the_closed_form(device):
    course = circle_course(device, 3)
    # Box e at (R, 0), heading +y (the tangent there), half extents 0.2 forward, 0.1 left: its
    # outline spans x in [R - 0.1, R + 0.1], y in [-0.2, 0.2].
    pos = torch.tensor([[R, 0.0, 0.0]] * 3, device=device)
    q = quat_wxyz(torch.full((3,), math.pi / 2, dtype=torch.float64), device)
    ext = torch.tensor([[0.2, 0.1]] * 3, device=device)
    nan = float("nan")
    discs = torch.tensor([
        [[R + 0.25, 0.0, 0.0], [R, 1.0, 0.0], [nan, nan, nan]],       # 0.15 m beyond the +x face: gap 0.05
        [[nan, nan, nan], [R + 0.15, 0.1, 0.0], [R + 0.12, 0.0, 0.0]],  # 0.05 and 0.02 beyond: depths 0.05, 0.08
        [[R + 0.1 + 0.06, 0.2 + 0.08, 0.0], [R + 5.0, 0.0, 0.0], [nan, nan, nan]],  # 0.1 from the corner
    ], device=device)
    h = course.collide_discs(pos, q, ext, discs, radius=0.1)
    depth = h.depth.double().cpu()
    assert abs(depth[0] - -0.05) < 1e-5 and not bool(h.hit[0]) and int(h.disc[0]) == 0
    assert abs(depth[1] - 0.08) < 1e-5 and bool(h.hit[1]) and int(h.disc[1]) == 2   # the deeper one, the NaN skipped
    assert abs(depth[2] - 0.0) < 1e-5 and bool(h.hit[2]) and int(h.disc[2]) == 0    # touching counts
    assert (h.point[1].double().cpu() - torch.tensor([R + 0.1, 0.0, 0.0], dtype=torch.float64)).abs().max() < 1e-5
    assert (h.normal[1].double().cpu() - torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)).abs().max() < 1e-5
    corner = torch.tensor([0.6, 0.8, 0.0], dtype=torch.float64)  # from the corner (R + 0.1, 0.2) to the disc
    assert (h.normal[2].double().cpu() - corner).abs().max() < 1e-4
    # The cones of cones() (NaN-padded rows) go in as they are.
    cones = course.cones("left", 2.0, capacity=200)
    on_cones = course.collide_discs(pos, q, ext, cones.position, radius=0.1)
    assert not on_cones.hit.any() and (on_cones.disc >= 0).all()   # the inner border is 0.4 m from the box
    with pytest.raises(ValueError, match="discs"):
        course.collide_discs(pos, q, ext, torch.zeros(3, 3, device=device), radius=0.1)
    with pytest.raises(ValueError, match="radius"):
        course.collide_discs(pos, q, ext, discs, radius=-1.0)


def test_walls_join_the_cones_on_a_circle(device):
    course = circle_course(device, 2)
    spacing = 2.0
    cones = course.cones("left", spacing, capacity=200)
    walls = course.walls("left", spacing, capacity=200)
    n = int(cones.count[0])
    assert torch.equal(walls.count, cones.count) and n < 200
    p = cones.position[0, :n].double()
    q = torch.roll(p, -1, dims=0)                              # piece i joins cone i to cone i + 1 (closing)
    assert (walls.position[0, :n].double() - (p + q) / 2).abs().max() < 1e-4
    d = q - p
    assert (walls.length[0, :n].double() - d.norm(dim=-1)).abs().max() < 1e-4
    assert wrap(walls.yaw[0, :n].double() - torch.atan2(d[:, 1], d[:, 0])).abs().max() < 1e-4
    chord = 2 * (R - HW) * math.sin(math.pi / n)               # n pieces around the inner circle
    assert (walls.length[0, :n].double() - chord).abs().max() < 0.01
    assert torch.isnan(walls.position[:, n:]).all() and torch.isnan(walls.yaw[:, n:]).all()
    with pytest.raises(ValueError, match="capacity"):
        course.walls("left", spacing, capacity=0)


@pytest.mark.gpu
def test_captured_graph_replays_into_the_same_outputs():
    device = "cuda:0"
    course = circle_course(device)
    theta = torch.linspace(0.1, 6.0, E, dtype=torch.float64)
    pos = at(theta, device)
    course.localize(position=pos)   # first call: allocates the outputs and loads the kernel
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        frame = course.localize(position=pos, window=8)
    pos.copy_(at(theta + 0.02, device, left=0.1))
    graph.replay()
    torch.cuda.synchronize()
    replayed = frame.s.clone(), frame.n.clone()
    eager = course.localize(position=pos, window=8)
    assert torch.equal(replayed[0], eager.s) and torch.equal(replayed[1], eager.n)
    assert (eager.n - 0.1).abs().max() < 0.01


def test_bad_arguments_name_themselves(device):
    course = circle_course(device, 2)
    pos = torch.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="position"):
        course.localize(position=torch.zeros(3, 3, device=device))
    with pytest.raises(ValueError, match="num_points"):
        course.track_ahead(0, 1.0, torch.zeros(2, device=device), position=pos, s=torch.zeros(2, device=device))
    with pytest.raises(ValueError, match="spacing"):
        course.track_ahead(3, 0.0, torch.zeros(2, device=device), position=pos, s=torch.zeros(2, device=device))
    with pytest.raises(ValueError, match="orientation"):
        course.collide(pos, torch.zeros(2, 3, device=device), torch.ones(2, 2, device=device))
    with pytest.raises(ValueError, match="a_lat_max|lateral_acceleration"):
        course.speed_profile(a_lat_max=0.0, a_accel=1.0, a_brake=1.0, v_cap=10.0)
    with pytest.raises(ValueError, match="side"):
        course.cones("inner", 1.0, 8)
    with pytest.raises(ValueError, match="spacing"):
        course.cones("left", -1.0, 8)


def test_counts_and_windows_are_ints_in_range_checked_before_anything_runs(device, monkeypatch):
    """A new-user trial: localize(window=10**12) got pybind's "incompatible function arguments",
    track_ahead(10**9) / cones(capacity=10**10) the allocator's error, and a float count or window
    (2.5, 2.7) was truncated. Each now raises naming the parameter and its range, before any
    kernel or allocation, leaving the outputs of earlier calls as they were."""
    import numpy as np
    import track_gen.course as course_module
    course = circle_course(device, 2)
    theta = torch.tensor([0.3, 2.0], dtype=torch.float64)
    pos, yaw = at(theta, device), (theta + math.pi / 2).float().to(device)
    frame = course.localize(position=pos, window=8)
    before = [t.clone() for t in frame]
    elsewhere = at(theta + 1.0, device)
    with pytest.raises(ValueError, match=r"window = 1000000000000, expected an int in \[-2\*\*31, 2\*\*31 - 1\]"):
        course.localize(position=elsewhere, window=10**12)
    with pytest.raises(TypeError, match="window must be an int.*float 2.7"):
        course.localize(position=elsewhere, window=2.7)
    with pytest.raises(TypeError, match="window"):
        course.collide(elsewhere, quat_wxyz(yaw, device), torch.ones(2, 2, device=device), window=8.0)
    with pytest.raises(ValueError, match=r"num_points = 1000000000, expected an int in \[1, 2\*\*20 = 1048576\]; "
                                         r"its outputs would take 24000000000 bytes \(22.4 GiB\) for 2 envs"):
        course.track_ahead(10**9, 1.0, yaw, position=elsewhere)          # s=None: not even the localize runs
    with pytest.raises(TypeError, match="num_points must be an int.*float 2.5"):
        course.track_ahead(2.5, 1.0, yaw, position=elsewhere)
    with pytest.raises(TypeError, match="spacing must be a number"):
        course.track_ahead(3, "1", yaw, position=elsewhere)
    for t, b in zip(course.localize(position=pos, window=8), before):   # the refused calls changed nothing
        assert torch.equal(t, b)
    assert [k for k in course._query_buffers if isinstance(k, tuple)] == []   # and allocated nothing
    for fn, per_env in (("cones", 10**10 * 12 + 4), ("walls", 10**10 * 32 + 16)):
        with pytest.raises(ValueError, match=rf"{fn}: capacity = 10000000000, expected an int in "
                                             rf"\[1, 2\*\*20 = 1048576\]; its outputs would take {2 * per_env} bytes"):
            getattr(course, fn)("left", 1.0, capacity=10**10)
        with pytest.raises(TypeError, match=f"{fn}: capacity must be an int"):
            getattr(course, fn)("left", 1.0, capacity=8.0)
        with pytest.raises(ValueError, match=f"{fn}: spacing = nan m, expected finite and > 0"):
            getattr(course, fn)("left", float("nan"), capacity=8)
    # In range but beyond the device's memory (here a pretend 1000-byte device): refused as well.
    monkeypatch.setattr(course_module, "_device_memory", lambda device: 1000)
    with pytest.raises(ValueError, match=r"num_points = 100: its outputs would take 2400 bytes .* "
                                         r"more than the 1000 bytes"):
        course.track_ahead(100, 1.0, yaw, position=pos, s=frame.s)
    monkeypatch.undo()
    # NumPy integers (and 0-d integer tensors) are ints: the same answers as Python ints.
    assert torch.equal(course.track_ahead(np.int64(3), 1.0, yaw, position=pos, s=frame.s).clone(),
                       course.track_ahead(3, 1.0, yaw, position=pos, s=frame.s))
    assert torch.equal(course.localize(position=pos, window=np.int32(8)).s.clone(),
                       course.localize(position=pos, window=8).s)
    assert torch.equal(course.cones("left", 1.0, capacity=torch.tensor(16)).position.clone(),
                       course.cones("left", 1.0, capacity=16).position)


def test_track_ahead_of_a_non_finite_s_starts_at_the_start_line(device):
    """C++ wrap_arc_length reads a non-finite s as 0: NaN, +inf and -inf give the points ahead of
    the start line (no NaN, no error; s is never read on the host), checked against the circle's
    closed form, and the other envs are unaffected."""
    course = circle_course(device)
    k, spacing = 4, 2.0
    s = torch.tensor([0.0, float("nan"), float("inf"), -float("inf"), 3.0, 0.0, float("nan"), 100.0], device=device)
    yaw = torch.zeros(E, device=device)
    pts = course.track_ahead(k, spacing, yaw, position=torch.zeros(E, 3, device=device), s=s).double().cpu()
    start = spacing * torch.arange(1, k + 1, dtype=torch.float64) / R        # angles of the points from (R, 0)
    want = torch.stack([R * torch.cos(start), R * torch.sin(start), torch.zeros_like(start)], dim=1)
    for e in (0, 1, 2, 3, 5, 6):
        assert (pts[e] - want).abs().max() < 0.02, e
    assert torch.equal(pts[1], pts[0]) and torch.equal(pts[2], pts[0]) and torch.equal(pts[3], pts[0])
    for e, s_e in ((4, 3.0), (7, 100.0)):                                    # finite s: the points ahead of it
        angle = (s_e + spacing * torch.arange(1, k + 1, dtype=torch.float64)) / R
        ahead = torch.stack([R * torch.cos(angle), R * torch.sin(angle), torch.zeros_like(angle)], dim=1)
        assert (pts[e] - ahead).abs().max() < 0.02, e


def test_spacings_are_checked_as_float32_before_anything_runs(device):
    """A spacing that is non-zero as a Python float but 0 or inf as the float32 the C++ call reads
    (1e-46, 1e39), or beyond double's range (10**400), is refused naming spacing before
    track_ahead's own localize runs (its state unchanged); cones/walls refuse a spacing below
    1e-3 m (C++ min_prop_spacing), where border length / spacing overflowed the count to 3."""
    course = circle_course(device)
    theta = torch.linspace(0.0, 1.0, E, device=device)
    course.localize(position=at(theta, device))
    before = course.localize(position=at(theta, device)).s.clone()
    for bad in (1e-46, 1e39, 10**400, -1e-46):
        with pytest.raises(ValueError, match="spacing"):
            course.track_ahead(4, bad, torch.zeros(E, device=device), position=at(theta + 2.0, device))
        assert torch.equal(course.localize(position=at(theta, device)).s, before)   # the localize never ran
    for fn in (course.cones, course.walls):
        for bad in (1e-12, 1e-40, 5e-4, 10**400):
            with pytest.raises(ValueError, match="spacing"):
                fn(spacing=bad)
        assert int(fn(spacing=1e-3, capacity=16).count[0]) > 300_000   # the smallest accepted: a cone per mm


def test_spawn_of_an_env_whose_gate_count_was_overwritten_gives_the_start_line_pose(device):
    """num_gates written out of range: the spawn resets the env to the start line (C++ spawn) and
    the pose it returns is the start line's too, as for a non-finite s; other envs spawn at s."""
    course = circle_course(device)
    course.tracks.num_gates[0] = 0
    s = torch.full((E,), 100.0, device=device)
    sp = course.spawn(None, s)                                  # outputs reused by each call: copied
    got_position, got_yaw = sp.position.clone(), sp.yaw.clone()
    assert int(course.progress.lap_progress[0]) == 0
    assert abs(float(course.progress.lap_progress[1]) - 100.0) < 1e-3
    start = course.spawn(None, torch.zeros(E, device=device))   # where s = 0 puts every env (env 0 too)
    assert torch.equal(got_position[0], start.position[0]) and torch.equal(got_yaw[0], start.yaw[0])
    assert not torch.equal(got_position[1], start.position[1])
    assert int(course.tracks.status[0]) & status_bits()["invalid_input"]

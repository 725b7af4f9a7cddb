"""``Course.step()``'s outputs (C++ ``course::step``): the gate events (``checkpoint_passed``,
``wrong_checkpoint``, the seed system's names) on a scripted path whose answers are worked out by
hand from the gate positions, and the box contacts of ``Course.bind(position=, orientation=,
half_extents=)`` against ``Course.collide`` (the same collide_box) and the closed form on a
circle; bind's checks; graph replay against eager steps."""
import math

import pytest
import torch

from track_gen.course import Course, progress_flag_bits, status_bits
from track_gen.pipeline import presets

DEVICE = "cuda:0"  # set per test by _on_each_device: every test runs on "cpu" and "cuda:0"


@pytest.fixture(autouse=True)
def _on_each_device(device):
    """Runs each test once per device of conftest's `device` fixture (cpu / gpu marks)."""
    global DEVICE
    DEVICE = device
R = 50.0      # circle radius [m], counter-clockwise from (R, 0): the left normal points inward
HW = 0.5      # the road's half-width [m]


def circle_course(num_envs):
    """A circle of user control points, 512 samples, gates every 10 m: G = 31, gate g at g L / 31."""
    angles = torch.arange(64, dtype=torch.float64) * (2 * math.pi / 64)
    pts = torch.stack([R * torch.cos(angles), R * torch.sin(angles)], dim=1)
    params = presets.track(num_envs=num_envs, device=DEVICE, num_samples=512, half_width=HW,
                           validate={"length_max": 400.0})
    course = Course.from_tracks(params, [pts], kind="control_points", checkpoint_spacing=10.0)
    if DEVICE != "cpu":
        torch.cuda.synchronize()
    return course


def at(s, left=0.0, z=0.0):
    """Points at arc lengths s [E] (list or tensor) on the circle, `left` metres inside: [E, 3] float32."""
    s = torch.as_tensor(s, dtype=torch.float64)
    left = torch.as_tensor(left, dtype=torch.float64).expand_as(s)
    r = R - left
    return torch.stack([r * torch.cos(s / R), r * torch.sin(s / R), torch.full_like(s, z)], dim=1).float().to(DEVICE)


def quat_wxyz(yaw):
    yaw = torch.as_tensor(yaw, dtype=torch.float64)
    z = torch.zeros_like(yaw)
    return torch.stack([torch.cos(yaw / 2), z, z, torch.sin(yaw / 2)], dim=1).float().to(DEVICE)


def test_gate_events_on_a_scripted_path():
    course = circle_course(2)
    gates = int(course.tracks.num_gates[0])
    assert gates == 31
    spacing = float(course.tracks.length[0]) / gates  # 10.13 m
    # (s, left, checkpoint_passed, wrong_checkpoint): gate g sits at g * 10.13 m, half-width 0.5 m.
    path = [
        (1, 0, -1, -1),     # the first step only primes
        (5, 0, -1, -1),
        (11, 0, 1, -1),     # gate 1 in order
        (21, 0, 2, -1),     # gate 2 in order
        (19, 0, -1, 2),     # gate 2 backwards: not the next gate (3)
        (22, 0, -1, 2),     # gate 2 forwards again: passed already, not the next one
        (31, 0, 3, -1),     # gate 3 in order
        (35, 1.5, -1, -1),  # 1.5 m left: off the road
        (45, 1.5, -1, -1),  # past gate 4 (40.54) outside its opening: no crossing
        (48, 0, -1, -1),
        (52, 0, -1, 5),     # gate 5 with gate 4 skipped: wrong
        (48, 0, -1, 5),     # gate 5 backwards: wrong
        (44, 0, -1, -1),
        (39.5, 0, -1, -1),  # gate 4 backwards: the next gate, not a wrong one
        (51, 0, 5, -1),     # gates 4 and 5 in one step: the last one passed
    ]
    position = at([0.0, 3.0])
    course.bind(position=position)
    passed = 0
    for i, (s, left, want_passed, want_wrong) in enumerate(path):
        position[0] = at([s], left)[0]
        position[1] = at([3.0])[0]   # env 1 stands still
        out = course.step()
        ev = out.events
        assert out.contacts is None   # no boxes bound
        got = (int(ev.checkpoint_passed[0]), int(ev.wrong_checkpoint[0]))
        assert got == (want_passed, want_wrong), (i, s, got)
        assert int(ev.passed[0]) == (1 if want_passed >= 0 else 0), i
        # The 0/1 columns are the flag bits of every env (the extension's step bits kernel).
        bits = progress_flag_bits()
        assert torch.equal(ev.passed, ((ev.flags & bits["gate_passed"]) != 0).int()), i
        assert torch.equal(ev.wrong_way, ((ev.flags & bits["wrong_way"]) != 0).int()), i
        assert int(ev.wrong_way[0]) == (1 if i > 0 and s < path[i - 1][0] else 0), i
        passed += 2 if i == len(path) - 1 else (1 if want_passed >= 0 else 0)
        assert int(ev.progress[0]) == passed, i
        if want_passed >= 0:
            assert int(ev.next_checkpoint[0]) == (want_passed + 1) % gates
        assert int(ev.checkpoint_passed[1]) == -1 and int(ev.wrong_checkpoint[1]) == -1
    # Going on in 4 m steps once round: each gate in order, gate 0 completes the lap.
    previous = 51.0
    length = float(course.tracks.length[0])
    s = 54.5
    while s <= length + 1.5:
        position[0] = at([s])[0]
        ev = course.step().events
        before, after = math.floor(previous / spacing), math.floor(s / spacing)
        want = after % gates if after > before else -1
        assert int(ev.checkpoint_passed[0]) == want, s
        assert int(ev.wrong_checkpoint[0]) == -1, s
        previous = s
        s += 4.0
    assert int(ev.laps[0]) == 1
    assert int(ev.progress[0]) == gates
    # The events are views of the progress state.
    assert ev.checkpoint_passed.data_ptr() == course.progress.checkpoint_passed.data_ptr()
    assert ev.next_checkpoint.data_ptr() == course.progress.next_gate.data_ptr()


def test_box_contacts_equal_collide_and_the_circle():
    E = 8
    course = circle_course(E)
    s = torch.linspace(3.0, 280.0, E, dtype=torch.float64)
    left = torch.linspace(-0.6, 0.6, E, dtype=torch.float64)   # the outer ones leave the road
    yaw = s / R + math.pi / 2
    position = at(s, left)
    orientation = quat_wxyz(yaw)
    half_extents = torch.tensor([[0.2, 0.1]] * E, device=DEVICE)
    course.bind(position=position, orientation=orientation, half_extents=half_extents)
    out = course.step()
    c = out.contacts
    # The same boxes through Course.collide (the same collide_box) from a cold start.
    direct = course.collide(position, orientation, half_extents, window=0)
    assert torch.equal(c.oob, direct.oob)
    assert torch.equal(c.flags & 5, direct.flags & 5)   # lost (2) depends on the search's hint
    assert torch.equal(c.side, direct.side)
    assert (c.distance - direct.distance).abs().max() < 1e-5
    assert (c.nearest - direct.nearest).abs().max() < 1e-4
    assert (c.normal - direct.normal).abs().max() < 1e-5
    # Closed form: a box along the tangent at lateral offset l: the worst corners at l +- 0.1 and
    # +-0.2 along the tangent, radius sqrt((R - l -+ 0.1)^2 + 0.2^2).
    lat = left.to(DEVICE)
    best = torch.full((E,), 1e30, dtype=torch.float64, device=DEVICE)
    for sy in (1.0, -1.0):
        n = R - torch.sqrt((R - lat - sy * 0.1) ** 2 + 0.2 ** 2)
        best = torch.minimum(best, torch.minimum(HW - n, n + HW))
    assert (c.distance.double() - best).abs().max() < 5e-3, (c.distance, best)
    assert torch.equal(c.oob.bool(), c.distance < 0)
    assert bool(c.oob[0]) and bool(c.oob[-1]) and not bool(c.oob[E // 2])
    # (x, y, z, w) with xyzw=True gives the same contacts.
    first = c.distance.clone()
    course.bind(position=position, orientation=torch.cat([orientation[:, 1:], orientation[:, :1]], 1).contiguous(),
                half_extents=half_extents, xyzw=True)
    assert torch.equal(course.step().contacts.distance, first)
    # An extent set to 0 after bind: that env's contact is invalid (flags 4, NaN), the others are not.
    half_extents[2, 0] = 0.0
    c = course.step().contacts
    assert int(c.flags[2]) & 4 and math.isnan(float(c.distance[2]))
    assert not any(int(c.flags[e]) & 4 for e in range(E) if e != 2)


def test_bind_checks_the_boxes_and_names_them():
    E = 4
    course = circle_course(E)
    position = at([1.0, 2.0, 3.0, 4.0])
    good_q, good_h = quat_wxyz([0.1] * E), torch.tensor([[0.2, 0.1]] * E, device=DEVICE)
    h = good_h.clone()
    h[2, 0] = 0.0
    with pytest.raises(ValueError, match=r"bind: env 2: half_extents\.x"):
        course.bind(position=position, orientation=good_q, half_extents=h)
    h[2, 0] = -1.0
    with pytest.raises(ValueError, match=r"half_extents\.x"):
        course.bind(position=position, orientation=good_q, half_extents=h)
    q = good_q.clone()
    q[1, 0] = float("nan")   # w, in (w, x, y, z)
    with pytest.raises(ValueError, match=r"bind: env 1: orientation\.w"):
        course.bind(position=position, orientation=q, half_extents=good_h)
    q = good_q.clone()
    q[3] = torch.tensor([2.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"env 3: orientation \(its norm\)"):
        course.bind(position=position, orientation=q, half_extents=good_h)
    with pytest.raises(ValueError, match="half_extents is None"):
        course.bind(position=position, orientation=good_q)
    with pytest.raises(ValueError, match="orientation"):
        course.bind(position=position, orientation=good_q[:, :3].contiguous(), half_extents=good_h)
    course.bind(position=position, orientation=good_q, half_extents=good_h)
    assert course.step().contacts is not None
    course.bind(position=position)
    assert course.step().contacts is None


def test_captured_step_with_boxes_replays_like_eager_steps():
    if DEVICE == "cpu":
        pytest.skip("CUDA graphs: a CPU course has none")
    E = 64
    eager, replayed = circle_course(E), circle_course(E)
    s0 = torch.linspace(0.0, 300.0, E, dtype=torch.float64)
    left = 0.4 * torch.sin(torch.arange(E, dtype=torch.float64))
    positions = [at(s0 + 1.3 * k, left) for k in range(12)]
    q = quat_wxyz(s0 / R + math.pi / 2)
    h = torch.tensor([[0.3, 0.15]] * E, device=DEVICE)
    pe, pr = positions[0].clone(), positions[0].clone()
    eager.bind(position=pe, orientation=q, half_extents=h)
    replayed.bind(position=pr, orientation=q.clone(), half_extents=h.clone())
    replayed.step()  # the first call makes the output buffers, outside the capture
    eager.step()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = replayed.step()
    for p in positions[1:]:
        pe.copy_(p)
        pr.copy_(p)
        want = eager.step()
        graph.replay()
        torch.cuda.synchronize()
        for name in ("checkpoint_passed", "wrong_checkpoint", "passed", "next_checkpoint", "progress"):
            assert torch.equal(getattr(out.events, name), getattr(want.events, name)), name
        for name in ("oob", "flags", "side", "distance", "nearest", "normal"):
            assert torch.equal(getattr(out.contacts, name), getattr(want.contacts, name)), name

def test_gate_state_written_out_of_range_is_caught_by_step():
    """A user who writes next_gate or num_gates out of range into the course's tensors: the step
    skips that env's gate tests and reports invalid_state (it read outside the course's memory
    before: a segfault on the CPU); the other env steps as in an untouched twin course."""
    course, twin = circle_course(2), circle_course(2)
    bits, status = progress_flag_bits(), status_bits()
    gates = int(course.tracks.num_gates[0])
    for c in (course, twin):
        c.bind(position=at([0.0, 0.0]))
    def drive(s):
        for c in (course, twin):
            c.position.copy_(at([s, s]))
        twin.step()
        return course.step().events
    drive(1.0)
    drive(11.0)                                      # gate 1 in order: next gate 2
    for field, bad in (("next_gate", 10**6), ("next_gate", -1), ("next_gate", gates),
                       ("num_gates", 10**6), ("num_gates", 0), ("num_gates", course.max_gates + 1)):
        target = course.progress.next_gate if field == "next_gate" else course.tracks.num_gates
        kept = int(target[0])
        target[0] = bad
        s = 19.0 if field == "next_gate" else 29.0   # crosses gate 2 (20.3 m) / gate 3 (30.4 m)
        drive(s)
        ev = drive(s + 2.0)
        flags = int(ev.flags[0])
        assert flags & bits["invalid_state"], (field, bad)
        assert not flags & bits["gate_passed"], (field, bad)
        assert int(ev.checkpoint_passed[0]) == -1 and int(ev.progress[0]) == 1, (field, bad)
        assert int(course.tracks.status[0]) & status["invalid_input"], (field, bad)
        # Env 1 is untouched: every progress tensor equal to the twin's, bit for bit.
        for name in ("next_gate", "laps", "gates_passed", "lap_progress", "lateral", "flags", "hint"):
            assert torch.equal(getattr(course.progress, name)[1], getattr(twin.progress, name)[1]), (field, bad, name)
        assert not int(course.progress.flags[1]) & bits["invalid_state"]
        target[0] = kept
        drive(1.0)                                   # back behind gate 2 (the state as before)
        drive(11.0)

"""Gate courses from Python (issue 15 items 1, 2 and 6): ``presets.gate_course`` and
``Course.gates``. The C++ tests (tests/gates/) check the stages against brute-force references;
here the Python names reach them, and the courses' invariants are checked again on the tensors."""
import pytest

from track_gen.pipeline import presets


def test_gate_course_names_flatten_without_the_extension():
    p = presets.gate_course(8, gates={"min_gates": 4, "max_gates": 5}, gates__min_spacing=6.0)
    assert p.preset == "gate_course"
    assert p.overrides["gates.min_gates"] == 4
    assert p.overrides["gates.max_gates"] == 5
    assert p.overrides["gates.min_spacing"] == 6.0


@pytest.mark.gpu
def test_gate_courses_hold_their_invariants():
    import torch
    from track_gen.course import Course, status_bits
    E, min_spacing = 256, 3.0
    course = Course.gates(presets.gate_course(E, device="cuda:0", seed=2))
    assert course.pipeline == "polar_gate_course_pipeline"   # the preset's anchors are polar
    torch.cuda.synchronize()
    t = course.tracks
    valid = (t.status & status_bits()["valid"]) != 0
    assert valid.float().mean().item() > 0.95
    counts = t.num_gates[valid]
    assert int(counts.min()) >= 6 and int(counts.max()) <= 12
    for e in torch.nonzero(valid).flatten()[:64].tolist():
        g = int(t.num_gates[e])
        centres = t.gate_centre[e, :g].double()
        d = torch.cdist(centres, centres) + torch.eye(g, dtype=torch.float64, device=centres.device) * 1e9
        assert float(d.min()) >= min_spacing * (1 - 1e-3)
        # Every gate lies on the course line: its distance to the nearest sample is at most half the
        # sample spacing (plus rounding).
        samples = t.position[e].double()
        nearest = torch.cdist(centres, samples).min(dim=1).values
        assert float(nearest.max()) <= 0.5 * float(t.length[e]) / course.num_samples + 1e-3


@pytest.mark.gpu
def test_gate_count_range_and_errors():
    import torch
    from track_gen.course import Course, status_bits
    course = Course.gates(presets.gate_course(128, device="cuda:0", seed=3, gates={"min_gates": 4, "max_gates": 5}))
    torch.cuda.synchronize()
    valid = (course.tracks.status & status_bits()["valid"]) != 0
    assert bool(valid.any())
    counts = course.tracks.num_gates[valid]
    assert int(counts.min()) >= 4 and int(counts.max()) <= 5
    with pytest.raises(ValueError, match="Course.gates"):
        Course.track(presets.gate_course(4, device="cuda:0"))
    with pytest.raises(ValueError, match="gate_course"):
        Course.gates(presets.track(4, device="cuda:0"))


def _gate_frame_reference(torch, centre, normal, half_width, half_height, t, d, p):
    """Signed distance [m] of points p [K, 3] to the frames of gates (centre, normal [K, 3],
    half_width [K]) in float64: outside, the least box distance to the four members (|max(|q| - e,
    0)|); inside, minus the least distance to a face a sphere can leave by (the outer faces, the
    front and back, or the opening). Returns (distance [K], member [K] of the nearest box outside)."""
    f = normal / normal.norm(dim=1, keepdim=True)
    left = torch.stack([-f[:, 1], f[:, 0], torch.zeros_like(f[:, 0])], dim=1)
    left = left / left.norm(dim=1, keepdim=True)
    up = torch.cross(f, left, dim=1)
    r = p - centre
    x, y, z = (r * f).sum(1), (r * left).sum(1), (r * up).sum(1)
    w, h = half_width, torch.full_like(half_width, half_height)
    zeros = torch.zeros_like(w)
    cy = torch.stack([w + t, -(w + t), zeros, zeros], 1)
    cz = torch.stack([zeros, zeros, h + t, -(h + t)], 1)
    ey = torch.stack([zeros + t, zeros + t, w, w], 1)
    ez = torch.stack([h + 2 * t, h + 2 * t, zeros + t, zeros + t], 1)
    gx = (x.abs() - d).clamp(min=0)[:, None].expand(-1, 4)
    gy = ((y[:, None] - cy).abs() - ey).clamp(min=0)
    gz = ((z[:, None] - cz).abs() - ez).clamp(min=0)
    box = torch.sqrt(gx ** 2 + gy ** 2 + gz ** 2)
    outside, member = box.min(dim=1)
    oy, oz = y.abs() - w, z.abs() - h
    hole = torch.where((oy > 0) & (oz > 0), torch.sqrt(oy.clamp(min=0) ** 2 + oz.clamp(min=0) ** 2), torch.maximum(oy, oz))
    exits = torch.stack([d - x.abs(), w + 2 * t - y.abs(), h + 2 * t - z.abs(), hole], 1).min(dim=1).values
    return torch.where(outside > 0, outside, -exits), member


@pytest.mark.gpu
def test_gate_frame_collision_against_a_float64_reference():
    import torch
    from track_gen.course import Course, GateFrameHit
    E, radius, t, d = 256, 0.2, 0.05, 0.08
    course = Course.gates(presets.gate_course(E, device="cuda:0", seed=6, gates={"align": 1}))
    torch.cuda.synchronize()
    tr = course.tracks
    half_height = course.params.resolved()["gate_half_height"]
    g = torch.Generator(device="cpu").manual_seed(1)
    nxt = course.next_gate.long()
    G = tr.num_gates.long()
    prev = (nxt + G - 1) % G
    rows = torch.arange(E, device=nxt.device)
    # Spheres around each env's next gate (even envs) or previous gate (odd envs), within the
    # frame's box grown by 0.3 m: hits on posts, bars, inside members, and clear passes.
    target = torch.where(rows % 2 == 0, nxt, prev)
    c, n, hw = tr.gate_centre[rows, target].double(), tr.gate_normal[rows, target].double(), tr.gate_half_width[rows, target].double()
    u = (torch.rand(E, 3, generator=g, dtype=torch.float64) * 2 - 1).to(c.device)
    f = n / n.norm(dim=1, keepdim=True)
    left = torch.stack([-f[:, 1], f[:, 0], torch.zeros_like(f[:, 0])], 1)
    left = left / left.norm(dim=1, keepdim=True)
    up = torch.cross(f, left, dim=1)
    local = u * torch.stack([torch.full_like(hw, d + 0.3), hw + 2 * t + 0.3, torch.full_like(hw, half_height + 2 * t + 0.3)], 1)
    inside = rows % 8 == 3  # some centres inside the left post, nearer its inner face
    local[inside] = torch.stack([torch.zeros_like(hw), hw + 0.7 * t, torch.full_like(hw, 0.1)], 1)[inside]
    pos = (c + f * local[:, :1] + left * local[:, 1:2] + up * local[:, 2:]).float().contiguous()
    pos[5, 1] = float("nan")
    out = course.gate_frame_collision(pos, radius, frame_half_thickness=t, frame_half_depth=d)
    assert isinstance(out, GateFrameHit)
    torch.cuda.synchronize()
    p64 = pos.double()
    best = None
    for gates in (nxt, prev):
        dist, member = _gate_frame_reference(torch, tr.gate_centre[rows, gates].double(), tr.gate_normal[rows, gates].double(),
                                             tr.gate_half_width[rows, gates].double(), half_height, t, d, p64)
        best = (dist, gates) if best is None else (torch.where(dist < best[0], dist, best[0]), torch.where(dist < best[0], gates, best[1]))
    ok = torch.ones(E, dtype=torch.bool, device=pos.device)
    ok[5] = False
    ref, ref_gate = best
    assert torch.allclose(out.distance[ok].double(), ref[ok], atol=1e-4, rtol=0)
    clear = (ref - radius).abs() > 1e-4
    assert torch.equal(out.hit[ok & clear], (ref <= radius)[ok & clear])
    assert torch.equal(out.gate[ok].long(), ref_gate[ok])  # random positions: no near ties between two gates
    depth = torch.where(out.hit, radius - out.distance, torch.zeros_like(out.distance))
    assert torch.allclose(out.depth[ok], depth[ok], atol=1e-6)
    assert torch.allclose(out.normal[ok].norm(dim=1), torch.ones_like(out.depth[ok]), atol=1e-5)
    assert torch.allclose((out.point[ok].double() - p64[ok]).norm(dim=1), ref[ok].abs(), atol=2e-4)
    assert int(out.hit[ok].sum()) > E // 8 and int((~out.hit[ok]).sum()) > E // 8
    assert torch.allclose(out.depth[inside], torch.full_like(out.depth[inside], radius + 0.7 * t), atol=1e-4)
    assert bool((out.member[inside] == 0).all())
    # The invalid env: flag 4, no hit, depth 0, NaN distance, member and gate -1.
    assert int(out.flags[5]) == 4 and not bool(out.hit[5]) and float(out.depth[5]) == 0.0
    assert torch.isnan(out.distance[5]) and int(out.member[5]) == -1 and int(out.gate[5]) == -1
    # Every gate: never farther than the adjacent ones.
    kept = out.distance.clone()
    every = course.gate_frame_collision(pos, radius, frame_half_thickness=t, frame_half_depth=d, scope="all")
    torch.cuda.synchronize()
    assert bool((every.distance[ok] <= kept[ok] + 1e-6).all())
    with pytest.raises(ValueError, match="gate_frame.radius"):
        course.gate_frame_collision(pos, 0.0)
    with pytest.raises(ValueError, match="gate_frame.half_thickness"):
        course.gate_frame_collision(pos, radius, frame_half_thickness=0.0)
    with pytest.raises(ValueError, match="scope"):
        course.gate_frame_collision(pos, radius, scope="near")


@pytest.mark.cpu
def test_polar_gate_courses_take_their_own_pipeline_and_the_family_pipelines_courses():
    """The gate_course preset (polar anchors) runs polar_gate_course_pipeline; a weight on polar
    alone keeps gate_course_pipeline, whose courses must be the same, bit for bit, on the CPU."""
    import torch
    from track_gen.course import Course
    own = Course.gates(presets.gate_course(48, device="cpu", seed=7))
    family = Course.gates(presets.gate_course(48, device="cpu", seed=7, generator_weights={"polar": 1.0}))
    assert own.pipeline == "polar_gate_course_pipeline" and family.pipeline == "gate_course_pipeline"
    for _ in range(2):  # the first episode and the next
        assert torch.equal(own.tracks.status, family.tracks.status)
        assert torch.equal(own.tracks.num_gates, family.tracks.num_gates)
        assert torch.equal(own.tracks.gate_centre, family.tracks.gate_centre)
        assert torch.equal(own.tracks.position, family.tracks.position)
        own.regenerate(advance=True)
        family.regenerate(advance=True)

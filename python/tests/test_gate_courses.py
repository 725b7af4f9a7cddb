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
    assert course.pipeline == "gate_course_pipeline"
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

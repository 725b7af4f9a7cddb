"""Courses on the CPU (``device="cpu"``: the C++ host backend behind the same Python API): what
differs from a CUDA course (no streams, CPU tensors), what must not (masked regeneration leaves
other envs bit for bit, the same seed gives the same tracks, tensors keep the memory alive), and,
on a GPU machine, the same tracks as the CUDA backend."""
import gc
import math

import numpy as np
import pytest
import torch

from track_gen.course import Course, status_bits
from track_gen.pipeline import presets


def cpu_course(num_envs=16, seed=3, **overrides):
    return Course.track(presets.track(num_envs, device="cpu", seed=seed, **overrides), checkpoint_spacing=0.6)


@pytest.mark.cpu
def test_a_cpu_course_has_cpu_tensors_and_valid_tracks():
    course = cpu_course()
    assert course.device == "cpu" and course.pipeline == "track_pipeline"
    t = course.tracks
    assert t.position.device.type == "cpu" and t.position.shape == (16, course.num_samples, 3)
    valid = status_bits()["valid"]
    assert ((t.status & valid) != 0).all()
    # Independent check of each track: the length is the closed polyline's (the samples are
    # equally spaced in arc length along the spline, so the chords sum to it within 0.1 %).
    p = t.position.double()
    chords = (torch.roll(p, -1, dims=1) - p).norm(dim=-1).sum(dim=1)
    assert ((chords - t.length.double()).abs() / t.length.double()).max() < 1e-3
    assert ((t.length >= 10.0) & (t.length <= 60.0)).all()  # the track preset's validate range


@pytest.mark.cpu
def test_masked_regeneration_and_determinism():
    a, b = cpu_course(seed=11), cpu_course(seed=11)
    assert torch.equal(a.tracks.position, b.tracks.position)  # the same seed, the same tracks
    before = a.tracks.position.clone()
    mask = torch.zeros(16, dtype=torch.bool)
    mask[[2, 9]] = True
    a.regenerate(mask=mask, advance=True)
    keep = ~mask
    assert torch.equal(a.tracks.position[keep], before[keep])                 # others bit for bit
    assert not torch.equal(a.tracks.position[2], before[2])                   # a new episode's track
    assert a.tracks.episode[mask].tolist() == [1, 1] and (a.tracks.episode[keep] == 0).all()
    again = a.tracks.position.clone()
    a.regenerate(mask=mask, advance=False)                                    # the same episode again
    assert torch.equal(a.tracks.position, again)


@pytest.mark.cpu
def test_cpu_courses_take_no_stream_and_name_the_device():
    course = cpu_course(4)
    course.bind(position=torch.zeros(4, 3))
    with pytest.raises(ValueError, match="takes no stream"):
        course.step(stream=1234)
    with pytest.raises(ValueError, match="position.*on cpu"):
        course.localize(position=torch.zeros(4, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="num_samples"):
        Course.track(presets.track(4, device="cpu", num_samples=3))


@pytest.mark.cpu
def test_a_cuda_course_from_a_cpu_only_build_names_every_reason_for_that_build():
    """Found by a fresh-user trial: torch from PyPI (CUDA 13.2) and nvcc installed, no GPU, so
    pip install ./python built the CPU-only extension; device="cuda:0" then blamed a torch
    without CUDA or a missing nvcc, neither of which was the case."""
    import track_gen
    if hasattr(track_gen._extension(), "Course"):
        pytest.skip("this extension has the CUDA backend")
    with pytest.raises(RuntimeError, match=r"built without CUDA.*no GPU was visible.*CUDAARCHS"):
        Course.track(presets.track(4, device="cuda:0"))


@pytest.fixture
def float64_default():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.mark.cpu
def test_outputs_are_float32_under_a_float64_default_dtype(float64_default):
    """Found by a fresh-user trial: with torch.set_default_dtype(torch.float64) (common in
    scientific code) the output buffers the course makes on first use were float64, and its own
    checks refused them: CarRacingVecEnv.reset failed in course.spawn ("yaw must be a Float
    tensor ... got Double"). Each query that makes buffers, called once: float32 out, no error."""
    E = 4
    course = cpu_course(E)
    pos = torch.zeros(E, 3, dtype=torch.float32)
    course.bind(position=pos, orientation=torch.tensor([[1.0, 0, 0, 0]] * E, dtype=torch.float32),
                half_extents=torch.full((E, 2), 0.1, dtype=torch.float32))
    course.step()
    course.attach_heightfield(resolution=8)
    yaw = torch.zeros(E, dtype=torch.float32)
    s = course.localize(window=0).s
    out = {"localize": s,
           "track_ahead": course.track_ahead(3, 0.4, yaw, s=s),
           "progress_delta": course.progress_delta(s, s),
           "spawn": course.spawn(None, s).position,
           "speed_profile": course.speed_profile(4.0, 4.0, 6.0, 3.0),
           "cones": course.cones("left", 1.0, 64).position,
           "sample_height": course.sample_height(pos[:, 0].clone(), pos[:, 1].clone())}
    quat = torch.tensor([[1.0, 0, 0, 0]] * E, dtype=torch.float32)
    half = torch.full((E, 2), 0.1, dtype=torch.float32)
    box = course.collide(pos, quat, half)
    disc = course.collide_discs(pos, quat, half, torch.zeros(E, 2, 3, dtype=torch.float32), 0.1)
    gates = Course.gates(presets.gate_course(E, device="cpu", seed=5))
    frame = gates.gate_frame_collision(gates.tracks.gate_centre[:, 0].clone(), 0.15)
    out.update({"collide.distance": box.distance, "collide.normal": box.normal, "collide_discs.depth": disc.depth,
                "collide_discs.normal": disc.normal, "gate_frame_collision.depth": frame.depth,
                "gate_frame_collision.normal": frame.normal})
    for name, t in out.items():
        assert t.dtype == torch.float32, name
    assert torch.equal(out["progress_delta"], torch.zeros(E, dtype=torch.float32))
    # User control points given as float64 lists: the z column added in their dtype, then float32.
    ring = [[10 * math.cos(k * math.pi / 10), 10 * math.sin(k * math.pi / 10)] for k in range(20)]
    user = Course.from_tracks(presets.track(2, device="cpu"), [ring, ring], kind="control_points")
    assert user.tracks.position.dtype == torch.float32


@pytest.mark.cpu
def test_tensors_outlive_the_course():
    course = cpu_course(4)
    lengths = course.tracks.length
    want = lengths.clone()
    del course
    gc.collect()
    assert torch.equal(lengths, want)  # anchored ownership: the tensor holds the memory


@pytest.mark.cpu
def test_gate_courses_on_the_cpu():
    course = Course.gates(presets.gate_course(8, device="cpu", seed=5))
    n = course.tracks.num_gates
    assert ((n >= 6) & (n <= 12)).all()  # the preset's gates.min_gates / max_gates
    centres = course.tracks.gate_centre
    for e in range(8):
        g = centres[e, : int(n[e])].double()
        d = (g.unsqueeze(0) - g.unsqueeze(1)).norm(dim=-1) + torch.eye(int(n[e]), dtype=torch.float64) * 1e9
        assert d.min() >= 3.0 - 1e-3  # gates.min_spacing


@pytest.mark.gpu
def test_cpu_and_cuda_courses_build_the_same_tracks():
    cpu = cpu_course(64, seed=21)
    gpu = Course.track(presets.track(64, device="cuda:0", seed=21), checkpoint_spacing=0.6)
    torch.cuda.synchronize()
    assert torch.equal(cpu.tracks.status, gpu.tracks.status.cpu())
    assert torch.equal(cpu.tracks.num_gates, gpu.tracks.num_gates.cpu())
    # Float rounding differs between the backends' compilers (FMA contraction, libm): metres.
    assert (cpu.tracks.position - gpu.tracks.position.cpu()).abs().max() < 1e-3


@pytest.mark.cpu
def test_status_bits_name_the_attempts_field():
    """Bits 8-15 of tracks.status count the generation attempts (status.hpp attempts_mask): an
    env whose track took a attempts with validate.max_attempts = 16 falls back to the ellipse
    exactly when a > m with max_attempts = m (each attempt draws its own random stream, so the
    first attempts are the same), and records min(a, m) attempts."""
    bits = status_bits()
    assert bits["attempts_mask"] == 0xff00 and bits["valid"] == 1           # the old keys still there
    assert all(v & bits["attempts_mask"] == 0 for k, v in bits.items() if k != "attempts_mask")

    def attempts_and_fallback(max_attempts):
        st = cpu_course(64, seed=3, validate={"max_attempts": max_attempts}).tracks.status
        return (st & bits["attempts_mask"]) >> 8, (st & bits["fallback"]) != 0

    a, fell = attempts_and_fallback(16)
    assert not fell.any() and a.min() == 1 and a.max() > 1                  # some tracks took retries
    for m in (1, 2):
        a_m, fell_m = attempts_and_fallback(m)
        assert torch.equal(a_m, a.clamp(max=m)), m
        assert torch.equal(fell_m, a > m), m
    circle = [[10.0 * math.cos(2 * math.pi * i / 32), 10.0 * math.sin(2 * math.pi * i / 32)] for i in range(32)]
    user = Course.from_tracks(presets.track(2, device="cpu"), [circle]).tracks.status
    assert ((user & bits["attempts_mask"]) >> 8).tolist() == [1, 1]          # a user track: one attempt


@pytest.mark.cpu
def test_track_variants_give_each_env_its_own_parameters():
    """Per-env parameter sets: envs of variant k are bit for bit the envs of a batch built with
    variant k's parameters alone (C++ track_variants), and the variants really differ."""
    E = 12
    wide = {"polar": {"radius_min": 8.0, "radius_max": 11.0}, "validate": {"length_max": 90.0}}
    env_variant = [0, 1, 1, 0, 2, 1, 0, 2, 2, 1, 0, 1]
    variants = [{}, wide, {"half_width": 0.5}]
    params = presets.track(E, device="cpu", seed=4)
    mixed = Course.track(params, variants=variants, env_variant=env_variant)
    for k, v in enumerate(variants):
        alone = Course.track(params.replace(**v))
        envs = [e for e in range(E) if env_variant[e] == k]
        for name in ("position", "half_widths", "length", "status", "num_gates"):
            assert torch.equal(getattr(mixed.tracks, name)[envs], getattr(alone.tracks, name)[envs]), (k, name)
    wide_envs = torch.tensor(env_variant) == 1
    assert mixed.tracks.length[wide_envs].min() > mixed.tracks.length[~wide_envs].max()  # radii 8-11 m vs 4-7 m
    assert (mixed.tracks.half_widths[torch.tensor(env_variant) == 2] == 0.5).all()
    with pytest.raises(ValueError, match=r"env_variant\[4\] = 3 is not a variant index in \[0, 2\]"):
        Course.track(params, variants=variants, env_variant=[0, 1, 1, 0, 3] + [0] * 7)
    # A float index is refused, not truncated (1.5 was read as 1), 1.0 too (a float array's
    # values are not indices, as in NumPy); NumPy integer arrays are indices.
    with pytest.raises(TypeError, match=r"env_variant\[5\] must be an int.*float 1.5.*indices in \[0, 2\]"):
        Course.track(params, variants=variants, env_variant=env_variant[:5] + [1.5] + env_variant[6:])
    with pytest.raises(TypeError, match=r"env_variant\[0\] must be an int"):
        Course.track(params, variants=variants, env_variant=np.array(env_variant, dtype=np.float64))
    assert torch.equal(Course.track(params, variants=variants, env_variant=np.array(env_variant)).tracks.position,
                       mixed.tracks.position)
    with pytest.raises(ValueError, match="batch-wide"):
        Course.track(params, variants=[{"seed": 1}], env_variant=[0] * E)
    with pytest.raises(ValueError, match="give both or neither"):
        Course.track(params, variants=variants)
    with pytest.raises(ValueError, match="radius_min"):  # a variant's range error names the parameter
        Course.track(params, variants=[{"polar": {"radius_min": -1.0}}], env_variant=[0] * E)


@pytest.mark.cpu
def test_rebinding_memory_behind_the_course_s_back_is_refused():
    """The course reads the memory given to bind at every step: a bound tensor moved to new memory
    (t.data = ..., set_, resize_) must raise, not make the step read freed memory."""
    course = cpu_course(8)
    position = torch.zeros(8, 3)
    course.bind(position=position)
    course.step()
    position.copy_(torch.ones(8, 3))  # in place: fine
    course.step()
    position.data = torch.zeros(8, 3)
    with pytest.raises(ValueError, match="new memory since bind"):
        course.step()
    course.bind(position=position)    # binding again is the cure
    course.step()


@pytest.mark.cpu
def test_parameter_types_are_named():
    with pytest.raises(TypeError, match="'num_samples' must be an int, got 128.0"):
        Course.track(presets.track(8, device="cpu", num_samples=128.0))
    with pytest.raises(ValueError, match="'polar.control_points' = 4294967296 does not fit a 32-bit int"):
        Course.track(presets.track(8, device="cpu", polar={"control_points": 2**32}))
    with pytest.raises(ValueError, match="num_envs = 2147483648 does not fit a 32-bit int"):
        presets.track(2**31, device="cpu")


def _polygon_area(points):
    """Signed xy area of closed polygons [E, N, 3] (shoelace), float64."""
    x, y = points[..., 0].double(), points[..., 1].double()
    return 0.5 * (x * torch.roll(y, -1, dims=1) - torch.roll(x, -1, dims=1) * y).sum(dim=1)


@pytest.mark.cpu
def test_track_generator_with_the_seed_system_s_names():
    from track_gen.generator import TrackGenerator

    gen = TrackGenerator(presets.track(16, device="cpu", seed=8))
    first = gen.generate()
    kept = {k: v.clone() for k, v in first._asdict().items()}
    again = gen.generate()                                   # the same episode, rebuilt bit for bit
    assert all(torch.equal(getattr(again, k), v) for k, v in kept.items())
    area = _polygon_area(again.center)
    assert torch.equal(again.winding, torch.sign(area).float())
    # The inner edge encloses less area than the outer one, whichever way the loop turns.
    assert (_polygon_area(again.inner).abs() < _polygon_area(again.outer).abs()).all()
    assert again.valid.all() and (again.count == gen.course.num_samples).all()
    new = gen.generate(advance=True)
    assert not torch.equal(new.center, kept["center"]) and (gen.course.tracks.episode == 1).all()
    with pytest.raises(ValueError, match="fixed at 16 envs"):
        gen.generate(num_envs=8)


@pytest.mark.cpu
def test_an_out_of_range_seed_name_is_named_as_given():
    """The seed system's z_* names map to the elevation fields; an error names the field and the
    name the caller wrote (both bounds of a range: z_max below z_min)."""
    with pytest.raises(ValueError, match=r"track_params\.elevation\.z_max \[m\] = 1 is out of range.*"
                                         r"given as z_max is track_params\.elevation\.z_max, "
                                         r"z_min is track_params\.elevation\.z_min"):
        Course.track(presets.track(4, device="cpu", z_profile="uniform", z_min=3.0, z_max=1.0))
    # Given by the library's own name, the message stays the library's.
    with pytest.raises(ValueError) as caught:
        Course.track(presets.track(4, device="cpu", elevation={"profile": "uniform", "z_min": 3.0, "z_max": 1.0}))
    assert "given as" not in str(caught.value)
    assert presets.track(4, z_max=2.0) == presets.track(4, elevation={"z_max": 2.0})

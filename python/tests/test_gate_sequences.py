"""Gate sequences from Python (issue 15 item 1; the seed system's ``GateGenerator`` and
``GateSequence``): ``track_gen.GateGenerator(params).generate()`` over C++ ``gate_sequences``.
The C++ tests (tests/gates/gate_sequence_tests.hpp) check the builds against double-precision
references; here every tensor the Python layer hands out is checked again, in NumPy float64,
against what its documentation says it is: the count band, pairwise spacing (brute force), unit
forwards, the quaternion that turns the gate axes into the world's, the posts, NaN past each
count; then determinism, masks, episodes and the errors. The ``device`` fixture (conftest.py)
runs the shared tests on the CPU (marked cpu) and on CUDA (marked gpu)."""
import gc

import numpy as np
import pytest
import torch

import track_gen
from track_gen.generator import GateGenerator, GateSequence
from track_gen.pipeline import presets

# Parameter sets: the preset (polar, random-walk altitude), angle-sorted gates following the 3D
# tangent 6 m apart, bezier and hull corners at gate scale with other profiles, a family mix.
CASES = {
    "preset": {},
    "sorted_full_tangent": {"gates": {"ordering": 1, "align": 1, "min_spacing": 6.0}},
    "bezier_harmonics": {"generator": "bezier", "bezier": {"extent": 25.0}, "elevation": {"profile": "harmonics"}},
    "hull_uniform": {"generator": "hull", "hull": {"extent": 25.0}, "gates": {"max_gates": 24},
                     "elevation": {"profile": "uniform", "max_grade": 1.0}},
    "mix_flat": {"generator_weights": {"polar": 1.0, "bezier": 1.0}, "bezier": {"extent": 25.0},
                 "elevation": {"profile": "flat"}, "gates": {"min_gates": 4, "max_gates": 8}, "half_width": 0.5},
}


def _numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float64)


def _level_left(f: np.ndarray) -> np.ndarray:
    """The gate's left axis, float64: the unit horizontal vector 90 degrees counter-clockwise of
    forward's plan-view direction (gate_axes, track_ref.hpp)."""
    left = np.stack([-f[..., 1], f[..., 0], np.zeros_like(f[..., 0])], axis=-1)
    return left / np.linalg.norm(left, axis=-1, keepdims=True)


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """v rotated by unit quaternions q (x, y, z, w), float64: v + 2 w (u x v) + 2 u x (u x v)."""
    u, w = q[..., :3], q[..., 3:]
    uv = np.cross(u, v)
    return v + 2.0 * w * uv + 2.0 * np.cross(u, uv)


def _check_sequences(seq: GateSequence, gen: GateGenerator, resolved: dict) -> int:
    """Asserts the documented invariants of every env of `seq`; returns the valid envs' count."""
    E, G = gen.num_envs, gen.max_gates
    assert G == resolved["gates.max_gates"]
    for name in ("position", "forward", "left", "right"):
        t = getattr(seq, name)
        assert t.shape == (E, G, 3) and t.dtype == torch.float32 and str(t.device) == gen.device, name
    assert seq.orientation.shape == (E, G, 4) and seq.orientation.dtype == torch.float32
    for name in ("valid", "count", "status", "episode"):
        t = getattr(seq, name)
        assert t.shape == (E,) and t.dtype == torch.int32 and str(t.device) == gen.device, name
    assert seq.half_size.shape == (E,) and bool((seq.half_size == resolved["half_width"]).all())

    count = seq.count.cpu().numpy()
    status = seq.status.cpu().numpy().view(np.uint32)
    valid = seq.valid.cpu().numpy()
    bits = track_gen.course.status_bits()
    assert np.array_equal(valid, ((status & bits["valid"]) != 0).astype(np.int32))
    attempts = (status & bits["attempts_mask"]) >> 8
    assert attempts.min() >= 1 and attempts.max() <= resolved["validate.max_attempts"]
    assert count.min() >= 0 and count.max() <= G

    pos, fwd, quat = _numpy(seq.position), _numpy(seq.forward), _numpy(seq.orientation)
    left, right = _numpy(seq.left), _numpy(seq.right)
    slot = np.arange(G)[None, :]
    used = slot < count[:, None]
    for name, a in (("position", pos), ("forward", fwd), ("orientation", quat), ("left", left), ("right", right)):
        assert np.isnan(a[~used]).all(), f"{name}: a slot past the count is not NaN"

    in_valid = used & (valid[:, None] == 1)   # the gates of valid envs: finite
    assert np.isfinite(pos[in_valid]).all() and np.isfinite(fwd[in_valid]).all() and np.isfinite(quat[in_valid]).all()
    ok = used & np.isfinite(fwd).all(axis=-1) & np.isfinite(pos).all(axis=-1)   # every finite gate's frame
    assert ok.any()
    f, c, q = fwd[ok], pos[ok], quat[ok]
    # Forward: unit; level for yaw-only gates.
    assert np.abs(np.linalg.norm(f, axis=-1) - 1.0).max() < 1e-5
    if resolved["gates.align"] == 0:
        assert np.abs(f[:, 2]).max() == 0.0
    # Orientation: a unit quaternion whose rotation takes the gate axes (x forward, y left, z up)
    # to forward, the level left axis and forward x left.
    assert np.abs(np.linalg.norm(q, axis=-1) - 1.0).max() < 1e-5
    ax = _level_left(f)
    up = np.cross(f, ax)
    for local, world in (((1.0, 0.0, 0.0), f), ((0.0, 1.0, 0.0), ax), ((0.0, 0.0, 1.0), up)):
        rotated = _rotate(q, np.broadcast_to(np.array(local), f.shape))
        assert np.abs(rotated - world).max() < 2e-5, local
    # Posts: centre +- half_width along the level left axis [m].
    hw = resolved["half_width"]
    assert np.abs(left[ok] - (c + hw * ax)).max() < 1e-4
    assert np.abs(right[ok] - (c - hw * ax)).max() < 1e-4

    for e in np.nonzero(valid)[0]:
        n = int(count[e])
        assert resolved["gates.min_gates"] <= n <= resolved["gates.max_gates"], (e, n)
        p = pos[e, :n]
        d = np.linalg.norm(p[:, None, :] - p[None, :, :], axis=-1) + np.eye(n) * 1e9
        # The C++ test compares squared float32 distances: allow their rounding.
        assert d.min() >= resolved["gates.min_spacing"] * (1 - 1e-5), (e, d.min())
        if resolved["elevation.profile"] != "flat":
            z = p[:, 2]
            assert z.min() >= resolved["elevation.z_min"] - 1e-4 and z.max() <= resolved["elevation.z_max"] + 1e-4, e
    return int(valid.sum())


def _sync(device):
    if device != "cpu":
        torch.cuda.synchronize()


@pytest.mark.parametrize("case", sorted(CASES))
def test_gate_sequences_hold_their_invariants(device, case):
    params = presets.gate_course(256, device=device, seed=11, **CASES[case])
    gen = GateGenerator(params)
    assert gen.device == device and gen.num_envs == 256
    resolved = params.resolved()
    assert gen.half_width == resolved["half_width"] and gen.half_height == resolved["gate_half_height"]
    seq = gen.generate()
    _sync(device)
    assert isinstance(seq, GateSequence)
    assert _check_sequences(seq, gen, resolved) >= 0.9 * gen.num_envs
    seq = gen.generate(advance=True)   # the next episode holds them too
    _sync(device)
    assert bool((seq.episode == 1).all())
    _check_sequences(seq, gen, resolved)


def test_failed_sequences_keep_their_last_attempt_with_the_failure_bits(device):
    """Uniform knot altitudes in [1, 4] m against a grade limit of 1 %: every env fails the grade
    test on each of its attempts and keeps the last one, counted, NaN past its count, without
    the valid bit; each really has a pair of consecutive gates (the closing pair included) that
    climbs more than the limit."""
    params = presets.gate_course(32, device=device, seed=4, elevation={"profile": "uniform", "max_grade": 0.01},
                                 validate={"max_attempts": 3})
    gen = GateGenerator(params)
    seq = gen.generate()
    _sync(device)
    bits = track_gen.course.status_bits()
    status = seq.status.cpu().numpy().view(np.uint32)
    assert not seq.valid.any()
    assert ((status & bits["fail_grade"]) != 0).all()
    assert (((status & bits["attempts_mask"]) >> 8) == 3).all()
    _check_sequences(seq, gen, params.resolved())
    pos, count = _numpy(seq.position), seq.count.cpu().numpy()
    for e in range(gen.num_envs):
        p = pos[e, :count[e]]
        d = np.roll(p, -1, axis=0) - p
        assert (np.abs(d[:, 2]) > 0.01 * np.hypot(d[:, 0], d[:, 1])).any(), e


def _bits(seq: GateSequence) -> dict:
    """Every per-gate and per-env tensor of `seq` as CPU int32 bit patterns (NaN == NaN)."""
    return {name: getattr(seq, name).detach().cpu().contiguous().view(torch.int32).clone()
            for name in ("position", "forward", "orientation", "left", "right", "count", "status", "episode")}


def _rows_equal(a: dict, b: dict) -> np.ndarray:
    """[E] bool: env e's rows equal bit for bit in every tensor."""
    eq = None
    for name in a:
        rows = (a[name] == b[name]).reshape(a[name].shape[0], -1).all(dim=1).numpy()
        eq = rows if eq is None else eq & rows
    return eq


def test_generation_is_deterministic_and_masks_select_envs(device):
    E = 64
    params = presets.gate_course(E, device=device, seed=21)
    gen, twin = GateGenerator(params), GateGenerator(params)
    first = _bits(gen.generate())
    _sync(device)
    assert all(torch.equal(first[k], v) for k, v in _bits(twin.generate()).items())   # same seed, same gates
    again = _bits(gen.generate())   # the same episode built again
    _sync(device)
    assert all(torch.equal(first[k], v) for k, v in again.items())
    other = GateGenerator(presets.gate_course(E, device=device, seed=22))
    assert not torch.equal(_bits(other.generate())["position"], first["position"])

    # A masked advance: exactly the selected envs move to episode 1 and change; each gets the
    # sequence a full advance gives it (an env's gates depend on its own id and episode only).
    twin.generate(advance=True)
    full = _bits(twin.generate())
    selected = np.zeros(E, dtype=bool)
    selected[[1, 5, 6, 40, 63]] = True
    for dtype in (torch.bool, torch.uint8, torch.int32):
        gen = GateGenerator(params)
        mask = torch.from_numpy(selected).to(dtype=dtype, device=device)
        after = _bits(gen.generate(mask=mask, advance=True))
        _sync(device)
        unchanged = _rows_equal(after, first)
        assert np.array_equal(unchanged, ~selected), dtype
        assert np.array_equal(after["episode"].numpy(), selected.astype(np.int32))
        assert _rows_equal(after, full)[selected].all()
        # Without advance a mask builds the same episode again: nothing changes.
        same = _bits(gen.generate(mask=mask))
        _sync(device)
        assert all(torch.equal(after[k], v) for k, v in same.items())


def test_outputs_are_views_that_outlive_the_generator(device):
    gen = GateGenerator(presets.gate_course(8, device=device, seed=3))
    seq = gen.generate()
    again = gen.generate(advance=True)
    # The same tensors, rewritten in place (valid is new each call).
    for name in ("position", "forward", "orientation", "left", "right", "count", "status", "episode"):
        assert getattr(seq, name).data_ptr() == getattr(again, name).data_ptr(), name
    assert seq.valid.data_ptr() != again.valid.data_ptr()
    kept = seq.position.clone()
    del gen, again
    gc.collect()
    assert torch.equal(seq.position.view(torch.int32), kept.view(torch.int32))  # memory still alive
    assert bool((seq.episode == 1).all())


def test_errors_name_what_is_wrong(device):
    with pytest.raises(ValueError, match="'voronoi'"):
        GateGenerator(presets.gate_course(4, device=device, generator="voronoi"))
    with pytest.raises(ValueError, match="'checkpoint'"):
        GateGenerator(presets.gate_course(4, device=device, generator_weights={"polar": 1.0, "checkpoint": 1.0}))
    with pytest.raises(ValueError, match="polar.control_points"):
        GateGenerator(presets.gate_course(4, device=device, polar={"control_points": 300}))
    with pytest.raises(ValueError, match="gates.min_gates"):
        GateGenerator(presets.gate_course(4, device=device, gates={"min_gates": 1}))
    with pytest.raises(ValueError, match="given as z_max"):
        GateGenerator(presets.gate_course(4, device=device, z_max=0.5))
    with pytest.raises(TypeError, match="TrackParams"):
        GateGenerator({"num_envs": 4})
    gen = GateGenerator(presets.gate_course(4, device=device))
    with pytest.raises(ValueError, match="mask must be an int32, bool or uint8 tensor of shape \\[4\\]"):
        gen.generate(mask=torch.ones(5, dtype=torch.bool, device=device))
    with pytest.raises(ValueError, match="mask"):
        gen.generate(mask=torch.ones(4, dtype=torch.float32, device=device))
    with pytest.raises(ValueError, match="fixed at 4 envs"):
        gen.generate(num_envs=8)
    assert gen.generate(num_envs=4).count.shape == (4,)
    with pytest.raises(TypeError, match="advance must be a bool"):
        gen.generate(advance=1)


@pytest.mark.cpu
def test_cpu_generators_take_no_stream_and_cpu_masks_only():
    gen = GateGenerator(presets.gate_course(4, device="cpu"))
    with pytest.raises(ValueError, match="takes no stream"):
        gen.generate(advance=True, stream=1234)
    assert repr(gen) == "GateGenerator(preset='gate_course', num_envs=4, device='cpu', max_gates=12)"
    assert track_gen.GateGenerator is GateGenerator and track_gen.GateSequence is GateSequence
    # A NumPy mask is read through DLPack, without a copy.
    seq = gen.generate(mask=np.array([0, 1, 0, 0], dtype=np.int32), advance=True)
    assert seq.episode.tolist() == [0, 1, 0, 0]


@pytest.mark.gpu
def test_cuda_and_cpu_build_the_same_sequences():
    params = presets.gate_course(256, device="cpu", seed=31, elevation={"profile": "harmonics"})
    cpu = GateGenerator(params).generate()
    gpu = GateGenerator(presets.gate_course(256, device="cuda:0", seed=31, elevation={"profile": "harmonics"}))
    seq = gpu.generate()
    torch.cuda.synchronize()
    assert torch.equal(seq.count.cpu(), cpu.count) and torch.equal(seq.status.cpu(), cpu.status)
    # Float rounding differs between the backends' compilers (FMA contraction, libm): metres.
    for name in ("position", "forward", "orientation", "left", "right"):
        a, b = getattr(seq, name).cpu(), getattr(cpu, name)
        assert torch.equal(a.isnan(), b.isnan()), name
        assert (a - b).nan_to_num().abs().max() < 1e-3, name


@pytest.mark.gpu
def test_cuda_generation_runs_on_the_given_stream_and_in_a_graph():
    E = 128
    params = presets.gate_course(E, device="cuda:0", seed=41)
    gen, ref = GateGenerator(params), GateGenerator(params)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    seq = gen.generate(advance=True, stream=side)
    side.synchronize()
    expected = _bits(ref.generate(advance=True))
    assert all(torch.equal(expected[k], v) for k, v in _bits(seq).items())
    # Captured once, replayed twice: two more episodes for the masked envs.
    mask = torch.zeros(E, dtype=torch.bool, device="cuda:0")
    mask[::3] = True
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gen.generate(mask=mask, advance=True)   # warm-up outside the capture (+1 episode)
        with torch.cuda.graph(graph, stream=s):
            gen.generate(mask=mask, advance=True)
    torch.cuda.current_stream().wait_stream(s)
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    want = torch.where(mask, 4, 1).to(torch.int32)
    assert torch.equal(seq.episode, want)
    for _ in range(3):
        ref.generate(mask=mask, advance=True)
    torch.cuda.synchronize()
    assert all(torch.equal(v, _bits(seq)[k]) for k, v in _bits(ref.generate()).items())

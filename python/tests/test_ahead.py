"""Tracks built ahead (``Course.enable_ahead``, C++ ``course::enable_ahead``): a course whose
masked regenerates copy each env's prebuilt next-episode track holds the same tracks and progress,
bit for bit, as a twin that builds them, after every call of a fixed sequence (an env regenerated
twice in a row, an all-false mask, ``advance=False``, a whole-batch regenerate), for the track
pipeline and for the family, one-family (bezier) and gate-course pipelines; the statistics count serves, misses and refills; the errors
(``refill_at`` out of range, a second call, a capturing stream) come through as Python
exceptions. The CPU cases run everywhere (marked cpu); the CUDA ones, eager and in a replayed
graph, are marked gpu."""
import pytest
import torch

import track_gen.course
from track_gen.course import Course
from track_gen.exec.errors import CaptureError
from track_gen.pipeline import presets

E = 8


def bits(t: torch.Tensor) -> torch.Tensor:
    """`t`'s bytes (floats compared bit for bit, NaN included)."""
    return t.contiguous().view(torch.uint8)


def assert_same(a: Course, b: Course, what: str) -> None:
    """Every progress and track tensor of two courses, bit for bit; of the per-gate fields, the
    gates in use (slots >= num_gates[e] are unused and hold leftovers of earlier episodes or of
    rejected attempts, after a build as after a copy; the C++ tests' same_env leaves them out)."""
    for name in track_gen.course.Progress._fields:
        x, y = getattr(a.progress, name), getattr(b.progress, name)
        assert torch.equal(bits(x), bits(y)), f"{what}: progress.{name} differs"
    gate_fields = [name for name in track_gen.course.Tracks._fields if name.startswith("gate_")]
    assert len(gate_fields) == 4, gate_fields
    for name in track_gen.course.Tracks._fields:
        if name not in gate_fields:
            x, y = getattr(a.tracks, name), getattr(b.tracks, name)
            assert torch.equal(bits(x), bits(y)), f"{what}: tracks.{name} differs"
    n = a.tracks.num_gates   # equal in both (above)
    in_use = torch.arange(a.max_gates, device=n.device).unsqueeze(0) < n.unsqueeze(1)
    for name in gate_fields:
        x, y = getattr(a.tracks, name), getattr(b.tracks, name)
        assert x.shape[:2] == in_use.shape, (name, x.shape)
        assert torch.equal(bits(x[in_use]), bits(y[in_use])), f"{what}: tracks.{name} differs"


def move(course: Course, k: int) -> None:
    """Puts each env's agent on sample (3 e + 5 k) mod N of its current track (in place)."""
    n = course.num_samples
    rows = torch.arange(course.num_envs, device=course.device)
    course.position.copy_(course.tracks.position[rows, (3 * rows + 5 * k) % n])


def mask_of(envs, device, dtype=torch.bool):
    m = torch.zeros(E, dtype=dtype, device=device)
    m[list(envs)] = 1
    return m


# (envs regenerated or None for every env, advance, mask dtype): env 0 twice in a row (a miss,
# which makes the call refill), an all-false mask, advance=False on an env whose slot holds its
# next episode (a miss), a whole-batch regenerate (fills every slot again), int32 and uint8 masks.
SEQUENCE = [
    ([0, 1], True, torch.bool),
    ([0], True, torch.bool),
    ([0], True, torch.int32),
    ([], True, torch.bool),
    ([2, 3, 4], True, torch.uint8),
    ([5], False, torch.bool),
    ([5, 6, 7], True, torch.int32),
    ([1, 6], True, torch.bool),
    (None, True, None),
    ([0, 7], True, torch.bool),
    ([], False, torch.uint8),
    ([3], False, torch.bool),
    ([2, 3, 4, 5], True, torch.bool),
]


def courses(make):
    """Two courses from `make()`, positions bound, the second with tracks built ahead
    (refill_at=3)."""
    plain, ahead = make(), make()
    for c in (plain, ahead):
        c.bind(position=torch.zeros(c.num_envs, 3, device=c.device))
    assert not ahead.ahead_enabled and ahead.ahead_refill_at == 0
    assert ahead.ahead_statistics() == {"served": 0, "missed": 0, "refilled": 0}
    ahead.enable_ahead(refill_at=3)
    assert ahead.ahead_enabled and ahead.ahead_refill_at == 3
    assert not plain.ahead_enabled
    assert_same(plain, ahead, "after enable_ahead")   # filling the slots changes no live track
    return plain, ahead


def run_sequence(plain: Course, ahead: Course, sequence=SEQUENCE) -> int:
    """Steps both courses and regenerates them as `sequence` says, comparing them after every
    call; returns the envs the masked calls selected."""
    selected = 0
    for i, (envs, advance, dtype) in enumerate(sequence):
        for k in range(2):   # progress to reset: gates passed, laps, last positions
            for c in (plain, ahead):
                move(c, 2 * i + k)
                c.step()
        assert_same(plain, ahead, f"call {i}, after the steps")
        episodes = plain.tracks.episode.clone()
        mask = None if envs is None else mask_of(envs, plain.device, dtype)
        for c in (plain, ahead):
            c.regenerate(mask=mask, advance=advance)
        assert_same(plain, ahead, f"call {i}: regenerate({envs}, advance={advance})")
        moved = torch.full((E,), envs is None and advance, dtype=torch.bool, device=plain.device)
        if envs is not None:
            moved[envs] = advance
            selected += len(envs)
        # The calls did what they should (so that the equality above is not that of idle calls).
        assert torch.equal(plain.tracks.episode, episodes + moved.to(episodes.dtype)), f"call {i}"
    return selected


def track_course(device, **overrides):
    return Course.track(presets.track(E, device=device, seed=21, **overrides), checkpoint_spacing=0.6)


def test_masked_regenerates_from_tracks_built_ahead_are_bit_for_bit_those_of_building(device):
    plain, ahead = courses(lambda: track_course(device))
    assert ahead.pipeline == "track_pipeline"
    selected = run_sequence(plain, ahead)
    stats = ahead.ahead_statistics()
    assert set(stats) == {"served", "missed", "refilled"} and all(isinstance(v, int) for v in stats.values())
    assert stats["served"] > 0 and stats["missed"] > 0 and stats["refilled"] > 0, stats
    assert stats["served"] + stats["missed"] == selected, stats   # every selected env: one or the other
    assert plain.ahead_statistics() == {"served": 0, "missed": 0, "refilled": 0}


@pytest.mark.parametrize("kind", ["elevated_family_pipeline", "bezier_pipeline", "gate_course_pipeline",
                                  "polar_gate_course_pipeline"])
def test_the_other_course_types_build_ahead_bit_for_bit(device, kind):
    if kind == "polar_gate_course_pipeline":
        make = lambda: Course.gates(presets.gate_course(E, device=device, seed=4))  # noqa: E731
    elif kind == "gate_course_pipeline":
        make = lambda: Course.gates(  # noqa: E731
            presets.gate_course(E, device=device, seed=4, generator_weights={"polar": 1.0}))
    elif kind == "bezier_pipeline":
        make = lambda: track_course(device, generator="bezier")  # noqa: E731
    else:
        make = lambda: track_course(device, generator_weights={"bezier": 1.0, "hull": 1.0})  # noqa: E731
    plain, ahead = courses(make)
    assert ahead.pipeline == kind
    run_sequence(plain, ahead, SEQUENCE[:7])
    stats = ahead.ahead_statistics()
    assert stats["served"] > 0 and stats["missed"] > 0 and stats["refilled"] > 0, stats


def test_enable_ahead_errors(device):
    course = track_course(device)
    for bad in (-1, E + 1, 2**40):
        with pytest.raises(ValueError, match=r"refill_at = %d" % bad):
            course.enable_ahead(refill_at=bad)
    for bad in (2.0, True, "3", torch.tensor([2])):   # a one-element tensor is no int either
        with pytest.raises(TypeError, match="refill_at"):
            course.enable_ahead(refill_at=bad)
    assert not course.ahead_enabled and course.ahead_refill_at == 0
    course.enable_ahead()   # automatic: min(E / 8, the blocks that fit at once), at least 1
    assert course.ahead_enabled and 1 <= course.ahead_refill_at <= max(1, E // 8)
    with pytest.raises(RuntimeError, match="already enabled"):
        course.enable_ahead()
    with pytest.raises(RuntimeError, match="already enabled"):
        course.enable_ahead(refill_at=E)
    with pytest.raises(RuntimeError, match="already enabled"):   # before the range, as in C++
        course.enable_ahead(refill_at=-5)
    assert course.ahead_enabled


@pytest.mark.cpu
def test_a_cpu_course_s_automatic_refill_and_no_stream():
    course = track_course("cpu")
    with pytest.raises(ValueError, match="takes no stream"):
        course.enable_ahead(stream=1234)
    assert not course.ahead_enabled
    course.enable_ahead(refill_at=0)
    assert course.ahead_refill_at == 1   # the host backend's automatic threshold
    with pytest.raises(ValueError, match="takes no stream"):
        course.ahead_statistics(stream=1234)


@pytest.mark.gpu
def test_a_replayed_graph_serves_from_the_slots_bit_for_bit():
    """Recorded after enable_ahead (inside registered(conditional=True): two plain nodes instead
    of the IF node), replayed with changing masks: the same tracks and progress as a twin graph
    that builds them."""
    import track_gen.interop.torch as tt  # noqa: PLC0415
    n = 64
    device = "cuda:0"
    make = lambda: Course.track(presets.track(n, device=device, seed=8), checkpoint_spacing=0.6)  # noqa: E731
    plain, ahead = make(), make()
    ahead.enable_ahead(refill_at=4)
    done = torch.zeros(n, dtype=torch.int32, device=device)
    graphs = []
    for c in (plain, ahead):
        c.bind(position=torch.zeros(n, 3, device=device))
        c.step()   # the step's buffers, before capturing
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            with tt.registered(graph=g, conditional=True):
                c.step()
                c.regenerate(mask=done, advance=True)
        graphs.append(g)
    gen = torch.Generator(device=device)
    gen.manual_seed(5)
    selected = 0
    for r in range(30):
        m = (torch.rand(n, generator=gen, device=device) < 0.1).to(torch.int32)
        if r % 7 == 3:
            m.zero_()
        if r % 5 == 1:
            m[9] = 1   # env 9 again and again: misses
        done.copy_(m)
        for c in (plain, ahead):
            rows = torch.arange(n, device=device)
            c.position.copy_(c.tracks.position[rows, (3 * rows + 5 * r) % c.num_samples])
        for g in graphs:
            g.replay()
        torch.cuda.synchronize()
        selected += int(m.sum())
        assert_same(plain, ahead, f"replay {r}")
    stats = ahead.ahead_statistics()
    assert stats["served"] > 0 and stats["served"] + stats["missed"] == selected, stats


@pytest.mark.gpu
def test_enable_ahead_and_its_statistics_refuse_a_capturing_stream():
    course = track_course("cuda:0")
    course.bind(position=torch.zeros(E, 3, device="cuda:0"))
    course.step()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(CaptureError, match="capturing"):
        with torch.cuda.graph(g):
            course.enable_ahead()
    assert not course.ahead_enabled
    course.enable_ahead()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(CaptureError, match="capturing"):
        with torch.cuda.graph(g):
            course.ahead_statistics()

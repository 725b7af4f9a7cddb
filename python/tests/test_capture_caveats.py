"""The reference page's caveats of ``conditional=True`` that our design removes, each proved:

- the conditional node is inserted without ending torch's capture: the capture id does not
  change, and torch ops that allocate after it draw from the graph's private pool and give
  correct results on replay while eager code churns the general pool;
- every ``capture_error_mode`` works;
- a side stream forked from the capture stream inside the capture records course work (with its
  own conditional node) and joins back.
(What remains, a CUDA rule: a graph with conditional nodes cannot be cloned or be a child graph.)
"""
import pytest
import torch

import track_gen
import track_gen.interop.torch as tt

from helpers import DEVICE, Agents, assert_same, make_course, random_masks, snapshot

pytestmark = pytest.mark.gpu


def capture_info(stream=None):
    s = torch.cuda.current_stream() if stream is None else stream
    return track_gen._extension().capture_info(s.cuda_stream)


def pool_segments(pool):
    """(start, end) address ranges of the caching allocator's segments in private pool ``pool``."""
    out = []
    for seg in torch.cuda.memory_snapshot():
        if tuple(seg["segment_pool_id"]) == tuple(pool):
            out.append((seg["address"], seg["address"] + seg["total_size"]))
    return out


def test_allocating_torch_ops_after_a_conditional_node_keep_the_graph_pool_and_replay_correctly():
    E = 256
    course, twin = make_course(E, seed=3), make_course(E, seed=3)
    done = torch.zeros(E, dtype=torch.int32, device=DEVICE)
    x = torch.randn(E, device=DEVICE)

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        status0, id0 = capture_info()
        with tt.registered(graph=g, conditional=True):
            course.step()
            course.regenerate(mask=done, advance=True)  # the IF node
        status1, id1 = capture_info()
        # Torch ops that allocate, recorded after the conditional node.
        y = x * 2.0 + course.lap_progress
        z = torch.cumsum(y, 0)
        w = torch.cat([z, course.laps.to(torch.float32), course.tracks.length])
        status2, id2 = capture_info()
    assert (status0, status1, status2) == (1, 1, 1)
    assert id0 == id1 == id2 != 0

    # Every tensor allocated after the node lives in the graph's private pool.
    segments = pool_segments(g.pool())
    assert segments, "the graph's private pool holds no segment"
    inside = lambda t: any(lo <= t.data_ptr() < hi for lo, hi in segments)  # noqa: E731
    assert inside(y) and inside(z) and inside(w)

    # Drop the intermediates; eager code then allocates the same sizes and fills them with a
    # sentinel. Were y and z in the general pool, these blocks would be theirs and the replays
    # would overwrite the sentinels.
    del y, z
    churn = [torch.full((E,), 123.0, device=DEVICE) for _ in range(64)]
    agents = Agents(E)
    masks = random_masks(40, E, 0.05, torch.int32, seed=9)
    masks[::4] = 0
    for r in range(40):
        agents.move(course, course.position)
        twin.position.copy_(course.position)
        x.normal_()
        done.copy_(masks[r])
        g.replay()
        twin.step()
        twin.regenerate(mask=masks[r], advance=True)
        y_e = x * 2.0 + twin.lap_progress
        expected = torch.cat([torch.cumsum(y_e, 0), twin.laps.to(torch.float32), twin.tracks.length])
        torch.testing.assert_close(w, expected, rtol=0, atol=0)
    assert_same(snapshot(course), snapshot(twin))
    for c in churn:
        assert bool((c == 123.0).all()), "a replay wrote into memory the eager allocator handed out"


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
@pytest.mark.parametrize("conditional", [True, False])
def test_every_capture_error_mode(mode, conditional):
    E, replays = 96, 60
    course, twin = make_course(E, seed=21), make_course(E, seed=21)
    done = torch.zeros(E, dtype=torch.bool, device=DEVICE)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode=mode):
        _, id0 = capture_info()
        with tt.registered(graph=g, capture_mode=mode, conditional=conditional) as reg:
            course.step()
            course.regenerate(mask=done, advance=True)
        _, id1 = capture_info()
    assert id0 == id1
    assert reg.courses == [course] and g._track_gen_owners == [course]
    agents = Agents(E)
    masks = random_masks(replays, E, 0.05, torch.bool, seed=2)
    masks[::3] = False
    before = course.generation_launches()
    for r in range(replays):
        agents.move(course, course.position)
        twin.position.copy_(course.position)
        done.copy_(masks[r])
        g.replay()
        twin.step()
        twin.regenerate(mask=masks[r], advance=True)
    assert_same(snapshot(course), snapshot(twin), f"{mode}: ")
    any_done = int(masks.any(dim=1).sum().item())
    assert course.generation_launches() - before == (any_done if conditional else replays)


def test_a_side_stream_forked_inside_the_capture_records_and_joins_back():
    E, replays = 128, 60
    a, a_twin = make_course(E, seed=4), make_course(E, seed=4)
    b, b_twin = make_course(E, seed=5), make_course(E, seed=5)
    done_a = torch.zeros(E, dtype=torch.int32, device=DEVICE)
    done_b = torch.zeros(E, dtype=torch.int32, device=DEVICE)
    side = torch.cuda.Stream()  # created before the capture (docs/cuda-graphs.md: no stream creation inside a capture)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        main = torch.cuda.current_stream()
        _, main_id = capture_info(main)
        with tt.registered(graph=g, conditional=True):
            side.wait_stream(main)  # fork: an event recorded on the capture stream
            with torch.cuda.stream(side):
                side_status, side_id = capture_info(side)
                a.step()
                a.regenerate(mask=done_a, advance=True)  # its IF node, on the side stream
                with tt.registered(stream=side, conditional=False) as inner:
                    assert inner.conditional  # nested in the same capture: the outer choices stay
            b.step()
            b.regenerate(mask=done_b, advance=True)
            main.wait_stream(side)  # join
        _, end_id = capture_info(main)
    assert side_status == 1 and side_id == main_id == end_id
    assert g._track_gen_owners == [a, b]
    agents_a, agents_b = Agents(E), Agents(E, stride=2)
    masks = random_masks(2 * replays, E, 0.05, torch.int32, seed=8)
    masks[::5] = 0
    launches_a = a.generation_launches()
    for r in range(replays):
        agents_a.move(a, a.position)
        agents_b.move(b, b.position)
        a_twin.position.copy_(a.position)
        b_twin.position.copy_(b.position)
        done_a.copy_(masks[2 * r])
        done_b.copy_(masks[2 * r + 1])
        g.replay()
        for twin, m in ((a_twin, masks[2 * r]), (b_twin, masks[2 * r + 1])):
            twin.step()
            twin.regenerate(mask=m, advance=True)
    assert_same(snapshot(a), snapshot(a_twin), "side stream course: ")
    assert_same(snapshot(b), snapshot(b_twin), "capture stream course: ")
    # The side stream's regenerate sits under an IF node too: skipped when no env of a is done.
    any_done = int((masks[0::2] != 0).any(dim=1).sum().item())
    assert a.generation_launches() - launches_a == any_done

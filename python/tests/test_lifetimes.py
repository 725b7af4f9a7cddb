"""Lifetimes: a graph replayed after the Python course is gone gives correct results; deleting the
graph gives the device memory back; output tensors keep the course's memory alive; the C++
retain helpers of interop/torch.hpp tie the memory to torch graphs."""
import gc
import weakref

import pytest
import torch

import track_gen
import track_gen.interop.torch as tt
from track_gen.exec.errors import CaptureError

from helpers import DEVICE, Agents, assert_same, eventually, make_course, random_masks, snapshot

pytestmark = pytest.mark.gpu


def free_memory() -> int:
    gc.collect()
    torch.cuda.synchronize()
    track_gen.release_deferred()
    torch.cuda.empty_cache()
    return torch.cuda.mem_get_info()[0]


def drive(g, course_position, done, twin, masks, agents_source):
    """Replays g against an eager twin for every mask row."""
    agents = Agents(twin.num_envs)
    for r in range(masks.shape[0]):
        agents.move(agents_source(), course_position)
        twin.position.copy_(course_position)
        done.copy_(masks[r])
        g.replay()
        twin.step()
        twin.regenerate(mask=masks[r], advance=True)


@pytest.mark.parametrize("retained", [True, False])
def test_replay_after_the_course_object_is_deleted(retained):
    E = 128
    course, twin = make_course(E, seed=13), make_course(E, seed=13)
    position = course.position
    done = torch.zeros(E, dtype=torch.int32, device=DEVICE)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with tt.registered(graph=g if retained else None, conditional=True):
            course.step()
            course.regenerate(mask=done, advance=True)
    if retained:
        tt.retain(g, course)
    tracks, progress = course.tracks, course.progress  # tensors over the course's memory
    alive = weakref.ref(course)
    del course
    gc.collect()
    # retain(g, course) keeps the Python course; without it only the graph's user object and
    # the output tensors hold the memory.
    assert (alive() is not None) == retained
    masks = random_masks(50, E, 0.05, torch.int32, seed=3)

    class View:  # what Agents.move reads: the tracks of the (possibly deleted) course
        pass
    view = View()
    view.tracks = tracks
    drive(g, position, done, twin, masks, lambda: view)
    torch.cuda.synchronize()
    got = {**tracks._asdict(), **progress._asdict()}
    assert_same(got, snapshot(twin), "after deleting the course: ")


def test_deleting_the_graph_gives_the_memory_back():
    E = 4096
    before = free_memory()
    course = make_course(E, seed=1)
    done = torch.zeros(E, dtype=torch.int32, device=DEVICE)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with tt.registered(graph=g, conditional=True):
            course.step()
            course.regenerate(mask=done, advance=True)
    done[::7] = 1
    g.replay()
    used = before - free_memory()
    assert used > 32 * 2 ** 20, f"the course should hold tens of MiB, measured {used} bytes"
    del course
    gc.collect()
    g.replay()  # still fine: g holds the course (graph=) and its memory (user object)
    torch.cuda.synchronize()
    del g, done
    assert eventually(lambda: free_memory() >= before - 4 * 2 ** 20), (
        f"device memory not given back: {before - free_memory()} bytes still in use")


def test_output_tensors_keep_the_memory_alive():
    E = 64
    course = make_course(E, seed=17)
    positions = course.tracks.position
    expected = positions.clone()
    alive = weakref.ref(course)
    del course
    gc.collect()
    track_gen.release_deferred()
    assert alive() is None
    # A new course of the same size: had the memory been freed, cudaMalloc could hand it out again
    # and these tracks (another seed) would overwrite it.
    others = [make_course(E, seed=100 + i) for i in range(4)]
    torch.cuda.synchronize()
    assert torch.equal(positions, expected)
    del others


def test_cpp_retain_helpers_tie_the_memory_to_torch_graphs():
    course = make_course(32, seed=2)
    impl = course._impl
    base = impl.owner_use_count()
    with pytest.raises(CaptureError, match="not capturing"):
        impl.retain_capture()

    kept = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(kept):
        course.step()             # the capture anchors the memory (+1)
        impl.retain_capture()     # retain_capture on the capture's graph (+1)
        impl.retain_capture()     # idempotent
    assert impl.owner_use_count() == base + 2
    impl.retain_graph(kept)       # the same cudaGraph_t: idempotent with retain_capture
    assert impl.owner_use_count() == base + 2

    second = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(second):
        course.step()             # +1
    impl.retain_graph(second)     # +1 (before instantiation)
    assert impl.owner_use_count() == base + 4
    second.instantiate()
    with pytest.raises(CaptureError, match="already instantiated"):
        impl.retain_graph(second)

    plain = torch.cuda.CUDAGraph()
    with torch.cuda.graph(plain):
        course.step()             # +1
    with pytest.raises(CaptureError, match="keep_graph"):
        impl.retain_graph(plain)
    assert impl.owner_use_count() == base + 5

    for graph in (kept, second, plain):
        graph.replay()
    del graph  # the loop variable would keep the last graph (plain) alive
    torch.cuda.synchronize()
    # Deleted one at a time, each with the references it should give back (plain: its capture's
    # anchor; second and kept: anchor + retain), so that a failure names the graph.
    graphs = {"plain": (plain, 1), "second": (second, 2), "kept": (kept, 2)}
    del kept, second, plain
    for name in ("plain", "second", "kept"):
        before = impl.owner_use_count()
        given_back = graphs.pop(name)[1]
        assert eventually(lambda: impl.owner_use_count() == before - given_back), (
            f"deleting {name}: {before - impl.owner_use_count()} references given back, expected {given_back}")
    assert impl.owner_use_count() == base

"""The reference page's example, run through the torch extension: a course of 64 envs, ``step`` and
a masked ``regenerate`` captured inside ``torch.cuda.graph`` (in a ``registered`` block, then
``retain``), replayed; every output equals, bit for bit, what the same calls give eagerly."""
import pytest
import torch

import track_gen.interop.torch
from track_gen.course import Course
from track_gen.pipeline import presets

from helpers import DEVICE, Agents, assert_same, make_course, random_masks, snapshot

pytestmark = pytest.mark.gpu


def test_the_page_example_runs_and_replays():
    # The page's snippet, verbatim but for the tensor types (torch instead of warp).
    E = 64
    course = Course.track(presets.track(num_envs=E, device="cuda:0"), checkpoint_spacing=0.6)
    course.bind(position=torch.zeros(E, 3, device="cuda:0"))
    done = torch.zeros(E, dtype=torch.int32, device="cuda:0")

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with track_gen.interop.torch.registered(graph=g):
            course.step()
            course.regenerate(mask=done, advance=True)
    track_gen.interop.torch.retain(g, course)  # keep the course's buffers alive with g

    g.replay()
    torch.cuda.synchronize()
    # graph= retained the course; retain() again changed nothing (idempotent).
    assert g._track_gen_owners == [course]
    # One replay at the origin: every agent's first step only records its position.
    assert torch.equal(course.progress.flags & 1, torch.ones(E, dtype=torch.int32, device=DEVICE))
    assert torch.equal(course.tracks.episode, torch.zeros(E, dtype=torch.int32, device=DEVICE))
    done[3] = 1
    g.replay()
    torch.cuda.synchronize()
    assert course.tracks.episode.tolist() == [1 if e == 3 else 0 for e in range(E)]
    assert (course.progress.flags[3] == 0).item()  # reset after this step


@pytest.mark.parametrize("conditional", [False, True])
@pytest.mark.parametrize("mask_dtype", [torch.int32, torch.bool, torch.uint8])
def test_replays_equal_eager_calls_bit_for_bit(conditional, mask_dtype):
    E, replays = 64, 300
    replayed, eager = make_course(E, seed=11), make_course(E, seed=11)
    done_g = torch.zeros(E, dtype=mask_dtype, device=DEVICE)
    done_e = torch.zeros(E, dtype=mask_dtype, device=DEVICE)
    assert_same(snapshot(replayed), snapshot(eager), "construction: ")

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        with track_gen.interop.torch.registered(graph=g, conditional=conditional):
            replayed.step()
            replayed.regenerate(mask=done_g, advance=True)

    agents = Agents(E)
    masks = random_masks(replays, E, 0.04, mask_dtype, seed=5)
    masks[::9] = 0  # some replays with no env done (the IF node skips the generation)
    before = replayed.generation_launches()
    for r in range(replays):
        agents.move(replayed, replayed.position)
        eager.position.copy_(replayed.position)
        done_g.copy_(masks[r])
        done_e.copy_(masks[r])
        g.replay()
        eager.step()
        eager.regenerate(mask=done_e, advance=True)
        if r % 50 == 49:
            assert_same(snapshot(replayed), snapshot(eager), f"replay {r}: ")
    assert_same(snapshot(replayed), snapshot(eager), "end: ")
    launches = replayed.generation_launches() - before
    any_done = int((masks != 0).any(dim=1).sum().item())
    # Conditional: one generation launch per replay with some env done, none otherwise.
    assert launches == (any_done if conditional else replays)
    expected_episodes = (masks != 0).sum(dim=0).to(torch.int32)
    assert torch.equal(replayed.tracks.episode, expected_episodes)
    assert int(replayed.progress.gates_passed.sum()) > 0  # the agents did pass gates

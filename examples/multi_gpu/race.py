"""A racing loop over several GPUs, one process per GPU (torchrun): each rank owns a shard of the
E envs, steps its agents with a stand-in physics, tracks their progress, regenerates the tracks
of the episodes that ended, and the ranks all-reduce the episode statistics.

    torchrun --standalone --nproc_per_node=G examples/multi_gpu/race.py --envs 4096 --steps 2000

- Rank r holds global envs ``[first, first + n)`` of ``track_gen.shard_of(E, G, r)``: its course
  is built from ``track_gen.shard_params`` (``env_offset = first``), so env 17 of seed 42 at
  episode 3 is the same track on any rank of any G.
- Device: ``cuda:(local_rank % torch.cuda.device_count())``; backend NCCL when every rank has a
  GPU, gloo when ranks share one (multi_gpu_common.pick_backend says why).
- The stand-in physics moves each agent ``--stride`` centreline samples per step along its own
  track, swaying sideways by up to 30 % of the half-width (a pattern of its global id and step),
  so an agent laps its track in about N / stride steps. An episode ends after ``--laps`` laps or
  ``--max-episode-steps`` steps; its env gets a new track (``regenerate(mask, advance=True)``).
- One iteration (physics, ``step``, episode ends, statistics, ``regenerate``) is captured in a
  CUDA graph after ``--warmup`` eager iterations and replayed (``--no-graph``: eager throughout).
- Statistics (laps completed, episodes ended, env steps) are summed over the ranks with
  ``all_reduce`` every ``--log-every`` steps and at the end. Every quantity is a function of the
  global env ids alone, so the totals do not depend on G (scripts/multi-gpu-check compares them).
"""
from __future__ import annotations

import argparse
import sys
import time

import torch

import multi_gpu_common as mg

import track_gen
import track_gen.interop.torch
from track_gen.course import Course
from track_gen.pipeline import presets


def parse_args(argv=None) -> argparse.Namespace:
    ap = mg.arg_parser(__doc__, envs=4096)
    ap.add_argument("--steps", type=int, default=2000, help="simulation steps (default 2000)")
    ap.add_argument("--warmup", type=int, default=5, help="eager steps before the graph is captured (default 5)")
    ap.add_argument("--stride", type=int, default=3, help="centreline samples an agent moves per step (default 3)")
    ap.add_argument("--laps", type=int, default=2, help="laps that end an episode (default 2)")
    ap.add_argument("--max-episode-steps", type=int, default=400, help="steps that end an episode (default 400)")
    ap.add_argument("--log-every", type=int, default=500, help="all-reduce and print every this many steps (0: at the end only)")
    ap.add_argument("--no-graph", action="store_true", help="run every iteration eagerly")
    args = ap.parse_args(argv)
    if args.stride < 1 or args.steps < 1 or args.laps < 1 or args.max_episode_steps < 1:
        ap.error("--stride, --steps, --laps and --max-episode-steps must be >= 1")
    return args


class Race:
    """One rank's envs: the course, the agents' stand-in physics and the episode statistics,
    every tensor on the rank's device and updated in place (so one iteration can be captured).

    Shapes: E_r = the rank's envs; ``position`` float32 [E_r, 3]; ``done`` bool [E_r];
    ``sample`` (centreline sample of the agent), ``episode_steps`` int64 [E_r]; ``stats`` int64 [2] (laps completed in ended
    episodes, episodes ended).
    """

    def __init__(self, params, spacing: float, stride: int, laps: int, max_episode_steps: int):
        self.course = Course.track(params, checkpoint_spacing=spacing)
        dev, n = self.course.device, self.course.num_envs
        self.rows = torch.arange(n, device=dev)
        self.global_id = self.rows + params.env_offset  # sway pattern keyed on the global id
        # Sample index of the agent (before the next move). A reset expects the agent between gate
        # 0 (the start line) and gate 1 (docs/guide.md, "Spawning"): starting at 1 - stride, the first
        # move lands on sample 1, short of gate 1 while N exceeds the gate count.
        self.start_sample = 1 - stride
        self.sample = torch.full((n,), self.start_sample, dtype=torch.int64, device=dev)
        self.episode_steps = torch.zeros(n, dtype=torch.int64, device=dev)
        self.done = torch.zeros(n, dtype=torch.bool, device=dev)     # the regenerate mask, read in place
        self.stats = torch.zeros(2, dtype=torch.int64, device=dev)
        self.position = torch.zeros(n, 3, dtype=torch.float32, device=dev)
        self.course.bind(position=self.position)
        self.stride, self.laps_per_episode, self.max_episode_steps = stride, laps, max_episode_steps

    def move(self) -> None:
        """Stand-in physics: ``stride`` samples forward along the current centreline, sideways by
        -0.3 .. 0.3 of the half-width. Element-wise on the env's own state: the same on any shard."""
        t = self.course.tracks
        n_samples = t.position.shape[1]
        self.sample += self.stride
        k = self.sample % n_samples
        side = 0.15 * (((self.sample // self.stride + self.global_id) % 5) - 2).to(torch.float32)
        half_width = t.half_widths[self.rows, k].amin(dim=-1)
        offset = (side * half_width).unsqueeze(-1) * t.normal[self.rows, k]
        self.position.copy_(t.position[self.rows, k] + offset)

    def iteration(self) -> None:
        """Physics, progress, episode ends, statistics, new tracks for the ended episodes."""
        self.move()
        self.course.step()
        self.episode_steps += 1
        torch.logical_or(self.course.laps >= self.laps_per_episode, self.episode_steps >= self.max_episode_steps,
                         out=self.done)
        ended = self.done.to(torch.int64)
        # laps of the ended episodes (read before regenerate resets them), episodes ended
        self.stats.add_(torch.stack([(self.course.laps.to(torch.int64) * ended).sum(), ended.sum()]))
        self.course.regenerate(mask=self.done, advance=True)
        self.sample.masked_fill_(self.done, self.start_sample)  # the new track's start line
        self.episode_steps.masked_fill_(self.done, 0)


def main(argv=None) -> int:
    args = parse_args(argv)
    me = mg.start(args.backend)
    whole = presets.track(num_envs=args.envs, device=str(me.device), seed=args.seed)
    params = track_gen.shard_params(whole, args.envs, me.world_size, me.rank)
    race = Race(params, args.spacing, args.stride, args.laps, args.max_episode_steps)
    n = race.course.num_envs
    if me.rank == 0:
        print(f"race: E = {args.envs} envs over {me.world_size} rank(s), backend {me.backend}, "
              f"{torch.cuda.device_count()} GPU(s) visible; {args.steps} steps, graph {not args.no_graph}")
    print(f"rank {me.rank}: {me.device}, global envs [{params.env_offset}, {params.env_offset + n})", flush=True)

    def totals(steps_done: int) -> dict:
        local = torch.cat([race.stats.cpu(), torch.tensor([steps_done * n], dtype=torch.int64)])
        laps, episodes, env_steps = mg.all_reduce_sum(me, local).tolist()
        return {"laps": int(laps), "episodes": int(episodes), "env_steps": int(env_steps)}

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    warmup = args.steps if args.no_graph else min(args.warmup, args.steps)
    graph = None
    for step in range(args.steps):
        if step < warmup:
            race.iteration()
        else:
            if graph is None:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    with track_gen.interop.torch.registered(graph=graph, conditional=True):
                        race.iteration()  # recorded, not run: the replay below runs it
            graph.replay()
        if args.log_every and (step + 1) % args.log_every == 0 and step + 1 < args.steps:
            s = totals(step + 1)  # synchronises (a collective on the statistics)
            if me.rank == 0:
                print(f"step {step + 1}: laps {s['laps']}, episodes ended {s['episodes']}", flush=True)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    final = totals(args.steps)
    rows = mg.gather(me, {"rank": me.rank, "device": str(me.device), "first": params.env_offset, "envs": n,
                          "laps": int(race.stats[0]), "episodes": int(race.stats[1]), "seconds": seconds})
    if me.rank == 0:
        slowest = max(r["seconds"] for r in rows)
        mg.print_table([[r["rank"], r["device"], r["first"], r["envs"], r["laps"], r["episodes"],
                         f"{r['seconds']:.3f}", f"{r['envs'] * args.steps / r['seconds']:.3e}"] for r in rows],
                       ["rank", "device", "first id", "envs", "laps", "episodes", "seconds", "env-steps/s"])
        rate = final["env_steps"] / slowest
        print(f"all ranks: laps {final['laps']}, episodes ended {final['episodes']}, "
              f"{final['env_steps']} env-steps in {slowest:.3f} s (slowest rank; warm-up, capture and logging "
              f"included): {rate:.3e} env-steps/s")
        mg.write_json(args.out, {
            "script": "race", "total_envs": args.envs, "world_size": me.world_size, "backend": me.backend,
            "device_count": torch.cuda.device_count(), "steps": args.steps, "seed": args.seed,
            "stride": args.stride, "laps_per_episode": args.laps, "max_episode_steps": args.max_episode_steps,
            "graph": not args.no_graph, "ranks": rows, "totals": final, "env_steps_per_s": rate,
        })
    mg.finish(me)
    return 0


if __name__ == "__main__":
    sys.exit(main())

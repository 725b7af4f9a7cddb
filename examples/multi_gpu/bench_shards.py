"""Scaling figures of a sharded run: per rank and summed over the ranks, the tracks per second of
a whole-batch regeneration and the env-steps per second of ``course.step()`` replayed in a CUDA
graph (``torch.cuda.graph``), medians of repeated CUDA-event timings after a warm-up.

    torchrun --standalone --nproc_per_node=G examples/multi_gpu/bench_shards.py --envs 65536 --out bench.json

The ranks time each part together (a barrier before it), so with several ranks on one GPU they
share it and the sum is about the one-GPU figure: scaling shows only with a GPU per rank. Besides
the sum of the per-rank medians, ``aggregate`` divides all ranks' work by the slowest rank's
wall time of the whole timed loop (the throughput the run as a whole got).
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
    ap = mg.arg_parser(__doc__, envs=65536)
    ap.add_argument("--num-samples", type=int, default=256, help="samples per track N (default 256, the preset's)")
    ap.add_argument("--repeats", type=int, default=20, help="timings per median (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    ap.add_argument("--replays", type=int, default=100, help="graph replays per step timing (default 100)")
    return ap.parse_args(argv)


def timed(me: mg.Rank, run, repeats: int, warmup: int, inner: int = 1):
    """(median ms per call, wall seconds of the whole timed loop), every rank starting together."""
    mg.barrier(me)
    t = time.perf_counter()
    ms = mg.median_ms(run, repeats, warmup, inner)  # synchronises at the end
    return ms, time.perf_counter() - t


def main(argv=None) -> int:
    args = parse_args(argv)
    me = mg.start(args.backend)
    whole = presets.track(num_envs=args.envs, device=str(me.device), seed=args.seed, num_samples=args.num_samples)
    params = track_gen.shard_params(whole, args.envs, me.world_size, me.rank)
    course = Course.track(params, checkpoint_spacing=args.spacing)
    n = course.num_envs

    # Whole-batch regeneration: a new episode (a new track) for every env of the rank each call.
    regen_ms, regen_wall = timed(me, lambda: course.regenerate(mask=None, advance=True), args.repeats, args.warmup)

    # step() replayed in a graph, agents standing on their tracks 1/8 of the way round (the
    # first step after the reset searches every segment; the timed ones search locally).
    t = course.tracks
    k = t.position.shape[1] // 8
    course.bind(position=(t.position[:, k] + 0.1 * t.half_widths[:, k, :1] * t.normal[:, k]).contiguous())
    course.step()
    course.step()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        course.step()
    track_gen.interop.torch.retain(graph, course)
    step_ms, step_wall = timed(me, graph.replay, args.repeats, args.warmup, inner=args.replays)

    mine = {"rank": me.rank, "device": str(me.device), "first": params.env_offset, "envs": n,
            "regenerate_ms": regen_ms, "tracks_per_s": n / (regen_ms * 1e-3),
            "regenerate_wall_s": regen_wall, "regenerations": args.warmup + args.repeats,
            "step_replay_ms": step_ms, "env_steps_per_s": n / (step_ms * 1e-3),
            "step_wall_s": step_wall, "step_replays": (args.warmup + args.repeats * args.replays)}
    rows = mg.gather(me, mine)
    if me.rank == 0:
        total_tracks = sum(r["envs"] * r["regenerations"] for r in rows)
        total_steps = sum(r["envs"] * r["step_replays"] for r in rows)
        summed = {"tracks_per_s": sum(r["tracks_per_s"] for r in rows),
                  "env_steps_per_s": sum(r["env_steps_per_s"] for r in rows)}
        aggregate = {"tracks_per_s": total_tracks / max(r["regenerate_wall_s"] for r in rows),
                     "env_steps_per_s": total_steps / max(r["step_wall_s"] for r in rows)}
        print(f"bench_shards: E = {args.envs} envs (N = {args.num_samples}) over {me.world_size} rank(s), backend "
              f"{me.backend}, {torch.cuda.device_count()} GPU(s) visible; medians of {args.repeats}")
        mg.print_table([[r["rank"], r["device"], r["envs"], f"{r['regenerate_ms']:.4f}", f"{r['tracks_per_s']:.3e}",
                         f"{r['step_replay_ms']:.4f}", f"{r['env_steps_per_s']:.3e}"] for r in rows]
                       + [["sum", "", args.envs, "", f"{summed['tracks_per_s']:.3e}", "", f"{summed['env_steps_per_s']:.3e}"],
                          ["aggregate", "", args.envs, "", f"{aggregate['tracks_per_s']:.3e}", "",
                           f"{aggregate['env_steps_per_s']:.3e}"]],
                       ["rank", "device", "envs", "regenerate ms", "tracks/s", "step replay ms", "env-steps/s"])
        mg.write_json(args.out, {
            "script": "bench_shards", "total_envs": args.envs, "world_size": me.world_size, "backend": me.backend,
            "device_count": torch.cuda.device_count(), "num_samples": args.num_samples, "seed": args.seed,
            "repeats": args.repeats, "warmup": args.warmup, "replays": args.replays,
            "ranks": rows, "summed": summed, "aggregate": aggregate,
        })
    mg.finish(me)
    return 0


if __name__ == "__main__":
    sys.exit(main())

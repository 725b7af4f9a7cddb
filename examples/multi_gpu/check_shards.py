"""Checks that G ranks holding the shards of E envs hold, env for env and bit for bit, the tracks
one course of all E envs holds: after construction and after ``--rounds`` masked regenerations
whose masks are a function of the GLOBAL env id (each rank computes its own ids' part).

    torchrun --standalone --nproc_per_node=2 examples/multi_gpu/check_shards.py --envs 1001 --out check.json

Every rank builds its shard (``track_gen.shard_params``: env_offset = the shard's first global id)
on ``cuda:(local_rank % device_count)`` and hashes each env's track (SHA-256 of every track field,
CPU copies) after each stage; rank 0 gathers the hashes, builds the reference (one course of all E
envs, on its device, the same regenerations), compares, prints a table and writes the JSON report
(``--out``). Exit status: 0 when every env matches at every stage, 1 otherwise (on every rank).

``--skew-rank R`` makes rank R build its shard with env_offset one too high (the bug the check
exists to catch): such a run must report mismatches (python/tests/test_multi_gpu.py runs it).
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional, Tuple

import torch

import multi_gpu_common as mg

import track_gen
from track_gen.course import Course
from track_gen.pipeline import presets


def parse_args(argv=None) -> argparse.Namespace:
    ap = mg.arg_parser(__doc__, envs=1001, envs_note=": odd splits")
    ap.add_argument("--rounds", type=int, default=3, help="masked regenerations after construction (default 3)")
    ap.add_argument("--base", type=int, default=0, help="global id of the whole batch's first env (default 0)")
    ap.add_argument("--num-samples", type=int, default=64, help="samples per track N (default 64)")
    ap.add_argument("--skew-rank", type=int, default=None,
                    help="self-test: this rank builds its shard with env_offset one too high; the run must fail")
    return ap.parse_args(argv)


def advance_in(round_: int) -> bool:
    """Round 2 rebuilds the same episode (advance=False), the others move to the next: both
    paths key the track on the global id (as the C++ sharding test)."""
    return round_ != 2


def run_course(params, spacing: float, first_id: int, rounds: int, device) -> Tuple[List[List[str]], float, List[int]]:
    """Builds a course of ``params`` whose envs hold global ids ``[first_id, + num_envs)`` for the
    masks, regenerates it ``rounds`` times with :func:`mg.done_in_round` masks.

    Returns:
        (hashes per stage (construction, round 1, ...) per env, seconds of construction and
        regenerations (synchronised, hashing excluded), done envs per round).
    """
    seconds = 0.0
    t = time.perf_counter()
    course = Course.track(params, checkpoint_spacing=spacing)
    torch.cuda.synchronize(device)
    seconds += time.perf_counter() - t
    stages = [mg.env_hashes(course)]
    ids = torch.arange(first_id, first_id + course.num_envs, dtype=torch.int64, device=device)
    done_counts = []
    for r in range(1, rounds + 1):
        mask = mg.done_in_round(ids, r)  # bool [n] on the course's device
        done_counts.append(int(mask.sum().item()))
        t = time.perf_counter()
        course.regenerate(mask=mask, advance=advance_in(r))
        torch.cuda.synchronize(device)
        seconds += time.perf_counter() - t
        stages.append(mg.env_hashes(course))
    return stages, seconds, done_counts


def compare(rows: List[dict], reference: List[List[str]], base: int, total: int) -> dict:
    """Rank hashes concatenated in global order against the reference's, stage by stage."""
    rows = sorted(rows, key=lambda r: r["rank"])
    expected_first, coverage = base, True
    for r in rows:
        coverage &= r["first"] == expected_first
        expected_first = r["first"] + r["envs"]
    coverage &= expected_first == base + total
    stages = len(reference)
    per_stage = [0] * stages
    bad_envs, first_mismatches = set(), []
    per_rank = []
    for r in rows:
        bad_here = 0
        for e in range(r["envs"]):
            gid = r["first"] + e
            index = gid - base
            differs = [s for s in range(stages)
                       if not 0 <= index < total or r["hashes"][s][e] != reference[s][index]]
            for s in differs:
                per_stage[s] += 1
            if differs:
                bad_here += 1
                bad_envs.add(gid)
                if len(first_mismatches) < 10:
                    first_mismatches.append({"global_id": gid, "rank": r["rank"], "env": e, "first_stage": differs[0]})
        per_rank.append(bad_here)
    return {"coverage": coverage, "per_stage": per_stage, "per_rank": per_rank,
            "mismatched_envs": len(bad_envs), "first_mismatches": first_mismatches}


def main(argv=None) -> int:
    args = parse_args(argv)
    me = mg.start(args.backend)
    total = args.envs
    whole = presets.track(num_envs=total, device=str(me.device), seed=args.seed, env_offset=args.base,
                          num_samples=args.num_samples)
    shard = track_gen.shard_of(total, me.world_size, me.rank, base=args.base)
    mine = track_gen.shard_params(whole, total, me.world_size, me.rank)
    if args.skew_rank == me.rank:
        mine = mine.replace(env_offset=shard.first + 1)  # the deliberate bug of the self-test
    stages, seconds, _ = run_course(mine, args.spacing, shard.first, args.rounds, me.device)
    rows = mg.gather(me, {"rank": me.rank, "device": str(me.device), "first": shard.first, "envs": shard.num_envs,
                          "seconds": seconds, "hashes": stages})

    verdict: Optional[bool] = None
    if me.rank == 0:
        # The reference: one course of all E envs, after the sharded run (rank 0's device only).
        reference, ref_seconds, done_counts = run_course(whole, args.spacing, args.base, args.rounds, me.device)
        result = compare(rows, reference, args.base, total)
        changed = sum(1 for a, b in zip(reference[0], reference[-1]) if a != b)
        verdict = result["coverage"] and result["mismatched_envs"] == 0
        names = ["construction"] + [f"round {r}" for r in range(1, args.rounds + 1)]
        report = {
            "script": "check_shards",
            "total_envs": total, "world_size": me.world_size, "backend": me.backend,
            "device_count": torch.cuda.device_count(), "base": args.base, "seed": args.seed,
            "num_samples": args.num_samples, "checkpoint_spacing": args.spacing, "rounds": args.rounds,
            "skew_rank": args.skew_rank,
            "ranks": [{"rank": r["rank"], "device": r["device"], "first": r["first"], "envs": r["envs"],
                       "seconds": round(r["seconds"], 4), "mismatched_envs": bad}
                      for r, bad in zip(sorted(rows, key=lambda r: r["rank"]), result["per_rank"])],
            "reference": {"device": str(me.device), "envs": total, "seconds": round(ref_seconds, 4)},
            "stages": [{"name": n, "advance": None if s == 0 else advance_in(s),
                        "done_envs": None if s == 0 else done_counts[s - 1], "mismatched_envs": result["per_stage"][s]}
                       for s, n in enumerate(names)],
            "changed_envs": changed,  # envs whose track the regenerations changed (0 < changed < E)
            "coverage": result["coverage"],
            "mismatched_envs": result["mismatched_envs"],
            "first_mismatches": result["first_mismatches"],
            "match": verdict,
        }
        print(f"check_shards: E = {total} envs (base {args.base}, seed {args.seed}, N = {args.num_samples}) over "
              f"{me.world_size} rank(s), backend {me.backend}, {torch.cuda.device_count()} GPU(s) visible")
        mg.print_table([[r["rank"], r["device"], r["first"], r["envs"], f"{r['seconds']:.3f}", r["mismatched_envs"]]
                        for r in report["ranks"]]
                       + [["ref", str(me.device), args.base, total, f"{ref_seconds:.3f}", "-"]],
                       ["rank", "device", "first id", "envs", "seconds", "mismatched"])
        print()
        mg.print_table([[st["name"], "-" if st["advance"] is None else st["advance"],
                         "-" if st["done_envs"] is None else st["done_envs"], st["mismatched_envs"]]
                        for st in report["stages"]],
                       ["stage", "advance", "done envs", "mismatched envs"])
        print(f"\ncoverage of [{args.base}, {args.base + total}): {'ok' if result['coverage'] else 'WRONG'}; "
              f"envs changed by the regenerations: {changed}; mismatched envs: {result['mismatched_envs']}")
        for m in result["first_mismatches"]:
            print(f"  mismatch: global id {m['global_id']} (rank {m['rank']} env {m['env']}) from stage "
                  f"{names[m['first_stage']]}")
        print(f"match: {verdict}")
        mg.write_json(args.out, report)
    verdict = mg.broadcast(me, verdict)
    mg.finish(me)
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())

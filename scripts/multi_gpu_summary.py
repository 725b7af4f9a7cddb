#!/usr/bin/env python3
"""The summary of scripts/multi-gpu-check: reads the steps it ran (steps.tsv: name, G, exit status,
seconds, JSON report path) and their JSON reports, writes every report into one JSON file and a
markdown summary, and exits 0 only when every run passed: the builds and runs exited 0, every
check_shards run matched, the race totals are equal for every G, the deliberately skewed check
failed with mismatches on rank 1 alone, and pytest passed. Standard library only (it runs even
when torch does not import).
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path


def read_steps(path: Path) -> list:
    """[{name, g, rc, seconds, report}] in run order; rc None when not run (budget), "skipped"."""
    steps = []
    for line in path.read_text().splitlines():
        name, g, rc, seconds, report_path = (line.split("\t") + [""] * 5)[:5]
        report = None
        if report_path and Path(report_path).is_file():
            try:
                report = json.loads(Path(report_path).read_text())
            except json.JSONDecodeError as e:
                report = {"unreadable": str(e)}
        rc_value = None if rc == "-1" else (rc if rc == "skipped" else int(rc))
        steps.append({"name": name, "g": g, "rc": rc_value, "seconds": int(seconds or 0), "report": report})
    return steps


def result_of(step: dict) -> str:
    rc = step["rc"]
    if rc is None:
        return "not run (budget)"
    if rc == "skipped":
        return "skipped"
    return {0: "pass", 124: "timeout", 137: "timeout (killed)"}.get(rc, f"fail (exit {rc})")


def gpu_line() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        out = []
    return f"{len(out)} x {out[0]}" if out else "none found by nvidia-smi"


def fmt(x: float) -> str:
    return f"{x:.3e}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", required=True)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--gpus", type=int, default=0)
    ap.add_argument("--build-report", default="")
    ap.add_argument("--log", default="")
    ap.add_argument("--json", required=True)
    ap.add_argument("--md", required=True)
    a = ap.parse_args()

    steps = read_steps(Path(a.steps))
    problems = []
    md = ["# track_gen multi-GPU check (issue 18)", "",
          f"- commit: `{a.commit}`",
          f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')}",
          f"- GPUs: {gpu_line()}; visible to torch: {a.gpus}"]
    if a.gpus == 1:
        md += ["- **Not run: a real multi-GPU machine.** Every run of G > 1 ranks put them on the one GPU "
               "(gloo: NCCL refuses two ranks on one GPU); the figures below say nothing of scaling over GPUs."]
    elif a.gpus > 1:
        md += [f"- G <= {a.gpus}: one GPU per rank, NCCL."]

    md += ["", "## Runs", "", "| step | G | backend | result | seconds |", "|---|---|---|---|---|"]
    for s in steps:
        backend = (s["report"] or {}).get("backend", "")
        md.append(f"| {s['name']} | {s['g']} | {backend} | {result_of(s)} | {s['seconds']} |")
        expected_failure = s["name"] == "check_shards_skewed"
        if not expected_failure and s["rc"] not in (0, "skipped"):
            problems.append(f"{s['name']} (G = {s['g']}): {result_of(s)}")
    build = next((s for s in steps if s["name"] == "build"), None)
    if build is None:
        problems.append("no build step recorded")
    if a.build_report and Path(a.build_report).is_file():
        text = Path(a.build_report).read_text()
        versions = [line for line in text.splitlines() if line.startswith(("- torch:", "- nvcc:", "- python:"))]
        md += ["", "Build environment (python-check --build-only):", ""] + versions
    elif build is not None and build["rc"] not in (0, "skipped"):
        md += ["", "The build failed: see python-build.log."]

    checks = [s for s in steps if s["name"] == "check_shards" and s["report"]]
    md += ["", "## Sharded tracks against one process (check_shards.py)", "",
           "Hashes of every env's track (SHA-256 of every track field) after construction and 3 masked "
           "regenerations (masks from global ids), G ranks against one course of all E envs on rank 0.", "",
           "| G | backend | E | shards (first id: envs) | done envs per round | envs changed | mismatched | match |",
           "|---|---|---|---|---|---|---|---|"]
    for s in checks:
        r = s["report"]
        shards = ", ".join(f"{x['first']}: {x['envs']}" for x in r["ranks"])
        done = " / ".join(str(st["done_envs"]) for st in r["stages"][1:])
        md.append(f"| {r['world_size']} | {r['backend']} | {r['total_envs']} | {shards} | {done} | "
                  f"{r['changed_envs']} | {r['mismatched_envs']} | {r['match']} |")
        if not r["match"]:
            problems.append(f"check_shards G = {r['world_size']}: {r['mismatched_envs']} envs differ")
    if not checks:
        problems.append("no check_shards report")

    skew = next((s for s in steps if s["name"] == "check_shards_skewed"), None)
    if skew is not None:
        r = skew["report"] or {}
        ranks = r.get("ranks", [])
        caught = (skew["rc"] not in (0, None) and r.get("match") is False and len(ranks) == 2
                  and ranks[0]["mismatched_envs"] == 0 and ranks[1]["mismatched_envs"] > 0)
        md += ["", "Self-test: rank 1 built with env_offset one too high (`--skew-rank 1`, G = 2): "
               + (f"**caught** (exit {skew['rc']}, {ranks[1]['mismatched_envs']} of rank 1's {ranks[1]['envs']} envs "
                  "differ, none of rank 0's)" if caught else f"**NOT caught** ({result_of(skew)}, report {r})")]
        if not caught:
            problems.append("the skewed check_shards run did not report rank 1's mismatches")

    races = [s for s in steps if s["name"] == "race" and s["report"]]
    md += ["", "## Racing loop (race.py)", "",
           "Totals all-reduced over the ranks; a function of the global env ids alone, so equal for every G.", "",
           "| G | backend | E | steps | laps | episodes ended | env-steps/s (whole loop, slowest rank) | equal to the first |",
           "|---|---|---|---|---|---|---|---|"]
    first_totals = races[0]["report"]["totals"] if races else None
    for s in races:
        r = s["report"]
        same = r["totals"] == first_totals
        md.append(f"| {r['world_size']} | {r['backend']} | {r['total_envs']} | {r['steps']} | {r['totals']['laps']} | "
                  f"{r['totals']['episodes']} | {fmt(r['env_steps_per_s'])} | {same} |")
        if not same:
            problems.append(f"race G = {r['world_size']}: totals {r['totals']} differ from {first_totals}")
        if r["totals"]["laps"] == 0:
            problems.append(f"race G = {r['world_size']}: no lap completed (the stand-in physics is broken)")

    benches = [s for s in steps if s["name"] == "bench_shards" and s["report"]]
    md += ["", "## Scaling (bench_shards.py)", "",
           "Medians of CUDA-event timings per rank, summed over the ranks; *aggregate*: all ranks' work over the "
           "slowest rank's wall time of the timed loop. Ratios against the G = 1 run.", "",
           "| G | backend | E | regenerate: tracks/s summed | aggregate | x G=1 | step replay: env-steps/s summed | "
           "aggregate | x G=1 |", "|---|---|---|---|---|---|---|---|---|"]
    base = next((s["report"] for s in benches if s["report"]["world_size"] == 1), None)
    for s in benches:
        r = s["report"]
        ratio = (lambda key: f"{r['summed'][key] / base['summed'][key]:.2f}") if base else (lambda key: "-")
        md.append(f"| {r['world_size']} | {r['backend']} | {r['total_envs']} | {fmt(r['summed']['tracks_per_s'])} | "
                  f"{fmt(r['aggregate']['tracks_per_s'])} | {ratio('tracks_per_s')} | "
                  f"{fmt(r['summed']['env_steps_per_s'])} | {fmt(r['aggregate']['env_steps_per_s'])} | "
                  f"{ratio('env_steps_per_s')} |")
    for s in benches:
        r = s["report"]
        md += ["", f"G = {r['world_size']} per rank:", "",
               "| rank | device | envs | regenerate ms | tracks/s | step replay ms | env-steps/s |", "|---|---|---|---|---|---|---|"]
        md += [f"| {x['rank']} | {x['device']} | {x['envs']} | {x['regenerate_ms']:.4f} | {fmt(x['tracks_per_s'])} | "
               f"{x['step_replay_ms']:.4f} | {fmt(x['env_steps_per_s'])} |" for x in r["ranks"]]

    pytest_step = next((s for s in steps if s["name"] == "pytest"), None)
    if pytest_step is not None:
        summary = ""
        if a.log and Path(a.log).is_file():
            lines = [ln for ln in Path(a.log).read_text().splitlines()
                     if re.match(r"^=+ .*(passed|failed|error|skipped|no tests ran).* in .*=+$", ln)]
            summary = lines[-1] if lines else ""
        md += ["", "## pytest python/tests/test_multi_gpu.py", "", f"{result_of(pytest_step)}: {summary or 'no summary line'}"]

    md += ["", "## Verdict", ""]
    md += ["**PASS**"] if not problems else ["**FAIL**", ""] + [f"- {p}" for p in problems]
    Path(a.md).write_text("\n".join(md) + "\n")
    Path(a.json).write_text(json.dumps({"commit": a.commit, "gpus": a.gpus, "steps": steps, "problems": problems},
                                       indent=2) + "\n")
    print("\n".join(md[-(len(problems) + 3):]))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The figures of a PPO run of examples/train_ppo.py as markdown: what docs/envs.md quotes.

Reads ``<run>/progress.csv`` (one row per iteration) and ``<run>/eval.json`` and prints (or
writes with ``--out``) a report: env steps and training time, env steps/s of the whole loop,
the medians of one iteration's rollout and update, the first iteration whose ended episodes
completed laps (its env steps and the rollout + update time up to it), and the held-out
evaluation of the policy beside the pure-pursuit driver.

    python scripts/ppo_report.py build-ppo [--out build-ppo/ppo-report.md] [--commit HASH]
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from pathlib import Path


def summarize(rows: list[dict], result: dict) -> dict:
    """The report's numbers from progress.csv's rows (strings, as csv.DictReader gives them)
    and eval.json's dict."""
    if not rows:
        raise ValueError("progress.csv has no rows")
    out = {"iterations": len(rows), "env_steps": int(result["env_steps"]), "train_s": float(result["train_s"])}
    out["env_steps_per_s"] = out["env_steps"] / out["train_s"]
    out["collect_s_median"] = statistics.median(float(r["collect_s"]) for r in rows)
    out["learn_s_median"] = statistics.median(float(r["learn_s"]) for r in rows)
    elapsed = 0.0
    out["first_laps"] = None
    for r in rows:
        elapsed += float(r["collect_s"]) + float(r["learn_s"])
        laps = float(r["mean_laps"])
        if not math.isnan(laps) and laps > 0:
            out["first_laps"] = {"iteration": int(r["iteration"]), "env_steps": int(r["env_steps"]), "elapsed_s": elapsed,
                                 "mean_laps": laps}
            break
    for who in ("policy", "pure_pursuit"):
        if who in result:
            out[who] = result[who]
    return out


def markdown(s: dict, commit: str | None = None) -> str:
    lines = ["# PPO run (examples/train_ppo.py)", ""]
    if commit:
        lines += [f"- commit: `{commit}`"]
    lines += [f"- {s['iterations']} iterations, {s['env_steps']:,} env steps in {s['train_s']:.1f} s of training: "
              f"{s['env_steps_per_s']:,.0f} env steps/s for the whole loop",
              f"- medians per iteration: rollout {s['collect_s_median']:.3f} s, PPO update {s['learn_s_median']:.3f} s"]
    f = s["first_laps"]
    if f is None:
        lines += ["- no ended episode completed a lap"]
    else:
        lines += [f"- first laps at iteration {f['iteration']} ({f['env_steps']:,} env steps, {f['elapsed_s']:.1f} s of "
                  f"rollout + update): {f['mean_laps']:.2f} laps per ended episode"]
    for who, name in (("policy", "policy (mean action)"), ("pure_pursuit", "pure pursuit")):
        e = s.get(who)
        if e:
            lines += [f"- held-out {name}: {e['mean_laps']:.3f} laps per episode, {e['total_laps']} laps in "
                      f"{e['episodes']} episodes, {100 * e['finished_share']:.1f} % finished (seeds {e['seeds']})"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="the --out directory of examples/train_ppo.py")
    p.add_argument("--out", help="write the report here (default: print it)")
    p.add_argument("--commit", help="the commit to name in the report")
    args = p.parse_args(argv)
    run = Path(args.run)
    rows = list(csv.DictReader(open(run / "progress.csv")))
    text = markdown(summarize(rows, json.loads((run / "eval.json").read_text())), args.commit)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

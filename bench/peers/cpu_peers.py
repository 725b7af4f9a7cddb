#!/usr/bin/env python3
"""CPU peers of track_gen's host backend: how fast other libraries make one race track on one core.

Peers (each measured in its own Python process: EnvPool and pybox2d both carry Box2D, and a
process that loads both crashed in our trial):

* ``gymnasium_car_racing``: Gymnasium's ``CarRacing`` (``gymnasium.envs.box2d.car_racing``).
  - scenario ``generate``: ``CarRacing._create_track()`` called until it succeeds, as ``reset()``
    does (the retries are part of the cost, counted in ``mean_attempts``). It draws 12 checkpoint
    angles and radii, traces the track by steering towards them, checks that it closes, and creates
    one Box2D static body (a sensor fixture) per road tile. Untimed before each call: the previous
    track's tile bodies are destroyed (what ``reset()`` does first).
  - scenario ``reset``: the whole ``env.reset()``: the above plus the car (Box2D bodies) and the
    first observation, a 96x96 RGB frame drawn with pygame (``step(None)`` renders
    ``state_pixels`` even with ``render_mode=None``).
* ``envpool_car_racing``: EnvPool's C++ ``CarRacing-v2`` (``envpool.make(..., num_envs=1,
  batch_size=1, num_threads=1)``), scenario ``reset``: ``env.reset()`` through the Python binding:
  track creation with Box2D tiles, the car, and rendering the 96x96 RGB observation, on the pool's
  one worker thread while the calling thread waits.

Method: ``--warmup`` untimed calls, then ``--repeats`` (>= 20) calls each timed with
``time.perf_counter`` (wall) and ``time.process_time`` (CPU time of the whole process, every
thread); stopped early after ``--row-cap-s`` seconds once 20 calls are timed. Tracks per second
per core = 1 / median CPU time (core-seconds per track, every thread of the process counted, so
time spent descheduled on a shared machine is not charged and a second busy thread is);
``tracks_per_s`` = 1 / median wall time.

Output: with ``--out-dir DIR``, DIR/<peer>.json for each peer, in the benchmark suite's schema
(``{"peer", "version", "device", "command", "rows": [...], "errors": [...]}``); a peer whose
package is missing gets ``"skipped": "<why>"`` and no rows. A markdown table on stdout.
"""

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

PEERS = ("gymnasium", "envpool")
PEER_NAMES = {"gymnasium": "gymnasium_car_racing", "envpool": "envpool_car_racing"}


def cpu_name():
    """The CPU's model name from /proc/cpuinfo (platform.processor() elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def quantile(sorted_values, q):
    """Quantile q of sorted values, interpolated linearly between the two closest ranks."""
    pos = q * (len(sorted_values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    f = pos - lo
    return sorted_values[lo] * (1.0 - f) + sorted_values[hi] * f


def time_calls(call, before, args):
    """Warm-up, then timed calls of call() (before() untimed ahead of each). Returns the wall and
    CPU times [s] and the values call() returned."""
    for _ in range(args.warmup):
        if before:
            before()
        call()
    wall, cpu, results = [], [], []
    start = time.perf_counter()
    while len(wall) < args.repeats:
        if before:
            before()
        c0 = time.process_time()
        t0 = time.perf_counter()
        results.append(call())
        t1 = time.perf_counter()
        c1 = time.process_time()
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
        if len(wall) >= 20 and time.perf_counter() - start > args.row_cap_s:
            break
    return wall, cpu, results


def make_row(scenario, what, wall, cpu, stats=None):
    """A row of the suite's schema: one track per call (E = 1)."""
    w = sorted(x * 1e3 for x in wall)
    c = sorted(x * 1e3 for x in cpu)
    median, cpu_median = quantile(w, 0.5), quantile(c, 0.5)
    row = {
        "scenario": scenario,
        "E": 1,
        "N": None,
        "repeats": len(w),
        "median_ms": median,
        "p10_ms": quantile(w, 0.1),
        "p90_ms": quantile(w, 0.9),
        "min_ms": w[0],
        "max_ms": w[-1],
        "cpu_median_ms": cpu_median,
        "tracks_per_s": 1e3 / median,
        "tracks_per_s_per_core": 1e3 / cpu_median,
        "what": what,
    }
    if stats is not None:
        row["stats"] = stats
    return row


def run_gymnasium(args):
    """Gymnasium's CarRacing: _create_track() until success, and reset()."""
    import gymnasium
    from gymnasium.envs.box2d import car_racing

    env = car_racing.CarRacing(render_mode=None)
    env.reset(seed=args.seed)
    doc = {"version": "gymnasium " + gymnasium.__version__}
    try:
        import Box2D  # noqa: F401  (the physics package CarRacing uses)

        doc["version"] += ", Box2D " + getattr(Box2D, "__version__", "?")
    except ImportError:
        pass

    def clear_road():
        # The first half of CarRacing._destroy(): the tile bodies (the car is left alone).
        for tile in env.road:
            env.world.DestroyBody(tile)
        env.road = []
        env.road_poly = []

    def create():
        attempts = 1
        while not env._create_track():  # noqa: SLF001 (the peer's own track builder)
            attempts += 1
        return attempts, env.track  # the list of (alpha, beta, x, y) tile centres, kept for the stats

    rows, errors = [], []
    wall, cpu, results = time_calls(create, clear_road, args)
    # Per track: the length of the closed polyline of its tile centres, in Box2D world units, and
    # its tile count (each tile is a reward checkpoint: CarRacing's gates).
    lengths = [sum(math.hypot(t[i][2] - t[i - 1][2], t[i][3] - t[i - 1][3]) for i in range(len(t))) for _, t in results]
    stats = {
        "mean_length_m": statistics.fmean(lengths),
        "min_length_m": min(lengths),
        "max_length_m": max(lengths),
        "length_unit": "Box2D world units, not metres (CarRacing: 21/6 = 3.5 per tile step)",
        "mean_gates": statistics.fmean(len(t) for _, t in results),
        "gates_are": "road tiles",
        "mean_attempts": statistics.fmean(a for a, _ in results),
    }
    rows.append(make_row("generate", "CarRacing._create_track() until it succeeds (Box2D tile bodies included)",
                         wall, cpu, stats))

    # The tile counts of many tracks: measured on the reset() calls below.
    tile_counts = []

    def reset():
        env.reset()
        tile_counts.append(len(env.track))

    try:
        wall, cpu, _ = time_calls(reset, None, args)
        rows.append(make_row("reset", "env.reset(): track, car, and the first 96x96 observation drawn with pygame",
                             wall, cpu, {"mean_gates": statistics.fmean(tile_counts), "gates_are": "road tiles"}))
    except Exception as e:  # pygame missing, for one
        errors.append(f"gymnasium reset(): {type(e).__name__}: {e}")
    env.close()
    doc.update(rows=rows, errors=errors)
    return doc


def run_envpool(args):
    """EnvPool's C++ CarRacing-v2, one env, one worker thread: reset()."""
    import envpool

    env = envpool.make("CarRacing-v2", env_type="gymnasium", num_envs=1, batch_size=1, num_threads=1,
                       seed=args.seed)
    wall, cpu, _ = time_calls(lambda: env.reset(), None, args)
    row = make_row("reset", "env.reset() of envpool CarRacing-v2 (C++: track with Box2D tiles, car, 96x96 "
                   "observation), num_envs=1, batch_size=1, num_threads=1", wall, cpu)
    env.close()
    return {"version": "envpool " + envpool.__version__, "rows": [row], "errors": []}


def run_one(peer, args):
    """Measures one peer in this process; returns its document (without the common fields)."""
    try:
        if peer == "gymnasium":
            return run_gymnasium(args)
        return run_envpool(args)
    except ImportError as e:
        return {"version": None, "rows": [], "errors": [], "skipped": f"not installed: {e}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of: " + ", ".join(PEERS))
    parser.add_argument("--repeats", type=int, default=50, help="timed calls per row (>= 20; default 50)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--row-cap-s", type=float, default=20.0,
                        help="stop a row after this many seconds once 20 calls are timed (default 20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="--repeats 20 --warmup 1 --row-cap-s 5")
    parser.add_argument("--out-dir", help="write <peer>.json files here")
    parser.add_argument("--one", choices=PEERS, help=argparse.SUPPRESS)  # child process: one peer, JSON on stdout
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.warmup, args.row_cap_s = 20, 1, 5.0
    if args.repeats < 20:
        parser.error("--repeats must be >= 20")

    if args.one:
        json.dump(run_one(args.one, args), sys.stdout)
        return 0

    peers = [p for p in args.peers.split(",") if p]
    for p in peers:
        if p not in PEERS:
            parser.error(f"unknown peer {p!r}")
    command = " ".join([os.path.basename(sys.executable)] + sys.argv)
    docs = []
    for peer in peers:
        child = [sys.executable, os.path.abspath(__file__), "--one", peer, "--repeats", str(args.repeats),
                 "--warmup", str(args.warmup), "--row-cap-s", str(args.row_cap_s), "--seed", str(args.seed)]
        doc = {"peer": PEER_NAMES[peer], "version": None,
               "device": f"{cpu_name()} (1 thread), Python {platform.python_version()}", "command": command}
        try:
            out = subprocess.run(child, capture_output=True, text=True, check=False,
                                 timeout=3 * args.row_cap_s + 60)
            if out.returncode != 0:
                tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
                doc.update(rows=[], errors=[f"exit status {out.returncode}: " + " | ".join(tail)])
            else:
                doc.update(json.loads(out.stdout))
        except subprocess.TimeoutExpired:
            doc.update(rows=[], errors=[f"timed out after {3 * args.row_cap_s + 60:.0f} s"])
        docs.append(doc)
        if args.out_dir:
            os.makedirs(args.out_dir, exist_ok=True)
            with open(os.path.join(args.out_dir, doc["peer"] + ".json"), "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1)

    print(f"CPU peers on {cpu_name()}, one thread; command: {command}\n")
    print("| peer | scenario | calls | median ms (p10-p90) | CPU ms | tracks/s/core | what |")
    print("|:---|:---|---:|---:|---:|---:|:---|")
    for doc in docs:
        if doc.get("skipped"):
            print(f"| {doc['peer']} | - | - | - | - | - | skipped: {doc['skipped']} |")
        for e in doc.get("errors", []):
            print(f"| {doc['peer']} | - | - | - | - | - | error: {e} |")
        for r in doc.get("rows", []):
            print(f"| {doc['peer']} | {r['scenario']} | {r['repeats']} | {r['median_ms']:.3f} "
                  f"({r['p10_ms']:.3f}-{r['p90_ms']:.3f}) | {r['cpu_median_ms']:.3f} | "
                  f"{r['tracks_per_s_per_core']:.1f} | {r['what']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared by torch_peer.py and warp_peer.py: the `track` preset's parameters, the command line,
the time guards, the timing summary and the JSON report (written after every row, so that an
interrupted run still leaves a valid file).

The parameter values are those of `presets::track` (include/track_gen/presets.hpp) with the
defaults of include/track_gen/params.hpp; the gate spacing (1 m) and the agent placement are
those of bench/track_gen_bench.cu.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import tempfile
import time
from contextlib import contextmanager

import numpy as np

# --- presets::track (presets.hpp) with the defaults of params.hpp ------------------------------
CONTROL_POINTS = 12          # random_polar_params::control_points
RADIUS_MIN = 4.5             # random_polar_params::radius_min [m]
RADIUS_MAX = 6.0             # random_polar_params::radius_max [m]
ANGLE_JITTER = 0.3           # random_polar_params::angle_jitter (fraction of 2 pi / M)
LOBE_AMPLITUDE_MIN = 0.48    # random_polar_params::lobe_amplitude_min (fraction of the radius)
LOBE_AMPLITUDE_MAX = 0.8     # random_polar_params::lobe_amplitude_max
ELEVATION_MIN = 0.0          # random_polar_params::elevation_min [m]
ELEVATION_MAX = 0.0          # random_polar_params::elevation_max [m]
REPULSE_CLEARANCE = 1.5      # polygon_separation_params::clearance [m]
REPULSE_SMOOTHING = 0.12     # polygon_separation_params::smoothing
REPULSE_MAX_ITERATIONS = 12  # polygon_separation_params::max_iterations
REPULSE_TOLERANCE = 1e-3     # polygon_separation_params::tolerance [m]
SAMPLES_PER_SEGMENT = 32     # spline_params::samples_per_segment
LENGTH_MIN = 10.0            # validate_params::length_min [m]
LENGTH_MAX = 60.0            # validate_params::length_max [m]
TURN_RADIUS_MIN = 0.4        # validate_params::turn_radius_min [m]
CLEARANCE_MARGIN = 0.1       # validate_params::clearance_margin [m]
MAX_ATTEMPTS = 16            # validate_params::max_attempts
HALF_WIDTH = 0.3             # track_params::half_width [m]
GATE_HALF_HEIGHT = 1.0       # track_params::gate_half_height [m]
FALLBACK_CONTROL_POINTS = 16  # detail::fallback_control_points (generate_track.hpp)
PROJECTION_WINDOW = 8        # default_tuning::projection_window (policy.hpp)
GATE_SPACING = 1.0           # bench/track_gen_bench.cu's default --spacing [m]
AGENT_ADVANCE = 0.15         # bench/track_gen_bench.cu: metres per step along the track

# Derived values, computed as stages::validate and generate_track.hpp do.
CLEARANCE = 2.0 * HALF_WIDTH + CLEARANCE_MARGIN                     # c of the clearance test [m]
WINDOW_ARC = math.pi * max(TURN_RADIUS_MIN, 0.5 * CLEARANCE)        # arc of the local window [m]
MAX_CURVATURE = 1.0 / max(TURN_RADIUS_MIN, HALF_WIDTH + 0.5 * CLEARANCE_MARGIN)  # [1/m]
FALLBACK_MINOR = 0.5 * (LENGTH_MIN + LENGTH_MAX) / 7.0903           # b of the ellipse [m]
FALLBACK_MAJOR = 1.25 * FALLBACK_MINOR                              # a = 1.25 b [m]
MAX_GATES = max(1, int(math.ceil(LENGTH_MAX / GATE_SPACING)))      # G_max (detail/generate/plan.hpp, make_generator_plan)

# Progress flag bits (status.hpp, progress_flags) and status bits used by step.
HAS_LAST, OFF_TRACK, WRONG_WAY, GATE_PASSED, LAP_COMPLETED, FULL_SEARCH, INVALID_POSITION = (
    1, 2, 4, 8, 16, 32, 64)
STEP_EVENTS = OFF_TRACK | WRONG_WAY | GATE_PASSED | LAP_COMPLETED | FULL_SEARCH | INVALID_POSITION
STATUS_INVALID_INPUT = 4


def int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def parser(peer: str, default_budget_s: float) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=f"{peer} peer of track_gen: regenerate every env (presets::track) and step, timed.")
    p.add_argument("--envs", type=int_list, default=[4096, 65536, 1048576],
                   help="E of the generation rows (default 4096,65536,1048576)")
    p.add_argument("--samples", type=int_list, default=[128, 256, 512],
                   help="N of the generation rows (default 128,256,512)")
    p.add_argument("--step-envs", type=int_list, default=[4096, 16384, 65536, 262144, 1048576, 4194304],
                   help="E of the step rows (default 4096,16384,65536,262144,1048576,4194304)")
    p.add_argument("--step-samples", type=int, default=256, help="N of the tracks of the step rows (default 256)")
    p.add_argument("--repeats", type=int, default=20, help="timed calls per row, >= 20 (default 20)")
    p.add_argument("--min-repeats", type=int, default=None,
                   help="a generation row too slow for --repeats within the row cap runs with fewer timed calls, "
                        "down to this many (>= 3; default: --repeats, i.e. such a row is skipped); the row "
                        "records its repeats")
    p.add_argument("--warmup", type=int, default=2, help="untimed calls per row before the timed ones (default 2)")
    p.add_argument("--json", required=True, help="output file (written after every row)")
    p.add_argument("--device", default="cuda:0", help="cuda:K or cpu (cpu: correctness checks, perf_counter timing)")
    p.add_argument("--quick", action="store_true",
                   help="shrink the grid: E 4096,65536; N 128,256; step E 4096,65536,1048576")
    p.add_argument("--row-cap-s", type=float, default=60.0,
                   help="a row predicted to take longer is recorded in 'errors' and skipped (default 60)")
    p.add_argument("--budget-s", type=float, default=default_budget_s,
                   help=f"time for all rows of this run; later rows that would not fit are skipped (default {default_budget_s:g})")
    p.add_argument("--generate-share", type=float, default=0.6,
                   help="share of --budget-s the generation rows may use when step rows follow (default 0.6)")
    p.add_argument("--seed", type=int, default=1, help="seed of the random streams (default 1)")
    p.add_argument("--no-step", action="store_true", help="skip the step rows")
    p.add_argument("--no-generate", action="store_true", help="skip the generation rows")
    p.add_argument("--stats-only", action="store_true",
                   help="correctness check, not a benchmark: each (E, N) generated once (rows with repeats 1), "
                        "then a 'step_check' row: agents driven --check-steps steps on min(--step-envs) tracks")
    p.add_argument("--check-steps", type=int, default=600,
                   help="steps of the step check (default 600: about two laps at 0.15 m per step)")
    return p


def finish_args(args: argparse.Namespace, p: argparse.ArgumentParser) -> argparse.Namespace:
    if args.quick:
        args.envs = [e for e in args.envs if e <= 65536] or [4096]
        args.samples = [n for n in args.samples if n <= 256] or [128]
        args.step_envs = [e for e in args.step_envs if e <= 1048576] or [4096]
    if args.repeats < 20 and not args.stats_only:
        p.error("--repeats must be >= 20")
    if args.min_repeats is None:
        args.min_repeats = args.repeats
    if not 3 <= args.min_repeats <= args.repeats:
        p.error("--min-repeats must be in [3, --repeats]")
    if args.warmup < 1:
        p.error("--warmup must be >= 1")
    if min(args.samples + [args.step_samples]) < 8 or max(args.samples + [args.step_samples]) > 4096:
        p.error("samples must be in [8, 4096] (track_params::num_samples)")
    args.envs = sorted(set(args.envs))
    args.samples = sorted(set(args.samples))
    args.step_envs = sorted(set(args.step_envs))
    return args


def summarize(ms: list[float]) -> dict:
    a = np.asarray(ms, dtype=np.float64)
    return {"repeats": int(a.size), "median_ms": float(np.median(a)), "p10_ms": float(np.percentile(a, 10)),
            "p90_ms": float(np.percentile(a, 90)), "min_ms": float(a.min()), "max_ms": float(a.max())}


def timed_row(scenario: str, e: int, n: int, ms: list[float], stats: dict | None = None,
              compile_s: float | None = None) -> dict:
    """A row of the report: the summary of `ms`, the rate, the batch statistics (generate)."""
    row = {"scenario": scenario, "E": e, "N": n, **summarize(ms)}
    rate = "tracks_per_s" if scenario == "generate" else "env_steps_per_s"
    row[rate] = e / (row["median_ms"] * 1e-3)
    if stats is not None:
        row["stats"] = stats
    if compile_s is not None:
        row["compile_s"] = compile_s
    return row


def track_stats(length, gates, valid, fallback, attempts) -> dict:
    """Statistics of a generated batch (numpy arrays [E]), as the library's status words give them."""
    length = np.asarray(length, dtype=np.float64)
    return {"mean_length_m": float(length.mean()), "min_length_m": float(length.min()),
            "max_length_m": float(length.max()), "mean_gates": float(np.asarray(gates, np.float64).mean()),
            "valid_fraction": float(np.asarray(valid, np.float64).mean()),
            "fallback_fraction": float(np.asarray(fallback, np.float64).mean()),
            "mean_attempts": float(np.asarray(attempts, np.float64).mean())}


class Report:
    """The JSON report; `save()` rewrites the whole file atomically (temp file + rename)."""

    def __init__(self, peer: str, version: str, device: str, path: str):
        self.path = path
        self.doc = {"peer": peer, "version": version, "device": device,
                    "command": " ".join([sys.executable] + sys.argv), "rows": [], "errors": []}
        self.save()

    def row(self, row: dict) -> None:
        self.doc["rows"].append(row)
        self.save()
        print(json.dumps(row), flush=True)

    def error(self, scenario: str, e: int | None, n: int | None, message: str) -> None:
        self.doc["errors"].append({"scenario": scenario, "E": e, "N": n, "message": message})
        self.save()
        print(f"[{self.doc['peer']}] {scenario} E={e} N={n}: {message}", file=sys.stderr, flush=True)

    def save(self) -> None:
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".peer-", suffix=".json", dir=folder)
        with os.fdopen(fd, "w") as f:
            json.dump(self.doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, self.path)


def exit_on_sigterm() -> None:
    """SIGTERM (a job runner's timeout) becomes SystemExit, so that main() records it in the JSON."""
    def stop(signum, frame):
        raise SystemExit(f"terminated by signal {signum}")

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, stop)


class Timer:
    """Event pairs around each timed call on a GPU (the peer's own CUDA events); perf_counter
    between synchronisations on the CPU. sync(): wait for the device; new_event(): a timing
    event (None: CPU); record(event): record it on the current stream; elapsed(a, b): ms."""

    def __init__(self, sync, new_event=None, record=None, elapsed=None):
        self.sync, self.new_event, self.record, self.elapsed = sync, new_event, record, elapsed

    def measure(self, call, before=None, count: int = 1) -> list[float]:
        """Milliseconds of `count` calls of `call`; `before(r)` runs untimed before call r."""
        if self.new_event is None:
            out = []
            for r in range(count):
                if before is not None:
                    before(r)
                out.append(1e3 * self.wall(call))
            return out
        events = [(self.new_event(), self.new_event()) for _ in range(count)]
        for r, (a, b) in enumerate(events):
            if before is not None:
                before(r)
            self.record(a)
            call()
            self.record(b)
        self.sync()
        return [float(self.elapsed(a, b)) for a, b in events]

    def wall(self, call) -> float:
        """Seconds of one call between synchronisations."""
        self.sync()
        t0 = time.perf_counter()
        call()
        self.sync()
        return time.perf_counter() - t0


class RowTimeout(Exception):
    pass


@contextmanager
def alarm(seconds: float, what: str):
    """Raises RowTimeout in the main thread after `seconds` (POSIX SIGALRM; no-op elsewhere).
    Work already queued on the GPU keeps running: the caller synchronises before going on."""
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def fire(signum, frame):
        raise RowTimeout(f"{what}: exceeded {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class Budget:
    """Time guards: the per-row cap and what is left of the run's budget. A row is predicted
    from one measured call (calls = warm-up + repeats + captures) before the timed part."""

    def __init__(self, total_s: float, row_cap_s: float):
        self.start = time.perf_counter()
        self.total_s = total_s
        self.row_cap_s = row_cap_s
        self.deadline = self.start + total_s  # of the current phase
        self.per_call = {}  # (scenario, N) -> (E, seconds per call) of the last row run

    def phase(self, share: float) -> None:
        """The rows from now on may use `share` of the run's budget, counted from its start
        (the generation rows leave the rest to the step rows)."""
        self.deadline = self.start + share * self.total_s

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def limit(self) -> float:
        return max(0.0, min(self.row_cap_s, self.left()))

    def predict(self, scenario: str, e: int, n: int) -> float | None:
        """Seconds per call at E = e, scaled linearly from the last measured row of that N."""
        known = self.per_call.get((scenario, n))
        return None if known is None else known[1] * e / known[0]

    def record(self, scenario: str, e: int, n: int, seconds_per_call: float) -> None:
        self.per_call[(scenario, n)] = (e, seconds_per_call)

    def admit(self, rep: "Report", scenario: str, e: int, n: int, calls: int) -> bool:
        """Whether the row (scenario, E, N) of `calls` calls fits, predicted from the last row of
        that N; if not, the reason goes to the report's errors."""
        why = self.check(f"{scenario} E={e} N={n}", self.predict(scenario, e, n), calls)
        if why:
            rep.error(scenario, e, n, why)
        return why is None

    def fit_repeats(self, seconds_per_call: float, fixed_calls: int, repeats: int, min_repeats: int) -> int:
        """Timed calls of a row that fit in its limit (row cap, budget left) next to `fixed_calls`
        untimed ones: `repeats` when they fit, else as many as fit down to `min_repeats`, else 0."""
        fit = int(self.limit() / max(seconds_per_call, 1e-9)) - fixed_calls
        return repeats if fit >= repeats else (fit if fit >= min_repeats else 0)

    def check(self, what: str, seconds_per_call: float | None, calls: int) -> str | None:
        """Why a row cannot run (None: it fits)."""
        if seconds_per_call is None:
            return None if self.left() > 0 else f"{what}: this phase of the run budget ({self.total_s:.0f} s) is spent"
        need = seconds_per_call * calls
        if need > self.row_cap_s:
            return f"{what}: predicted {need:.1f} s ({calls} calls of {seconds_per_call:.3f} s) > row cap {self.row_cap_s:.0f} s"
        if need > self.left():
            return (f"{what}: predicted {need:.1f} s > {max(self.left(), 0):.1f} s left of this phase of the run "
                    f"budget {self.total_s:.0f} s")
        return None


def build_step_tracks(rep: Report, budget: Budget, timer: Timer, sizes: list[int], n: int, build, release,
                      like_generate: bool = True):
    """Tracks for the step rows, built once for the largest E of `sizes` that can be built
    (build(e) -> (batch, regenerate callable)); the smaller rows use its first envs. A build
    may take a third of the time left (the rest is for the step rows); one predicted to take
    longer (from an earlier build or, if like_generate, the generation rows of that N: a build
    is one regeneration), or that fails (memory,
    time), is recorded in the errors and the next smaller size is tried; release() frees what
    a failed attempt left. Returns (batch or None, the sizes left)."""
    sizes = list(sizes)
    while sizes:
        e = sizes[-1]
        limit = budget.left() / 3.0
        known = budget.predict("build", e, n)
        predicted = known if known is not None or not like_generate else budget.predict("generate", e, n)
        if predicted is not None and predicted > limit:
            rep.error("step", e, n, f"building the tracks of E={e} would take about {predicted:.1f} s "
                                    f"> {max(limit, 0):.1f} s (a third of the time left)")
            sizes.pop()
            continue
        try:
            batch, regenerate = build(e)
            with alarm(limit, f"building the tracks of E={e}"):
                budget.record("build", e, n, timer.wall(regenerate))
            return batch, sizes
        except Exception as exc:  # noqa: BLE001 - recorded, the smaller sizes go on
            if isinstance(exc, RowTimeout):
                timer.sync()
                budget.record("build", e, n, limit)  # a lower bound: smaller sizes are predicted from it
            text = str(exc).splitlines()[0] if str(exc) else ""
            rep.error("step", e, n, f"cannot build the tracks: {type(exc).__name__}: {text}")
            sizes.pop()
            release()
    return None, sizes


def step_sizes(rep: Report, budget: Budget, timer: Timer, args, build, release, calls: int,
               like_generate: bool = True):
    """The step rows to run: yields (batch, E) for each E of --step-envs that has tracks (see
    build_step_tracks) and fits the budget (`calls` calls per row)."""
    n = args.step_samples
    batch, sizes = build_step_tracks(rep, budget, timer, args.step_envs, n, build, release, like_generate)
    for e in sizes:
        if budget.admit(rep, "step", e, n, calls):
            yield batch, e


def time_steps(timer: Timer, step, place, first: int, warmup: int, repeats: int) -> list[float]:
    """Milliseconds of `repeats` calls of step(), after `warmup` untimed ones; place(r) moves the
    agents (untimed) before each, r counting from `first`."""
    for w in range(warmup):
        place(first + w)
        step()
    return timer.measure(step, before=lambda r: place(first + warmup + r), count=repeats)


def generation_grid(args) -> list[tuple[int, int]]:
    """(E, N) of the generation rows: N outer, E ascending, so each row is predicted from the
    previous E at the same N."""
    return [(e, n) for n in args.samples for e in args.envs]


def expected_laps(u, length, gates, steps: int, tolerance: float = 0.05):
    """Range (low, high) of the laps an agent of the step check completes: it starts at arc u L
    (float32, as placed), advances AGENT_ADVANCE per step from the second step on; gate 1 is the
    first to count, so a start past gate 1 loses the first crossing of the start line. Starts
    and ends within `tolerance` metres of a gate may go either way (the lateral swing moves the
    agent across the gate plane's arc position)."""
    u = np.asarray(u, np.float32)
    length = np.asarray(length, np.float32)
    gate1 = length / np.asarray(gates, np.float32)
    s0 = u * length
    end = s0 + np.float32(AGENT_ADVANCE) * np.float32(steps - 1)
    low = np.floor((end - tolerance) / length).astype(np.int64) - (s0 >= gate1 - tolerance)
    high = np.floor((end + tolerance) / length).astype(np.int64) - (s0 >= gate1 + tolerance)
    return np.maximum(low, 0), np.maximum(high, 0)


def step_check_row(e: int, n: int, steps: int, laps, gates_passed, expected, off, wrong, full) -> dict:
    """Outcome of the step check; expected: expected_laps(); off/wrong/full: flag counts summed
    over steps 2..steps."""
    laps = np.asarray(laps)
    env_steps = float(e) * (steps - 1)
    return {"scenario": "step_check", "E": e, "N": n, "steps": steps, "mean_laps": float(laps.mean()),
            "mean_gates_passed": float(np.asarray(gates_passed, np.float64).mean()),
            "laps_as_expected": float(((laps >= expected[0]) & (laps <= expected[1])).mean()),
            "off_track_fraction": off / env_steps, "wrong_way_fraction": wrong / env_steps,
            "full_search_fraction": full / env_steps}

#!/usr/bin/env python3
"""The published seed library, TrackGen (github.com/AntoineRichard/TrackGen, Python / NVIDIA Warp,
commit 1d8a6e5), measured as its own docs recommend, in the JSON format of the other peers
(peer_common.Report), "peer": "trackgen". It is imported from .peers/TrackGen (scripts/fetch-seed-peer;
no licence, so it is never copied into this repository). Its package is also named `track_gen`:
this process puts .peers/TrackGen first on sys.path, never imports our python package, and checks
that the module it got lives under .peers/.

Scenarios (--scenarios, all by default):

  generate         TrackGenerator(TrackGenConfig(num_envs=E, generator=G), rng).generate() for G in
                   --generators (polar, bezier, hull, voronoi, checkpoint: its CUDA graph, captured by
                   the first call, replayed by the later ones; repulsive: eager, it cannot be
                   captured, and only E <= --repulsive-max-envs); other config fields default
                   (half_width 0.1, num_points 256). Fresh seeds before each timed call (untimed
                   rng.set_seeds_warp); timed: the whole generate() call (seed copy, replay, its
                   synchronize) between CUDA events, and its wall time.
  gates            GateGenerator(GateGenConfig(...)).generate(): 3D gate courses, the config
                   closest to our presets::gate_course (see GATE_CONFIG below), timed like generate.
  step             Course(mode="track", bezier, collision="segments", checkpoint_spacing 0.6).step()
                   = progress.update() + collision.query(); and progress.update() + the sdf
                   CollisionChecker's query() (what Course(collision="sdf").step() runs).
  progress_update  progress.update() alone.
  collision        CollisionChecker.query(), method "segments" and "sdf".
  sdf_bake         CollisionChecker(method="sdf").bake().
  localize         TrackLocalizer(track).query() cold (full scan) and warm (warm_window=8).
  reset            Course.reset(mask) with 1 % of the envs set (--reset-fraction).

The per-step utilities are timed as trackgen-h200.md measured them: each call captured once
into its own CUDA graph (track_gen.set_capturing(True) + wp.ScopedCapture) and replayed;
`median_ms` etc. are CUDA-event times of single replays (--step-repeats), `host_ms` the launch +
synchronize wall time of one replay, `batched_ms` the mean per replay of --step-repeats
back-to-back replays, `eager_ms` the call as the library makes it (it synchronizes after each
launch). Before each single replay an untimed kernel moves every agent one centreline point
further along its track, half a half-width side to side, its box yawed along the track
(E agents, 1 box each, half extents --box-half-extents). On the CPU nothing is captured: eager
calls, perf_counter.

Beyond int32 limits: TrackGenerator / Course cannot be built at E = 1,048,576 (an array of
6.4e9 elements). Such rows are tiled from --tile-envs (262,144) as trackgen-h200.md did: the
generation rows time E / tile generate() calls of one generator of the tile size (fresh seeds
each); the utility rows build a Course of the tile size, copy its Track E / tile times into one
Track of E envs and bind the utilities to that (CheckpointSampler, ProgressTracker,
CollisionChecker, TrackLocalizer: what Course builds). The sdf resolution is lowered (128 -> 64
-> 32) until E * R^2 fits int32. Rows that still fail are recorded in "errors" with the reason.
--max-build-envs forces the tiled path above a size (to test it, or to skip the attempt).

Warp compiles TrackGen's kernels into --kernel-cache (default .peers/warp-kernel-cache), all of
them before the first row (setup.module_load_s in the JSON), so that a later run on the same
machine loads them; the compile time is in no row.

Time guards as the other peers: a row predicted (from the first call) over --row-cap-s or over
what is left of --budget-s is skipped and recorded; SIGALRM stops an overrunning row; the JSON is
rewritten after every row.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import os
import platform
import sys
import time
import traceback

import numpy as np

import peer_common as pc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_TRACKGEN = os.path.join(ROOT, ".peers", "TrackGen")

GENERATORS = ("bezier", "polar", "hull", "voronoi", "checkpoint", "repulsive")
SCENARIOS = ("generate", "gates", "step", "progress_update", "collision", "sdf_bake", "localize", "reset")
INT32_MAX = 2 ** 31 - 1

# GateGenerator config closest to presets::gate_course (include/track_gen/presets.hpp): 6-12 gates
# (bezier's corner sampler draws randi[min_num_points, max_num_points] anchors, one gate each; polar
# always emits its 12 knots), anchors in a 25 m square (scale: our anchors sit at radii 10-14 m),
# gate centres at least 3 m apart (gate_radius 1.5: TrackGen's spacing is 2 * gate_radius), a
# 1.5 m wide gate (gate_width 1.5 = our 2 * half_width 0.75), random-walk altitude in [1, 4] m
# with grades up to 0.5 (z_max_step, also the validity grade z_valid_grade), level (yaw-only) gates.
GATE_CONFIG = dict(generator="bezier", min_gates=6, max_gates=12, min_num_points=6, max_num_points=12,
                   scale=25.0, gate_radius=1.5, gate_width=1.5, gate_ordering="ccw", gate_align="yaw_only",
                   z_profile="random_walk", z_base=2.5, z_min=1.0, z_max=4.0, z_max_step=0.5, z_valid_grade=0.5)

tg = None  # TrackGen's track_gen, imported by import_trackgen()
KERNEL_CACHE = None  # --kernel-cache
wp = None


def import_trackgen(path: str):
    """TrackGen's `track_gen` from `path` (first on sys.path), never ours."""
    global tg, wp
    path = os.path.realpath(path)
    if not os.path.isfile(os.path.join(path, "track_gen", "__init__.py")):
        raise FileNotFoundError(f"{path}/track_gen not found: run scripts/fetch-seed-peer")
    if "track_gen" in sys.modules:
        raise RuntimeError(f"a track_gen is already imported from {sys.modules['track_gen'].__file__}")
    sys.path.insert(0, path)
    import warp  # noqa: PLC0415
    warp.config.quiet = True
    if KERNEL_CACHE:
        warp.config.kernel_cache_dir = KERNEL_CACHE
    import track_gen  # noqa: PLC0415
    got = os.path.realpath(track_gen.__file__)
    if not got.startswith(path + os.sep):
        raise RuntimeError(f"imported track_gen from {got}, not from {path}")
    tg, wp = track_gen, warp
    return track_gen


def commit_of(path: str) -> str:
    try:
        with open(os.path.join(path, "COMMIT")) as f:
            return f.read().strip()[:12]
    except OSError:
        return "unknown"


def first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"


# --- timing ---------------------------------------------------------------------------------------

class Clock(pc.Timer):
    """CUDA events (wp.Event(enable_timing=True)) around calls on a GPU, perf_counter on the CPU;
    wall(call) (peer_common.Timer): seconds of one call between synchronisations."""

    def __init__(self, device):
        super().__init__(lambda: wp.synchronize_device(device))
        self.device = device
        self.cuda = device.is_cuda

    def event(self):
        return wp.Event(self.device, enable_timing=True)

    def calls(self, call, before=None, count=1):
        """(event ms, wall ms) of `count` calls; before(r) runs untimed before call r."""
        events, wall = [], []
        for r in range(count):
            if before is not None:
                before(r)
            if self.cuda:
                a, b = self.event(), self.event()
                wp.record_event(a)
            t0 = time.perf_counter()
            call()
            if self.cuda:
                wp.record_event(b)
                events.append((a, b))
            wall.append(1e3 * (time.perf_counter() - t0))
        self.sync()
        ms = [wp.get_event_elapsed_time(a, b, synchronize=False) for a, b in events] if self.cuda else wall
        return [float(x) for x in ms], wall

    def host(self, call, count):
        """Wall ms of `count` calls, each followed by a synchronize."""
        return [1e3 * self.wall(call) for _ in range(count)]

    def batched(self, call, count):
        """Mean ms per call of `count` back-to-back calls (events around all of them)."""
        if not self.cuda:
            return 1e3 * self.wall(lambda: [call() for _ in range(count)]) / count
        self.sync()
        a, b = self.event(), self.event()
        wp.record_event(a)
        for _ in range(count):
            call()
        wp.record_event(b)
        self.sync()
        return float(wp.get_event_elapsed_time(a, b, synchronize=False)) / count


# --- generation -----------------------------------------------------------------------------------

def seeds_array(base: int, e: int, device):
    return wp.array((base + np.arange(e)).astype(np.int32), dtype=wp.int32, device=device)


class NotBuilt(ValueError):
    pass


def refuse_beyond(args, e: int):
    """--max-build-envs: E above it is not built, as if TrackGen had refused it (tests the tiled path)."""
    if args.max_build_envs and e > args.max_build_envs:
        raise NotBuilt(f"E > --max-build-envs {args.max_build_envs}")


def build_generator(args, kind: str, name: str, e: int, device):
    """(generator, rng) of E envs; raises what TrackGen raises."""
    refuse_beyond(args, e)
    dev = str(device)
    rng = tg.PerEnvSeededRNG(seeds=0, num_envs=e, device=dev)  # the docs' seed base 0: seeds 0..E-1
    if kind == "gates":
        return tg.GateGenerator(tg.GateGenConfig(num_envs=e, device=dev, **GATE_CONFIG), rng), rng
    return tg.TrackGenerator(tg.TrackGenConfig(num_envs=e, generator=name, device=dev), rng), rng


def batch_stats(kind: str, out) -> dict:
    valid = out.valid.numpy().astype(np.float64)
    count = out.count.numpy().astype(np.float64)
    stats = {"valid_fraction": float(valid.mean())}
    if kind == "gates":
        stats.update(mean_gates=float(count.mean()), min_gates=int(count.min()), max_gates=int(count.max()))
        pos = out.position.numpy().reshape(count.size, -1, 3)
        z = pos[..., 2][np.isfinite(pos[..., 2])]
        if z.size:
            stats.update(min_z_m=float(z.min()), max_z_m=float(z.max()))
        return stats
    length = out.length.numpy().astype(np.float64)[valid > 0]
    stats.update(mean_points=float(count.mean()), length_unit="TrackGen units, about a unit square")
    if length.size:
        stats.update(mean_length_m=float(length.mean()), min_length_m=float(length.min()),
                     max_length_m=float(length.max()))
    return stats


def generation_row(args, device, rep, budget, clock, kind: str, name: str, e: int):
    scenario = "gates" if kind == "gates" else "generate"
    label = f"{scenario}:{name}"
    if budget.left() <= 0:
        rep.error(scenario, e, None, f"{label}: this phase of the run budget ({args.budget_s:.0f} s) is spent")
        return
    capturable = device.is_cuda and name != "repulsive"
    gen = rng = None
    tiles, tile_e, note = 1, e, None
    try:
        gen, rng = build_generator(args, kind, name, e, device)
    except Exception as exc:  # noqa: BLE001 - int32 limits (or memory): tiled, or recorded
        gen = rng = None
        gc.collect()
        if e <= args.tile_envs or e % args.tile_envs:
            rep.error(scenario, e, None, f"{label}: cannot build at E={e}: {first_line(exc)}")
            return
        tiles, tile_e = e // args.tile_envs, args.tile_envs
        note = (f"tiled {tiles}x{tile_e}: {tiles} generate() calls of one generator of {tile_e} envs, fresh seeds "
                f"each (E={e} cannot be built: {first_line(exc)})")
        try:
            gen, rng = build_generator(args, kind, name, tile_e, device)
        except Exception as exc2:  # noqa: BLE001
            rep.error(scenario, e, None, f"{label}: cannot build the tile of {tile_e}: {first_line(exc2)}")
            return
    n = int(getattr(gen._config, "num_points", 0)) or None
    try:
        with pc.alarm(budget.limit(), f"{label} E={e}: first call"):
            first_s = clock.wall(gen.generate)  # CUDA: 3 eager warm-ups, capture, first replay
        stats = batch_stats(kind, gen.generate())  # the first batch again (unchanged seeds)
        one_s = clock.wall(gen.generate)
        calls = args.warmup + args.repeats
        why = budget.check(f"{label} E={e}", one_s * tiles, calls)
        if why:
            rep.error(scenario, e, n, why)
            return
        seed_base = [1 << 20]
        # Tiles after the first: their seeds are fixed arrays made here (set_seeds_warp inside the
        # timed call is one launch of a thread per env, as a user tiling the batch would do it).
        tile_seeds = [seeds_array((1 << 30) + t * tile_e, tile_e, device) for t in range(1, tiles)]

        def reseed(_r):  # untimed: fresh seeds before each call
            rng.set_seeds_warp(seeds_array(seed_base[0], tile_e, device), None)
            seed_base[0] += tile_e

        def call():
            gen.generate()
            for seeds in tile_seeds:
                rng.set_seeds_warp(seeds, None)
                gen.generate()

        with pc.alarm(budget.limit(), f"{label} E={e}"):
            clock.calls(call, reseed, args.warmup)
            ms, wall = clock.calls(call, reseed, args.repeats)
    finally:
        del gen, rng
        gc.collect()
    row = {"scenario": scenario, "generator": name, "E": e, "N": n, **pc.summarize(ms),
           "wall_median_ms": float(np.median(wall)), "first_call_s": first_s,
           "mode": "graph" if capturable else "eager",
           "timing": "cuda_events" if device.is_cuda else "perf_counter"}
    row["tracks_per_s" if kind != "gates" else "courses_per_s"] = e / (row["median_ms"] * 1e-3)
    row["stats"] = stats
    if kind == "gates":
        row["config"] = GATE_CONFIG
    if tiles > 1:
        row.update(tiled_from=tile_e, note=note)
    budget.record(label, e, n or 0, row["median_ms"] * 1e-3)
    rep.row(row)


# --- runtime utilities ----------------------------------------------------------------------------

def make_kernels():
    @wp.kernel
    def place_agents(center: wp.array(dtype=wp.vec3f), tangent: wp.array(dtype=wp.vec3f),
                     normal: wp.array(dtype=wp.vec3f), count: wp.array(dtype=wp.int32), n_max: int,
                     swing: float, step: int, position: wp.array(dtype=wp.vec3f),
                     orientation: wp.array(dtype=wp.quatf)):
        e = wp.tid()
        c = count[e]
        base = e * n_max
        k = 0
        if c > 0:
            k = (e * 37 + step) % c
        t = tangent[base + k]
        lateral = swing * wp.sin(0.7 * float(step) + float(e))
        position[e] = center[base + k] + normal[base + k] * lateral
        orientation[e] = wp.quat_from_axis_angle(wp.vec3f(0.0, 0.0, 1.0), wp.atan2(t[1], t[0]))

    return place_agents


PLACE = None


def tile_track(track, tiles: int):
    """A Track of tiles x E envs: each field's buffer copied `tiles` times (device copies)."""
    fields = {}
    for f in dataclasses.fields(track):
        src = getattr(track, f.name)
        n = int(src.shape[0])
        dst = wp.empty(n * tiles, dtype=src.dtype, device=src.device)
        for t in range(tiles):
            wp.copy(dst, src, dest_offset=t * n, src_offset=0, count=n)
        fields[f.name] = dst
    return type(track)(**fields)


def sdf_resolution(e: int, wanted: int) -> int:
    r = wanted
    while r > 8 and e * r * r > INT32_MAX:
        r //= 2
    return r


class World:
    """Tracks, agents and utilities of one E (a Course, or the utilities on a tiled Track)."""

    def __init__(self, args, device, e: int):
        self.args, self.device, self.e = args, device, e
        dev = str(device)
        self.note = None
        self.tiled_from = None
        self.course = None
        self.position = wp.zeros(e, dtype=wp.vec3f, device=dev)
        self.orientation = wp.zeros(e, dtype=wp.quatf, device=dev)
        hx, hy = args.box_half_extents
        self.half_extents = wp.array(np.tile(np.array([hx, hy], np.float32), (e, 1)), dtype=wp.vec2f, device=dev)
        try:
            self.course = self._course(e)
            self.track = self.course.result
            self.progress, self.checkpoint_sampler = self.course.progress, self.course.checkpoint_sampler
            self.collision = self.course.collision
        except Exception as exc:  # noqa: BLE001 - int32 limits: the tiled form
            self.course = None
            gc.collect()
            if e <= args.tile_envs or e % args.tile_envs:
                raise
            tiles = e // args.tile_envs
            self.tiled_from = args.tile_envs
            self.note = (f"tiled {tiles}x{args.tile_envs}: Course(E={e}) cannot be built ({first_line(exc)}); "
                         f"the utilities Course builds, bound to its tile's Track copied {tiles} times")
            tile_course = self._course(args.tile_envs)
            m = int(tile_course.checkpoint_sampler._M)
            self.track = tile_track(tile_course.result, tiles)
            del tile_course
            gc.collect()
            self.checkpoint_sampler = tg.checkpoints.CheckpointSampler(self.track, args.checkpoint_spacing,
                                                                       max_checkpoints=m)
            self.progress = tg.progress.ProgressTracker(self.checkpoint_sampler.sample(), position=self.position)
            self.collision = tg.collision.CollisionChecker(self.track, 1, method="segments", position=self.position,
                                                           orientation=self.orientation,
                                                           half_extents=self.half_extents)
            self.progress.reset(wp.full(e, 1, dtype=wp.int32, device=dev))
        self.n_max = int(self.track.center.shape[0]) // e
        self.swing = 0.5 * float(tg.TrackGenConfig().half_width)
        self.sdf = None
        self.sdf_r = None
        self.localizers = {}
        mask = np.zeros(e, np.int32)
        mask[:: max(1, int(round(1.0 / args.reset_fraction)))] = 1
        self.reset_mask = wp.array(mask, dtype=wp.int32, device=dev)
        self.place(0)
        self.stats = {"valid_fraction": float(self.track.valid.numpy().mean()),
                      "max_checkpoints": int(self.checkpoint_sampler._M),
                      "checkpoint_rings_truncated": int(self.checkpoint_sampler.truncated.numpy().sum())}

    def _course(self, e):
        a = self.args
        refuse_beyond(a, e)
        cfg = tg.course.CourseConfig(mode="track", gen=tg.TrackGenConfig(num_envs=e, generator="bezier",
                                                                         device=str(self.device)),
                                     seeds=a.seed, collision="segments", checkpoint_spacing=a.checkpoint_spacing)
        course = tg.course.Course(cfg)
        if e == self.e:
            course.bind(self.position, self.orientation, self.half_extents)
        course.generate()
        return course

    def place(self, step: int):
        t = self.track
        wp.launch(PLACE, dim=self.e, inputs=[t.center, t.tangent, t.normal, t.count, self.n_max, self.swing, step,
                                             self.position, self.orientation], device=self.device)

    def sdf_checker(self):
        if self.sdf is None:
            self.sdf_r = sdf_resolution(self.e, self.args.sdf_resolution)
            self.sdf = tg.collision.CollisionChecker(self.track, 1, method="sdf", sdf_resolution=self.sdf_r,
                                                     position=self.position, orientation=self.orientation,
                                                     half_extents=self.half_extents)
        return self.sdf

    def localizer(self, window):
        if window not in self.localizers:
            self.localizers[window] = tg.localize.TrackLocalizer(self.track, warm_window=window,
                                                                 position=self.position)
        return self.localizers[window]

    def step_segments(self):
        if self.course is not None:
            return self.course.step()
        self.progress.update()
        return self.collision.query()

    def step_sdf(self):
        self.progress.update()
        return self.sdf.query()

    def reset(self):
        if self.course is not None:
            return self.course.reset(self.reset_mask)
        return self.progress.reset(self.reset_mask)


def ops_of(scenario: str, world: World):
    """(op, collision, call, note) of a scenario; sdf ops bake their checker first (untimed)."""
    sdf_note = None
    if scenario in ("step", "collision", "sdf_bake"):
        world.sdf_checker()
        if world.sdf_r != world.args.sdf_resolution:
            sdf_note = (f"sdf_resolution {world.sdf_r} (Course's {world.args.sdf_resolution}: "
                        f"E*R^2 = {world.e * world.args.sdf_resolution ** 2:.3g} > int32)")
    if scenario == "step":
        return [("step", "segments", world.step_segments, "Course.step()" if world.course else
                 "progress.update() + collision.query() (what Course.step() runs)"),
                ("step", f"sdf{world.sdf_r}", world.step_sdf,
                 "progress.update() + sdf collision.query() (what Course(collision='sdf').step() runs)"
                 + (f"; {sdf_note}" if sdf_note else ""))]
    if scenario == "progress_update":
        return [("progress.update", None, world.progress.update, None)]
    if scenario == "collision":
        return [("collision.query", "segments", world.collision.query, None),
                ("collision.query", f"sdf{world.sdf_r}", world.sdf.query, sdf_note)]
    if scenario == "sdf_bake":
        return [("sdf_bake", f"sdf{world.sdf_r}", world.sdf.bake, sdf_note)]
    if scenario == "localize":
        loc_cold = world.localizer(None)
        loc_warm = world.localizer(world.args.localize_window)
        return [("localize_cold", None, loc_cold.query, None),
                ("localize_warm", None, loc_warm.query, f"warm_window={world.args.localize_window}")]
    if scenario == "reset":
        return [("reset", None, world.reset, f"{world.args.reset_fraction:g} of the envs in the mask"
                 + ("" if world.course else " (progress.reset(mask): what Course.reset runs in track mode)"))]
    raise ValueError(scenario)


def capture(device, call):
    """`call` recorded into a CUDA graph with the library's capture switch; returns the replay."""
    tg.set_capturing(True)
    try:
        with wp.ScopedCapture(device=device) as cap:
            call()
    finally:
        tg.set_capturing(False)
    graph = cap.graph
    return lambda: wp.capture_launch(graph)


def op_row(args, device, rep, budget, clock, world: World, scenario, op, collision, call, note):
    e = world.e
    label = f"{scenario}:{op}:{collision}"
    if budget.left() <= 0:
        rep.error(scenario, e, None, f"{label}: the run budget ({args.budget_s:.0f} s) is spent")
        return
    # The bake (about 0.5 s a call on an H200) gets --repeats timed replays and 5 of the others.
    repeats = args.step_repeats if op != "sdf_bake" else args.repeats
    few = repeats if op != "sdf_bake" else min(5, repeats)
    step = [1]

    def place(_r):
        world.place(step[0])
        step[0] += 1

    with pc.alarm(budget.limit(), f"{label} E={e}: first call"):
        place(0)
        first_s = clock.wall(call)  # eager, as the library makes it (it synchronizes)
        place(0)
        one_s = clock.wall(call)
    calls = repeats + args.warmup + (3 * few if device.is_cuda else few)
    why = budget.check(f"{label} E={e}", one_s, calls)
    if why:
        rep.error(scenario, e, None, why)
        return
    with pc.alarm(budget.limit(), f"{label} E={e}"):
        eager, _ = clock.calls(call, place, few)
        replay = capture(device, call) if device.is_cuda else call
        clock.calls(replay, place, args.warmup)
        ms, _ = clock.calls(replay, place, repeats)
        host = clock.host(replay, few) if device.is_cuda else None
        batched = clock.batched(replay, few)
    row = {"scenario": scenario, "op": op, "collision": collision, "E": e, "N": 256, **pc.summarize(ms),
           "env_steps_per_s": e / (float(np.median(ms)) * 1e-3), "batched_ms": batched,
           "eager_ms": float(np.median(eager)), "first_call_s": first_s,
           "mode": "graph" if device.is_cuda else "eager",
           "timing": "cuda_events" if device.is_cuda else "perf_counter"}
    row["eager_and_host_repeats"] = few
    if host is not None:
        row["host_ms"] = float(np.median(host))
    if op == "step" or op == "collision.query":
        contacts = world.sdf._contact if collision and collision.startswith("sdf") else world.collision._contact
        row["oob_fraction"] = float(contacts.oob.numpy().mean())
    if op in ("step", "progress.update"):
        # The tracker's preallocated events (progress: checkpoints passed since the last reset).
        row["mean_checkpoints_passed"] = float(world.progress._events.progress.numpy().mean())
    notes = [x for x in (note, world.note) if x]
    if notes:
        row["note"] = "; ".join(notes)
    if world.tiled_from:
        row["tiled_from"] = world.tiled_from
    row["course"] = world.stats
    budget.record(label, e, 0, float(np.median(eager)) * 1e-3)
    rep.row(row)


def utility_rows(args, device, rep, budget, clock, scenarios):
    for e in args.step_envs:
        if budget.left() <= 0:
            rep.error("step", e, None, f"the run budget ({args.budget_s:.0f} s) is spent")
            continue
        world = None
        try:
            with pc.alarm(budget.limit(), f"Course E={e}"):
                t0 = time.perf_counter()
                world = World(args, device, e)
                print(f"[trackgen] tracks of E={e} in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
            for scenario in scenarios:
                try:
                    ops = ops_of(scenario, world)
                except Exception as exc:  # noqa: BLE001 - e.g. no memory for the sdf grids
                    clock.sync()
                    rep.error(scenario, e, None, f"cannot set up {scenario}: {first_line(exc)}")
                    continue
                for op, collision, call, note in ops:
                    try:
                        op_row(args, device, rep, budget, clock, world, scenario, op, collision, call, note)
                    except Exception as exc:  # noqa: BLE001 - recorded, the next op goes on
                        clock.sync()
                        rep.error(scenario, e, None, f"{op} {collision or ''}: {first_line(exc)}")
        except Exception as exc:  # noqa: BLE001 - recorded, the next E goes on
            try:
                clock.sync()
            except Exception:  # noqa: BLE001
                pass
            rep.error("step", e, None, f"cannot build the tracks of E={e}: {first_line(exc)}")
        finally:
            del world
            gc.collect()


# --- command line ---------------------------------------------------------------------------------

def name_list(allowed):
    def parse(text):
        names = [v.strip() for v in text.split(",") if v.strip()]
        bad = [v for v in names if v not in allowed]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"expected some of {','.join(allowed)}, got {text!r}")
        return names
    return parse


def float_pair(text):
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two comma-separated numbers, got {text!r}") from None
    return a, b


def parse_args():
    p = argparse.ArgumentParser(description="The published TrackGen (seed library) measured as its docs recommend.")
    p.add_argument("--scenarios", type=name_list(SCENARIOS), default=list(SCENARIOS),
                   help=f"comma list of {','.join(SCENARIOS)} (default all)")
    p.add_argument("--generators", type=name_list(GENERATORS), default=list(GENERATORS),
                   help="generators of the generate rows (default all six; repulsive eager and E <= --repulsive-max-envs)")
    p.add_argument("--envs", type=pc.int_list, default=[4096, 65536, 262144, 1048576],
                   help="E of the generate and gates rows (default 4096,65536,262144,1048576)")
    p.add_argument("--step-envs", type=pc.int_list, default=[4096, 65536, 262144, 1048576],
                   help="E of the utility rows (default 4096,65536,262144,1048576)")
    p.add_argument("--repulsive-max-envs", type=int, default=4096, help="largest E of the repulsive rows (default 4096)")
    p.add_argument("--tile-envs", type=int, default=262144,
                   help="E beyond what TrackGen can build is tiled from this many envs (default 262144)")
    p.add_argument("--max-build-envs", type=int, default=0,
                   help="treat E above this as not buildable, tiled without trying (default 0: try every E)")
    p.add_argument("--repeats", type=int, default=20, help="timed calls of a generate/gates/sdf_bake row, >= 5 (default 20)")
    p.add_argument("--step-repeats", type=int, default=100, help="timed replays of a utility row, >= 20 (default 100)")
    p.add_argument("--warmup", type=int, default=2, help="untimed calls before the timed ones (default 2)")
    p.add_argument("--json", required=True, help="output file (written after every row)")
    p.add_argument("--device", default="cuda:0", help="cuda:K or cpu (cpu: eager calls, perf_counter)")
    p.add_argument("--quick", action="store_true",
                   help="small sizes: E 4096,65536 on a GPU (64 / 256 on the CPU), 20 replays")
    p.add_argument("--row-cap-s", type=float, default=60.0, help="a row predicted to take longer is skipped (default 60)")
    p.add_argument("--budget-s", type=float, default=400.0, help="time for all rows (default 400)")
    p.add_argument("--seed", type=int, default=42, help="Course seeds of the utility rows (default 42, as trackgen-h200.md)")
    p.add_argument("--checkpoint-spacing", type=float, default=0.6, help="Course checkpoint_spacing (default 0.6)")
    p.add_argument("--box-half-extents", type=float_pair, default=(0.04, 0.02),
                   help="each agent's box (default 0.04,0.02; TrackGen's half_width is 0.1)")
    p.add_argument("--sdf-resolution", type=int, default=128, help="sdf grid side (Course's default 128; lowered "
                   "by halves until E*R^2 fits int32)")
    p.add_argument("--localize-window", type=int, default=8, help="warm_window of the warm localize row (default 8)")
    p.add_argument("--reset-fraction", type=float, default=0.01, help="share of envs in the reset mask (default 0.01)")
    p.add_argument("--generate-share", type=float, default=0.5,
                   help="share of --budget-s the generate and gates rows may use when utility rows follow (default 0.5)")
    p.add_argument("--kernel-cache", default=os.path.join(ROOT, ".peers", "warp-kernel-cache"),
                   help="Warp's kernel cache (default .peers/warp-kernel-cache: a later run on the same machine "
                        "loads the kernels instead of compiling them; '' for Warp's own default)")
    p.add_argument("--trackgen-dir", default=DEFAULT_TRACKGEN,
                   help="where scripts/fetch-seed-peer put TrackGen (default .peers/TrackGen)")
    args = p.parse_args()
    if args.quick:
        cpu = args.device.startswith("cpu")
        args.envs = [64] if cpu else [e for e in args.envs if e <= 65536] or [4096]
        args.step_envs = [256] if cpu else [e for e in args.step_envs if e <= 65536] or [4096]
        args.step_repeats = min(args.step_repeats, 20)
        args.repulsive_max_envs = min(args.repulsive_max_envs, 64 if cpu else 4096)
    if args.repeats < 5 or args.step_repeats < 20 or args.warmup < 1:
        p.error("--repeats >= 5, --step-repeats >= 20, --warmup >= 1")
    if not 0.0 < args.generate_share <= 1.0:
        p.error("--generate-share must be in (0, 1]")
    if not 0.0 < args.reset_fraction <= 1.0:
        p.error("--reset-fraction must be in (0, 1]")
    args.envs, args.step_envs = sorted(set(args.envs)), sorted(set(args.step_envs))
    return args


def main() -> int:
    global PLACE, KERNEL_CACHE
    args = parse_args()
    KERNEL_CACHE = args.kernel_cache or None
    pc.exit_on_sigterm()
    rep = None
    try:
        t0 = time.perf_counter()
        import_trackgen(args.trackgen_dir)
        import_s = time.perf_counter() - t0
        wp.init()
        device = wp.get_device(args.device)
        name = device.name if device.is_cuda else (platform.processor() or platform.machine() or "cpu")
        rep = pc.Report("trackgen", f"TrackGen {commit_of(args.trackgen_dir)}, warp {wp.config.version}", name, args.json)
        rep.doc["setup"] = {"trackgen_commit": commit_of(args.trackgen_dir), "trackgen_file": tg.__file__,
                            "warp_version": wp.config.version, "python": platform.python_version(),
                            "import_s": import_s, "gate_config": GATE_CONFIG,
                            "box_half_extents": list(args.box_half_extents),
                            "checkpoint_spacing": args.checkpoint_spacing, "course_seeds": args.seed,
                            "tile_envs": args.tile_envs,
                            "kernel_cache": wp.config.kernel_cache_dir}
        rep.save()
        PLACE = make_kernels()
        # Every module loaded (compiled into the kernel cache the first time) before any row, outside
        # the rows' time guards: the generators' modules are imported lazily by their registries,
        # and the first wp.ScopedCapture would load them all anyway (Warp's default).
        t0 = time.perf_counter()
        for registry in ("generator_registry", "gate_generator_registry"):
            importlib.import_module(f"track_gen._src.{registry}").available()
        wp.force_load(device=device)
        rep.doc["setup"]["module_load_s"] = time.perf_counter() - t0
        rep.save()
        print(f"[trackgen] modules loaded in {rep.doc['setup']['module_load_s']:.1f} s", file=sys.stderr, flush=True)
        clock = Clock(device)
        budget = pc.Budget(args.budget_s, args.row_cap_s)
        utilities = [s for s in args.scenarios if s not in ("generate", "gates")]
        with wp.ScopedDevice(device):
            budget.phase(args.generate_share if utilities else 1.0)
            # E ascending outside, so that what the budget leaves out is the largest E; bezier (its
            # default generator) and the gate courses first at each E.
            jobs = [("generate", g) for g in args.generators]
            if "gates" in args.scenarios:
                jobs.insert(1 if ("generate", "bezier") in jobs else 0, ("gates", GATE_CONFIG["generator"]))
            if "generate" not in args.scenarios:
                jobs = [j for j in jobs if j[0] == "gates"]
            for e in args.envs:
                for kind, name in jobs:
                    if name == "repulsive" and e > args.repulsive_max_envs:
                        rep.error("generate", e, None, f"repulsive: E > --repulsive-max-envs {args.repulsive_max_envs} "
                                  "(eager only: about 1 s a call at E = 4096 on an H200)")
                        continue
                    try:
                        generation_row(args, device, rep, budget, clock, kind, name, e)
                    except Exception as exc:  # noqa: BLE001 - recorded, the next row goes on
                        clock.sync()
                        rep.error(kind, e, None, f"{name}: {first_line(exc)}")
            budget.phase(1.0)
            if utilities:
                utility_rows(args, device, rep, budget, clock, utilities)
        print(f"[trackgen] done in {time.perf_counter() - budget.start:.1f} s, {len(rep.doc['rows'])} rows, "
              f"{len(rep.doc['errors'])} errors -> {args.json}", file=sys.stderr)
        return 0
    except BaseException as exc:  # noqa: BLE001 - the JSON is written whatever happens
        if rep is None:
            rep = pc.Report("trackgen", "unavailable", "unknown", args.json)
        rep.error("setup", None, None, first_line(exc) + "\n" + traceback.format_exc(limit=6))
        return 1


if __name__ == "__main__":
    sys.exit(main())

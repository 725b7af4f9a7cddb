#!/usr/bin/env python3
"""NVIDIA Warp peer of track_gen (issue #5): the `presets::track` pipeline and `course::step`
written as the Python/Warp library that track_gen is the C++ counterpart of would write them.

Generation: one kernel per stage, one thread per control point, dense sample, resampled
sample or env, every kernel a no-op for envs that already hold a valid track; the whole
regeneration is captured once with wp.ScopedCapture and replayed with wp.capture_launch.
  attempt loop  wp.capture_while on a device flag "some env still pending and fewer than 16
                attempts made" (a one-thread kernel sets it at the end of each attempt);
                `--attempt-loop unrolled` records the 16 attempts instead
  random_polar  (E, M) threads; Warp's rand_init/randf keyed by (seed, episode, attempt) and
                (env, point): the same distributions as the library, not its Philox bits
  repulsive     wp.capture_while over windows of 4 iterations, at most 3 windows (the 12
                iterations of the preset): (E, M) threads push, one thread per env reduces its
                overlap, stops the env below the tolerance or after 12 iterations, applies the
                update and raises the device-side "still active" flag read by the loop
  catmull_rom   (E, M * 32) threads
  arc length    one thread per env: chords and their running sum (cumulative arc length, L)
  resample      (E, N) threads: binary search in the cumulative length + spline evaluation
  frames        (E, N) threads: tangent, left normal, Menger curvature, cusps, atomic max
  validate      (E, N) threads: finite, length and curvature, then the 5 % spacing test,
                and the O(N^2) clearance test (thread i scans its pairs, exits at the first hit)
  fallback      the ellipse, built once through the same kernels (E = 1), copied into the envs
                still pending after the last attempt
  checkpoints   (E, G_max) threads
Step: one thread per env (window search of +-8 segments around the hint, full search when the
minimum is on the window's edge or farther than the half-width, gates in order, laps).

Timing: wp.Event(enable_timing=True) recorded around each graph launch, wp.get_event_elapsed_time;
on the CPU (correctness checks) perf_counter around synchronised eager calls.

Run:  python bench/peers/warp_peer.py --json out/warp.json [--quick] [--device cpu]
"""

from __future__ import annotations

import gc
import math
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_common as pc  # noqa: E402

try:
    import warp as wp
except ImportError as exc:  # the JSON is written by main() with this message
    wp = None
    WARP_IMPORT_ERROR = repr(exc)

REPULSE_WINDOW = 4  # iterations per window of the repulsion loop
REPULSE_MAX_WINDOWS = -(-pc.REPULSE_MAX_ITERATIONS // REPULSE_WINDOW)

if wp is not None:
    # Kernel constants: the preset's values from peer_common.
    PI = wp.constant(math.pi)
    REP_CLEARANCE = wp.constant(pc.REPULSE_CLEARANCE)
    REP_SMOOTHING = wp.constant(pc.REPULSE_SMOOTHING)
    REP_TOLERANCE = wp.constant(pc.REPULSE_TOLERANCE)
    REP_MAX_ITERATIONS = wp.constant(pc.REPULSE_MAX_ITERATIONS)
    WINDOW = wp.constant(pc.PROJECTION_WINDOW)
    ANGLE_JITTER = wp.constant(pc.ANGLE_JITTER)
    RADIUS_MIN = wp.constant(pc.RADIUS_MIN)
    RADIUS_MAX = wp.constant(pc.RADIUS_MAX)
    LOBE_AMPLITUDE_MIN = wp.constant(pc.LOBE_AMPLITUDE_MIN)
    LOBE_AMPLITUDE_MAX = wp.constant(pc.LOBE_AMPLITUDE_MAX)
    ELEVATION_MIN = wp.constant(pc.ELEVATION_MIN)
    ELEVATION_MAX = wp.constant(pc.ELEVATION_MAX)
    LENGTH_MIN = wp.constant(pc.LENGTH_MIN)
    LENGTH_MAX = wp.constant(pc.LENGTH_MAX)
    MAX_CURVATURE = wp.constant(pc.MAX_CURVATURE)
    WINDOW_ARC = wp.constant(pc.WINDOW_ARC)
    CLEARANCE = wp.constant(pc.CLEARANCE)
    MAX_ATTEMPTS = wp.constant(pc.MAX_ATTEMPTS)
    HALF_WIDTH = wp.constant(pc.HALF_WIDTH)
    GATE_HALF_HEIGHT = wp.constant(pc.GATE_HALF_HEIGHT)
    HAS_LAST = wp.constant(pc.HAS_LAST)
    OFF_TRACK = wp.constant(pc.OFF_TRACK)
    WRONG_WAY = wp.constant(pc.WRONG_WAY)
    GATE_PASSED = wp.constant(pc.GATE_PASSED)
    LAP_COMPLETED = wp.constant(pc.LAP_COMPLETED)
    FULL_SEARCH = wp.constant(pc.FULL_SEARCH)
    INVALID_POSITION = wp.constant(pc.INVALID_POSITION)
    STEP_EVENTS = wp.constant(pc.STEP_EVENTS)
    STATUS_INVALID_INPUT = wp.constant(pc.STATUS_INVALID_INPUT)

    # ----------------------------------------------------------------------------------------
    # Helpers
    # ----------------------------------------------------------------------------------------

    @wp.func
    def normalize_or(v: wp.vec3, fallback: wp.vec3):
        n = wp.length(v)
        if n > 1.0e-20:
            return v / n
        return fallback

    @wp.func
    def closest_parameter(p: wp.vec3, a: wp.vec3, b: wp.vec3):
        ab = b - a
        den = wp.dot(ab, ab)
        if not (den > 0.0):
            return 0.0
        return wp.clamp(wp.dot(p - a, ab) / den, 0.0, 1.0)

    @wp.func
    def finite3(v: wp.vec3):
        return wp.isfinite(v[0]) and wp.isfinite(v[1]) and wp.isfinite(v[2])

    @wp.func
    def knot(a: wp.vec3, b: wp.vec3):
        return wp.max(wp.sqrt(wp.length(b - a)), 1.0e-6)

    @wp.func
    def blend(a: wp.vec3, b: wp.vec3, ta: float, tb: float, t: float):
        return a * ((tb - t) / (tb - ta)) + b * ((t - ta) / (tb - ta))

    @wp.func
    def catmull_rom(p0: wp.vec3, p1: wp.vec3, p2: wp.vec3, p3: wp.vec3, u: float):
        """Centripetal Catmull-Rom between p1 and p2 (Barry-Goldman recursion)."""
        t1 = knot(p0, p1)
        t2 = t1 + knot(p1, p2)
        t3 = t2 + knot(p2, p3)
        t = t1 + u * (t2 - t1)
        a1 = blend(p0, p1, 0.0, t1, t)
        a2 = blend(p1, p2, t1, t2, t)
        a3 = blend(p2, p3, t2, t3, t)
        b1 = blend(a1, a2, 0.0, t2, t)
        b2 = blend(a2, a3, t1, t3, t)
        return blend(b1, b2, t1, t2, t)

    @wp.func
    def spline_at(control: wp.array2d(dtype=wp.vec3), e: int, m: int, seg: int, u: float):
        return catmull_rom(control[e, (seg + m - 1) % m], control[e, seg], control[e, (seg + 1) % m],
                           control[e, (seg + 2) % m], u)

    @wp.func
    def stream_seed(seed: int, episode: int, attempt: int):
        """A 31-bit seed per (seed, episode, attempt): an integer hash (xorshift-multiply rounds)."""
        h = wp.uint32(seed) * wp.uint32(0x7FEB352D) ^ wp.uint32(episode) * wp.uint32(0x5BD1E995)
        h = (h ^ (h >> wp.uint32(15))) * wp.uint32(0x2C1B3C6D) ^ wp.uint32(attempt) * wp.uint32(0x1B873593)
        h = (h ^ (h >> wp.uint32(13))) * wp.uint32(0x297A2D39)
        return wp.int32(h >> wp.uint32(1))

    # ----------------------------------------------------------------------------------------
    # Generation kernels
    # ----------------------------------------------------------------------------------------

    @wp.kernel
    def k_begin(episode: wp.array(dtype=int), pending: wp.array(dtype=int), attempts: wp.array(dtype=int),
                valid: wp.array(dtype=int), fallback: wp.array(dtype=int), flags: wp.array(dtype=int)):
        """A new episode for every env; flags = [attempt loop condition, attempt counter, any pending,
        repulsion condition, repulsion windows, any active]."""
        e = wp.tid()
        episode[e] = episode[e] + 1
        pending[e] = 1
        attempts[e] = MAX_ATTEMPTS
        valid[e] = 0
        fallback[e] = 0
        if e == 0:
            flags[0] = 1
            flags[1] = 0
            flags[2] = 0

    @wp.kernel
    def k_attempt_init(pending: wp.array(dtype=int), worst: wp.array(dtype=float), finite: wp.array(dtype=int),
                       bad: wp.array2d(dtype=int), rep_active: wp.array(dtype=int), rep_iters: wp.array(dtype=int),
                       flags: wp.array(dtype=int)):
        e = wp.tid()
        if e == 0:
            flags[3] = 1
            flags[4] = 0
            flags[5] = 0
        if pending[e] == 0:
            return
        worst[e] = 0.0
        finite[e] = 1
        bad[e, 0] = 0  # cheap tests
        bad[e, 1] = 0  # spacing
        bad[e, 2] = 0  # clearance
        rep_active[e] = 1
        rep_iters[e] = 0

    @wp.kernel
    def k_random_polar(pending: wp.array(dtype=int), episode: wp.array(dtype=int), flags: wp.array(dtype=int),
                       seed: int, m: int, control: wp.array2d(dtype=wp.vec3)):
        e, i = wp.tid()
        if pending[e] == 0:
            return
        s = stream_seed(seed, episode[e], flags[1])
        phase_state = wp.rand_init(s, e * (m + 1) + m)
        phase = wp.randf(phase_state) * 2.0 * PI
        split = wp.randf(phase_state)
        total = wp.lerp(LOBE_AMPLITUDE_MIN, LOBE_AMPLITUDE_MAX, wp.randf(phase_state))
        p2 = wp.randf(phase_state) * 2.0 * PI
        p3 = wp.randf(phase_state) * 2.0 * PI
        state = wp.rand_init(s, e * (m + 1) + i)
        u0 = wp.randf(state)
        u1 = wp.randf(state)
        u2 = wp.randf(state)
        step = 2.0 * PI / float(m)
        t = step * (float(i) + ANGLE_JITTER * (u0 - 0.5))
        angle = phase + t
        a2 = total * split
        lobes = 1.0 + a2 * wp.cos(2.0 * t + p2) + (total - a2) * wp.cos(3.0 * t + p3)
        r = wp.lerp(RADIUS_MIN, RADIUS_MAX, u1) * lobes
        z = wp.lerp(ELEVATION_MIN, ELEVATION_MAX, u2)
        control[e, i] = wp.vec3(r * wp.cos(angle), r * wp.sin(angle), z)

    @wp.kernel
    def k_repulse_push(pending: wp.array(dtype=int), active: wp.array(dtype=int), m: int,
                       control: wp.array2d(dtype=wp.vec3), control_next: wp.array2d(dtype=wp.vec3),
                       overlap: wp.array2d(dtype=float)):
        e, i = wp.tid()
        if pending[e] == 0 or active[e] == 0:
            return
        p = control[e, i]
        push = wp.vec3(0.0, 0.0, 0.0)
        pushed = int(0)
        worst = float(0.0)
        for j in range(m):
            rel = (j - i + m) % m
            if rel == 0 or rel == 1 or rel == m - 1 or rel == m - 2:
                continue
            a = control[e, j]
            b = control[e, (j + 1) % m]
            q = wp.lerp(a, b, closest_parameter(p, a, b))
            away = p - q
            d = wp.length(away)
            if d < REP_CLEARANCE:
                side = normalize_or(wp.vec3(-(b - a)[1], (b - a)[0], 0.0), wp.vec3(1.0, 0.0, 0.0))
                push = push + normalize_or(away, side) * (0.5 * (REP_CLEARANCE - d))
                worst = wp.max(worst, REP_CLEARANCE - d)
                pushed = 1
        if pushed != 0:
            mid = (control[e, (i + m - 1) % m] + control[e, (i + 1) % m]) * 0.5
            push = push + (mid - p) * REP_SMOOTHING
        control_next[e, i] = p + push
        overlap[e, i] = worst

    @wp.kernel
    def k_repulse_update(pending: wp.array(dtype=int), active: wp.array(dtype=int), iters: wp.array(dtype=int),
                         m: int, control: wp.array2d(dtype=wp.vec3), control_next: wp.array2d(dtype=wp.vec3),
                         overlap: wp.array2d(dtype=float), report: int, flags: wp.array(dtype=int)):
        """One thread per env: stop below the tolerance (the update is dropped, as the library's
        loop breaks before applying it), else apply; stop after the iteration bound."""
        e = wp.tid()
        if pending[e] == 0 or active[e] == 0:
            return
        worst = float(0.0)
        for i in range(m):
            worst = wp.max(worst, overlap[e, i])
        if worst < REP_TOLERANCE:
            active[e] = 0
            return
        for i in range(m):
            control[e, i] = control_next[e, i]
        n = iters[e] + 1
        iters[e] = n
        if n >= REP_MAX_ITERATIONS:
            active[e] = 0
        elif report != 0:
            flags[5] = 1

    @wp.kernel
    def k_repulse_condition(flags: wp.array(dtype=int), max_windows: int):
        windows = flags[4] + 1
        flags[4] = windows
        flags[3] = wp.where(flags[5] != 0 and windows < max_windows, 1, 0)
        flags[5] = 0

    @wp.kernel
    def k_spline(pending: wp.array(dtype=int), m: int, per: int, control: wp.array2d(dtype=wp.vec3),
                 dense: wp.array2d(dtype=wp.vec3)):
        e, k = wp.tid()
        if pending[e] == 0:
            return
        seg = k // per
        dense[e, k] = spline_at(control, e, m, seg, float(k - seg * per) / float(per))

    @wp.kernel
    def k_arc_length(pending: wp.array(dtype=int), nd: int, dense: wp.array2d(dtype=wp.vec3),
                     dense_s: wp.array2d(dtype=float), length: wp.array(dtype=float)):
        e = wp.tid()
        if pending[e] == 0:
            return
        s = float(0.0)
        dense_s[e, 0] = 0.0
        for k in range(nd):
            s = s + wp.length(dense[e, (k + 1) % nd] - dense[e, k])
            dense_s[e, k + 1] = s
        length[e] = s

    @wp.kernel
    def k_resample(pending: wp.array(dtype=int), m: int, per: int, nd: int, n: int,
                   control: wp.array2d(dtype=wp.vec3), dense_s: wp.array2d(dtype=float),
                   length: wp.array(dtype=float), pos: wp.array2d(dtype=wp.vec3)):
        e, k = wp.tid()
        if pending[e] == 0:
            return
        s = length[e] * (float(k) / float(n))
        lo = int(0)
        hi = nd - 1
        while lo < hi:  # largest j in [0, nd) with dense_s[j] <= s
            mid = (lo + hi + 1) >> 1
            if dense_s[e, mid] <= s:
                lo = mid
            else:
                hi = mid - 1
        span = dense_s[e, lo + 1] - dense_s[e, lo]
        frac = float(0.0)
        if span > 0.0:
            frac = wp.clamp((s - dense_s[e, lo]) / span, 0.0, 1.0)
        seg = lo // per
        pos[e, k] = spline_at(control, e, m, seg, (float(lo - seg * per) + frac) / float(per))

    @wp.kernel
    def k_frames(pending: wp.array(dtype=int), n: int, pos: wp.array2d(dtype=wp.vec3),
                 tangent: wp.array2d(dtype=wp.vec3), normal: wp.array2d(dtype=wp.vec3),
                 half_width: wp.array2d(dtype=float), curvature: wp.array2d(dtype=float),
                 length: wp.array(dtype=float), worst: wp.array(dtype=float), finite: wp.array(dtype=int)):
        e, k = wp.tid()
        if pending[e] == 0:
            return
        a = pos[e, (k + n - 1) % n]
        b = pos[e, k]
        c = pos[e, (k + 1) % n]
        t = normalize_or(c - a, wp.vec3(1.0, 0.0, 0.0))
        tangent[e, k] = t
        normal[e, k] = normalize_or(wp.vec3(-t[1], t[0], 0.0), wp.vec3(0.0, 1.0, 0.0))
        half_width[e, k] = HALF_WIDTH
        sides = wp.length(b - a) * wp.length(c - b) * wp.length(c - a)
        kappa = float(0.0)
        if sides > 0.0:
            kappa = 2.0 * wp.length(wp.cross(b - a, c - b)) / sides
        curvature[e, k] = kappa
        value = kappa
        if wp.dot(b - a, c - b) < 0.0:  # a cusp: unbounded curvature
            value = 3.0e38
        wp.atomic_max(worst, e, value)
        if not (finite3(b) and wp.isfinite(kappa) and wp.isfinite(length[e])):
            finite[e] = 0

    @wp.kernel
    def k_validate_spacing(pending: wp.array(dtype=int), n: int, pos: wp.array2d(dtype=wp.vec3),
                           length: wp.array(dtype=float), worst: wp.array(dtype=float), finite: wp.array(dtype=int),
                           bad: wp.array2d(dtype=int)):
        """The cheap tests (finite, length, curvature: bad[e, 0], written by thread 0), then the
        5 % spacing test of sample k (bad[e, 1]) for the envs that pass them."""
        e, k = wp.tid()
        if pending[e] == 0:
            return
        L = length[e]
        if not (finite[e] != 0 and L >= LENGTH_MIN and L <= LENGTH_MAX and worst[e] <= MAX_CURVATURE):
            if k == 0:
                bad[e, 0] = 1
            return
        ds = L / float(n)
        chord = wp.length(pos[e, (k + 1) % n] - pos[e, k])
        if not (chord >= 0.95 * ds and chord <= 1.05 * ds):
            bad[e, 1] = 1

    @wp.kernel
    def k_validate_clearance(pending: wp.array(dtype=int), n: int, pos: wp.array2d(dtype=wp.vec3),
                             length: wp.array(dtype=float), bad: wp.array2d(dtype=int)):
        e, i = wp.tid()
        if pending[e] == 0 or bad[e, 0] != 0 or bad[e, 1] != 0:
            return
        ds = length[e] / float(n)
        w = n
        if ds > 0.0:
            w = int(wp.floor(WINDOW_ARC / ds))
        a = pos[e, i]
        j_end = wp.min(i + n - w - 1, n - 1)
        for j in range(i + w + 1, j_end + 1):
            d = pos[e, j] - a
            if wp.dot(d, d) < CLEARANCE * CLEARANCE:
                bad[e, 2] = 1
                break

    @wp.kernel
    def k_accept(pending: wp.array(dtype=int), bad: wp.array2d(dtype=int), attempts: wp.array(dtype=int),
                 valid: wp.array(dtype=int), flags: wp.array(dtype=int)):
        e = wp.tid()
        if pending[e] == 0:
            return
        if bad[e, 0] == 0 and bad[e, 1] == 0 and bad[e, 2] == 0:
            pending[e] = 0
            valid[e] = 1
            attempts[e] = flags[1] + 1
        else:
            flags[2] = 1

    @wp.kernel
    def k_attempt_condition(flags: wp.array(dtype=int)):
        attempt = flags[1] + 1
        flags[1] = attempt
        flags[0] = wp.where(flags[2] != 0 and attempt < MAX_ATTEMPTS, 1, 0)
        flags[2] = 0

    @wp.kernel
    def k_fallback(pending: wp.array(dtype=int), fb_pos: wp.array2d(dtype=wp.vec3),
                   fb_tangent: wp.array2d(dtype=wp.vec3), fb_normal: wp.array2d(dtype=wp.vec3),
                   fb_curvature: wp.array2d(dtype=float), fb_length: wp.array(dtype=float),
                   fb_valid: wp.array(dtype=int), pos: wp.array2d(dtype=wp.vec3), tangent: wp.array2d(dtype=wp.vec3),
                   normal: wp.array2d(dtype=wp.vec3), half_width: wp.array2d(dtype=float),
                   curvature: wp.array2d(dtype=float), length: wp.array(dtype=float), valid: wp.array(dtype=int),
                   fallback: wp.array(dtype=int)):
        e, k = wp.tid()
        if pending[e] == 0:
            return
        pos[e, k] = fb_pos[0, k]
        tangent[e, k] = fb_tangent[0, k]
        normal[e, k] = fb_normal[0, k]
        half_width[e, k] = HALF_WIDTH
        curvature[e, k] = fb_curvature[0, k]
        if k == 0:
            length[e] = fb_length[0]
            valid[e] = fb_valid[0]
            fallback[e] = 1

    @wp.kernel
    def k_gates(n: int, max_gates: int, spacing: float, pos: wp.array2d(dtype=wp.vec3),
                tangent: wp.array2d(dtype=wp.vec3), half_width: wp.array2d(dtype=float), length: wp.array(dtype=float),
                num_gates: wp.array(dtype=int), centre: wp.array2d(dtype=wp.vec3), gate_normal: wp.array2d(dtype=wp.vec3),
                gate_half_width: wp.array2d(dtype=float), arc: wp.array2d(dtype=float)):
        e, g = wp.tid()
        L = length[e]
        count = float(1.0)
        if wp.isfinite(L):
            count = wp.floor(L / spacing)
        total = int(1)
        if count > float(max_gates):
            total = max_gates
        elif count >= 1.0:
            total = int(count)
        if g == 0:
            num_gates[e] = total
        if g >= total:
            return
        num = g * n  # below 2^31 for G_max * N of the preset
        k = num // total
        f = float(num - k * total) / float(total)
        k1 = (k + 1) % n
        centre[e, g] = wp.lerp(pos[e, k], pos[e, k1], f)
        gate_normal[e, g] = normalize_or(wp.lerp(tangent[e, k], tangent[e, k1], f), tangent[e, k])
        gate_half_width[e, g] = wp.lerp(half_width[e, k], half_width[e, k1], f)
        arc[e, g] = L * (float(g) / float(total))

    # ----------------------------------------------------------------------------------------
    # Step kernels
    # ----------------------------------------------------------------------------------------

    @wp.func
    def crosses_gate(centre: wp.vec3, normal: wp.vec3, half_width: float, a: wp.vec3, b: wp.vec3):
        da = wp.dot(a - centre, normal)
        db = wp.dot(b - centre, normal)
        if not (da < 0.0 and db >= 0.0):
            return False
        x = wp.lerp(a, b, da / (da - db))
        left = normalize_or(wp.vec3(-normal[1], normal[0], 0.0), wp.vec3(0.0, 1.0, 0.0))
        up = wp.cross(normal, left)
        r = x - centre
        return wp.abs(wp.dot(r, left)) <= half_width and wp.abs(wp.dot(r, up)) <= GATE_HALF_HEIGHT

    @wp.func
    def nearest_segment(pos: wp.array2d(dtype=wp.vec3), e: int, n: int, p: wp.vec3, first: int, count: int):
        """Segment (k, k + 1) of env e nearest to p among `count` segments from `first` (wrapped),
        scanned in order, the first minimum kept: (k, parameter, squared distance)."""
        best = int(0)
        best_t = float(0.0)
        best_d2 = float(3.0e38)
        for o in range(count):
            k = ((first + o) % n + n) % n
            a = pos[e, k]
            b = pos[e, (k + 1) % n]
            t = closest_parameter(p, a, b)
            d = p - wp.lerp(a, b, t)
            if wp.dot(d, d) < best_d2:
                best_d2 = wp.dot(d, d)
                best = k
                best_t = t
        return best, best_t, best_d2

    @wp.kernel
    def k_step(n: int, pos: wp.array2d(dtype=wp.vec3), tangent: wp.array2d(dtype=wp.vec3),
               normal: wp.array2d(dtype=wp.vec3), half_width: wp.array2d(dtype=float), length: wp.array(dtype=float),
               num_gates: wp.array(dtype=int), gate_centre: wp.array2d(dtype=wp.vec3),
               gate_normal: wp.array2d(dtype=wp.vec3), gate_half_width: wp.array2d(dtype=float),
               positions: wp.array(dtype=wp.vec3), next_gate: wp.array(dtype=int), laps: wp.array(dtype=int),
               gates_passed: wp.array(dtype=int), lap_progress: wp.array(dtype=float), lateral: wp.array(dtype=float),
               hint: wp.array(dtype=int), last_position: wp.array(dtype=wp.vec3), flags: wp.array(dtype=int),
               status: wp.array(dtype=int)):
        """course_ref::step for env e (one thread)."""
        e = wp.tid()
        p = positions[e]
        fl = flags[e] & ~STEP_EVENTS
        if not finite3(p):
            flags[e] = fl | INVALID_POSITION
            status[e] = status[e] | STATUS_INVALID_INPUT
            return
        has_last = (fl & HAS_LAST) != 0
        h = hint[e]
        best = int(0)
        best_t = float(0.0)
        best_d2 = float(3.0e38)
        full = (not has_last) or 2 * WINDOW + 1 >= n
        if not full:
            h = (h % n + n) % n
            best, best_t, best_d2 = nearest_segment(pos, e, n, p, h - WINDOW, 2 * WINDOW + 1)
            off = (best - h + n) % n
            full = off == WINDOW or off == n - WINDOW
            if not full:
                full = best_d2 > half_width[e, best] * half_width[e, best]
        if full:
            best, best_t, best_d2 = nearest_segment(pos, e, n, p, 0, n)
            if has_last:
                fl = fl | FULL_SEARCH
        nxt = (best + 1) % n
        point = wp.lerp(pos[e, best], pos[e, nxt], best_t)
        tan = normalize_or(wp.lerp(tangent[e, best], tangent[e, nxt], best_t), tangent[e, best])
        left = normalize_or(wp.lerp(normal[e, best], normal[e, nxt], best_t), normal[e, best])
        half = wp.lerp(half_width[e, best], half_width[e, nxt], best_t)
        lat = wp.dot(p - point, left)
        L = length[e]
        s = (float(best) + best_t) * (L / float(n))
        if s >= L:
            s = s - L
        if wp.abs(lat) > half:
            fl = fl | OFF_TRACK
        if has_last:
            a = last_position[e]
            d = p - a
            if wp.dot(d, d) > 1.0e-12 and wp.dot(d, tan) < 0.0:
                fl = fl | WRONG_WAY
            total = num_gates[e]
            g = next_gate[e]
            passed = int(0)
            while passed < total:
                if not crosses_gate(gate_centre[e, g], gate_normal[e, g], gate_half_width[e, g], a, p):
                    break
                fl = fl | GATE_PASSED
                if g == 0:
                    fl = fl | LAP_COMPLETED
                    laps[e] = laps[e] + 1
                g = (g + 1) % total
                passed = passed + 1
            next_gate[e] = g
            gates_passed[e] = gates_passed[e] + passed
        lap_progress[e] = s
        lateral[e] = lat
        hint[e] = best
        last_position[e] = p
        flags[e] = fl | HAS_LAST

    @wp.kernel
    def k_reset_progress(num_gates: wp.array(dtype=int), next_gate: wp.array(dtype=int), laps: wp.array(dtype=int),
                         gates_passed: wp.array(dtype=int), hint: wp.array(dtype=int), flags: wp.array(dtype=int),
                         status: wp.array(dtype=int), u: wp.array(dtype=float)):
        e = wp.tid()
        next_gate[e] = wp.where(num_gates[e] > 1, 1, 0)
        laps[e] = 0
        gates_passed[e] = 0
        hint[e] = 0
        flags[e] = 0
        status[e] = 0
        state = wp.rand_init(0x62656E63, e)  # the fixed start of each agent along its track
        u[e] = wp.randf(state)

    @wp.kernel
    def k_place(n: int, repeat: int, advance: float, u: wp.array(dtype=float), pos: wp.array2d(dtype=wp.vec3),
                normal: wp.array2d(dtype=wp.vec3), half_width: wp.array2d(dtype=float), length: wp.array(dtype=float),
                positions: wp.array(dtype=wp.vec3)):
        """bench/track_gen_bench.cu's place_agents: arc u_e L + repeat * advance, lateral swing."""
        e = wp.tid()
        L = length[e]
        s = wp.mod(u[e] * L + float(repeat) * advance, L)
        x = s / (L / float(n))
        k = wp.min(int(x), n - 1)
        k1 = (k + 1) % n
        f = x - float(k)
        a = pos[e, k]
        b = pos[e, k1]
        na = normal[e, k]
        lat = 0.5 * half_width[e, k] * wp.sin(0.7 * float(repeat) + float(e))
        positions[e] = wp.vec3(a[0] + (b[0] - a[0]) * f + na[0] * lat, a[1] + (b[1] - a[1]) * f + na[1] * lat,
                               a[2] + (b[2] - a[2]) * f)


# --------------------------------------------------------------------------------------------
# Host side
# --------------------------------------------------------------------------------------------

class Generator:
    """Buffers of a batch of E tracks of N samples (control points: m), and the launches of one
    regeneration."""

    def __init__(self, num_envs: int, n: int, device, m: int = pc.CONTROL_POINTS, fallback=None,
                 attempt_loop: str = "while", seed: int = 1):
        self.e, self.n, self.m, self.dev = num_envs, n, m, device
        self.per = pc.SAMPLES_PER_SEGMENT
        self.nd = m * self.per
        self.attempt_loop, self.seed = attempt_loop, seed
        z = lambda shape, dtype=float: wp.zeros(shape, dtype=dtype, device=device)  # noqa: E731
        e, g = num_envs, pc.MAX_GATES
        self.control, self.control_next = z((e, m), wp.vec3), z((e, m), wp.vec3)
        self.overlap = z((e, m))
        self.dense, self.dense_s = z((e, self.nd), wp.vec3), z((e, self.nd + 1))
        self.pos, self.tangent, self.normal = z((e, n), wp.vec3), z((e, n), wp.vec3), z((e, n), wp.vec3)
        self.half_width, self.curvature = z((e, n)), z((e, n))
        self.length, self.worst = z(e), z(e)
        self.finite, self.bad = z(e, int), z((e, 3), int)
        self.pending, self.attempts, self.valid, self.fallback = z(e, int), z(e, int), z(e, int), z(e, int)
        self.episode, self.rep_active, self.rep_iters = z(e, int), z(e, int), z(e, int)
        self.num_gates = z(e, int)
        self.gate_centre, self.gate_normal = z((e, g), wp.vec3), z((e, g), wp.vec3)
        self.gate_half_width, self.gate_arc = z((e, g)), z((e, g))
        self.flags = z(6, int)
        self.fb = fallback

    # -- stages ---------------------------------------------------------------------------------
    def _launch(self, kernel, dim, *inputs):
        wp.launch(kernel, dim=dim, inputs=list(inputs), device=self.dev)

    def _repulse_window(self):
        for it in range(REPULSE_WINDOW):
            self._launch(k_repulse_push, (self.e, self.m), self.pending, self.rep_active, self.m, self.control,
                         self.control_next, self.overlap)
            self._launch(k_repulse_update, self.e, self.pending, self.rep_active, self.rep_iters, self.m,
                         self.control, self.control_next, self.overlap, int(it == REPULSE_WINDOW - 1), self.flags)
        self._launch(k_repulse_condition, 1, self.flags, REPULSE_MAX_WINDOWS)

    def shape_and_validate(self):
        """catmull_rom -> arc length -> resample -> frames -> validate, for the pending envs."""
        e, n = self.e, self.n
        self._launch(k_spline, (e, self.nd), self.pending, self.m, self.per, self.control, self.dense)
        self._launch(k_arc_length, e, self.pending, self.nd, self.dense, self.dense_s, self.length)
        self._launch(k_resample, (e, n), self.pending, self.m, self.per, self.nd, n, self.control, self.dense_s,
                     self.length, self.pos)
        self._launch(k_frames, (e, n), self.pending, n, self.pos, self.tangent, self.normal, self.half_width,
                     self.curvature, self.length, self.worst, self.finite)
        self._launch(k_validate_spacing, (e, n), self.pending, n, self.pos, self.length, self.worst, self.finite,
                     self.bad)
        self._launch(k_validate_clearance, (e, n), self.pending, n, self.pos, self.length, self.bad)

    def _attempt(self):
        e = self.e
        self._launch(k_attempt_init, e, self.pending, self.worst, self.finite, self.bad, self.rep_active,
                     self.rep_iters, self.flags)
        self._launch(k_random_polar, (e, self.m), self.pending, self.episode, self.flags, self.seed, self.m,
                     self.control)
        wp.capture_while(self.flags[3:4], self._repulse_window)
        self.shape_and_validate()
        self._launch(k_accept, e, self.pending, self.bad, self.attempts, self.valid, self.flags)
        self._launch(k_attempt_condition, 1, self.flags)

    def regenerate(self):
        """A new track for every env (regenerate(all, advance=true))."""
        e, n = self.e, self.n
        self._launch(k_begin, e, self.episode, self.pending, self.attempts, self.valid, self.fallback, self.flags)
        if self.attempt_loop == "while":
            wp.capture_while(self.flags[0:1], self._attempt)
        else:
            for _ in range(pc.MAX_ATTEMPTS):
                self._attempt()
        fb = self.fb
        self._launch(k_fallback, (e, n), self.pending, fb.pos, fb.tangent, fb.normal, fb.curvature, fb.length,
                     fb.valid, self.pos, self.tangent, self.normal, self.half_width, self.curvature, self.length,
                     self.valid, self.fallback)
        self._launch(k_gates, (e, pc.MAX_GATES), n, pc.MAX_GATES, pc.GATE_SPACING, self.pos, self.tangent,
                     self.half_width, self.length, self.num_gates, self.gate_centre, self.gate_normal,
                     self.gate_half_width, self.gate_arc)

    def stats(self) -> dict:
        return pc.track_stats(self.length.numpy(), self.num_gates.numpy(), self.valid.numpy(), self.fallback.numpy(),
                              self.attempts.numpy())


def fallback_track(n: int, device) -> Generator:
    """The ellipse of generate_track.hpp (16 control points, no random stages), built once."""
    fb = Generator(1, n, device, m=pc.FALLBACK_CONTROL_POINTS)
    k = np.arange(pc.FALLBACK_CONTROL_POINTS, dtype=np.float32)
    ang = np.float32(2.0 * math.pi) * k / np.float32(pc.FALLBACK_CONTROL_POINTS)
    pts = np.stack([pc.FALLBACK_MAJOR * np.cos(ang), pc.FALLBACK_MINOR * np.sin(ang), np.zeros_like(ang)], 1)
    fb.control.assign(pts.astype(np.float32).reshape(1, -1, 3))
    fb.pending.fill_(1)
    fb.finite.fill_(1)
    fb.shape_and_validate()
    bad = fb.bad.numpy()
    fb.valid.fill_(int(not bad.any()))
    return fb


class Agents:
    """Progress state of the first `e` envs of a generator, one agent each."""

    def __init__(self, gen: Generator, e: int):
        self.gen, self.e, self.dev = gen, e, gen.dev
        z = lambda dtype=int, shape=e: wp.zeros(shape, dtype=dtype, device=self.dev)  # noqa: E731
        self.next_gate, self.laps, self.gates_passed, self.hint = z(), z(), z(), z()
        self.flags, self.status = z(), z()
        self.lap_progress, self.lateral, self.u = z(float), z(float), z(float)
        self.last, self.positions = z(wp.vec3), z(wp.vec3)
        wp.launch(k_reset_progress, dim=e, inputs=[gen.num_gates[:e], self.next_gate, self.laps, self.gates_passed,
                                                   self.hint, self.flags, self.status, self.u], device=self.dev)

    def place(self, repeat: int):
        g = self.gen
        wp.launch(k_place, dim=self.e, inputs=[g.n, repeat, pc.AGENT_ADVANCE, self.u, g.pos[:self.e], g.normal[:self.e],
                                               g.half_width[:self.e], g.length[:self.e], self.positions],
                  device=self.dev)

    def step(self):
        g, e = self.gen, self.e
        wp.launch(k_step, dim=e, inputs=[g.n, g.pos[:e], g.tangent[:e], g.normal[:e], g.half_width[:e], g.length[:e],
                                         g.num_gates[:e], g.gate_centre[:e], g.gate_normal[:e], g.gate_half_width[:e],
                                         self.positions, self.next_gate, self.laps, self.gates_passed,
                                         self.lap_progress, self.lateral, self.hint, self.last, self.flags,
                                         self.status], device=self.dev)


def make_timer(device) -> pc.Timer:
    """wp.Event pairs (enable_timing) and wp.get_event_elapsed_time on CUDA, perf_counter on the CPU."""
    sync = lambda: wp.synchronize_device(device)  # noqa: E731
    if not device.is_cuda:
        return pc.Timer(sync)
    return pc.Timer(sync, lambda: wp.Event(device, enable_timing=True), wp.record_event,
                    lambda a, b: wp.get_event_elapsed_time(a, b, synchronize=False))


def capture(device, call, use_graph: bool):
    """wp.ScopedCapture of `call`, replayed with wp.capture_launch (the call itself without graphs)."""
    if not use_graph:
        return call
    with wp.ScopedCapture(device=device, force_module_load=True) as cap:
        call()
    graph = cap.graph
    return lambda: wp.capture_launch(graph)


def describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + " ..."


def is_oom(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "out of memory" in text or "failed to allocate" in text or isinstance(exc, MemoryError)


def make_generator(e: int, n: int, device, args, fallbacks: dict) -> Generator:
    if n not in fallbacks:
        fallbacks[n] = fallback_track(n, device)
    return Generator(e, n, device, fallback=fallbacks[n], attempt_loop=args.attempt_loop, seed=args.seed)


def gen_row(args, device, rep, budget, timer, fallbacks, e, n, use_graph):
    what = f"generate E={e} N={n}"
    calls = args.warmup + args.repeats + 2
    if not budget.admit(rep, "generate", e, n, calls):
        return
    gen = None
    try:
        gen = make_generator(e, n, device, args, fallbacks)
        with pc.alarm(budget.limit(), what):
            first = timer.wall(gen.regenerate)
        budget.record("generate", e, n, first)
        repeats = budget.fit_repeats(first, calls - args.repeats, args.repeats, args.min_repeats)
        why = budget.check(what, first, calls - args.repeats + max(repeats, args.min_repeats))
        if why or repeats == 0:
            rep.error("generate", e, n, why or f"{what}: {args.min_repeats} timed calls do not fit")
            return
        with pc.alarm(budget.limit() + 5.0, what):
            try:
                replay = capture(device, gen.regenerate, use_graph)
            except Exception as exc:  # noqa: BLE001 - nested conditional nodes refused: record 16 attempts
                if gen.attempt_loop != "while":
                    raise
                rep.error("generate", e, n, "capture with the attempt loop as wp.capture_while failed, using "
                          f"--attempt-loop unrolled from here on: {describe(exc).splitlines()[0]}")
                args.attempt_loop = gen.attempt_loop = "unrolled"
                rep.doc["attempt_loop"] = "unrolled"
                replay = capture(device, gen.regenerate, use_graph)
            for _ in range(args.warmup):
                replay()
            ms = timer.measure(replay, count=repeats)
        rep.row(pc.timed_row("generate", e, n, ms, gen.stats()))
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        report_failure(rep, timer, "generate", e, n, exc)
    finally:
        del gen
        gc.collect()


def report_failure(rep, timer, scenario, e, n, exc):
    if isinstance(exc, pc.RowTimeout):
        timer.sync()
        rep.error(scenario, e, n, str(exc))
    elif is_oom(exc):
        rep.error(scenario, e, n, "out of memory: " + describe(exc).splitlines()[0])
    else:
        rep.error(scenario, e, n, describe(exc) + "\n" + traceback.format_exc(limit=4))


def step_rows(args, device, rep, budget, timer, fallbacks, use_graph):
    n = args.step_samples

    def build(e):
        batch = make_generator(e, n, device, args, fallbacks)
        return batch, batch.regenerate

    calls = 2 * (args.warmup + args.repeats) + 2
    for gen, e in pc.step_sizes(rep, budget, timer, args, build, gc.collect, calls):
        what = f"step E={e} N={n}"
        agents = None
        try:
            agents = Agents(gen, e)
            agents.place(0)
            with pc.alarm(budget.limit(), what):
                budget.record("step", e, n, timer.wall(agents.step))
                replay = capture(device, agents.step, use_graph)
                ms = pc.time_steps(timer, replay, agents.place, 1, args.warmup, args.repeats)
            off = int(((agents.flags.numpy() & pc.OFF_TRACK) != 0).sum())
            if off:
                print(f"warning: {off} of {e} agents off track in the step rows", file=sys.stderr)
            rep.row(pc.timed_row("step", e, n, ms))
        except Exception as exc:  # noqa: BLE001
            report_failure(rep, timer, "step", e, n, exc)
        finally:
            del agents
            gc.collect()


def stats_only(args, device, rep, fallbacks):
    """Correctness check: one generation per (E, N) with its statistics, then agents driven
    around min(--step-envs) tracks."""
    timer = make_timer(device)
    for e, n in ([] if args.no_generate else pc.generation_grid(args)):
        gen = make_generator(e, n, device, args, fallbacks)
        ms = 1e3 * timer.wall(gen.regenerate)
        rep.row(pc.timed_row("generate", e, n, [ms], gen.stats()))
        del gen
    if args.no_step:
        return
    e, n, steps = min(args.step_envs), args.step_samples, args.check_steps
    gen = make_generator(e, n, device, args, fallbacks)
    gen.regenerate()
    agents = Agents(gen, e)
    off = wrong = full = 0
    for r in range(steps):
        agents.place(r)
        agents.step()
        if r > 0:
            flags = agents.flags.numpy()
            off += int(((flags & pc.OFF_TRACK) != 0).sum())
            wrong += int(((flags & pc.WRONG_WAY) != 0).sum())
            full += int(((flags & pc.FULL_SEARCH) != 0).sum())
    expected = pc.expected_laps(agents.u.numpy(), gen.length.numpy(), gen.num_gates.numpy(), steps)
    rep.row(pc.step_check_row(e, n, steps, agents.laps.numpy(), agents.gates_passed.numpy(), expected,
                              off, wrong, full))


def main() -> int:
    p = pc.parser("Warp", default_budget_s=100.0)
    p.add_argument("--attempt-loop", choices=["while", "unrolled"], default="while",
                   help="attempts as a wp.capture_while loop (default) or 16 recorded attempts")
    p.add_argument("--no-graph", action="store_true", help="time eager launches instead of graph replays")
    args = pc.finish_args(p.parse_args(), p)
    pc.exit_on_sigterm()
    if wp is None:
        rep = pc.Report("warp", "unavailable", "unknown", args.json)
        rep.error("setup", None, None, "import warp failed: " + WARP_IMPORT_ERROR)
        return 1
    rep = None
    try:
        wp.config.quiet = True
        wp.init()
        device = wp.get_device(args.device)
        name = device.name if device.is_cuda else (platform.processor() or platform.machine() or "cpu")
        rep = pc.Report("warp", wp.config.version, name, args.json)
        rep.doc["attempt_loop"] = args.attempt_loop
        use_graph = device.is_cuda and not args.no_graph
        t0 = time.perf_counter()
        wp.load_module(device=device)  # every kernel compiled and loaded before any capture
        print(f"[warp] module loaded in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        fallbacks = {}
        with wp.ScopedDevice(device):
            if args.stats_only:
                stats_only(args, device, rep, fallbacks)
                return 0
            timer = make_timer(device)
            budget = pc.Budget(args.budget_s, args.row_cap_s)
            budget.phase(1.0 if args.no_step else args.generate_share)
            if not args.no_generate:
                for e, n in pc.generation_grid(args):
                    gen_row(args, device, rep, budget, timer, fallbacks, e, n, use_graph)
            if not args.no_step:
                budget.phase(1.0)
                step_rows(args, device, rep, budget, timer, fallbacks, use_graph)
            print(f"[warp] done in {time.perf_counter() - budget.start:.1f} s, {len(rep.doc['rows'])} rows, "
                  f"{len(rep.doc['errors'])} errors -> {args.json}", file=sys.stderr)
        return 0
    except BaseException as exc:  # noqa: BLE001 - the JSON is written whatever happens
        if rep is None:
            rep = pc.Report("warp", getattr(getattr(wp, "config", None), "version", "?"), "unknown", args.json)
        rep.error("setup", None, None, describe(exc) + "\n" + traceback.format_exc(limit=6))
        return 1


if __name__ == "__main__":
    sys.exit(main())

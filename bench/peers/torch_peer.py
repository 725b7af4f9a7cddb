#!/usr/bin/env python3
"""PyTorch peer of track_gen (issue #5): the `presets::track` pipeline and `course::step`,
vectorised over environments in plain torch, as an Isaac Lab user would write them.

What it computes (same parameters as presets::track, see peer_common.py):
  random_polar -> repulsive (12 bounded iterations, per-env convergence mask) -> periodic
  centripetal Catmull-Rom (32 samples per segment) -> arc-length resampling to N samples
  (cumsum + searchsorted + spline re-evaluation) -> frames (tangent, left normal, Menger
  curvature, cusp test) -> validation (finite, length, curvature, 5 % spacing, O(N^2) clearance
  outside the local window) -> up to 16 attempts -> fallback ellipse -> gates every 1 m.
  step: projection on the centreline in a window of +-8 segments around the hint, with the
  full O(N) search when the minimum is on the window's edge or farther than the half-width;
  lateral offset, off-track, wrong way, gates passed in order (several per step), laps.

How a torch user writes it (and what it costs):
  * Every env is a row of a batch; per-env branches are masks (torch.where). Nothing reads a
    value back to the host, so regeneration and step are captured in CUDA graphs
    (torch.cuda.graph) and the timings are graph replays between CUDA events.
  * Retries: a graph has static shapes, so every attempt regenerates all rows of the batch and
    only the rows still rejected take the new candidate (masked). The library stops each env at
    its first valid attempt; here the 16 attempts always run. `--eager` (peer "torch_eager")
    instead times eager calls that retry only the rejected rows (boolean indexing: dynamic
    shapes, host syncs, not capturable): about 1.2 attempts per env instead of 16, the faster
    form at large E; the same compact form builds the tracks of the step rows (untimed).
  * The repulsion runs its 12 iterations for every env, converged envs masked out.
  * step: the full search is computed for every env and selected by mask (a graph cannot run
    it for only the envs that need it); gates: the next G_max gates are tested at once and the
    leading run of crossings counted (cumprod), the library's in-order loop as a tensor op.
  * Chunking over envs only where memory forces it: generation and step process the batch in
    chunks whose working set stays under --mem-gb (the O(N^2) clearance test of an attempt is
    E * N^2 distances: 4 GB at E = 4096, N = 512, so large rows run as several chunks).
  * Randomness: torch's default generator (Philox on CUDA, Mersenne Twister on the CPU): the
    same distributions as the library, not the same bits as its Random123 Philox streams.

--compile: the same functions through torch.compile (mode max-autotune-no-cudagraphs, our
own torch.cuda.graph capture on top; --compile-mode picks another), peer "torch_compile"
("torch_compile_eager" with --eager); the random draws stay outside the
compiled regions. Compile time (first call minus a warm call) is reported per row as
"compile_s" and in total under "compile"; a compile failure or a compile over --compile-cap-s is
recorded in "errors" and the remaining compiled rows are skipped.

Run:  python bench/peers/torch_peer.py --json out/torch.json [--quick] [--compile] [--device cpu]
"""

from __future__ import annotations

import gc
import math
import platform
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peer_common as pc  # noqa: E402

try:
    import torch
except ImportError as exc:  # the JSON is written by main() with this message
    torch = None
    TORCH_IMPORT_ERROR = repr(exc)


# --------------------------------------------------------------------------------------------
# Vector helpers on [..., 3] tensors
# --------------------------------------------------------------------------------------------

def dot(a, b):
    return (a * b).sum(-1)


def norm(a):
    return torch.linalg.vector_norm(a, dim=-1)


def normalize_or(v, fallback):
    """Unit vector along v, or `fallback` where |v| <= 1e-20 (detail::normalize_or)."""
    n = norm(v).unsqueeze(-1)
    ok = n > 1e-20
    return torch.where(ok, v / torch.where(ok, n, torch.ones_like(n)), fallback)


def axis(ref, i: int):
    """Unit vector along axis i, made on ref's device by a kernel (a host-to-device copy of a
    constant would break the CUDA-graph capture)."""
    return torch.eye(3, device=ref.device, dtype=ref.dtype)[i]


def closest_parameter(p, a, b):
    """Parameter in [0, 1] of the point of segment [a, b] nearest to p (detail::closest_parameter)."""
    ab = b - a
    den = dot(ab, ab)
    ok = den > 0
    t = dot(p - a, ab) / torch.where(ok, den, torch.ones_like(den))
    return torch.where(ok, t.clamp(0.0, 1.0), torch.zeros_like(t))


def lerp3(a, b, t):
    return a + (b - a) * t.unsqueeze(-1)


def vec(x, y, z):
    return torch.stack(torch.broadcast_tensors(x, y, z), dim=-1)


def catmull_rom(p0, p1, p2, p3, u):
    """Centripetal Catmull-Rom (alpha 1/2) between p1 and p2 at local parameter u (Barry-Goldman
    recursion, knots |b - a|^(1/2) kept >= 1e-6), broadcast over leading dimensions."""
    t1 = norm(p1 - p0).sqrt().clamp_min(1e-6)
    t2 = t1 + norm(p2 - p1).sqrt().clamp_min(1e-6)
    t3 = t2 + norm(p3 - p2).sqrt().clamp_min(1e-6)
    t = t1 + u * (t2 - t1)

    def mix(a, b, ta, tb):  # a at knot ta, b at knot tb, evaluated at t
        return lerp3(a, b, (t - ta) / (tb - ta))

    a1 = mix(p0, p1, 0.0, t1)
    a2 = mix(p1, p2, t1, t2)
    a3 = mix(p2, p3, t2, t3)
    b1 = mix(a1, a2, 0.0, t2)
    b2 = mix(a2, a3, t1, t3)
    return mix(b1, b2, t1, t2)


# --------------------------------------------------------------------------------------------
# Generation stages (batched over the rows of a chunk)
# --------------------------------------------------------------------------------------------

def random_polar(u, shape_u):
    """Control points [E, M, 3] from uniforms u [E, M, 3] and shape_u [E, 5] (stages::random_polar:
    the phase, the lobes' split, total amplitude and two phases)."""
    m = u.shape[1]
    step = 2.0 * math.pi / m
    i = torch.arange(m, device=u.device, dtype=u.dtype)
    t = step * (i + pc.ANGLE_JITTER * (u[..., 0] - 0.5))
    angle = shape_u[:, 0:1] * (2.0 * math.pi) + t
    total = pc.LOBE_AMPLITUDE_MIN + (pc.LOBE_AMPLITUDE_MAX - pc.LOBE_AMPLITUDE_MIN) * shape_u[:, 2:3]
    a2 = total * shape_u[:, 1:2]
    lobes = 1.0 + a2 * torch.cos(2.0 * t + shape_u[:, 3:4] * (2.0 * math.pi)) \
        + (total - a2) * torch.cos(3.0 * t + shape_u[:, 4:5] * (2.0 * math.pi))
    r = (pc.RADIUS_MIN + (pc.RADIUS_MAX - pc.RADIUS_MIN) * u[..., 1]) * lobes
    z = pc.ELEVATION_MIN + (pc.ELEVATION_MAX - pc.ELEVATION_MIN) * u[..., 2]
    return vec(r * torch.cos(angle), r * torch.sin(angle), z)


def repulse_iteration(p, running):
    """One iteration of stages::polygon_separation for every row; rows whose overlap is below the
    tolerance stop (running = False) and keep their points. Returns (points, running)."""
    m = p.shape[1]
    idx = torch.arange(m, device=p.device)
    rel = (idx.unsqueeze(0) - idx.unsqueeze(1)) % m  # [i, j]: segment j relative to point i
    near = (rel == 0) | (rel == 1) | (rel == m - 1) | (rel == m - 2)
    a = p.unsqueeze(1)                      # segment starts, [E, 1, M(j), 3]
    ab = torch.roll(p, -1, 1).unsqueeze(1) - a
    pi = p.unsqueeze(2)                     # points, [E, M(i), 1, 3]
    t = closest_parameter(pi, a, a + ab)    # [E, M, M]
    away = pi - (a + ab * t.unsqueeze(-1))
    d = norm(away)
    hit = (d < pc.REPULSE_CLEARANCE) & ~near
    zero = torch.zeros_like(ab[..., 0])
    side = normalize_or(vec(-ab[..., 1], ab[..., 0], zero), axis(p, 0))
    gap = torch.where(hit, pc.REPULSE_CLEARANCE - d, torch.zeros_like(d))
    push = (normalize_or(away, side) * (0.5 * gap).unsqueeze(-1)).sum(2)
    mid = 0.5 * (torch.roll(p, 1, 1) + torch.roll(p, -1, 1))
    push = push + hit.any(2).unsqueeze(-1) * (mid - p) * pc.REPULSE_SMOOTHING
    running = running & ~(gap.amax((1, 2)) < pc.REPULSE_TOLERANCE)
    return torch.where(running[:, None, None], p + push, p), running


def shape_and_validate(p, n: int, per: int):
    """catmull_rom -> resample -> frames -> validate for control points p [E, M, 3]. Returns
    positions, tangents, normals, curvature [E, N(,3)], length [E] and valid [E] (bool)."""
    e, m = p.shape[0], p.shape[1]
    dev, dt = p.device, p.dtype
    p0, p2, p3 = torch.roll(p, 1, 1), torch.roll(p, -1, 1), torch.roll(p, -2, 1)
    u = torch.arange(per, device=dev, dtype=dt) / per
    dense = catmull_rom(p0.unsqueeze(2), p.unsqueeze(2), p2.unsqueeze(2), p3.unsqueeze(2), u).reshape(e, m * per, 3)
    nd = m * per
    chord = norm(torch.roll(dense, -1, 1) - dense)
    dense_s = torch.cat([torch.zeros_like(chord[:, :1]), torch.cumsum(chord, 1)], 1)  # [E, D + 1]
    length = dense_s[:, nd]
    s = length.unsqueeze(1) * (torch.arange(n, device=dev, dtype=dt) / n)
    lo = (torch.searchsorted(dense_s, s, right=True) - 1).clamp(0, nd - 1)
    s_lo = dense_s.gather(1, lo)
    span = dense_s.gather(1, lo + 1) - s_lo
    ok = span > 0
    frac = torch.where(ok, ((s - s_lo) / torch.where(ok, span, torch.ones_like(span))).clamp(0.0, 1.0),
                       torch.zeros_like(span))
    seg = torch.div(lo, per, rounding_mode="floor")
    uu = ((lo - seg * per).to(dt) + frac) / per

    def control(offset):
        i = ((seg + offset) % m).unsqueeze(-1).expand(e, n, 3)
        return p.gather(1, i)

    pos = catmull_rom(control(-1), control(0), control(1), control(2), uu)

    # frames
    a, c = torch.roll(pos, 1, 1), torch.roll(pos, -1, 1)
    tangent = normalize_or(c - a, axis(p, 0))
    zero = torch.zeros_like(tangent[..., 0])
    normal = normalize_or(vec(-tangent[..., 1], tangent[..., 0], zero), axis(p, 1))
    ba, cb = pos - a, c - pos
    sides = norm(ba) * norm(cb) * norm(c - a)
    okc = sides > 0
    kappa = torch.where(okc, 2.0 * norm(torch.cross(ba, cb, dim=-1)) / torch.where(okc, sides, torch.ones_like(sides)),
                        torch.zeros_like(sides))
    worst = torch.where(dot(ba, cb) < 0, torch.full_like(kappa, 3.0e38), kappa).amax(1)
    finite = torch.isfinite(length) & torch.isfinite(pos).all(2).all(1) & torch.isfinite(kappa).all(1)

    # validate: the cheap tests, then the O(N^2) clearance outside the local window
    valid = finite & (length >= pc.LENGTH_MIN) & (length <= pc.LENGTH_MAX) & (worst <= pc.MAX_CURVATURE)
    ds = length / n
    step = norm(c - pos)
    valid = valid & ((step >= 0.95 * ds.unsqueeze(1)) & (step <= 1.05 * ds.unsqueeze(1))).all(1)
    window = torch.where(ds > 0, torch.floor(pc.WINDOW_ARC / torch.where(ds > 0, ds, torch.ones_like(ds))),
                         torch.full_like(ds, n))
    window = torch.nan_to_num(window, nan=float(n), posinf=float(n)).clamp(0, n).to(torch.int32)
    idx = torch.arange(n, device=dev, dtype=torch.int32)
    cyc = (idx.unsqueeze(0) - idx.unsqueeze(1)) % n               # [i, j]: samples apart along the track
    w = window[:, None, None]
    far = (cyc > w) & (cyc < n - w)                               # pairs outside the local window
    dist = torch.cdist(pos, pos)                                  # [E, N, N]
    clear = ~((dist < pc.CLEARANCE) & far).any(2).any(1)
    return pos, tangent, normal, kappa, length, valid & clear


def gates(pos, tangent, length, max_gates: int):
    """stages::checkpoints: G = floor(L / spacing) in [1, G_max] gates at arc lengths g L / G."""
    e, n = pos.shape[0], pos.shape[1]
    count = torch.where(torch.isfinite(length), torch.floor(length / pc.GATE_SPACING), torch.ones_like(length))
    g_total = torch.nan_to_num(count, nan=1.0).clamp(1, max_gates).to(torch.int64)
    g = torch.arange(max_gates, device=pos.device, dtype=torch.int64).unsqueeze(0)   # [1, Gmax]
    num = g * n
    k = torch.div(num, g_total.unsqueeze(1), rounding_mode="floor").clamp(max=n - 1)
    f = (num - k * g_total.unsqueeze(1)).to(pos.dtype) / g_total.unsqueeze(1).to(pos.dtype)
    k1 = (k + 1) % n
    pick = lambda x, i: x.gather(1, i.unsqueeze(-1).expand(e, max_gates, 3))  # noqa: E731
    centre = lerp3(pick(pos, k), pick(pos, k1), f)
    normal = normalize_or(lerp3(pick(tangent, k), pick(tangent, k1), f), pick(tangent, k))
    arc = length.unsqueeze(1) * (g.to(pos.dtype) / g_total.unsqueeze(1).to(pos.dtype))
    return centre, normal, arc, g_total


# --------------------------------------------------------------------------------------------
# Progress tracking (course_ref::step), batched over envs
# --------------------------------------------------------------------------------------------

def crosses_gates(centre, normal, half_width, a, b):
    """crosses_gate for gates [E, K] and the segments a -> b [E, 3]."""
    a, b = a.unsqueeze(1), b.unsqueeze(1)
    da, db = dot(a - centre, normal), dot(b - centre, normal)
    forward = (da < 0) & (db >= 0)
    den = torch.where(forward, da - db, torch.ones_like(da))
    x = lerp3(a, b, da / den)
    zero = torch.zeros_like(da)
    left = normalize_or(vec(-normal[..., 1], normal[..., 0], zero), axis(normal, 1))
    up = torch.cross(normal, left, dim=-1)
    r = x - centre
    return forward & (dot(r, left).abs() <= half_width) & (dot(r, up).abs() <= pc.GATE_HALF_HEIGHT)


def nearest(p, a, b):
    """For positions p [E, 3] and segments a, b [E, K, 3]: first index of the minimum distance,
    its parameter and squared distance."""
    t = closest_parameter(p.unsqueeze(1), a, b)
    d = p.unsqueeze(1) - lerp3(a, b, t)
    d2 = dot(d, d)
    j = d2.argmin(1, keepdim=True)
    return j[:, 0], t.gather(1, j)[:, 0], d2.gather(1, j)[:, 0]


def step_rows(tr, st, p, window: int = pc.PROJECTION_WINDOW):
    """course_ref::step for the rows of tr (track tensors) and st (state tensors), in place."""
    e, n = tr["pos"].shape[0], tr["pos"].shape[1]
    dev = p.device
    pos, tan, nrm, hw, length = tr["pos"], tr["tan"], tr["nrm"], tr["hw"], tr["length"]
    finite = torch.isfinite(p).all(1)
    flags = st["flags"] & ~pc.STEP_EVENTS
    has_last = (flags & pc.HAS_LAST) != 0
    hint = st["hint"].long()

    def at(x, k):  # x[e, k[e, ...]]
        if x.dim() == 2:
            return x.gather(1, k)
        return x.gather(1, k.unsqueeze(-1).expand(*k.shape, 3))

    # local search: 2W + 1 segments around the hint, in the library's scan order
    offsets = torch.arange(-window, window + 1, device=dev)
    segs = (hint.unsqueeze(1) + offsets) % n
    j, t_w, d2_w = nearest(p, at(pos, segs), at(pos, (segs + 1) % n))
    best_w = segs.gather(1, j.unsqueeze(1))[:, 0]
    off = (best_w - hint) % n
    full = ~has_last | (off == window) | (off == n - window) | (2 * window + 1 >= n)
    hw_best = hw.gather(1, best_w.unsqueeze(1))[:, 0]
    full = full | (d2_w > hw_best * hw_best)
    # full search, computed for every row and selected by mask
    best_f, t_f, _ = nearest(p, pos, torch.roll(pos, -1, 1))
    best = torch.where(full, best_f, best_w)
    t = torch.where(full, t_f, t_w)
    nxt = (best + 1) % n
    b1, n1 = best.unsqueeze(1), nxt.unsqueeze(1)
    point = lerp3(at(pos, b1)[:, 0], at(pos, n1)[:, 0], t)
    t_b = at(tan, b1)[:, 0]
    tangent = normalize_or(lerp3(t_b, at(tan, n1)[:, 0], t), t_b)
    n_b = at(nrm, b1)[:, 0]
    left = normalize_or(lerp3(n_b, at(nrm, n1)[:, 0], t), n_b)
    half = torch.lerp(hw.gather(1, b1)[:, 0], hw.gather(1, n1)[:, 0], t)
    lateral = dot(p - point, left)
    s = (best.to(p.dtype) + t) * (length / n)
    arc = torch.where(s >= length, s - length, s)

    new = flags | torch.where(full & has_last, pc.FULL_SEARCH, 0) | torch.where(lateral.abs() > half, pc.OFF_TRACK, 0)
    last = st["last"]
    d = p - last
    wrong = has_last & (dot(d, d) > 1e-12) & (dot(d, tangent) < 0)
    new = new | torch.where(wrong, pc.WRONG_WAY, 0)

    # gates in order: the next G_max gates, the leading run of crossings counted
    g_total = tr["num_gates"].long()
    k = torch.arange(tr["gate_arc"].shape[1], device=dev)
    gidx = (st["next_gate"].long().unsqueeze(1) + k) % g_total.unsqueeze(1)
    hit = crosses_gates(at(tr["gate_centre"], gidx), at(tr["gate_normal"], gidx), tr["gate_hw"].gather(1, gidx), last, p)
    hit = hit & (k < g_total.unsqueeze(1)) & has_last.unsqueeze(1)
    run = torch.cumprod(hit.to(torch.int32), 1)
    passed = run.sum(1)
    laps = (run.bool() & (gidx == 0)).sum(1)
    new = new | torch.where(passed > 0, pc.GATE_PASSED, 0) | torch.where(laps > 0, pc.LAP_COMPLETED, 0)

    keep = ~finite
    st["next_gate"].copy_(torch.where(keep, st["next_gate"], ((st["next_gate"] + passed) % g_total).to(torch.int32)))
    st["laps"].copy_(torch.where(keep, st["laps"], st["laps"] + laps.to(torch.int32)))
    st["gates_passed"].copy_(torch.where(keep, st["gates_passed"], st["gates_passed"] + passed.to(torch.int32)))
    st["lap_progress"].copy_(torch.where(keep, st["lap_progress"], arc))
    st["lateral"].copy_(torch.where(keep, st["lateral"], lateral))
    st["hint"].copy_(torch.where(keep, st["hint"], best.to(torch.int32)))
    st["last"].copy_(torch.where(keep.unsqueeze(1), last, p))
    st["flags"].copy_(torch.where(keep, flags | pc.INVALID_POSITION, new | pc.HAS_LAST).to(torch.int32))
    st["status"].copy_(st["status"] | torch.where(keep, pc.STATUS_INVALID_INPUT, 0).to(torch.int32))


# --------------------------------------------------------------------------------------------
# A batch of tracks with its progress state (static buffers, so graphs can replay on them)
# --------------------------------------------------------------------------------------------

class Course:
    def __init__(self, num_envs: int, n: int, device, mem_bytes: float, fns: dict):
        self.e, self.n, self.dev, self.fns = num_envs, n, device, fns
        f32, i32 = torch.float32, torch.int32
        z = lambda *s, dtype=f32: torch.zeros(*s, device=device, dtype=dtype)  # noqa: E731
        g = pc.MAX_GATES
        self.tr = {"pos": z(num_envs, n, 3), "tan": z(num_envs, n, 3), "nrm": z(num_envs, n, 3),
                   "hw": z(num_envs, n), "curv": z(num_envs, n), "length": z(num_envs),
                   "num_gates": z(num_envs, dtype=i32), "gate_centre": z(num_envs, g, 3),
                   "gate_normal": z(num_envs, g, 3), "gate_hw": z(num_envs, g), "gate_arc": z(num_envs, g)}
        self.valid = z(num_envs, dtype=torch.bool)
        self.fallback = z(num_envs, dtype=torch.bool)
        self.attempts = z(num_envs, dtype=i32)
        self.tr["hw"].fill_(pc.HALF_WIDTH)
        # Working set per env of one attempt: the dense spline (~30 tensors of D x 3), the
        # resampled track (~40 of N x 3) and the clearance test (distances + masks, ~7 B a pair).
        d = pc.CONTROL_POINTS * pc.SAMPLES_PER_SEGMENT
        per_env = 4 * (30 * 3 * d + 40 * 3 * n) + 7 * n * n
        self.gen_chunk = max(1, min(num_envs, int(mem_bytes // per_env)))
        per_env_step = 4 * (12 * 3 * n + 14 * 3 * pc.MAX_GATES)
        self.step_chunk = max(1, min(num_envs, int(mem_bytes // per_env_step)))
        self._fallback_track()

    def _fallback_track(self):
        """The ellipse of generate_track.hpp, built once through the same stages (it does not
        depend on the env): rows that exhaust their attempts copy it."""
        k = torch.arange(pc.FALLBACK_CONTROL_POINTS, device=self.dev, dtype=torch.float32)
        ang = 2.0 * math.pi * k / pc.FALLBACK_CONTROL_POINTS
        p = vec(pc.FALLBACK_MAJOR * torch.cos(ang), pc.FALLBACK_MINOR * torch.sin(ang), torch.zeros_like(ang))
        pos, tan, nrm, curv, length, valid = shape_and_validate(p.unsqueeze(0), self.n, pc.SAMPLES_PER_SEGMENT)
        self.fb = {"pos": pos, "tan": tan, "nrm": nrm, "curv": curv, "length": length, "valid": valid}

    def _attempt(self, rows: int):
        u = torch.rand(rows, pc.CONTROL_POINTS, 3, device=self.dev)
        shape = torch.rand(rows, 5, device=self.dev)
        p = self.fns["polar"](u, shape)
        running = torch.ones(rows, device=self.dev, dtype=torch.bool)
        for _ in range(pc.REPULSE_MAX_ITERATIONS):
            p, running = self.fns["repulse"](p, running)
        return self.fns["shape"](p, self.n, pc.SAMPLES_PER_SEGMENT)

    def _finish(self, lo: int, hi: int):
        tr = self.tr
        fb = self.fallback[lo:hi]
        for key in ("pos", "tan", "nrm", "curv"):
            tr[key][lo:hi].copy_(torch.where(fb[:, None, None] if key != "curv" else fb[:, None],
                                             self.fb[key], tr[key][lo:hi]))
        tr["length"][lo:hi].copy_(torch.where(fb, self.fb["length"], tr["length"][lo:hi]))
        self.valid[lo:hi].copy_(self.valid[lo:hi] | (fb & self.fb["valid"]))
        centre, normal, arc, g_total = self.fns["gates"](tr["pos"][lo:hi], tr["tan"][lo:hi], tr["length"][lo:hi],
                                                         pc.MAX_GATES)
        tr["gate_centre"][lo:hi].copy_(centre)
        tr["gate_normal"][lo:hi].copy_(normal)
        tr["gate_arc"][lo:hi].copy_(arc)
        tr["gate_hw"][lo:hi].fill_(pc.HALF_WIDTH)
        tr["num_gates"][lo:hi].copy_(g_total.to(torch.int32))

    def _masked(self, lo: int, hi: int):
        """Graph-safe: every attempt for every row; a row takes its first valid candidate."""
        tr, rows = self.tr, hi - lo
        accepted = torch.zeros(rows, device=self.dev, dtype=torch.bool)
        attempts = torch.full((rows,), pc.MAX_ATTEMPTS, device=self.dev, dtype=torch.int32)
        for a in range(pc.MAX_ATTEMPTS):
            pos, tan, nrm, curv, length, valid = self._attempt(rows)
            take = valid & ~accepted
            for key, x in (("pos", pos), ("tan", tan), ("nrm", nrm)):
                tr[key][lo:hi].copy_(torch.where(take[:, None, None], x, tr[key][lo:hi]))
            tr["curv"][lo:hi].copy_(torch.where(take[:, None], curv, tr["curv"][lo:hi]))
            tr["length"][lo:hi].copy_(torch.where(take, length, tr["length"][lo:hi]))
            attempts = torch.where(take, a + 1, attempts)
            accepted = accepted | take
        self.valid[lo:hi].copy_(accepted)
        self.fallback[lo:hi].copy_(~accepted)
        self.attempts[lo:hi].copy_(attempts)
        self._finish(lo, hi)

    def _compact(self):
        """Eager: each attempt only for the rows still rejected (boolean indexing, host syncs),
        in chunks of the pending rows."""
        tr = self.tr
        pending = torch.arange(self.e, device=self.dev)
        self.valid.fill_(False)
        self.attempts.fill_(pc.MAX_ATTEMPTS)
        for a in range(pc.MAX_ATTEMPTS):
            if pending.numel() == 0:
                break
            rejected = []
            for lo in range(0, pending.numel(), self.gen_chunk):
                rows = pending[lo:lo + self.gen_chunk]
                pos, tan, nrm, curv, length, valid = self._attempt(rows.numel())
                ok = rows[valid]
                for key, x in (("pos", pos), ("tan", tan), ("nrm", nrm), ("curv", curv), ("length", length)):
                    tr[key][ok] = x[valid]
                self.valid[ok] = True
                self.attempts[ok] = a + 1
                rejected.append(rows[~valid])
            pending = torch.cat(rejected)
        self.fallback.copy_(~self.valid)
        for lo in range(0, self.e, self.gen_chunk):
            self._finish(lo, min(self.e, lo + self.gen_chunk))

    def regenerate(self, compact: bool = False):
        """A new track for every env (regenerate(all, advance=true))."""
        if compact:
            self._compact()
            return
        for lo in range(0, self.e, self.gen_chunk):
            self._masked(lo, min(self.e, lo + self.gen_chunk))

    def stats(self) -> dict:
        return pc.track_stats(self.tr["length"].cpu().numpy(), self.tr["num_gates"].cpu().numpy(),
                              self.valid.cpu().numpy(), self.fallback.cpu().numpy(), self.attempts.cpu().numpy())


class Agents:
    """Progress state of the first `e` envs of a course, one agent each, and the placement of
    bench/track_gen_bench.cu (untimed): arc length u_e L + 0.15 m per repeat, lateral swing of
    half the half-width."""

    def __init__(self, course: Course, e: int, fns: dict):
        self.course, self.e, self.fns = course, e, fns
        dev = course.dev
        self.tr = {k: v[:e] for k, v in course.tr.items()}
        z = lambda *s, dtype=torch.int32: torch.zeros(*s, device=dev, dtype=dtype)  # noqa: E731
        self.st = {"next_gate": (self.tr["num_gates"] > 1).to(torch.int32), "laps": z(e), "gates_passed": z(e),
                   "lap_progress": z(e, dtype=torch.float32), "lateral": z(e, dtype=torch.float32), "hint": z(e),
                   "last": z(e, 3, dtype=torch.float32), "flags": z(e), "status": z(e)}
        self.p = torch.zeros(e, 3, device=dev)
        gen = torch.Generator(device=dev)
        gen.manual_seed(0x62656E63)
        self.u = torch.rand(e, device=dev, generator=gen)
        self.phase = torch.arange(e, device=dev, dtype=torch.float32)
        self.chunk = course.step_chunk

    def place(self, repeat: int):
        tr, n = self.tr, self.course.n
        length = tr["length"]
        s = torch.fmod(self.u * length + repeat * pc.AGENT_ADVANCE, length)
        x = s / (length / n)
        k = x.long().clamp(max=n - 1)
        f = x - k
        k1 = (k + 1) % n
        i3 = lambda i: i.view(-1, 1, 1).expand(-1, 1, 3)  # noqa: E731
        a = tr["pos"].gather(1, i3(k))[:, 0]
        b = tr["pos"].gather(1, i3(k1))[:, 0]
        na = tr["nrm"].gather(1, i3(k))[:, 0]
        lat = 0.5 * tr["hw"].gather(1, k.view(-1, 1))[:, 0] * torch.sin(0.7 * repeat + self.phase)
        q = a + (b - a) * f.unsqueeze(1) + na * lat.unsqueeze(1)
        q[:, 2] = a[:, 2] + (b[:, 2] - a[:, 2]) * f
        self.p.copy_(q)

    def step(self):
        for lo in range(0, self.e, self.chunk):
            hi = min(self.e, lo + self.chunk)
            self.fns["step"]({k: v[lo:hi] for k, v in self.tr.items()}, {k: v[lo:hi] for k, v in self.st.items()},
                             self.p[lo:hi])

    def off_track(self) -> int:
        return int(((self.st["flags"] & pc.OFF_TRACK) != 0).sum().item())


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------

def make_timer(device) -> pc.Timer:
    """torch.cuda.Event pairs on CUDA, perf_counter on the CPU."""
    if device.type != "cuda":
        return pc.Timer(lambda: None)
    return pc.Timer(torch.cuda.synchronize, lambda: torch.cuda.Event(enable_timing=True), lambda ev: ev.record(),
                    lambda a, b: a.elapsed_time(b))


def capture(device, call, use_graph: bool):
    """A replayable form of `call`: a CUDA graph on CUDA (warmed up on a side stream first, as
    torch.cuda.graph asks), the call itself otherwise."""
    if not use_graph:
        return call
    side = torch.cuda.Stream(device=device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    torch.cuda.synchronize(device)
    return graph.replay


def free_memory(device):
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + " ..."


def report_failure(rep, timer, scenario: str, e: int, n: int, exc: BaseException, compiled: bool) -> bool:
    """Records why a row failed; False when the compiled peer should stop (its compiled
    functions failed or took too long)."""
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        rep.error(scenario, e, n, "out of memory: " + describe(exc).splitlines()[0])
        return True
    if isinstance(exc, pc.RowTimeout):
        timer.sync()
        rep.error(scenario, e, n, str(exc))
    else:
        rep.error(scenario, e, n, describe(exc) + "\n" + traceback.format_exc(limit=4))
    return not compiled


def gen_row(args, device, rep, budget, timer, fns, compiled, e, n, use_graph) -> bool:
    """One generation row; False once compiled functions failed (stop the compiled peer)."""
    what = f"generate E={e} N={n}"
    calls = args.warmup + args.repeats + (2 if use_graph else 0) + (1 if compiled else 0)
    if not budget.admit(rep, "generate", e, n, calls):
        return True
    course = None
    try:
        course = Course(e, n, device, args.mem_gb * 2**30, fns)
        compile_s = None
        with pc.alarm(args.compile_cap_s if compiled else budget.limit(), what + (" (compile)" if compiled else "")):
            first = timer.wall(lambda: course.regenerate(compact=args.eager))
        if compiled:
            second = timer.wall(lambda: course.regenerate(compact=args.eager))
            compile_s = max(0.0, first - second)
            rep.doc["compile"]["total_s"] += compile_s
            first = second
        # The timed calls are graph replays, without the eager call's launch overhead (which
        # dominates at small E): the budget counts one replay, and the next E is predicted
        # from it (predicting from the eager call skipped every row of the 0b69e5e run). An
        # eager call's host overhead does not grow with E either, so eager rows predict
        # nothing: the next one runs its first call under the row's alarm and is sized by it.
        with pc.alarm(budget.limit() + 5.0, what + " (capture)"):
            replay = capture(device, lambda: course.regenerate(compact=args.eager), use_graph)
            per_call = timer.wall(replay) if use_graph else first
        if use_graph:
            budget.record("generate", e, n, per_call)
        repeats = budget.fit_repeats(per_call, args.warmup, args.repeats, args.min_repeats)
        why = budget.check(what, per_call, args.warmup + max(repeats, args.min_repeats))
        if why or repeats == 0:
            rep.error("generate", e, n, why or f"{what}: {args.min_repeats} timed calls do not fit")
            return True
        with pc.alarm(budget.limit() + 5.0, what):
            for _ in range(args.warmup):
                replay()
            ms = timer.measure(replay, count=repeats)
        rep.row(pc.timed_row("generate", e, n, ms, course.stats(), compile_s))
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        return report_failure(rep, timer, "generate", e, n, exc, compiled)
    finally:
        del course
        free_memory(device)
    return True


def step_rows_all(args, device, rep, budget, timer, fns, compiled, use_graph):
    """The step rows: tracks built once for the largest E (compact eager generation, untimed),
    the first E envs of that batch for each row."""
    n = args.step_samples

    def build(e):
        batch = Course(e, n, device, args.mem_gb * 2**30, fns)
        return batch, lambda: batch.regenerate(compact=True)

    calls = 2 * (args.warmup + args.repeats) + 3
    # The tracks are built by compact retries, far cheaper than a timed (masked) regeneration:
    # the generation rows do not predict the build.
    for course, e in pc.step_sizes(rep, budget, timer, args, build, lambda: free_memory(device), calls,
                                   like_generate=False):
        what = f"step E={e} N={n}"
        agents = None
        try:
            agents = Agents(course, e, fns)
            compile_s = None
            agents.place(0)
            with pc.alarm(args.compile_cap_s if compiled else budget.limit(), what):
                first = timer.wall(agents.step)
            if compiled:
                agents.place(1)
                second = timer.wall(agents.step)
                compile_s = max(0.0, first - second)
                rep.doc["compile"]["total_s"] += compile_s
                first = second
            with pc.alarm(budget.limit() + 5.0, what):
                replay = capture(device, agents.step, use_graph)
                ms = pc.time_steps(timer, replay, agents.place, 2, args.warmup, args.repeats)
            # The next E is predicted from this row's replays (the eager first call is mostly
            # launch overhead at small E; eager rows predict nothing, as in gen_row).
            if use_graph:
                budget.record("step", e, n, sorted(ms)[len(ms) // 2] * 1e-3)
            off = agents.off_track()
            if off:
                print(f"warning: {off} of {e} agents off track in the step rows", file=sys.stderr)
            rep.row(pc.timed_row("step", e, n, ms, compile_s=compile_s))
        except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
            if not report_failure(rep, timer, "step", e, n, exc, compiled):
                return
        finally:
            del agents
            free_memory(device)


def stats_only(args, device, rep, fns):
    """Correctness check: one generation per (E, N) (the timed path: masked, or compact with
    --eager) with its statistics, then agents driven around min(--step-envs) tracks."""
    timer = make_timer(device)
    for e, n in ([] if args.no_generate else pc.generation_grid(args)):
        course = Course(e, n, device, args.mem_gb * 2**30, fns)
        ms = 1e3 * timer.wall(lambda: course.regenerate(compact=args.eager))
        rep.row(pc.timed_row("generate", e, n, [ms], course.stats()))
        del course
    if args.no_step:
        return
    e, n, steps = min(args.step_envs), args.step_samples, args.check_steps
    course = Course(e, n, device, args.mem_gb * 2**30, fns)
    course.regenerate(compact=args.eager)
    agents = Agents(course, e, fns)
    off = wrong = full = 0
    for r in range(steps):
        agents.place(r)
        agents.step()
        if r > 0:
            flags = agents.st["flags"]
            off += int(((flags & pc.OFF_TRACK) != 0).sum())
            wrong += int(((flags & pc.WRONG_WAY) != 0).sum())
            full += int(((flags & pc.FULL_SEARCH) != 0).sum())
    cpu = lambda x: x.cpu().numpy()  # noqa: E731
    expected = pc.expected_laps(cpu(agents.u), cpu(agents.tr["length"]), cpu(agents.tr["num_gates"]), steps)
    rep.row(pc.step_check_row(e, n, steps, cpu(agents.st["laps"]), cpu(agents.st["gates_passed"]), expected,
                              off, wrong, full))


def functions(compiled: bool, mode: str) -> dict:
    fns = {"polar": random_polar, "repulse": repulse_iteration, "shape": shape_and_validate, "gates": gates,
           "step": step_rows}
    if compiled:
        import torch._dynamo  # noqa: PLC0415
        for key in ("cache_size_limit", "recompile_limit"):  # the name changed across versions
            if hasattr(torch._dynamo.config, key):
                setattr(torch._dynamo.config, key, max(64, getattr(torch._dynamo.config, key)))
        fns = {k: torch.compile(f, mode=mode) for k, f in fns.items()}
    return fns


def main() -> int:
    p = pc.parser("PyTorch", default_budget_s=100.0)
    p.add_argument("--compile", action="store_true", help="torch.compile the stages (peer 'torch_compile')")
    p.add_argument("--compile-mode", default="max-autotune-no-cudagraphs",
                   help="torch.compile mode (default max-autotune-no-cudagraphs; our own graph capture on top)")
    p.add_argument("--compile-cap-s", type=float, default=120.0,
                   help="cap on the first (compiling) call of each compiled row (default 120)")
    p.add_argument("--eager", action="store_true",
                   help="time eager calls, retries on the rejected rows only (no CUDA graph)")
    p.add_argument("--mem-gb", type=float, default=24.0,
                   help="working set per chunk of envs; larger batches run in chunks (default 24)")
    args = pc.finish_args(p.parse_args(), p)
    pc.exit_on_sigterm()
    peer = ("torch_compile" if args.compile else "torch") + ("_eager" if args.eager else "")
    if torch is None:
        rep = pc.Report(peer, "unavailable", "unknown", args.json)
        rep.error("setup", None, None, "import torch failed: " + TORCH_IMPORT_ERROR)
        return 1
    rep = None
    try:
        device = torch.device(args.device)
        if device.type == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError(f"--device {args.device}: torch sees no CUDA device (torch {torch.__version__})")
            torch.cuda.set_device(device)
            name = torch.cuda.get_device_name(device)
            torch.backends.cuda.matmul.allow_tf32 = False  # cdist must stay float32
            torch.backends.cudnn.allow_tf32 = False
        else:
            name = platform.processor() or platform.machine() or "cpu"
            torch.set_num_threads(1)  # the CPU run is a correctness check; threads only contend
        rep = pc.Report(peer, torch.__version__, name, args.json)
        if args.compile:
            rep.doc["compile"] = {"mode": args.compile_mode, "total_s": 0.0, "cap_s": args.compile_cap_s}
        torch.manual_seed(args.seed)
        use_graph = device.type == "cuda" and not args.eager
        fns = functions(args.compile, args.compile_mode)
        timer = make_timer(device)
        budget = pc.Budget(args.budget_s, args.row_cap_s)
        budget.phase(1.0 if args.no_step else args.generate_share)
        alive = True
        if args.stats_only:
            stats_only(args, device, rep, fns)
            return 0
        if not args.no_generate:
            for e, n in pc.generation_grid(args):
                if not alive:
                    rep.error("generate", e, n, "skipped: compiled functions failed on an earlier row")
                    continue
                alive = gen_row(args, device, rep, budget, timer, fns, args.compile, e, n, use_graph)
        if not args.no_step and alive:
            budget.phase(1.0)
            step_rows_all(args, device, rep, budget, timer, fns, args.compile, use_graph)
        print(f"[{peer}] done in {time.perf_counter() - budget.start:.1f} s, {len(rep.doc['rows'])} rows, "
              f"{len(rep.doc['errors'])} errors -> {args.json}", file=sys.stderr)
        return 0
    except BaseException as exc:  # noqa: BLE001 - the JSON is written whatever happens
        if rep is None:
            rep = pc.Report(peer, getattr(torch, "__version__", "?"), "unknown", args.json)
        rep.error("setup", None, None, describe(exc) + "\n" + traceback.format_exc(limit=6))
        return 1


if __name__ == "__main__":
    sys.exit(main())

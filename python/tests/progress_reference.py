"""An independent pure-PyTorch implementation of track_gen's progress tracking (docs/guide.md,
``track_gen::course_ref::step`` and ``track_ref::project`` in include/track_gen/course_ref.hpp),
vectorised over environments, written from the documented semantics:

- projection: nearest point of the closed centreline polyline (segments k -> k+1 mod N, closest
  point parameter clamped to [0, 1], first minimum in scan order); a local search over the
  ``window`` segments on each side of the last segment (the hint), replaced by the full O(N) search
  when the minimum lies on the window's edge, when it is farther than both the half-width and the
  track's ``trust_radius`` (a track field: how far validation certified a local minimum), or when
  there is no last position;
- lap progress (k + t) * L / N wrapped into [0, L); signed lateral offset along the interpolated
  unit left normal; off-track when |lateral| > interpolated half-width;
- wrong way when the step moved (|d|^2 > 1e-12) against the interpolated unit tangent;
- gates counted only in order: the segment from the last to the current position must cross the
  plane of the NEXT gate from its negative to its non-negative side, through the opening
  (|lateral| <= gate half-width along the horizontal left axis, |vertical| <= gate half-height);
  then its successor may be tested in the same step; passing gate 0 completes a lap;
- a non-finite position leaves the state unchanged and reports ``invalid_position``;
- a reset puts the next gate at 1 (0 with a single gate) and clears everything else.

Every operation has a static shape and none synchronises with the host, so a step can be
recorded in a ``torch.cuda.graph``.
"""
from __future__ import annotations

import torch

HAS_LAST, OFF_TRACK, WRONG_WAY, GATE_PASSED, LAP_COMPLETED, FULL_SEARCH, INVALID_POSITION = (
    1, 2, 4, 8, 16, 32, 64)
STEP_EVENTS = OFF_TRACK | WRONG_WAY | GATE_PASSED | LAP_COMPLETED | FULL_SEARCH | INVALID_POSITION


def _dot(a, b):
    return (a * b).sum(-1)


def _normalize_or(v, fallback):
    n = torch.linalg.vector_norm(v, dim=-1, keepdim=True)
    return torch.where(n > 1e-20, v / n.clamp_min(1e-30), fallback)


def _take(values, index):
    """values [E, N] or [E, N, 3] gathered at index [E, K] -> [E, K] or [E, K, 3]."""
    if values.dim() == 2:
        return torch.gather(values, 1, index)
    return torch.gather(values, 1, index.unsqueeze(-1).expand(-1, -1, values.shape[-1]))


def _scan(p, position, segments):
    """Closest point parameter t and squared distance from p [E, 3] to segments [E, K] (k -> k+1)."""
    n = position.shape[1]
    a = _take(position, segments)
    b = _take(position, (segments + 1) % n)
    ab = b - a
    den = _dot(ab, ab)
    t = torch.where(den > 0, (_dot(p.unsqueeze(1) - a, ab) / torch.where(den > 0, den, torch.ones_like(den))).clamp(0, 1),
                    torch.zeros_like(den))
    d = p.unsqueeze(1) - (a + ab * t.unsqueeze(-1))
    return t, _dot(d, d)


class ProgressReference:
    """Progress state of E environments (int64 / float32 tensors on ``device``), advanced by
    :meth:`step` and :meth:`reset` in place."""

    def __init__(self, num_envs: int, device, window: int = 8, gate_half_height: float = 1.0):
        self.window = window
        self.gate_half_height = gate_half_height
        z = lambda dtype: torch.zeros(num_envs, dtype=dtype, device=device)  # noqa: E731
        self.next_gate = z(torch.int64)
        self.laps = z(torch.int64)
        self.gates_passed = z(torch.int64)
        self.hint = z(torch.int64)
        self.flags = z(torch.int64)
        self.lap_progress = z(torch.float32)
        self.lateral = z(torch.float32)
        self.last_position = torch.zeros(num_envs, 3, dtype=torch.float32, device=device)
        self.invalid_seen = z(torch.bool)  # status::invalid_input since the last reset

    def reset(self, mask, num_gates) -> None:
        """Resets the envs with a nonzero ``mask`` entry; ``num_gates`` [E] of their tracks."""
        m = mask.to(torch.bool)
        first = torch.where(num_gates > 1, 1, 0).to(torch.int64)
        for name in ("laps", "gates_passed", "hint", "flags"):
            getattr(self, name).masked_fill_(m, 0)
        self.next_gate.copy_(torch.where(m, first, self.next_gate))
        self.lap_progress.masked_fill_(m, 0.0)
        self.lateral.masked_fill_(m, 0.0)
        self.last_position.masked_fill_(m.unsqueeze(-1), 0.0)
        self.invalid_seen.masked_fill_(m, False)

    def _project(self, p, tracks, has_last):
        pos, tan, nrm, hw, length = tracks.position, tracks.tangent, tracks.normal, tracks.half_width, tracks.length
        e, n = hw.shape
        w = self.window
        rows = torch.arange(e, device=p.device)
        # Local search around the hint (scan order -w..w: the first minimum wins, as in the C++ loop).
        offsets = torch.arange(-w, w + 1, device=p.device)
        local = (self.hint.unsqueeze(1) + offsets) % n
        t_local, d2_local = _scan(p, pos, local)
        j = torch.argmin(d2_local, dim=1)
        best_local = local[rows, j]
        off = (best_local - self.hint) % n
        edge = (off == w) | (off == n - w)
        # Farther than the half-width and than the track's trust radius (track_ref::project_local).
        far = (d2_local[rows, j] > hw[rows, best_local] ** 2) & ~(d2_local[rows, j] <= tracks.trust_radius ** 2)
        full = ~has_last | edge | far if 2 * w + 1 < n else torch.ones_like(has_last)
        # Full search over every segment.
        every = torch.arange(n, device=p.device).expand(e, n)
        t_all, d2_all = _scan(p, pos, every)
        k_all = torch.argmin(d2_all, dim=1)
        best = torch.where(full, k_all, best_local)
        t = torch.where(full, t_all[rows, k_all], t_local[rows, j])
        arc, lateral, half_width, tangent = self._at(p, tracks, best, t)
        return best, arc, lateral, half_width, tangent, full

    @staticmethod
    def _at(p, tracks, best, t):
        """Arc length, lateral offset, half-width and unit tangent of the point at fraction t [E]
        of segment best [E] (int64), seen from p [E, 3]."""
        pos, tan, nrm, hw, length = tracks.position, tracks.tangent, tracks.normal, tracks.half_width, tracks.length
        n = hw.shape[1]
        rows = torch.arange(hw.shape[0], device=p.device)
        nxt = (best + 1) % n
        tt = t.unsqueeze(-1)
        point = pos[rows, best] + (pos[rows, nxt] - pos[rows, best]) * tt
        tangent = _normalize_or(tan[rows, best] + (tan[rows, nxt] - tan[rows, best]) * tt, tan[rows, best])
        left = _normalize_or(nrm[rows, best] + (nrm[rows, nxt] - nrm[rows, best]) * tt, nrm[rows, best])
        half_width = hw[rows, best] + (hw[rows, nxt] - hw[rows, best]) * t
        lateral = _dot(p - point, left)
        s = (best.to(torch.float32) + t) * (length / n)
        arc = torch.where(s >= length, s - length, s)
        return arc, lateral, half_width, tangent

    def project_onto(self, p, tracks, segment):
        """Nearest point of segment ``segment`` [E] (int64) to p [E, 3]: its arc length, the lateral
        offset of p, and the squared distance, computed as :meth:`step` computes a projection."""
        t, d2 = _scan(p, tracks.position, segment.unsqueeze(1))
        arc, lateral, _, _ = self._at(p, tracks, segment, t.squeeze(1))
        return arc, lateral, d2.squeeze(1)

    def _crosses(self, tracks, gate, a, b):
        """Whether segment a -> b crosses gate index ``gate`` [E] forwards through its opening."""
        rows = torch.arange(a.shape[0], device=a.device)
        c = tracks.gate_centre[rows, gate]
        nn = tracks.gate_normal[rows, gate]
        ghw = tracks.gate_half_width[rows, gate]
        da = _dot(a - c, nn)
        db = _dot(b - c, nn)
        forward = (da < 0) & (db >= 0)
        denom = torch.where(forward, da - db, torch.ones_like(da))
        x = a + (b - a) * (da / denom).unsqueeze(-1)
        left_raw = torch.stack([-nn[:, 1], nn[:, 0], torch.zeros_like(nn[:, 0])], dim=-1)
        y_axis = torch.zeros_like(left_raw)
        y_axis[:, 1] = 1.0
        left = _normalize_or(left_raw, y_axis)
        up = torch.linalg.cross(nn, left)
        r = x - c
        return forward & (_dot(r, left).abs() <= ghw) & (_dot(r, up).abs() <= self.gate_half_height)

    def step(self, p, tracks, max_gates_per_step: int) -> None:
        """Advances every env to position p [E, 3] on ``tracks`` (course.tracks). At most
        ``max_gates_per_step`` gates are tested per env (the C++ loop runs up to G times; callers
        pass a bound that the agents' step length cannot exceed)."""
        finite = torch.isfinite(p).all(-1)
        flags = self.flags & ~STEP_EVENTS
        has_last = (flags & HAS_LAST) != 0
        p_safe = torch.where(finite.unsqueeze(-1), p, self.last_position)
        best, arc, lateral, half_width, tangent, full = self._project(p_safe, tracks, has_last)
        flags = flags | torch.where(full & has_last, FULL_SEARCH, 0)
        flags = flags | torch.where(lateral.abs() > half_width, OFF_TRACK, 0)
        d = p_safe - self.last_position
        wrong = has_last & (_dot(d, d) > 1e-12) & (_dot(d, tangent) < 0)
        flags = flags | torch.where(wrong, WRONG_WAY, 0)
        num_gates = tracks.num_gates.to(torch.int64)
        nxt = self.next_gate.clone()
        passed = torch.zeros_like(nxt)
        laps = self.laps.clone()
        going = has_last & finite
        for _ in range(max_gates_per_step):
            going = going & (passed < num_gates) & self._crosses(tracks, nxt, self.last_position, p_safe)
            flags = flags | torch.where(going, GATE_PASSED, 0)
            lap = going & (nxt == 0)
            flags = flags | torch.where(lap, LAP_COMPLETED, 0)
            laps = laps + lap.to(torch.int64)
            nxt = torch.where(going, torch.where(nxt + 1 == num_gates, 0, nxt + 1), nxt)
            passed = passed + going.to(torch.int64)
        upd = finite
        self.next_gate.copy_(torch.where(upd, nxt, self.next_gate))
        self.laps.copy_(torch.where(upd, laps, self.laps))
        self.gates_passed.copy_(torch.where(upd, self.gates_passed + passed, self.gates_passed))
        self.lap_progress.copy_(torch.where(upd, arc, self.lap_progress))
        self.lateral.copy_(torch.where(upd, lateral, self.lateral))
        self.hint.copy_(torch.where(upd, best, self.hint))
        self.last_position.copy_(torch.where(upd.unsqueeze(-1), p_safe, self.last_position))
        invalid_flags = (self.flags & ~STEP_EVENTS) | INVALID_POSITION
        self.flags.copy_(torch.where(upd, flags | HAS_LAST, invalid_flags))
        self.invalid_seen |= ~finite

#pragma once
/// @file
/// stages::centreline_relaxation: an XPBD-style relaxation of the resampled centreline of a
/// random attempt that would fail validation on its shape.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/shape_stages.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>

namespace track_gen::stages {

/// Repairs an attempt instead of drawing the next one. It runs after stages::frames. A random
/// attempt that stages::validate would reject for its shape (a turn tighter than the minimum
/// radius, samples not evenly spaced, or two far-apart sections closer than the road's
/// clearance c = 2 half_width + clearance_margin) is relaxed; every other track (user tracks, the
/// fallback, attempts that pass or that fail on their length) is left as it is, bit for bit.
///
/// The relaxation moves the N samples ("beads") by position-based constraint projection
/// (M. Mueller et al., "Position Based Dynamics", 2007; M. Macklin et al., "XPBD", 2016), Jacobi
/// style: every bead reads the previous iterate. Per sweep each bead gets
///  - a separation push from every bead farther along the track than validate's window w and
///    closer than the target t = c (1 + margin): half the overlap along their difference,
///    averaged over those beads, times `separation_weight`;
///  - a spacing correction of its two edges toward the rest length L / N, times
///    `spacing_weight`;
///  - a bending guard: where the Menger radius of the bead and its neighbours is below
///    R = max(turn_radius_min, half_width + clearance_margin / 2) (1 + margin), a pull toward
///    the neighbours' midpoint of `bending_weight` (R - r) / R of the way, at most all of it.
/// From sweep `chebyshev_start` on, sweeps are accelerated by the Chebyshev semi-iterative
/// method (H. Wang, "A Chebyshev Semi-Iterative Approach for Accelerating Projective and
/// Position-Based Dynamics", ACM TOG 34(6), 2015): x' = w (gamma (x^ - x) + x - x_prev) + x_prev,
/// with w_1 = 1, w_2 = 2 / (2 - rho^2), w_{k+1} = 4 / (4 - rho^2 w_k). The seed system uses the
/// same scheme and defaults (docs/generators.md, "Relaxation", says what differs).
/// The loop stops at the first sweep whose iterate meets every target (no push, no radius below
/// R), or after `max_iterations` sweeps; then `smoothing_passes` shrink-free Taubin passes
/// (G. Taubin, "Curve and Surface Smoothing without Shrinkage", ICCV 1995; lambda 0.5,
/// mu -0.53) smooth the pushes' kinks, the samples are re-placed at uniform arc length along the
/// centripetal Catmull-Rom spline through the beads (as stages::catmull_rom and resample do for
/// control points), and the frames are recomputed. Validation then judges the relaxed track as any other; a relaxed track
/// that passes gets `status::relaxed`.
///
/// Far-apart beads that cannot be closer than t are skipped by the chord bound (every edge is at
/// most the longest edge e of the iterate, so a bead D away rules out the next
/// floor((D - t) / e) beads): the result is the same as testing every pair. Every product is
/// rounded on its own (detail::mul_rn) and every sum runs in one order, so the host and CUDA
/// backends relax to the same bits.
struct centreline_relaxation {
  static constexpr detail::stage_role role = detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 19;

  /// Taubin's two factors (lambda, then mu with mu < -lambda: no shrinkage), Taubin 1995.
  static constexpr float taubin_lambda = 0.5f;
  static constexpr float taubin_mu = -0.53f;

  /// What one sweep aims at, for a track of length `length` with n beads.
  struct targets {
    float separation;  ///< t = c (1 + margin) [m]
    float radius;      ///< R [m]
    float rest;        ///< L / N [m]
    int window;        ///< validate's window w: beads at most w apart along the track never push
  };
  TRACK_GEN_HD static targets targets_for(const track_params& p, float length, int n) {
    using detail::mul_rn;
    const float grow = 1.0f + p.relaxation.margin;
    return {mul_rn(validate::clearance(p), grow), mul_rn(validate::min_turn_radius(p), grow),
            length / static_cast<float>(n), validate::window_samples(p, length, n)};
  }

  /// Bead i's Jacobi target x^ from the iterate `x` (n beads), and the largest amount by which
  /// the iterate misses a target around it (<= 0: it meets them all). `inv_edge`: 0.999 / the
  /// longest edge of `x` (the chord bound's step).
  TRACK_GEN_HD static float3 jacobi_target(const float3* x, int n, int i, const targets& t, float inv_edge,
                                           const relaxation_params& r, float& miss) {
    using namespace detail;
    const float3 xi = x[i];
    const float3 before = x[i == 0 ? n - 1 : i - 1];
    const float3 after = x[i + 1 == n ? 0 : i + 1];
    // Separation, in increasing order of the offset o (j = i + o).
    float3 push = f3(0.0f, 0.0f, 0.0f);
    int pushers = 0;
    const float t2 = mul_rn(t.separation, t.separation);
    for (int o = t.window + 1; o <= n - t.window - 1;) {
      const int j = i + o < n ? i + o : i + o - n;
      const float3 d = xi - x[j];
      const float d2 = dot_rn(d, d);
      const float dist = std::sqrt(d2);
      if (d2 < t2) {
        miss = max_f(miss, t.separation - dist);
        // Coincident beads give no direction; their neighbours' pushes separate them.
        if (dist > 1e-6f * t.separation) {
          push = push + scale_rn(d, mul_rn(0.5f, t.separation - dist) / dist);
          ++pushers;
        }
        ++o;
      } else {
        const float skip = mul_rn(dist - t.separation, inv_edge);
        o += 1 + (skip < static_cast<float>(n) ? static_cast<int>(skip) : n);
      }
    }
    float3 step = pushers > 0 ? scale_rn(push, r.separation_weight / static_cast<float>(pushers)) : push;
    // Spacing: each edge toward the rest length, half the correction to each end, and the two
    // edges' halves averaged.
    const float3 ahead = after - xi, behind = xi - before;
    const float ahead_len = std::sqrt(dot_rn(ahead, ahead)), behind_len = std::sqrt(dot_rn(behind, behind));
    if (ahead_len > 0.0f && behind_len > 0.0f) {
      const float3 spacing = scale_rn(ahead, (ahead_len - t.rest) / ahead_len) -
                             scale_rn(behind, (behind_len - t.rest) / behind_len);
      step = step + scale_rn(spacing, mul_rn(0.25f, r.spacing_weight));
    }
    // Bending guard: the Menger radius of (before, xi, after), as stages::frames measures it.
    const float3 chord = after - before;
    const float sides = mul_rn(mul_rn(ahead_len, behind_len), std::sqrt(dot_rn(chord, chord)));
    const float3 turn = cross_rn(behind, ahead);
    const float twice_area = std::sqrt(dot_rn(turn, turn));
    // 1 / kappa = sides / (2 * twice_area); a reversal (cusp) counts as radius 0, as for validation.
    const bool cusp = dot_rn(behind, ahead) < 0.0f;
    const float radius = cusp ? 0.0f : (twice_area > 0.0f ? sides / mul_rn(2.0f, twice_area) : 3.0e38f);
    if (radius < t.radius) {
      miss = max_f(miss, t.radius - radius);
      const float pull = min_f(mul_rn(r.bending_weight, (t.radius - radius) / t.radius), 1.0f);
      step = step + scale_rn(scale_rn(before + after, 0.5f) - xi, pull);
    }
    return xi + step;
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    ws.relaxed = false;
    const relaxation_params& r = p.relaxation;
    if (r.max_iterations <= 0 || ws.source != track_source::random) return;
    // Only what moving the samples can mend: a finite track of an acceptable length.
    if (!ws.finite || !validate::length_in_range(ws, p)) return;
    if (!validate::fails_on_shape(ctx, ws, p)) return;
    relax(ctx, ws, p);
    ws.relaxed = true;
  }

  /// Dense samples per relaxed edge for the final resampling: the samples are re-placed on the
  /// centripetal Catmull-Rom spline through the relaxed beads (a polyline through N beads
  /// resampled at N points would cut every corner: tracks about 1e-3 L shorter through their
  /// samples than their length says).
  static constexpr int dense_per_edge = 4;

  /// The dense scratch the stage needs: N beads in its second buffer, then N x dense_per_edge
  /// samples of the spline through them; -1 when it does not run (pipeline::max_dense_samples).
  static int max_dense_samples(const track_params& p) {
    return p.relaxation.max_iterations > 0 ? p.num_samples * dense_per_edge : -1;
  }

  /// The sweeps, the smoothing, the resampling and the frames (all threads of the block call it).
  template <class Ctx>
  TRACK_GEN_HD static void relax(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const int n = ws.num_samples;
    const float3* x = smooth(ctx, ws, p, sweep(ctx, ws, p));
    // The beads into ws.position, the spline through them into the dense samples, then
    // resample's polyline path and the frames.
    if (x != ws.position) {
      for (int i = ctx.rank(); i < n; i += ctx.size()) ws.position[i] = x[i];
      ctx.sync();
    }
    const int dense = n * dense_per_edge;
    const float inv = 1.0f / static_cast<float>(dense_per_edge);
    for (int k = ctx.rank(); k < dense; k += ctx.size()) {
      const int edge = k / dense_per_edge;
      ws.dense[k] = catmull_rom_segment(ws.position, n, edge).point(static_cast<float>(k - edge * dense_per_edge) * inv);
    }
    ctx.sync();
    ws.num_dense = dense;
    ws.dense_is_spline = false;
    resample::run(ctx, ws, p);
    frames::run(ctx, ws, p);
  }

  /// The sweeps on the N samples of `ws.position` (at most max_iterations; all threads call it).
  /// Returns the buffer that holds the result: ws.position or ws.dense (N beads each).
  template <class Ctx>
  TRACK_GEN_HD static float3* sweep(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const relaxation_params& r = p.relaxation;
    const int n = ws.num_samples;
    const targets t = targets_for(p, ws.length, n);
    // Two buffers of N beads: `x` the iterate every bead reads, `other` bead i's slot of the
    // iterate before it (read by bead i only, for the acceleration), overwritten with the next.
    float3* x = ws.position;
    float3* other = ws.dense;
    const float rho2 = mul_rn(r.chebyshev_rho, r.chebyshev_rho);
    float omega = 1.0f;
    for (int sweep = 0; sweep < r.max_iterations; ++sweep) {
      float longest = 0.0f;
      for (int i = ctx.rank(); i < n; i += ctx.size()) {
        const float3 e = x[i + 1 == n ? 0 : i + 1] - x[i];
        longest = max_f(longest, std::sqrt(dot_rn(e, e)));
      }
      longest = ctx.reduce_max(longest);
      const float inv_edge = longest > 0.0f ? 0.999f / longest : 0.0f;
      const int accelerated = sweep - r.chebyshev_start;  // sweeps since the acceleration began
      if (accelerated == 1) omega = 2.0f / (2.0f - rho2);
      if (accelerated >= 2) omega = 4.0f / (4.0f - mul_rn(rho2, omega));
      float miss = 0.0f;
      for (int i = ctx.rank(); i < n; i += ctx.size()) {
        const float3 xi = x[i];
        const float3 target = jacobi_target(x, n, i, t, inv_edge, r, miss);
        float3 next = target;
        if (accelerated == 0) {
          next = xi + scale_rn(target - xi, r.chebyshev_gamma);  // w = 1, no previous iterate yet
        } else if (accelerated > 0) {
          const float3 before = other[i];
          next = before + scale_rn(scale_rn(target - xi, r.chebyshev_gamma) + (xi - before), omega);
        }
        other[i] = next;
      }
      // The reduction's barrier also ends the sweep: every bead has read `x`.
      if (ctx.reduce_max(miss) <= 0.0f) break;  // `x` meets every target: keep it
      float3* swap = x;
      x = other;
      other = swap;
    }
    return x;
  }

  /// smoothing_passes Taubin passes on the N beads of `x` (ws.position or ws.dense), the other
  /// of the two as scratch; returns the buffer that holds the result (all threads call it).
  template <class Ctx>
  TRACK_GEN_HD static float3* smooth(Ctx& ctx, detail::workspace& ws, const track_params& p, float3* x) {
    using namespace detail;
    const int n = ws.num_samples;
    float3* other = x == ws.position ? ws.dense : ws.position;
    for (int pass = 0; pass < 2 * p.relaxation.smoothing_passes; ++pass) {
      const float factor = (pass & 1) == 0 ? taubin_lambda : taubin_mu;
      for (int i = ctx.rank(); i < n; i += ctx.size()) {
        const float3 mid = scale_rn(x[i == 0 ? n - 1 : i - 1] + x[i + 1 == n ? 0 : i + 1], 0.5f);
        other[i] = x[i] + scale_rn(mid - x[i], factor);
      }
      ctx.sync();
      float3* swap = x;
      x = other;
      other = swap;
    }
    return x;
  }
};

}  // namespace track_gen::stages

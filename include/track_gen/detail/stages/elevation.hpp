#pragma once
/// @file
/// Elevation profiles (issue 15, item 4): stages::elevation_profile sets the z of the dense
/// centreline from a periodic monotone cubic through K knots spaced evenly in plan-view arc
/// length, before resample, so that the samples, frames and gates are those of a true 3D curve;
/// stages::validate_grade is stages::validate plus the test of the largest grade.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/param_ranges.hpp>
#include <track_gen/detail/stages/shape_stages.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/status.hpp>

namespace track_gen::detail {

/// The knots sit in the scratch region of the spline segments (free once the dense z moved: the
/// stage sets dense_is_spline = false, so resample no longer reads the segments). That region
/// holds at least spline_region_min_bytes, whatever M is.
static_assert(spline_region_min_bytes >= 2 * sizeof(float) * range_of(param::elevation_knots).max,
              "the knots and their slopes (2 K floats) must fit the spline scratch region");

/// Fritsch-Carlson slope at a knot of a periodic monotone cubic Hermite interpolant, from the
/// secant slopes on its two sides, `before` and `after` (F. N. Fritsch and R. E. Carlson,
/// "Monotone Piecewise Cubic Interpolation", SIAM J. Numer. Anal. 17(2), 1980, pp. 238-246):
/// 0 at a local extremum (secants of opposite signs or one 0), else the mean of the secants
/// limited to 3 times the smaller one. Both ratios alpha = m_j / delta_j and beta = m_{j+1} /
/// delta_j then lie in [0, 3], a square inside their region of monotonicity, so each piece is
/// monotone and the curve stays within the values of its knots. Per knot, so the result does not
/// depend on the order of evaluation (their algorithm's sequential step 5 does).
/// Bound used by the random walk: |m_j| <= max(|before|, |after|), and on a piece of secant d
/// with end slopes of at most G = the largest |secant|, |p'| <= 1.5 G (the derivative of the
/// Hermite basis, 6t(1-t) d + m_0 (1-t)(1-3t) + m_1 t(3t-2), is at most G (1-t)(1+3t) <= 4G/3
/// for t <= 1/3, symmetrically for t >= 2/3, and 1.5 G between; and p' >= 0 where monotone).
TRACK_GEN_HD inline float fritsch_carlson_slope(float before, float after) {
  if (!(before * after > 0.0f)) return 0.0f;
  const float mean = 0.5f * (before + after);
  const float cap = 3.0f * min_f(std::fabs(before), std::fabs(after));
  return std::fabs(mean) <= cap ? mean : (mean > 0.0f ? cap : -cap);
}

/// The cubic Hermite piece between values z0 and z1 (slopes m0, m1 per unit of the abscissa) over
/// a knot interval of length h, at local parameter u in [0, 1].
TRACK_GEN_HD inline float hermite(float z0, float z1, float m0, float m1, float h, float u) {
  const float u2 = u * u, u3 = u2 * u;
  return (2.0f * u3 - 3.0f * u2 + 1.0f) * z0 + (u3 - 2.0f * u2 + u) * h * m0 + (-2.0f * u3 + 3.0f * u2) * z1 +
         (u3 - u2) * h * m1;
}

/// The K knot values z[0..K) of a `random_walk` profile with knot interval h [m] (the
/// stages::elevation_profile comment gives the walk, its closure and its range), from `rng`
/// (draw j for step j, draw K for the offset); `m` [K] is scratch (the steps). Serial.
TRACK_GEN_HD inline void elevation_walk_knots(const elevation_params& e, const philox_stream& rng, float h, float* z,
                                              float* m) {
  const int k_knots = e.knots;
  const float band = e.z_max - e.z_min;
  const float c = e.max_grade * h / 1.5f;
  float sum = 0.0f, room = 0.0f;
  for (int j = 0; j < k_knots; ++j) {
    m[j] = c * (2.0f * rng.uniform(static_cast<std::uint32_t>(j)).v[0] - 1.0f);
    sum += m[j];
  }
  for (int j = 0; j < k_knots; ++j) room += sum > 0.0f ? m[j] + c : c - m[j];
  float lo = 0.0f, hi = 0.0f, at = 0.0f;
  for (int j = 0; j < k_knots; ++j) {
    const float share = room > 0.0f ? (sum > 0.0f ? m[j] + c : c - m[j]) / room : 1.0f / k_knots;
    z[j] = at;
    lo = min_f(lo, at);
    hi = max_f(hi, at);
    at += m[j] - sum * share;
  }
  const float span = hi - lo;
  const float scale = span > band ? band / span : 1.0f;
  const float offset = e.z_min + rng.uniform(static_cast<std::uint32_t>(k_knots)).v[0] * (band - span * scale);
  for (int j = 0; j < k_knots; ++j) z[j] = offset + (z[j] - lo) * scale;
}

/// Knot j's value of a `uniform` or `harmonics` profile (stages::elevation_profile), from `rng`.
TRACK_GEN_HD inline float elevation_knot_value(const elevation_params& e, const philox_stream& rng, int j) {
  const int k_knots = e.knots;
  if (e.profile == elevation_kind::uniform) return lerp(e.z_min, e.z_max, rng.uniform(static_cast<std::uint32_t>(j)).v[0]);
  const float band = e.z_max - e.z_min;
  const float mid = 0.5f * (e.z_min + e.z_max);
  float norm = 0.0f;
  for (int n = 1; n <= e.harmonics; ++n) norm += 1.0f / static_cast<float>(n);
  const float f = static_cast<float>(j) / static_cast<float>(k_knots);
  float v = 0.0f;
  for (int n = 1; n <= e.harmonics; ++n) {
    const uniform4 u = rng.uniform(static_cast<std::uint32_t>(k_knots + 1 + n));
    const float a = 0.5f * band * (u.v[0] / static_cast<float>(n)) / norm;
    v += a * std::cos(2.0f * pi * (static_cast<float>(n) * f + u.v[1]));
  }
  return mid + v;
}

/// The Fritsch-Carlson slope at knot j of the periodic profile through z[0..K) (inv_h = 1 / h).
TRACK_GEN_HD inline float elevation_knot_slope(const float* z, int k_knots, int j, float inv_h) {
  const float before = (z[j] - z[j == 0 ? k_knots - 1 : j - 1]) * inv_h;
  const float after = (z[j + 1 == k_knots ? 0 : j + 1] - z[j]) * inv_h;
  return fritsch_carlson_slope(before, after);
}

/// The profile's height at t = f K (f the plan-view arc length fraction in [0, 1]): the Hermite
/// piece of knots j = floor(t) (clamped to [0, K)) and j + 1 (mod K), values z, slopes m.
TRACK_GEN_HD inline float elevation_at(const float* z, const float* m, int k_knots, float h, float t) {
  int j = static_cast<int>(t);
  j = j < 0 ? 0 : (j >= k_knots ? k_knots - 1 : j);
  const int j1 = j + 1 == k_knots ? 0 : j + 1;
  const float u = clamp_f(t - static_cast<float>(j), 0.0f, 1.0f);
  return hermite(z[j], z[j1], m[j], m[j1], h, u);
}

}  // namespace track_gen::detail

namespace track_gen::stages {

/// Sets z of every dense sample of a random track to a profile of its plan-view arc length
/// fraction f = s_xy / L_xy (xy chord lengths of the dense centreline, a block-wide scan): K
/// knots at f = j / K, values by `elevation.profile`, joined by a periodic monotone cubic
/// (detail::fritsch_carlson_slope), so z stays within [min knot, max knot] within
/// [z_min, z_max] without clamping, and is continuous at the seam (knot K is knot 0). Then
/// resample measures 3D chords: L, the samples, tangents, curvature and gates are the lifted
/// curve's. The plan view (xy) is the dense polyline's; resample interpolates it linearly
/// (dense_is_spline = false) instead of evaluating the spline again, as after dense_repulsive.
/// Profiles: `flat` does nothing (z as the earlier stages made it: the pipeline's tracks are
/// those of the pipeline without this stage, bit for bit); `uniform`: knot values uniform in
/// [z_min, z_max]; `random_walk`: steps between knots uniform in [-c, c], c = max_grade * h / 1.5
/// (h = L_xy / K), closed around the loop (below), scaled down if their range exceeds the band,
/// then offset at random within it: every piece's grade is at most 1.5 c / h = max_grade;
/// `harmonics`: z = mid + sum_{n=1..H} a_n cos(2 pi n f + phi_n) at the knots, with
/// sum a_n <= (z_max - z_min) / 2 (a_n proportional to u_n / n), periodic by construction.
/// Closure of the walk: with S the sum of the K steps, each step moves against S in
/// proportion to its room before the bound: d_j -= S (d_j + c) / (S + K c) for S > 0 (and
/// d_j -= S (c - d_j) / (K c - S) for S < 0). The moves add to S, and no step passes -c (resp. c)
/// since |S| <= K c. Random tracks only (role generate); the random stream: stage 14, draw j for
/// knot or step j, draw K for the walk's offset, draws K + 1 + n for harmonic n.
struct elevation_profile {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 14;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const elevation_params& e = p.elevation;
    if (e.profile == elevation_kind::flat) return;
    const int nd = ws.num_dense;
    const int k_knots = e.knots;
    const philox_stream rng = ws.rng(stage_id);
    // Plan-view cumulative arc length (dense_s: resample rewrites it).
    for (int k = ctx.rank(); k < nd; k += ctx.size()) {
      const float3 d = ws.dense[k + 1 == nd ? 0 : k + 1] - ws.dense[k];
      ws.dense_s[k + 1] = std::sqrt(d.x * d.x + d.y * d.y);
    }
    if (ctx.rank() == 0) ws.dense_s[0] = 0.0f;
    ctx.sync();
    ctx.inclusive_sum(ws.dense_s + 1, nd);
    const float l_xy = ws.dense_s[nd];
    const float h = l_xy / static_cast<float>(k_knots);
    float* z = reinterpret_cast<float*>(ws.spline);  // [K] knot values, then [K] slopes
    float* m = z + k_knots;
    if (e.profile == elevation_kind::random_walk) {
      if (ctx.rank() == 0) elevation_walk_knots(e, rng, h, z, m);  // K <= 256 serial steps: closure and range are global
    } else {
      for (int j = ctx.rank(); j < k_knots; j += ctx.size()) z[j] = elevation_knot_value(e, rng, j);
    }
    ctx.sync();
    const float inv_h = h > 0.0f ? 1.0f / h : 0.0f;
    for (int j = ctx.rank(); j < k_knots; j += ctx.size()) m[j] = elevation_knot_slope(z, k_knots, j, inv_h);
    ctx.sync();
    const float inv_l = l_xy > 0.0f ? 1.0f / l_xy : 0.0f;
    for (int k = ctx.rank(); k < nd; k += ctx.size())
      ws.dense[k].z = elevation_at(z, m, k_knots, h, ws.dense_s[k] * inv_l * static_cast<float>(k_knots));
    ws.dense_is_spline = false;
    ctx.sync();
  }
};

/// stages::validate, then, unless `elevation.profile` is flat, the grade test: every pair of
/// consecutive samples (the closing pair included) rises by at most `elevation.max_grade` times
/// its plan-view distance; a steeper track gets status::fail_grade. (With a flat profile it is
/// stages::validate exactly.) Draws nothing.
struct validate_grade {
  static constexpr detail::stage_role role = detail::stage_role::validate;
  static constexpr std::uint32_t stage_id = validate::stage_id;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    validate::run(ctx, ws, p);
    if (p.elevation.profile == elevation_kind::flat) return;
    const int n = ws.num_samples;
    bool ok = true;
    for (int k = ctx.rank(); k < n; k += ctx.size()) {
      const float3 d = ws.position[k + 1 == n ? 0 : k + 1] - ws.position[k];
      ok = ok && std::fabs(d.z) <= p.elevation.max_grade * std::sqrt(d.x * d.x + d.y * d.y);
    }
    if (!ctx.all(ok)) {
      ws.fail_bits |= status::fail_grade;
      ws.valid = false;
    }
  }
};

}  // namespace track_gen::stages

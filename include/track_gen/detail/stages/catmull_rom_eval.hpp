#pragma once
/// @file
/// Evaluation of a periodic centripetal Catmull-Rom spline (alpha = 1/2), the curve of the
/// Barry-Goldman pyramidal recursion. Sources: E. Catmull, R. Rom, "A class of local
/// interpolating splines" (1974); P. Barry, R. Goldman, "A recursive evaluation algorithm for a
/// class of Catmull-Rom splines", SIGGRAPH 1988; C. Yuksel, S. Schaefer, J. Keyser,
/// "Parameterization and applications of Catmull-Rom curves", CAD 43(7), 2011 (centripetal
/// knots cannot form cusps or self-intersections within a segment).
///
/// The stages evaluate each segment in its power form, computed once per segment: the pyramid
/// is a cubic in t that interpolates p1 at t1 and p2 at t2, with derivative at t1
/// (p1 - p0)/(t1 - t0) - (p2 - p0)/(t2 - t0) + (p2 - p1)/(t2 - t1) and the mirror expression at
/// t2 (differentiate the recursion; the same tangents are given by Yuksel et al. 2011). With
/// u = (t - t1)/(t2 - t1) these are the cubic Hermite segment from p1 to p2 with tangents
/// m1, m2 (the derivatives times t2 - t1), whose power-basis coefficients follow from the Hermite
/// basis functions. A point then costs three multiply-adds per coordinate instead of the
/// pyramid's 12 divisions and six square roots; both forms agree to float rounding (tested).

#include <track_gen/detail/math.hpp>

namespace track_gen::detail {

/// Knot increment of the centripetal parameterisation, |b - a|^(1/2), kept away from zero so
/// that coincident control points never divide by zero.
TRACK_GEN_HD inline float centripetal_knot(float3 a, float3 b) {
  return max_f(std::sqrt(length(b - a)), 1e-6f);
}

/// Dense samples per spline segment for `m` control points: `per` (spline.samples_per_segment)
/// when `budget` is 0; otherwise min(per, max(4, ceil(budget / m))), so that a spline of many
/// control points gets about `budget` samples in all instead of m x per (never fewer than 4 a
/// segment, never more than per). Both the spline stage and the scratch sizing use it.
TRACK_GEN_HD constexpr int budgeted_samples_per_segment(int per, int budget, int m) {
  if (budget <= 0 || m <= 0) return per;
  const int share = (budget + m - 1) / m;
  const int at_least = share > 4 ? share : 4;
  return at_least < per ? at_least : per;
}

/// Control segments whose full samples_per_segment make the dense budget of the generator
/// families that write many control points (bezier, hull, voronoi, checkpoint): such a spline
/// gets about as many dense samples as a 24-point spline at full density (768 at the default
/// 32 a segment), so a track of 48 control points is resampled from 768 samples (16 a segment)
/// instead of 1,536, and the scratch holds at most 855 (95 x 9, a checkpoint walk). Splines of
/// at most 24 control points keep the full samples_per_segment (the polar family sets no budget
/// at all). 16 segments' worth (11 a segment for 48 points) left the resampled spacing of 3 hull
/// tracks in 10,240 up to 1.008 % off L / N (the independent checker allows 1 %).
inline constexpr int family_dense_budget_segments = 24;

/// The dense budget of those families for samples_per_segment `per` (ws.dense_budget).
TRACK_GEN_HD constexpr int family_dense_budget(int per) { return family_dense_budget_segments * per; }

/// The most dense samples budgeted_samples_per_segment gives a spline of any count of control
/// points in [1, max_m] (host; sizes the scratch).
constexpr int budgeted_max_dense_samples(int per, int budget, int max_m) {
  int most = 0;
  for (int m = 1; m <= max_m; ++m) {
    const int d = m * budgeted_samples_per_segment(per, budget, m);
    most = d > most ? d : most;
  }
  return most;
}

/// The dense scratch of a family that spends the families' dense budget (its max_dense_samples):
/// the largest budgeted spline of up to `max_m` control points at samples_per_segment `per`, and
/// at least `own` samples that the family's own stage keeps in the dense scratch.
constexpr int family_dense_samples(int per, int max_m, int own) {
  const int spline = budgeted_max_dense_samples(per, family_dense_budget(per), max_m);
  return spline > own ? spline : own;
}

/// Power form of one spline segment: point(u) = ((c3 u + c2) u + c1) u + c0 for u in [0, 1].
struct spline_segment {
  float3 c0, c1, c2, c3;

  TRACK_GEN_HD float3 point(float u) const { return ((c3 * u + c2) * u + c1) * u + c0; }
  /// d point / du.
  /// (2 c2 as c2 + c2: an add of one product, which nvcc fuses alike in every kernel.)
  TRACK_GEN_HD float3 derivative(float u) const { return (c3 * (3.0f * u) + (c2 + c2)) * u + c1; }
};

/// The tangent at p1 of the centripetal segment p1 -> p2 per unit of its parameter u (the
/// spline_segment's c1), from the knot increments d01 = centripetal_knot(p0, p1) and
/// d12 = centripetal_knot(p1, p2): the derivative of the recursion at t1 (file comment) times d12.
TRACK_GEN_HD inline float3 catmull_rom_start_tangent(float3 p0, float3 p1, float3 p2, float d01, float d12) {
  const float3 chord = (p2 - p1) * (1.0f / d12);
  return ((p1 - p0) * (1.0f / d01) - (p2 - p0) * (1.0f / (d01 + d12)) + chord) * d12;
}

/// Power form of segment `seg` of the closed centripetal spline through `m` control points:
/// the curve of the Barry-Goldman recursion on that segment (see the file comment).
TRACK_GEN_HD inline spline_segment catmull_rom_segment(const float3* control, int m, int seg) {
  const float3 p0 = control[wrap(seg - 1, m)];
  const float3 p1 = control[seg];
  const float3 p2 = control[wrap(seg + 1, m)];
  const float3 p3 = control[wrap(seg + 2, m)];
  const float d01 = centripetal_knot(p0, p1);
  const float d12 = centripetal_knot(p1, p2);
  const float d23 = centripetal_knot(p2, p3);
  const float3 chord = (p2 - p1) * (1.0f / d12);
  // Tangents per unit of t, then scaled to the segment's unit of u (times d12 = t2 - t1).
  const float3 m1 = catmull_rom_start_tangent(p0, p1, p2, d01, d12);
  const float3 m2 = (chord - (p3 - p1) * (1.0f / (d12 + d23)) + (p3 - p2) * (1.0f / d23)) * d12;
  const float3 delta = p2 - p1;
  spline_segment s;
  s.c0 = p1;
  s.c1 = m1;
  s.c2 = delta * 3.0f - m1 * 2.0f - m2;
  s.c3 = m1 + m2 - delta * 2.0f;
  return s;
}

}  // namespace track_gen::detail

#pragma once
/// @file
/// Evaluation of a periodic centripetal Catmull-Rom spline (alpha = 1/2), by the
/// Barry-Goldman pyramidal recursion. Sources: E. Catmull, R. Rom, "A class of local
/// interpolating splines" (1974); P. Barry, R. Goldman, "A recursive evaluation algorithm for a
/// class of Catmull-Rom splines", SIGGRAPH 1988; C. Yuksel, S. Schaefer, J. Keyser,
/// "Parameterization and applications of Catmull-Rom curves", CAD 43(7), 2011 (centripetal
/// knots cannot form cusps or self-intersections within a segment).

#include <track_gen/detail/math.hpp>

namespace track_gen::detail {

/// Knot increment of the centripetal parameterisation, |b - a|^(1/2), kept away from zero so
/// that coincident control points never divide by zero.
TRACK_GEN_HD inline float centripetal_knot(float3 a, float3 b) {
  return max_f(std::sqrt(length(b - a)), 1e-6f);
}

/// Point at local parameter u in [0, 1] of segment `seg` (from control[seg] to control[seg+1])
/// of the closed spline through `m` control points.
TRACK_GEN_HD inline float3 catmull_rom_point(const float3* control, int m, int seg, float u) {
  const float3 p0 = control[wrap(seg - 1, m)];
  const float3 p1 = control[seg];
  const float3 p2 = control[wrap(seg + 1, m)];
  const float3 p3 = control[wrap(seg + 2, m)];
  const float t0 = 0.0f;
  const float t1 = t0 + centripetal_knot(p0, p1);
  const float t2 = t1 + centripetal_knot(p1, p2);
  const float t3 = t2 + centripetal_knot(p2, p3);
  const float t = t1 + u * (t2 - t1);
  const float3 a1 = p0 * ((t1 - t) / (t1 - t0)) + p1 * ((t - t0) / (t1 - t0));
  const float3 a2 = p1 * ((t2 - t) / (t2 - t1)) + p2 * ((t - t1) / (t2 - t1));
  const float3 a3 = p2 * ((t3 - t) / (t3 - t2)) + p3 * ((t - t2) / (t3 - t2));
  const float3 b1 = a1 * ((t2 - t) / (t2 - t0)) + a2 * ((t - t0) / (t2 - t0));
  const float3 b2 = a2 * ((t3 - t) / (t3 - t1)) + a3 * ((t - t1) / (t3 - t1));
  return b1 * ((t2 - t) / (t2 - t1)) + b2 * ((t - t1) / (t2 - t1));
}

}  // namespace track_gen::detail

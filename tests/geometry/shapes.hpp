#pragma once
/// @file
/// Test shapes and small helpers on snapshots shared by the user-track tests.

#include "reference_checker.hpp"

#include <track_gen/track_gen.hpp>

#include <cmath>
#include <vector>

namespace tg_test {

/// Points on the ellipse (7 m, 5 m) at `count` unevenly spread angles (radius of curvature
/// >= 25/7 m, perimeter ~38 m: valid for the `track` preset's thresholds).
inline std::vector<float3> ellipse_points(int count, float z = 0.0f) {
  std::vector<float3> pts;
  for (int i = 0; i < count; ++i) {
    const double u = static_cast<double>(i) / count;
    const double a = 2 * pi_d * (u + 0.03 * std::sin(2 * pi_d * u));  // uneven but increasing
    pts.push_back(float3{static_cast<float>(7 * std::cos(a)), static_cast<float>(5 * std::sin(a)), z});
  }
  return pts;
}

/// Length of the closed polyline through `pts`, in double.
inline double closed_length(const std::vector<float3>& pts) {
  double len = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) len += normd(to_d(pts[(i + 1) % pts.size()]) - to_d(pts[i]));
  return len;
}

/// Every stored value of env e is finite (samples, frames, curvature, length, its gates).
inline bool all_finite(const track_gen::track_snapshot& s, int e) {
  if (!std::isfinite(s.length[static_cast<std::size_t>(e)])) return false;
  for (int k = 0; k < s.num_samples; ++k) {
    const std::size_t i = s.sample_index(e, k);
    if (!finite3(s.position[i]) || !finite3(s.tangent[i]) || !finite3(s.normal[i]) || !std::isfinite(s.half_widths[i].x) || !std::isfinite(s.half_widths[i].y) ||
        !std::isfinite(s.curvature[i]))
      return false;
  }
  const int g = s.num_gates[static_cast<std::size_t>(e)];
  if (g < 1 || g > s.max_gates) return false;
  for (int k = 0; k < g; ++k) {
    const std::size_t i = s.gate_index(e, k);
    if (!finite3(s.gate_centre[i]) || !finite3(s.gate_normal[i]) || !std::isfinite(s.gate_half_width[i]) ||
        !std::isfinite(s.gate_arc_length[i]))
      return false;
  }
  return true;
}

/// Largest distance between the samples of env ea of `a` and env eb of `b`.
inline double max_sample_distance(const track_gen::track_snapshot& a, int ea, const track_gen::track_snapshot& b, int eb) {
  double worst = 0;
  for (int k = 0; k < a.num_samples; ++k)
    worst = std::max(worst, normd(to_d(a.position[a.sample_index(ea, k)]) - to_d(b.position[b.sample_index(eb, k)])));
  return worst;
}

}  // namespace tg_test

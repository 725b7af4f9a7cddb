// The power form of a centripetal Catmull-Rom segment (detail::catmull_rom_segment, what the
// catmull_rom and resample stages evaluate) against an independent double-precision evaluation
// of the Barry-Goldman recursion written here from the paper (P. Barry, R. Goldman, SIGGRAPH
// 1988): random closed control polygons in 2D and 3D at the scales of the presets (metres to
// hundreds of metres), polygons with two coincident consecutive points (a knot increment at its
// 1e-6 floor, where a float evaluation of the recursion itself loses its digits), and the
// interpolation of the control points at u = 0 and u = 1.
#include <doctest/doctest.h>

#include <track_gen/detail/stages/catmull_rom_eval.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

namespace td = track_gen::detail;
using td::operator-;

struct dpoint {
  double x, y, z;
};

dpoint blend(dpoint a, double wa, dpoint b, double wb) {
  return {a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb};
}

double knot(dpoint a, dpoint b) {
  const double l = std::sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y) + (b.z - a.z) * (b.z - a.z));
  return std::max(std::sqrt(l), 1e-6);  // the library's floor for coincident points
}

/// Barry-Goldman pyramid in double precision, segment `seg` of the closed spline, u in [0, 1].
dpoint recursion(const std::vector<float3>& control, int seg, double u) {
  const int m = static_cast<int>(control.size());
  auto at = [&](int i) {
    const float3 q = control[static_cast<std::size_t>(((i % m) + m) % m)];
    return dpoint{q.x, q.y, q.z};
  };
  const dpoint p0 = at(seg - 1), p1 = at(seg), p2 = at(seg + 1), p3 = at(seg + 2);
  const double t0 = 0.0, t1 = t0 + knot(p0, p1), t2 = t1 + knot(p1, p2), t3 = t2 + knot(p2, p3);
  const double t = t1 + u * (t2 - t1);
  const dpoint a1 = blend(p0, (t1 - t) / (t1 - t0), p1, (t - t0) / (t1 - t0));
  const dpoint a2 = blend(p1, (t2 - t) / (t2 - t1), p2, (t - t1) / (t2 - t1));
  const dpoint a3 = blend(p2, (t3 - t) / (t3 - t2), p3, (t - t2) / (t3 - t2));
  const dpoint b1 = blend(a1, (t2 - t) / (t2 - t0), a2, (t - t0) / (t2 - t0));
  const dpoint b2 = blend(a2, (t3 - t) / (t3 - t1), a3, (t - t1) / (t3 - t1));
  return blend(b1, (t2 - t) / (t2 - t1), b2, (t - t1) / (t2 - t1));
}

/// Largest distance between the power form and the recursion over 65 parameters of every
/// segment, relative to the polygon's largest coordinate.
double worst_relative_error(const std::vector<float3>& control) {
  const int m = static_cast<int>(control.size());
  double scale = 0.0;
  for (const float3& q : control) scale = std::max({scale, std::fabs(double{q.x}), std::fabs(double{q.y}), std::fabs(double{q.z})});
  double worst = 0.0;
  for (int seg = 0; seg < m; ++seg) {
    const td::spline_segment s = td::catmull_rom_segment(control.data(), m, seg);
    for (int k = 0; k <= 64; ++k) {
      const float u = static_cast<float>(k) / 64.0f;
      const float3 got = s.point(u);
      const dpoint want = recursion(control, seg, u);
      const double d = std::sqrt((got.x - want.x) * (got.x - want.x) + (got.y - want.y) * (got.y - want.y) +
                                 (got.z - want.z) * (got.z - want.z));
      worst = std::max(worst, d / scale);
    }
  }
  return worst;
}

std::vector<float3> random_polygon(std::mt19937& rng, int m, float radius, bool three_d, bool coincident) {
  std::uniform_real_distribution<float> coord(-radius, radius);
  std::vector<float3> c(static_cast<std::size_t>(m));
  for (float3& q : c) q = td::f3(coord(rng), coord(rng), three_d ? 0.3f * coord(rng) : 0.0f);
  if (coincident) c[2] = c[1];
  return c;
}

}  // namespace

// float32 rounding of coordinates of magnitude X is about 6e-8 X per operation; the power form
// measured up to about 1.1e-6 X here (the double recursion being exact to ~1e-15). The bound
// leaves a factor of about 4.
constexpr double relative_tolerance = 4e-6;

TEST_CASE("the power form of each segment is the Barry-Goldman curve, to float rounding") {
  std::mt19937 rng(20261130u);
  double worst = 0.0;
  int polygons = 0;
  for (float radius : {7.0f, 300.0f}) {
    for (bool three_d : {false, true}) {
      for (int trial = 0; trial < 200; ++trial) {
        const int m = 4 + trial % 29;
        worst = std::max(worst, worst_relative_error(random_polygon(rng, m, radius, three_d, false)));
        ++polygons;
      }
    }
  }
  INFO(polygons << " polygons, worst error relative to the largest coordinate " << worst);
  CHECK(worst <= relative_tolerance);
}

TEST_CASE("two coincident control points: the power form stays accurate") {
  std::mt19937 rng(7u);
  double worst = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    const int m = 4 + trial % 29;
    worst = std::max(worst, worst_relative_error(random_polygon(rng, m, 7.0f, trial % 2 == 1, true)));
  }
  INFO("worst error relative to the largest coordinate " << worst);
  CHECK(worst <= relative_tolerance);
}

TEST_CASE("each segment starts on its first control point and ends on its second") {
  std::mt19937 rng(11u);
  for (int trial = 0; trial < 100; ++trial) {
    const std::vector<float3> c = random_polygon(rng, 5 + trial % 20, 7.0f, trial % 2 == 0, false);
    const int m = static_cast<int>(c.size());
    for (int seg = 0; seg < m; ++seg) {
      const td::spline_segment s = td::catmull_rom_segment(c.data(), m, seg);
      const float3 start = s.point(0.0f), end = s.point(1.0f), next = c[static_cast<std::size_t>((seg + 1) % m)];
      CHECK(start.x == c[static_cast<std::size_t>(seg)].x);
      CHECK(start.y == c[static_cast<std::size_t>(seg)].y);
      CHECK(start.z == c[static_cast<std::size_t>(seg)].z);
      const double gap = std::sqrt(static_cast<double>(td::dot(end - next, end - next)));
      CHECK(gap <= relative_tolerance * 7.0);
    }
  }
}

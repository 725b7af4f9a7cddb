#pragma once
/// @file
/// track_gen::measure_shape (shape_metrics.hpp) against independent references, run where a
/// user's kernel would run it (one thread per env: progress_harness's map_on_backend):
/// - user tracks of known geometry, with closed forms: a regular N-gon circle (compactness
///   pi / (N tan(pi / N)), area, perimeter, curvature 1 / R, turning number +1, and -1 run
///   clockwise, no straights, hairpins or chicanes, the histogram, and the thickness
///   2 R sin((w + 1) pi / N) for a window of w samples, +inf and NaN at the ends of the window's
///   range); two stadiums (straight fraction 4a / L up to the samples at the junctions,
///   compactness 4 pi (4 a r + pi r^2) / L^2, two hairpins when r <= L / (8 pi) and none
///   otherwise); a rounded rectangle (90 degree corners: tight but no hairpins); a serpentine
///   with three hairpins and a wide end loop that is not one; a loop with two S-bends (two
///   chicanes); two dumbbells whose neck widths (4 m, 1 m) are their minimum thickness when
///   the window excludes their turns (validate's rule: just beyond the window, a turn of radius
///   rho comes within 2 rho sin(arc / 2 rho) of itself, also a closed form checked here);
/// - generated tracks of the `track` and `drone_track` presets against a brute-force
///   recomputation in double precision written here independently (headings instead of
///   atan2 of cross and dot, the shoelace about the origin, explicit lists of runs, every pair
///   of segments with its own closest-point solver), and the thickness of every accepted track
///   at least validate's clearance 2 half_width + margin;
/// - clearance_window is the window of stages::validate; check_shape_metric_limits.
/// Templated over the backend policy; applied in shape_metrics_test.cpp (host) and .cu (CUDA).

#include "progress/progress_harness.hpp"

#include <track_gen/shape_metrics.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace shape_test {

namespace tg = track_gen;
using progress_test::centreline;
using progress_test::has;
using progress_test::map_on_backend;
using progress_test::pi;
using progress_test::rig;
using progress_test::v3;

// ---------------------------------------------------------------------------------------------
// Running measure_shape on the backend.

constexpr int max_bins = 32;

/// What measure_shape returns for one env, with its histogram.
struct measured {
  tg::shape_metrics m;
  int histogram[max_bins];
};

/// measure_shape of env e, as a user's kernel would call it (one thread per env).
struct measure_env {
  tg::shape_metric_limits limits;
  TRACK_GEN_HD measured operator()(const tg::course_ref& view, const int& e) const {
    measured r{};
    r.m = tg::measure_shape(view.track(e), limits, r.histogram);
    return r;
  }
};

/// measure_shape of every env of the rig, on its backend.
template <class Policy>
std::vector<measured> measure_all(rig<Policy>& r, const tg::shape_metric_limits& limits) {
  REQUIRE(limits.histogram_bins <= max_bins);
  tg::check_shape_metric_limits(limits);
  std::vector<int> envs(static_cast<std::size_t>(r.num_envs()));
  for (int e = 0; e < r.num_envs(); ++e) envs[static_cast<std::size_t>(e)] = e;
  return map_on_backend(r, measure_env{limits}, envs);
}

// ---------------------------------------------------------------------------------------------
// Tracks of known geometry.

/// Regular polygon of `count` vertices on the circle of radius r around the origin, from (r, 0),
/// counter-clockwise (or clockwise).
inline std::vector<float3> regular_polygon(int count, double r, bool clockwise = false) {
  std::vector<float3> p;
  for (int i = 0; i < count; ++i) {
    const double a = (clockwise ? -2.0 : 2.0) * pi * i / count;
    p.push_back(v3(r * std::cos(a), r * std::sin(a)));
  }
  return p;
}

/// One piece of a turtle path: `length` metres turning by `turn` radians (positive left; 0: a
/// straight), i.e. an arc of radius length / |turn|.
struct piece {
  double length, turn;
};

/// The closed polyline of a turtle path from (x, y) at `heading`, a point every `step` metres or
/// less (each piece starts on a point), in double then rounded to float. Requires that the path
/// closes (ends where it started, within 1e-9 m).
inline std::vector<float3> turtle(double x, double y, double heading, const std::vector<piece>& pieces, double step = 0.05) {
  std::vector<float3> pts;
  double px = x, py = y, h = heading;
  for (const piece& p : pieces) {
    const int m = std::max(1, static_cast<int>(std::ceil(p.length / step)));
    const double k = p.turn / p.length;  // signed curvature
    for (int i = 0; i < m; ++i) {
      const double s = p.length * i / m;
      if (p.turn == 0.0) pts.push_back(v3(px + s * std::cos(h), py + s * std::sin(h)));
      else pts.push_back(v3(px + (std::sin(h + k * s) - std::sin(h)) / k, py + (std::cos(h) - std::cos(h + k * s)) / k));
    }
    if (p.turn == 0.0) {
      px += p.length * std::cos(h), py += p.length * std::sin(h);
    } else {
      px += (std::sin(h + p.turn) - std::sin(h)) / k, py += (std::cos(h) - std::cos(h + p.turn)) / k;
    }
    h += p.turn;
  }
  REQUIRE(std::hypot(px - x, py - y) < 1e-9);
  return pts;
}

/// Sum of the pieces' lengths.
inline double path_length(const std::vector<piece>& pieces) {
  double l = 0;
  for (const piece& p : pieces) l += p.length;
  return l;
}

/// Rounded rectangle: straights sx (along x) and sy, quarter turns of radius rho, from (0, 0) east.
inline std::vector<piece> rounded_rectangle(double sx, double sy, double rho) {
  const double q = pi / 2 * rho;
  return {{sx, 0}, {q, pi / 2}, {sy, 0}, {q, pi / 2}, {sx, 0}, {q, pi / 2}, {sy, 0}, {q, pi / 2}};
}

/// Serpentine from (0, 0) east: 60 m, a left U-turn of radius 5 m, 40 m back, a right U-turn
/// of 5 m, 40 m, a left U-turn of 5 m, 60 m back, and a left half turn of radius 15 m home.
/// Straights at y = 0, 10, 20, 30: the parallel runs are 10 m apart.
inline std::vector<piece> serpentine() {
  return {{60, 0}, {5 * pi, pi}, {40, 0}, {5 * pi, -pi}, {40, 0}, {5 * pi, pi}, {60, 0}, {15 * pi, pi}};
}

/// A loop with two S-bends on its lower straight (from (0, 0) east: 30 m, right 45 degrees then
/// left 45 degrees at radius 6 m, 40 m, left then right 45 degrees, 30 m), then a left half
/// turn of radius 20 m, the upper straight back and another half turn of 20 m.
inline std::vector<piece> s_bends() {
  const double arc = 6 * pi / 4, sx = 6 * std::sin(pi / 4);
  const double lower = 30 + 2 * sx + 40 + 2 * sx + 30;
  return {{30, 0},  {arc, -pi / 4}, {arc, pi / 4}, {40, 0},     {arc, pi / 4},
          {arc, -pi / 4}, {30, 0},   {20 * pi, pi}, {lower, 0}, {20 * pi, pi}};
}

/// Dumbbell: two round lobes (radius 12 m) joined by a neck of two parallel straights 20 m long,
/// `neck` metres apart (centreline to centreline). Each lobe: a right turn of alpha at radius 3 m
/// (away from the axis), a left turn of pi + 2 alpha at 12 m, a right turn of alpha at 3 m, with
/// cos alpha = (neck / 2 + 3) / (12 + 3) so that the lobe (symmetric about the axis) returns
/// on the other straight. From (-10, -neck / 2) east.
inline std::vector<piece> dumbbell(double neck) {
  const double rho = 3, big = 12, alpha = std::acos((neck / 2 + rho) / (big + rho));
  const std::vector<piece> lobe = {{rho * alpha, -alpha}, {big * (pi + 2 * alpha), pi + 2 * alpha}, {rho * alpha, -alpha}};
  std::vector<piece> p = {{20, 0}};
  p.insert(p.end(), lobe.begin(), lobe.end());
  p.push_back({20, 0});
  p.insert(p.end(), lobe.begin(), lobe.end());
  return p;
}

/// The same loop started at the beginning of piece `at` (`split`: half-way through it, the
/// piece's second half first and its first half last), where the pieces before it end.
inline std::vector<piece> rotated(const std::vector<piece>& p, std::size_t at, bool split) {
  std::vector<piece> out;
  if (split) out.push_back({p[at].length / 2, p[at].turn / 2});
  for (std::size_t i = split ? 1 : 0; i < p.size(); ++i) out.push_back(p[(at + i) % p.size()]);
  if (split) out.push_back({p[at].length / 2, p[at].turn / 2});
  return out;
}

/// Params of the user tracks: the `track` preset with `samples` samples, circuits up to 1 km.
inline tg::track_params shape_params(int num_envs, int samples) {
  tg::track_params p = tg::presets::track(num_envs);
  p.num_samples = samples;
  p.validate.length_max = 1000.0f;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Independent reference, in double precision.

/// The metrics measured again from a snapshot, plus how close the inputs of the discrete
/// metrics came to a threshold (where float and double may disagree).
struct reference {
  double perimeter = 0, area = 0, turning = 0, straight_fraction = 0, max_curvature = 0, thickness = 0;
  int turning_number = 0, hairpins = 0, chicanes = 0;
  std::vector<int> histogram;
  int ambiguous_samples = 0;    ///< samples within 1e-5 (relative) of the straight threshold or a bin edge
  bool ambiguous_runs = false;  ///< a sample near a run threshold, or a run's turning near an angle threshold
  bool ambiguous_window = false;  ///< window / ds within 1e-4 of a whole number
};

/// Distance between segments [p, q] and [r, s] in 3D: the unconstrained closest parameters of
/// the two lines when they fall inside the unit square, else the least of the four
/// endpoint-to-segment distances (the minimum of a convex quadratic over a square lies inside
/// it or on an edge, and an edge is an endpoint-to-segment problem).
struct d3 {
  double x, y, z;
};
inline d3 sub(d3 a, d3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline double dotd(d3 a, d3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline d3 at3(float3 p) { return {p.x, p.y, p.z}; }
inline double point_segment(d3 p, d3 a, d3 b) {
  const d3 ab = sub(b, a), ap = sub(p, a);
  const double den = dotd(ab, ab);
  const double t = den > 0 ? std::clamp(dotd(ap, ab) / den, 0.0, 1.0) : 0.0;
  const d3 e = {ap.x - t * ab.x, ap.y - t * ab.y, ap.z - t * ab.z};
  return std::sqrt(dotd(e, e));
}
inline double segment_segment(d3 p, d3 q, d3 r, d3 s) {
  const d3 u = sub(q, p), v = sub(s, r), w = sub(p, r);
  const double a = dotd(u, u), b = dotd(u, v), c = dotd(v, v), d = dotd(u, w), e = dotd(v, w);
  const double den = a * c - b * b;
  if (den > 1e-12 * a * c) {
    const double sc = (b * e - c * d) / den, tc = (a * e - b * d) / den;
    if (sc >= 0 && sc <= 1 && tc >= 0 && tc <= 1) {
      const d3 g = {w.x + sc * u.x - tc * v.x, w.y + sc * u.y - tc * v.y, w.z + sc * u.z - tc * v.z};
      return std::sqrt(dotd(g, g));
    }
  }
  return std::min({point_segment(p, r, s), point_segment(q, r, s), point_segment(r, p, q), point_segment(s, p, q)});
}

/// The metrics of env e of `t`, from its positions, curvature and length only.
inline reference reference_metrics(const tg::track_snapshot& t, int e, const tg::shape_metric_limits& l) {
  const int n = t.num_samples;
  const double length = t.length[static_cast<std::size_t>(e)];
  const double k0 = 2 * pi / length;
  auto pos = [&](int k) { return t.position[t.sample_index(e, ((k % n) + n) % n)]; };
  auto kappa = [&](int k) { return static_cast<double>(t.curvature[t.sample_index(e, ((k % n) + n) % n)]); };
  reference r;
  // Polygon: perimeter, shoelace about the origin, turning as differences of edge headings.
  std::vector<double> angle(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const float3 a = pos(k), b = pos(k + 1);
    r.perimeter += std::hypot(double(b.x) - a.x, double(b.y) - a.y);
    r.area += 0.5 * (double(a.x) * b.y - double(b.x) * a.y);
  }
  for (int k = 0; k < n; ++k) {
    const float3 a = pos(k - 1), b = pos(k), c = pos(k + 1);
    const double in = std::atan2(double(b.y) - a.y, double(b.x) - a.x), out = std::atan2(double(c.y) - b.y, double(c.x) - b.x);
    angle[static_cast<std::size_t>(k)] = progress_test::wrap_angle(out - in);
    r.turning += angle[static_cast<std::size_t>(k)];
  }
  r.turning_number = static_cast<int>(std::lround(r.turning / (2 * pi)));
  // Curvature: straights, the largest, the histogram.
  const double straight = l.straight_curvature * k0, width = l.histogram_max * k0 / l.histogram_bins;
  r.histogram.assign(static_cast<std::size_t>(l.histogram_bins), 0);
  int straights = 0;
  for (int k = 0; k < n; ++k) {
    const double a = std::fabs(kappa(k));
    straights += a < straight ? 1 : 0;
    r.max_curvature = std::max(r.max_curvature, a);
    const double x = a / width;
    r.histogram[static_cast<std::size_t>(std::min<double>(l.histogram_bins - 1, std::floor(x)))] += 1;
    const bool near_edge = x < l.histogram_bins && std::fabs(x - std::round(x)) < 1e-5 * std::max(1.0, x);
    if (std::fabs(a - straight) <= 1e-5 * straight || near_edge) ++r.ambiguous_samples;
  }
  r.straight_fraction = static_cast<double>(straights) / n;
  // Runs: the class of every sample, the list rotated to start at a change of class, then cut.
  struct run {
    int sign, first, last;
    double turning;
  };
  auto runs_at = [&](double threshold) {
    std::vector<int> cls(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      const double a = std::fabs(kappa(k));
      if (std::fabs(a - threshold) <= 1e-5 * threshold) r.ambiguous_runs = true;
      cls[static_cast<std::size_t>(k)] = a >= threshold ? (kappa(k) < 0 ? -1 : 1) : 0;
    }
    std::vector<run> runs;
    int start = 0;
    while (start < n && cls[static_cast<std::size_t>(start)] == cls[static_cast<std::size_t>((start + n - 1) % n)]) ++start;
    if (start == n) {  // one class all round
      if (cls[0] != 0) runs.push_back({cls[0], 0, n - 1, r.turning});
      return runs;
    }
    for (int i = 0; i < n; ++i) {
      const int k = (start + i) % n;
      const int c = cls[static_cast<std::size_t>(k)];
      if (runs.empty() || i == 0 || c != cls[static_cast<std::size_t>((k + n - 1) % n)]) runs.push_back({c, i, i, 0.0});
      runs.back().last = i;
      runs.back().turning += angle[static_cast<std::size_t>(k)];
    }
    runs.erase(std::remove_if(runs.begin(), runs.end(), [](const run& x) { return x.sign == 0; }), runs.end());
    return runs;
  };
  for (const run& x : runs_at(l.hairpin_curvature * k0)) {
    if (std::fabs(std::fabs(x.turning) - l.hairpin_angle) < 1e-3) r.ambiguous_runs = true;
    r.hairpins += std::fabs(x.turning) >= l.hairpin_angle ? 1 : 0;
  }
  std::vector<run> turns;
  for (const run& x : runs_at(straight)) {
    if (std::fabs(std::fabs(x.turning) - l.chicane_angle) < 1e-3) r.ambiguous_runs = true;
    if (std::fabs(x.turning) >= l.chicane_angle) turns.push_back(x);
  }
  const std::size_t m = turns.size();
  for (std::size_t i = 0; m >= 2 && i < m; ++i) {
    const run& a = turns[i];
    const run& b = turns[(i + 1) % m];
    const int gap = ((b.first - a.last - 1) % n + n) % n;  // straight samples between them
    if (a.sign != b.sign && gap * length / n <= l.chicane_gap * length) ++r.chicanes;
  }
  // Thickness: every pair of segments whose nearest endpoints are more than w samples apart
  // both ways round.
  r.thickness = std::numeric_limits<double>::infinity();
  if (l.thickness_window >= 0) {
    const double ratio = l.thickness_window * n / length;
    r.ambiguous_window = std::fabs(ratio - std::round(ratio)) < 1e-4;
    const int w = static_cast<int>(std::min<double>(n, std::floor(ratio)));
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const int apart = std::min(j - (i + 1), i + n - (j + 1));  // index distance of the nearest endpoints
        if (apart <= w) continue;
        r.thickness = std::min(r.thickness, segment_segment(at3(pos(i)), at3(pos(i + 1)), at3(pos(j)), at3(pos(j + 1))));
      }
    }
  }
  return r;
}

/// The distance of segments i and j of env e, in double (for the pair the library reports).
inline double pair_distance(const tg::track_snapshot& t, int e, int i, int j) {
  const int n = t.num_samples;
  auto p = [&](int k) { return at3(t.position[t.sample_index(e, k % n)]); };
  return segment_segment(p(i), p(i + 1), p(j), p(j + 1));
}

// ---------------------------------------------------------------------------------------------
// The cases.

TEST_CASE_TEMPLATE_DEFINE("shape metrics of a regular polygon circle: closed forms, both windings, the window rule",
                          Policy, shape_circle) {
  const int n = 64;
  const double radius = 40.0;
  rig<Policy> r(shape_params(2, n), 10.0f, centreline({regular_polygon(n, radius), regular_polygon(n, radius, true)}));
  const tg::track_snapshot t = r.tracks();
  progress_test::require_valid_user_tracks(t);
  tg::shape_metric_limits limits;  // defaults, no thickness
  const std::vector<measured> out = measure_all(r, limits);

  // The sample polygon is the input N-gon (the samples fall on its vertices).
  const double compactness = pi / (n * std::tan(pi / n));  // 4 pi (N/2 R^2 sin(2 pi/N)) / (N 2 R sin(pi/N))^2
  const double area = 0.5 * n * radius * radius * std::sin(2 * pi / n), perimeter = 2 * n * radius * std::sin(pi / n);
  REQUIRE(1.0 - compactness > 5e-4);  // the discretisation error is visible at this N
  for (int e = 0; e < 2; ++e) {
    CAPTURE(e);
    const tg::shape_metrics& m = out[static_cast<std::size_t>(e)].m;
    const double sign = e == 0 ? 1.0 : -1.0;
    CHECK(m.compactness == doctest::Approx(compactness).epsilon(2e-6));
    CHECK(m.area == doctest::Approx(sign * area).epsilon(1e-5));
    CHECK(m.perimeter == doctest::Approx(perimeter).epsilon(1e-5));
    CHECK(m.length == doctest::Approx(perimeter).epsilon(1e-5));
    CHECK(m.turning_number == (e == 0 ? 1 : -1));
    CHECK(m.total_turning == doctest::Approx(sign * 2 * pi).epsilon(1e-5));
    CHECK(m.straight_fraction == 0.0f);
    CHECK(m.hairpins == 0);
    CHECK(m.chicanes == 0);
    CHECK(m.max_curvature == doctest::Approx(1.0 / radius).epsilon(1e-4));  // Menger: the circumcircle
    CHECK(std::isnan(m.min_thickness));
    CHECK(m.thinnest_segment == -1);
    // |curvature| / kappa_0 = L / (2 pi R) = N sin(pi / N) / pi = 0.9996: bin 1 of width 0.5.
    for (int b = 0; b < limits.histogram_bins; ++b) CHECK(out[static_cast<std::size_t>(e)].histogram[b] == (b == 1 ? n : 0));
  }

  // Thickness with a window of w samples: the nearest far-apart segments are o = w + 2 apart,
  // their nearest vertices w + 1 steps apart on the circle: 2 R sin((w + 1) pi / N).
  const double ds = double(t.length[0]) / n;
  for (const int w : {0, 3, 10, 29}) {
    CAPTURE(w);
    limits.thickness_window = static_cast<float>((w + 0.5) * ds);
    const std::vector<measured> thick = measure_all(r, limits);
    for (int e = 0; e < 2; ++e) {
      CHECK(thick[static_cast<std::size_t>(e)].m.min_thickness == doctest::Approx(2 * radius * std::sin((w + 1) * pi / n)).epsilon(1e-5));
      const int a = thick[static_cast<std::size_t>(e)].m.thinnest_segment, b = thick[static_cast<std::size_t>(e)].m.thinnest_partner;
      CHECK(((b - a + n) % n == w + 2 || (a - b + n) % n == w + 2));
    }
  }
  // A window of half the loop leaves no pair: +inf; exactly validate's: no pair closer than c.
  limits.thickness_window = static_cast<float>(ds * (n / 2 - 0.5));
  for (const measured& x : measure_all(r, limits)) {
    CHECK(std::isinf(x.m.min_thickness));
    CHECK(x.m.thinnest_segment == -1);
  }
  limits = tg::shape_metric_limits_for(shape_params(2, n));
  for (const measured& x : measure_all(r, limits)) CHECK(x.m.min_thickness >= 2 * 0.3 + 0.1);
}

TEST_CASE_TEMPLATE_DEFINE("shape metrics of stadiums, a rounded rectangle, a serpentine, S-bends and dumbbells",
                          Policy, shape_known) {
  const int n = 1024;
  const progress_test::stadium long_oval{75.0, 10.0}, short_oval{20.0, 20.0};
  const std::vector<piece> rect = rounded_rectangle(60, 30, 8);
  const std::vector<std::vector<float3>> shapes = {
      long_oval.polyline(8000), short_oval.polyline(8000), turtle(0, 0, 0, rect, 0.02), turtle(0, 0, 0, serpentine()),
      turtle(0, 0, 0, s_bends()), turtle(-10, -2, 0, dumbbell(4.0)), turtle(-10, -0.5, 0, dumbbell(1.0)),
      // The S-bends from the middle of the first S (between its two turns), the serpentine from
      // the middle of its first U-turn: a chicane and a hairpin across the start line.
      turtle(30 + 6 * std::sin(pi / 4), -6 * (1 - std::cos(pi / 4)), -pi / 4, rotated(s_bends(), 2, false)),
      turtle(65, 5, pi / 2, rotated(serpentine(), 1, true))};
  const tg::track_params params = shape_params(static_cast<int>(shapes.size()), n);
  rig<Policy> r(params, 10.0f, centreline(shapes));
  const tg::track_snapshot t = r.tracks();
  progress_test::require_valid_user_tracks(t);
  const tg::shape_metric_limits limits = tg::shape_metric_limits_for(params);
  const std::vector<measured> out = measure_all(r, limits);
  auto m = [&](int e) { return out[static_cast<std::size_t>(e)].m; };
  for (int e = 0; e < static_cast<int>(shapes.size()); ++e) {
    CAPTURE(e);
    CHECK(m(e).turning_number == 1);
    CHECK(m(e).total_turning == doctest::Approx(2 * pi).epsilon(1e-5));
  }

  // Stadiums: straights 4a of L = 4a + 2 pi r. A sample counts as straight when its Menger
  // curvature (of it and its two neighbours) is below 0.5 kappa_0: every sample whose
  // neighbours lie on the same straight is (curvature 0), every one inside a turn is not
  // (1 / r >= 2.9 kappa_0 here), and the last straight sample before each of the 4 junctions
  // may go either way, as may the first and last sample of each straight's arc-length span:
  // within 6 samples of N 4a / L. Compactness: 4 pi (4 a r + pi r^2) / L^2 up to the chords
  // (relative error about pi ds^2 / (6 A) + 2 pi ds^2 / (12 r L): below 1e-4 here).
  // Hairpins: each half turn turns pi at curvature 1 / r: a hairpin when 1 / r >= 4 kappa_0,
  // i.e. r <= L / (8 pi): 10 m <= 14.4 m for the long oval, 20 m > 8.2 m for the short one.
  const progress_test::stadium ovals[] = {long_oval, short_oval};
  for (int e = 0; e < 2; ++e) {
    CAPTURE(e);
    const double a = ovals[e].a, rr = ovals[e].r, length = ovals[e].length();
    CHECK(std::fabs(m(e).straight_fraction - 4 * a / length) <= 6.0 / n);
    CHECK(m(e).compactness == doctest::Approx(4 * pi * (4 * a * rr + pi * rr * rr) / (length * length)).epsilon(2e-4));
    CHECK(m(e).hairpins == (rr <= length / (8 * pi) ? 2 : 0));
    CHECK(m(e).chicanes == 0);
    MESSAGE("stadium a " << a << " r " << rr << ": straight fraction " << m(e).straight_fraction << " (4a / L "
                         << 4 * a / length << "), compactness " << m(e).compactness);
  }
  CHECK(m(0).hairpins == 2);
  CHECK(m(1).hairpins == 0);

  // Rounded rectangle: straights 2 (60 + 30) of L = 180 + 2 pi 8; area 76 x 46 - (4 - pi) 8^2;
  // corners at 1 / 8 = 4.6 kappa_0, tight, but turning 90 degrees: no hairpin; all left: no chicane.
  {
    const double length = path_length(rect), area = 76.0 * 46.0 - (4 - pi) * 64;
    CHECK(std::fabs(m(2).straight_fraction - 180 / length) <= 8.0 / n);
    CHECK(m(2).compactness == doctest::Approx(4 * pi * area / (length * length)).epsilon(2e-4));
    CHECK(m(2).hairpins == 0);
    CHECK(m(2).chicanes == 0);
    // Histogram: the straights in bin 0, the corners (4.58 kappa_0) in bin 9 ([4.5, 5)), the
    // few samples at the 8 junctions in between.
    const int* h = out[2].histogram;
    int elsewhere = 0;
    for (int b = 0; b < limits.histogram_bins; ++b) elsewhere += b == 0 || b == 9 ? 0 : h[b];
    CHECK(std::abs(h[0] - static_cast<int>(std::lround(n * 180 / length))) <= 8);
    CHECK(elsewhere <= 16);
    CHECK(h[9] >= static_cast<int>(n * 16 * pi / length) - 16);
  }

  // Serpentine: three U-turns of radius 5 m (1 / 5 >= 4 kappa_0 = 0.085: hairpins); the home
  // turn of 15 m is not tight enough (1 / 15 < 0.085). Opposite U-turns are 40 m of straight
  // apart (more than 0.05 L = 14.7 m): no chicane.
  CHECK(4 * 2 * pi / path_length(serpentine()) < 1.0 / 5);
  CHECK(4 * 2 * pi / path_length(serpentine()) > 1.0 / 15);
  CHECK(m(3).hairpins == 3);
  CHECK(m(3).chicanes == 0);

  // S-bends: turns R45 L45 (abutting), L45 R45 (abutting), then the two 180 degree ends (radius
  // 20 m: not hairpins); R45 -> L180 and L180 -> R45 are 30 m of straight apart (> 0.05 L).
  CHECK(m(4).chicanes == 2);
  CHECK(m(4).hairpins == 0);

  // The same loops started mid-turn: the same counts (the turn across the start line is one).
  CHECK(m(7).chicanes == 2);
  CHECK(m(7).hairpins == 0);
  CHECK(m(8).hairpins == 3);
  CHECK(m(8).chicanes == 0);
  CHECK(m(7).straight_fraction == doctest::Approx(m(4).straight_fraction).epsilon(0.01));
  CHECK(m(8).compactness == doctest::Approx(m(3).compactness).epsilon(1e-4));

  // Dumbbells: each lobe is entered and left by a right-left (and left-right) pair of abutting
  // turns of alpha = 70.5 (76.5) degrees: two chicanes per lobe. Its 321 degree turn at radius
  // 12 m is below the hairpin curvature (1 / 12 < 4 kappa_0 = 0.13).
  for (const int e : {5, 6}) {
    CAPTURE(e);
    CHECK(m(e).chicanes == 4);
    CHECK(m(e).hairpins == 0);
  }

  // Thickness, validate's rule: only segments farther apart along the track than the window
  // count. Just beyond the window, a turn of radius rho brings the track back within
  // 2 rho sin(a / (2 rho)) of itself (a = (w + 1) ds, the arc between the nearest endpoints of
  // segments w + 2 apart): the thickness is the smaller of that on the tightest turn and the
  // narrowest neck. With validate's window (1.26 m here): the serpentine's 5 m U-turns, the
  // 4 m dumbbell's 3 m turns, and the 1 m dumbbell's neck (below its turns' 1.3 m). With a
  // window longer than a U-turn (20 m > 5 pi) the serpentine's parallel straights, 10 m apart;
  // with 8 m, the 4 m neck.
  auto local = [&](int e, double rho, double window) {
    const double ds = double(t.length[static_cast<std::size_t>(e)]) / n;
    return 2 * rho * std::sin((std::floor(window / ds) + 1) * ds / (2 * rho));
  };
  CHECK(m(3).min_thickness == doctest::Approx(local(3, 5, limits.thickness_window)).epsilon(1e-3));
  CHECK(m(5).min_thickness == doctest::Approx(local(5, 3, limits.thickness_window)).epsilon(1e-3));
  CHECK(local(6, 3, limits.thickness_window) > 1.2);
  tg::shape_metric_limits wide = limits;
  wide.thickness_window = 20.0f;
  CHECK(measure_all(r, wide)[3].m.min_thickness == doctest::Approx(10.0).epsilon(1e-5));
  wide.thickness_window = 8.0f;
  const std::vector<measured> neck8 = measure_all(r, wide);
  const double necks[] = {4.0, 1.0};
  for (int d = 0; d < 2; ++d) {
    const int e = 5 + d;
    CAPTURE(e);
    const tg::shape_metrics& x = d == 0 ? neck8[5].m : m(6);
    CHECK(x.min_thickness == doctest::Approx(necks[d]).epsilon(1e-5));
    // Both segments on the neck (an end may lie just past a straight's end, on the 3 m turn),
    // one on each straight.
    double side = 1.0;
    for (const int s : {x.thinnest_segment, x.thinnest_partner}) {
      for (const int k : {s, (s + 1) % n}) {
        const float3 a = t.position[t.sample_index(e, k)];
        CHECK(std::fabs(std::fabs(a.y) - necks[d] / 2) < 0.01);
        CHECK(std::fabs(a.x) <= 10.5f);
      }
      side *= t.position[t.sample_index(e, s)].y;
    }
    CHECK(side < 0.0);
  }

  // Everything against the double-precision reference too.
  for (int e = 0; e < static_cast<int>(shapes.size()); ++e) {
    CAPTURE(e);
    const reference ref = reference_metrics(t, e, limits);
    CHECK(m(e).hairpins == ref.hairpins);
    CHECK(m(e).chicanes == ref.chicanes);
    CHECK(m(e).min_thickness == doctest::Approx(ref.thickness).epsilon(1e-5));
  }
}

TEST_CASE_TEMPLATE_DEFINE("shape metrics of generated tracks equal a brute-force recomputation in double", Policy,
                          shape_generated) {
  struct preset {
    const char* name;
    tg::track_params params;
  };
  const int envs = progress_test::scaled(64, 8);
  const preset presets[] = {{"track", tg::presets::track(envs)}, {"drone_track", tg::presets::drone_track(envs)}};
  for (const preset& p : presets) {
    const std::string name = p.name;
    CAPTURE(name);
    rig<Policy> r(p.params, 1.0f);
    const tg::track_snapshot t = r.tracks();
    const tg::shape_metric_limits limits = tg::shape_metric_limits_for(p.params);
    const std::vector<measured> out = measure_all(r, limits);
    const double clearance = 2.0 * p.params.half_width + p.params.validate.clearance_margin;
    int skipped_runs = 0, hairpins = 0, chicanes = 0;
    for (int e = 0; e < envs; ++e) {
      CAPTURE(e);
      const tg::shape_metrics& m = out[static_cast<std::size_t>(e)].m;
      const reference ref = reference_metrics(t, e, limits);
      const int n = t.num_samples;
      CHECK(m.length == t.length[static_cast<std::size_t>(e)]);
      CHECK(m.perimeter == doctest::Approx(ref.perimeter).epsilon(1e-5));
      CHECK(m.area == doctest::Approx(ref.area).epsilon(1e-5));
      CHECK(m.compactness == doctest::Approx(4 * pi * std::fabs(ref.area) / (ref.perimeter * ref.perimeter)).epsilon(1e-5));
      CHECK(std::fabs(m.total_turning - ref.turning) < 1e-4);
      CHECK(m.turning_number == ref.turning_number);
      CHECK(m.max_curvature == static_cast<float>(ref.max_curvature));
      CHECK(std::fabs(m.straight_fraction - ref.straight_fraction) <= static_cast<double>(ref.ambiguous_samples) / n + 1e-7);
      int moved = 0, total = 0;
      for (int b = 0; b < limits.histogram_bins; ++b) {
        total += out[static_cast<std::size_t>(e)].histogram[b];
        moved += std::abs(out[static_cast<std::size_t>(e)].histogram[b] - ref.histogram[static_cast<std::size_t>(b)]);
      }
      CHECK(total == n);
      CHECK(moved <= 2 * ref.ambiguous_samples);
      if (ref.ambiguous_runs) {
        ++skipped_runs;
      } else {
        CHECK(m.hairpins == ref.hairpins);
        CHECK(m.chicanes == ref.chicanes);
      }
      hairpins += m.hairpins;
      chicanes += m.chicanes;
      if (!ref.ambiguous_window) {
        CHECK(m.min_thickness == doctest::Approx(ref.thickness).epsilon(1e-5));
        REQUIRE(m.thinnest_segment >= 0);
        CHECK(pair_distance(t, e, m.thinnest_segment, m.thinnest_partner) == doctest::Approx(ref.thickness).epsilon(1e-5));
      }
      // validate's guarantee, seen from here: an accepted track is at least c thick.
      const std::uint32_t st = t.status[static_cast<std::size_t>(e)];
      if (has(st, tg::status::valid)) CHECK(m.min_thickness >= clearance * (1 - 1e-6));
    }
    CHECK(skipped_runs <= envs / 8);
    MESSAGE(name << ": " << envs << " tracks, " << hairpins << " hairpins, " << chicanes << " chicanes, "
                   << skipped_runs << " with a run at a threshold (counts not compared)");
  }
}

TEST_CASE("clearance_window is the window of stages::validate") {
  tg::track_params custom = tg::presets::track(1);
  custom.half_width = 1.3f;
  custom.validate.clearance_margin = 0.7f;
  custom.validate.turn_radius_min = 0.2f;
  const tg::track_params sets[] = {tg::presets::track(1), tg::presets::drone_track(1), tg::presets::long_track(1), custom};
  for (const tg::track_params& p : sets) {
    for (const float length : {12.5f, 37.0f, 59.9f, 1900.0f}) {
      for (const int n : {64, 256, 2048}) {
        const float ds = length / static_cast<float>(n);
        CHECK(static_cast<int>(std::floor(tg::clearance_window(p) / ds)) == tg::stages::validate::window_samples(p, length, n));
      }
    }
    CHECK(tg::shape_metric_limits_for(p).thickness_window == tg::clearance_window(p));
  }
}

TEST_CASE("check_shape_metric_limits names the field and its range") {
  auto message = [](tg::shape_metric_limits l) -> std::string {
    try {
      tg::check_shape_metric_limits(l);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  tg::shape_metric_limits l;
  CHECK(message(l) == "no exception");
  l.straight_curvature = 0.0f;
  CHECK(message(l).find("shape_metric_limits.straight_curvature = 0") != std::string::npos);
  l = {};
  l.hairpin_angle = std::nanf("");
  CHECK(message(l).find("shape_metric_limits.hairpin_angle") != std::string::npos);
  l = {};
  l.chicane_gap = -0.1f;
  CHECK(message(l).find("shape_metric_limits.chicane_gap") != std::string::npos);
  l = {};
  l.thickness_window = INFINITY;
  CHECK(message(l).find("shape_metric_limits.thickness_window") != std::string::npos);
  l = {};
  l.histogram_bins = 0;
  CHECK(message(l).find("shape_metric_limits.histogram_bins = 0") != std::string::npos);
  l = {};
  l.thickness_window = -1.0f;  // no thickness: valid
  CHECK(message(l) == "no exception");
}

}  // namespace shape_test

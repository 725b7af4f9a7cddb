#pragma once
/// @file
/// Over/under crossings (issue 15, "Tests and targets"): a lifted figure-eight whose course line
/// passes over itself. In plan view the lemniscate crosses itself at the origin; in 3D one branch
/// passes 2h above the other. Checked against independent references in double precision: the
/// analytic curve (its 3D arc length integrated over 2^20 chords) and a brute-force nearest
/// point of the sampled polygon.
/// - localize at the crossing returns the branch the point is on (its arc length, the vertical
///   offset given), cold, with a warm hint on that branch and with a stale hint on the other;
/// - an agent flown along the whole course line, on it and weaving around it, gets progress
///   that follows the reference arc length at every step (no jump of L / 2 to the other branch),
///   passes every gate in order (the gates of both branches sit at the crossing, one above the
///   other) and completes its laps, without a full search;
/// - the same on a gate course (gate_course_pipeline, user control points as the gates) with
///   two gates stacked at the crossing, against its own sampled course line;
/// - validation keeps such a course only when the branches clear each other in 3D by
///   2 half_width + clearance_margin (the segment distance of stages::validate is 3D).
/// Templated over the policy; applied in over_under_test.cpp (host) and .cu (CUDA).

#include "progress_harness.hpp"

#include <track_gen/localizer.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace progress_test {

/// A lemniscate of Bernoulli of half-width a [m] lifted by z = z0 + h sin t: plan view
/// x = a cos t / (1 + sin^2 t), y = a sin t cos t / (1 + sin^2 t), starting at (a, 0) and
/// running counter-clockwise around the right lobe. The plan view crosses itself at the origin
/// at right angles, at t = pi / 2 (z0 + h, the upper branch, arc length L / 4 by symmetry) and
/// t = 3 pi / 2 (z0 - h, the lower branch, 3 L / 4). Its tightest turn has radius a / 3 (at the
/// lobes' tips). The arc length is tabulated once (2^20 chords in double).
struct lifted_eight {
  double a, z0, h;
  std::vector<double> table;  ///< 3D arc length at t = 2 pi i / M, i = 0..M

  static constexpr int chords = 1 << 20;

  lifted_eight(double a_, double z0_, double h_) : a(a_), z0(z0_), h(h_), table(chords + 1, 0.0) {
    double px, py, pz;
    point(0.0, px, py, pz);
    for (int i = 1; i <= chords; ++i) {
      double x, y, z;
      point(2.0 * pi * i / chords, x, y, z);
      table[static_cast<std::size_t>(i)] =
          table[static_cast<std::size_t>(i - 1)] + std::sqrt((x - px) * (x - px) + (y - py) * (y - py) + (z - pz) * (z - pz));
      px = x, py = y, pz = z;
    }
  }

  double length() const { return table.back(); }

  void point(double t, double& x, double& y, double& z) const {
    const double s = std::sin(t), c = std::cos(t), den = 1.0 + s * s;
    x = a * c / den, y = a * s * c / den, z = z0 + h * s;
  }

  /// The parameter t at (unwrapped) arc length s, by bisection of the table and linear
  /// interpolation within a chord.
  double param_at(double s) const {
    const double len = length();
    const double laps = std::floor(s / len);
    const double u = s - laps * len;
    const auto it = std::upper_bound(table.begin(), table.end(), u);
    const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(it - table.begin()), table.size() - 1);
    const double s0 = table[i - 1], s1 = table[i];
    const double f = s1 > s0 ? (u - s0) / (s1 - s0) : 0.0;
    return 2.0 * pi * (laps + (static_cast<double>(i - 1) + f) / chords);
  }

  /// The point at arc length s, `left` metres along the horizontal left normal and `up` metres
  /// above the course line.
  float3 at(double s, double left = 0.0, double up = 0.0) const {
    const double t = param_at(s), dt = 1e-6;
    double x, y, z, x0, y0, z0_, x1, y1, z1;
    point(t, x, y, z);
    point(t - dt, x0, y0, z0_);
    point(t + dt, x1, y1, z1);
    const double tx = x1 - x0, ty = y1 - y0, norm = std::hypot(tx, ty);
    return v3(x - ty / norm * left, y + tx / norm * left, z + up);
  }

  /// The course line given to the library: `points` vertices at uniform t.
  std::vector<float3> polyline(int points) const {
    std::vector<float3> p;
    for (int i = 0; i < points; ++i) {
      double x, y, z;
      point(2.0 * pi * i / points, x, y, z);
      p.push_back(v3(x, y, z));
    }
    return p;
  }
};

/// Params of these courses: 512 samples (0.41 m apart on these 210 m loops), half-width 0.3 m,
/// clearance margin 0.1 m (the branches must be 0.7 m apart in 3D), gates 0.5 m high each side.
inline tg::track_params over_under_params(int num_envs) {
  tg::track_params p = user_track_params(num_envs);
  p.half_width = 0.3f;
  p.validate.clearance_margin = 0.1f;
  p.gate_half_height = 0.5f;
  return p;
}

constexpr double eight_a = 40.0;  ///< lemniscate half-width [m]: L about 210 m, tightest turn 13.3 m
constexpr double eight_z0 = 2.0;  ///< mean altitude [m]

/// The tightest turn radius [m] of env e's sampled line (plan view) within `window` samples of
/// arc length `around`, or over the whole loop when `around` < 0: each segment's length over the
/// angle it turns from the previous one.
inline double polygon_turn_radius(const tg::track_snapshot& t, int e, double around, int window) {
  const int n = t.num_samples;
  const double len = t.length[static_cast<std::size_t>(e)], ds = len / n;
  const int first = around < 0.0 ? 0 : -window, last = around < 0.0 ? n - 1 : window;
  const double base = around < 0.0 ? 0.0 : around;
  double r_min = 1e300;
  for (int k = first; k <= last; ++k) {
    const polygon_point a = polygon_at(t, e, base + (k - 1) * ds), b = polygon_at(t, e, base + k * ds),
                        d = polygon_at(t, e, base + (k + 1) * ds);
    const double ux = b.x - a.x, uy = b.y - a.y, wx = d.x - b.x, wy = d.y - b.y;
    const double turn = std::fabs(std::atan2(ux * wy - uy * wx, ux * wx + uy * wy));
    if (turn > 0.0) r_min = std::min(r_min, ds / turn);
  }
  return r_min;
}

/// The angle [rad] (3D) between env e's segments into and out of sample k (any k: wrapped).
inline double vertex_turn(const tg::track_snapshot& t, int e, int k) {
  const int n = t.num_samples;
  auto at = [&](int i) { return t.position[t.sample_index(e, ((i % n) + n) % n)]; };
  const float3 a = at(k - 1), b = at(k), c = at(k + 1);
  const double ux = double(b.x) - a.x, uy = double(b.y) - a.y, uz = double(b.z) - a.z;
  const double wx = double(c.x) - b.x, wy = double(c.y) - b.y, wz = double(c.z) - b.z;
  const double cx = uy * wz - uz * wy, cy = uz * wx - ux * wz, cz = ux * wy - uy * wx;
  return std::atan2(std::sqrt(cx * cx + cy * cy + cz * cz), ux * wx + uy * wy + uz * wz);
}

/// A point near a crossing and what its localization must return: the arc length s of the
/// branch it lies on and the crossing's arc length on the other branch (both on the library's
/// length L), and the vertical offset given.
struct crossing_probe {
  int env;
  float3 p;
  double s, s_other, up;
};

/// Localizes every probe on the rig's backend cold (window 0), warm (a hint on the probe's own
/// branch) and stale (a hint at the other branch's crossing, right below or above it in plan
/// view), and checks each result against the reference arc length (within `s_tolerance` [m]) and
/// a brute-force nearest point of the sampled polygon in double. A stale hint must fall back to
/// the O(N) search (`lost`): the other branch's local minimum is farther than the half-width.
template <class Policy, class Pipeline>
void check_crossing_probes(rig<Policy, Pipeline>& r, const tg::track_snapshot& t, const std::vector<crossing_probe>& probes,
                           double s_tolerance) {
  const int n = t.num_samples;
  const char* names[3] = {"cold", "warm", "stale hint on the other branch"};
  std::vector<localize_query> queries;
  for (const crossing_probe& pr : probes) {
    const double len = t.length[static_cast<std::size_t>(pr.env)];
    queries.push_back({pr.env, pr.p, 0, 0});
    queries.push_back({pr.env, pr.p, static_cast<int>(wrap_arc(pr.s, len) / len * n), 8});
    queries.push_back({pr.env, pr.p, static_cast<int>(wrap_arc(pr.s_other, len) / len * n), 8});
  }
  const std::vector<tg::localization> got = map_on_backend(r, localize_fn{}, queries);
  double worst_ref = 0.0, worst_brute = 0.0, worst_vertical = 0.0, nearest_wrong = 1e300;
  int stale_lost = 0;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const crossing_probe& pr = probes[i / 3];
    const int kind = static_cast<int>(i % 3);
    const tg::localization& l = got[i];
    const double len = t.length[static_cast<std::size_t>(pr.env)];
    const brute_result b = brute_nearest(t.position, t.sample_index(pr.env, 0), n, pr.p);
    const double s_brute = (b.segment + b.t) * len / n;
    INFO("env " << pr.env << ", " << std::string(names[kind]) << ", p = (" << pr.p.x << ", " << pr.p.y << ", " << pr.p.z
                << "), s = " << l.s << ", reference " << wrap_arc(pr.s, len) << ", brute force " << s_brute
                << ", other branch " << wrap_arc(pr.s_other, len));
    // Both references put the point on the same branch; the library agrees with both.
    REQUIRE(arc_distance(s_brute, pr.s, len) < s_tolerance);
    const double d_ref = arc_distance(l.s, pr.s, len), d_brute = arc_distance(l.s, s_brute, len);
    // Near a sample on the inside of its bend, the segments before and after it have feet about
    // distance x turn angle apart at (nearly) equal distances: float rounding may pick either.
    const double tie = b.distance * std::max(vertex_turn(t, pr.env, b.segment), vertex_turn(t, pr.env, b.segment + 1));
    INFO("vertex tie allowance " << tie << " m");
    CHECK(d_ref < s_tolerance);
    CHECK(d_brute < 2e-3 + tie);
    CHECK(std::fabs(l.vertical - pr.up) < 5e-3);
    CHECK(std::fabs(l.distance - b.distance) < 1e-4);
    CHECK(dist3(l.point, b.x, b.y, b.z) < 2e-3 + tie);
    if (kind == 1) CHECK_FALSE(l.lost);
    if (kind == 2) {
      CHECK(l.lost);
      stale_lost += l.lost ? 1 : 0;
    }
    worst_ref = std::max(worst_ref, d_ref);
    worst_brute = std::max(worst_brute, d_brute);
    worst_vertical = std::max(worst_vertical, std::fabs(l.vertical - pr.up));
    nearest_wrong = std::min(nearest_wrong, arc_distance(l.s, pr.s_other, len));
  }
  MESSAGE(queries.size() << " localizations at the crossing: arc length within " << worst_ref << " m of the"
                         << " reference and " << worst_brute << " m of the brute force, vertical offset within "
                         << worst_vertical << " m; nearest result to the other branch " << nearest_wrong << " m; "
                         << stale_lost << " of " << probes.size() << " stale hints fell back to the full search");
}

/// One agent per env flown for steps 0..steps: `place(e, i)` its position, `arc(e, i)` the
/// reference arc length there (unwrapped, on the library's length), `lateral(e, i)` its
/// sideways offset; `gate_arcs[e]` the reference arc lengths of env e's gates (gate 0 at 0,
/// ascending). Checks at every step that progress follows the reference (within `s_tolerance`:
/// a jump to the other branch would be L / 2 off), advances by the reference's step, raises no
/// wrong-way, off-track or full-search flag, and that the gates passed, the next gate and the
/// laps are those the reference arc has reached (not judged within `gate_margin` [m] of a gate).
template <class Policy, class Pipeline, class Place, class Arc, class Lateral>
void fly_and_check(rig<Policy, Pipeline>& r, const tg::track_snapshot& t, int steps, Place place, Arc arc, Lateral lateral,
                   const std::vector<std::vector<double>>& gate_arcs, double s_tolerance, double gate_margin) {
  const int envs = r.num_envs();
  std::vector<double> last(static_cast<std::size_t>(envs), 0.0);
  double worst_arc = 0.0, worst_lateral = 0.0;
  int gate_checks = 0, skipped = 0;
  for (int i = 0; i <= steps; ++i) {
    for (int e = 0; e < envs; ++e) r.positions[static_cast<std::size_t>(e)] = place(e, i);
    r.step();
    const tg::progress_snapshot snap = r.progress();
    for (int e = 0; e < envs; ++e) {
      const double len = t.length[static_cast<std::size_t>(e)], s = arc(e, i);
      const std::vector<double>& g_arc = gate_arcs[static_cast<std::size_t>(e)];
      const int gates = static_cast<int>(g_arc.size());
      const progress_entry p = entry(snap, e);
      INFO("env " << e << ", step " << i << ", reference s = " << s << " (" << wrap_arc(s, len) << " in the lap), "
                  << describe(p));
      const double d_arc = arc_distance(p.lap_progress, s, len);
      CHECK(d_arc < s_tolerance);
      CHECK(std::fabs(p.lateral - lateral(e, i)) < 5e-3);
      worst_arc = std::max(worst_arc, d_arc);
      worst_lateral = std::max(worst_lateral, std::fabs(p.lateral - lateral(e, i)));
      if (i > 0) {
        double delta = p.lap_progress - last[static_cast<std::size_t>(e)];
        delta -= len * std::round(delta / len);  // across the start line
        CHECK(delta > 0.0);
        CHECK(std::fabs(delta - (s - arc(e, i - 1))) < 0.05);
        CHECK_FALSE(has(p.flags, tg::progress_flags::wrong_way));
        CHECK_FALSE(has(p.flags, tg::progress_flags::off_track));
        CHECK_FALSE(has(p.flags, tg::progress_flags::full_search));
      }
      last[static_cast<std::size_t>(e)] = p.lap_progress;
      // Gates k = 1, 2, ... (gate k mod G of lap k / G; k = G, 2G complete laps) the reference
      // has reached by s; none on the first step (it only initialises).
      int count = 0;
      double nearest = 1e300;
      const double laps_done = std::floor(s / len);
      for (int lap = 0; lap <= static_cast<int>(laps_done) + 1; ++lap)
        for (int g = 0; g < gates; ++g) {
          const double at = lap * len + g_arc[static_cast<std::size_t>(g)];
          nearest = std::min(nearest, std::fabs(s - at));
          count += (at > 0.0 && at <= s && i > 0) ? 1 : 0;
        }
      if (i > 0 && nearest < gate_margin) {
        ++skipped;
        continue;
      }
      ++gate_checks;
      CHECK(p.gates_passed == count);
      CHECK(p.next_gate == (count + 1) % gates);
      CHECK(p.laps == count / gates);
    }
  }
  MESSAGE((steps + 1) << " steps of " << envs << " agents: arc length within " << worst_arc
                      << " m of the reference, lateral within " << worst_lateral << " m; gate counts checked at "
                      << gate_checks << " env-steps (" << skipped << " within " << gate_margin
                      << " m of a gate not judged)");
}

TEST_CASE_TEMPLATE_DEFINE("localize at an over/under crossing returns the branch the point is on", Policy,
                          over_under_localize_at_crossing) {
  // Env 0: branches 2 m apart (z 3 m over 1 m); env 1: 1 m apart (2.5 over 1.5), near the 0.7 m
  // the validation requires.
  const std::vector<lifted_eight> eights = {{eight_a, eight_z0, 1.0}, {eight_a, eight_z0, 0.5}};
  std::vector<std::vector<float3>> lines;
  for (const lifted_eight& c : eights) lines.push_back(c.polyline(4096));
  rig<Policy> r(over_under_params(2), 10.0f, centreline(lines));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  std::vector<crossing_probe> probes;
  for (int e = 0; e < 2; ++e) {
    const lifted_eight& c = eights[static_cast<std::size_t>(e)];
    const double len = c.length(), len_lib = t.length[static_cast<std::size_t>(e)];
    CHECK(len_lib == doctest::Approx(len).epsilon(3e-5));
    for (int branch = 0; branch < 2; ++branch) {
      const double s_cross = (branch == 0 ? 0.25 : 0.75) * len, s_other = (branch == 0 ? 0.75 : 0.25) * len;
      // The crossing lies where the reference says: plan origin, z0 +- h.
      const float3 q = c.at(s_cross);
      REQUIRE(std::hypot(q.x, q.y) < 1e-4);
      REQUIRE(q.z == doctest::Approx(c.z0 + (branch == 0 ? c.h : -c.h)).epsilon(1e-6));
      for (double along : {-1.0, -0.3, 0.0, 0.3, 1.0})
        for (double left : {-0.2, 0.0, 0.2})
          for (double up : {-0.2, 0.0, 0.2})
            probes.push_back({e, c.at(s_cross + along, left, up), (s_cross + along) / len * len_lib,
                              s_other / len * len_lib, up});
    }
  }
  check_crossing_probes(r, t, probes, arc_tolerance(t.length[0], t.num_samples, eight_a / 3.0, 0.2));
}

TEST_CASE_TEMPLATE_DEFINE("an agent flown along a lifted figure-eight: monotone progress, every gate in order, laps",
                          Policy, over_under_flown) {
  // Envs 0-1: branches 2 m apart; envs 2-3: 1 m apart. Even envs fly the course line itself,
  // odd envs weave 0.15 m sideways and 0.15 m up and down around it (within the half-width
  // and the gate opening).
  const std::vector<lifted_eight> eights = {{eight_a, eight_z0, 1.0}, {eight_a, eight_z0, 0.5}};
  const int envs = 4;
  std::vector<std::vector<float3>> lines;
  for (int e = 0; e < envs; ++e) lines.push_back(eights[static_cast<std::size_t>(e / 2)].polyline(4096));
  // G = 20 gates on every env (a multiple of 4): gates 5 and 15 sit at the crossing, one above
  // the other, the agent flying through one and over or under the other.
  const int gates = 20;
  const double shortest = std::min(eights[0].length(), eights[1].length());
  rig<Policy> r(over_under_params(envs), static_cast<float>(shortest / gates * 0.997), centreline(lines));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  std::vector<std::vector<double>> gate_arcs(envs);
  for (int e = 0; e < envs; ++e) {
    REQUIRE(t.num_gates[static_cast<std::size_t>(e)] == gates);
    const lifted_eight& c = eights[static_cast<std::size_t>(e / 2)];
    for (int g = 0; g < gates; ++g) gate_arcs[static_cast<std::size_t>(e)].push_back(t.length[static_cast<std::size_t>(e)] * g / gates);
    for (int g : {5, 15}) {
      const float3 centre = t.gate_centre[t.gate_index(e, g)];
      INFO("env " << e << " gate " << g << " at (" << centre.x << ", " << centre.y << ", " << centre.z << ")");
      REQUIRE(std::hypot(centre.x, centre.y) < 1e-2);
      REQUIRE(std::fabs(centre.z - (c.z0 + (g == 5 ? c.h : -c.h))) < 1e-3);
    }
  }
  const double ds = 0.25, s0 = 0.05;  // reference arc per step; start just past gate 0
  const double longest = std::max(eights[0].length(), eights[1].length());
  const int steps = static_cast<int>(std::ceil((2.0 * longest + 1.0) / ds));  // two laps and a metre
  auto left = [](int e, int i) { return e % 2 == 1 ? 0.15 * std::sin(0.37 * i) : 0.0; };
  auto up = [](int e, int i) { return e % 2 == 1 ? 0.15 * std::cos(0.23 * i) : 0.0; };
  auto place = [&](int e, int i) { return eights[static_cast<std::size_t>(e / 2)].at(s0 + i * ds, left(e, i), up(e, i)); };
  // Raised by `up` where the line climbs (unit tangent z-component tz), the foot moves up * tz along it.
  auto arc = [&](int e, int i) {
    const lifted_eight& c = eights[static_cast<std::size_t>(e / 2)];
    const double s = s0 + i * ds, tz = (c.at(s + 1e-3).z - c.at(s - 1e-3).z) / 2e-3;
    return (s + up(e, i) * tz) / c.length() * t.length[static_cast<std::size_t>(e)];
  };
  fly_and_check(r, t, steps, place, arc, left, gate_arcs, arc_tolerance(t.length[0], t.num_samples, eight_a / 3.0, 0.21),
                0.02);
  const tg::progress_snapshot end = r.progress();
  for (int e = 0; e < envs; ++e) CHECK(end.laps[static_cast<std::size_t>(e)] == 2);
}

TEST_CASE_TEMPLATE_DEFINE("a gate course over itself: gates stacked at the crossing, localized and flown in order",
                          Policy, over_under_gate_course) {
  // The gate_course preset (1.5 m square openings, gate centres >= 3 m apart, clearance 2
  // half_width + 0.5 = 2 m) with user control points: 12 gates on the lifted figure-eight
  // (a = 20 m, z = 3 + 1.75 sin t) at t = 2 pi j / 12. Gates 3 and 9 both sit at the plan-view
  // crossing, 3.5 m apart in height: gate 9 right under gate 3. The course line is the library's
  // spline through them, so the references here are its sampled polygon (double precision).
  const lifted_eight c(20.0, 3.0, 1.75);
  const int gates = 12;
  std::vector<float3> control;
  for (int j = 0; j < gates; ++j) {
    double x, y, z;
    c.point(2.0 * pi * j / gates, x, y, z);
    control.push_back(v3(x, y, z));
  }
  tg::user_tracks tracks;
  tracks.type = tg::user_tracks::kind::control_points;
  tracks.tracks = {control};
  tg::track_params params = tg::presets::gate_course(2);
  rig<Policy, tg::presets::gate_course_pipeline> r(params, tg::presets::gate_course_spacing(params), tracks);
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;
  const double len = t.length[0];
  // The gates are the control points given, in order; each gate's reference arc length is that
  // of its control point's nearest point on the sampled polygon.
  std::vector<double> g_arc;
  for (int g = 0; g < gates; ++g) {
    const float3 centre = t.gate_centre[t.gate_index(0, g)];
    const float3 want = control[static_cast<std::size_t>(g)];
    INFO("gate " << g << " at (" << centre.x << ", " << centre.y << ", " << centre.z << ")");
    REQUIRE(dist3(centre, want.x, want.y, want.z) < 1e-2);
    const brute_result b = brute_nearest(t.position, t.sample_index(0, 0), n, want);
    g_arc.push_back(g == 0 ? 0.0 : (b.segment + b.t) * len / n);
  }
  REQUIRE(t.num_gates[0] == gates);
  REQUIRE(std::is_sorted(g_arc.begin(), g_arc.end()));

  // The crossing of the course line with itself in plan view, by testing every pair of
  // segments of its two halves (the branch through gate 3 and the one through gate 9).
  double s_up = -1.0, s_down = -1.0, z_up = 0.0, z_down = 0.0;
  for (int i = 0; i < n / 2; ++i)
    for (int j = n / 2; j < n; ++j) {
      const float3 a0 = t.position[t.sample_index(0, i)], a1 = t.position[t.sample_index(0, (i + 1) % n)];
      const float3 b0 = t.position[t.sample_index(0, j)], b1 = t.position[t.sample_index(0, (j + 1) % n)];
      const double rx = double(a1.x) - a0.x, ry = double(a1.y) - a0.y, qx = double(b1.x) - b0.x, qy = double(b1.y) - b0.y;
      const double den = rx * qy - ry * qx;
      if (den == 0.0) continue;
      const double wx = double(b0.x) - a0.x, wy = double(b0.y) - a0.y;
      const double u = (wx * qy - wy * qx) / den, v = (wx * ry - wy * rx) / den;
      if (u < 0.0 || u >= 1.0 || v < 0.0 || v >= 1.0) continue;
      REQUIRE(s_up < 0.0);  // one crossing only
      s_up = (i + u) * len / n, s_down = (j + v) * len / n;
      z_up = a0.z + u * (double(a1.z) - a0.z), z_down = b0.z + v * (double(b1.z) - b0.z);
    }
  REQUIRE(s_up >= 0.0);
  INFO("crossing at s = " << s_up << " m (z " << z_up << ") over s = " << s_down << " m (z " << z_down << ")");
  REQUIRE(z_up - z_down > 3.4);
  CHECK(std::fabs(s_up - g_arc[3]) < 0.05);
  CHECK(std::fabs(s_down - g_arc[9]) < 0.05);

  SUBCASE("localize at the crossing") {
    std::vector<crossing_probe> probes;
    for (int branch = 0; branch < 2; ++branch) {
      const double s_cross = branch == 0 ? s_up : s_down, s_other = branch == 0 ? s_down : s_up;
      for (double along : {-1.0, -0.3, 0.0, 0.3, 1.0})
        for (double left : {-0.5, 0.0, 0.5})
          for (double up : {-0.5, 0.0, 0.5}) {
            // Raised by `up` where the line climbs with unit tangent z-component tz, the point's
            // foot moves up * tz along the line.
            const polygon_point q = polygon_at(t, 0, s_cross + along);
            probes.push_back({0, v3(q.x + left * q.nx, q.y + left * q.ny, q.z + up), s_cross + along + up * q.tz,
                              s_other, up});
          }
    }
    // The chord effect of the sideways offsets on the arc length (arc_tolerance), at the
    // tightest turn of the sampled line near the crossings.
    const double r_min = std::min(polygon_turn_radius(t, 0, s_up, 8), polygon_turn_radius(t, 0, s_down, 8));
    check_crossing_probes(r, t, probes, arc_tolerance(len, n, r_min, 0.5));
  }
  SUBCASE("flown along the course line and weaving around it") {
    // Env 0 on the sampled course line, env 1 0.3 m sideways and up and down around it.
    auto left = [](int e, int i) { return e == 1 ? 0.3 * std::sin(0.37 * i) : 0.0; };
    auto up = [](int e, int i) { return e == 1 ? 0.3 * std::cos(0.23 * i) : 0.0; };
    const double ds = 0.25, s0 = 0.05;
    auto place = [&](int e, int i) {
      const polygon_point q = polygon_at(t, 0, s0 + i * ds);
      return v3(q.x + left(e, i) * q.nx, q.y + left(e, i) * q.ny, q.z + up(e, i));
    };
    // Raised by `up` where the line climbs, the agent's foot moves up * tz along it.
    auto arc = [&](int e, int i) { return s0 + i * ds + up(e, i) * polygon_at(t, 0, s0 + i * ds).tz; };
    const int steps = static_cast<int>(std::ceil((2.0 * len + 1.0) / ds));
    fly_and_check(r, t, steps, place, arc, left, {g_arc, g_arc}, arc_tolerance(len, n, polygon_turn_radius(t, 0, -1.0, 0), 0.3),
                  0.05);
    const tg::progress_snapshot end = r.progress();
    for (int e = 0; e < 2; ++e) CHECK(end.laps[static_cast<std::size_t>(e)] == 2);
  }
}

TEST_CASE_TEMPLATE_DEFINE("an over/under crossing is valid only with 3D clearance 2 half_width + clearance_margin",
                          Policy, over_under_clearance) {
  // Required: 2 * 0.3 + 0.1 = 0.7 m. The branches' nearest points are the crossing's (2 h apart:
  // away from it the plan-view separation grows faster than the heights converge).
  const std::vector<double> heights = {0.30, 0.34, 0.36, 0.40};  // separations 0.60, 0.68, 0.72, 0.80 m
  std::vector<std::vector<float3>> lines;
  for (double h : heights) lines.push_back(lifted_eight(eight_a, eight_z0, h).polyline(4096));
  rig<Policy> r(over_under_params(static_cast<int>(heights.size())), 10.0f, centreline(lines));
  const tg::track_snapshot t = r.tracks();
  for (std::size_t e = 0; e < heights.size(); ++e) {
    const bool clear = 2.0 * heights[e] >= 0.7;
    INFO("separation " << 2.0 * heights[e] << " m, status " << hex(t.status[e]));
    CHECK(has(t.status[e], tg::status::user_track));
    CHECK(has(t.status[e], tg::status::valid) == clear);
    CHECK(has(t.status[e], tg::status::fail_clearance) == !clear);
  }
}

}  // namespace progress_test

#pragma once
/// @file
/// localize, centreline_at and heading_error (localizer.hpp) against independent references:
/// the exact geometry of a counter-clockwise circle (curvature +1/R, heading s/R + pi/2, left
/// offset = R - distance), a clockwise circle (curvature -1/R) and a stadium, built through the
/// user-track path; on generated 3D tracks (the drone preset: elevation), a brute-force nearest
/// point of the sample polygon in double precision; angles wrapped in double. Every function runs
/// on the backend (map_on_backend: a host loop, or a CUDA kernel as a user would write it).
/// Templated over the backend policy; applied in localizer_test.cpp (host) and .cu (CUDA).

#include "progress_harness.hpp"

#include <track_gen/localizer.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace progress_test {

struct arc_query {
  int env;
  float s;
};
struct centreline_fn {
  TRACK_GEN_HD tg::centreline_point operator()(const tg::course_ref& v, const arc_query& q) const {
    return tg::centreline_at(v.track(q.env), q.s);
  }
};

struct heading_fn {
  TRACK_GEN_HD float operator()(const tg::course_ref&, const float2& yaws) const {
    return tg::heading_error(yaws.x, yaws.y);
  }
};

/// Circle of radius r around the origin, run clockwise from (r, 0): the counter-clockwise
/// circle mirrored across the x axis. The left normal points outwards, so a point at radius
/// r + d has lateral offset +d; curvature -1/r.
struct cw_circle {
  circle ccw;
  double length() const { return ccw.length(); }
  static float3 mirror(float3 p) { return v3(p.x, -p.y, p.z); }
  float3 at(double s, double left = 0.0, double z = 0.0) const { return mirror(ccw.at(s, -left, z)); }
  std::vector<float3> polyline(int points) const {
    std::vector<float3> p = ccw.polyline(points);
    for (float3& q : p) q = mirror(q);
    return p;
  }
  curve_point nearest(double x, double y) const {
    const curve_point c = ccw.nearest(x, -y);
    return {c.arc, -c.lateral, c.x, -c.y};
  }
};

/// The closed-form facts of the three user tracks of these tests at arc length s: env 0 the
/// counter-clockwise circle, env 1 the clockwise one, env 2 the stadium.
struct known_tracks {
  circle ccw{50.0};
  cw_circle cw{{50.0}};
  stadium st{75.0, 10.0};

  double length(int e) const { return e == 0 ? ccw.length() : e == 1 ? cw.length() : st.length(); }
  double min_radius(int e) const { return e == 2 ? st.r : ccw.r; }
  float3 at(int e, double s, double left, double z) const {
    return e == 0 ? ccw.at(s, left, z) : e == 1 ? cw.at(s, left, z) : st.at(s, left, z);
  }
  curve_point nearest(int e, float3 p) const {
    return e == 0 ? ccw.nearest(p.x, p.y) : e == 1 ? cw.nearest(p.x, p.y) : st.nearest(p.x, p.y);
  }
  /// Heading of the direction of travel at s [rad].
  double heading(int e, double s) const {
    if (e == 0) return wrap_angle(s / ccw.r + pi / 2);
    if (e == 1) return wrap_angle(-s / cw.ccw.r - pi / 2);
    double x, y, tx, ty;
    st.centre(s, x, y, tx, ty);
    return std::atan2(ty, tx);
  }
  /// Signed curvature at s, and whether s lies more than `margin` metres of arc from a change of
  /// curvature (the stadium's straight/turn junctions).
  double curvature(int e, double s, double margin, bool& clear) const {
    clear = true;
    if (e == 0) return 1.0 / ccw.r;
    if (e == 1) return -1.0 / cw.ccw.r;
    const double straight = 2.0 * st.a, turn = pi * st.r;
    const double u = wrap_arc(s, straight + turn);  // the stadium repeats every straight + turn
    clear = u > margin && std::fabs(u - straight) > margin && straight + turn - u > margin;
    return u < straight ? 0.0 : 1.0 / st.r;
  }
  std::vector<std::vector<float3>> polylines() const {
    return {ccw.polyline(2000), cw.polyline(2000), st.polyline(2000)};
  }
};

TEST_CASE_TEMPLATE_DEFINE("localize on circles (both windings) and a stadium: closed forms and brute force", Policy,
                          localizer_known_tracks) {
  const known_tracks kt;
  const tg::track_params params = user_track_params(3);
  rig<Policy> r(params, 10.0f, centreline(kt.polylines()));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;
  const double hw = params.half_width;  // 0.3 m on both sides
  const int window = 8;

  // Probes: random arc lengths, lateral offsets in [-0.45, 0.45] m (some off the road) and
  // heights in [-0.4, 0.4] m; each localized three times: with a hint near its segment (the
  // warm start of an agent that moved a little), with no window (cold), and with a hint half a
  // lap away (a teleport: the windowed search must fail and report it).
  lcg rng{777u};
  const int probes = scaled(300, 40);
  std::vector<localize_query> queries;
  std::vector<double> true_s, true_left;
  std::vector<brute_result> brute;
  for (int e = 0; e < 3; ++e) {
    for (int i = 0; i < probes; ++i) {
      const double s = rng.next() * kt.length(e);
      const double left = (rng.next() - 0.5) * 0.9;
      const double z = (rng.next() - 0.5) * 0.8;
      const float3 p = kt.at(e, s, left, z);
      const brute_result b = brute_nearest(t.position, t.sample_index(e, 0), n, p);
      const int near = ((b.segment + static_cast<int>(rng.next() * 7.0) - 3) % n + n) % n;
      queries.push_back({e, p, near, window});
      queries.push_back({e, p, 0, 0});
      queries.push_back({e, p, (b.segment + n / 2) % n, window});
      true_s.push_back(s);
      true_left.push_back(left);
      brute.push_back(b);
    }
  }
  const std::vector<tg::localization> got = map_on_backend(r, localize_fn{}, queries);

  for (int e = 0; e < 3; ++e) {
    const double length = t.length[static_cast<std::size_t>(e)];
    const double rmin = kt.min_radius(e);
    const double lateral_tol = sagitta(kt.length(e) / n, rmin) + 1e-3;
    const double arc_tol = arc_tolerance(kt.length(e), n, rmin, 0.45);
    for (int i = 0; i < probes; ++i) {
      const std::size_t u = static_cast<std::size_t>(e * probes + i);
      const localize_query& q = queries[3 * u];
      const brute_result& b = brute[u];
      const float3 p = q.p;
      for (int variant = 0; variant < 3; ++variant) {
        const tg::localization& l = got[3 * u + static_cast<std::size_t>(variant)];
        INFO("env " << e << " probe " << i << " variant " << variant << " (0 warm, 1 cold, 2 teleported) at s = "
                    << true_s[u] << ", left = " << true_left[u] << ", z = " << p.z << ": s " << l.s << " n " << l.n
                    << " vertical " << l.vertical << " curvature " << l.curvature << " heading " << l.heading
                    << " hint " << l.hint << " lost " << l.lost << "; brute segment " << b.segment << " t " << b.t);
        // Brute force (double) on the sample polygon: the foot is a nearest point (on the
        // concave side of a vertex two feet, |offset| * ds / R apart, are nearest within rounding:
        // either may be found), s is its arc length (k + t) L / N; the distance, the side and size
        // of the horizontal offset, the vertical offset.
        const double tie = b.distance * kt.length(e) / n / rmin;
        CHECK(std::fabs(dist3(p, l.point.x, l.point.y, l.point.z) - b.distance) < 1e-4);
        CHECK(dist3(l.point, b.x, b.y, b.z) < 1e-3 + tie);
        const polygon_point at_s = polygon_at(t, e, l.s);
        CHECK(dist3(l.point, at_s.x, at_s.y, at_s.z) < 1e-4);
        const double s_ref = wrap_arc((b.segment + b.t) * length / n, length);
        CHECK(arc_distance(l.s, s_ref, length) < 1e-3 + tie);
        CHECK(l.s >= 0.0f);
        CHECK(l.s < t.length[static_cast<std::size_t>(e)]);
        CHECK(std::fabs(l.distance - b.distance) < 1e-4);
        const double hx = p.x - b.x, hy = p.y - b.y;
        const float3 a0 = t.position[t.sample_index(e, b.segment)], a1 = t.position[t.sample_index(e, (b.segment + 1) % n)];
        const double side = (double(a1.x) - a0.x) * hy - (double(a1.y) - a0.y) * hx;  // > 0: left of the segment
        CHECK(std::fabs(std::fabs(l.n) - std::hypot(hx, hy)) < 2e-3);
        if (std::fabs(side) > 1e-3 * std::hypot(hx, hy)) CHECK((l.n > 0.0f) == (side > 0.0));
        CHECK(std::fabs(l.vertical - (p.z - b.z)) < 1e-4);
        CHECK((l.hint == b.segment || (l.hint + 1) % n == b.segment || (b.segment + 1) % n == l.hint));
        // Closed forms: the curve's own nearest point, lateral offset, heading and curvature.
        const curve_point cp = kt.nearest(e, p);
        CHECK(arc_distance(l.s, cp.arc, kt.length(e)) < arc_tol);
        CHECK(std::fabs(l.n - cp.lateral) < lateral_tol);
        CHECK(std::fabs(l.n - true_left[u]) < lateral_tol);
        CHECK(std::fabs(l.vertical - p.z) < 1e-6);  // flat tracks: the centreline is at z = 0
        CHECK(l.heading > -static_cast<float>(pi));
        CHECK(l.heading <= static_cast<float>(pi));
        // The interpolated tangent turns by about ds / R between samples: within that of the curve's.
        CHECK(std::fabs(wrap_angle(l.heading - kt.heading(e, cp.arc))) < 0.5 * kt.length(e) / n / rmin + 1e-3);
        bool clear = true;
        const double kappa = kt.curvature(e, cp.arc, 3.0 * kt.length(e) / n, clear);
        // The Menger curvature of a resampled polyline is within about 1 % of the curve's.
        if (clear) CHECK(std::fabs(l.curvature - kappa) < 1e-2 / rmin);
        if (e < 2) CHECK(l.curvature * (e == 0 ? 1.0f : -1.0f) > 0.0f);  // CCW: +1/R, CW: -1/R
        CHECK(l.half_width_left == doctest::Approx(hw));
        CHECK(l.half_width_right == doctest::Approx(hw));
        // The search: warm and on the road it stays local; cold it has no window to fail; half a
        // lap away it must fail; whatever the search, the same foot.
        // (The windowed search gives up farther than the half-width from the centreline, in 3D.)
        const bool on_road = b.distance < hw - 0.02;
        if (variant == 0 && on_road) CHECK_FALSE(l.lost);
        if (variant == 1) CHECK_FALSE(l.lost);
        if (variant == 2) CHECK(l.lost);
        const tg::localization& cold = got[3 * u + 1];
        CHECK(dist3(l.point, cold.point.x, cold.point.y, cold.point.z) < 1e-4);
      }
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("localize on generated 3D tracks against a brute-force projection in double", Policy,
                          localizer_generated_tracks) {
  const int num_envs = 4;
  tg::track_params params = tg::presets::drone_track(num_envs);
  params.seed = 21;
  rig<Policy> r(params, 0.6f);
  const tg::track_snapshot t = r.tracks();
  const int n = t.num_samples;
  const double hw = params.half_width;
  double z_range = 0.0;
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e << " status " << hex(t.status[static_cast<std::size_t>(e)]));
    REQUIRE(has(t.status[static_cast<std::size_t>(e)], tg::status::valid));
    for (int k = 0; k < n; ++k) z_range = std::max(z_range, std::fabs(double(t.position[t.sample_index(e, k)].z)));
  }
  REQUIRE(z_range > 0.4);  // the tracks climb: vertical offsets are measured from a moving height

  lcg rng{4242u};
  const int probes = scaled(300, 40);
  std::vector<localize_query> queries;
  std::vector<brute_result> brute;
  std::vector<double> lefts;
  for (int e = 0; e < num_envs; ++e) {
    const double length = t.length[static_cast<std::size_t>(e)];
    for (int i = 0; i < probes; ++i) {
      const polygon_point c = polygon_at(t, e, rng.next() * length);
      const double left = (rng.next() - 0.5) * 1.8 * hw;  // on the road: the nearest point is the local one
      const double z = (rng.next() - 0.5) * 0.6;
      const float3 p = v3(c.x + left * c.nx, c.y + left * c.ny, c.z + z);
      const brute_result b = brute_nearest(t.position, t.sample_index(e, 0), n, p);
      queries.push_back({e, p, (b.segment + 2) % n, 8});
      brute.push_back(b);
      lefts.push_back(left);
    }
  }
  const std::vector<tg::localization> got = map_on_backend(r, localize_fn{}, queries);
  for (std::size_t u = 0; u < queries.size(); ++u) {
    const int e = queries[u].env;
    const tg::localization& l = got[u];
    const brute_result& b = brute[u];
    const float3 p = queries[u].p;
    const double length = t.length[static_cast<std::size_t>(e)];
    INFO("env " << e << " probe " << u << ": s " << l.s << " n " << l.n << " vertical " << l.vertical << " hint "
                << l.hint << "; brute segment " << b.segment << " t " << b.t << " distance " << b.distance);
    // The foot is a nearest point (within rounding: on the concave side of a vertex two feet
    // |offset| * (turn between segments) apart may tie), and s is its arc length.
    const std::size_t k0 = t.sample_index(e, b.segment), k1 = t.sample_index(e, (b.segment + 1) % n);
    const double tie = b.distance * (length / n) * std::max(std::fabs(t.curvature[k0]), std::fabs(t.curvature[k1]));
    CHECK(std::fabs(dist3(p, l.point.x, l.point.y, l.point.z) - b.distance) < 1e-5);
    CHECK(dist3(l.point, b.x, b.y, b.z) < 1e-4 + tie);
    const double s_ref = wrap_arc((b.segment + b.t) * length / n, length);
    CHECK(arc_distance(l.s, s_ref, length) < 1e-4 + tie);
    const polygon_point f = polygon_at(t, e, l.s);
    CHECK(dist3(l.point, f.x, f.y, f.z) < 1e-4);
    CHECK(std::fabs(l.vertical - (p.z - f.z)) < 1e-4);
    if (b.distance < hw - 0.02) CHECK_FALSE(l.lost);  // on the road, near the hint: the windowed search does
    // At the foot (double): the samples' curvature, half-widths and tangents interpolated; n
    // along the interpolated left normal; the heading of that tangent.
    const std::size_t i0 = t.sample_index(e, f.segment), i1 = t.sample_index(e, (f.segment + 1) % n);
    auto mix = [&](float a, float c) { return a + f.f * (double(c) - a); };
    CHECK(std::fabs(l.curvature - mix(t.curvature[i0], t.curvature[i1])) < 1e-5 * (1.0 + std::fabs(t.curvature[i0])));
    CHECK(std::fabs(l.half_width_left - mix(t.half_widths[i0].x, t.half_widths[i1].x)) < 1e-6);
    CHECK(std::fabs(l.half_width_right - mix(t.half_widths[i0].y, t.half_widths[i1].y)) < 1e-6);
    const double n_ref = (p.x - f.x) * f.nx + (p.y - f.y) * f.ny + (p.z - f.z) * f.nz;
    CHECK(std::fabs(l.n - n_ref) < 1e-4);
    CHECK(std::fabs(l.n - lefts[u]) < 0.02 + 0.05 * std::fabs(lefts[u]));  // the offset the probe was made with
    CHECK(std::fabs(wrap_angle(l.heading - std::atan2(f.ty, f.tx))) < 1e-4);
  }
}

TEST_CASE_TEMPLATE_DEFINE("centreline_at: interpolation, wrapping, heading, against double and the circle", Policy,
                          localizer_centreline_at) {
  const known_tracks kt;
  rig<Policy> r(user_track_params(3), 10.0f, centreline(kt.polylines()));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;
  std::vector<arc_query> queries;
  std::vector<double> asked;
  lcg rng{99u};
  for (int e = 0; e < 3; ++e) {
    const float length = t.length[static_cast<std::size_t>(e)];
    const float spacing = length / static_cast<float>(n);
    // Random arc lengths, sample arc lengths exactly, both ends, and beyond them either way.
    std::vector<float> s = {0.0f, -0.0f, length, -1.0f, length + 1.0f, 3.0f * length + 2.5f, -2.0f * length - 0.25f,
                            t.arc_length[t.sample_index(e, 7)], t.arc_length[t.sample_index(e, n - 1)],
                            length - 1e-4f, spacing * 0.5f};
    for (int i = 0; i < scaled(200, 20); ++i) s.push_back(static_cast<float>(rng.next() * length));
    for (float v : s) {
      queries.push_back({e, v});
      asked.push_back(v);
    }
  }
  queries.push_back({0, NAN});  // non-finite: taken as 0
  asked.push_back(0.0);
  const std::vector<tg::centreline_point> got = map_on_backend(r, centreline_fn{}, queries);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const int e = queries[i].env;
    const tg::centreline_point& c = got[i];
    const double length = t.length[static_cast<std::size_t>(e)];
    const double s = wrap_arc(asked[i], length);
    INFO("env " << e << " s asked " << asked[i] << " -> s " << c.s << " segment " << c.segment << " t " << c.t);
    CHECK(c.s >= 0.0f);
    CHECK(c.s < t.length[static_cast<std::size_t>(e)]);
    CHECK(arc_distance(c.s, s, length) < 2e-4 * (1.0 + std::fabs(asked[i]) / length));
    const polygon_point q = polygon_at(t, e, c.s);  // the polygon at the arc length reported
    CHECK(dist3(c.position, q.x, q.y, q.z) < 1e-4);
    CHECK(std::fabs(c.normal.x - q.nx) + std::fabs(c.normal.y - q.ny) < 1e-5);
    CHECK(std::fabs(c.tangent.x - q.tx) + std::fabs(c.tangent.y - q.ty) < 1e-5);
    CHECK(std::fabs(wrap_angle(c.yaw - std::atan2(q.ty, q.tx))) < 1e-5);
    CHECK(c.yaw > -static_cast<float>(pi));
    CHECK(c.yaw <= static_cast<float>(pi));
    CHECK(c.t >= 0.0f);
    CHECK(c.t <= 1.0f);
    const int k = static_cast<int>(std::floor(c.s * n / length));
    CHECK((c.segment == k || c.segment == k - 1 || c.segment == k + 1));
    // The closed form: the curve at the same fraction of its length, and its heading.
    const double s_curve = s * kt.length(e) / length;
    const float3 want = kt.at(e, s_curve, 0.0, 0.0);
    CHECK(dist3(c.position, want.x, want.y, want.z) < sagitta(kt.length(e) / n, kt.min_radius(e)) + 2e-3);
    CHECK(std::fabs(wrap_angle(c.yaw - kt.heading(e, s_curve))) < 0.5 * kt.length(e) / n / kt.min_radius(e) + 1e-3);
  }
  // Sample arc lengths give the sample itself.
  const tg::centreline_point on_sample = got[7];
  CHECK(on_sample.segment == 7);
  CHECK(on_sample.t == 0.0f);
  CHECK(dist3(on_sample.position, t.position[t.sample_index(0, 7)].x, t.position[t.sample_index(0, 7)].y, 0.0) == 0.0);
  CHECK(got.back().s == 0.0f);
  CHECK(got.back().segment == 0);
}

TEST_CASE_TEMPLATE_DEFINE("heading_error wraps into (-pi, pi], positive to the left", Policy, localizer_heading_error) {
  rig<Policy> r(user_track_params(1), 10.0f, centreline({circle{50.0}.polyline(400)}));
  const double p = pi;
  struct pair {
    double agent, track, want;
  };
  // Hand-derived: across the +-pi seam either way, exactly opposite (+pi, never -pi), whole turns.
  const std::vector<pair> table = {
      {0.1, 0.0, 0.1},           {0.0, 0.1, -0.1},         {p - 0.1, -p + 0.1, -0.2},   {-p + 0.1, p - 0.1, 0.2},
      {0.0, p, p},               {p, 0.0, p},              {p / 2, -p / 2, p},          {-p / 2, p / 2, p},
      {1.0, 1.0 + 4.0 * p, 0.0}, {7.0, 0.5, 6.5 - 2 * p},  {-7.0, 0.5, -7.5 + 2 * p},   {100.0, -100.0, wrap_angle(200.0)},
      {3.0, -3.0, 6.0 - 2 * p},  {-3.0, 3.0, -6.0 + 2 * p}};
  std::vector<float2> in;
  for (const pair& q : table) in.push_back(tg::detail::f2(static_cast<float>(q.agent), static_cast<float>(q.track)));
  lcg rng{5u};
  for (int i = 0; i < scaled(2000, 200); ++i)
    in.push_back(tg::detail::f2(static_cast<float>((rng.next() - 0.5) * 40.0), static_cast<float>((rng.next() - 0.5) * 8.0)));
  in.push_back(tg::detail::f2(NAN, 0.0f));
  const std::vector<float> got = map_on_backend(r, heading_fn{}, in);
  for (std::size_t i = 0; i < in.size() - 1; ++i) {
    const double want = i < table.size() ? table[i].want : wrap_angle(double(in[i].x) - double(in[i].y));
    INFO("heading_error(" << in[i].x << ", " << in[i].y << ") = " << got[i] << ", want " << want);
    CHECK(got[i] > -static_cast<float>(pi));
    CHECK(got[i] <= static_cast<float>(pi));
    // Float inputs and one rounding of their difference; near +-pi the two ends are one angle.
    const double err = std::fabs(wrap_angle(got[i] - want));
    CHECK(err < 4e-6 * (1.0 + std::fabs(in[i].x) + std::fabs(in[i].y)));
    if (std::fabs(std::fabs(want) - pi) > 1e-3) CHECK(std::fabs(got[i] - want) < 1e-5 * (1.0 + std::fabs(in[i].x)));
  }
  CHECK(got[4] == static_cast<float>(pi));  // exactly opposite: +pi
  CHECK(got[5] == static_cast<float>(pi));
  CHECK(std::isnan(got.back()));
}

}  // namespace progress_test

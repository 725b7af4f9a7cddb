#pragma once
/// @file
/// Projection on the centreline: signed lateral offset and off-track, the local (windowed)
/// nearest-point search against a full search and a brute-force one, and the full-search
/// fallback after a jump. Test bodies templated over the policy; applied in
/// projection_test.cpp and projection_test.cu.

#include "progress_harness.hpp"

#include <array>

namespace progress_test {

TEST_CASE_TEMPLATE_DEFINE("lateral offset: left positive, right negative, off-track beyond the half-width", Policy,
                          projection_lateral_and_off_track) {
  // Envs 0-4 on a circle (r = 50 m), envs 5-9 on a stadium (straights of 150 m, turns of
  // r = 10 m); on each, the agent drives forwards at these offsets to the left of the centreline
  // (half-width 0.3 m): +0.2 and +0.5 to the left, -0.2 and -0.5 (right), 0.
  const std::array<double, 5> offsets = {0.2, 0.5, -0.2, -0.5, 0.0};
  const circle c{50.0};
  const stadium st{75.0, 10.0};
  const int n = 10;
  std::vector<std::vector<float3>> tracks;
  for (int e = 0; e < n; ++e) tracks.push_back(e < 5 ? c.polyline(2000) : st.polyline(2000));
  tg::track_params params = user_track_params(n);
  rig<Policy> r(params, 10.0f, centreline(tracks));
  require_valid_user_tracks(r.tracks());

  const double length[2] = {c.length(), st.length()};
  // Tolerances from the geometry: the sampled polygon departs from the curve by its sagitta;
  // arc lengths carry the float32 error of L (~3e-5 relative) plus 1 mm.
  const double lateral_tol[2] = {sagitta(c.length() / 512, c.r) + 1e-3, sagitta(st.length() / 512, st.r) + 1e-3};
  const double arc_tol[2] = {arc_tolerance(c.length(), 512, c.r, 0.5), arc_tolerance(st.length(), 512, st.r, 0.5)};
  // 3.1 m per step: less than the projection window (8 samples, 4.9 m on the circle), so the
  // local search must do; 125 steps drive more than a lap of either track.
  const int steps = 125;
  for (int i = 0; i < steps; ++i) {
    const double s = 3.3 + 3.1 * i;
    for (int e = 0; e < n; ++e) {
      const double left = offsets[static_cast<std::size_t>(e % 5)];
      r.positions[static_cast<std::size_t>(e)] = e < 5 ? c.at(s, left) : st.at(s, left);
    }
    r.step();
    const tg::progress_snapshot snap = r.progress();
    for (int e = 0; e < n; ++e) {
      const int k = e < 5 ? 0 : 1;
      const double left = offsets[static_cast<std::size_t>(e % 5)];
      const progress_entry p = entry(snap, e);
      INFO("step " << i << " env " << e << std::string(k == 0 ? " (circle)" : " (stadium)") << " s = " << s
                   << " left = " << left << " " << describe(p));
      CHECK(std::fabs(p.lateral - left) < lateral_tol[k]);
      if (left > 0.0) CHECK(p.lateral > 0.0f);
      if (left < 0.0) CHECK(p.lateral < 0.0f);
      CHECK(has(p.flags, tg::progress_flags::off_track) == (std::fabs(left) > 0.3));
      CHECK(arc_distance(p.lap_progress, s, length[k]) < arc_tol[k]);
      CHECK_FALSE(has(p.flags, tg::progress_flags::wrong_way));
      // On the track, a move shorter than the window needs no full search. (Off the track, a
      // full search may be needed to rule out another part of the track being nearer.)
      if (std::fabs(left) < 0.3) CHECK_FALSE(has(p.flags, tg::progress_flags::full_search));
    }
  }
}

/// Runs the windowed-projection comparison for env e of `r`, whose centreline is `curve`.
template <class Policy, class Curve>
void check_projections(rig<Policy>& r, const tg::track_snapshot& t, int e, const Curve& curve, double min_radius,
                       std::uint64_t seed) {
  const int n = t.num_samples;
  const std::size_t first = t.sample_index(e, 0);
  const double length = curve.length();
  const double lateral_tol = sagitta(length / n, min_radius) + 1e-3;
  const double arc_tol = arc_tolerance(length, n, min_radius, 0.6);
  const int window = 8;
  const int probes = scaled(400, 40);

  lcg rng{seed};
  std::vector<float3> points;
  std::vector<int> hints, expect_full;  // expect_full: 1 yes, 0 no, -1 either
  std::vector<brute_result> brute;
  for (int i = 0; i < probes; ++i) {
    const double s = rng.next() * length;
    const double left = (rng.next() - 0.5) * 1.2;  // [-0.6, 0.6] m
    const double z = (rng.next() - 0.5);           // [-0.5, 0.5] m
    const float3 p = curve.at(s, left, z);
    const brute_result b = brute_nearest(t.position, first, n, p);
    // Three hints in four are near the true segment (offsets -4..4, inside the window); the
    // others are far, as after a jump of the agent: just outside the window (the true segment
    // 1 or 2 segments beyond its edge), half a lap away
    // along the track, or at the point mirrored across the x axis (straight across the
    // infield of the stadium).
    const int kind = i % 8;
    int hint;
    if (kind < 6) {
      hint = b.segment + static_cast<int>(rng.next() * 9.0) - 4;
    } else if (kind == 6) {
      hint = b.segment + (i % 16 < 8 ? 1 : -1) * (window + 1 + (i % 32 < 16 ? 0 : 1));
    } else if (i % 16 < 8) {
      hint = b.segment + n / 2;
    } else {
      hint = brute_nearest(t.position, first, n, v3(p.x, -p.y, p.z)).segment;
    }
    hint = ((hint % n) + n) % n;
    // Outside the window, the true segment can only be found by the full search. Inside it,
    // for a point on the track (closer than the half-width, 0.3 m), no full search is needed;
    // farther off, a full search may be needed to rule out another part of the track.
    const int off = std::min((hint - b.segment + n) % n, (b.segment - hint + n) % n);
    points.push_back(p);
    hints.push_back(hint);
    expect_full.push_back(off >= window + 1 ? 1 : (off <= 4 && b.distance < 0.3) ? 0 : -1);
    brute.push_back(b);
  }
  const std::vector<tg::projection> local = r.project(e, points, hints, window);
  const std::vector<tg::projection> full = r.project(e, points, std::vector<int>(points.size(), 0), 0);
  for (int i = 0; i < probes; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const tg::projection& lo = local[u];
    const tg::projection& fu = full[u];
    const brute_result& b = brute[u];
    const curve_point cp = curve.nearest(points[u].x, points[u].y);
    INFO("env " << e << " probe " << i << " at (" << points[u].x << ", " << points[u].y << ", " << points[u].z
                << ") hint " << hints[u] << " brute segment " << b.segment << " t " << b.t << "; local segment "
                << lo.segment << " t " << lo.t << " full " << lo.full_search << "; full-search segment "
                << fu.segment << " t " << fu.t);
    CHECK(fu.full_search);
    if (expect_full[u] >= 0) CHECK(lo.full_search == (expect_full[u] == 1));
    // The windowed search finds the same nearest point as the full one (a sample shared by two
    // segments may be reported as t = 1 of one or t = 0 of the other).
    CHECK(dist3(lo.point, fu.point.x, fu.point.y, fu.point.z) < 1e-4);
    CHECK(lo.distance == doctest::Approx(fu.distance).epsilon(1e-5));
    CHECK(lo.lateral == doctest::Approx(fu.lateral).epsilon(1e-4));
    CHECK(arc_distance(lo.arc_length, fu.arc_length, length) < 1e-3);
    // ... which is the brute-force nearest point of the sampled polygon.
    CHECK(dist3(lo.point, b.x, b.y, b.z) < 1e-3);
    CHECK(std::fabs(lo.distance - b.distance) < 1e-4);
    const bool same_segment = lo.segment == b.segment || (lo.segment + 1) % n == b.segment ||
                              (b.segment + 1) % n == lo.segment;
    CHECK(same_segment);
    // ... and agrees with the curve's exact geometry.
    CHECK(std::fabs(lo.lateral - cp.lateral) < lateral_tol);
    CHECK(arc_distance(lo.arc_length, cp.arc, length) < arc_tol);
    CHECK(lo.arc_length >= 0.0f);
    CHECK(lo.arc_length < t.length[static_cast<std::size_t>(e)]);
  }
}

TEST_CASE_TEMPLATE_DEFINE("projection: a local window agrees with the full search and a brute-force search", Policy,
                          projection_window_vs_full) {
  const circle c{50.0};
  const stadium st{75.0, 10.0};
  // N = 302 as well: the O(N) search loads 4 segments at a time (track_ref::scan_segments), and
  // 302 leaves a remainder for one thread's scan (302 mod 4) and a warp's (302 mod 128).
  for (const int n : {512, 302}) {
    CAPTURE(n);
    rig<Policy> r(user_track_params(2, n), 10.0f, centreline({c.polyline(2000), st.polyline(2000)}));
    const tg::track_snapshot t = r.tracks();
    require_valid_user_tracks(t);
    check_projections(r, t, 0, c, c.r, 12345u);
    check_projections(r, t, 1, st, st.r, 67890u);
  }
}

TEST_CASE_TEMPLATE_DEFINE("a jump across the track triggers the full search through course::step", Policy,
                          projection_jump_in_step) {
  // Env 0 on the circle jumps to the opposite side (half a lap along the track, 100 m through
  // the infield); env 1 on the stadium jumps from the lower straight straight across the
  // infield to the upper straight (20 m, but 181 m along the track); env 2 on the stadium
  // drives normally as a control. Expected nearest points: the curves' exact geometry and the
  // brute-force nearest point of the sampled polygon.
  const circle c{50.0};
  const stadium st{75.0, 10.0};
  rig<Policy> r(user_track_params(3), 10.0f, centreline({c.polyline(2000), st.polyline(2000), st.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;

  // Arc positions on the stadium: lower straight runs s in [0, 150] along +x from x = -75;
  // the point straight across at x is on the upper straight at s = 150 + 10 pi + (75 - x).
  const double s_low = 60.0;  // x = -15
  const double s_up = 2.0 * st.a + pi * st.r + (st.a - (-15.0));
  struct move {
    double s0, s1, s2;  // step 0 (init), step 1 (normal), step 2 (the jump or a normal step)
    double left;
  };
  const move moves[3] = {{20.0, 21.0, 21.0 + c.length() / 2.0, 0.1},
                         {s_low - 1.0, s_low, s_up, -0.1},
                         {s_low - 1.0, s_low, s_low + 1.0, 0.1}};
  const bool jumps[3] = {true, true, false};
  for (int step = 0; step < 4; ++step) {
    for (int e = 0; e < 3; ++e) {
      const move& m = moves[e];
      const double s = step == 0 ? m.s0 : step == 1 ? m.s1 : step == 2 ? m.s2 : m.s2 + 1.0;
      r.positions[static_cast<std::size_t>(e)] = e == 0 ? c.at(s, m.left) : st.at(s, m.left);
    }
    r.step();
    const tg::progress_snapshot snap = r.progress();
    for (int e = 0; e < 3; ++e) {
      const progress_entry p = entry(snap, e);
      const float3 pos = r.positions[static_cast<std::size_t>(e)];
      const double length = e == 0 ? c.length() : st.length();
      const curve_point cp = e == 0 ? c.nearest(pos.x, pos.y) : st.nearest(pos.x, pos.y);
      const brute_result b = brute_nearest(t.position, t.sample_index(e, 0), n, pos);
      INFO("step " << step << " env " << e << " " << describe(p) << " brute segment " << b.segment);
      // The full search happens on the jump only (step 0 has no last position: not an event).
      CHECK(has(p.flags, tg::progress_flags::full_search) == (step == 2 && jumps[e]));
      CHECK(arc_distance(p.lap_progress, cp.arc, length) < arc_tolerance(length, n, e == 0 ? c.r : st.r, 0.1));
      CHECK(std::fabs(p.lateral - moves[e].left) < 1e-2);
      CHECK((p.hint == b.segment || (p.hint + 1) % n == b.segment || (b.segment + 1) % n == p.hint));
      CHECK_FALSE(has(p.flags, tg::progress_flags::off_track));
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("the first step after a reset finds what one thread's O(N) scan finds, ties included",
                          Policy, projection_reset_step_ties) {
  // Every env's first step is the O(N) search (no last position). course.step shares it among
  // the lanes of a warp on the CUDA backend; track_ref::project with window 0 (one thread's
  // scan, on the same backend) is the reference. Agents sit exactly on samples (distance 0 to
  // the two segments that share the sample: a tie broken by segment order), on segment
  // midpoints and across the infield; 45 envs, so the kernel's second warp is part-empty.
  const circle c{50.0};
  const stadium st{75.0, 10.0};
  const int num_envs = 45;
  std::vector<std::vector<float3>> lines;
  for (int e = 0; e < num_envs; ++e) lines.push_back(e % 2 == 0 ? c.polyline(2000) : st.polyline(2000));
  // N = 302 as well: on the CUDA backend the warp's scans (stride 32) leave a remainder after
  // their batches of 4 segments (302 mod 128), compared here with one thread's scan.
  for (const int samples : {512, 302}) {
    CAPTURE(samples);
    rig<Policy> r(user_track_params(num_envs, samples), 10.0f, centreline(lines));
    const tg::track_snapshot t = r.tracks();
    require_valid_user_tracks(t);
    const int n = t.num_samples;
    for (int e = 0; e < num_envs; ++e) {
      const std::size_t k = t.sample_index(e, (e * 37) % n), k1 = t.sample_index(e, (e * 37 + 1) % n);
      const float3 a = t.position[k], b = t.position[k1];
      switch (e % 3) {
        case 0: r.positions[static_cast<std::size_t>(e)] = a; break;  // on a sample
        case 1: r.positions[static_cast<std::size_t>(e)] = v3(0.5 * (a.x + b.x), 0.5 * (a.y + b.y), 0.5 * (a.z + b.z)); break;
        default: r.positions[static_cast<std::size_t>(e)] = v3(0.3 * a.x, 0.3 * a.y, a.z); break;  // the infield
      }
    }
    r.step();
    const tg::progress_snapshot snap = r.progress();
    int ties = 0;
    for (int e = 0; e < num_envs; ++e) {
      const float3 p = r.positions[static_cast<std::size_t>(e)];
      const tg::projection want = r.project(e, {p}, {0}, 0)[0];
      const progress_entry got = entry(snap, e);
      INFO("env " << e << " " << describe(got) << "; one-thread scan: segment " << want.segment << ", arc "
                  << want.arc_length << ", lateral " << want.lateral);
      CHECK(got.hint == want.segment);
      CHECK(same_bits(got.lap_progress, want.arc_length));
      CHECK(same_bits(got.lateral, want.lateral));
      CHECK_FALSE(has(got.flags, tg::progress_flags::full_search));  // no last position: not an event
      // An agent on sample k > 0 is at distance 0 from segment k (t = 0, exactly). The scan
      // reporting segment k - 1 at distance 0 means segment k - 1 reached 0 as well: a tie, kept
      // for the earlier segment.
      const int k = (e * 37) % n;
      ties += e % 3 == 0 && k > 0 && want.segment == k - 1 && want.distance == 0.0f;
    }
    CHECK(ties > 0);  // the tie rule was exercised
  }
}

}  // namespace progress_test

#pragma once
/// @file
/// Random tracks against the independent double-precision checker (reference_checker.hpp):
/// over 10,000 tracks (several batches and seeds, the flat and the 3D preset), every track has
/// the documented geometry and every track marked valid meets the acceptance thresholds.
/// Templated over the backend policy; instantiated in random_geometry_test.cpp (host) and
/// random_geometry_test.cu (CUDA).

#include "backend_support.hpp"
#include "reference_checker.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <string>
#include <vector>

namespace tg_test {

/// One batch of the geometry sweep.
struct geometry_batch {
  std::string name;
  track_gen::track_params params;
  float spacing;
};

/// The batches: >= 10,000 tracks at full scale (10,240), ~1/50 of that at the small scale.
inline std::vector<geometry_batch> geometry_batches() {
  namespace tg = track_gen;
  std::vector<geometry_batch> b;
  {
    auto p = tg::presets::track(scaled(4096, 50, 16));
    p.seed = 1;
    b.push_back({"track preset, seed 1, spacing 0.6 m", p, 0.6f});
  }
  {
    // Coarser samples (ds up to 0.47 m) with a wider turn radius (0.8 m), so that a sample
    // interval still turns by at most ~0.6 rad, where the checker's arc estimate is accurate;
    // about 1% of these envs end on the fallback ellipse. Few, long gates.
    auto p = tg::presets::track(scaled(4096, 50, 16));
    p.seed = 2;
    p.num_samples = 128;
    p.validate.turn_radius_min = 0.8f;
    b.push_back({"track preset, seed 2, 128 samples, turn radius 0.8 m, spacing 2.5 m", p, 2.5f});
  }
  {
    auto p = tg::presets::drone_track(scaled(2048, 50, 16));
    p.seed = 3;
    p.env_offset = 100000;
    b.push_back({"drone preset (3D), seed 3, env_offset 100000, spacing 1.0 m", p, 1.0f});
  }
  return b;
}

/// Checks every env of a snapshot; returns the number of envs with a problem and prints the
/// first few problems. Counts valid, fallback envs.
struct sweep_result {
  int bad = 0, valid = 0, fallback = 0, tracks = 0;
};

inline sweep_result check_snapshot(const track_gen::track_snapshot& s, const track_gen::track_params& p, float spacing,
                                   int max_gates, bool expect_random) {
  namespace tg = track_gen;
  const track_limits lim = track_limits::from(p, spacing, max_gates);
  const check_tolerances tol;
  sweep_result r;
  for (int e = 0; e < s.num_envs; ++e) {
    const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
    const track_measure m = measure(s, e, lim, 1 + tol.threshold);
    problem_list pl(e);
    check_geometry(s, e, lim, m, tol, pl);
    const bool valid = (st & tg::status::valid) != 0;
    const bool fallback = (st & tg::status::fallback) != 0;
    if (valid) check_valid_track(lim, m, tol, pl);
    const int attempts = tg::status::attempts(st);
    if (attempts < 1 || attempts > p.validate.max_attempts) pl.add("attempts ", attempts, " outside [1, max_attempts]");
    if (expect_random) {
      if ((st & tg::status::user_track) != 0) pl.add("random track marked user_track");
      // Without fallback a random track was accepted by an attempt: it must be valid.
      if (!fallback && !valid) pl.add("neither valid nor fallback (status ", st, ")");
      if (fallback && attempts != p.validate.max_attempts) pl.add("fallback after ", attempts, " attempts");
    }
    if (s.episode[static_cast<std::size_t>(e)] != 0u) pl.add("episode ", s.episode[static_cast<std::size_t>(e)], " instead of 0");
    r.valid += valid;
    r.fallback += fallback;
    ++r.tracks;
    if (!pl.empty()) {
      if (r.bad < 8)
        for (const std::string& line : pl.lines()) MESSAGE(line);
      ++r.bad;
    }
  }
  return r;
}

TEST_CASE_TEMPLATE_DEFINE("random tracks meet the geometry contract (independent double-precision checker)", Policy,
                          random_geometry) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  int total = 0;
  for (const geometry_batch& batch : geometry_batches()) {
    CAPTURE(batch.name);
    tg::course<tg::presets::track_pipeline, Policy> c(batch.params, batch.spacing, stream.get());
    // G_max = ceil(L_max / spacing), from the documented formula.
    CHECK(c.max_gates() == static_cast<int>(std::ceil(static_cast<double>(batch.params.validate.length_max) / batch.spacing)));
    const tg::track_snapshot s = c.copy_tracks(stream.get());
    REQUIRE(s.num_envs == batch.params.num_envs);
    const sweep_result r = check_snapshot(s, batch.params, batch.spacing, c.max_gates(), true);
    MESSAGE((B::name() + ": " + batch.name + ": " + std::to_string(r.tracks) + " tracks, " +
             std::to_string(r.valid) + " valid, " + std::to_string(r.fallback) + " fallbacks"));
    CHECK(r.bad == 0);
    // The fallback ellipse is built to pass validation with these parameters: every track is valid.
    CHECK(r.valid == r.tracks);
    total += r.tracks;
  }
  if (!small_scale()) CHECK(total >= 10000);
}

TEST_CASE_TEMPLATE_DEFINE("the independent checker rejects corrupted tracks", Policy, checker_self_test) {
  // The checker must be able to fail: corrupt one valid track in several ways, one at a time.
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  auto p = tg::presets::track(8);
  p.seed = 5;
  const float spacing = 0.6f;
  tg::course<tg::presets::track_pipeline, Policy> c(p, spacing, stream.get());
  const tg::track_snapshot clean = c.copy_tracks(stream.get());
  const track_limits lim = track_limits::from(p, spacing, c.max_gates());
  const check_tolerances tol;
  const int e = 3;
  auto problems = [&](const tg::track_snapshot& s, const track_limits& l) {
    const track_measure m = measure(s, e, l, 1 + tol.threshold);
    problem_list pl(e);
    check_geometry(s, e, l, m, tol, pl);
    check_valid_track(l, m, tol, pl);
    return pl.lines();
  };
  // True when one of the lines mentions `what`.
  auto mentions = [](const std::vector<std::string>& lines, const char* what) {
    for (const std::string& line : lines)
      if (line.find(what) != std::string::npos) return true;
    return false;
  };
  REQUIRE(problems(clean, lim).empty());
  const float ds = clean.length[e] / clean.num_samples;
  {
    tg::track_snapshot s = clean;  // a sample moved 30% of a spacing along the track
    float3& q = s.position[s.sample_index(e, 10)];
    const float3 t = s.tangent[s.sample_index(e, 10)];
    q.x += 0.3f * ds * t.x;
    q.y += 0.3f * ds * t.y;
    CHECK(mentions(problems(s, lim), "spacing"));
  }
  {
    tg::track_snapshot s = clean;  // L 1% too long
    s.length[e] *= 1.01f;
    CHECK(mentions(problems(s, lim), "closed polyline"));
  }
  {
    tg::track_snapshot s = clean;  // one gate too many
    s.num_gates[e] += 1;
    CHECK(mentions(problems(s, lim), "num_gates"));
  }
  {
    tg::track_snapshot s = clean;  // a gate 5 cm off the centreline
    s.gate_centre[s.gate_index(e, 2)].x += 0.05f;
    CHECK(mentions(problems(s, lim), "off the centreline"));
  }
  {
    tg::track_snapshot s = clean;  // a gate normal turned by 90 degrees
    float3& g = s.gate_normal[s.gate_index(e, 4)];
    g = float3{-g.y, g.x, g.z};
    CHECK(mentions(problems(s, lim), "from the local chord"));
  }
  {
    tg::track_snapshot s = clean;  // a stored curvature 10% off
    s.curvature[s.sample_index(e, 7)] = 1.1f * s.curvature[s.sample_index(e, 7)] + 0.01f;
    CHECK(mentions(problems(s, lim), "stored curvature"));
  }
  {
    // The same track judged against stricter thresholds, one at a time.
    const track_measure m = measure(clean, e, lim);
    track_limits l = lim;
    l.turn_radius_min = 1.01 / m.max_curvature;
    CHECK(mentions(problems(clean, l), "exceeds 1 / turn_radius_min"));
    l = lim;
    l.length_max = m.length * 0.99;
    CHECK(mentions(problems(clean, l), "is outside"));
    // Clearance: with a negligible turn radius the window is pi c / 2; raise c until some pair
    // of samples beyond the window is closer than c (before c reaches L / pi: two samples half
    // a lap apart are at most about L / pi apart, and equally only on a circle).
    bool found = false;
    for (double c = lim.clearance(); c < m.length / pi_d && !found; c += 0.05) {
      l = lim;
      l.turn_radius_min = 1e-3;
      l.clearance_margin = c - 2 * l.half_width;
      found = measure(clean, e, l, 1 + tol.threshold).min_far_distance < c * (1 - 2 * tol.threshold);
    }
    REQUIRE(found);
    CHECK(mentions(problems(clean, l), "apart in space"));
  }
}

}  // namespace tg_test

#pragma once
/// @file
/// Impossible parameters: a minimum turn radius (100 m) that no track of length <= 60 m can
/// have (a closed planar curve with curvature <= 1/R is at least 2 pi R long, by Fenchel's
/// theorem: total curvature >= 2 pi). Generation must still return, with every env on the
/// fallback after exactly max_attempts attempts, flagged not valid; and envs of such a variant
/// must not disturb the other envs of their batch, bit for bit. Templated over the backend;
/// instantiated in impossible_params_test.cpp (host) and .cu (CUDA).

#include "backend_support.hpp"
#include "reference_checker.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace tg_test {

/// The `track` preset with a 100 m minimum turn radius (impossible under length_max = 60 m).
/// 8 spline samples per segment and no polygon separation: shapes do not matter when every
/// candidate fails the curvature test, and this keeps the host backend's runs to seconds.
inline track_gen::track_params impossible_params(int num_envs, int max_attempts) {
  track_gen::track_params p = track_gen::presets::track(num_envs);
  p.validate.turn_radius_min = 100.0f;
  p.validate.max_attempts = max_attempts;
  p.spline.samples_per_segment = 8;
  p.polygon_separation.max_iterations = 0;
  return p;
}

TEST_CASE_TEMPLATE_DEFINE("impossible parameters: every env falls back after max_attempts, flagged not valid", Policy,
                          impossible_params_all) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  // 100,000 envs. 64 samples and 4 attempts (and impossible_params' cheap shapes) keep the
  // host backend's run to a few seconds; the preset's shape stages would take ~30 s on a core.
  const int envs = scaled(100000, 100);
  tg::track_params p = impossible_params(envs, 4);
  p.num_samples = 64;
  p.seed = 99;
  const float spacing = 10.0f;
  const auto t0 = std::chrono::steady_clock::now();
  tg::course<tg::presets::track_pipeline, Policy> c(p, spacing, stream.get());
  stream.sync();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE(B::name() << ": " << envs << " impossible envs generated in " << seconds << " s");

  // Only the per-env words are read back (a snapshot of 100,000 tracks would be large).
  const tg::track_arrays a = c.view().tracks();
  const std::size_t count = static_cast<std::size_t>(envs);
  const std::vector<std::uint32_t> status = B::download(a.status, count);
  const std::vector<float> length = B::download(a.length, count);
  const std::vector<int> gates = B::download(a.num_gates, count);
  const std::vector<std::uint32_t> episode = B::download(a.episode, count);
  int bad = 0;
  for (std::size_t e = 0; e < count; ++e) {
    const std::uint32_t st = status[e];
    const bool ok = (st & tg::status::fallback) != 0u && (st & tg::status::valid) == 0u &&
                    tg::status::attempts(st) == p.validate.max_attempts &&
                    (st & tg::status::fail_curvature) != 0u &&  // why the attempts (and the ellipse) failed
                    (st & tg::status::user_track) == 0u && std::isfinite(length[e]) && gates[e] >= 1 &&
                    gates[e] <= c.max_gates() && episode[e] == 0u;
    if (!ok) {
      if (bad < 8)
        MESSAGE("env " << e << ": status " << st << " (attempts " << tg::status::attempts(st) << "), L " << length[e]
                       << ", gates " << gates[e]);
      ++bad;
    }
  }
  CHECK(bad == 0);

  // The fallback geometry itself is sound (finite, uniform, gates) although not valid.
  tg::track_params small = impossible_params(64, 4);
  small.num_samples = 64;
  tg::course<tg::presets::track_pipeline, Policy> s_course(small, spacing, stream.get());
  const tg::track_snapshot s = s_course.copy_tracks(stream.get());
  const track_limits lim = track_limits::from(small, spacing, s_course.max_gates());
  const check_tolerances tol;
  int geometry_bad = 0;
  for (int e = 0; e < s.num_envs; ++e) {
    problem_list pl(e);
    check_geometry(s, e, lim, measure(s, e, lim), tol, pl);
    if (!pl.empty()) {
      if (geometry_bad < 4)
        for (const std::string& line : pl.lines()) MESSAGE(line);
      ++geometry_bad;
    }
    CHECK((s.status[static_cast<std::size_t>(e)] & tg::status::fallback) != 0u);
  }
  CHECK(geometry_bad == 0);
}

TEST_CASE_TEMPLATE_DEFINE("envs of an impossible variant leave the other envs bit-identical", Policy,
                          impossible_params_half) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const int envs = scaled(1024, 8, 32);
  const float spacing = 0.6f;
  tg::track_params batch = tg::presets::track(envs);
  batch.seed = 1234;
  const tg::track_params impossible = impossible_params(envs, 4);

  // Half the envs (a scattered pattern, not alternating) get the impossible variant.
  tg::track_variants v;
  v.variants = {batch, impossible};
  int impossible_count = 0;
  for (int e = 0; e < envs; ++e) {
    const int pick = static_cast<int>((static_cast<std::uint32_t>(e) * 2654435761u) >> 31);
    v.env_variant.push_back(pick);
    impossible_count += pick;
  }
  REQUIRE(impossible_count > envs / 4);
  REQUIRE(impossible_count < 3 * envs / 4);

  // The batch that uses the impossible variant for every env (its scratch is the smallest: it
  // is built first, see tests/core/coexisting_courses_tests.hpp for why the order matters on
  // CUDA today), then the mixed batch and the batch without impossible envs.
  tg::track_params all_impossible = impossible;
  all_impossible.seed = batch.seed;
  tg::course<tg::presets::track_pipeline, Policy> hopeless(all_impossible, spacing, stream.get());
  tg::course<tg::presets::track_pipeline, Policy> mixed(batch, spacing, v, stream.get());
  tg::course<tg::presets::track_pipeline, Policy> plain(batch, spacing, stream.get());
  REQUIRE(mixed.max_gates() == plain.max_gates());

  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);  // 0: construction (episode 0); 1: after regenerate(all, advance)
    const tg::track_snapshot m = mixed.copy_tracks(stream.get());
    const tg::track_snapshot a = plain.copy_tracks(stream.get());
    const tg::track_snapshot h = hopeless.copy_tracks(stream.get());
    int differ = 0, not_fallback = 0;
    for (int e = 0; e < envs; ++e) {
      std::string why;
      const bool hard = v.env_variant[static_cast<std::size_t>(e)] == 1;
      // Each env equals the same env of the batch that used its variant for everyone.
      if (!same_env(m, e, hard ? h : a, e, &why)) {
        if (differ < 8) MESSAGE("env " << e << (hard ? " (impossible)" : " (possible)") << " differs in " << why);
        ++differ;
      }
      const std::uint32_t st = m.status[static_cast<std::size_t>(e)];
      if (hard && !((st & tg::status::fallback) != 0u && (st & tg::status::valid) == 0u &&
                    tg::status::attempts(st) == impossible.validate.max_attempts))
        ++not_fallback;
      CHECK(m.episode[static_cast<std::size_t>(e)] == static_cast<std::uint32_t>(round));
    }
    CHECK(differ == 0);
    CHECK(not_fallback == 0);
    mixed.regenerate(nullptr, true, stream.get());
    plain.regenerate(nullptr, true, stream.get());
    hopeless.regenerate(nullptr, true, stream.get());
  }
}

}  // namespace tg_test

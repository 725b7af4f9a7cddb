#pragma once
/// @file
/// stages::centreline_relaxation (issue 13 item 2), through presets::relaxed_family_pipeline:
///  - off (the default), the pipeline's tracks are any_family_pipeline's bit for bit, whatever
///    the stage's other parameters;
///  - on, an attempt that passes validation is never touched: every env whose first attempt
///    passed without the relaxation holds the same track, bit for bit, without status::relaxed;
///  - every relaxed track that was accepted meets the independent checker's contract
///    (reference_checker.hpp, via check_snapshot), and the relaxation mends attempts: fewer
///    attempts in all than without it, and status::relaxed on some valid tracks only;
///  - the pipeline refuses a relaxation it does not run (a pipeline without the stage).
/// Templated over the backend policy; instantiated in centreline_relaxation_test.cpp (host,
/// with the stage's unit cases) and centreline_relaxation_test.cu (CUDA, with the backend
/// comparison).

#include "random_geometry_tests.hpp"

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>
#include <string>

namespace tg_test {

using relaxing_pipeline = track_gen::presets::relaxed_family_pipeline;

/// The track preset drawing `family`, the relaxation at `iterations` sweeps.
inline track_gen::track_params relaxation_params_for(int envs, track_gen::generator_family family, int iterations,
                                                    std::uint64_t seed) {
  track_gen::track_params p = track_gen::presets::track(envs);
  p.seed = seed;
  p.generator.family = family;
  p.relaxation.max_iterations = iterations;
  return p;
}

/// A host workspace holding N samples resampled from a closed polyline, with its frames: what
/// the stage sees after stages::frames.
struct sampled_track {
  std::vector<float3> dense, position, tangent, normal;
  std::vector<float> dense_s, curvature;
  track_gen::detail::workspace ws{};
  track_gen::detail::host_block_context ctx;

  sampled_track(const std::vector<float3>& polyline, const track_gen::track_params& p) {
    const int n = p.num_samples;
    const std::size_t room =
        std::max(polyline.size(), static_cast<std::size_t>(n) * track_gen::stages::centreline_relaxation::dense_per_edge);
    dense = polyline;
    dense.resize(room);
    dense_s.resize(room + 1);
    position.resize(static_cast<std::size_t>(n));
    tangent.resize(position.size());
    normal.resize(position.size());
    curvature.resize(position.size());
    ws.dense = dense.data();
    ws.dense_s = dense_s.data();
    ws.position = position.data();
    ws.out.tangent = tangent.data();
    ws.out.normal = normal.data();
    ws.out.curvature = curvature.data();
    ws.num_samples = n;
    ws.num_dense = static_cast<int>(polyline.size());
    ws.dense_is_spline = false;
    ws.source = track_gen::detail::track_source::random;
    track_gen::stages::resample::run(ctx, ws, p);
    track_gen::stages::frames::run(ctx, ws, p);
  }
};

/// x = 12 cos t, y = sin t (gap + 4 cos^2 t): a 52 m loop whose two sides come within 2 gap of
/// each other halfway (a neck), smooth elsewhere (radius >= 1.5 m at the ends).
std::vector<float3> dumbbell(double gap, int points = 2048) {
  std::vector<float3> out(static_cast<std::size_t>(points));
  for (int k = 0; k < points; ++k) {
    const double t = 2.0 * pi_d * k / points;
    out[static_cast<std::size_t>(k)] = {static_cast<float>(12.0 * std::cos(t)),
                                        static_cast<float>(std::sin(t) * (gap + 4.0 * std::cos(t) * std::cos(t))), 0.0f};
  }
  return out;
}

/// r = 5 (1 + a cos 2t): a peanut whose waist turns tighter than 0.4 m for a near 0.85.
std::vector<float3> peanut(double a, int points = 2048) {
  std::vector<float3> out(static_cast<std::size_t>(points));
  for (int k = 0; k < points; ++k) {
    const double t = 2.0 * pi_d * k / points, r = 5.0 * (1.0 + a * std::cos(2.0 * t));
    out[static_cast<std::size_t>(k)] = {static_cast<float>(r * std::cos(t)), static_cast<float>(r * std::sin(t)), 0.0f};
  }
  return out;
}

/// Envs whose samples differ between two snapshots (bit for bit).
inline int envs_with_other_samples(const track_gen::track_snapshot& a, const track_gen::track_snapshot& b, int e) {
  for (int k = 0; k < a.num_samples; ++k) {
    const float3 p = a.position[a.sample_index(e, k)], q = b.position[b.sample_index(e, k)];
    if (std::memcmp(&p, &q, sizeof p) != 0) return 1;
  }
  return 0;
}

TEST_CASE_TEMPLATE_DEFINE("centreline relaxation: off changes nothing, on touches only failing attempts", Policy,
                          relaxation_tracks) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const float spacing = 0.6f;
  const int envs = std::is_same_v<Policy, tg::host_policy> ? scaled(512, 4, 64) : scaled(4096, 16, 256);
  for (const tg::generator_family family : {tg::generator_family::polar, tg::generator_family::bezier,
                                            tg::generator_family::voronoi}) {
    CAPTURE(static_cast<int>(family));
    tg::track_params off = relaxation_params_for(envs, family, 0, 3);
    // Off: the other parameters of the stage change nothing.
    tg::track_params off_tuned = off;
    off_tuned.relaxation.margin = 0.5f;
    off_tuned.relaxation.chebyshev_rho = 0.0f;
    tg::course<relaxing_pipeline, Policy> c_off(off, spacing, stream.get());
    tg::course<relaxing_pipeline, Policy> c_tuned(off_tuned, spacing, stream.get());
    const tg::track_snapshot s_off = c_off.copy_tracks(stream.get());
    const tg::track_snapshot s_tuned = c_tuned.copy_tracks(stream.get());
    int differing = 0;
    for (int e = 0; e < envs; ++e) differing += envs_with_other_samples(s_off, s_tuned, e);
    CHECK(differing == 0);

    // On.
    const tg::track_params on = relaxation_params_for(envs, family, 50, 3);
    tg::course<relaxing_pipeline, Policy> c_on(on, spacing, stream.get());
    const tg::track_snapshot s_on = c_on.copy_tracks(stream.get());
    const sweep_result r = check_snapshot(s_on, on, spacing, c_on.max_gates(), true);
    CHECK(r.bad == 0);
    CHECK(r.valid == r.tracks);
    int untouched_first = 0, touched_first = 0, relaxed = 0, relaxed_invalid = 0;
    long attempts_off = 0, attempts_on = 0;
    for (int e = 0; e < envs; ++e) {
      const std::size_t u = static_cast<std::size_t>(e);
      attempts_off += tg::status::attempts(s_off.status[u]);
      attempts_on += tg::status::attempts(s_on.status[u]);
      const bool was_relaxed = (s_on.status[u] & tg::status::relaxed) != 0u;
      relaxed += was_relaxed;
      relaxed_invalid += was_relaxed && (s_on.status[u] & tg::status::valid) == 0u;
      // The first attempt passed without the relaxation: the stage must not have moved it.
      if (tg::status::attempts(s_off.status[u]) == 1 && (s_off.status[u] & tg::status::fallback) == 0u) {
        const bool same = envs_with_other_samples(s_off, s_on, e) == 0 && !was_relaxed &&
                          s_off.status[u] == s_on.status[u] && s_off.length[u] == s_on.length[u];
        (same ? untouched_first : touched_first) += 1;
      }
    }
    MESSAGE(B::name() << ": family " << static_cast<int>(family) << ": " << relaxed << " of " << envs
                      << " tracks relaxed, attempts " << attempts_off << " -> " << attempts_on);
    CHECK(touched_first == 0);
    CHECK(untouched_first > envs / 2);
    CHECK(relaxed_invalid == 0);
    CHECK(relaxed > 0);
    CHECK(attempts_on < attempts_off);
  }
}

TEST_CASE_TEMPLATE_DEFINE("centreline relaxation: a pipeline without the stage refuses it", Policy, relaxation_refused) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const tg::track_params p = relaxation_params_for(8, tg::generator_family::polar, 20, 1);
  try {
    tg::course<tg::presets::track_pipeline, Policy> c(p, 0.6f, stream.get());
    FAIL("track_pipeline accepted relaxation.max_iterations = 20");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("track_params.relaxation.max_iterations = 20") != std::string::npos);
    CHECK(what.find("stages::centreline_relaxation") != std::string::npos);
  }
  // With the stage, the same parameters build.
  tg::course<relaxing_pipeline, Policy> ok(p, 0.6f, stream.get());
  CHECK(ok.num_envs() == 8);
}

}  // namespace tg_test

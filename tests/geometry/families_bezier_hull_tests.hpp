#pragma once
/// @file
/// The bezier and hull generator families (families/bezier.hpp, families/hull.hpp) through the
/// default pipeline (family stage, repulsive, catmull_rom, resample, frames, checkpoints,
/// validate): over 10,240 tracks per family at the family's defaults (two batches, two seeds),
/// every track meets the geometry contract of the independent double-precision checker
/// (reference_checker.hpp, via random_geometry_tests.hpp's check_snapshot), >= 99.9 % are valid
/// without the fallback, and the median compactness 4 pi A / P^2, computed here in double
/// (shoelace area, polyline perimeter) from the stored samples, is below 0.85. Smaller batches
/// with other options (disc layout, edgy, convex hull, no Chaikin pass, no polygon separation) must
/// meet the contract too. Templated over the backend policy; instantiated in
/// families_bezier_hull_test.cpp (host) and families_bezier_hull_test.cu (CUDA).

#include "random_geometry_tests.hpp"

#include <track_gen/detail/stages/families/bezier.hpp>
#include <track_gen/detail/stages/families/hull.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tg_test {

/// The default pipeline of a generator family (docs/generators.md; presets::one_family_pipeline).
template <class Family>
using family_pipeline = track_gen::presets::one_family_pipeline<Family>;

/// The track preset selecting `Family`'s family (the one its pipeline draws; the generator sizes
/// the control-point scratch from the pipeline's generate stage, Family::max_control_points).
template <class Family>
track_gen::track_params family_params(int envs) {
  track_gen::track_params p = track_gen::presets::track(envs);
  p.generator.family = Family::family;
  return p;
}

/// 4 pi A / P^2 of env e's closed centreline, in double: A by the shoelace formula over the
/// samples, P the closed polyline's length.
inline double compactness_of(const track_gen::track_snapshot& s, int e) {
  double area = 0, perimeter = 0;
  for (int k = 0; k < s.num_samples; ++k) {
    const float3 a = s.position[s.sample_index(e, k)];
    const float3 b = s.position[s.sample_index(e, (k + 1) % s.num_samples)];
    area += 0.5 * (static_cast<double>(a.x) * b.y - static_cast<double>(b.x) * a.y);
    perimeter += std::hypot(static_cast<double>(b.x) - a.x, static_cast<double>(b.y) - a.y);
  }
  return 4.0 * pi_d * std::fabs(area) / (perimeter * perimeter);
}

/// One batch of a family sweep.
struct family_batch {
  std::string name;
  track_gen::track_params params;
  bool defaults;  ///< counts toward the yield and compactness targets
};

/// The batches of `Family`: two at the defaults (10,240 tracks; 1/50 at the small scale), then
/// `variants` (changed copies of the defaults, 1,024 tracks each).
template <class Family>
std::vector<family_batch> family_batches(
    const std::vector<std::pair<std::string, void (*)(track_gen::track_params&)>>& variants) {
  std::vector<family_batch> b;
  {
    auto p = family_params<Family>(scaled(6144, 50, 16));
    p.seed = 1;
    b.push_back({"defaults, seed 1", p, true});
  }
  {
    auto p = family_params<Family>(scaled(4096, 50, 16));
    p.seed = 2;
    p.env_offset = 100000;
    b.push_back({"defaults, seed 2, env_offset 100000", p, true});
  }
  for (const auto& [name, change] : variants) {
    auto p = family_params<Family>(scaled(1024, 50, 16));
    p.seed = 3;
    change(p);
    b.push_back({name, p, false});
  }
  return b;
}

/// Runs the batches of one family; checks the contract, the yield and the compactness.
template <class Policy, class Family>
void family_sweep(const std::string& family, const std::vector<family_batch>& batches) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const float spacing = 0.6f;
  int tracks = 0, accepted = 0;
  std::vector<double> compactness;
  for (const family_batch& batch : batches) {
    CAPTURE(family);
    CAPTURE(batch.name);
    tg::course<family_pipeline<Family>, Policy> c(batch.params, spacing, stream.get());
    const tg::track_snapshot s = c.copy_tracks(stream.get());
    REQUIRE(s.num_envs == batch.params.num_envs);
    const sweep_result r = check_snapshot(s, batch.params, spacing, c.max_gates(), true);
    MESSAGE((B::name() + ": " + family + ", " + batch.name + ": " + std::to_string(r.tracks) + " tracks, " +
             std::to_string(r.valid) + " valid, " + std::to_string(r.fallback) + " fallbacks"));
    CHECK(r.bad == 0);
    CHECK(r.valid == r.tracks);  // the fallback ellipse passes these limits
    if (!batch.defaults) {
      CHECK(r.valid - r.fallback >= r.tracks / 2);  // the options still give random tracks
      continue;
    }
    tracks += r.tracks;
    for (int e = 0; e < s.num_envs; ++e) {
      const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
      if ((st & tg::status::valid) == 0u || (st & tg::status::fallback) != 0u) continue;
      ++accepted;
      compactness.push_back(compactness_of(s, e));
    }
  }
  REQUIRE(!compactness.empty());
  std::sort(compactness.begin(), compactness.end());
  const double median = compactness[compactness.size() / 2];
  const double yield = static_cast<double>(accepted) / tracks;
  MESSAGE(family << " at its defaults: " << tracks << " tracks, yield without fallback " << yield
                 << ", median compactness " << median);
  if (!small_scale()) CHECK(tracks >= 10000);
  CHECK(yield >= (small_scale() ? 0.99 : 0.999));
  CHECK(median < 0.85);
}

TEST_CASE_TEMPLATE_DEFINE("the bezier family meets the geometry contract, the yield and the compactness target",
                          Policy, bezier_family_sweep) {
  using track_gen::track_params;
  family_sweep<Policy, track_gen::stages::bezier_corners>(
      "bezier", family_batches<track_gen::stages::bezier_corners>({
                    {"grid layout, edgy 0.5", [](track_params& p) { p.bezier.layout = 0; p.bezier.edgy = 0.5f; }},
                    {"rad 0.25, 3 samples per piece, max_turn 2.2",
                     [](track_params& p) {
                       p.bezier.rad = 0.25f;
                       p.bezier.samples_per_piece = 3;
                       p.bezier.max_turn = 2.2f;
                     }},
                    {"no polygon separation", [](track_params& p) { p.polygon_separation.max_iterations = 0; }},
                }));
}

TEST_CASE_TEMPLATE_DEFINE("the hull family meets the geometry contract, the yield and the compactness target", Policy,
                          hull_family_sweep) {
  using track_gen::track_params;
  family_sweep<Policy, track_gen::stages::hull_corners>(
      "hull", family_batches<track_gen::stages::hull_corners>({
                  {"convex hull, disc layout", [](track_params& p) { p.hull.convex = 1; p.hull.layout = 1; }},
                  // Two passes put control points < 1 m apart: the repulsive clearance must shrink.
                  {"2 Chaikin passes, repulsive clearance 0.75 m",
                   [](track_params& p) {
                     p.hull.chaikin_passes = 2;
                     p.polygon_separation.clearance = 0.75f;
                   }},
              }));
}

}  // namespace tg_test

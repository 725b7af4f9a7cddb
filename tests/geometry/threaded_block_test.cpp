/// @file
/// Every pipeline's tracks built by blocks of several real threads (tests/support/
/// threaded_block_context.hpp) against the one-thread host context, bit for bit. The stages are
/// written so that the block size changes no result (the CUDA backend's wide masked blocks rely on
/// it), so any difference is a fault of the block-parallel code: a missing barrier, a race, a
/// strided loop that assumes one thread. Run under ThreadSanitizer it also reports the races that
/// happen to give the same bits (the _tsan target, tests/CMakeLists.txt).

#include "support/threaded_block_context.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;

/// Builds envs [0, envs) of `p` (episode 1, as the first regenerate(advance) does) with blocks of
/// Size threads (Size = 0: the host backend's one-thread context) and copies the batch.
template <class Pipeline, int Size>
tg::track_snapshot build(const tg::track_params& p, float spacing) {
  using namespace tg::detail;
  const int envs = p.num_envs;
  const generator_plan plan =
      make_generator_plan(p, spacing, nullptr, tg::user_tracks::kind{}, {}, false, sizes_of<Pipeline>(), 0, 0);
  std::vector<unsigned char> scratch(plan.scratch.bytes + 16, 0);
  tg::track_batch<tg::host_policy> batch(envs, p.num_samples, plan.max_gates);
  unsigned long long launches = 0;
  generate_args<no_env_hook> a{};
  a.params = p;
  a.checkpoint_spacing = spacing;
  a.max_gates = plan.max_gates;
  a.layout = plan.scratch;
  a.tracks = batch.view().arrays();
  a.advance = true;
  a.launch_count = &launches;
  for (int e = 0; e < envs; ++e) a.tracks.episode[e] = 0;
  if constexpr (Size == 0) {
    const host_block_context ctx;
    for (int e = 0; e < envs; ++e) {
      workspace ws;
      ws.bind_scratch(scratch.data(), plan.scratch);
      generate_env<Pipeline>(ctx, ws, a, e);
    }
  } else {
    tg_test::run_block<Size>([&](auto& ctx) {
      for (int e = 0; e < envs; ++e) {
        workspace ws;  // each thread its own, as each CUDA thread holds its own in registers
        ws.bind_scratch(scratch.data(), plan.scratch);
        generate_env<Pipeline>(ctx, ws, a, e);
        ctx.sync();  // the next env reuses the scratch
      }
    });
  }
  return batch.copy(0, envs, tg::host_stream{});
}

/// The fields of the two batches that differ (empty: the same bytes).
std::string differences(const tg::track_snapshot& x, const tg::track_snapshot& y) {
  std::string out;
#define TRACK_GEN_COMPARE(name, type, ext, doc)                                                             \
  if (x.name.size() != y.name.size() ||                                                                     \
      (!x.name.empty() && std::memcmp(x.name.data(), y.name.data(), x.name.size() * sizeof(type)) != 0)) { \
    for (std::size_t i = 0; i < x.name.size() && i < y.name.size(); ++i)                                    \
      if (std::memcmp(&x.name[i], &y.name[i], sizeof(type)) != 0) {                                         \
        out += std::string(#name) + "[" + std::to_string(i) + "] ";                                         \
        break;                                                                                              \
      }                                                                                                     \
  }
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_COMPARE)
#undef TRACK_GEN_COMPARE
  return out;
}

/// The pipeline's tracks with blocks of 64 threads (the CUDA generation block) and of 3 (no
/// multiple of a warp) against the one-thread context; `wide`: also 256 (the masked
/// regeneration's wide blocks, whose checkpoint walks spread over 8 warps).
template <class Pipeline>
void check_pipeline(const tg::track_params& p, float spacing, bool wide = false) {
  const tg::track_snapshot one = build<Pipeline, 0>(p, spacing);
  // The reference is not degenerate: most envs hold a valid random track.
  int valid = 0;
  for (int e = 0; e < p.num_envs; ++e)
    valid += (one.status[static_cast<std::size_t>(e)] & (tg::status::valid | tg::status::fallback)) == tg::status::valid;
  CHECK(valid * 2 > p.num_envs);
  CHECK(differences(one, build<Pipeline, 64>(p, spacing)) == "");
  CHECK(differences(one, build<Pipeline, 3>(p, spacing)) == "");
  if (wide) CHECK(differences(one, build<Pipeline, 256>(p, spacing)) == "");
}

tg::track_params family(tg::generator_family f, int envs) {
  tg::track_params p = tg::presets::track(envs);
  p.seed = 11;
  p.num_samples = 128;
  p.generator.family = f;
  return p;
}

}  // namespace

TEST_CASE("blocks of threads build the one-thread context's tracks: polar, bezier, hull, voronoi, checkpoint") {
  check_pipeline<tg::presets::track_pipeline>(family(tg::generator_family::polar, 12), 1.0f);
  check_pipeline<tg::presets::bezier_pipeline>(family(tg::generator_family::bezier, 12), 1.0f);
  check_pipeline<tg::presets::hull_pipeline>(family(tg::generator_family::hull, 12), 1.0f);
  check_pipeline<tg::presets::voronoi_pipeline>(family(tg::generator_family::voronoi, 12), 1.0f);
  check_pipeline<tg::presets::checkpoint_pipeline>(family(tg::generator_family::checkpoint, 12), 1.0f, true);
}

TEST_CASE("blocks of threads build the one-thread context's tracks: mixed, relaxed, elevated, gate courses") {
  tg::track_params mix = family(tg::generator_family::polar, 16);
  for (float& w : mix.generator.weights) w = 1.0f;
  mix.generator.weights[static_cast<int>(tg::generator_family::repulsive)] = 0.0f;
  check_pipeline<tg::presets::family_pipeline>(mix, 1.0f, true);
  tg::track_params relaxed = mix;
  relaxed.relaxation.max_iterations = 50;
  check_pipeline<tg::presets::relaxed_family_pipeline>(relaxed, 1.0f);
  tg::track_params elevated = mix;
  elevated.elevation.profile = tg::elevation_kind::random_walk;
  elevated.elevation.z_max = 2.0f;
  check_pipeline<tg::presets::elevated_family_pipeline>(elevated, 1.0f);
  tg::track_params gates = tg::presets::gate_course(12);
  gates.seed = 11;
  check_pipeline<tg::presets::gate_course_pipeline>(gates, tg::presets::gate_course_spacing(gates));
}

TEST_CASE("blocks of threads build the one-thread context's tracks: family parameters away from their defaults") {
  tg::track_params grid = family(tg::generator_family::bezier, 12);
  grid.bezier.layout = 0;
  check_pipeline<tg::presets::bezier_pipeline>(grid, 1.0f);
  tg::track_params convex = family(tg::generator_family::hull, 12);
  convex.hull.convex = 1;
  convex.hull.layout = 1;
  check_pipeline<tg::presets::hull_pipeline>(convex, 1.0f);
  for (int rounds : {0, 1}) {
    tg::track_params crowded = family(tg::generator_family::voronoi, 12);
    crowded.voronoi.chaikin_rounds = rounds;
    crowded.voronoi.min_angle_gap = 0.9f;
    crowded.voronoi.control_points = 20;
    check_pipeline<tg::presets::voronoi_pipeline>(crowded, 1.0f);
  }
  tg::track_params walks = family(tg::generator_family::checkpoint, 12);
  walks.checkpoint.candidates = 7;
  walks.checkpoint.checkpoints = 16;
  check_pipeline<tg::presets::checkpoint_pipeline>(walks, 1.0f);
}

TEST_CASE("blocks of threads build the one-thread context's tracks: repulsive growth") {
  check_pipeline<tg::presets::repulsive_pipeline>(family(tg::generator_family::repulsive, 2), 1.0f);
}

TEST_CASE("checkpoint_walk::any_crossing: a block's answer is the serial count's, for polygons with and without crossings") {
  using stage = tg::stages::checkpoint_walk;
  // Random polygons (most cross), star-shaped ones sorted by angle (none cross) and the same with
  // two neighbours swapped (a crossing near one place), m = 4 .. 60. At the library's defaults no
  // walk crosses itself, so the tracks above never exercise this.
  std::vector<float3> pts;
  int with = 0, without = 0;
  for (int m = 4; m <= 60; m += 4)
    for (int kind = 0; kind < 3; ++kind) {
      const tg::philox_stream rng(3, static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(kind), 0, 0);
      pts.assign(static_cast<std::size_t>(m), float3{});
      for (int i = 0; i < m; ++i) {
        const tg::uniform4 u = rng.uniform(static_cast<std::uint32_t>(i));
        const float angle = kind == 0 ? 6.2831853f * u.v[0] : 6.2831853f * (static_cast<float>(i) + 0.5f * u.v[0]) / static_cast<float>(m);
        const float radius = 1.0f + 4.0f * u.v[1];
        pts[static_cast<std::size_t>(i)] = float3{radius * std::cos(angle), radius * std::sin(angle), 0.0f};
      }
      if (kind == 2) std::swap(pts[1], pts[2]);
      const bool serial = stage::count_crossings(pts.data(), m) > 0;
      (serial ? with : without) += 1;
      std::vector<char> answers64(64), answers3(3);
      tg_test::run_block<64>([&](auto& ctx) { answers64[static_cast<std::size_t>(ctx.rank())] = stage::any_crossing(ctx, pts.data(), m); });
      tg_test::run_block<3>([&](auto& ctx) { answers3[static_cast<std::size_t>(ctx.rank())] = stage::any_crossing(ctx, pts.data(), m); });
      CAPTURE(m);
      CAPTURE(kind);
      for (char a : answers64) CHECK(static_cast<bool>(a) == serial);
      for (char a : answers3) CHECK(static_cast<bool>(a) == serial);
    }
  CHECK(with >= 15);
  CHECK(without >= 10);
}

TEST_CASE("family_block_corners: a block's corners are family_corners' (a gate sequence's) bit for bit") {
  namespace d = tg::detail;
  // Grid and disc layouts, with and without the hull, corner distances that make corners retry
  // and drop, turn bounds that prune many corners or none.
  struct setting {
    int lo, hi, layout;
    float min_distance, max_turn;
    bool convex;
  };
  const setting settings[] = {{8, 12, 1, 3.0f, 2.2f, false}, {8, 12, 0, 1.0f, 2.2f, false}, {3, 64, 1, 0.5f, 1.0f, true},
                              {20, 40, 0, 2.5f, 0.6f, false}, {4, 8, 1, 6.0f, 3.0f, true},  {30, 64, 1, 0.2f, 0.3f, false}};
  // The stage's scratch: the tries of up to 64 corners in ws.dense, the corners in ws.control.
  const int capacity = d::family_corner_tries * d::family_max_corners;
  std::vector<unsigned char> memory;
  int pruned = 0, dropped = 0;
  for (const setting& s : settings)
    for (std::uint32_t env = 0; env < 40; ++env) {
      const tg::philox_stream rng(5, env, 1, 0, 10);
      std::vector<float3> serial(d::family_max_corners);
      const int n = d::family_corners(rng, s.lo, s.hi, s.layout, 6.5f, s.min_distance, s.max_turn, s.convex, serial.data());
      const int drawn = d::family_corner_count(rng.uniform(0).v[0], s.lo, s.hi);
      pruned += n < drawn ? 1 : 0;
      const auto layout = d::scratch_layout::make(capacity, capacity, 16);
      memory.assign(layout.bytes + 16, 0);
      auto block = [&](auto& ctx, std::vector<int>& counts) {
        d::workspace ws{};
        ws.bind_scratch(memory.data(), layout);
        counts[static_cast<std::size_t>(ctx.rank())] =
            d::family_block_corners(ctx, ws, rng, s.lo, s.hi, s.layout, 6.5f, s.min_distance, s.max_turn, s.convex);
      };
      for (int size : {64, 3}) {
        std::vector<int> counts(static_cast<std::size_t>(size), -1);
        if (size == 64)
          tg_test::run_block<64>([&](auto& ctx) { block(ctx, counts); });
        else
          tg_test::run_block<3>([&](auto& ctx) { block(ctx, counts); });
        CAPTURE(env);
        CAPTURE(size);
        for (int c : counts) CHECK(c == n);
        d::workspace ws{};
        ws.bind_scratch(memory.data(), layout);
        for (int i = 0; i < n; ++i) CHECK(std::memcmp(&ws.control_next[i], &serial[static_cast<std::size_t>(i)], sizeof(float3)) == 0);
      }
      dropped += d::family_draw_corners(rng, drawn, s.layout, 6.5f, s.min_distance, serial.data()) < drawn ? 1 : 0;
    }
  // The settings reach the pruning and the dropped corners.
  CHECK(pruned > 20);
  CHECK(dropped > 5);
}

// stages::dense_repulsive and the grid-scope protocol on the host backend: the relaxation on
// synthetic stadiums (clearance reached, idle and clear envs untouched, the window bound), and
// the stage inside presets::long_track (valid tracks, status bits, no effect when disabled,
// masks and determinism).
#include "grid/grid_cases.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstring>

namespace grid_test {
namespace {

using long_course = tg::course<tg::presets::long_track_pipeline, tg::host_policy>;
using plain_course = tg::course<tg::presets::track_pipeline, tg::host_policy>;

int run_stage(stadium_set& set, const tg::track_params& p) {
  tg::detail::host_grid_context ctx;
  tg::stages::dense_repulsive::run(ctx, set.view(), p);
  return set.flags[1];
}

bool same_bits(const void* a, const void* b, std::size_t bytes) { return std::memcmp(a, b, bytes) == 0; }

}  // namespace

TEST_CASE("dense_repulsive pushes the sides of narrow stadiums to the clearance and leaves the others alone") {
  const int n = 1024;
  // env 0: sides 60 m apart (already clear); 1-3: 30, 10 and 20 m; 4: 10 m but not active.
  stadium_set set = make_stadiums({60.0f, 30.0f, 10.0f, 20.0f, 10.0f}, n, /*idle=*/4);
  const stadium_set before = set;
  const tg::track_params p = stadium_params(/*max_windows=*/200);
  const int windows = run_stage(set, p);
  INFO("windows run: " << windows);
  CHECK(windows >= 2);
  CHECK(windows < 200);  // converged before the bound
  const float c = p.dense_repulsive.clearance;
  for (int e = 0; e < set.num_envs; ++e) {
    INFO("env " << e);
    const float3* out = set.buffer0.data() + static_cast<std::size_t>(e) * set.capacity;
    const float3* in = before.buffer0.data() + static_cast<std::size_t>(e) * set.capacity;
    CHECK(set.active[static_cast<std::size_t>(e)] == 0);
    if (e == 0 || e == 4) {
      CHECK(same_bits(out, in, sizeof(float3) * n));  // clear or idle: untouched, bit for bit
      CHECK(set.moved[static_cast<std::size_t>(e)] == 0);
      continue;
    }
    CHECK(set.moved[static_cast<std::size_t>(e)] == 1);
    const int w = tg::stages::dense_repulsive::window_samples(c, set.spacing[static_cast<std::size_t>(e)], n);
    const double clear_before = far_clearance(in, n, w);
    const double clear_after = far_clearance(out, n, w);
    INFO("far clearance before " << clear_before << " m, after " << clear_after << " m");
    CHECK(clear_before < c);
    // Converged: the largest overlap of the last iteration was below the tolerance.
    CHECK(clear_after >= c - p.dense_repulsive.tolerance - 1e-3);
    CHECK(clear_after <= c + 1.0);  // pushed to the clearance, not flung beyond it
  }
}

TEST_CASE("dense_repulsive stops after max_windows windows, and a window is max_windows' unit") {
  const int n = 512;
  stadium_set one = make_stadiums({10.0f}, n);
  stadium_set two = one;
  CHECK(run_stage(one, stadium_params(1)) == 1);
  CHECK(one.active[0] == 1);  // not converged: still active when the bound stops it
  CHECK(run_stage(two, stadium_params(2)) == 2);
  // The second run did one more window on top of the first one's state: different samples.
  CHECK_FALSE(same_bits(one.buffer0.data(), two.buffer0.data(), sizeof(float3) * n));
  stadium_set zero = make_stadiums({10.0f}, n);
  const stadium_set untouched = zero;
  CHECK(run_stage(zero, stadium_params(0)) == 0);
  CHECK(same_bits(zero.buffer0.data(), untouched.buffer0.data(), sizeof(float3) * n));
}

TEST_CASE("presets::long_track: every track valid; relaxed tracks are the stage's output, rejected ones the track before it") {
  const int num_envs = 12;
  tg::track_params p = tg::presets::long_track(num_envs);
  p.seed = 11;
  long_course relaxed(p, 50.0f);
  tg::track_params off = p;
  off.dense_repulsive.max_windows = 0;
  long_course plain(off, 50.0f);
  const tg::track_snapshot a = relaxed.copy_tracks({});
  const tg::track_snapshot b = plain.copy_tracks({});
  int n_relaxed = 0, n_rejected = 0;
  const std::size_t n = static_cast<std::size_t>(p.num_samples);
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e << " status " << std::hex << a.status[e]);
    const std::uint32_t sa = a.status[static_cast<std::size_t>(e)], sb = b.status[static_cast<std::size_t>(e)];
    CHECK((sa & tg::status::valid) != 0);
    CHECK_FALSE(((sa & tg::status::relaxed) != 0 && (sa & tg::status::relax_rejected) != 0));
    CHECK(tg::status::attempts(sa) == tg::status::attempts(sb));  // the stage runs after the attempt loop
    const bool same = same_bits(&a.position[e * n], &b.position[e * n], n * sizeof(float3));
    if ((sa & tg::status::relaxed) != 0) {
      ++n_relaxed;
      CHECK_FALSE(same);
    } else {
      n_rejected += (sa & tg::status::relax_rejected) != 0;
      CHECK(same);  // not moved, or rejected: the track before the stage, bit for bit
      CHECK(a.length[static_cast<std::size_t>(e)] == b.length[static_cast<std::size_t>(e)]);
    }
  }
  MESSAGE("relaxed " << n_relaxed << ", rejected " << n_rejected << " of " << num_envs);
  CHECK(n_relaxed >= 1);
}

TEST_CASE("a pipeline with the grid stage disabled gives the plain pipeline's tracks bit for bit") {
  tg::track_params p = tg::presets::long_track(6);
  p.dense_repulsive.max_windows = 0;
  p.seed = 3;
  long_course with_stage(p, 50.0f);
  plain_course without(p, 50.0f);
  const tg::track_snapshot a = with_stage.copy_tracks({}), b = without.copy_tracks({});
  CHECK(same_bits(a.position.data(), b.position.data(), a.position.size() * sizeof(float3)));
  CHECK(a.status == b.status);
  CHECK(a.num_gates == b.num_gates);
}

TEST_CASE("long_track: masked regeneration leaves the other envs untouched and an env's track does not depend on the batch") {
  const int num_envs = 6;
  tg::track_params p = tg::presets::long_track(num_envs);
  p.seed = 21;
  long_course batch(p, 50.0f);
  const tg::track_snapshot before = batch.copy_tracks({});
  std::vector<std::int32_t> mask(num_envs, 0);
  mask[2] = 1;
  mask[5] = 1;
  batch.regenerate(mask.data(), true, {});
  const tg::track_snapshot after = batch.copy_tracks({});
  const std::size_t n = static_cast<std::size_t>(p.num_samples);
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    const bool same = same_bits(&before.position[e * n], &after.position[e * n], n * sizeof(float3));
    CHECK(same == (mask[static_cast<std::size_t>(e)] == 0));
    CHECK(after.episode[static_cast<std::size_t>(e)] == (mask[static_cast<std::size_t>(e)] != 0 ? 1u : 0u));
  }
  // Env 5 at episode 1 alone (env_offset 5) is the same track.
  tg::track_params single = p;
  single.num_envs = 1;
  single.env_offset = 5;
  long_course alone(single, 50.0f);
  alone.regenerate(nullptr, true, {});
  const tg::track_snapshot one = alone.copy_tracks({});
  CHECK(same_bits(one.position.data(), &after.position[5 * n], n * sizeof(float3)));
  CHECK(one.status[0] == after.status[5]);
}

// Where a grid-scope stage may sit: after the spline, before resample (the pipeline's
// static_assert uses this predicate).
namespace st = tg::stages;
static_assert(tg::detail::grid_stage_well_placed<st::random_polar, st::polygon_separation, st::catmull_rom, st::dense_repulsive,
                                                 st::resample, st::frames, st::checkpoints, st::validate>(3),
              "after the spline, before resample");
static_assert(!tg::detail::grid_stage_well_placed<st::random_polar, st::dense_repulsive, st::polygon_separation, st::catmull_rom,
                                                  st::resample, st::frames, st::checkpoints, st::validate>(1),
              "before the spline: no dense centreline yet");
static_assert(!tg::detail::grid_stage_well_placed<st::random_polar, st::polygon_separation, st::catmull_rom, st::resample,
                                                  st::dense_repulsive, st::frames, st::checkpoints, st::validate>(4),
              "after resample: the resampled track would not see the relaxation");

TEST_CASE("track_variants: the grid stage's loop shape is the batch's, the clearance the variant's") {
  const int num_envs = 4;
  tg::track_params batch = tg::presets::long_track(num_envs);
  batch.seed = 7;  // envs 0 and 1 relaxed, env 3 rejected: the stage matters on both parities
  tg::track_params variant = batch;
  variant.dense_repulsive.max_windows = 0;              // batch-wide: ignored
  variant.dense_repulsive.iterations_per_window = 7;    // batch-wide: ignored, so not an error
  tg::track_variants v{{variant}, std::vector<int>(num_envs, 0)};
  long_course with_variants(batch, 50.0f, v);
  long_course plain(batch, 50.0f);
  const tg::track_snapshot a = with_variants.copy_tracks({}), b = plain.copy_tracks({});
  CHECK(same_bits(a.position.data(), b.position.data(), a.position.size() * sizeof(float3)));
  CHECK(a.status == b.status);
  // A variant's clearance is its own: 0 switches the stage off for its envs only.
  tg::track_params off = batch;
  off.dense_repulsive.clearance = 0.0f;
  tg::track_variants mixed{{batch, off}, {0, 1, 0, 1}};
  long_course half(batch, 50.0f, mixed);
  const tg::track_snapshot c = half.copy_tracks({});
  int touched_odd = 0;  // odd envs the stage touches in the plain batch: the check below can fail
  for (int e = 1; e < num_envs; e += 2)
    touched_odd += (b.status[static_cast<std::size_t>(e)] & (tg::status::relaxed | tg::status::relax_rejected)) != 0u;
  REQUIRE(touched_odd >= 1);
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    if (e % 2 == 1) CHECK((c.status[static_cast<std::size_t>(e)] & (tg::status::relaxed | tg::status::relax_rejected)) == 0u);
    else CHECK(c.status[static_cast<std::size_t>(e)] == b.status[static_cast<std::size_t>(e)]);
  }
}

TEST_CASE("dense_repulsive parameters out of range are rejected with the parameter's name") {
  tg::track_params p = tg::presets::long_track(1);
  p.dense_repulsive.iterations_per_window = 7;
  CHECK_THROWS_WITH_AS(long_course(p, 50.0f), doctest::Contains("iterations_per_window"), std::invalid_argument);
  p = tg::presets::long_track(1);
  p.dense_repulsive.max_windows = 1001;
  CHECK_THROWS_WITH_AS(long_course(p, 50.0f), doctest::Contains("dense_repulsive.max_windows"), std::invalid_argument);
  p = tg::presets::long_track(1);
  p.dense_repulsive.step = 0.0f;
  CHECK_THROWS_WITH_AS(long_course(p, 50.0f), doctest::Contains("dense_repulsive.step"), std::invalid_argument);
}

}  // namespace grid_test

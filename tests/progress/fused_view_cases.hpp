#pragma once
/// @file
/// Progress tracking fused into the user's own physics: a kernel (a loop on the host backend)
/// that receives `course.view()` by value and calls `view.step(e, p)` itself must leave the
/// same progress as `course::step` on an identical course fed the same positions. Test body
/// templated over the policy; applied in fused_view_test.cpp and fused_view_test.cu.

#include "progress_harness.hpp"

#include <type_traits>

namespace progress_test {

// The views are passed by value into kernels: they must be trivially copyable.
static_assert(std::is_trivially_copyable_v<track_gen::course_ref>, "course_ref is passed by value to kernels");
static_assert(std::is_trivially_copyable_v<track_gen::track_ref>, "track_ref is passed by value to kernels");
static_assert(std::is_trivially_copyable_v<track_gen::gate>, "gate is returned by value from device code");
static_assert(std::is_trivially_copyable_v<track_gen::projection>, "projection is returned by value from device code");
static_assert(std::is_trivially_copyable_v<track_gen::progress_state>, "progress_state is returned by value");

TEST_CASE_TEMPLATE_DEFINE("a user kernel calling view.step(e, p) matches course::step bit for bit", Policy,
                          fused_view_step) {
  const circle c{50.0};
  // Not a multiple of 32: the step kernel's last warp has lanes past the last env, which take
  // part in the warp-shared O(N) searches of the others (detail/progress/kernels.cuh).
  const int n = scaled(500, 61);
  const int steps = scaled(200, 60);  // 60 steps: the fastest envs (7.45 m/step) complete a lap
  tg::track_params params = user_track_params(n);
  params.num_samples = 128;  // keeps the snapshots small; the track is still valid
  rig<Policy> fused(params, 5.0f, centreline({c.polyline(2000)}));
  rig<Policy> library(params, 5.0f, centreline({c.polyline(2000)}));
  require_valid_user_tracks(fused.tracks());
  // The library's course reads the positions the fused kernel writes, on the same stream.
  library.course().bind(fused.device_positions());

  // Coverage of the comparison: every branch of step must have been taken by some env.
  int gate_events = 0, laps = 0, full_searches = 0, invalid = 0, wrong_way = 0, off_track = 0;
  for (int i = 0; i < steps; ++i) {
    fused.fused_physics(i);
    library.course().step(fused.stream().get());
    const tg::progress_snapshot pf = fused.progress(), pl = library.progress();
    for (int e = 0; e < n; ++e) {
      const std::uint32_t f = pf.flags[static_cast<std::size_t>(e)];
      gate_events += has(f, tg::progress_flags::gate_passed);
      laps += has(f, tg::progress_flags::lap_completed);
      full_searches += has(f, tg::progress_flags::full_search);
      invalid += has(f, tg::progress_flags::invalid_position);
      wrong_way += has(f, tg::progress_flags::wrong_way);
      off_track += has(f, tg::progress_flags::off_track);
      if (!same_bits(entry(pf, e), entry(pl, e))) {
        INFO("step " << i << " env " << e << ": fused " << describe(entry(pf, e)) << " vs course::step "
                     << describe(entry(pl, e)));
        CHECK(same_bits(entry(pf, e), entry(pl, e)));
      }
    }
  }
  const tg::track_snapshot tf = fused.tracks(), tl = library.tracks();
  CHECK(tf.status == tl.status);  // invalid_input set on the same envs
  INFO("events seen: gates " << gate_events << ", laps " << laps << ", full searches " << full_searches
                             << ", invalid " << invalid << ", wrong way " << wrong_way << ", off track " << off_track);
  CHECK(gate_events > 0);
  CHECK(laps > 0);
  CHECK(full_searches > 0);
  CHECK(invalid > 0);
  CHECK(wrong_way > 0);
  CHECK(off_track > 0);
}

}  // namespace progress_test

#pragma once
/// @file
/// Several courses of the same pipeline and policy live in one process with different
/// parameters (hence different per-track scratch sizes): each keeps regenerating correctly
/// whatever was constructed after it. On CUDA they share one kernel, so any per-kernel setting
/// (e.g. the dynamic shared memory limit) must suit all of them. Templated over the backend;
/// instantiated in coexisting_courses_test.cpp (host) and .cu (CUDA).

#include "../geometry/backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <string>

namespace tg_test {

TEST_CASE_TEMPLATE_DEFINE("courses with different scratch sizes coexist: an earlier, larger one still regenerates",
                          Policy, coexisting_courses) {
  namespace tg = track_gen;
  using course_t = tg::course<tg::presets::track_pipeline, Policy>;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  tg::track_params big = tg::presets::track(8);
  big.seed = 11;
  big.polar.control_points = 24;  // 24 * 32 dense samples of scratch
  tg::track_params small = tg::presets::track(8);
  small.seed = 11;
  small.spline.samples_per_segment = 8;  // 16 * 8 dense samples of scratch
  course_t first(big, 0.6f, stream.get());
  const tg::track_snapshot before = first.copy_tracks(stream.get());
  course_t second(small, 0.6f, stream.get());  // constructed after `first`, with a smaller scratch
  // Rebuilding the same episode must work, and give the same bytes as at construction.
  CHECK_NOTHROW(first.regenerate(nullptr, false, stream.get()));
  const tg::track_snapshot again = first.copy_tracks(stream.get());
  for (int e = 0; e < 8; ++e) {
    std::string why;
    CHECK_MESSAGE(same_env(before, e, again, e, &why), ("env " + std::to_string(e) + " differs in " + why));
  }
  CHECK_NOTHROW(second.regenerate(nullptr, true, stream.get()));
  CHECK_NOTHROW(first.regenerate(nullptr, true, stream.get()));
  CHECK(first.copy_tracks(stream.get()).episode[0] == 1u);
}

}  // namespace tg_test

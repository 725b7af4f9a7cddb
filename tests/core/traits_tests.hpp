#pragma once
/// @file
/// Type properties the API promises (docs/architecture.md, course_ref.hpp): the views and the small value
/// types are trivially copyable (they are passed by value into kernels), and a course is
/// move-only (it owns its memory). The compile-time checks are static_asserts; the runtime test
/// checks that a moved course still holds its tracks. Templated over the backend; instantiated
/// in traits_test.cpp (host) and traits_test.cu (CUDA).

#include "../geometry/backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <type_traits>
#include <utility>

namespace tg_test {

static_assert(std::is_trivially_copyable_v<track_gen::course_ref>, "course_ref is passed by value into kernels");
static_assert(std::is_trivially_copyable_v<track_gen::track_ref>, "track_ref is passed by value into kernels");
static_assert(std::is_trivially_copyable_v<track_gen::gate>, "gate is a plain value");
static_assert(std::is_trivially_copyable_v<track_gen::projection>, "projection is a plain value");
static_assert(std::is_trivially_copyable_v<track_gen::progress_state>, "progress_state is a plain value");
static_assert(std::is_trivially_copyable_v<track_gen::track_arrays>, "track_arrays is a bundle of pointers");
static_assert(std::is_trivially_copyable_v<track_gen::progress_arrays>, "progress_arrays is a bundle of pointers");

/// The move-only contract of a course type.
template <class Course>
constexpr bool is_move_only_v = std::is_move_constructible_v<Course> && std::is_move_assignable_v<Course> &&
                                std::is_nothrow_move_constructible_v<Course> &&
                                std::is_nothrow_move_assignable_v<Course> && !std::is_copy_constructible_v<Course> &&
                                !std::is_copy_assignable_v<Course>;

TEST_CASE_TEMPLATE_DEFINE("course is move-only; a moved course keeps its tracks and its view", Policy, move_only_course) {
  namespace tg = track_gen;
  using course_t = tg::course<tg::presets::track_pipeline, Policy>;
  static_assert(is_move_only_v<course_t>, "course owns device memory: move-only");
  static_assert(std::is_trivially_copyable_v<decltype(std::declval<const course_t&>().view())>);

  using B = backend<Policy>;
  typename B::stream_holder stream;
  tg::track_params p = tg::presets::track(16);
  p.seed = 3;
  course_t a(p, 0.6f, stream.get());
  const tg::track_snapshot before = a.copy_tracks(stream.get());
  const tg::course_ref view_before = a.view();

  course_t b(std::move(a));  // move construction: same storage, same contents
  CHECK(b.view().tracks().position == view_before.tracks().position);
  CHECK(b.num_envs() == 16);
  const tg::track_snapshot after = b.copy_tracks(stream.get());
  CHECK(same_bytes(before.position, after.position));
  CHECK(same_bytes(before.status, after.status));

  tg::track_params q = tg::presets::track(4);
  q.seed = 4;
  course_t c(q, 0.6f, stream.get());
  c = std::move(b);  // move assignment: c now owns b's storage; c's old storage is released
  CHECK(c.num_envs() == 16);
  CHECK(c.view().tracks().position == view_before.tracks().position);
  CHECK(same_bytes(before.position, c.copy_tracks(stream.get()).position));
  c.regenerate(nullptr, true, stream.get());  // the moved-to course still works
  CHECK(c.copy_tracks(stream.get()).episode[0] == 1u);
}

}  // namespace tg_test

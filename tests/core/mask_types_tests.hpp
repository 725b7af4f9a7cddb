#pragma once
/// @file
/// `course::regenerate` reads masks of int32, bool and uint8 elements (env_mask) the same way:
/// an env is regenerated when its element is nonzero, and the tracks and progress that result
/// are the same bytes whatever the element type. And `course::set_recording` validates its
/// options against the Policy. Templated over the backend; instantiated in
/// mask_types_test.cpp (host) and .cu (CUDA).

#include "../geometry/backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tg_test {

/// The course of the `track` pipeline under `Policy`.
template <class Policy>
using track_course = track_gen::course<track_gen::presets::track_pipeline, Policy>;

TEST_CASE_TEMPLATE_DEFINE("masks of int32, bool and uint8 elements select the same envs, bit for bit", Policy,
                          mask_types) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const int num_envs = 37;  // not a multiple of 4: the last bytes of a 1-byte mask are read too
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 23;
  // Selected envs: a few, the last one included; the values other than 1 count as set as well.
  std::vector<std::int32_t> wide(static_cast<std::size_t>(num_envs), 0);
  std::vector<std::uint8_t> narrow(static_cast<std::size_t>(num_envs), 0);
  std::vector<char> as_bool(static_cast<std::size_t>(num_envs), 0);  // vector<bool> has no data()
  for (int e : {0, 5, 6, 17, num_envs - 1}) {
    wide[static_cast<std::size_t>(e)] = e == 5 ? -7 : 1;
    narrow[static_cast<std::size_t>(e)] = static_cast<std::uint8_t>(e == 6 ? 255 : 1);
    as_bool[static_cast<std::size_t>(e)] = 1;
  }
  typename B::template buffer<std::int32_t> wide_mask(wide);
  typename B::template buffer<std::uint8_t> narrow_mask(narrow);
  typename B::template buffer<char> bool_mask(as_bool);

  track_course<Policy> by_int(params, 0.6f, stream.get());
  track_course<Policy> by_uint8(params, 0.6f, stream.get());
  track_course<Policy> by_bool(params, 0.6f, stream.get());
  const tg::track_snapshot initial = by_int.copy_tracks(stream.get());
  by_int.regenerate(wide_mask.get(), true, stream.get());
  by_uint8.regenerate(narrow_mask.get(), true, stream.get());
  by_bool.regenerate(reinterpret_cast<const bool*>(bool_mask.get()), true, stream.get());
  const tg::track_snapshot a = by_int.copy_tracks(stream.get());
  const tg::track_snapshot b = by_uint8.copy_tracks(stream.get());
  const tg::track_snapshot c = by_bool.copy_tracks(stream.get());
  int selected = 0;
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    const bool set = wide[static_cast<std::size_t>(e)] != 0;
    selected += set ? 1 : 0;
    CHECK(a.episode[static_cast<std::size_t>(e)] == (set ? 1u : 0u));
    std::string why;
    CHECK_MESSAGE(same_env(a, e, b, e, &why), "uint8 mask differs in " << why);
    CHECK_MESSAGE(same_env(a, e, c, e, &why), "bool mask differs in " << why);
    // Unselected envs keep their track, bit for bit; selected ones get a new one.
    CHECK(same_env(a, e, initial, e) == !set);
  }
  CHECK(selected == 5);
}

TEST_CASE_TEMPLATE_DEFINE("set_recording: the Policy's choices by default, invalid options named and refused", Policy,
                          recording_choices) {
  namespace tg = track_gen;
  constexpr bool conditional = track_course<Policy>::is_conditional;
  typename backend<Policy>::stream_holder stream;
  track_course<Policy> c(tg::presets::track(4), 0.6f, stream.get());
  const tg::recording_options initial = c.recording();
  CHECK(initial.conditional == conditional);
  CHECK(initial.capture_mode == Policy::capture_mode::value);

  // Out of range capture modes are refused with the valid values named; nothing changes.
  for (int bad : {-1, 3}) {
    try {
      c.set_recording({false, bad});
      FAIL("capture_mode " << bad << " was accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("capture_mode") != std::string::npos);
      CHECK(std::string(e.what()).find("relaxed") != std::string::npos);
    }
  }
  CHECK(c.recording().conditional == initial.conditional);
  CHECK(c.recording().capture_mode == initial.capture_mode);

  c.set_recording({false, 2});
  CHECK_FALSE(c.recording().conditional);
  CHECK(c.recording().capture_mode == 2);
  if constexpr (conditional) {
    c.set_recording({true, 1});
    CHECK(c.recording().conditional);
    CHECK(c.recording().capture_mode == 1);
  } else {
    CHECK_THROWS_AS(c.set_recording({true, 0}), std::invalid_argument);
    CHECK_FALSE(c.recording().conditional);
  }
  // Calls still work after a change.
  CHECK_NOTHROW(c.regenerate(nullptr, true, stream.get()));
  CHECK(c.copy_tracks(stream.get()).episode[0] == 1u);
}

}  // namespace tg_test

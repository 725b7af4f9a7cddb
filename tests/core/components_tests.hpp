#pragma once
/// @file
/// The parts of a course used on their own (docs/architecture.md): a track_batch written by a standalone
/// generator holds the same tracks, bit for bit, as a course with the same parameters, a masked
/// generate() rebuilds only the masked envs, and a standalone progress_tracker over that batch
/// steps to the same progress as the course. Templated over the backend; instantiated in
/// components_test.cpp (host) and components_test.cu (CUDA).

#include "../geometry/backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace tg_test {

/// Every array of two track snapshots, bit for bit (each field named on failure).
inline void check_same_tracks(const track_gen::track_snapshot& a, const track_gen::track_snapshot& b) {
#define TG_TEST_SAME(name, type, ext, doc) CHECK_MESSAGE(same_bytes(a.name, b.name), "tracks." #name " differs");
  TRACK_GEN_TRACK_FIELDS(TG_TEST_SAME)
#undef TG_TEST_SAME
}

/// Every progress array of two snapshots, bit for bit (each field named on failure).
inline void check_same_progress(const track_gen::progress_snapshot& a, const track_gen::progress_snapshot& b) {
#define TG_TEST_SAME(name, type, ext, doc) CHECK_MESSAGE(same_bytes(a.name, b.name), "progress." #name " differs");
  TRACK_GEN_PROGRESS_FIELDS(TG_TEST_SAME)
#undef TG_TEST_SAME
}

static_assert(std::is_trivially_copyable_v<track_gen::track_batch_ref>, "track_batch_ref is passed by value into kernels");
static_assert(std::is_trivially_copyable_v<track_gen::progress_tracker_ref>,
              "progress_tracker_ref is passed by value into kernels");

TEST_CASE_TEMPLATE_DEFINE("generator + track_batch + progress_tracker on their own equal a course, bit for bit", Policy,
                          standalone_parts) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const int envs = scaled(256, 8, 16);
  tg::track_params p = tg::presets::track(envs);
  p.seed = 21;
  const float spacing = 0.6f;

  tg::course<tg::presets::track_pipeline, Policy> course(p, spacing, stream.get());
  tg::track_batch<Policy> batch(envs, p.num_samples, tg::generator<tg::presets::track_pipeline, Policy>::max_gates(p, spacing),
                                stream.get());
  tg::generator<tg::presets::track_pipeline, Policy> gen(p, spacing, batch, stream.get());
  gen.generate(nullptr, false, stream.get());
  check_same_tracks(course.copy_tracks(stream.get()), batch.copy(0, envs, stream.get()));

  // A masked generation moves only the masked envs to their next episode, as the course does.
  std::vector<std::int32_t> mask(static_cast<std::size_t>(envs), 0);
  for (int e = 0; e < envs; e += 5) mask[static_cast<std::size_t>(e)] = 1;
  typename B::template buffer<std::int32_t> device_mask(mask);
  gen.generate(device_mask.get(), true, stream.get());
  course.regenerate(device_mask.get(), true, stream.get());
  const tg::track_snapshot after = batch.copy(0, envs, stream.get());
  check_same_tracks(course.copy_tracks(stream.get()), after);
  for (int e = 0; e < envs; ++e) CHECK(after.episode[static_cast<std::size_t>(e)] == (e % 5 == 0 ? 1u : 0u));

  // The tracker over the standalone batch (reset at construction) follows agents as the course does.
  tg::progress_tracker<Policy> tracker(batch, p.gate_half_height, stream.get());
  std::vector<float3> positions(static_cast<std::size_t>(envs));
  typename B::template buffer<float3> device_positions(positions);
  course.bind(device_positions.get());
  tracker.bind(device_positions.get());
  for (int s = 0; s < 12; ++s) {
    for (int e = 0; e < envs; ++e) {
      const std::size_t k = after.sample_index(e, (7 * s + e) % p.num_samples);
      positions[static_cast<std::size_t>(e)] = after.position[k];
    }
    device_positions.upload(positions);
    course.step(stream.get());
    tracker.step(stream.get());
  }
  const tg::progress_snapshot a = course.copy_progress(stream.get());
  const tg::progress_snapshot b = tracker.copy(stream.get());
  check_same_progress(a, b);
  int moved = 0;
  for (int e = 0; e < envs; ++e) moved += a.gates_passed[static_cast<std::size_t>(e)] > 0 ? 1 : 0;
  CHECK(moved > 0);  // the comparison covers gates passed, not only positions

  // A tracker reset puts the masked envs back at the start line and leaves the others.
  tracker.reset(device_mask.get(), stream.get());
  const tg::progress_snapshot c = tracker.copy(stream.get());
  for (int e = 0; e < envs; ++e) {
    const std::size_t i = static_cast<std::size_t>(e);
    if (e % 5 == 0) {
      CHECK(c.gates_passed[i] == 0);
      CHECK(c.flags[i] == 0u);
      CHECK(c.next_gate[i] == (after.num_gates[i] > 1 ? 1 : 0));
    } else {
      CHECK(c.gates_passed[i] == b.gates_passed[i]);
      CHECK(c.hint[i] == b.hint[i]);
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("a generator given a tracker's reset_hook resets the envs it rebuilds, as a course does", Policy,
                          generator_with_reset_hook) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  using tracker_type = tg::progress_tracker<Policy>;
  using generator_type = tg::generator<tg::presets::track_pipeline, Policy, typename tracker_type::reset_hook_type>;
  typename B::stream_holder stream;
  const int envs = scaled(128, 8, 16);
  tg::track_params p = tg::presets::track(envs);
  p.seed = 33;
  const float spacing = 0.6f;

  tg::course<tg::presets::track_pipeline, Policy> course(p, spacing, stream.get());
  tg::track_batch<Policy> batch(envs, p.num_samples, generator_type::max_gates(p, spacing), stream.get());
  // Built over the empty batch, before any generate: the hook's resets make that order safe.
  tracker_type tracker(batch, p.gate_half_height, tg::gate_layout::even, stream.get());
  generator_type gen(p, spacing, batch, tracker.reset_hook(), stream.get());
  gen.generate(nullptr, false, stream.get());
  check_same_tracks(course.copy_tracks(stream.get()), batch.copy(0, envs, stream.get()));
  check_same_progress(course.copy_progress(stream.get()), tracker.copy(stream.get()));

  std::vector<float3> positions(static_cast<std::size_t>(envs));
  typename B::template buffer<float3> device_positions(positions);
  course.bind(device_positions.get());
  tracker.bind(device_positions.get());
  // Agents on the centreline, 5 samples further each step (about 0.7 m at N = 256): both the
  // course and the tracker see them pass gates.
  const auto drive = [&](int steps, int round) {
    const tg::track_snapshot t = batch.copy(0, envs, stream.get());
    for (int s = 0; s < steps; ++s) {
      for (int e = 0; e < envs; ++e)
        positions[static_cast<std::size_t>(e)] = t.position[t.sample_index(e, (5 * s + 3 * e + round) % p.num_samples)];
      device_positions.upload(positions);
      course.step(stream.get());
      tracker.step(stream.get());
    }
  };
  drive(20, 0);
  const tg::progress_snapshot before = tracker.copy(stream.get());
  check_same_progress(course.copy_progress(stream.get()), before);
  int passed = 0;
  for (const int g : before.gates_passed) passed += g;
  CHECK(passed > 0);  // the comparison covers gates passed, not only projections

  // A masked regeneration rebuilds and resets the masked envs only, in the generator's kernel.
  std::vector<std::int32_t> mask(static_cast<std::size_t>(envs), 0);
  for (int e = 1; e < envs; e += 3) mask[static_cast<std::size_t>(e)] = 1;
  typename B::template buffer<std::int32_t> device_mask(mask);
  gen.generate(device_mask.get(), true, stream.get());
  course.regenerate(device_mask.get(), true, stream.get());
  check_same_tracks(course.copy_tracks(stream.get()), batch.copy(0, envs, stream.get()));
  const tg::progress_snapshot reset = tracker.copy(stream.get());
  check_same_progress(course.copy_progress(stream.get()), reset);
  for (int e = 0; e < envs; ++e) {
    const std::size_t i = static_cast<std::size_t>(e);
    if (mask[i] != 0) {
      CHECK(reset.gates_passed[i] == 0);
      CHECK(reset.flags[i] == 0u);
    } else {
      CHECK(reset.gates_passed[i] == before.gates_passed[i]);
      CHECK(reset.hint[i] == before.hint[i]);
    }
  }
  drive(20, 7);
  check_same_progress(course.copy_progress(stream.get()), tracker.copy(stream.get()));
}

TEST_CASE_TEMPLATE_DEFINE("a generator refuses a batch of another shape, naming both", Policy, generator_target_shape) {
  namespace tg = track_gen;
  typename backend<Policy>::stream_holder stream;
  tg::track_params p = tg::presets::track(8);
  tg::track_batch<Policy> small(8, p.num_samples, 2, stream.get());
  using gen_t = tg::generator<tg::presets::track_pipeline, Policy>;
  CHECK_THROWS_WITH_AS(gen_t(p, 0.6f, small, stream.get()), doctest::Contains("gate slots"), std::invalid_argument);
  tg::track_batch<Policy> other(9, p.num_samples, gen_t::max_gates(p, 0.6f), stream.get());
  CHECK_THROWS_AS(gen_t(p, 0.6f, other, stream.get()), std::invalid_argument);
}

}  // namespace tg_test

#pragma once
/// @file
/// Determinism of generation (docs/generators.md): a track depends only on (seed, global env id,
/// episode), not on the batch it is generated in; masked regeneration touches nothing but the
/// masked envs, bit for bit; regeneration without advance rebuilds the same track. Templated
/// over the backend; instantiated in determinism_test.cpp (host) and .cu (CUDA).

#include "backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <string>
#include <vector>

namespace tg_test {

template <class Policy>
using track_course = track_gen::course<track_gen::presets::track_pipeline, Policy>;

/// Whether two progress snapshots agree, bit for bit, on env e.
inline bool same_progress(const track_gen::progress_snapshot& a, const track_gen::progress_snapshot& b, std::size_t e) {
  return a.next_gate[e] == b.next_gate[e] && a.laps[e] == b.laps[e] && a.gates_passed[e] == b.gates_passed[e] &&
         a.hint[e] == b.hint[e] && std::memcmp(&a.lap_progress[e], &b.lap_progress[e], sizeof(float)) == 0 &&
         std::memcmp(&a.lateral[e], &b.lateral[e], sizeof(float)) == 0 &&
         std::memcmp(&a.last_position[e], &b.last_position[e], sizeof(float3)) == 0 && a.flags[e] == b.flags[e];
}

TEST_CASE_TEMPLATE_DEFINE("env 17, seed 42, episode 3 is the same in a batch of 1 and a batch of 4096", Policy,
                          determinism_batch) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const float spacing = 0.6f;

  tg::track_params one = tg::presets::track(1);
  one.seed = 42;
  one.env_offset = 17;
  tg::track_params many = tg::presets::track(scaled(4096, 16, 64));
  many.seed = 42;

  track_course<Policy> single(one, spacing, stream.get());
  track_course<Policy> batch(many, spacing, stream.get());
  REQUIRE(single.max_gates() == batch.max_gates());
  const tg::track_snapshot first = batch.copy_tracks(stream.get());
  for (int i = 0; i < 3; ++i) {
    single.regenerate(nullptr, true, stream.get());
    batch.regenerate(nullptr, true, stream.get());
  }
  const tg::track_snapshot a = single.copy_tracks(stream.get());
  const tg::track_snapshot b = batch.copy_tracks(stream.get());
  CHECK(a.episode[0] == 3u);
  CHECK(b.episode[17] == 3u);
  std::string why;
  CHECK_MESSAGE(same_env(a, 0, b, 17, &why), ("differs in " + why));
  // And episode 3 is a new track, not episode 0's (positions differ).
  CHECK_FALSE(same_bytes(first.position, b.position, first.sample_index(17, 0), first.sample_index(18, 0)));
}

TEST_CASE_TEMPLATE_DEFINE("masked regeneration changes only the masked env; advance=false rebuilds bit for bit", Policy,
                          determinism_masked) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const int envs = scaled(4096, 16, 64);
  const std::size_t count = static_cast<std::size_t>(envs);
  tg::track_params p = tg::presets::track(envs);
  p.seed = 42;
  const float spacing = 0.6f;
  track_course<Policy> c(p, spacing, stream.get());
  const tg::track_snapshot t0 = c.copy_tracks(stream.get());

  // Give every env a non-trivial progress state first: two steps near samples 3 and 9.
  std::vector<float3> pos(count);
  typename B::template buffer<float3> positions(pos);
  c.bind(positions.get());
  for (const int k : {3, 9}) {
    for (std::size_t e = 0; e < count; ++e) {
      const float3 q = t0.position[t0.sample_index(static_cast<int>(e), k)];
      const float3 nl = t0.normal[t0.sample_index(static_cast<int>(e), k)];
      pos[e] = float3{q.x + 0.05f * nl.x, q.y + 0.05f * nl.y, q.z};
    }
    positions.upload(pos);
    c.step(stream.get());
  }
  const tg::progress_snapshot g0 = c.copy_progress(stream.get());
  REQUIRE((g0.flags[4] & tg::progress_flags::has_last) != 0u);

  // Mask env 3 only, advance: env 3 moves to episode 1, nothing else changes.
  std::vector<std::int32_t> only3(count, 0);
  only3[3] = 1;
  typename B::template buffer<std::int32_t> mask(only3);
  c.regenerate(mask.get(), true, stream.get());
  const tg::track_snapshot t1 = c.copy_tracks(stream.get());
  const tg::progress_snapshot g1 = c.copy_progress(stream.get());
  int changed = 0;
  for (int e = 0; e < envs; ++e) {
    if (e == 3) continue;
    if (!same_env(t0, e, t1, e) || !same_progress(g0, g1, static_cast<std::size_t>(e))) ++changed;
  }
  CHECK(changed == 0);
  // The whole sample arrays outside env 3's slice, bit for bit (env 4 included).
  const std::size_t s3 = t0.sample_index(3, 0), s4 = t0.sample_index(4, 0);
  CHECK(same_bytes(t0.position, t1.position, 0, s3));
  CHECK(same_bytes(t0.position, t1.position, s4, t0.position.size()));
  CHECK(same_bytes(t0.curvature, t1.curvature, s4, t0.curvature.size()));
  CHECK(t1.episode[3] == 1u);
  CHECK(t1.episode[4] == 0u);
  CHECK_FALSE(same_bytes(t0.position, t1.position, s3, s4));  // a new track for env 3
  // Env 3's progress is reset to the start line.
  CHECK(g1.next_gate[3] == (t1.num_gates[3] > 1 ? 1 : 0));
  CHECK(g1.laps[3] == 0);
  CHECK(g1.gates_passed[3] == 0);
  CHECK(g1.flags[3] == 0u);
  // And env 3's episode-1 track is the one a batch of 1 at env_offset 3 builds for episode 1.
  {
    tg::track_params one = p;
    one.num_envs = 1;
    one.env_offset = 3;
    track_course<Policy> single(one, spacing, stream.get());
    single.regenerate(nullptr, true, stream.get());
    std::string why;
    CHECK_MESSAGE(same_env(single.copy_tracks(stream.get()), 0, t1, 3, &why), ("differs in " + why));
  }

  // advance = false on every env: the same tracks, bit for bit, and every progress reset.
  c.regenerate(nullptr, false, stream.get());
  const tg::track_snapshot t2 = c.copy_tracks(stream.get());
  const tg::progress_snapshot g2 = c.copy_progress(stream.get());
  int rebuilt_differently = 0, not_reset = 0;
  for (int e = 0; e < envs; ++e) {
    if (!same_env(t1, e, t2, e)) ++rebuilt_differently;
    const std::size_t u = static_cast<std::size_t>(e);
    if (g2.next_gate[u] != (t2.num_gates[u] > 1 ? 1 : 0) || g2.laps[u] != 0 || g2.gates_passed[u] != 0 || g2.flags[u] != 0u)
      ++not_reset;
  }
  CHECK(rebuilt_differently == 0);
  CHECK(not_reset == 0);

  // advance = false through a mask: env 5 rebuilt, the same bytes everywhere.
  std::vector<std::int32_t> only5(count, 0);
  only5[5] = 7;  // any nonzero value selects
  mask.upload(only5);
  c.regenerate(mask.get(), false, stream.get());
  const tg::track_snapshot t3 = c.copy_tracks(stream.get());
  int differ = 0;
  for (int e = 0; e < envs; ++e) differ += !same_env(t2, e, t3, e);
  CHECK(differ == 0);
  CHECK(t3.episode[5] == 0u);
}


/// Envs of a mask selecting `count` of `envs` spread over the batch (every envs/count-th).
inline std::vector<std::int32_t> spread_mask(int envs, int count) {
  std::vector<std::int32_t> m(static_cast<std::size_t>(envs), 0);
  for (int i = 0; i < count; ++i) m[static_cast<std::size_t>(static_cast<long long>(i) * envs / count)] = 1;
  return m;
}

TEST_CASE_TEMPLATE_DEFINE("a masked regeneration builds the whole batch's tracks, bit for bit, at every count", Policy,
                          determinism_shapes) {
  // The CUDA backend builds a few listed envs with wide blocks (Tuning::latency_block_threads),
  // many with narrow ones, and the whole batch with generate_kernel: the counts below fall on
  // both sides of the wide grid's size on any GPU (at most blocks resident at once: 396 on an
  // H200), and each selected env must equal the whole batch's next episode.
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const int envs = scaled(4096, 32, 64);
  tg::track_params p = tg::presets::track(envs);
  p.seed = 11;
  const float spacing = 0.6f;
  track_course<Policy> whole(p, spacing, stream.get());
  whole.regenerate(nullptr, true, stream.get());
  const tg::track_snapshot next = whole.copy_tracks(stream.get());
  for (const int count : {1, 7, envs / 8, envs / 2, envs - 1}) {
    CAPTURE(count);
    track_course<Policy> c(p, spacing, stream.get());
    const tg::track_snapshot before = c.copy_tracks(stream.get());
    const std::vector<std::int32_t> m = spread_mask(envs, count);
    typename B::template buffer<std::int32_t> mask(m);
    c.regenerate(mask.get(), true, stream.get());
    const tg::track_snapshot after = c.copy_tracks(stream.get());
    int wrong = 0, first_wrong = -1;
    std::string why;
    for (int e = 0; e < envs; ++e) {
      const bool selected = m[static_cast<std::size_t>(e)] != 0;
      const bool ok = selected ? same_env(next, e, after, e, first_wrong < 0 ? &why : nullptr) : same_env(before, e, after, e);
      if (!ok && first_wrong < 0) first_wrong = e;
      wrong += ok ? 0 : 1;
    }
    CHECK_MESSAGE(wrong == 0, "first differing env " << first_wrong << " (" << why << ")");
  }
}

}  // namespace tg_test

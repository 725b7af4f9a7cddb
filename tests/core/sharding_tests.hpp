#pragma once
/// @file
/// Sharding (issue 18, the part one machine can check): G courses holding the shards of E envs
/// (track_gen::shard_params: env_offset = first global id of the rank) hold, env for env and bit
/// for bit, the tracks of one course of all E envs, after construction and after masked
/// regenerations whose masks select the same global ids (with and without advance). Templated
/// over the backend; applied in sharding_test.cpp (host) and .cu (CUDA).

#include "geometry/backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tg_test {

/// Whether global env `id` is done in round `round`: about one env in five, a different set each
/// round (a multiplicative hash of the id; independent of how the envs are sharded).
inline bool done_in_round(std::uint32_t id, int round) {
  return ((id * 2654435761u) >> (7 + round)) % 5u == 0u;
}

TEST_CASE_TEMPLATE_DEFINE("G sharded courses hold the tracks of one course of all their envs, bit for bit, through "
                          "masked regenerations",
                          Policy, sharded_courses) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  using course_type = tg::course<tg::presets::track_pipeline, Policy>;
  typename B::stream_holder stream;
  const int total = scaled(1000, 60);
  const float spacing = 0.6f;
  tg::track_params params = tg::presets::track(total);
  params.seed = 42;
  params.num_samples = 64;
  params.env_offset = 7;  // the whole batch starts at global id 7: shards keep that base

  for (const int world : {1, 2, 3, 4, 7}) {
    CAPTURE(world);
    std::vector<std::unique_ptr<course_type>> ranks;
    std::vector<tg::shard> shards;
    for (int r = 0; r < world; ++r) {
      shards.push_back(tg::shard_of(total, world, r, params.env_offset));
      ranks.push_back(std::make_unique<course_type>(tg::shard_params(params, total, world, r), spacing, stream.get()));
    }
    // One course of all the envs, at episode 0 like the shards.
    course_type reference(params, spacing, stream.get());
    const int rounds = 3;
    for (int round = 0; round <= rounds; ++round) {
      CAPTURE(round);
      if (round > 0) {
        const bool advance = round != 2;  // round 2 rebuilds the same episode
        std::vector<std::int32_t> mask(static_cast<std::size_t>(total));
        for (int e = 0; e < total; ++e)
          mask[static_cast<std::size_t>(e)] = done_in_round(params.env_offset + static_cast<std::uint32_t>(e), round) ? 1 : 0;
        typename B::template buffer<std::int32_t> whole_mask(mask);
        reference.regenerate(whole_mask.get(), advance, stream.get());
        for (int r = 0; r < world; ++r) {
          const tg::shard& s = shards[static_cast<std::size_t>(r)];
          std::vector<std::int32_t> part(static_cast<std::size_t>(s.num_envs));
          for (int e = 0; e < s.num_envs; ++e) part[static_cast<std::size_t>(e)] = done_in_round(s.first + static_cast<std::uint32_t>(e), round) ? 1 : 0;
          typename B::template buffer<std::int32_t> rank_mask(part);
          ranks[static_cast<std::size_t>(r)]->regenerate(rank_mask.get(), advance, stream.get());
        }
        stream.sync();
      }
      const tg::track_snapshot a = reference.copy_tracks(stream.get());
      int checked = 0;
      for (int r = 0; r < world; ++r) {
        const tg::shard& s = shards[static_cast<std::size_t>(r)];
        const tg::track_snapshot b = ranks[static_cast<std::size_t>(r)]->copy_tracks(stream.get());
        for (int e = 0; e < s.num_envs; ++e) {
          const int global_index = static_cast<int>(s.first - params.env_offset) + e;  // index in the whole batch
          std::string why;
          if (!same_env(a, global_index, b, e, &why)) {
            FAIL_CHECK("rank " << r << " env " << e << " (global id " << s.first + static_cast<std::uint32_t>(e)
                               << ") differs from the whole batch in " << why);
          }
          ++checked;
        }
      }
      CHECK(checked == total);  // the shards cover every env once
    }
    // Something changed over the rounds: the masked envs moved on (episode > 0), the others not.
    const tg::track_snapshot last = reference.copy_tracks(stream.get());
    int moved = 0;
    for (int e = 0; e < total; ++e) moved += last.episode[static_cast<std::size_t>(e)] > 0u ? 1 : 0;
    CHECK(moved > 0);
    CHECK(moved < total);
  }
}

}  // namespace tg_test

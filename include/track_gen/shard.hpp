#pragma once
/// @file
/// Sharding a batch of environments over several processes (one per GPU: torchrun, Isaac Lab's
/// multi-GPU mode). Every track is keyed on its global env id (`track_params::env_offset + e`),
/// so a rank that builds the envs of its shard with `env_offset = shard.first` gets, bit for
/// bit, the tracks the same envs have in one batch of all of them on one GPU (see
/// tests/core/sharding_test.cpp), through any sequence of masked regenerations whose masks
/// select the same global ids.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/param_ranges.hpp>
#include <track_gen/params.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace track_gen {

/// The envs of one rank: global ids [first, first + num_envs).
struct shard {
  std::uint32_t first = 0;  ///< global id of the rank's env 0: its track_params::env_offset
  int num_envs = 0;         ///< envs of this rank: its track_params::num_envs
};

/// Rank `rank`'s share of `total_envs` envs with global ids [base, base + total_envs), split over
/// `world_size` ranks in rank order: the first total_envs % world_size ranks get one env more
/// than the others, so shards differ by at most one env and cover every id once. Host only.
/// @throws std::invalid_argument naming the argument and its valid range: world_size < 1; rank
///   outside [0, world_size); total_envs < world_size (every rank needs an env); a shard of more
///   envs than track_params.num_envs allows (2^30, docs/parameters.md); base + total_envs - 1 >
///   2^32 - 1 (global ids are uint32).
inline shard shard_of(std::int64_t total_envs, int world_size, int rank, std::uint32_t base = 0) {
  if (world_size < 1)
    throw std::invalid_argument("track_gen: shard_of: world_size = " + std::to_string(world_size) + ", expected >= 1");
  if (rank < 0 || rank >= world_size)
    throw std::invalid_argument("track_gen: shard_of: rank = " + std::to_string(rank) + ", expected in [0, " +
                                std::to_string(world_size - 1) + "] (world_size = " + std::to_string(world_size) + ")");
  if (total_envs < world_size)
    throw std::invalid_argument("track_gen: shard_of: total_envs = " + std::to_string(total_envs) +
                                ", expected >= world_size = " + std::to_string(world_size) + " (one env per rank at least)");
  const std::int64_t last_id = static_cast<std::int64_t>(base) + total_envs - 1;
  if (last_id > static_cast<std::int64_t>(UINT32_MAX))
    throw std::invalid_argument("track_gen: shard_of: base + total_envs - 1 = " + std::to_string(last_id) +
                                ", expected <= 2^32 - 1 = 4294967295 (global env ids are uint32)");
  const std::int64_t per = total_envs / world_size, extra = total_envs % world_size;
  const std::int64_t count = per + (rank < extra ? 1 : 0);
  const std::int64_t first = static_cast<std::int64_t>(base) + rank * per + (rank < extra ? rank : extra);
  const auto max_envs = static_cast<std::int64_t>(detail::range_of(detail::param::num_envs).max);
  if (count > max_envs)
    throw std::invalid_argument("track_gen: shard_of: rank " + std::to_string(rank) + " would hold " +
                                std::to_string(count) + " envs, more than track_params.num_envs allows (at most " +
                                std::to_string(max_envs) + ", docs/parameters.md); use more ranks");
  return shard{static_cast<std::uint32_t>(first), static_cast<int>(count)};
}

/// `params` for rank `rank`: num_envs and env_offset of shard_of(total_envs, world_size, rank,
/// params.env_offset); every other field as given (the same seed on every rank).
/// @throws std::invalid_argument as shard_of.
inline track_params shard_params(track_params params, std::int64_t total_envs, int world_size, int rank) {
  const shard s = shard_of(total_envs, world_size, rank, params.env_offset);
  params.num_envs = s.num_envs;
  params.env_offset = s.first;
  return params;
}

}  // namespace track_gen

#pragma once
/// @file
/// Counter-based random numbers for generation: Random123's Philox-4x32-10 (Salmon et al.,
/// "Parallel random numbers: as easy as 1, 2, 3", SC'11), identical on host and device.

#include <track_gen/detail/config.hpp>

#include <Random123/philox.h>

#include <cstdint>

namespace track_gen {

/// Four uniform floats in [0, 1).
struct uniform4 {
  float v[4];
};

/// The random stream of one (seed, global env id, episode, attempt, stage): draws are indexed,
/// so any thread may take any draw in any order and get the same numbers on any backend.
///
/// Key = the 64-bit seed; counter = (global env id, episode, attempt << 16 | stage, draw index).
class philox_stream {
 public:
  TRACK_GEN_HD philox_stream(std::uint64_t seed, std::uint32_t global_env, std::uint32_t episode,
                             std::uint32_t attempt, std::uint32_t stage)
      : key_{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}},
        env_(global_env),
        episode_(episode),
        tag_((attempt << 16) | (stage & 0xffffu)) {}

  /// The 4 raw 32-bit words of draw number `draw`.
  TRACK_GEN_HD r123::Philox4x32::ctr_type raw(std::uint32_t draw) const {
    r123::Philox4x32 gen;
    r123::Philox4x32::ctr_type ctr = {{env_, episode_, tag_, draw}};
    return gen(ctr, key_);
  }
  /// Draw number `draw` as four floats uniform in [0, 1) (24 random bits each).
  TRACK_GEN_HD uniform4 uniform(std::uint32_t draw) const {
    const auto r = raw(draw);
    uniform4 u;
    for (int i = 0; i < 4; ++i) u.v[i] = static_cast<float>(r[i] >> 8) * (1.0f / 16777216.0f);
    return u;
  }

 private:
  r123::Philox4x32::key_type key_;
  std::uint32_t env_, episode_, tag_;
};

}  // namespace track_gen

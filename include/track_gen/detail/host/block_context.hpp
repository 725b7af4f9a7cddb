#pragma once
/// @file
/// The host backend's block context: one "thread" that runs every loop of a stage
/// sequentially; barriers are no-ops and collectives are identities. Its members are marked
/// __host__ __device__ only so that the shared stage templates compile under nvcc.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/launch_protocol.hpp>

#include <cstdint>

namespace track_gen::detail {

struct host_block_context : launch_protocol<host_block_context> {
  TRACK_GEN_HD static constexpr int size() { return 1; }
  TRACK_GEN_HD int rank() const { return 0; }
  TRACK_GEN_HD void sync() const {}
  TRACK_GEN_HD float reduce_max(float v) const { return v; }
  TRACK_GEN_HD float reduce_min(float v) const { return v; }
  /// Both maxima at once (cuda_block_context::reduce_max_pair): one thread, so a and b.
  TRACK_GEN_HD float2 reduce_max_pair(float a, float b, int) const { return float2{a, b}; }
  /// The block's OR (cuda_block_context::reduce_or): one thread, so v.
  TRACK_GEN_HD std::uint32_t reduce_or(std::uint32_t v, int) const { return v; }
  TRACK_GEN_HD bool all(bool v) const { return v; }
  TRACK_GEN_HD bool any(bool v) const { return v; }
  /// In-place inclusive prefix sum of data[0, n), with the rounding of the CUDA context of the
  /// 64-thread generation blocks (launch_protocol.hpp, scan_tile): per tile of 64, pair sums,
  /// the warp's shuffle steps over them, each pair finished from the pairs before it; the
  /// tiles' totals carried in double.
  TRACK_GEN_HD void inclusive_sum(float* data, int n) const {
    constexpr int lanes = scan_tile / 2;
    double carry = 0.0;  // a long sequential float sum drifts (1.8e-5 of L over 2000 points)
    for (int base = 0; base < n; base += scan_tile) {
      float a[scan_tile];
      float pairs[lanes];
      for (int k = 0; k < scan_tile; ++k) a[k] = base + k < n ? data[base + k] : 0.0f;
      for (int j = 0; j < lanes; ++j) pairs[j] = a[2 * j] + a[2 * j + 1];
      // Step `offset`: lane j adds lane j - offset's value from before the step (descending j
      // reads it before it changes).
      for (int offset = 1; offset < lanes; offset *= 2)
        for (int j = lanes - 1; j >= offset; --j) pairs[j] = pairs[j - offset] + pairs[j];
      for (int j = 0; j < lanes; ++j) {
        const float out0 = j == 0 ? a[0] : pairs[j - 1] + a[2 * j];
        const float out1 = out0 + a[2 * j + 1];
        if (base + 2 * j < n) data[base + 2 * j] = static_cast<float>(carry + out0);
        if (base + 2 * j + 1 < n) data[base + 2 * j + 1] = static_cast<float>(carry + out1);
      }
      carry += pairs[lanes - 1];
    }
  }
};

}  // namespace track_gen::detail

#pragma once
/// @file
/// The host backend's block context: one "thread" that runs every loop of a stage
/// sequentially; barriers are no-ops and collectives are identities. Its members are marked
/// __host__ __device__ only so that the shared stage templates compile under nvcc.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/launch_protocol.hpp>

namespace track_gen::detail {

struct host_block_context : launch_protocol<host_block_context> {
  TRACK_GEN_HD static constexpr int size() { return 1; }
  TRACK_GEN_HD int rank() const { return 0; }
  TRACK_GEN_HD void sync() const {}
  TRACK_GEN_HD float reduce_max(float v) const { return v; }
  TRACK_GEN_HD float reduce_min(float v) const { return v; }
  TRACK_GEN_HD bool all(bool v) const { return v; }
  TRACK_GEN_HD bool any(bool v) const { return v; }
  /// In-place inclusive prefix sum of data[0, n).
  TRACK_GEN_HD void inclusive_sum(float* data, int n) const {
    double acc = 0.0;  // a long sequential float sum drifts (1.8e-5 of L over 2000 points)
    for (int i = 0; i < n; ++i) {
      acc += data[i];
      data[i] = static_cast<float>(acc);
    }
  }
};

}  // namespace track_gen::detail

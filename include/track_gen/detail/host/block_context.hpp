#pragma once
/// @file
/// The host backend's block context: one "thread" that runs every loop of a stage
/// sequentially; barriers are no-ops and collectives are identities.

#include <track_gen/detail/config.hpp>

namespace track_gen::detail {

struct host_block_context {
  static constexpr int size() { return 1; }
  int rank() const { return 0; }
  void sync() const {}
  float reduce_max(float v) const { return v; }
  float reduce_min(float v) const { return v; }
  bool all(bool v) const { return v; }
  bool any(bool v) const { return v; }
  /// In-place inclusive prefix sum of data[0, n).
  void inclusive_sum(float* data, int n) const {
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) {
      acc += data[i];
      data[i] = acc;
    }
  }
};

}  // namespace track_gen::detail

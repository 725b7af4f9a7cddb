#pragma once
/// @file
/// The step kernel: one thread advances one environment's progress.

#include <track_gen/course_ref.hpp>

namespace track_gen::detail {

template <int BlockThreads>
__global__ void __launch_bounds__(BlockThreads) step_kernel(const course_ref ref, const float3* positions) {
  const int e = static_cast<int>(blockIdx.x) * BlockThreads + static_cast<int>(threadIdx.x);
  if (e < ref.num_envs()) ref.step(e, positions[e]);
}

}  // namespace track_gen::detail

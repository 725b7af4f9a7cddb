#pragma once
/// @file
/// The step kernel: one thread advances one environment's progress.

#include <track_gen/course_ref.hpp>

namespace track_gen::detail {

/// `resident`: the course's view in device memory (written once at construction). Each thread
/// copies it instead of taking the view as a kernel argument: course_ref::step is a member
/// function, and a member call on a kernel argument addresses parameter space, which read out
/// of bounds (compute-sanitizer memcheck, H200, CUDA 13.0) when the kernel ran in a WHILE body.
template <int BlockThreads, int MinBlocksPerSm>
__global__ void __launch_bounds__(BlockThreads, MinBlocksPerSm) step_kernel(const course_ref* resident, const float3* positions) {
  const int e = static_cast<int>(blockIdx.x) * BlockThreads + static_cast<int>(threadIdx.x);
  const course_ref ref = *resident;
  if (e < ref.num_envs()) ref.step(e, positions[e]);
}

}  // namespace track_gen::detail

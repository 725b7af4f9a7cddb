#pragma once
/// @file
/// The progress kernels: the step (one thread advances one environment's progress; the O(N)
/// searches of a warp are shared by its 32 lanes, progress_tracker_ref::step_warp) and the reset.

#include <track_gen/env_mask.hpp>

namespace track_gen::detail {

/// `resident`: the tracker's view in device memory (written once at construction). Each thread
/// copies it instead of taking the view as a kernel argument: step is a member function, and a
/// member call on a kernel argument addresses parameter space, which read out of bounds
/// (compute-sanitizer memcheck, H200, CUDA 13.0) when the kernel ran in a WHILE body.
///
/// step_warp instead of step: with one thread per O(N) search, the first step after
/// regenerating every env of 1M took 6.4 ms against 0.245 ms for a usual step (ncu, H200).
/// BlockThreads is a multiple of 32 (policy.hpp), so every warp is full; lanes past the last
/// env take part in the shuffles only.
template <class Ref, int BlockThreads, int MinBlocksPerSm>
__global__ void __launch_bounds__(BlockThreads, MinBlocksPerSm) step_kernel(const Ref* resident, const float3* positions) {
  const int e = static_cast<int>(blockIdx.x) * BlockThreads + static_cast<int>(threadIdx.x);
  const Ref ref = *resident;
  const bool active = e < ref.num_envs();
  ref.step_warp(e, active ? positions[e] : f3(0.0f, 0.0f, 0.0f), active);
}

/// Thread e resets env e's progress when its mask entry is nonzero.
template <class Ref>
__global__ void reset_kernel(const Ref* resident, env_mask mask) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const Ref ref = *resident;
  if (e < ref.num_envs() && mask[e]) ref.reset(e);
}

}  // namespace track_gen::detail

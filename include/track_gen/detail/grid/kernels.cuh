#pragma once
/// @file
/// Kernels of the grid launch context (grid_scope.hpp): one sample per thread over several
/// blocks per track, the reduction of the active flags, and the one-thread kernels that set the
/// conditions of WHILE and IF nodes.

#include <track_gen/detail/config.hpp>
#include <track_gen/grid_scope.hpp>

#include <cstdint>

namespace track_gen::detail {

/// Block (e, y) runs `f(e, i)` for i = y * BlockThreads + thread when env e is active; an
/// inactive env's blocks exit at once (the exact no-op of a window that is not needed).
template <class F, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads) grid_for_each_kernel(const std::int32_t* active, const F f) {
  const int e = static_cast<int>(blockIdx.x);
  if (active[e] == 0) return;
  f(e, static_cast<int>(blockIdx.y) * BlockThreads + static_cast<int>(threadIdx.x));
}

/// End of a window: an active env stays active while its residual reached `tolerance`; the
/// residual restarts at 0; `*any` (cleared before) is set when some env stays active.
template <int BlockThreads>
__global__ void __launch_bounds__(BlockThreads) grid_update_active_kernel(grid_samples s, float tolerance) {
  bool still = false;
  for (int e = static_cast<int>(blockIdx.x) * BlockThreads + static_cast<int>(threadIdx.x); e < s.num_envs;
       e += static_cast<int>(gridDim.x) * BlockThreads) {
    if (s.active[e] == 0) continue;
    const bool keep = s.residual[e] >= tolerance;
    s.active[e] = keep ? 1 : 0;
    s.residual[e] = 0.0f;
    still = still || keep;
  }
  if (__syncthreads_or(still ? 1 : 0) != 0 && threadIdx.x == 0) *s.any_active = 1;
}

/// Before a WHILE node: the window counter restarts and the condition is whether any env is
/// active (`*any`, from any_of_mask_kernel) and at least one window is allowed.
template <int Unused = 0>
__global__ void grid_loop_start_kernel(cudaGraphConditionalHandle handle, const int* any, int* windows, int max_windows) {
  *windows = 0;
  cudaGraphSetConditional(handle, (*any != 0 && max_windows > 0) ? 1u : 0u);
}

/// Last node of a WHILE body: counts the window and runs another while an env is active and the
/// bound allows it.
template <int Unused = 0>
__global__ void grid_loop_next_kernel(cudaGraphConditionalHandle handle, const int* any, int* windows, int max_windows) {
  const int done = *windows + 1;
  *windows = done;
  cudaGraphSetConditional(handle, (*any != 0 && done < max_windows) ? 1u : 0u);
}

/// Before an IF node of skip_unless: the condition is `*flag != 0` (the flag is left as it is).
template <int Unused = 0>
__global__ void grid_set_if_kernel(cudaGraphConditionalHandle handle, const int* flag) {
  cudaGraphSetConditional(handle, *flag != 0 ? 1u : 0u);
}

}  // namespace track_gen::detail

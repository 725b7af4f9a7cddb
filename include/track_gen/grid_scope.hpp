#pragma once
/// @file
/// Scopes of a stage's loops and what a grid-scope stage works on.
///
/// A stage runs at `scope::block` (the default: inside the fused generation kernel, one block per
/// track, loops through the block context's `skip_unless` / `bounded_loop`) or at `scope::grid`
/// (several blocks per track, each window of iterations a launch). A pipeline holds at most one
/// grid-scope stage, after the stage that produces the dense centreline (stages::catmull_rom):
///
///  1. the fused kernel runs every block-scope stage (the grid stage skipped) with the bounded
///     attempt loop and the fallback, and leaves the accepted attempt's dense samples of each
///     random track in `grid_samples::buffer[0]` (env e's samples at `e * capacity`);
///  2. when `GridStage::runs(batch_params)`, `GridStage::run(ctx, samples, batch_params)` (host
///     code) relaxes them through the grid launch context `ctx` (a stage also provides
///     `TRACK_GEN_HD static bool enabled(batch, env_params)`: whether env e takes part):
///     - `ctx.for_each_sample(samples, f)`: `f(e, i)` for every active env e and sample slot
///       i in [0, capacity) (the functor checks i < count[e]); on the GPU one launch of
///       (num_envs x ceil(capacity / 256)) blocks, so a track spans several blocks.
///       `f` must be trivially copyable with a `TRACK_GEN_HD void operator()(int, int) const`,
///       and should hold values the kernel never takes the address of (no reference to one of
///       its members, no member array indexed at run time): measured on the H200 with CUDA 13.0,
///       a functor that returned a reference to its own `track_params` member read out of
///       bounds inside a WHILE body (compute-sanitizer memcheck; cudaErrorLaunchFailure in one
///       run), while the same functor holding only values was clean.
///     - `ctx.bounded_loop(max_windows, samples, tolerance, window)`: BOUNDED loop; `window(ctx)`
///       records one window of iterations, an even number of Jacobi sweeps (buffer 0 -> 1 -> 0):
///       the finish kernel reads buffer 0, so a window that ends in buffer 1 loses its last
///       sweep (nothing can check this for a user stage); after it, every active env whose residual (see
///       `raise_residual`) stayed below `tolerance` becomes inactive, and the loop stops when no
///       env is active or after `max_windows` windows. Under `skip::conditional`, when the
///       stream is capturing, it is one WHILE conditional node whose body holds the window, the
///       reduction of the active flags and a one-thread kernel that counts windows (device
///       counter) and sets the condition; otherwise (`skip::unconditional`, or an eager call)
///       `max_windows` windows are recorded and inactive envs' blocks exit at once, an exact
///       no-op. Either way each env goes through the same iterations, bit for bit.
///     - `ctx.skip_unless(flag, body)`: `body(ctx)` only when the device int `*flag` is nonzero
///       (an IF conditional node under `skip::conditional` when capturing; otherwise `body`
///       runs and its kernels must be no-ops when there is nothing to do). The host backend
///       reads the flag directly.
///  3. a second fused kernel takes the relaxed samples of every env the stage moved as a dense
///     polyline and runs the stages after the grid stage (resample, frames, checkpoints,
///     validate); a track that fails is rebuilt as it was before the stage (same random
///     streams) and gets `status::relax_rejected`, one that passes gets `status::relaxed`.
///
/// User tracks and fallback tracks skip the grid stage. stages::dense_repulsive is the stage
/// the library ships (presets::long_track uses it); examples/grid_plugin_stage.hpp is a
/// user-written one (`ease_corners`). The stage's kernels are loaded when the construction runs
/// the stage eagerly, before any capture.

#include <track_gen/detail/config.hpp>
#include <track_gen/params.hpp>

#include <cstdint>
#include <cstring>

namespace track_gen {

namespace scope {
/// The stage's loops run inside the fused generation kernel, one block per track.
struct block {};
/// The stage runs between two fused kernels, several blocks per track, its bounded loops as
/// windows of launches under the policy's skip rule (grid_scope.hpp).
struct grid {};
}  // namespace scope

/// The dense centreline samples a grid-scope stage relaxes, with per-env loop state. Trivially
/// copyable; every pointer is in the backend's memory (device memory with backend::cuda).
struct grid_samples {
  /// Two buffers of `num_envs * capacity` samples [m]; a window starts and ends in buffer[0]
  /// (an even number of iterations, each reading one buffer and writing the other).
  float3* buffer[2];
  const int* count;            ///< [E] samples of env e (<= capacity)
  const float* spacing;        ///< [E] mean distance between consecutive samples [m]
  std::int32_t* active;        ///< [E] nonzero: env e still iterates
  float* residual;             ///< [E] largest residual of the window (>= 0) [m]
  std::int32_t* moved;         ///< [E] set to 1 when the stage changed env e's samples
  int* any_active;             ///< device flag: some env is still active (loop condition)
  int* windows;                ///< device counter of the windows run (skip::conditional)
  const track_params* variants;     ///< per-env parameter sets (null: the batch's)
  const std::int32_t* env_variant;  ///< [E] index into variants
  int num_envs;
  int capacity;

  /// Env e's first sample in buffer b (0 or 1). A select, not an index: a kernel argument
  /// indexed at run time would be addressed.
  TRACK_GEN_HD float3* samples(int b, int e) const {
    return (b == 0 ? buffer[0] : buffer[1]) + static_cast<std::size_t>(e) * static_cast<std::size_t>(capacity);
  }
  /// Env e's parameters: its variant, or `batch`.
  TRACK_GEN_HD const track_params& params_of(int e, const track_params& batch) const {
    return variants != nullptr ? variants[env_variant[e]] : batch;
  }
  /// Raises env e's residual to at least r (r >= 0; NaN is ignored). Any thread may call it.
  TRACK_GEN_HD void raise_residual(int e, float r) const {
    if (!(r > 0.0f)) return;
#if defined(__CUDA_ARCH__)
    // Non-negative floats order like their bit patterns as signed ints.
    atomicMax(reinterpret_cast<int*>(residual + e), __float_as_int(r));
#else
    if (r > residual[e]) residual[e] = r;
#endif
  }
};

}  // namespace track_gen

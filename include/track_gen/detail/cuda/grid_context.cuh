#pragma once
/// @file
/// The grid launch context of the CUDA backend (grid_scope.hpp): windows as launches, under a
/// WHILE conditional node when the skip policy is conditional and the stream is capturing.

#include <track_gen/detail/capture/conditional.cuh>
#include <track_gen/detail/generate/kernels.cuh>
#include <track_gen/detail/grid/kernels.cuh>
#include <track_gen/grid_scope.hpp>

#include <algorithm>

namespace track_gen::detail {

/// Threads per block of the flag reductions (any_of_mask_kernel, grid_update_active_kernel).
inline constexpr int reduction_threads = 256;

/// Blocks of a grid-stride reduction over `n` items (`threads` per block, at most 1024 blocks).
inline unsigned reduction_blocks(int n, int threads) {
  return static_cast<unsigned>(std::min<long long>((static_cast<long long>(n) + threads - 1) / threads, 1024));
}

/// Launches any_of_mask_kernel on `stream`: `*flag` becomes 1 when some of `values[0, n)` is
/// nonzero (the caller clears it first).
inline void launch_any_of(env_mask values, int n, int* flag, cudaStream_t stream) {
  constexpr int threads = reduction_threads;
  any_of_mask_kernel<threads><<<reduction_blocks(n, threads), threads, 0, stream>>>(values, n, flag);
  throw_on_cuda_error(cudaGetLastError(), "launching the any-of kernel");
}

/// How a course records its launches: whether masked work and bounded loops become conditional
/// nodes when the stream is capturing, the body streams for them, and the capture mode of the
/// bodies.
struct cuda_launch_setup {
  bool conditional = false;
  const body_stream_set* bodies = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
};

template <int BlockThreads>
class cuda_grid_context {
 public:
  cuda_grid_context(cudaStream_t stream, const cuda_launch_setup& setup) : stream_(stream), setup_(setup) {
    conditional_ = setup.conditional && setup.bodies != nullptr && query_capture(stream).active();
  }

  /// The stream the context records on (a body stream inside a conditional node).
  cudaStream_t stream() const { return stream_; }

  /// `f(e, i)` for every active env e and i in [0, capacity): one launch of
  /// (num_envs x ceil(capacity / BlockThreads)) blocks.
  template <class F>
  void for_each_sample(const grid_samples& s, const F& f) const {
    const dim3 grid(static_cast<unsigned>(s.num_envs), static_cast<unsigned>((s.capacity + BlockThreads - 1) / BlockThreads));
    grid_for_each_kernel<F, BlockThreads><<<grid, BlockThreads, 0, stream_>>>(s.active, f);
    throw_on_cuda_error(cudaGetLastError(), "launching a grid-scope stage's kernel");
  }

  /// BOUNDED loop of windows (grid_scope.hpp). Asynchronous; never reads a flag back.
  template <class Window>
  void bounded_loop(int max_windows, const grid_samples& s, float tolerance, Window&& window) {
    if (max_windows <= 0) return;
    if (!conditional_) {
      for (int w = 0; w < max_windows; ++w) {
        window(*this);
        update_active(stream_, s, tolerance);
      }
      return;
    }
    throw_on_cuda_error(cudaMemsetAsync(s.any_active, 0, sizeof(int), stream_), "cudaMemsetAsync (grid loop flag)");
    launch_any_of(s.active, s.num_envs, s.any_active, stream_);
    record_conditional(
        stream_, cudaGraphCondTypeWhile, *setup_.bodies, setup_.mode,
        [&](cudaGraphConditionalHandle handle, cudaStream_t st) {
          grid_loop_start_kernel<><<<1, 1, 0, st>>>(handle, s.any_active, s.windows, max_windows);
        },
        [&](cudaStream_t body, cudaGraphConditionalHandle handle) {
          cuda_grid_context inner(body, setup_);
          window(inner);
          throw_on_cuda_error(cudaMemsetAsync(s.any_active, 0, sizeof(int), body), "cudaMemsetAsync (grid loop flag)");
          update_active(body, s, tolerance);
          grid_loop_next_kernel<><<<1, 1, 0, body>>>(handle, s.any_active, s.windows, max_windows);
          throw_on_cuda_error(cudaGetLastError(), "launching the WHILE condition kernel");
        });
  }

  /// `body(ctx)` only when the device int `*flag` is nonzero (grid_scope.hpp).
  template <class Body>
  void skip_unless(const int* flag, Body&& body) {
    if (!conditional_) {
      body(*this);
      return;
    }
    record_conditional(
        stream_, cudaGraphCondTypeIf, *setup_.bodies, setup_.mode,
        [&](cudaGraphConditionalHandle handle, cudaStream_t st) { grid_set_if_kernel<><<<1, 1, 0, st>>>(handle, flag); },
        [&](cudaStream_t inner_stream, cudaGraphConditionalHandle) {
          cuda_grid_context inner(inner_stream, setup_);
          body(inner);
        });
  }

 private:
  static void update_active(cudaStream_t st, const grid_samples& s, float tolerance) {
    constexpr int threads = reduction_threads;
    grid_update_active_kernel<threads><<<reduction_blocks(s.num_envs, threads), threads, 0, st>>>(s, tolerance);
    throw_on_cuda_error(cudaGetLastError(), "launching the active-flag reduction");
  }

  cudaStream_t stream_;
  cuda_launch_setup setup_;
  bool conditional_ = false;
};

}  // namespace track_gen::detail

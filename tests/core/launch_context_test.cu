// CUDA block context: bounded_loop and skip_unless over a block of 128 threads whose threads
// stay active for different numbers of windows.
#include <doctest/doctest.h>

#include "launch_context_cases.hpp"

#include <track_gen/detail/cuda/block_context.cuh>

namespace {
constexpr int threads = 128;

__global__ void windows_kernel(int base, int max_windows, int* windows, int* bodies, bool skip_flag) {
  __shared__ typename track_gen::detail::cuda_block_context<threads>::TempStorage temp;
  const track_gen::detail::cuda_block_context<threads> ctx{temp};
  const int w = launch_context_cases::run_windows(ctx, base, max_windows, bodies, skip_flag);
  windows[threadIdx.x] = w;
}

void check_case(int base, int max_windows, bool skip_flag, int expected_bodies) {
  int *windows = nullptr, *bodies = nullptr;
  REQUIRE(cudaMalloc(&windows, threads * sizeof(int)) == cudaSuccess);
  REQUIRE(cudaMalloc(&bodies, sizeof(int)) == cudaSuccess);
  REQUIRE(cudaMemset(bodies, 0, sizeof(int)) == cudaSuccess);
  windows_kernel<<<1, threads>>>(base, max_windows, windows, bodies, skip_flag);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  int host[threads];
  int host_bodies = -1;
  REQUIRE(cudaMemcpy(host, windows, sizeof(host), cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaMemcpy(&host_bodies, bodies, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
  const int expected = launch_context_cases::expected_windows(threads, base, max_windows);
  for (int t = 0; t < threads; ++t) CHECK(host[t] == expected);  // block-uniform
  CHECK(host_bodies == expected_bodies);
  cudaFree(windows);
  cudaFree(bodies);
}
}  // namespace

TEST_CASE("CUDA block context: bounded_loop runs while any thread is active, at most max_windows") {
  check_case(2, 100, true, 1);   // the longest thread (t % 7 == 6) sets the count: 8 windows
  check_case(2, 5, false, 0);    // capped at max_windows; no skip body
  check_case(0, 3, true, 1);     // thread 0 is never active, others are
}

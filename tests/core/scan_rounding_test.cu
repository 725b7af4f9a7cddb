// The CUDA block context's inclusive_sum at 64 threads per block (cub::BlockScan itself) and at
// 128, 256 and 1024 threads in the 64-thread order (one tile per warp) equals the host
// context's bit for bit (launch_protocol.hpp, scan_tile): the wide blocks of a masked
// regeneration build the 64-thread blocks' tracks.
#include <doctest/doctest.h>

#include "scan_rounding_cases.hpp"

#include <track_gen/detail/cuda/block_context.cuh>

#include <cstring>

namespace {

template <int Threads, int ScanThreads>
__global__ void scan_kernel(float* data, int n) {
  using context = track_gen::detail::cuda_block_context<Threads, ScanThreads>;
  __shared__ typename context::TempStorage temp;
  const context ctx{temp};
  ctx.inclusive_sum(data, n);
}

template <int Threads, int ScanThreads = Threads>
std::vector<float> device_sums(const std::vector<float>& in) {
  float* data = nullptr;
  const std::size_t bytes = in.size() * sizeof(float);
  REQUIRE(cudaMalloc(&data, bytes) == cudaSuccess);
  REQUIRE(cudaMemcpy(data, in.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  scan_kernel<Threads, ScanThreads><<<1, Threads>>>(data, static_cast<int>(in.size()));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<float> out(in.size());
  REQUIRE(cudaMemcpy(out.data(), data, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  cudaFree(data);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("CUDA block context: inclusive_sum in the 64-thread order equals the host context's at every block size") {
  for (const int n : scan_rounding_cases::lengths) {
    CAPTURE(n);
    const std::vector<float> in = scan_rounding_cases::inputs(n, static_cast<std::uint32_t>(n));
    const std::vector<float> host = scan_rounding_cases::host_sums(in);
    CHECK(same_bits(device_sums<64>(in), host));
    CHECK(same_bits(device_sums<128, 64>(in), host));
    CHECK(same_bits(device_sums<256, 64>(in), host));
    CHECK(same_bits(device_sums<1024, 64>(in), host));
    CHECK(scan_rounding_cases::worst_relative_error(in, host) <= 9.0 * 5.97e-8);
  }
}

#pragma once
// The extension's own kernel: the 0/1 event columns of Course.step() in one launch after the
// course's step (instead of a few elementwise torch ops per column).
#include <track_gen/collision.hpp>
#include <track_gen/status.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace track_gen_python {

/// Thread e: passed[e] = gate_passed bit of flags[e], wrong_way[e] = its wrong_way bit, and when
/// `oob` is not null, oob[e] = the out_of_bounds bit of contact_flags[e]. Device pointers, [n].
__global__ void step_bits_kernel(const std::uint32_t* flags, const std::uint32_t* contact_flags, std::int32_t* passed,
                                 std::int32_t* wrong_way, std::int32_t* oob, int n) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= n) return;
  const std::uint32_t f = flags[e];
  passed[e] = (f & track_gen::progress_flags::gate_passed) != 0u ? 1 : 0;
  wrong_way[e] = (f & track_gen::progress_flags::wrong_way) != 0u ? 1 : 0;
  if (oob != nullptr) oob[e] = (contact_flags[e] & track_gen::contact_flags::out_of_bounds) != 0u ? 1 : 0;
}

/// Launches step_bits_kernel on `stream` (asynchronous; recorded when the stream is capturing).
/// @throws std::runtime_error the launch failed.
inline void launch_step_bits(const std::uint32_t* flags, const std::uint32_t* contact_flags, std::int32_t* passed,
                             std::int32_t* wrong_way, std::int32_t* oob, int n, cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int threads = 256;
  step_bits_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, stream>>>(flags, contact_flags, passed,
                                                                                               wrong_way, oob, n);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("track_gen: launching the step bits kernel: ") + cudaGetErrorString(err));
}

}  // namespace track_gen_python

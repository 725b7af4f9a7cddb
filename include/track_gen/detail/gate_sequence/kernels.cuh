#pragma once
/// @file
/// The gate-sequence kernel (gate_sequence.hpp): one thread builds one env's sequence
/// (detail::build_gate_sequence). Included by gate_sequence.hpp in translation units compiled
/// by nvcc.

#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/gate_sequence/build.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/params.hpp>
#include <track_gen/policy.hpp>

#include <cuda_runtime_api.h>

namespace track_gen::detail {

/// Threads per block of the gate-sequence kernel. A thread's anchors live in local memory
/// (two arrays of 256 float3, of which a sequence of G gates touches about 2 G): 128 threads
/// a block keep many blocks per SM without a shared-memory budget.
inline constexpr int gate_sequence_block_threads = 128;

/// Thread e builds env e's sequence when the mask selects it.
__global__ void __launch_bounds__(gate_sequence_block_threads)
    gate_sequence_kernel(const track_params params, const gate_sequence_out out, const env_mask mask, int advance) {
  const int e = static_cast<int>(blockIdx.x) * gate_sequence_block_threads + static_cast<int>(threadIdx.x);
  if (e >= out.num_envs || !mask[e]) return;
  build_gate_sequence(params, e, advance != 0, out);
}

template <>
struct gate_sequence_builder<backend::cuda> {
  /// Loads the kernel now (lazy loading would load it at its first launch, maybe in a capture).
  static void prepare() {
    cudaFuncAttributes attr{};
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, gate_sequence_kernel), "loading the gate-sequence kernel");
  }
  static void run(const track_params& p, const gate_sequence_out& out, env_mask mask, bool advance, ::cuda::stream_ref stream) {
    const unsigned blocks = static_cast<unsigned>((out.num_envs + gate_sequence_block_threads - 1) / gate_sequence_block_threads);
    gate_sequence_kernel<<<blocks, gate_sequence_block_threads, 0, stream.get()>>>(p, out, mask, advance ? 1 : 0);
    throw_on_cuda_error(cudaGetLastError(), "launching the gate-sequence kernel");
  }
};

}  // namespace track_gen::detail

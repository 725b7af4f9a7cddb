#pragma once
/// @file
/// The fused generation kernel: one block builds one environment's track, every stage in
/// shared memory.

#include <track_gen/detail/cuda/block_context.cuh>
#include <track_gen/detail/generate/generate_track.hpp>

namespace track_gen::detail {

template <class Pipeline, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads) generate_kernel(const generate_args args) {
  const int e = static_cast<int>(blockIdx.x);
  if (args.mask != nullptr && args.mask[e] == 0) return;  // uniform per block
  using context = cuda_block_context<BlockThreads>;
  __shared__ typename context::TempStorage temp;
  extern __shared__ __align__(16) unsigned char scratch[];
  context ctx{temp};
  workspace ws;
  ws.bind_scratch(scratch, args.layout);
  generate_env<Pipeline>(ctx, ws, args, e);
}

}  // namespace track_gen::detail

#pragma once
/// @file
/// The gate-sequence kernels (gate_sequence.hpp): detail::build_gate_sequence with one thread
/// per env when the batch fills the GPU, or with a group of gate_sequence_group_lanes lanes per
/// env when it does not (the same sequences, bit for bit). Included by gate_sequence.hpp in
/// translation units compiled by nvcc.

#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/gate_sequence/build.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/params.hpp>
#include <track_gen/policy.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace track_gen::detail {

/// Threads per block of both kernels.
inline constexpr int gate_sequence_block_threads = 128;
/// Lanes per env of the group kernel: a sequence's O(G^2) pair loops and per-gate work spread
/// over them (rank r takes gates r, r + 8, ...), so that a batch too small to fill the GPU with
/// one thread per env still keeps its schedulers busy.
inline constexpr int gate_sequence_group_lanes = 8;
/// Batches of at most this many envs use the group kernel (2^18: one thread per env is then
/// fewer threads than the H200's 132 SMs hold at once, 270,336).
inline constexpr int gate_sequence_group_envs = 1 << 18;

/// The lanes of one env in the group kernel: an aligned run of Lanes lanes of a warp.
template <int Lanes>
struct warp_lanes {
  unsigned mask;
  int lane;
  __device__ static constexpr int size() { return Lanes; }
  __device__ int rank() const { return lane; }
  __device__ void sync() const { __syncwarp(mask); }
  __device__ bool any(bool v) const { return __any_sync(mask, v) != 0; }
  __device__ bool all(bool v) const { return __all_sync(mask, v) != 0; }
  __device__ float max(float v) const {
    for (int offset = Lanes / 2; offset > 0; offset /= 2) v = max_f(v, __shfl_xor_sync(mask, v, offset, Lanes));
    return v;
  }
  __device__ int broadcast(int v) const { return __shfl_sync(mask, v, 0, Lanes); }
  __device__ float broadcast(float v) const { return __shfl_sync(mask, v, 0, Lanes); }
};

/// Thread e builds env e's sequence when the mask selects it (arrays on its stack).
/// (A template only so that every translation unit may define it: headers hold no plain kernels.)
template <int Unused = 0>
__global__ void __launch_bounds__(gate_sequence_block_threads)
    gate_sequence_kernel(const track_params params, const gate_sequence_out out, const env_mask mask, int advance) {
  const int e = static_cast<int>(blockIdx.x) * gate_sequence_block_threads + static_cast<int>(threadIdx.x);
  if (e >= out.num_envs || !mask[e]) return;
  build_gate_sequence(params, e, advance != 0, out);
}

/// Lanes l * G .. l * G + G - 1 of the block build env (block * threads + thread) / G, their
/// two arrays of `capacity` float3 in dynamic shared memory. A group leaves together (its env
/// and mask entry are the same for all its lanes).
/// (A template only so that every translation unit may define it: headers hold no plain kernels.)
template <int Unused = 0>
__global__ void __launch_bounds__(gate_sequence_block_threads)
    gate_sequence_group_kernel(const track_params params, const gate_sequence_out out, const env_mask mask, int advance,
                               int capacity) {
  constexpr int lanes = gate_sequence_group_lanes;
  extern __shared__ float3 gate_sequence_arrays[];
  const int thread = static_cast<int>(threadIdx.x);
  const int e = (static_cast<int>(blockIdx.x) * gate_sequence_block_threads + thread) / lanes;
  if (e >= out.num_envs || !mask[e]) return;
  const int warp_lane = thread % 32;
  const warp_lanes<lanes> grp{((1u << lanes) - 1u) << (warp_lane / lanes * lanes), warp_lane % lanes};
  float3* g = gate_sequence_arrays + static_cast<std::size_t>(thread / lanes) * 2 * capacity;
  build_gate_sequence(grp, params, e, advance != 0, out, g, g + capacity);
}

template <>
struct gate_sequence_builder<backend::cuda> {
  /// Loads both kernels now (lazy loading would load them at their first launch, maybe in a
  /// capture) and lets the group kernel take `shared_bytes` of dynamic shared memory.
  static void prepare(std::size_t shared_bytes) {
    cudaFuncAttributes attr{};
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, gate_sequence_kernel<>), "loading the gate-sequence kernel");
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, gate_sequence_group_kernel<>), "loading the gate-sequence kernel");
    if (shared_bytes > 48u * 1024u)
      throw_on_cuda_error(cudaFuncSetAttribute(gate_sequence_group_kernel<>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(shared_bytes)),
                          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize) for the gate-sequence kernel");
  }
  static void run(const track_params& p, const gate_sequence_out& out, env_mask mask, bool advance, int capacity,
                  ::cuda::stream_ref stream) {
    const long long threads = out.num_envs <= gate_sequence_group_envs
                                  ? static_cast<long long>(out.num_envs) * gate_sequence_group_lanes
                                  : static_cast<long long>(out.num_envs);
    const unsigned blocks = static_cast<unsigned>((threads + gate_sequence_block_threads - 1) / gate_sequence_block_threads);
    if (out.num_envs <= gate_sequence_group_envs) {
      gate_sequence_group_kernel<><<<blocks, gate_sequence_block_threads, shared_bytes(capacity), stream.get()>>>(
          p, out, mask, advance ? 1 : 0, capacity);
    } else {
      gate_sequence_kernel<><<<blocks, gate_sequence_block_threads, 0, stream.get()>>>(p, out, mask, advance ? 1 : 0);
    }
    throw_on_cuda_error(cudaGetLastError(), "launching the gate-sequence kernel");
  }
  /// Dynamic shared memory of a group-kernel block: two arrays of `capacity` float3 per group.
  static std::size_t shared_bytes(int capacity) {
    return static_cast<std::size_t>(gate_sequence_block_threads / gate_sequence_group_lanes) * 2u *
           static_cast<std::size_t>(capacity) * sizeof(float3);
  }
};

}  // namespace track_gen::detail

#pragma once
/// @file
/// The CUDA backend's block context: the block's threads share the loops of a stage; block
/// collectives go through CUB (BlockReduce, BlockScan) following CUB's TempStorage protocol.
/// Every collective ends with a barrier, so scratch written before it is visible after it.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/launch_protocol.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace track_gen::detail {

template <int BlockThreads>
struct cuda_block_context : launch_protocol<cuda_block_context<BlockThreads>> {
  using reduce_t = cub::BlockReduce<float, BlockThreads>;
  using scan_t = cub::BlockScan<float, BlockThreads>;

  /// Shared memory of the collectives: the phases never overlap, so they share a union.
  struct TempStorage {
    union {
      typename reduce_t::TempStorage reduce;
      typename scan_t::TempStorage scan;
    } phase;
    float broadcast;
  };

  TempStorage& temp;

  TRACK_GEN_HD explicit cuda_block_context(TempStorage& storage) : temp(storage) {}

  // The members are __host__ __device__ only so that stage templates compile for both backends;
  // they are only ever called on the device.
  TRACK_GEN_HD static constexpr int size() { return BlockThreads; }
  TRACK_GEN_HD int rank() const {
#ifdef __CUDA_ARCH__
    return static_cast<int>(threadIdx.x);
#else
    return 0;
#endif
  }
  TRACK_GEN_HD void sync() const {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
  }
  TRACK_GEN_HD float reduce_max(float v) const {
#ifdef __CUDA_ARCH__
    const float r = reduce_t(temp.phase.reduce).Reduce(v, ::cuda::maximum<>{});
    return broadcast_from_first(r);
#else
    return v;
#endif
  }
  TRACK_GEN_HD float reduce_min(float v) const {
#ifdef __CUDA_ARCH__
    const float r = reduce_t(temp.phase.reduce).Reduce(v, ::cuda::minimum<>{});
    return broadcast_from_first(r);
#else
    return v;
#endif
  }
  TRACK_GEN_HD bool all(bool v) const {
#ifdef __CUDA_ARCH__
    return __syncthreads_and(v ? 1 : 0) != 0;
#else
    return v;
#endif
  }
  TRACK_GEN_HD bool any(bool v) const {
#ifdef __CUDA_ARCH__
    return __syncthreads_or(v ? 1 : 0) != 0;
#else
    return v;
#endif
  }
  /// In-place inclusive prefix sum of data[0, n) (shared memory), one tile of BlockThreads
  /// items at a time with the running total carried across tiles.
  TRACK_GEN_HD void inclusive_sum(float* data, int n) const {
#ifdef __CUDA_ARCH__
    double carry = 0.0;  // like the host's double accumulation: long tracks do not drift
    for (int base = 0; base < n; base += BlockThreads) {
      const int i = base + static_cast<int>(threadIdx.x);
      float v = i < n ? data[i] : 0.0f;
      float tile_total;
      scan_t(temp.phase.scan).InclusiveSum(v, v, tile_total);
      if (i < n) data[i] = static_cast<float>(carry + v);
      carry += tile_total;
      __syncthreads();
    }
#else
    (void)data;
    (void)n;
#endif
  }

 private:
#ifdef __CUDA_ARCH__
  __device__ float broadcast_from_first(float r) const {
    if (threadIdx.x == 0) temp.broadcast = r;
    __syncthreads();
    const float out = temp.broadcast;
    __syncthreads();
    return out;
  }
#endif
};

}  // namespace track_gen::detail

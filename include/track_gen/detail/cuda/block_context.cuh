#pragma once
/// @file
/// The CUDA backend's block context: the block's threads share the loops of a stage; block
/// collectives go through CUB (BlockReduce, BlockScan or WarpScan) following CUB's TempStorage
/// protocol.
/// Every collective ends with a barrier, so scratch written before it is visible after it.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/launch_protocol.hpp>
#include <track_gen/detail/math.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include <cstdint>
#include <type_traits>

namespace track_gen::detail {

/// `ScanThreads`: the rounding of inclusive_sum (launch_protocol.hpp): BlockThreads, or
/// scan_tile for a block of another size.
template <int BlockThreads, int ScanThreads = BlockThreads>
struct cuda_block_context : launch_protocol<cuda_block_context<BlockThreads, ScanThreads>> {
  using reduce_t = cub::BlockReduce<float, BlockThreads>;
  static constexpr int warp_size = 32;
  static_assert(BlockThreads % warp_size == 0, "BlockThreads must be a multiple of 32 (whole warps).");
  static constexpr int warps = BlockThreads / warp_size;
  static_assert(ScanThreads == BlockThreads || ScanThreads == scan_tile,
                "A block context scans in its own block's order or in that of a 64-thread block (scan_tile).");
  /// The scan of a tile (launch_protocol.hpp): CUB's block scan when the block is the tile,
  /// otherwise one 64-element tile per warp in the order of CUB's 64-thread scan.
  using tile_scan_t = cub::BlockScan<float, BlockThreads>;
  using warp_scan_t = cub::WarpScan<float, warp_size>;

  /// Shared memory of the collectives: the phases never overlap, so they share a union.
  struct TempStorage {
    union {
      typename reduce_t::TempStorage reduce;
      // ScanThreads == BlockThreads (otherwise a placeholder: the scan below is used instead)
      std::conditional_t<ScanThreads == BlockThreads, typename tile_scan_t::TempStorage, char> tile_scan;
      struct {
        typename warp_scan_t::TempStorage warp[warps];
        float total[warps];  ///< each warp's tile total of the current round
      } scan;                // other block sizes
    } phase;
    float broadcast;
    float2 pair[2][warps];  ///< each warp's maxima of reduce_max_pair, one buffer per parity (outside the union)
    std::uint32_t bits[2][warps];  ///< each warp's OR of reduce_or, one buffer per parity (outside the union)
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
  /// The block's maxima of a and of b (max_f's comparison), in every thread, after one barrier:
  /// each warp reduces by shuffles, then every thread combines the warps' maxima in warp order.
  /// Scratch written before the call is visible after it. Calls with alternating `parity`
  /// (0, 1) need no barrier between them: a warp can be at most one call ahead of another, so
  /// it never overwrites the buffer another warp is still reading. (cub::BlockReduce over a
  /// float2 would leave the maxima in thread 0 only: a broadcast adds two more barriers.)
  TRACK_GEN_HD float2 reduce_max_pair(float a, float b, int parity) const {
#ifdef __CUDA_ARCH__
    for (int offset = warp_size / 2; offset > 0; offset /= 2) {
      a = max_f(a, __shfl_xor_sync(0xffffffffu, a, offset));
      b = max_f(b, __shfl_xor_sync(0xffffffffu, b, offset));
    }
    float2* const buffer = temp.pair[parity & 1];
    if (threadIdx.x % warp_size == 0) buffer[threadIdx.x / warp_size] = make_float2(a, b);
    __syncthreads();
    float2 r = buffer[0];
    for (int w = 1; w < warps; ++w) {
      const float2 q = buffer[w];
      r.x = max_f(r.x, q.x);
      r.y = max_f(r.y, q.y);
    }
    return r;
#else
    (void)parity;
    return float2{a, b};
#endif
  }
  /// The block's bitwise OR of v, in every thread, after one barrier (as reduce_max_pair: warp
  /// shuffles, then the warps' ORs from a buffer per parity; calls alternate `parity`).
  TRACK_GEN_HD std::uint32_t reduce_or(std::uint32_t v, int parity) const {
#ifdef __CUDA_ARCH__
    for (int offset = warp_size / 2; offset > 0; offset /= 2) v |= __shfl_xor_sync(0xffffffffu, v, offset);
    std::uint32_t* const buffer = temp.bits[parity & 1];
    if (threadIdx.x % warp_size == 0) buffer[threadIdx.x / warp_size] = v;
    __syncthreads();
    std::uint32_t r = buffer[0];
    for (int w = 1; w < warps; ++w) r |= buffer[w];
    return r;
#else
    (void)parity;
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
  /// In-place inclusive prefix sum of data[0, n) (shared memory) in tiles of ScanThreads
  /// elements, the tiles' totals carried in double, with the rounding of
  /// cub::BlockScan<float, ScanThreads> (launch_protocol.hpp).
  TRACK_GEN_HD void inclusive_sum(float* data, int n) const {
#ifdef __CUDA_ARCH__
    double carry = 0.0;  // like the host's double accumulation: long tracks do not drift
    if constexpr (ScanThreads == BlockThreads) {
      for (int base = 0; base < n; base += BlockThreads) {
        const int i = base + static_cast<int>(threadIdx.x);
        float v = i < n ? data[i] : 0.0f;
        float tile_total;
        tile_scan_t(temp.phase.tile_scan).InclusiveSum(v, v, tile_total);
        if (i < n) data[i] = static_cast<float>(carry + v);
        carry += tile_total;
        __syncthreads();
      }
    } else {
      // Warp w scans tile w of each round as the raking warp of a 64-thread block does: lane j
      // holds the pair (2j, 2j+1).
      const int lane = static_cast<int>(threadIdx.x) % warp_size;
      const int warp = static_cast<int>(threadIdx.x) / warp_size;
      for (int base = 0; base < n; base += warps * scan_tile) {
        const int i = base + warp * scan_tile + 2 * lane;
        const float a0 = i < n ? data[i] : 0.0f;
        const float a1 = i + 1 < n ? data[i + 1] : 0.0f;
        float pairs_inclusive, tile_total;
        warp_scan_t(temp.phase.scan.warp[warp]).InclusiveSum(a0 + a1, pairs_inclusive, tile_total);
        const float pairs_before = __shfl_up_sync(0xffffffffu, pairs_inclusive, 1);
        const float out0 = lane == 0 ? a0 : pairs_before + a0;
        const float out1 = out0 + a1;
        if (lane == 0) temp.phase.scan.total[warp] = tile_total;
        __syncthreads();
        double before = carry;
        for (int w = 0; w < warp; ++w) before += temp.phase.scan.total[w];
        if (i < n) data[i] = static_cast<float>(before + out0);
        if (i + 1 < n) data[i + 1] = static_cast<float>(before + out1);
        carry = before;  // every thread ends with the same sum, added in the same order
        for (int w = warp; w < warps; ++w) carry += temp.phase.scan.total[w];
        __syncthreads();
      }
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

#pragma once
/// @file
/// The kernels of a masked regeneration's compaction (select.cuh): one block that lists the
/// selected envs of a small batch and decides, on the device, which launch shape rebuilds them.

#include <track_gen/env_mask.hpp>

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

namespace track_gen::detail {

/// The conditional node, if any, around a masked regeneration's list kernels.
enum class list_node { none, if_node, switch_node };

/// Where a masked regeneration's listed envs go once they are counted: under a SWITCH node,
/// branch 0 (the wide blocks) when 0 < count <= wide_limit, branch 1 (the narrow blocks) above
/// it, no branch when nothing was selected; under an IF node, the body when count > 0. With no
/// node (an eager call or skip::unconditional) both launch shapes run and each returns unless
/// the count is its own.
struct list_condition {
  cudaGraphConditionalHandle handle;
  int wide_limit;  ///< most envs the wide blocks take (their grid); 0: one launch shape only
  list_node node;
};

/// After the count: zeroes the list kernels' work counter and sets the conditional node's value.
/// One thread calls it.
__device__ inline void finish_list(int count, int* next, const list_condition& c) {
  *next = 0;
  if (c.node == list_node::switch_node)
    cudaGraphSetConditional(c.handle, count == 0 ? 2u : (count <= c.wide_limit ? 0u : 1u));
  else if (c.node == list_node::if_node)
    cudaGraphSetConditional(c.handle, count > 0 ? 1u : 0u);
}

/// One thread, after cub::DeviceSelect::Flagged: finish_list.
template <int Unused = 0>
__global__ void list_ready_kernel(const int* count, int* next, list_condition condition) {
  finish_list(*count, next, condition);
}

/// Threads and items per thread of select_small_kernel (one tile of 4,096 mask entries), and
/// its block scan's algorithm. Measured on the H200 (graph_replay_bench, replay with no env done,
/// over the physics + step graph): 5.6 us at E = 4,096 against 6.9 us with a tile of 1024 x 16
/// and the raking scan, and 6.8 us with cub::DeviceSelect::Flagged.
inline constexpr int select_small_threads = 256;
inline constexpr int select_small_items = 16;
inline constexpr cub::BlockScanAlgorithm select_small_scan = cub::BLOCK_SCAN_WARP_SCANS;

/// The compaction of a small batch in one block (one node instead of
/// cub::DeviceSelect::Flagged's two and list_ready_kernel): ids[0, *count) = the envs e < num_envs
/// with mask[e] != 0, in env order (cub::BlockScan of the flags, tile by tile); then as
/// list_ready_kernel.
template <int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    select_small_kernel(env_mask mask, int num_envs, int* ids, int* count, int* next, list_condition condition) {
  using scan_t = cub::BlockScan<int, Threads, select_small_scan>;
  __shared__ typename scan_t::TempStorage temp;
  int listed = 0;
  for (int base = 0; base < num_envs; base += Threads * Items) {
    const int first = base + static_cast<int>(threadIdx.x) * Items;
    int flag[Items];
    int offset[Items];
#pragma unroll
    for (int k = 0; k < Items; ++k) flag[k] = first + k < num_envs && mask[first + k] ? 1 : 0;
    int tile_total = 0;
    scan_t(temp).ExclusiveSum(flag, offset, tile_total);
#pragma unroll
    for (int k = 0; k < Items; ++k)
      if (flag[k] != 0) ids[listed + offset[k]] = first + k;
    listed += tile_total;
    __syncthreads();  // the scan's storage is reused by the next tile
  }
  if (threadIdx.x == 0) {
    *count = listed;
    finish_list(listed, next, condition);
  }
}

}  // namespace track_gen::detail

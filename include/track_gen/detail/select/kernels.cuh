#pragma once
/// @file
/// The kernels of a masked regeneration's compaction (select.cuh): one block that lists the
/// selected envs of a small batch and decides, on the device, which launch shape rebuilds them.

#include <track_gen/detail/generate/ahead.hpp>
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
/// With tracks built ahead (generator::enable_ahead), the listing also chooses the stale slots
/// that the call refills (generate_ahead_kernel runs as a plain node, no conditional node).
struct list_condition {
  cudaGraphConditionalHandle handle;
  int wide_limit;  ///< most envs the wide blocks take (their grid); 0: one launch shape only
  list_node node;
  int* ahead_counters = nullptr;  ///< ahead_state::counters; null: nothing built ahead
  int ahead_refill_at = 0;        ///< ahead_state::refill_at
  const std::uint32_t* live_episode = nullptr;  ///< the batch's episodes (a listed env whose slot
  const std::uint32_t* slot_episode = nullptr;  ///< is stale makes this call refill)
};

/// Value of a SWITCH node that runs no branch (at least the number of branches).
inline constexpr unsigned list_switch_none = 2u;

/// After the count: with tracks built ahead, decides whether this call refills the stale slots
/// (at least refill_at of them, or any when a listed env's own slot is `stale`) and swaps the
/// halves of the stale list if so; zeroes the list kernels' work counter and sets the
/// conditional node's value from the work items (listed envs + refilled slots). One thread
/// calls it.
__device__ inline void finish_list(int count, bool stale, int* next, const list_condition& c) {
  *next = 0;
  const int items = count + (c.ahead_counters != nullptr ? ahead_choose_refill(c.ahead_counters, c.ahead_refill_at, stale) : 0);
  if (c.node == list_node::switch_node)
    cudaGraphSetConditional(c.handle, items == 0 ? list_switch_none : (items <= c.wide_limit ? 0u : 1u));
  else if (c.node == list_node::if_node)
    cudaGraphSetConditional(c.handle, items > 0 ? 1u : 0u);
}

/// One thread, after cub::DeviceSelect::Flagged: finish_list (listed stale slots are not looked
/// for here: they wait for refill_at).
template <int Unused = 0>
__global__ void list_ready_kernel(const int* count, int* next, list_condition condition) {
  finish_list(*count, false, next, condition);
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
  bool stale = false;
  for (int base = 0; base < num_envs; base += Threads * Items) {
    const int first = base + static_cast<int>(threadIdx.x) * Items;
    int flag[Items];
    int offset[Items];
#pragma unroll
    for (int k = 0; k < Items; ++k) flag[k] = first + k < num_envs && mask[first + k] ? 1 : 0;
    if (condition.slot_episode != nullptr) {
#pragma unroll
      for (int k = 0; k < Items; ++k)
        if (flag[k] != 0) stale = stale || condition.slot_episode[first + k] != condition.live_episode[first + k] + 1u;
    }
    int tile_total = 0;
    scan_t(temp).ExclusiveSum(flag, offset, tile_total);
#pragma unroll
    for (int k = 0; k < Items; ++k)
      if (flag[k] != 0) ids[listed + offset[k]] = first + k;
    listed += tile_total;
    __syncthreads();  // the scan's storage is reused by the next tile
  }
  if (condition.slot_episode != nullptr) stale = __syncthreads_or(stale ? 1 : 0) != 0;  // uniform
  if (threadIdx.x == 0) {
    *count = listed;
    finish_list(listed, stale, next, condition);
  }
}

}  // namespace track_gen::detail

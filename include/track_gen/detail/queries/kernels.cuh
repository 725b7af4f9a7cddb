#pragma once
/// @file
/// The batch queries' kernel (queries.hpp): one thread per env runs a per-env operation. Included
/// by queries.hpp in translation units compiled by nvcc.

#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/policy.hpp>

#include <cuda_runtime_api.h>

#include <type_traits>
#include <utility>

namespace track_gen::detail {

/// Threads per block of the query kernel: the operations are independent per env (no block
/// collectives), so any multiple of 32 works (a multiple it must be: the warp-wide forms need
/// full warps); 128 keeps small batches spread over the SMs.
inline constexpr int query_block_threads = 128;
static_assert(query_block_threads % 32 == 0, "the warp-wide forms (has_warp_form) need full warps");

/// Whether Op has a warp-wide form `op.warp(e, active)`, which every lane of a warp calls
/// (collide_boxes_op, course_contacts_op: the O(N) searches shared by the warp).
template <class Op, class = void>
struct has_warp_form : std::false_type {};
template <class Op>
struct has_warp_form<Op, std::void_t<decltype(std::declval<const Op&>().warp(0, true))>> : std::true_type {};

/// Whether Op has a warp-wide form with storage, `op.warp(e, active, storage)`, which every
/// lane of a warp calls with the warp's `typename Op::warp_storage` in shared memory (the box
/// contacts' samples, track_ahead_op's staged points).
template <class Op, class = void>
struct has_storage_form : std::false_type {};
template <class Op>
struct has_storage_form<Op, std::void_t<decltype(std::declval<const Op&>().warp(
                                0, true, std::declval<typename Op::warp_storage&>()))>> : std::true_type {};

/// Whether Op's warp form shares O(N) searches among the lanes (Op::shares_searches), so that
/// spreading envs over lanes shortens a warp's chain of them (warp_form_lanes_per_env).
template <class Op, class = void>
struct shares_searches : std::false_type {};
template <class Op>
struct shares_searches<Op, std::enable_if_t<has_warp_form<Op>::value && Op::shares_searches>> : std::true_type {};
// An operation that says it shares searches needs both forms: without them it would fall back
// to one thread per env unnoticed.
template <class Op>
inline constexpr bool warp_forms_complete =
    !shares_searches<Op>::value || (has_warp_form<Op>::value && has_storage_form<Op>::value);

/// Lanes of a warp given to each env by the warp-wide forms that share searches, for `count`
/// envs: the largest power of two <= min(8, 65536 / count), at least 1. A lane's O(N) searches
/// (a box corner off the road, a stale hint) are run by its whole warp, one lane's after
/// another: with 32 envs to a warp, a warp of cars off the road runs a dozen or more in a row.
/// Where the envs are few and the GPU has warps to spare, fewer envs to a warp shorten that
/// chain; where they are many, idle lanes cost throughput (docs/performance-log.md, entry 32,
/// has the measurements behind the bounds). The results do not depend on it: an O(N) search
/// gives the same bits whichever lanes share it.
inline int warp_form_lanes_per_env(int count) {
  int lanes = 1;
  while (lanes < 8 && count <= 65536 / (2 * lanes)) lanes *= 2;
  return lanes;
}

/// Thread e runs op(e) for e < count. An operation with a warp-wide form has every thread call
/// op.warp(e, active) instead (op.warp(e, active, the warp's Op::warp_storage) when
/// `WithStorage`), with no early return (query_block_threads is a multiple of 32, so every warp
/// is full): thread t serves env e = t >> lane_shift, and only the first of its 2^lane_shift
/// lanes is active (warp_form_lanes_per_env). lane_shift is 0 for the other operations.
/// The operation is copied to a local first: the step kernel found member calls on a kernel
/// argument misreading parameter space inside a WHILE body (progress/kernels.cuh); a local copy
/// is what its resident view amounts to once read.
template <class Op, bool WithStorage>
__global__ void __launch_bounds__(query_block_threads) query_kernel(const Op op, int count, int lane_shift) {
  const int t = static_cast<int>(blockIdx.x) * query_block_threads + static_cast<int>(threadIdx.x);
  if constexpr (WithStorage || has_warp_form<Op>::value) {
    const int e = t >> lane_shift;
    const bool active = ((t & ((1 << lane_shift) - 1)) == 0) && e < count;
    const Op local = op;
    if constexpr (WithStorage) {
      __shared__ typename Op::warp_storage storage[query_block_threads / 32];
      local.warp(e, active, storage[threadIdx.x / 32]);
    } else {
      local.warp(e, active);
    }
  } else {
    if (t >= count) return;
    const Op local = op;
    local(t);
  }
}

/// The CUDA backend of the batch queries: one launch of query_kernel<Op> on `stream` (recorded
/// into its capture when it is capturing).
template <>
struct query_runner<backend::cuda> {
  template <class Op>
  static void run(int count, const Op& op, ::cuda::stream_ref stream) {
    static_assert(warp_forms_complete<Op>,
                  "An operation that shares O(N) searches needs both warp forms, warp(e, active) and "
                  "warp(e, active, warp_storage&).");
    if constexpr (shares_searches<Op>::value) {
      const int lanes = warp_form_lanes_per_env(count);
      int lane_shift = 0;
      while ((1 << lane_shift) < lanes) ++lane_shift;
      // The warp storage only where each env has a lane of its own: where envs are spread over
      // lanes it costs latency that the few envs do not win back (docs/performance-log.md, 32).
      if (lanes == 1) {
        launch(query_kernel<Op, true>, count, 0, op, stream);
      } else {
        launch(query_kernel<Op, false>, count, lane_shift, op, stream);
      }
    } else {
      launch(query_kernel<Op, has_storage_form<Op>::value>, count, 0, op, stream);
    }
  }

 private:
  template <class Op>
  static void launch(void (*kernel)(Op, int, int), int count, int lane_shift, const Op& op, ::cuda::stream_ref stream) {
    // Loads the kernel now on the current device (CUDA's lazy loading would otherwise load it at
    // its first launch, which may be inside a capture); a no-op once loaded, and capture-safe.
    cudaFuncAttributes attr{};
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, kernel), "loading a batch query kernel");
    const long long threads = static_cast<long long>(count) << lane_shift;
    const unsigned blocks = static_cast<unsigned>((threads + query_block_threads - 1) / query_block_threads);
    kernel<<<blocks, query_block_threads, 0, stream.get()>>>(op, count, lane_shift);
    throw_on_cuda_error(cudaGetLastError(), "launching a batch query kernel");
  }
};

}  // namespace track_gen::detail

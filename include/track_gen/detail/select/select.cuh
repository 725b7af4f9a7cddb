#pragma once
/// @file
/// The mask compaction of a masked regeneration: the envs whose mask entry is nonzero, listed
/// and counted on the device (CUDA backend), by one block for a small batch
/// (select_small_kernel), else by cub::DeviceSelect::Flagged.

#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/select/env_selection.hpp>
#include <track_gen/detail/select/kernels.cuh>
#include <track_gen/env_mask.hpp>

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace track_gen::detail {

/// Bytes of cub::DeviceSelect::Flagged's temporary storage for a mask of `num_envs` entries
/// (the larger of the two element types').
inline std::size_t select_temp_bytes(int num_envs) {
  std::size_t wide = 0, narrow = 0;
  throw_on_cuda_error(cub::DeviceSelect::Flagged(nullptr, wide, thrust::counting_iterator<int>(0),
                                                 static_cast<const std::int32_t*>(nullptr), static_cast<int*>(nullptr),
                                                 static_cast<int*>(nullptr), num_envs),
                      "cub::DeviceSelect::Flagged (temporary storage query)");
  throw_on_cuda_error(cub::DeviceSelect::Flagged(nullptr, narrow, thrust::counting_iterator<int>(0),
                                                 static_cast<const std::uint8_t*>(nullptr), static_cast<int*>(nullptr),
                                                 static_cast<int*>(nullptr), num_envs),
                      "cub::DeviceSelect::Flagged (temporary storage query)");
  return std::max(wide, narrow);
}

/// cub::DeviceSelect::Flagged of the envs whose `mask` element is nonzero into sel.ids, the
/// count into *sel.count (asynchronous on `stream`).
inline void select_envs(const env_selection& sel, env_mask mask, int num_envs, cudaStream_t stream) {
  std::size_t bytes = sel.temp_bytes;
  const cudaError_t code =
      mask.element_bytes == 1
          ? cub::DeviceSelect::Flagged(sel.temp, bytes, thrust::counting_iterator<int>(0),
                                       static_cast<const std::uint8_t*>(mask.data), sel.ids, sel.count, num_envs, stream)
          : cub::DeviceSelect::Flagged(sel.temp, bytes, thrust::counting_iterator<int>(0),
                                       static_cast<const std::int32_t*>(mask.data), sel.ids, sel.count, num_envs, stream);
  throw_on_cuda_error(code, "cub::DeviceSelect::Flagged (compacting the mask)");
}

/// Batches of at most this many envs are listed by select_small_kernel (one node, one tile),
/// larger ones by cub::DeviceSelect::Flagged and list_ready_kernel (three nodes). At E = 16,384
/// (four tiles) the one block took 11.1 us of a replay with no env done, CUB's three nodes 7.8
/// (H200, graph_replay_bench).
inline constexpr int select_small_max_envs = select_small_threads * select_small_items;

/// Lists the envs of `mask` into sel.ids and their count into *sel.count, zeroes *sel.next and
/// sets the list's conditional node value (`condition`), asynchronous on `stream`.
inline void list_envs(const env_selection& sel, env_mask mask, int num_envs, const list_condition& condition,
                      cudaStream_t stream) {
  if (num_envs <= select_small_max_envs) {
    select_small_kernel<select_small_threads, select_small_items>
        <<<1, select_small_threads, 0, stream>>>(mask, num_envs, sel.ids, sel.count, sel.next, condition);
    throw_on_cuda_error(cudaGetLastError(), "launching the mask compaction kernel");
    return;
  }
  select_envs(sel, mask, num_envs, stream);
  list_ready_kernel<><<<1, 1, 0, stream>>>(sel.count, sel.next, condition);
  throw_on_cuda_error(cudaGetLastError(), "launching the list-ready kernel");
}

/// Runs the compaction once over a one-entry zero mask of each element type, eagerly, so that
/// CUB's kernels (and ours) are loaded at construction and never inside a capture.
inline void preload_selection(const env_selection& sel, const int* zero_flag, cudaStream_t stream) {
  cudaFuncAttributes attr{};
  throw_on_cuda_error(cudaFuncGetAttributes(&attr, select_small_kernel<select_small_threads, select_small_items>),
                      "loading the mask compaction kernel");
  throw_on_cuda_error(cudaFuncGetAttributes(&attr, list_ready_kernel<>), "loading the list-ready kernel");
  select_envs(sel, env_mask(static_cast<const std::int32_t*>(zero_flag)), 1, stream);
  select_envs(sel, env_mask(reinterpret_cast<const std::uint8_t*>(zero_flag)), 1, stream);
}

}  // namespace track_gen::detail

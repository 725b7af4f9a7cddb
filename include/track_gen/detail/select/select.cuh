#pragma once
/// @file
/// The mask compaction of a masked regeneration: cub::DeviceSelect::Flagged lists the envs
/// whose mask entry is nonzero and counts them on the device (CUDA backend).

#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/select/env_selection.hpp>
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

/// Runs the compaction once over a one-entry zero mask of each element type, eagerly, so that
/// CUB's kernels are loaded at construction and never inside a capture.
inline void preload_selection(const env_selection& sel, const int* zero_flag, cudaStream_t stream) {
  select_envs(sel, env_mask(static_cast<const std::int32_t*>(zero_flag)), 1, stream);
  select_envs(sel, env_mask(reinterpret_cast<const std::uint8_t*>(zero_flag)), 1, stream);
}

}  // namespace track_gen::detail

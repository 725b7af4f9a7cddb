#pragma once
/// @file
/// The buffers of the mask compaction that a masked regeneration runs first.

#include <cstddef>

namespace track_gen::detail {

/// The buffers of a masked regeneration's compaction (backend::cuda): the selected envs
/// `ids[0, *count)`, the grid's work counter (the next index of `ids` to take), cub::DeviceSelect's
/// temporary storage, and the blocks of the grid that rebuilds them.
struct env_selection {
  int* ids;
  int* count;
  int* next;
  void* temp;
  std::size_t temp_bytes;
  unsigned blocks;
};

}  // namespace track_gen::detail

#pragma once
/// @file
/// The buffers of the mask compaction that a masked regeneration runs first.

#include <cstddef>

namespace track_gen::detail {

/// The buffers of a masked regeneration's compaction (backend::cuda): the selected envs
/// `ids[0, *count)`, the grid's work counter (the next index of `ids` to take), cub::DeviceSelect's
/// temporary storage, and the blocks of the two grids that rebuild them: `blocks` narrow blocks
/// (Tuning::generate_block_threads), or, when at most `wide_blocks` envs are listed, that many
/// wide ones (Tuning::latency_block_threads; 0: one launch shape only).
struct env_selection {
  int* ids;
  int* count;
  int* next;
  void* temp;
  std::size_t temp_bytes;
  unsigned blocks;
  unsigned wide_blocks;
};

}  // namespace track_gen::detail

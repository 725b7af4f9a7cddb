#pragma once
/// @file
/// Included by the headers that exist only for the CUDA backend (graph.hpp, interop/torch.hpp):
/// a clear error where the CUDA runtime's headers are not visible.

#include <track_gen/detail/config.hpp>

#if !TRACK_GEN_HAS_CUDA_RUNTIME
#error "This track_gen header needs the CUDA runtime headers (the CUDA backend): compile with nvcc or put the toolkit's include directory on the path."
#endif

#pragma once
/// @file
/// Turning CUDA runtime status codes into track_gen::cuda_error.

#include <track_gen/detail/config.hpp>
#include <track_gen/errors.hpp>

#include <string>

namespace track_gen::detail {

#if TRACK_GEN_HAS_CUDA_RUNTIME
inline void throw_on_cuda_error(cudaError_t code, const char* what) {
  if (code != cudaSuccess) {
    throw cuda_error(static_cast<int>(code), std::string("track_gen: ") + what + " failed: " +
                                                 cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
  }
}
#endif

}  // namespace track_gen::detail

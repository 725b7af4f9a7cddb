#pragma once
/// @file
/// Turning CUDA runtime status codes into track_gen::cuda_error.

#include <track_gen/detail/config.hpp>
#include <track_gen/errors.hpp>

#include <string>

namespace track_gen::detail {

#if TRACK_GEN_HAS_CUDA_RUNTIME
/// Whether `code` says that a stream capture made CUDA refuse the call (this thread's capture,
/// or another thread's capture begun in cudaStreamCaptureModeGlobal) rather than that the call
/// itself was wrong.
inline bool refused_by_capture(cudaError_t code) {
  return code == cudaErrorStreamCaptureUnsupported || code == cudaErrorStreamCaptureImplicit ||
         code == cudaErrorStreamCaptureInvalidated;
}

inline void throw_on_cuda_error(cudaError_t code, const char* what) {
  if (code != cudaSuccess) {
    throw cuda_error(static_cast<int>(code), std::string("track_gen: ") + what + " failed: " +
                                                 cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
  }
}
#endif

}  // namespace track_gen::detail

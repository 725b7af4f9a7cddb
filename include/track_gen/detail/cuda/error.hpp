#pragma once
/// @file
/// Turning CUDA runtime status codes into track_gen::cuda_error (or capture_error, when a stream
/// capture made CUDA refuse the call).

#include <track_gen/detail/config.hpp>
#include <track_gen/errors.hpp>

#include <string>

namespace track_gen::detail {

#if TRACK_GEN_HAS_CUDA_RUNTIME
/// Whether `code` comes from stream capture rather than from the call itself: a capture made
/// CUDA refuse the call (this thread's capture, or another thread's begun in
/// cudaStreamCaptureModeGlobal), or the call's capture was invalidated earlier.
inline bool refused_by_capture(cudaError_t code) {
  return code == cudaErrorStreamCaptureUnsupported || code == cudaErrorStreamCaptureImplicit ||
         code == cudaErrorStreamCaptureInvalidated;
}

/// What happened and what to do, for a call that a stream capture made CUDA refuse (empty for
/// other codes). Issue 17: a course constructed while another thread held a global-mode capture
/// failed with a bare "cudaMalloc ... operation not permitted when stream is capturing".
inline std::string capture_refusal_advice(cudaError_t code) {
  if (code == cudaErrorStreamCaptureInvalidated) {
    return ". The capture this call belongs to was invalidated by an earlier error: end it with "
           "cudaStreamEndCapture, fix the failing call and capture again.";
  }
  if (!refused_by_capture(code)) return {};
  return ". A CUDA stream capture forbids this call here: either this thread is capturing (on the stream of "
         "the call or another one), or another thread holds a capture begun in cudaStreamCaptureModeGlobal "
         "(the default of cudaStreamBeginCapture and of torch.cuda.graph), which forbids allocation, frees and "
         "synchronisation on every thread of the process while it lasts; CUDA then also invalidates that "
         "other capture (its cudaStreamEndCapture returns cudaErrorStreamCaptureInvalidated). What to do: "
         "construct courses (and call copy_tracks, copy_progress, generation_launches) before any thread "
         "begins capturing; or give the course a policy with capture::relaxed or capture::thread_local_ "
         "(e.g. track_gen::policy<track_gen::capture::relaxed>), whose allocation and synchronisation "
         "other threads' captures do not forbid; or begin the other thread's capture in "
         "cudaStreamCaptureModeThreadLocal or cudaStreamCaptureModeRelaxed.";
}

/// Throws for a failed CUDA call: capture_error when a stream capture made CUDA refuse it (with
/// what happened and what to do; the thread's last-error state is cleared, the exception reports
/// it), cuda_error otherwise.
inline void throw_on_cuda_error(cudaError_t code, const char* what) {
  if (code == cudaSuccess) return;
  std::string message = std::string("track_gen: ") + what + " failed: " + cudaGetErrorName(code) + " (" +
                        cudaGetErrorString(code) + ")";
  const std::string advice = capture_refusal_advice(code);
  if (!advice.empty()) {
    (void)cudaGetLastError();
    throw capture_error(message + advice, static_cast<int>(code));
  }
  throw cuda_error(static_cast<int>(code), message);
}
#endif

}  // namespace track_gen::detail

#pragma once
/// @file
/// Stream-capture plumbing of the CUDA backend: reading a stream's capture state, guarding
/// capture-unsafe calls with the policy's capture mode, and inserting conditional nodes into a
/// capture without ending it.

#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/errors.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace track_gen::detail {

/// The capture state of a stream, with the dependency set of its capture.
struct capture_info {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  const cudaGraphEdgeData* edges = nullptr;  // asked for too, else cudaErrorLossyQuery
  std::size_t num_dependencies = 0;

  bool active() const { return status == cudaStreamCaptureStatusActive; }
};

inline capture_info query_capture(cudaStream_t stream) {
  capture_info c;
  throw_on_cuda_error(cudaStreamGetCaptureInfo(stream, &c.status, &c.id, &c.graph, &c.dependencies, &c.edges,
                                               &c.num_dependencies),
                      "cudaStreamGetCaptureInfo");
  if (c.status == cudaStreamCaptureStatusInvalidated) {
    throw capture_error(
        "track_gen: the stream's capture was invalidated by an earlier error (cudaStreamCaptureStatusInvalidated); end "
        "the capture with cudaStreamEndCapture, fix the failing call and capture again.");
  }
  return c;
}

/// Sets this thread's capture mode for the guard's lifetime (cudaThreadExchangeStreamCaptureMode),
/// around calls that are not capture-safe (allocation, free, synchronisation).
class capture_mode_guard {
 public:
  // Never throws (it is used in deleters): a failed exchange leaves the mode as it was.
  explicit capture_mode_guard(cudaStreamCaptureMode mode) noexcept : mode_(mode) {
    exchanged_ = cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess;
  }
  ~capture_mode_guard() {
    if (exchanged_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  capture_mode_guard(const capture_mode_guard&) = delete;
  capture_mode_guard& operator=(const capture_mode_guard&) = delete;

 private:
  cudaStreamCaptureMode mode_;
  bool exchanged_ = false;
};

}  // namespace track_gen::detail

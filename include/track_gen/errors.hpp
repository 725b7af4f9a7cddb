#pragma once
/// @file
/// Host-side exceptions. Device code never throws: it records status bits (status.hpp).

#include <track_gen/detail/config.hpp>

#include <stdexcept>
#include <string>

namespace track_gen {

/// A CUDA runtime call failed. `code()` is the `cudaError_t` value as an int.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  /// The `cudaError_t` value returned by the failing call.
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A call was made on a stream whose capture state does not allow it (for example an
/// allocating call on a capturing stream), or a CUDA call was refused because of a stream
/// capture (this thread's, or another thread's capture begun in cudaStreamCaptureModeGlobal).
/// The message says what happened and what to do instead.
class capture_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  /// `code`: the `cudaError_t` value of the refused CUDA call.
  capture_error(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  /// The `cudaError_t` value of the CUDA call that was refused; 0 when the library itself
  /// refused the call before making it (e.g. construction on a capturing stream).
  int code() const noexcept { return code_; }

 private:
  int code_ = 0;
};

}  // namespace track_gen

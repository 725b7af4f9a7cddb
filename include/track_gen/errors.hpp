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
/// allocating call on a capturing stream). The message says what to do instead.
class capture_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace track_gen

#pragma once
/// @file
/// The streams the library captures conditional bodies on: one per nesting depth, created
/// outside any capture, destroyed through the deferred list (lifetime.hpp).

#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/lifetime/lifetime.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <utility>

namespace track_gen::detail {

/// Nesting depth of the conditional bodies this thread is capturing for the library.
inline int& body_depth() {
  thread_local int depth = 0;
  return depth;
}

/// The conditional-body streams of one course (one per nesting depth), created outside any
/// capture. Move-only; destruction queues them for cudaStreamDestroy at the next drain.
class body_stream_set {
 public:
  /// A regenerate inside a user's conditional body (1), its IF node (2), a WHILE node of a
  /// grid-scope stage inside that (3).
  static constexpr std::size_t depth = 3;
  body_stream_set() = default;
  void create() {
    for (cudaStream_t& st : streams_)
      throw_on_cuda_error(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (body stream)");
  }
  body_stream_set(body_stream_set&& o) noexcept : streams_(std::exchange(o.streams_, {})) {}
  body_stream_set& operator=(body_stream_set&& o) noexcept {
    if (this != &o) {
      release();
      streams_ = std::exchange(o.streams_, {});
    }
    return *this;
  }
  body_stream_set(const body_stream_set&) = delete;
  body_stream_set& operator=(const body_stream_set&) = delete;
  ~body_stream_set() { release(); }
  cudaStream_t operator[](std::size_t i) const { return streams_[i]; }
  std::size_t size() const { return depth; }

 private:
  void release() noexcept {
    for (cudaStream_t& st : streams_) {
      if (st != nullptr) deferred_frees::instance().push_stream(st);
      st = nullptr;
    }
  }
  std::array<cudaStream_t, depth> streams_{};
};

}  // namespace track_gen::detail

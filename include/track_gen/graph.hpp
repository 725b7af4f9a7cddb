#pragma once
/// @file
/// CUDA graph helpers: owning `graph` / `graph_exec` types, a scoped stream capture, and
/// `retain`, which ties shared owners to a graph's lifetime. CUDA backend only (needs the CUDA
/// runtime headers; host code may include it).
///
/// Graphs that contain conditional nodes (what `skip::conditional` records) cannot be cloned
/// (cudaGraphClone) or embedded as child graphs (cudaGraphAddChildGraphNode): instantiate and
/// launch them directly.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/require_cuda_runtime.hpp>

#include <track_gen/detail/capture/query.hpp>
#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/lifetime/lifetime.hpp>
#include <track_gen/errors.hpp>

#include <memory>
#include <utility>

namespace track_gen {

class graph_exec;

/// Owning handle of a `cudaGraph_t` (destroyed with the object). Move-only. Destroying one (or a
/// graph_exec, or a scoped_capture) never breaks another thread's capture, whatever its mode.
class graph {
 public:
  graph() = default;
  /// Takes ownership of `g`.
  explicit graph(cudaGraph_t g) noexcept : g_(g) {}
  graph(graph&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  graph& operator=(graph&& o) noexcept {
    if (this != &o) {
      reset();
      g_ = std::exchange(o.g_, nullptr);
    }
    return *this;
  }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;
  ~graph() { reset(); }

  cudaGraph_t get() const noexcept { return g_; }
  /// Gives up ownership: returns the handle (the caller destroys it) and leaves this empty.
  cudaGraph_t release() noexcept { return std::exchange(g_, nullptr); }
  explicit operator bool() const noexcept { return g_ != nullptr; }
  /// Instantiates an executable graph. @throws cuda_error on failure.
  graph_exec instantiate() const;
  /// Destroys the graph (relaxed capture mode: safe while other threads capture, in any mode).
  void reset() noexcept {
    detail::destroy_graph(g_);
    g_ = nullptr;
  }

 private:
  cudaGraph_t g_ = nullptr;
};

/// Owning handle of a `cudaGraphExec_t`. Move-only.
class graph_exec {
 public:
  graph_exec() = default;
  explicit graph_exec(cudaGraphExec_t e) noexcept : e_(e) {}
  graph_exec(graph_exec&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  graph_exec& operator=(graph_exec&& o) noexcept {
    if (this != &o) {
      reset();
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  ~graph_exec() { reset(); }

  cudaGraphExec_t get() const noexcept { return e_; }
  /// Gives up ownership: returns the handle (the caller destroys it) and leaves this empty.
  cudaGraphExec_t release() noexcept { return std::exchange(e_, nullptr); }
  /// Launches the graph on `stream` (asynchronous). @throws cuda_error on failure.
  void launch(::cuda::stream_ref stream) const {
    detail::throw_on_cuda_error(cudaGraphLaunch(e_, stream.get()), "cudaGraphLaunch");
  }
  /// Destroys the executable graph in relaxed capture mode: a cudaGraphExecDestroy made in
  /// global mode while another thread holds a global-mode capture invalidates that capture
  /// (detail::destroy_graph_exec says why relaxed mode is enough).
  void reset() noexcept {
    detail::destroy_graph_exec(e_);
    e_ = nullptr;
  }

 private:
  cudaGraphExec_t e_ = nullptr;
};

inline graph_exec graph::instantiate() const {
  cudaGraphExec_t e = nullptr;
  detail::throw_on_cuda_error(cudaGraphInstantiate(&e, g_, 0), "cudaGraphInstantiate");
  return graph_exec(e);
}

/// Begins a capture on `stream` in `mode` and ends it with `end()` (or in the destructor, which
/// discards the graph). Move-only; not copyable.
class scoped_capture {
 public:
  /// @throws capture_error `stream` is already capturing. @throws cuda_error on failure.
  explicit scoped_capture(::cuda::stream_ref stream, cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal)
      : stream_(stream) {
    if (detail::query_capture(stream.get()).status != cudaStreamCaptureStatusNone)
      throw capture_error("track_gen: scoped_capture: the stream is already capturing; end that capture first");
    detail::throw_on_cuda_error(cudaStreamBeginCapture(stream.get(), mode), "cudaStreamBeginCapture");
    active_ = true;
  }
  scoped_capture(const scoped_capture&) = delete;
  scoped_capture& operator=(const scoped_capture&) = delete;
  ~scoped_capture() {
    if (active_) {
      cudaGraph_t g = nullptr;
      if (cudaStreamEndCapture(stream_.get(), &g) == cudaSuccess && g != nullptr) detail::destroy_graph(g);
      (void)cudaGetLastError();
    }
  }
  /// Ends the capture and returns the recorded graph.
  /// @throws capture_error the capture was invalidated. @throws cuda_error on other failures.
  graph end() {
    if (!active_) throw capture_error("track_gen: scoped_capture::end called twice");
    active_ = false;
    cudaGraph_t g = nullptr;
    const cudaError_t code = cudaStreamEndCapture(stream_.get(), &g);
    if (code == cudaErrorStreamCaptureInvalidated)
      throw capture_error("track_gen: scoped_capture::end: the capture was invalidated by a call made during it");
    detail::throw_on_cuda_error(code, "cudaStreamEndCapture");
    return graph(g);
  }
  ::cuda::stream_ref stream() const { return stream_; }

 private:
  ::cuda::stream_ref stream_;
  bool active_ = false;
};

/// Ties `owners` (shared owners, e.g. `course::owner()`) to `g`: they stay alive until `g`
/// and every executable graph instantiated from it are destroyed. Idempotent per owner; null
/// owners are ignored. The references are dropped on a CUDA-internal thread, where nothing but
/// a queue push happens (the memory is freed at the next library call outside a capture).
/// @throws cuda_error on failure.
template <class... Owners>
void retain(cudaGraph_t g, const Owners&... owners) {
  (detail::retain_on_graph(g, std::shared_ptr<const void>(owners)), ...);
}

}  // namespace track_gen

#pragma once
/// @file
/// Lifetime anchoring of device memory to CUDA graphs (ownership::anchored), the deferred
/// free list, and capture-safe destruction of graph handles.
///
/// A graph stores raw device pointers. Each capture that records library work gets a CUDA user
/// object (cudaUserObjectCreate + cudaGraphRetainUserObject) holding a shared reference on the
/// buffers it reads and writes, so the graph, and every executable graph instantiated from it,
/// keeps them alive. CUDA runs a user object's destructor at an unspecified time on an internal
/// thread, where no CUDA call is allowed: the last reference only queues the pointer here, and
/// the queue is drained by the next library call made outside any capture, and at exit (an
/// atexit handler that first waits, briefly, for destructors CUDA has not run yet).

#include <track_gen/detail/capture/query.hpp>
#include <track_gen/detail/cuda/error.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace track_gen::detail {

/// Process-wide queue of device allocations whose last owner went away.
class deferred_frees {
 public:
  static deferred_frees& instance() {
    static deferred_frees* q = new deferred_frees();  // never destroyed: usable during static teardown
    return *q;
  }
  /// Queues `ptr` (cudaMalloc'd) for cudaFree. Makes no CUDA call: safe in user-object destructors.
  void push(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(ptr);
  }
  /// Queues a library-owned stream for cudaStreamDestroy.
  void push_stream(cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.push_back(stream);
  }
  /// Queues an executable graph for cudaGraphExecDestroy (destroy_graph_exec, when the destroy
  /// was refused).
  void push_graph_exec(cudaGraphExec_t exec) {
    std::lock_guard<std::mutex> lock(mutex_);
    execs_.push_back(exec);
  }
  /// Queues a graph for cudaGraphDestroy (destroy_graph, when the destroy was refused).
  void push_graph(cudaGraph_t graph) {
    std::lock_guard<std::mutex> lock(mutex_);
    graphs_.push_back(graph);
  }
  /// Frees what is queued. A call refused because another thread holds a global-mode capture
  /// (prohibited, so not performed) leaves the entry queued for a later drain.
  void drain() {
    std::vector<void*> todo;
    std::vector<cudaStream_t> todo_streams;
    std::vector<cudaGraphExec_t> todo_execs;
    std::vector<cudaGraph_t> todo_graphs;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pending_.empty() && streams_.empty() && execs_.empty() && graphs_.empty()) return;
      todo.swap(pending_);
      todo_streams.swap(streams_);
      todo_execs.swap(execs_);
      todo_graphs.swap(graphs_);
    }
    std::vector<void*> kept;
    std::vector<cudaStream_t> kept_streams;
    std::vector<cudaGraphExec_t> kept_execs;
    std::vector<cudaGraph_t> kept_graphs;
    // Relaxed mode for these calls, whatever the policy: measured on an H200 (CUDA 13.0,
    // tests/graph/concurrent_capture_test.cu), a cudaFree made in global mode while another
    // thread holds a global-mode capture is refused AND invalidates that capture; made in
    // thread-local or relaxed mode it runs and the other capture stays valid.
    capture_mode_guard relaxed(cudaStreamCaptureModeRelaxed);
    for (void* p : todo) {
      if (cudaFree(p) != cudaSuccess) {
        (void)cudaGetLastError();
        kept.push_back(p);
      }
    }
    for (cudaStream_t st : todo_streams) {
      if (cudaStreamDestroy(st) != cudaSuccess) {
        (void)cudaGetLastError();
        kept_streams.push_back(st);
      }
    }
    // Graph handles stay queued only while a capture refuses their destruction.
    for (cudaGraphExec_t e : todo_execs) {
      const cudaError_t code = cudaGraphExecDestroy(e);
      if (code != cudaSuccess) {
        (void)cudaGetLastError();
        if (refused_by_capture(code)) kept_execs.push_back(e);
      }
    }
    for (cudaGraph_t g : todo_graphs) {
      const cudaError_t code = cudaGraphDestroy(g);
      if (code != cudaSuccess) {
        (void)cudaGetLastError();
        if (refused_by_capture(code)) kept_graphs.push_back(g);
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.insert(pending_.end(), kept.begin(), kept.end());
    streams_.insert(streams_.end(), kept_streams.begin(), kept_streams.end());
    execs_.insert(execs_.end(), kept_execs.begin(), kept_execs.end());
    graphs_.insert(graphs_.end(), kept_graphs.begin(), kept_graphs.end());
  }
  /// Allocations still queued.
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_.size();
  }
  /// Executable graphs and graphs still queued.
  std::size_t graphs_queued() {
    std::lock_guard<std::mutex> lock(mutex_);
    return execs_.size() + graphs_.size();
  }
  /// Counts the user objects alive (created, destructor not run yet). The first one registers
  /// the exit handler: after the CUDA runtime's own (the library made CUDA calls before), so it
  /// runs before the runtime unloads; and only on this CUDA path, so that host-only programs
  /// never reference the runtime.
  void anchor_created() {
    static const bool registered = std::atexit(&deferred_frees::at_exit) == 0;
    (void)registered;
    ++live_anchors_;
  }
  void anchor_destroyed() { --live_anchors_; }

 private:
  deferred_frees() = default;
  /// CUDA runs user-object destructors on its own thread, possibly after the graph that held
  /// them was destroyed and after the program's last library call: wait for the device and
  /// then up to 200 ms for the destructors (objects of graphs still alive at exit never come),
  /// and free what they queued.
  static void at_exit() {
    deferred_frees& q = instance();
    if (q.live_anchors_.load() > 0) {
      (void)cudaDeviceSynchronize();
      (void)cudaGetLastError();
      for (int i = 0; i < 200 && q.live_anchors_.load() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    q.drain();
  }
  std::atomic<int> live_anchors_{0};
  std::mutex mutex_;
  std::vector<void*> pending_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaGraphExec_t> execs_;
  std::vector<cudaGraph_t> graphs_;
};

// Destruction of the graph handles (graph.hpp) in relaxed capture mode. Issue 17: a
// cudaGraphExecDestroy made in global mode (every thread's default) while another thread holds
// a capture begun in cudaStreamCaptureModeGlobal invalidated that capture (H200, CUDA 13.0), as
// a global-mode cudaFree does (see drain). CUDA's rule (cudaThreadExchangeStreamCaptureMode in
// cuda_runtime_api.h): in global mode, while any other thread has a global-mode capture, a
// thread "is prohibited from potentially unsafe API calls" (measured: such a call is refused and
// the other capture is invalidated); in relaxed mode "the local thread is not prohibited from
// potentially unsafe API calls", only from those "which necessarily conflict with stream
// capture" (the header's example: cudaEventQuery on an event last recorded inside a capture).
// CUDA does not list the potentially unsafe calls; destroying a graph or an executable graph
// that no capture records into conflicts with no capture, so relaxed mode is the documented way
// to make the call. Should CUDA still refuse it because of a capture, the handle is queued and
// destroyed by the next drain (the next library call outside a capture, or exit), as frees are.

/// Destroys `exec` now (relaxed capture mode); queues it for the next drain if a capture made
/// CUDA refuse. Never throws; safe while any thread of the process captures, in any mode.
inline void destroy_graph_exec(cudaGraphExec_t exec) noexcept {
  if (exec == nullptr) return;
  capture_mode_guard relaxed(cudaStreamCaptureModeRelaxed);
  const cudaError_t code = cudaGraphExecDestroy(exec);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    if (refused_by_capture(code)) deferred_frees::instance().push_graph_exec(exec);
  }
}

/// Destroys `graph` now (relaxed capture mode); queues it for the next drain if a capture made
/// CUDA refuse. Never throws; safe while any thread of the process captures, in any mode.
inline void destroy_graph(cudaGraph_t graph) noexcept {
  if (graph == nullptr) return;
  capture_mode_guard relaxed(cudaStreamCaptureModeRelaxed);
  const cudaError_t code = cudaGraphDestroy(graph);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    if (refused_by_capture(code)) deferred_frees::instance().push_graph(graph);
  }
}

/// Which (graph, owner) pairs already hold a user object, so that `retain` is idempotent.
/// Entries leave when CUDA destroys the user object (the graph and its execs are gone).
class retain_registry {
 public:
  static retain_registry& instance() {
    static retain_registry* r = new retain_registry();
    return *r;
  }
  /// True if the pair was not registered (and now is).
  bool insert(cudaGraph_t graph, const void* owner) {
    std::lock_guard<std::mutex> lock(mutex_);
    return pairs_.insert({graph, owner}).second;
  }
  void erase(cudaGraph_t graph, const void* owner) {
    std::lock_guard<std::mutex> lock(mutex_);
    pairs_.erase({graph, owner});
  }

 private:
  retain_registry() = default;
  std::mutex mutex_;
  std::set<std::pair<cudaGraph_t, const void*>> pairs_;
};

/// True while this thread runs a user-object destructor (a CUDA-internal thread, where no CUDA
/// call is allowed): a buffer released there is queued, elsewhere it is freed at once.
inline bool& in_user_object_destructor() {
  thread_local bool inside = false;
  return inside;
}

/// Payload of one user object: a shared reference and the registry key it stands for.
struct anchor {
  std::shared_ptr<const void> owner;
  cudaGraph_t graph;
  static void CUDART_CB destroy(void* self) {
    auto* a = static_cast<anchor*>(self);
    if (a->graph != nullptr) retain_registry::instance().erase(a->graph, a->owner.get());
    in_user_object_destructor() = true;
    delete a;  // may drop the last reference: the buffer's deleter then only queues it
    in_user_object_destructor() = false;
    deferred_frees::instance().anchor_destroyed();
  }
};

/// Moves a new user object holding `owner` into `graph` (no deduplication). `registered`: the
/// pair is in the retain registry and leaves it with the object.
inline void attach_user_object(cudaGraph_t graph, std::shared_ptr<const void> owner, bool registered) {
  auto* payload = new anchor{std::move(owner), registered ? graph : nullptr};
  cudaUserObject_t object = nullptr;
  deferred_frees::instance().anchor_created();
  const cudaError_t code = cudaUserObjectCreate(&object, payload, &anchor::destroy, 1, cudaUserObjectNoDestructorSync);
  if (code != cudaSuccess) {
    deferred_frees::instance().anchor_destroyed();
    if (registered) retain_registry::instance().erase(graph, payload->owner.get());
    delete payload;
    throw_on_cuda_error(code, "cudaUserObjectCreate");
  }
  // Moves our reference to the graph: the object now lives exactly as long as the graph needs it.
  const cudaError_t moved = cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove);
  if (moved != cudaSuccess) {
    (void)cudaUserObjectRelease(object, 1);
    throw_on_cuda_error(moved, "cudaGraphRetainUserObject");
  }
}

/// Makes `graph` hold a reference on `owner` until the graph and every executable graph
/// instantiated from it are destroyed. Idempotent per (graph, owner); a null owner is ignored.
inline void retain_on_graph(cudaGraph_t graph, std::shared_ptr<const void> owner) {
  if (graph == nullptr || owner == nullptr) return;
  if (!retain_registry::instance().insert(graph, owner.get())) return;
  attach_user_object(graph, std::move(owner), true);
}

}  // namespace track_gen::detail

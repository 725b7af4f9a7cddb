#pragma once
/// @file
/// Shared helpers of the CUDA-graph tests (tests/graph/*_test.cu): checked CUDA calls, RAII
/// holders of device/pinned memory, streams and events, a stand-in physics kernel that moves
/// one agent per env along its track, the policy matrix, and bit-for-bit snapshot comparison.

#include "support/test_scale.hpp"

#include <doctest/doctest.h>

#include <track_gen/graph.hpp>
#include <track_gen/track_gen.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace graph_test {

namespace tg = track_gen;

/// REQUIREs that a CUDA runtime call succeeded; the message names the call and the error.
#define GT_CUDA(call)                                                                                   \
  do {                                                                                                  \
    const cudaError_t gt_code_ = (call);                                                                \
    REQUIRE_MESSAGE(gt_code_ == cudaSuccess, #call " failed: " << std::string(cudaGetErrorName(gt_code_)) \
                                                     << " (" << std::string(cudaGetErrorString(gt_code_)) << ")"); \
  } while (0)

// ---------------------------------------------------------------------------------------------
// RAII holders (destructors never throw: they may run while a failed REQUIRE unwinds).

/// `count` elements of device memory (cudaMalloc), zeroed.
template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t count) : count_(count) {
    GT_CUDA(cudaMalloc(&ptr_, bytes() == 0 ? 1 : bytes()));
    GT_CUDA(cudaMemset(ptr_, 0, bytes()));
    // The memset runs on the legacy stream, which the tests' non-blocking streams do not wait for.
    GT_CUDA(cudaDeviceSynchronize());
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { (void)cudaFree(ptr_); }
  T* get() const { return static_cast<T*>(ptr_); }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void* ptr_ = nullptr;
  std::size_t count_;
};

/// `count` elements of pinned host memory (cudaMallocHost), zeroed.
template <class T>
class pinned_buffer {
 public:
  explicit pinned_buffer(std::size_t count) : count_(count) {
    GT_CUDA(cudaMallocHost(&ptr_, count == 0 ? 1 : count * sizeof(T)));
    std::memset(ptr_, 0, count * sizeof(T));
  }
  pinned_buffer(pinned_buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  ~pinned_buffer() {
    if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
  }
  T* get() const { return static_cast<T*>(ptr_); }
  T& operator[](std::size_t i) const { return get()[i]; }
  std::size_t size() const { return count_; }

 private:
  void* ptr_ = nullptr;
  std::size_t count_;
};

/// A non-blocking stream (never synchronises with the legacy default stream).
class stream_holder {
 public:
  stream_holder() { GT_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  stream_holder(const stream_holder&) = delete;
  stream_holder& operator=(const stream_holder&) = delete;
  ~stream_holder() { (void)cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// An event without timing (cheapest for fork/join inside captures).
class event_holder {
 public:
  event_holder() { GT_CUDA(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  event_holder(const event_holder&) = delete;
  event_holder& operator=(const event_holder&) = delete;
  ~event_holder() { (void)cudaEventDestroy(e_); }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

/// A stream capture begun by the test itself (the user's own capture). Ends (and discards) the
/// capture on unwinding, so that a failed check does not leave the stream capturing.
class user_capture {
 public:
  user_capture(cudaStream_t s, cudaStreamCaptureMode mode) : s_(s) {
    GT_CUDA(cudaStreamBeginCapture(s_, mode));
    active_ = true;
  }
  user_capture(const user_capture&) = delete;
  user_capture& operator=(const user_capture&) = delete;
  ~user_capture() {
    if (active_) {
      cudaGraph_t g = nullptr;
      if (cudaStreamEndCapture(s_, &g) == cudaSuccess && g != nullptr) (void)cudaGraphDestroy(g);
      (void)cudaGetLastError();
    }
  }
  /// Ends the capture (REQUIREs success) and returns the graph, owned.
  tg::graph end() {
    active_ = false;
    cudaGraph_t g = nullptr;
    GT_CUDA(cudaStreamEndCapture(s_, &g));
    REQUIRE(g != nullptr);
    return tg::graph(g);
  }

 private:
  cudaStream_t s_;
  bool active_ = false;
};

/// Capture status and id of a stream (cudaStreamGetCaptureInfo).
struct capture_state {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
};
inline capture_state query_capture(cudaStream_t s) {
  capture_state c;
  GT_CUDA(cudaStreamGetCaptureInfo(s, &c.status, &c.id, nullptr, nullptr, nullptr, nullptr));
  return c;
}

/// Free device memory in bytes (cudaMemGetInfo).
inline std::size_t free_device_memory() {
  std::size_t free_bytes = 0, total = 0;
  GT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

/// Polls `done()` every millisecond for up to `seconds`; true once it holds. CUDA runs
/// user-object destructors on an internal thread at a time no CUDA call waits for
/// (cudaUserObjectNoDestructorSync is the only flag CUDA 13 accepts), so what a graph's
/// destruction releases reaches the library's deferred list asynchronously.
template <class Done>
bool eventually(Done done, double seconds = 10.0) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// How many device allocations wait in the library's deferred-free list. White-box (a detail
/// API, no CUDA call): lets a test make sure a drain really happens where it means it to.
inline std::size_t pending_deferred_frees() { return tg::detail::deferred_frees::instance().size(); }

// ---------------------------------------------------------------------------------------------
// Policies.

/// The template arguments of a `track_gen::policy`.
template <class P>
struct policy_parts;
template <class C, class S, class O, class B, class T>
struct policy_parts<tg::policy<C, S, O, B, T>> {
  using capture = C;
  using skip = S;
  using ownership = O;
};

template <class P>
constexpr bool is_borrowed = std::is_same_v<typename policy_parts<P>::ownership, tg::ownership::borrowed>;
template <class P>
constexpr bool is_anchored = std::is_same_v<typename policy_parts<P>::ownership, tg::ownership::anchored>;
template <class P>
constexpr bool is_conditional = std::is_same_v<typename policy_parts<P>::skip, tg::skip::conditional>;

/// The capture mode of a policy (its capture tag's `value`).
template <class P>
constexpr cudaStreamCaptureMode capture_mode_of() {
  return static_cast<cudaStreamCaptureMode>(policy_parts<P>::capture::value);  // an int in policy.hpp
}

inline const char* tag_name(tg::capture::global*) { return "capture::global"; }
inline const char* tag_name(tg::capture::thread_local_*) { return "capture::thread_local_"; }
inline const char* tag_name(tg::capture::relaxed*) { return "capture::relaxed"; }
inline const char* tag_name(tg::skip::conditional*) { return "skip::conditional"; }
inline const char* tag_name(tg::skip::unconditional*) { return "skip::unconditional"; }
inline const char* tag_name(tg::ownership::anchored*) { return "ownership::anchored"; }
inline const char* tag_name(tg::ownership::owning*) { return "ownership::owning"; }
inline const char* tag_name(tg::ownership::borrowed*) { return "ownership::borrowed"; }

/// "capture::x / skip::y / ownership::z", for failure messages.
template <class P>
std::string policy_name() {
  using parts = policy_parts<P>;
  return std::string(tag_name(static_cast<typename parts::capture*>(nullptr))) + " / " +
         tag_name(static_cast<typename parts::skip*>(nullptr)) + " / " +
         tag_name(static_cast<typename parts::ownership*>(nullptr));
}

#define GT_OWNERSHIPS(C, S) \
  tg::policy<C, S, tg::ownership::anchored>, tg::policy<C, S, tg::ownership::owning>, tg::policy<C, S, tg::ownership::borrowed>
#define GT_SKIPS(C) GT_OWNERSHIPS(C, tg::skip::conditional), GT_OWNERSHIPS(C, tg::skip::unconditional)

/// Every capture mode x skip policy x ownership policy (18 types).
using all_policies = std::tuple<GT_SKIPS(tg::capture::global), GT_SKIPS(tg::capture::thread_local_), GT_SKIPS(tg::capture::relaxed)>;

/// Every capture mode x skip policy, anchored (the default ownership).
using capture_skip_policies =
    std::tuple<tg::policy<tg::capture::global, tg::skip::conditional>, tg::policy<tg::capture::global, tg::skip::unconditional>,
               tg::policy<tg::capture::thread_local_, tg::skip::conditional>,
               tg::policy<tg::capture::thread_local_, tg::skip::unconditional>,
               tg::policy<tg::capture::relaxed, tg::skip::conditional>, tg::policy<tg::capture::relaxed, tg::skip::unconditional>>;

#undef GT_SKIPS
#undef GT_OWNERSHIPS

// ---------------------------------------------------------------------------------------------
// Courses.

template <class Policy>
using course_t = tg::course<tg::presets::track_pipeline, Policy>;

/// A course, with the device storage the test allocates for it under ownership::borrowed
/// (declared first: it outlives the course).
template <class Policy>
struct course_box {
  std::unique_ptr<device_buffer<unsigned char>> storage;
  std::unique_ptr<course_t<Policy>> course;
  course_t<Policy>* operator->() const { return course.get(); }
  course_t<Policy>& operator*() const { return *course; }
};

/// Constructs a course on `s`; under ownership::borrowed the storage is allocated here with
/// cudaMalloc(required_bytes(params, spacing)) and handed over as borrowed_storage.
template <class Policy>
course_box<Policy> make_course(const tg::track_params& params, float spacing, cudaStream_t s) {
  course_box<Policy> box;
  if constexpr (is_borrowed<Policy>) {
    const std::size_t bytes = course_t<Policy>::required_bytes(params, spacing);
    REQUIRE(bytes > 0);
    box.storage = std::make_unique<device_buffer<unsigned char>>(bytes);
    box.course = std::make_unique<course_t<Policy>>(params, spacing, tg::borrowed_storage{box.storage->get(), bytes},
                                                    ::cuda::stream_ref(s));
  } else {
    box.course = std::make_unique<course_t<Policy>>(params, spacing, ::cuda::stream_ref(s));
  }
  return box;
}

// ---------------------------------------------------------------------------------------------
// Kernels of the tests.

/// Stand-in physics: env e's agent sits on sample (7 e + stride * s) mod N of its current track,
/// shifted sideways by a fraction of the half-width that cycles with s, where s is env e's step
/// counter (device memory), incremented here. Deterministic, so a replayed graph and the same
/// launches made eagerly produce the same bits.
__device__ inline void move_agent(const tg::course_ref& view, int e, float3* positions, unsigned* steps, int stride) {
  const tg::track_ref t = view.track(e);
  const unsigned s = steps[e];
  const int n = t.num_samples();
  const int k = static_cast<int>((7u * static_cast<unsigned>(e) + static_cast<unsigned>(stride) * s) % static_cast<unsigned>(n));
  const float side = 0.25f * static_cast<float>(static_cast<int>(s % 5u) - 2);  // in [-0.5, 0.5]
  const float off = side * t.half_width(k);
  const float3 p = t.position(k), nrm = t.normal(k);
  positions[e] = make_float3(p.x + off * nrm.x, p.y + off * nrm.y, p.z + off * nrm.z);
  steps[e] = s + 1u;
}
__global__ void move_agents(tg::course_ref view, float3* positions, unsigned* steps, int stride) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e < view.num_envs()) move_agent(view, e, positions, steps, stride);
}

/// One thread: sets an IF node's condition from a device flag (the docs/cuda-graphs.md recipe's
/// set-condition kernel, written by the test for its own conditional node).
__global__ void set_condition_from_flag(cudaGraphConditionalHandle handle, const int* flag) {
  cudaGraphSetConditional(handle, *flag != 0 ? 1u : 0u);
}

/// One thread: appends env `e`'s lap progress, gates passed and track length to three logs at
/// index *count, then increments *count (stops writing at `capacity`).
__global__ void log_env(tg::course_ref view, int e, float* lap_progress, int* gates_passed, float* length,
                        unsigned* count, unsigned capacity) {
  const unsigned i = *count;
  if (i < capacity) {
    const tg::progress_state p = view.progress(e);
    lap_progress[i] = p.lap_progress;
    gates_passed[i] = p.gates_passed;
    length[i] = view.track(e).length();
  }
  *count = i + 1u;
}

/// Loads the test kernels now: a lazy module load inside a capture waits for the device to idle
/// (or fails on older drivers), docs/cuda-graphs.md pitfalls.
inline void preload_test_kernels() {
  cudaFuncAttributes attr{};
  GT_CUDA(cudaFuncGetAttributes(&attr, move_agents));
  GT_CUDA(cudaFuncGetAttributes(&attr, set_condition_from_flag));
  GT_CUDA(cudaFuncGetAttributes(&attr, log_env));
}

/// The agents of one course: positions [E] (bound to the course) and step counters [E].
class agents {
 public:
  explicit agents(int num_envs) : positions_(static_cast<std::size_t>(num_envs)), steps_(static_cast<std::size_t>(num_envs)) {}
  float3* positions() const { return positions_.get(); }
  /// Launches move_agents on `s` (stride: samples advanced per step).
  void move(const tg::course_ref& view, cudaStream_t s, int stride = 3) const {
    const int threads = 128;
    const int blocks = (view.num_envs() + threads - 1) / threads;
    move_agents<<<blocks, threads, 0, s>>>(view, positions_.get(), steps_.get(), stride);
    GT_CUDA(cudaGetLastError());
  }

 private:
  device_buffer<float3> positions_;
  device_buffer<unsigned> steps_;
};

/// One simulation iteration: physics, course.step, course.regenerate(mask, advance=true), all
/// on `s`. When `s` is capturing, also checks that every library call leaves the capture active
/// with the same id (the library must never end or restart the enclosing capture).
template <class Course>
void iteration(Course& course, const agents& ag, const std::int32_t* mask, cudaStream_t s) {
  ag.move(course.view(), s);
  const capture_state before = query_capture(s);
  course.step(::cuda::stream_ref(s));
  const capture_state after_step = query_capture(s);
  course.regenerate(mask, true, ::cuda::stream_ref(s));
  const capture_state after_regenerate = query_capture(s);
  CHECK(after_step.status == before.status);
  CHECK(after_regenerate.status == before.status);
  if (before.status == cudaStreamCaptureStatusActive) {
    CHECK(after_step.id == before.id);
    CHECK(after_regenerate.id == before.id);
  }
}

// ---------------------------------------------------------------------------------------------
// Masks and comparisons.

/// `replays` masks of `num_envs` int32 each, replay-major. Replay 1 and replay replays/2: all
/// one; else replay 0 and every 7th: all zero; else half all-zero, half sparse (each env with
/// probability 1/100, values other than 1 too: any nonzero counts).
inline std::vector<std::int32_t> make_masks(int replays, int num_envs, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> coin(0, 1), percent(0, 99), value(1, 1000);
  std::vector<std::int32_t> m(static_cast<std::size_t>(replays) * num_envs, 0);
  for (int r = 0; r < replays; ++r) {
    std::int32_t* row = m.data() + static_cast<std::size_t>(r) * num_envs;
    if (r == 1 || r == replays / 2) {
      for (int e = 0; e < num_envs; ++e) row[e] = 1;
      continue;
    }
    if (r % 7 == 0) continue;
    if (coin(rng) == 0) continue;
    for (int e = 0; e < num_envs; ++e)
      if (percent(rng) == 0) row[e] = value(rng);
  }
  return m;
}

/// make_masks' rows in pinned memory (their asynchronous uploads then never stage through a
/// pageable copy): row r at `get() + r * num_envs`.
inline pinned_buffer<std::int32_t> pinned_masks(int replays, int num_envs, std::uint32_t seed) {
  const std::vector<std::int32_t> rows = make_masks(replays, num_envs, seed);
  pinned_buffer<std::int32_t> out(rows.size());
  std::memcpy(out.get(), rows.data(), rows.size() * sizeof(std::int32_t));
  return out;
}

/// The replay-versus-eager loop of the graph tests: for each of `replays` rows of `masks`, the
/// row goes to `graph_mask` on `s_graph` and `exec` is replayed there, and the row goes to
/// `eager_mask` on `s_eager` and `eager()` records the same work eagerly; then both streams are
/// waited for.
template <class Eager>
void replay_against_eager(const tg::graph_exec& exec, const pinned_buffer<std::int32_t>& masks, int replays, int num_envs,
                          std::int32_t* graph_mask, cudaStream_t s_graph, std::int32_t* eager_mask, cudaStream_t s_eager,
                          Eager&& eager) {
  const std::size_t row_bytes = static_cast<std::size_t>(num_envs) * sizeof(std::int32_t);
  for (int r = 0; r < replays; ++r) {
    const std::int32_t* row = masks.get() + static_cast<std::size_t>(r) * num_envs;
    GT_CUDA(cudaMemcpyAsync(graph_mask, row, row_bytes, cudaMemcpyHostToDevice, s_graph));
    exec.launch(::cuda::stream_ref(s_graph));
    GT_CUDA(cudaMemcpyAsync(eager_mask, row, row_bytes, cudaMemcpyHostToDevice, s_eager));
    eager();
  }
  GT_CUDA(cudaStreamSynchronize(s_graph));
  GT_CUDA(cudaStreamSynchronize(s_eager));
}

/// Byte-wise equality of two arrays of a snapshot; the message names the array and the first
/// differing element.
template <class T>
void check_same_bytes(const std::vector<T>& a, const std::vector<T>& b, const char* name) {
  REQUIRE_MESSAGE(a.size() == b.size(), name << ": sizes differ (" << a.size() << " vs " << b.size() << ")");
  if (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0) return;
  std::size_t i = 0;
  while (i < a.size() && std::memcmp(&a[i], &b[i], sizeof(T)) == 0) ++i;
  FAIL_CHECK(name << " differs first at element " << i << " of " << a.size());
}

/// Every array of two track snapshots, bit for bit.
inline void check_same(const tg::track_snapshot& a, const tg::track_snapshot& b) {
  CHECK(a.num_envs == b.num_envs);
  CHECK(a.num_samples == b.num_samples);
  CHECK(a.max_gates == b.max_gates);
#define TG_TEST_SAME(name, type, ext, doc) check_same_bytes(a.name, b.name, "tracks." #name);
  TRACK_GEN_TRACK_FIELDS(TG_TEST_SAME)
#undef TG_TEST_SAME
}

/// Every array of two progress snapshots, bit for bit.
inline void check_same(const tg::progress_snapshot& a, const tg::progress_snapshot& b) {
  check_same_bytes(a.next_gate, b.next_gate, "progress.next_gate");
  check_same_bytes(a.laps, b.laps, "progress.laps");
  check_same_bytes(a.gates_passed, b.gates_passed, "progress.gates_passed");
  check_same_bytes(a.hint, b.hint, "progress.hint");
  check_same_bytes(a.lap_progress, b.lap_progress, "progress.lap_progress");
  check_same_bytes(a.lateral, b.lateral, "progress.lateral");
  check_same_bytes(a.last_position, b.last_position, "progress.last_position");
  check_same_bytes(a.flags, b.flags, "progress.flags");
}

/// Both snapshots of two courses, bit for bit.
template <class A, class B>
void check_same_state(const A& a, cudaStream_t sa, const B& b, cudaStream_t sb) {
  check_same(a.copy_tracks(::cuda::stream_ref(sa)), b.copy_tracks(::cuda::stream_ref(sb)));
  check_same(a.copy_progress(::cuda::stream_ref(sa)), b.copy_progress(::cuda::stream_ref(sb)));
}

/// Independent count of what `regenerate(mask, advance=true)` does to episodes: env e's
/// episode is the number of masks (rows first .. first + count) with a nonzero entry e.
inline std::vector<std::uint32_t> expected_episodes(const std::int32_t* masks, int rows, int num_envs) {
  std::vector<std::uint32_t> ep(static_cast<std::size_t>(num_envs), 0u);
  for (int r = 0; r < rows; ++r)
    for (int e = 0; e < num_envs; ++e)
      if (masks[static_cast<std::size_t>(r) * num_envs + e] != 0) ++ep[static_cast<std::size_t>(e)];
  return ep;
}

}  // namespace graph_test

#pragma once
/// @file
/// A host block context of real threads, for tests. The one-thread host context runs every
/// strided loop of a stage in one thread and its barriers are no-ops, so a missing barrier, a
/// write two threads race for, or a loop that only works for one thread never shows on a machine
/// without a GPU. This context runs a block as `Size` std::threads sharing one scratch buffer
/// (each with its own workspace, as each CUDA thread holds its own), with barriers and block
/// collectives, so such a fault shows as a difference from the one-thread context's track, and
/// as a data race under ThreadSanitizer (tests/geometry/threaded_block_test.cpp).
///
/// Collectives combine in a fixed order: reduce_max and reduce_min over thread values with
/// max_f / min_f (the same maxima and minima as CUB's for values that are not NaN),
/// inclusive_sum in the rounding order of the 64-thread CUDA scan (host_block_context's).

#include <track_gen/detail/host/block_context.hpp>
#include <track_gen/detail/math.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tg_test {

/// A reusable barrier of `count` threads (C++17 has no std::barrier). A thread that never
/// arrives (one that threw, or took a path without the barrier the others wait at) must not hang
/// the test: `abandon` wakes every waiter with an exception, and a wait longer than a minute
/// throws one too.
class block_barrier {
 public:
  explicit block_barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (abandoned_) throw std::runtime_error("threaded_block_context: a thread of the block left it");
    const unsigned long long generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    const bool passed = cv_.wait_for(lock, std::chrono::seconds(60), [&] { return generation_ != generation || abandoned_; });
    if (!passed || abandoned_) {
      abandoned_ = true;
      cv_.notify_all();
      throw std::runtime_error(passed ? "threaded_block_context: a thread of the block left it"
                                      : "threaded_block_context: the block's threads met different barriers (a minute's wait)");
    }
  }
  void abandon() {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_;
  int arrived_ = 0;
  bool abandoned_ = false;
  unsigned long long generation_ = 0;
};

/// What the threads of one block share besides the scratch: the barrier and the collectives'
/// slots (one per thread; reduce_max_pair's and reduce_or's in two buffers, by parity, as CUDA's).
struct block_shared {
  explicit block_shared(int size)
      : barrier(size), a(static_cast<std::size_t>(size)),
        pair{std::vector<float2>(static_cast<std::size_t>(size)), std::vector<float2>(static_cast<std::size_t>(size))},
        bits{std::vector<std::uint32_t>(static_cast<std::size_t>(size)), std::vector<std::uint32_t>(static_cast<std::size_t>(size))} {}
  block_barrier barrier;
  std::vector<float> a;
  std::vector<float2> pair[2];
  std::vector<std::uint32_t> bits[2];
};

template <int Size>
struct threaded_block_context : track_gen::detail::launch_protocol<threaded_block_context<Size>> {
  static_assert(Size >= 1, "A block has at least one thread.");
  block_shared* shared = nullptr;
  int thread = 0;

  static constexpr int size() { return Size; }
  int rank() const { return thread; }
  void sync() const { shared->barrier.wait(); }

  float reduce_max(float v) const {
    return combine(v, [](float x, float y) { return track_gen::detail::max_f(x, y); });
  }
  float reduce_min(float v) const {
    return combine(v, [](float x, float y) { return track_gen::detail::min_f(x, y); });
  }
  /// As cuda_block_context's: one barrier, the slots of `parity`'s buffer (calls alternate it;
  /// two calls in a row with the same parity race here as they would on the GPU).
  float2 reduce_max_pair(float a, float b, int parity) const {
    std::vector<float2>& slots = shared->pair[parity & 1];
    slots[static_cast<std::size_t>(thread)] = float2{a, b};
    sync();
    float2 r = slots[0];
    for (int t = 1; t < Size; ++t) {
      r.x = track_gen::detail::max_f(r.x, slots[static_cast<std::size_t>(t)].x);
      r.y = track_gen::detail::max_f(r.y, slots[static_cast<std::size_t>(t)].y);
    }
    return r;
  }
  /// As cuda_block_context's: one barrier, the slots of `parity`'s buffer.
  std::uint32_t reduce_or(std::uint32_t v, int parity) const {
    std::vector<std::uint32_t>& slots = shared->bits[parity & 1];
    slots[static_cast<std::size_t>(thread)] = v;
    sync();
    std::uint32_t r = 0;
    for (int t = 0; t < Size; ++t) r |= slots[static_cast<std::size_t>(t)];
    return r;
  }
  bool all(bool v) const { return combine(v ? 1.0f : 0.0f, [](float x, float y) { return x < y ? x : y; }) != 0.0f; }
  bool any(bool v) const { return combine(v ? 1.0f : 0.0f, [](float x, float y) { return x > y ? x : y; }) != 0.0f; }
  /// Thread 0 scans, after no barrier: the caller's barrier must come first (the CUDA scan of
  /// a block wider than its 64-element tiles has lanes read other threads' elements), and a
  /// missing one is a race here.
  void inclusive_sum(float* data, int n) const {
    if (thread == 0) track_gen::detail::host_block_context{}.inclusive_sum(data, n);
    sync();
  }

 private:
  template <class Op>
  float combine(float v, Op op) const {
    shared->a[static_cast<std::size_t>(thread)] = v;
    sync();
    float r = shared->a[0];
    for (int t = 1; t < Size; ++t) r = op(r, shared->a[static_cast<std::size_t>(t)]);
    sync();  // every thread has read the slots before a later call writes them
    return r;
  }
};

/// Runs body(ctx) on Size threads of one block and waits for them; rethrows the first exception.
template <int Size, class Body>
void run_block(Body&& body) {
  block_shared shared(Size);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(Size));
  threads.reserve(static_cast<std::size_t>(Size));
  for (int t = 0; t < Size; ++t)
    threads.emplace_back([&, t] {
      threaded_block_context<Size> ctx;
      ctx.shared = &shared;
      ctx.thread = t;
      try {
        body(ctx);
      } catch (...) {
        errors[static_cast<std::size_t>(t)] = std::current_exception();
        shared.barrier.abandon();  // the others would wait for this thread forever
      }
    });
  for (std::thread& th : threads) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tg_test

#pragma once
/// @file
/// Backend helpers shared by the templated geometry tests: a stream, and a buffer in the
/// backend's memory (host vector or cudaMalloc) for the inputs a course reads (masks,
/// positions). Plus the test-scale switch (tests/support/test_scale.hpp).

#include "support/test_scale.hpp"

#include <track_gen/track_gen.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if TRACK_GEN_CUDA_COMPILER
#include <cuda_runtime_api.h>
#endif

namespace tg_test {

/// True when TRACK_GEN_TEST_SCALE=small (runs under compute-sanitizer, which is ~100x slower).
using track_gen_test::small_scale;

/// `n` at full scale, `n / divisor` (at least `floor`) when the small scale is asked for.
inline int scaled(int n, int divisor, int floor = 1) { return small_scale() ? std::max(floor, n / divisor) : n; }

/// Per-backend test plumbing. Specialised for each policy below.
template <class Policy>
struct backend;

/// Host backend: memory is plain host memory, the stream is ignored.
template <>
struct backend<track_gen::host_policy> {
  static std::string name() { return "host"; }
  using stream_type = track_gen::host_stream;

  /// Owns nothing: the host course ignores its stream argument.
  struct stream_holder {
    stream_type get() const { return {}; }
    void sync() const {}
  };

  /// A host array the course reads through a raw pointer.
  template <class T>
  class buffer {
   public:
    explicit buffer(const std::vector<T>& values) : data_(values) {}
    /// Replaces the contents (same size).
    void upload(const std::vector<T>& values) {
      REQUIRE(values.size() == data_.size());
      std::copy(values.begin(), values.end(), data_.begin());  // in place: bound pointers stay valid
    }
    T* get() { return data_.data(); }

   private:
    std::vector<T> data_;
  };

  /// Copies `count` elements of a course array (a host pointer here) to a vector.
  template <class T>
  static std::vector<T> download(const T* src, std::size_t count) {
    return std::vector<T>(src, src + count);
  }
};

#if TRACK_GEN_CUDA_COMPILER
/// CUDA backend: device memory through cudaMalloc/cudaMemcpy, one non-blocking stream per test.
template <>
struct backend<track_gen::cuda_policy> {
  static std::string name() { return "cuda"; }
  using stream_type = ::cuda::stream_ref;

  /// A non-blocking stream created for one test, destroyed with it.
  class stream_holder {
   public:
    stream_holder() { REQUIRE(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking) == cudaSuccess); }
    ~stream_holder() { (void)cudaStreamDestroy(s_); }
    stream_holder(const stream_holder&) = delete;
    stream_holder& operator=(const stream_holder&) = delete;
    stream_type get() const { return stream_type(s_); }
    void sync() const { REQUIRE(cudaStreamSynchronize(s_) == cudaSuccess); }

   private:
    cudaStream_t s_ = nullptr;
  };

  /// A device array, uploaded with a blocking cudaMemcpy followed by a device synchronisation
  /// (a pageable-memory cudaMemcpy may return before its DMA lands, and the course runs on a
  /// non-blocking stream that does not order against the legacy stream).
  template <class T>
  class buffer {
   public:
    explicit buffer(const std::vector<T>& values) : size_(values.size()) {
      REQUIRE(cudaMalloc(&ptr_, std::max<std::size_t>(1, size_) * sizeof(T)) == cudaSuccess);
      upload(values);
    }
    ~buffer() { (void)cudaFree(ptr_); }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    void upload(const std::vector<T>& values) {
      REQUIRE(values.size() == size_);
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);  // no kernel still reads the old contents
      REQUIRE(cudaMemcpy(ptr_, values.data(), size_ * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    }
    T* get() { return static_cast<T*>(ptr_); }

   private:
    void* ptr_ = nullptr;
    std::size_t size_ = 0;
  };

  /// Copies `count` elements of a course array (device memory) to a vector, after the device
  /// has finished every queued kernel.
  template <class T>
  static std::vector<T> download(const T* src, std::size_t count) {
    std::vector<T> out(count);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaMemcpy(out.data(), src, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return out;
  }
};
#endif

/// True when the two arrays hold the same bytes.
template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// True when elements [begin, end) of the two arrays hold the same bytes.
template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b, std::size_t begin, std::size_t end) {
  return end <= a.size() && end <= b.size() &&
         (begin >= end || std::memcmp(a.data() + begin, b.data() + begin, (end - begin) * sizeof(T)) == 0);
}

/// Whether env `ea` of `a` and env `eb` of `b` hold the same bytes: every sample array, the
/// gates in use (the first num_gates; slots beyond are never written), length, gate count,
/// status, episode and origin. On a difference, `why` names the first differing array.
inline bool same_env(const track_gen::track_snapshot& a, int ea, const track_gen::track_snapshot& b, int eb,
                     std::string* why = nullptr) {
  auto fail = [why](const char* what) {
    if (why != nullptr) *why = what;
    return false;
  };
  if (a.num_samples != b.num_samples) return fail("num_samples");
  const std::size_t n = static_cast<std::size_t>(a.num_samples);
  const std::size_t sa = a.sample_index(ea, 0), sb = b.sample_index(eb, 0);
  auto same_samples = [&](const auto& x, const auto& y) {
    return std::memcmp(x.data() + sa, y.data() + sb, n * sizeof(x[0])) == 0;
  };
#define TG_TEST_SAME_SAMPLES(name, type, ext, doc) \
  if (track_gen::detail::extent::ext == track_gen::detail::extent::samples && !same_samples(a.name, b.name)) return fail(#name);
  TRACK_GEN_TRACK_FIELDS(TG_TEST_SAME_SAMPLES)
#undef TG_TEST_SAME_SAMPLES
  const std::size_t ua = static_cast<std::size_t>(ea), ub = static_cast<std::size_t>(eb);
  if (std::memcmp(&a.length[ua], &b.length[ub], sizeof(float)) != 0) return fail("length");
  if (a.num_gates[ua] != b.num_gates[ub]) return fail("num_gates");
  if (a.status[ua] != b.status[ub]) return fail("status");
  if (a.episode[ua] != b.episode[ub]) return fail("episode");
  if (std::memcmp(&a.origin[ua], &b.origin[ub], sizeof(float3)) != 0) return fail("origin");
  const std::size_t g = static_cast<std::size_t>(a.num_gates[ua]);
  if (g > static_cast<std::size_t>(a.max_gates) || g > static_cast<std::size_t>(b.max_gates)) return fail("num_gates > max_gates");
  const std::size_t ga = a.gate_index(ea, 0), gb = b.gate_index(eb, 0);
  auto same_gates = [&](const auto& x, const auto& y) {
    return std::memcmp(x.data() + ga, y.data() + gb, g * sizeof(x[0])) == 0;
  };
  if (!same_gates(a.gate_centre, b.gate_centre)) return fail("gate_centre");
  if (!same_gates(a.gate_normal, b.gate_normal)) return fail("gate_normal");
  if (!same_gates(a.gate_half_width, b.gate_half_width)) return fail("gate_half_width");
  if (!same_gates(a.gate_arc_length, b.gate_arc_length)) return fail("gate_arc_length");
  return true;
}

}  // namespace tg_test

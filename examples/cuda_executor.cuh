#pragma once
/// @file
/// The demo's CUDA executor: device memory, one thread per env for the per-env functor, a
/// dedicated non-blocking stream, and CUDA events around every timed regenerate call.

#include <track_gen/track_gen.hpp>

#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace track_gen_examples {

/// Throws std::runtime_error naming the failed call when `code` is not cudaSuccess.
inline void check_cuda(cudaError_t code, const char* what, const char* file, int line) {
  if (code != cudaSuccess) {
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + " failed: " +
                             cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
  }
}
#define DEMO_CUDA_CHECK(call) ::track_gen_examples::check_cuda((call), #call, __FILE__, __LINE__)

template <class F>
__global__ void __launch_bounds__(256) for_each_env_kernel(int n, F f) {
  const int e = static_cast<int>(blockIdx.x) * 256 + static_cast<int>(threadIdx.x);
  if (e < n) f(e);
}

/// Runs the demo on the current CUDA device.
class cuda_executor {
 public:
  using policy_type = track_gen::cuda_policy;

  explicit cuda_executor(int device) : device_(device) {
    DEMO_CUDA_CHECK(cudaSetDevice(device));
    DEMO_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // A ring of event pairs: a pair is reused only after its stop event completed, so the
    // timing never adds a synchronisation unless the host runs this far ahead of the GPU.
    events_.resize(2 * ring);
    for (cudaEvent_t& ev : events_) DEMO_CUDA_CHECK(cudaEventCreate(&ev));
  }
  cuda_executor(const cuda_executor&) = delete;
  cuda_executor& operator=(const cuda_executor&) = delete;
  ~cuda_executor() {
    for (cudaEvent_t ev : events_) (void)cudaEventDestroy(ev);
    (void)cudaStreamDestroy(stream_);
  }

  ::cuda::stream_ref stream() const { return ::cuda::stream_ref(stream_); }
  std::string describe() const {
    cudaDeviceProp p{};
    DEMO_CUDA_CHECK(cudaGetDeviceProperties(&p, device_));
    return "cuda (device " + std::to_string(device_) + ": " + p.name + ", sm_" + std::to_string(p.major) +
           std::to_string(p.minor) + ", " + std::to_string(p.multiProcessorCount) + " SMs)";
  }

  template <class T>
  T* allocate(std::size_t n) {
    void* p = nullptr;
    DEMO_CUDA_CHECK(cudaMalloc(&p, (n == 0 ? 1 : n) * sizeof(T)));
    DEMO_CUDA_CHECK(cudaMemsetAsync(p, 0, (n == 0 ? 1 : n) * sizeof(T), stream_));
    return static_cast<T*>(p);
  }
  template <class T>
  void deallocate(T* p) { (void)cudaFree(p); }
  template <class T>
  void download(T* dst, const T* src, std::size_t n) {
    DEMO_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    DEMO_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  template <class F>
  void for_each_env(int n, const F& f) {
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    for_each_env_kernel<F><<<blocks, 256, 0, stream_>>>(n, f);
    DEMO_CUDA_CHECK(cudaGetLastError());
  }
  void synchronize() { DEMO_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  void reset_regenerate_timer() {
    synchronize();
    regen_ms_ = 0.0;
    recorded_ = 0;
  }
  void begin_regenerate() {
    const std::size_t slot = recorded_ % ring;
    if (recorded_ >= ring) harvest(slot);
    DEMO_CUDA_CHECK(cudaEventRecord(events_[2 * slot], stream_));
  }
  void end_regenerate() {
    DEMO_CUDA_CHECK(cudaEventRecord(events_[2 * (recorded_ % ring) + 1], stream_));
    ++recorded_;
  }
  /// Seconds between the event pairs of every timed regenerate call.
  double regenerate_seconds() {
    const std::size_t first = recorded_ > ring ? recorded_ - ring : 0;
    for (std::size_t i = first; i < recorded_; ++i) harvest(i % ring);
    recorded_ = 0;
    const double s = regen_ms_ * 1e-3;
    regen_ms_ = 0.0;
    return s;
  }

 private:
  static constexpr std::size_t ring = 512;
  void harvest(std::size_t slot) {
    DEMO_CUDA_CHECK(cudaEventSynchronize(events_[2 * slot + 1]));
    float ms = 0.0f;
    DEMO_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * slot], events_[2 * slot + 1]));
    regen_ms_ += ms;
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::size_t recorded_ = 0;
  double regen_ms_ = 0.0;
};

}  // namespace track_gen_examples

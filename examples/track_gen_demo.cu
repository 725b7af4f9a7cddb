/// @file
/// track_gen demo, CUDA build: runs on the GPU when one is present, on the host backend
/// otherwise (and says which). The demo itself is in demo_driver.hpp.

#include "cuda_executor.cuh"
#include "demo_driver.hpp"

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  namespace ex = track_gen_examples;
  ex::demo_options o;
  if (!ex::parse_options(argc, argv, o)) return 2;
  try {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (o.force_host) {
      ex::host_executor host("--host given");
      return ex::run_demo(o, host);
    }
    if (err == cudaSuccess && count > 0) {
      ex::cuda_executor gpu(0);
      return ex::run_demo(o, gpu);
    }
    // cudaErrorInsufficientDriver is also what a machine without any GPU (no driver) reports.
    const std::string why =
        err == cudaSuccess ? std::string("no CUDA device")
                           : std::string("no usable CUDA device (no GPU, or no driver for it: ") + cudaGetErrorName(err) + ")";
    ex::host_executor host(why);
    return ex::run_demo(o, host);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "track_gen_demo: %s\n", e.what());
    return 1;
  }
}

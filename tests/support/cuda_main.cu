// Test driver of the CUDA tests: exits 77 (reported "skipped" by ctest) when no GPU is present.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipping the CUDA tests\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}

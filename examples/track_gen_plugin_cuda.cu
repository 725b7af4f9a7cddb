// The plugin example on the GPU: the same stage code runs in the fused generation kernel (one
// block per track). Prints mean attempts with and without the plugin; exits 77 without a GPU.
#include "plugin_stage.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

namespace tg = track_gen;

template <class Pipeline>
static double mean_attempts(const tg::track_params& p, cudaStream_t s) {
  tg::course<Pipeline> c(p, 0.6f, s);
  const tg::track_snapshot t = c.copy_tracks(s);
  double attempts = 0;
  for (int e = 0; e < p.num_envs; ++e) attempts += tg::status::attempts(t.status[e]);
  return attempts / p.num_envs;
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: the GPU plugin example does not run here\n");
    return 77;
  }
  cudaStream_t s = nullptr;
  if (cudaStreamCreate(&s) != cudaSuccess) return 1;
  tg::track_params p = tg::presets::track(65536);
  p.seed = 3;
  p.polar.radius_min = 3.0f;
  p.polar.radius_max = 8.0f;
  const double plain = mean_attempts<tg::presets::track_pipeline>(p, s);
  const double smoothed = mean_attempts<track_gen_examples::smoothed_pipeline>(p, s);
  std::printf("GPU: mean attempts %.2f (preset) vs %.2f (with smooth_radii), %d envs\n", plain, smoothed, p.num_envs);
  return smoothed < plain ? 0 : 1;
}

// GPU consumer of the installed package: builds a batch of tracks on the device with the default
// (CUDA) policy and checks them on the host. Exit 77 (skipped) without a GPU, 0 when every check
// passes.
#include <track_gen/track_gen.hpp>

#include <cmath>
#include <cstdio>

namespace tg = track_gen;

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipping the GPU consumer\n");
    return 77;
  }
  cudaStream_t raw = nullptr;
  if (cudaStreamCreate(&raw) != cudaSuccess) return 1;
  int failures = 0;
  {
    constexpr int envs = 256;
    constexpr float spacing = 0.6f;
    tg::track_params params = tg::presets::track(envs);
    params.seed = 2024;
    const cuda::stream_ref stream(raw);
    tg::course<> course(params, spacing, stream);
    const tg::track_snapshot t = course.copy_tracks(stream);
    for (int e = 0; e < envs; ++e) {
      const bool ok = (t.status[e] & tg::status::valid) != 0 && t.length[e] >= params.validate.length_min &&
                      t.length[e] <= params.validate.length_max &&
                      t.num_gates[e] == static_cast<int>(std::floor(t.length[e] / spacing));
      if (!ok) {
        ++failures;
        std::printf("FAIL env %d: status %#x, length %g, gates %d\n", e, t.status[e], t.length[e], t.num_gates[e]);
      }
    }
    std::printf("track_gen GPU consumer: %d envs, %d failures\n", envs, failures);
  }
  cudaStreamDestroy(raw);
  return failures == 0 ? 0 : 1;
}

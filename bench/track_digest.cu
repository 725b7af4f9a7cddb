// track_digest: a 64-bit FNV-1a digest of every track field after construction and after three
// masked regenerations, per preset, so that two commits can be compared bit for bit on the GPU
// ("results are bit-identical to today's for the same seeds"): build this file at both commits
// and diff the outputs. Uses the public API only (it builds against older trees too).
//
//   track_digest [--envs E] [--seed S] [--spacing M]
#include <track_gen/track_gen.hpp>

#include <CLI/CLI.hpp>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace tg = track_gen;

namespace {

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t h = 14695981039346656037ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;  // FNV-1a, 64-bit (Fowler, Noll, Vo)
  return h;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "track_digest: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void print(const char* preset, const char* when, const tg::track_snapshot& s) {
  std::uint64_t all = 14695981039346656037ull;
#define TRACK_DIGEST_FIELD(name, type, ext, doc)                                                               \
  {                                                                                                            \
    const std::uint64_t h = fnv1a(s.name.data(), s.name.size() * sizeof(type));                              \
    all = fnv1a(&h, sizeof h, all);                                                                            \
    std::printf("%-12s %-14s %-16s %016llx\n", preset, when, #name, static_cast<unsigned long long>(h));     \
  }
  TRACK_GEN_TRACK_FIELDS(TRACK_DIGEST_FIELD)
#undef TRACK_DIGEST_FIELD
  std::printf("%-12s %-14s %-16s %016llx\n", preset, when, "ALL", static_cast<unsigned long long>(all));
}

template <class Pipeline>
void run(const char* preset, tg::track_params params, float spacing, cudaStream_t stream) {
  tg::course<Pipeline, tg::cuda_policy> course(params, spacing, stream);
  print(preset, "constructed", course.copy_tracks(stream));
  const int n = params.num_envs;
  std::vector<std::int32_t> mask(static_cast<std::size_t>(n));
  std::int32_t* device_mask = nullptr;
  check(cudaMalloc(&device_mask, mask.size() * sizeof(std::int32_t)), "cudaMalloc");
  for (int round = 1; round <= 3; ++round) {
    for (int e = 0; e < n; ++e) {
      const std::uint32_t id = params.env_offset + static_cast<std::uint32_t>(e);
      mask[static_cast<std::size_t>(e)] = ((id * 2654435761u) >> (7 + round)) % 5u == 0u ? 1 : 0;
    }
    check(cudaMemcpyAsync(device_mask, mask.data(), mask.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync");
    course.regenerate(tg::env_mask(device_mask), round != 2, stream);
  }
  print(preset, "regenerated", course.copy_tracks(stream));
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(cudaFree(device_mask), "cudaFree");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"track_digest: FNV-1a digests of every track field, to compare commits bit for bit"};
  int envs = 65536;
  unsigned long long seed = 7;
  float spacing = 0.6f;
  app.add_option("--envs", envs, "envs per preset")->check(CLI::Range(1, 1 << 24));
  app.add_option("--seed", seed, "track_params::seed");
  app.add_option("--spacing", spacing, "checkpoint spacing [m]")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "track_digest: no CUDA device\n");
    return 77;
  }
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  tg::track_params track = tg::presets::track(envs);
  track.seed = seed;
  run<tg::presets::track_pipeline>("track", track, spacing, stream);
  tg::track_params drone = tg::presets::drone_track(envs);
  drone.seed = seed;
  run<tg::presets::track_pipeline>("drone_track", drone, spacing, stream);
  // The grid-scope pipeline (its own store path after the relaxation), at fewer envs: 2048 samples.
  tg::track_params long_track = tg::presets::long_track(envs / 64 > 0 ? envs / 64 : 1);
  long_track.seed = seed;
  run<tg::presets::long_track_pipeline>("long_track", long_track, 30.0f, stream);
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}

// The grid-scope plugin example on the GPU: the same stage runs as windows of launches (one
// sample per thread, several blocks per track), eagerly here and, in a captured graph, under a
// WHILE conditional node. Prints the same summary as the host example for a larger batch,
// replays a captured masked regeneration once, and exits 1 if the plugin changed nothing or did
// not lower the mean largest curvature; exits 77 without a GPU.
#include "grid_plugin_stage.hpp"

#include <track_gen/graph.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

namespace tg = track_gen;
namespace ex = track_gen_examples;

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: the GPU grid-scope plugin example does not run here\n");
    return 77;
  }
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return 1;
  const ::cuda::stream_ref stream(s);
  tg::track_params p = tg::presets::track(65536);
  p.seed = 5;
  tg::course<tg::presets::track_pipeline> plain(p, 0.6f, stream);
  tg::course<ex::eased_pipeline> eased(p, 0.6f, stream);
  const ex::corner_summary a = ex::summarise(plain.copy_tracks(stream));
  const ex::corner_summary b = ex::summarise(eased.copy_tracks(stream));
  std::printf("GPU, %d envs: mean max curvature %.3f 1/m (preset) vs %.3f 1/m (with ease_corners: eased %d, rejected %d, valid %d)\n",
              p.num_envs, a.mean_max_curvature, b.mean_max_curvature, b.relaxed, b.rejected, b.valid);

  // Regenerate every other env from a graph: the masked regeneration sits under an IF node, the
  // plugin's windows under a WHILE node inside it.
  std::int32_t* mask = nullptr;
  if (cudaMalloc(&mask, sizeof(std::int32_t) * p.num_envs) != cudaSuccess) return 1;
  std::vector<std::int32_t> every_other(static_cast<std::size_t>(p.num_envs));
  for (int e = 0; e < p.num_envs; ++e) every_other[static_cast<std::size_t>(e)] = e % 2;
  if (cudaMemcpy(mask, every_other.data(), every_other.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice) != cudaSuccess) return 1;
  tg::graph_exec exec;
  {
    tg::scoped_capture cap(stream);
    eased.regenerate(mask, /*advance=*/true, stream);
    exec = cap.end().instantiate();
  }
  exec.launch(stream);
  const ex::corner_summary c = ex::summarise(eased.copy_tracks(stream));
  std::printf("after a replayed masked regeneration: eased %d, rejected %d, valid %d\n", c.relaxed, c.rejected, c.valid);
  cudaFree(mask);
  cudaStreamDestroy(s);
  return b.relaxed > 0 && b.mean_max_curvature < a.mean_max_curvature && c.valid == p.num_envs ? 0 : 1;
}

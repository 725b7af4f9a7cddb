// Example: a user-written grid-scope plugin stage (examples/grid_plugin_stage.hpp) in a custom
// pipeline, on the host backend. Generates the same batch with and without the plugin and
// prints how many tracks it eased and the mean of the tracks' largest curvature; exits 1 if the
// plugin changed nothing or did not lower that mean (what it exists for).
#include "grid_plugin_stage.hpp"

#include <cstdio>

namespace tg = track_gen;
namespace ex = track_gen_examples;

int main() {
  tg::track_params p = tg::presets::track(500);
  p.seed = 5;
  tg::course<tg::presets::track_pipeline, tg::host_policy> plain(p, 0.6f);
  tg::course<ex::eased_pipeline, tg::host_policy> eased(p, 0.6f);
  const ex::corner_summary a = ex::summarise(plain.copy_tracks({}));
  const ex::corner_summary b = ex::summarise(eased.copy_tracks({}));
  std::printf("track_gen grid-scope plugin example (host backend, %d envs)\n", p.num_envs);
  std::printf("  preset pipeline     valid %d, mean max curvature %.3f 1/m\n", a.valid, a.mean_max_curvature);
  std::printf("  with ease_corners   valid %d, mean max curvature %.3f 1/m, eased %d, rejected %d\n", b.valid,
              b.mean_max_curvature, b.relaxed, b.rejected);
  return b.relaxed > 0 && b.mean_max_curvature < a.mean_max_curvature ? 0 : 1;
}

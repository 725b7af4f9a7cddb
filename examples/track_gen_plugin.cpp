// Example: a user-written plugin stage (examples/plugin_stage.hpp) in a custom pipeline, on the
// host backend. Generates the same batch with and without the plugin, from a wide radius band
// where sharp corners make many first attempts fail, and prints attempts and validity; exits 1
// if the plugin does not lower the mean number of attempts (what it exists for).
#include "plugin_stage.hpp"

#include <cstdio>

namespace tg = track_gen;

template <class Pipeline>
static double mean_attempts(const tg::track_params& p, int& valid) {
  tg::course<Pipeline, tg::host_policy> c(p, 0.6f);
  const tg::track_snapshot t = c.copy_tracks({});
  double attempts = 0;
  valid = 0;
  for (int e = 0; e < p.num_envs; ++e) {
    attempts += tg::status::attempts(t.status[e]);
    valid += (t.status[e] & tg::status::valid) != 0;
  }
  return attempts / p.num_envs;
}

int main() {
  tg::track_params p = tg::presets::track(2000);
  p.seed = 3;
  p.polar.radius_min = 3.0f;  // a wide band: jagged control polygons
  p.polar.radius_max = 8.0f;
  int valid_plain = 0, valid_smoothed = 0;
  const double plain = mean_attempts<tg::presets::track_pipeline>(p, valid_plain);
  const double smoothed = mean_attempts<track_gen_examples::smoothed_pipeline>(p, valid_smoothed);
  std::printf("track_gen plugin example (host backend, %d envs, radii %.1f-%.1f m)\n", p.num_envs, p.polar.radius_min,
              p.polar.radius_max);
  std::printf("  preset pipeline        mean attempts %.2f, valid %d\n", plain, valid_plain);
  std::printf("  with smooth_radii      mean attempts %.2f, valid %d\n", smoothed, valid_smoothed);
  return smoothed < plain ? 0 : 1;
}

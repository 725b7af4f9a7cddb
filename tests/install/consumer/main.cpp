// Consumer of the installed package: builds a small batch of tracks on the CPU and checks them
// against quantities recomputed here from the raw samples. Exit code 0 = every check passed.
#include <track_gen/track_gen.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace tg = track_gen;

namespace {

int failures = 0;

void check(bool ok, const char* what, int env) {
  if (!ok) {
    ++failures;
    std::printf("FAIL env %d: %s\n", env, what);
  }
}

float distance(float3 a, float3 b) {
  const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

float3 midpoint(float3 a, float3 b) { return {0.5f * (a.x + b.x), 0.5f * (a.y + b.y), 0.5f * (a.z + b.z)}; }

}  // namespace

int main() {
  constexpr int envs = 16;
  constexpr float spacing = 0.6f;
  tg::track_params params = tg::presets::track(envs);
  params.seed = 2024;
  tg::course<tg::presets::track_pipeline, tg::host_policy> course(params, spacing);
  const tg::track_snapshot t = course.copy_tracks({});
  const int n = t.num_samples;

  for (int e = 0; e < envs; ++e) {
    const float length = t.length[e];
    check((t.status[e] & tg::status::valid) != 0, "status has the valid bit", e);
    check(length >= params.validate.length_min && length <= params.validate.length_max, "length within the preset's range", e);

    // The stored length is the arc length of the closed centreline: the closed polyline through
    // the uniformly resampled points is a chord approximation of it, shorter by well under 1%
    // at the preset's ~0.15 m sample spacing.
    float polyline = 0.0f;
    bool finite = true;
    for (int k = 0; k < n; ++k) {
      const float3 p = t.position[t.sample_index(e, k)];
      finite = finite && std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z);
      polyline += distance(p, t.position[t.sample_index(e, (k + 1) % n)]);
    }
    check(finite, "finite centreline", e);
    check(std::fabs(polyline - length) <= 0.01f * length, "polyline length matches the stored length to 1%", e);

    // G = floor(L / spacing) gates at arc lengths g * L / G.
    const int gates = t.num_gates[e];
    check(gates == static_cast<int>(std::floor(length / spacing)), "G = floor(L / spacing)", e);
    for (int g = 0; g < gates; ++g)
      check(std::fabs(t.gate_arc_length[t.gate_index(e, g)] - g * length / gates) <= 1e-3f * length, "gate g at arc length g * L / G", e);
  }

  // Drive every agent once around its track through the midpoints of consecutive samples: one
  // lap, every gate passed once, never off the track.
  std::vector<float3> positions(envs);
  course.bind(positions.data());
  for (int k = 0; k <= n; ++k) {
    for (int e = 0; e < envs; ++e)
      positions[e] = midpoint(t.position[t.sample_index(e, k % n)], t.position[t.sample_index(e, (k + 1) % n)]);
    course.step({});
  }
  const tg::progress_snapshot p = course.copy_progress({});
  for (int e = 0; e < envs; ++e) {
    check(p.laps[e] == 1, "one lap after one loop of the centreline", e);
    check(p.gates_passed[e] == t.num_gates[e], "every gate passed once", e);
    check((p.flags[e] & tg::progress_flags::off_track) == 0, "on the track", e);
  }

  std::printf("track_gen %d.%d.%d consumer: %d envs, %d failures\n", TRACK_GEN_VERSION_MAJOR, TRACK_GEN_VERSION_MINOR,
              TRACK_GEN_VERSION_PATCH, envs, failures);
  return failures == 0 ? 0 : 1;
}

// stages::random_polar run on its own through the host block context, for 10,000 (env, seed)
// pairs over several parameter sets: the control points' polar angles, unwrapped from the first,
// increase strictly and span less than 2 pi (a star-shaped, simple control polygon), every
// angular gap is within the documented jitter of the step 2 pi / M, and radii and elevations
// stay in their bands (the radius band widened by the lobes' amplitude). Then the lobed radius of
// every point against a double-precision evaluation of the documented profile from the stage's
// own draws, and the points without lobes against the band's formula, bit for bit. Host only: it
// drives a stage directly, without a course.
#include "backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/detail/host/block_context.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/stages.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;
constexpr double two_pi = 6.28318530717958647692;

/// Control points of one (seed, env, episode, attempt) drawn by random_polar alone.
std::vector<float3> polar_points(const tg::track_params& p, std::vector<unsigned char>& scratch,
                                 const tg::detail::scratch_layout& layout, std::uint32_t env, std::uint32_t attempt) {
  tg::detail::workspace ws{};
  ws.bind_scratch(scratch.data(), layout);
  ws.seed = p.seed;
  ws.global_env = env;
  ws.episode = 0;
  ws.attempt = attempt;
  ws.source = tg::detail::track_source::random;
  ws.num_samples = p.num_samples;
  const tg::detail::host_block_context ctx;
  tg::stages::random_polar::run(ctx, ws, p);
  REQUIRE(ws.num_control == p.polar.control_points);
  return std::vector<float3>(ws.control, ws.control + ws.num_control);
}

/// One parameter set of random_polar.
struct polar_config {
  int control_points;
  float jitter, radius_min, radius_max, elevation_min, elevation_max, lobe_min, lobe_max;
};

/// The track preset for one env with `c`'s random_polar parameters.
tg::track_params polar_params(const polar_config& c, std::uint64_t seed) {
  tg::track_params p = tg::presets::track(1);
  p.seed = seed;
  p.polar.control_points = c.control_points;
  p.polar.angle_jitter = c.jitter;
  p.polar.radius_min = c.radius_min;
  p.polar.radius_max = c.radius_max;
  p.polar.elevation_min = c.elevation_min;
  p.polar.elevation_max = c.elevation_max;
  p.polar.lobe_amplitude_min = c.lobe_min;
  p.polar.lobe_amplitude_max = c.lobe_max;
  return p;
}

}  // namespace

TEST_CASE("random_polar: polar angles strictly increase and span less than 2 pi, radii in band") {
  // The preset, the band alone (its previous defaults), the extreme jitter (0.999: neighbours
  // may come within 1e-3 of a step) with the strongest lobes, no jitter, the fewest points, the
  // most points of the default tuning, a 3D band, a thin ring.
  const std::vector<polar_config> configs = {
      {12, 0.3f, 4.5f, 6.0f, 0.0f, 0.0f, 0.48f, 0.8f},      {12, 0.5f, 4.0f, 7.0f, 0.0f, 0.0f, 0.0f, 0.0f},
      {12, 0.999f, 4.0f, 7.0f, 0.0f, 0.0f, 0.9f, 0.9f},     {7, 0.0f, 1.0f, 20.0f, 0.0f, 0.0f, 0.0f, 0.5f},
      {4, 0.999f, 0.5f, 0.5f, 0.0f, 0.0f, 0.2f, 0.9f},      {64, 0.999f, 2.0f, 9.0f, 0.0f, 0.0f, 0.48f, 0.8f},
      {33, 0.75f, 3.0f, 6.0f, 0.5f, 2.5f, 0.3f, 0.6f},      {5, 0.9f, 100.0f, 101.0f, -3.0f, -1.0f, 0.0f, 0.0f},
  };
  const int seeds = 10;
  const int envs_per_seed = tg_test::scaled(1000, 50);
  const double angle_tol = 1e-5;  // float angles of magnitude < 4 pi, cos/sin and atan2 rounding
  int pairs = 0, failures = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    const polar_config& c = configs[static_cast<std::size_t>(seed) % configs.size()];
    // Seeds spread over 64 bits.
    const tg::track_params p = polar_params(c, 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(seed + 1));
    const double r_low = c.radius_min * (1.0 - c.lobe_max), r_high = c.radius_max * (1.0 + c.lobe_max);
    const auto layout = tg::detail::scratch_layout::make(64, 64 * 4, p.num_samples);
    std::vector<unsigned char> scratch(layout.bytes);
    const int m = c.control_points;
    const double step = two_pi / m;
    for (int env = 0; env < envs_per_seed; ++env) {
      // Global ids spread over the 32-bit range, and the first few attempts.
      const std::uint32_t global = static_cast<std::uint32_t>(env) * 2654435761u;
      const std::vector<float3> pts = polar_points(p, scratch, layout, global, static_cast<std::uint32_t>(env % 3));
      ++pairs;
      std::string why;
      double previous = std::atan2(static_cast<double>(pts[0].y), static_cast<double>(pts[0].x));
      const double first = previous;
      for (int i = 0; i < m && why.empty(); ++i) {
        const float3 q = pts[static_cast<std::size_t>(i)];
        const double r = std::hypot(static_cast<double>(q.x), static_cast<double>(q.y));
        if (r < r_low * (1 - 1e-6) || r > r_high * (1 + 1e-6)) why = "radius " + std::to_string(r) + " out of band";
        if (q.z < c.elevation_min || q.z > c.elevation_max) why = "elevation " + std::to_string(q.z) + " out of band";
        if (i == 0) continue;
        // Unwrap: the angle of point i is taken as the first one at or after the previous angle.
        double a = std::atan2(static_cast<double>(q.y), static_cast<double>(q.x));
        while (a < previous - angle_tol) a += two_pi;
        const double gap = a - previous;
        if (!(gap > 0)) why = "angle of point " + std::to_string(i) + " does not increase";
        // Each point moves at most jitter / 2 of a step: gaps within step * (1 +- jitter).
        if (gap < step * (1 - c.jitter) - angle_tol || gap > step * (1 + c.jitter) + angle_tol)
          why = "gap " + std::to_string(gap) + " before point " + std::to_string(i) + " outside step*(1 +- jitter)";
        previous = a;
      }
      const double span = previous - first;
      if (why.empty() && !(span < two_pi)) why = "angles span " + std::to_string(span) + " >= 2 pi";
      // The closing gap (last point back to the first) obeys the same bound.
      const double closing = two_pi - span;
      if (why.empty() && (closing < step * (1 - c.jitter) - angle_tol || closing > step * (1 + c.jitter) + angle_tol))
        why = "closing gap " + std::to_string(closing) + " outside step*(1 +- jitter)";
      if (!why.empty()) {
        if (failures < 8) MESSAGE("seed #" << seed << " env " << global << ": " << why);
        ++failures;
      }
    }
  }
  CHECK(failures == 0);
  if (!tg_test::small_scale()) CHECK(pairs >= 10000);
}

TEST_CASE("random_polar: the draws depend on seed, env, episode and attempt") {
  // Each part of the Philox counter/key changes the points (a stream that ignored one of them
  // would give identical tracks to different envs or attempts).
  tg::track_params p = tg::presets::track(1);
  p.seed = 42;
  const auto layout = tg::detail::scratch_layout::make(64, 256, p.num_samples);
  std::vector<unsigned char> scratch(layout.bytes);
  auto draw = [&](std::uint64_t seed, std::uint32_t env, std::uint32_t episode, std::uint32_t attempt) {
    tg::detail::workspace ws{};
    ws.bind_scratch(scratch.data(), layout);
    ws.seed = seed;
    ws.global_env = env;
    ws.episode = episode;
    ws.attempt = attempt;
    ws.source = tg::detail::track_source::random;
    const tg::detail::host_block_context ctx;
    tg::stages::random_polar::run(ctx, ws, p);
    return std::vector<float3>(ws.control, ws.control + ws.num_control);
  };
  auto same = [](const std::vector<float3>& a, const std::vector<float3>& b) { return tg_test::same_bytes(a, b); };
  const auto base = draw(42, 7, 3, 1);
  CHECK(same(base, draw(42, 7, 3, 1)));  // deterministic
  CHECK_FALSE(same(base, draw(43, 7, 3, 1)));
  CHECK_FALSE(same(base, draw(42ull | (1ull << 40), 7, 3, 1)));  // the seed's high word counts
  CHECK_FALSE(same(base, draw(42, 8, 3, 1)));
  CHECK_FALSE(same(base, draw(42, 7, 4, 1)));
  CHECK_FALSE(same(base, draw(42, 7, 3, 2)));
}

TEST_CASE("random_polar: each radius is its band's draw times the documented lobed profile") {
  // Reference, in double from the stage's own Philox draws (random123, not re-tested here): draw
  // M gives the phase (v0) and the split a2 / (a2 + a3) (v1), draw M + 1 the lobe phases (v0,
  // v1) and the total amplitude (v2); point i's draw gives its jitter (v0), band radius (v1) and
  // elevation (v2). A swapped draw, a missing lobe or a profile in the absolute angle fails.
  const std::vector<polar_config> configs = {{12, 0.3f, 4.5f, 6.0f, 0.0f, 0.0f, 0.48f, 0.8f},
                                             {7, 0.9f, 1.0f, 3.0f, 0.0f, 0.0f, 0.0f, 0.9f},
                                             {40, 0.0f, 10.0f, 10.0f, 0.0f, 0.0f, 0.9f, 0.9f}};
  int points = 0;
  double worst = 0.0;
  for (const polar_config& c : configs) {
    const tg::track_params p = polar_params(c, 1234567);
    const auto layout = tg::detail::scratch_layout::make(64, 64 * 4, p.num_samples);
    std::vector<unsigned char> scratch(layout.bytes);
    const int m = c.control_points;
    for (std::uint32_t env = 0; env < 200; ++env) {
      const std::vector<float3> pts = polar_points(p, scratch, layout, env * 7919u, env % 2);
      const tg::philox_stream rng(p.seed, env * 7919u, 0, env % 2, tg::stages::random_polar::stage_id);
      const tg::uniform4 d0 = rng.uniform(static_cast<std::uint32_t>(m));
      const tg::uniform4 d1 = rng.uniform(static_cast<std::uint32_t>(m + 1));
      const double phase = two_pi * d0.v[0];
      const double total = c.lobe_min + (static_cast<double>(c.lobe_max) - c.lobe_min) * d1.v[2];
      const double a2 = total * d0.v[1], a3 = total - a2;
      const double p2 = two_pi * d1.v[0], p3 = two_pi * d1.v[1];
      for (int i = 0; i < m; ++i) {
        const tg::uniform4 u = rng.uniform(static_cast<std::uint32_t>(i));
        const double t = two_pi / m * (i + c.jitter * (u.v[0] - 0.5));
        const double band = c.radius_min + (static_cast<double>(c.radius_max) - c.radius_min) * u.v[1];
        const double r = band * (1.0 + a2 * std::cos(2.0 * t + p2) + a3 * std::cos(3.0 * t + p3));
        const float3 q = pts[static_cast<std::size_t>(i)];
        const double err = std::hypot(q.x - r * std::cos(phase + t), q.y - r * std::sin(phase + t)) / r;
        worst = std::max(worst, err);
        ++points;
      }
    }
  }
  MESSAGE(points << " points, largest error relative to the radius " << worst);
  CHECK(points == 200 * (12 + 7 + 40));
  CHECK(worst < 2e-5);  // float angles below 4 pi and float cos / sin of them
}

TEST_CASE("random_polar: without lobes the points are the band's formula, bit for bit") {
  // Both amplitudes 0 keeps the tracks of the library before the lobes (with its old defaults:
  // radii 4-7 m, jitter 0.5). The reference repeats that formula's float operations.
  tg::track_params p = tg::presets::track(1);
  p.seed = 99;
  p.polar.radius_min = 4.0f;
  p.polar.radius_max = 7.0f;
  p.polar.angle_jitter = 0.5f;
  p.polar.lobe_amplitude_min = 0.0f;
  p.polar.lobe_amplitude_max = 0.0f;
  const auto layout = tg::detail::scratch_layout::make(64, 64 * 4, p.num_samples);
  std::vector<unsigned char> scratch(layout.bytes);
  const int m = p.polar.control_points;
  int differ = 0;
  for (std::uint32_t env = 0; env < 500; ++env) {
    const std::vector<float3> pts = polar_points(p, scratch, layout, env, 0);
    const tg::philox_stream rng(p.seed, env, 0, 0, tg::stages::random_polar::stage_id);
    const float phase = rng.uniform(static_cast<std::uint32_t>(m)).v[0] * 2.0f * tg::detail::pi;
    const float step = 2.0f * tg::detail::pi / static_cast<float>(m);
    std::vector<float3> band(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) {
      const tg::uniform4 u = rng.uniform(static_cast<std::uint32_t>(i));
      const float angle = phase + step * (static_cast<float>(i) + 0.5f * (u.v[0] - 0.5f));
      const float r = 4.0f + (7.0f - 4.0f) * u.v[1];
      band[static_cast<std::size_t>(i)] = float3{r * std::cos(angle), r * std::sin(angle), 0.0f};
    }
    differ += tg_test::same_bytes(pts, band) ? 0 : 1;
  }
  CHECK(differ == 0);
}

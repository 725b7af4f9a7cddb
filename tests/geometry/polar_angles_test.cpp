// stages::random_polar run on its own through the host block context, for 10,000 (env, seed)
// pairs over several parameter sets: the control points' polar angles, unwrapped from the first,
// increase strictly and span less than 2 pi (a star-shaped, simple control polygon), every
// angular gap is within the documented jitter of the step 2 pi / M, and radii and elevations
// stay in their bands. Host only: it drives a stage directly, without a course.
#include "backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/detail/host/block_context.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/stages.hpp>

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

}  // namespace

TEST_CASE("random_polar: polar angles strictly increase and span less than 2 pi, radii in band") {
  struct config {
    int control_points;
    float jitter, radius_min, radius_max, elevation_min, elevation_max;
  };
  // The preset, the extreme jitter (0.999: neighbours may come within 1e-3 of a step), no
  // jitter, the fewest points, the most points of the default tuning, a 3D band, a thin ring.
  const std::vector<config> configs = {
      {12, 0.5f, 4.0f, 7.0f, 0.0f, 0.0f},   {12, 0.999f, 4.0f, 7.0f, 0.0f, 0.0f}, {7, 0.0f, 1.0f, 20.0f, 0.0f, 0.0f},
      {4, 0.999f, 0.5f, 0.5f, 0.0f, 0.0f},  {64, 0.999f, 2.0f, 9.0f, 0.0f, 0.0f}, {33, 0.75f, 3.0f, 6.0f, 0.5f, 2.5f},
      {5, 0.9f, 100.0f, 101.0f, -3.0f, -1.0f},
  };
  const int seeds = 10;
  const int envs_per_seed = tg_test::scaled(1000, 50);
  const double angle_tol = 1e-5;  // float angles of magnitude < 4 pi, cos/sin and atan2 rounding
  int pairs = 0, failures = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    const config& c = configs[static_cast<std::size_t>(seed) % configs.size()];
    tg::track_params p = tg::presets::track(1);
    p.seed = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(seed + 1);  // spread over 64 bits
    p.polar.control_points = c.control_points;
    p.polar.angle_jitter = c.jitter;
    p.polar.radius_min = c.radius_min;
    p.polar.radius_max = c.radius_max;
    p.polar.elevation_min = c.elevation_min;
    p.polar.elevation_max = c.elevation_max;
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
        if (r < c.radius_min * (1 - 1e-6) || r > c.radius_max * (1 + 1e-6)) why = "radius " + std::to_string(r) + " out of band";
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

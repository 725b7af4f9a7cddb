#pragma once
/// @file
/// Synthetic inputs of the grid-scope tests: closed "stadium" loops (two straight sides joined
/// by half circles) whose sides are a chosen distance apart, and an independent measure of
/// clearance on them.

#include <track_gen/track_gen.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace grid_test {

namespace tg = track_gen;

/// Host copies of everything a grid_samples points to, for `envs` stadiums of `n` samples.
struct stadium_set {
  int num_envs = 0, capacity = 0;
  std::vector<float3> buffer0, buffer1;
  std::vector<int> count;
  std::vector<float> spacing, residual;
  std::vector<std::int32_t> active, moved;
  int flags[2] = {0, 0};  // any_active, windows

  /// View on these host vectors (the host backend's memory).
  tg::grid_samples view() {
    tg::grid_samples s{};
    s.buffer[0] = buffer0.data();
    s.buffer[1] = buffer1.data();
    s.count = count.data();
    s.spacing = spacing.data();
    s.active = active.data();
    s.residual = residual.data();
    s.moved = moved.data();
    s.any_active = &flags[0];
    s.windows = &flags[1];
    s.variants = nullptr;
    s.env_variant = nullptr;
    s.num_envs = num_envs;
    s.capacity = capacity;
    return s;
  }
};

/// A stadium of `n` samples: straight sides of length `straight` [m] a distance `gap` [m]
/// apart, joined by half circles of diameter `gap`, samples uniform in arc length.
inline std::vector<float3> stadium(int n, float straight, float gap) {
  const double r = 0.5 * gap, pi = 3.14159265358979323846;
  const double perimeter = 2.0 * straight + 2.0 * pi * r;
  std::vector<float3> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    double s = perimeter * i / n, x, y;
    if (s < straight) {
      x = s; y = -r;
    } else if ((s -= straight) < pi * r) {
      const double a = -0.5 * pi + s / r;
      x = straight + r * std::cos(a); y = r * std::sin(a);
    } else if ((s -= pi * r) < straight) {
      x = straight - s; y = r;
    } else {
      s -= straight;
      const double a = 0.5 * pi + s / r;
      x = r * std::cos(a); y = r * std::sin(a);
    }
    out[static_cast<std::size_t>(i)] = float3{static_cast<float>(x), static_cast<float>(y), 0.0f};
  }
  return out;
}

/// Stadiums with the given gaps (n samples each, 300 m straights), all active except `idle`.
inline stadium_set make_stadiums(const std::vector<float>& gaps, int n, int idle = -1) {
  stadium_set set;
  set.num_envs = static_cast<int>(gaps.size());
  set.capacity = n + 37;  // not a multiple of the block size, and larger than any count
  const std::size_t total = static_cast<std::size_t>(set.num_envs) * static_cast<std::size_t>(set.capacity);
  set.buffer0.assign(total, float3{0.0f, 0.0f, 0.0f});
  set.buffer1.assign(total, float3{0.0f, 0.0f, 0.0f});
  for (int e = 0; e < set.num_envs; ++e) {
    const std::vector<float3> pts = stadium(n, 300.0f, gaps[static_cast<std::size_t>(e)]);
    double perimeter = 0.0;
    for (int i = 0; i < n; ++i) {
      const float3 a = pts[static_cast<std::size_t>(i)], b = pts[static_cast<std::size_t>((i + 1) % n)];
      perimeter += std::hypot(b.x - a.x, b.y - a.y);
      set.buffer0[static_cast<std::size_t>(e) * set.capacity + i] = a;
    }
    set.count.push_back(n);
    set.spacing.push_back(static_cast<float>(perimeter / n));
    set.active.push_back(e == idle ? 0 : 1);
  }
  set.residual.assign(static_cast<std::size_t>(set.num_envs), 0.0f);
  set.moved.assign(static_cast<std::size_t>(set.num_envs), 0);
  return set;
}

/// Smallest distance between two samples more than `window` samples apart along the loop
/// (double precision, every pair).
inline double far_clearance(const float3* p, int n, int window) {
  double best = 1e300;
  for (int i = 0; i < n; ++i)
    for (int j = i + window + 1; j < n; ++j) {
      if (n - (j - i) <= window) continue;
      const double dx = double(p[i].x) - p[j].x, dy = double(p[i].y) - p[j].y, dz = double(p[i].z) - p[j].z;
      best = std::fmin(best, std::sqrt(dx * dx + dy * dy + dz * dz));
    }
  return best;
}

/// Parameters of the stage for the stadium tests: clearance 40 m, tolerance 0.2 m (the
/// smoothing pull holds the half circles a few centimetres short of the clearance).
inline tg::track_params stadium_params(int max_windows) {
  tg::track_params p = tg::presets::long_track(1);
  p.dense_repulsive.clearance = 40.0f;
  p.dense_repulsive.tolerance = 0.2f;
  p.dense_repulsive.max_windows = max_windows;
  return p;
}

}  // namespace grid_test

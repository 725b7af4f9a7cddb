#pragma once
/// @file
/// stages::dense_repulsive: the grid-scope relaxation of the dense centreline (grid_scope.hpp).

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/grid_scope.hpp>
#include <track_gen/params.hpp>

namespace track_gen::stages {

/// BOUNDED Jacobi relaxation of the dense centreline samples of long tracks (thousands of
/// samples, several blocks per track). Per iteration, every sample i closer than
/// `clearance` c to a sample j that is more than w samples away along the track, with
/// w = ceil(pi * c / (2 * ds)) (half a circle of diameter c at the mean sample spacing ds: closer
/// samples may legitimately be near each other), is pushed away from the samples j by half the
/// overlap (averaged over those j, scaled by `step`: a sum would fling a sample that faces a
/// whole side) and pulled by `smoothing` toward the midpoint of its neighbours; other samples
/// stay. The same discrete scheme as stages::polygon_separation, on points
/// instead of polygon segments. A window is `iterations_per_window` iterations; a track stops
/// when the largest overlap seen in the last iteration of a window is below `tolerance`, or
/// after `max_windows` windows. Each sample reads the other samples in one fixed order, so the
/// host and CUDA backends compute the same sums.
struct dense_repulsive {
  using scope = track_gen::scope::grid;
  static constexpr detail::stage_role role = detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 8;

  /// Whether the stage runs at all for this batch (otherwise nothing of it is launched).
  TRACK_GEN_HD static bool runs(const track_params& batch) { return batch.dense_repulsive.max_windows > 0; }
  /// Whether env e's track (parameters `env`) takes part; random tracks only, which the caller checks.
  TRACK_GEN_HD static bool enabled(const track_params& batch, const track_params& env) {
    return runs(batch) && env.dense_repulsive.clearance > 0.0f;
  }

  /// Samples around i that never repel it, for clearance c and spacing ds (at most n / 2).
  TRACK_GEN_HD static int window_samples(float c, float ds, int n) {
    const float w = ds > 0.0f ? std::ceil(0.5f * detail::pi * c / ds) : static_cast<float>(n);
    return w < static_cast<float>(n / 2) ? static_cast<int>(w) : n / 2;
  }

  /// One Jacobi iteration of sample i of env e, from buffer `from` into the other buffer.
  /// Holds values only (the stage's parameters, not the whole track_params): a kernel argument
  /// that the kernel never addresses.
  struct iteration {
    grid_samples s;
    dense_repulsive_params batch;
    int from;
    bool last;  ///< the window's last iteration: report the residual

    TRACK_GEN_HD void operator()(int e, int i) const {
      using namespace detail;
      const int n = s.count[e];
      if (i >= n) return;
      const dense_repulsive_params p = s.variants != nullptr ? s.variants[s.env_variant[e]].dense_repulsive : batch;
      const std::size_t offset = static_cast<std::size_t>(e) * static_cast<std::size_t>(s.capacity);
      const float3* src = (from == 0 ? s.buffer[0] : s.buffer[1]) + offset;
      float3* dst = (from == 0 ? s.buffer[1] : s.buffer[0]) + offset;
      const float c = p.clearance;
      const int w = window_samples(c, s.spacing[e], n);
      const float3 a = src[i];
      float3 push = f3(0.0f, 0.0f, 0.0f);
      float worst = 0.0f;
      int pushers = 0;
      for (int k = w + 1; k <= n - w - 1; ++k) {
        const int j = i + k < n ? i + k : i + k - n;
        const float3 d = a - src[j];
        const float d2 = dot(d, d);
        if (d2 >= c * c) continue;
        const float dist = std::sqrt(d2);
        worst = max_f(worst, c - dist);
        // Coincident samples give no direction; their neighbours' pushes separate them.
        if (dist > 1e-6f * c) {
          push = push + d * (0.5f * (c - dist) / dist);
          ++pushers;
        }
      }
      if (worst > 0.0f) {
        const float3 mid = (src[i == 0 ? n - 1 : i - 1] + src[i + 1 == n ? 0 : i + 1]) * 0.5f;
        const float scale = pushers > 0 ? p.step / static_cast<float>(pushers) : 0.0f;
        dst[i] = a + push * scale + (mid - a) * p.smoothing;
        s.moved[e] = 1;  // every writer stores the same value
      } else {
        dst[i] = a;
      }
      if (last) s.raise_residual(e, worst);
    }
  };

  /// Host code: records the relaxation through the grid launch context (grid_scope.hpp).
  template <class GridContext>
  static void run(GridContext& ctx, const grid_samples& s, const track_params& batch) {
    const int per_window = batch.dense_repulsive.iterations_per_window;
    ctx.bounded_loop(batch.dense_repulsive.max_windows, s, batch.dense_repulsive.tolerance, [&](auto& window) {
      for (int k = 0; k < per_window; ++k) window.for_each_sample(s, iteration{s, batch.dense_repulsive, k % 2, k + 1 == per_window});
    });
  }
};

}  // namespace track_gen::stages

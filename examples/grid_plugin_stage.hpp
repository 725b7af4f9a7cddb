#pragma once
/// @file
/// An example grid-scope plugin stage: `ease_corners`, a BOUNDED smoothing of the dense
/// centreline where it turns tighter than a target radius, written against the grid launch
/// context (include/track_gen/grid_scope.hpp). It sits after `catmull_rom`; the library runs it
/// on the dense samples of every accepted random track (several blocks per track on the GPU),
/// then resamples, re-frames, re-gates and re-validates what it moved.
///
/// Protocol used: `bounded_loop(max_windows, samples, tolerance, window)` runs windows while a
/// track still has a corner to ease (a WHILE conditional node under skip::conditional when
/// captured); `for_each_sample` runs one Jacobi iteration per launch (buffer 0 -> 1 -> 0);
/// `raise_residual` reports how far the last iteration of a window still moved a sample.

#include <track_gen/track_gen.hpp>

#include <cstdint>

namespace track_gen_examples {

struct ease_corners {
  using scope = track_gen::scope::grid;
  static constexpr track_gen::detail::stage_role role = track_gen::detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 65;  ///< draws nothing; ids 1..8 are the library's
  static constexpr float target_radius = 1.5f;   ///< [m] corners tighter than this are eased
  static constexpr float rate = 0.5f;            ///< pull toward the neighbours' midpoint per iteration
  static constexpr int iterations_per_window = 8;
  static constexpr int max_windows = 16;
  static constexpr float tolerance = 1e-3f;      ///< [m] a window that moved nothing more ends the loop

  static bool runs(const track_gen::track_params&) { return true; }
  TRACK_GEN_HD static bool enabled(const track_gen::track_params&, const track_gen::track_params&) { return true; }

  /// One iteration for sample i of env e: a sample whose Menger curvature (with its two
  /// neighbours) exceeds 1 / target_radius moves `rate` of the way to their midpoint.
  struct iteration {
    track_gen::grid_samples s;
    int from;
    bool last;
    TRACK_GEN_HD void operator()(int e, int i) const {
      using namespace track_gen::detail;
      const int n = s.count[e];
      if (i >= n) return;
      const float3* src = from == 0 ? s.samples(0, e) : s.samples(1, e);
      float3* dst = from == 0 ? s.samples(1, e) : s.samples(0, e);
      const float3 a = src[i == 0 ? n - 1 : i - 1], b = src[i], c = src[i + 1 == n ? 0 : i + 1];
      const float sides = length(b - a) * length(c - b) * length(c - a);
      const float kappa = sides > 0.0f ? 2.0f * length(cross(b - a, c - b)) / sides : 0.0f;
      float moved = 0.0f;
      if (kappa * target_radius > 1.0f) {
        const float3 step = ((a + c) * 0.5f - b) * rate;
        dst[i] = b + step;
        moved = length(step);
        s.moved[e] = 1;
      } else {
        dst[i] = b;
      }
      if (last) s.raise_residual(e, moved);
    }
  };

  template <class GridContext>
  static void run(GridContext& ctx, const track_gen::grid_samples& s, const track_gen::track_params&) {
    ctx.bounded_loop(max_windows, s, tolerance, [&](auto& window) {
      for (int k = 0; k < iterations_per_window; ++k)
        window.for_each_sample(s, iteration{s, k % 2, k + 1 == iterations_per_window});
    });
  }
};

/// The `track` preset's pipeline with the grid-scope plugin after the spline.
using eased_pipeline =
    track_gen::pipeline<track_gen::stages::random_polar, track_gen::stages::polygon_separation, track_gen::stages::catmull_rom,
                        ease_corners, track_gen::stages::resample, track_gen::stages::frames,
                        track_gen::stages::checkpoints, track_gen::stages::validate>;

/// Summary of a batch: how many tracks the stage changed (and kept), and the mean over tracks
/// of the largest curvature [1/m].
struct corner_summary {
  int relaxed = 0, rejected = 0, valid = 0;
  double mean_max_curvature = 0.0;
};

inline corner_summary summarise(const track_gen::track_snapshot& t) {
  corner_summary r;
  const std::size_t n = static_cast<std::size_t>(t.num_samples);
  for (int e = 0; e < t.num_envs; ++e) {
    const std::uint32_t st = t.status[static_cast<std::size_t>(e)];
    r.relaxed += (st & track_gen::status::relaxed) != 0;
    r.rejected += (st & track_gen::status::relax_rejected) != 0;
    r.valid += (st & track_gen::status::valid) != 0;
    float worst = 0.0f;
    for (std::size_t k = 0; k < n; ++k) worst = worst > t.curvature[e * n + k] ? worst : t.curvature[e * n + k];
    r.mean_max_curvature += worst;
  }
  r.mean_max_curvature /= t.num_envs;
  return r;
}

}  // namespace track_gen_examples

#pragma once
/// @file
/// An example plugin stage: `smooth_radii`, a BOUNDED Laplacian smoothing of the control
/// points' radii, written against the block-scope launch-context protocol (stages.hpp). It sits
/// between `random_polar` and `repulsive` and trades some of the jaggedness of wide radius bands
/// for fewer rejected attempts (sharp corners are the usual reason for a retry).
///
/// Protocol used: `skip_unless(flag, body)` skips the stage for tracks that are smooth already
/// (block-uniform decision); `bounded_loop(max_windows, active, body)` runs smoothing windows
/// while any control point is still jagged, never more than `max_windows`. The double buffer is
/// the workspace's `control_next`, so each thread owns whole points and no atomics are needed.

#include <track_gen/track_gen.hpp>

#include <cstdint>

namespace track_gen_examples {

struct smooth_radii {
  static constexpr track_gen::detail::stage_role role = track_gen::detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 64;  ///< draws nothing; ids 1..7 are the library's
  using scope = track_gen::scope::block;
  static constexpr int max_windows = 8;          ///< bound of the smoothing loop
  static constexpr float weight = 0.5f;          ///< pull of a radius toward its neighbours' mean
  static constexpr float tolerance = 0.15f;      ///< relative jaggedness left alone

  /// |r_i - mean(r_{i-1}, r_{i+1})| / mean: how far point i sticks out of its neighbours.
  TRACK_GEN_HD static float jaggedness(const float3* c, int m, int i) {
    using namespace track_gen::detail;
    const float r = radius(c[i]);
    const float mean = 0.5f * (radius(c[wrap(i - 1, m)]) + radius(c[wrap(i + 1, m)]));
    return mean > 0.0f ? std::fabs(r - mean) / mean : 0.0f;
  }
  TRACK_GEN_HD static float radius(float3 p) { return std::sqrt(p.x * p.x + p.y * p.y); }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, track_gen::detail::workspace& ws, const track_gen::track_params&) {
    using namespace track_gen::detail;
    const int m = ws.num_control;
    float worst = 0.0f;
    for (int i = ctx.rank(); i < m; i += ctx.size()) worst = max_f(worst, jaggedness(ws.control, m, i));
    ctx.skip_unless(worst > tolerance, [&] {
      ctx.bounded_loop(
          max_windows, [&] { return worst > tolerance; },
          [&](int) {
            for (int i = ctx.rank(); i < m; i += ctx.size()) {
              const float3 p = ws.control[i];
              const float r = radius(p);
              const float mean = 0.5f * (radius(ws.control[wrap(i - 1, m)]) + radius(ws.control[wrap(i + 1, m)]));
              const float scale = r > 0.0f ? (r + weight * (mean - r)) / r : 1.0f;
              ws.control_next[i] = f3(p.x * scale, p.y * scale, p.z);  // the angle and elevation stay
            }
            ctx.sync();
            for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = ws.control_next[i];
            ctx.sync();
            worst = 0.0f;
            for (int i = ctx.rank(); i < m; i += ctx.size()) worst = max_f(worst, jaggedness(ws.control, m, i));
          });
    });
  }
};

/// The `track` preset's pipeline with the plugin after random_polar.
using smoothed_pipeline =
    track_gen::pipeline<track_gen::stages::random_polar, smooth_radii, track_gen::stages::polygon_separation,
                        track_gen::stages::catmull_rom, track_gen::stages::resample, track_gen::stages::frames,
                        track_gen::stages::checkpoints, track_gen::stages::validate>;

}  // namespace track_gen_examples

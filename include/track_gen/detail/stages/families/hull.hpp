#pragma once
/// @file
/// The hull generator family (issue 13): random corners sorted by angle (or their convex
/// hull), each edge's midpoint pushed sideways by a random fraction of the edge, the 2 x corners
/// points interpolated by the shared Catmull-Rom spline. The classic "procedural racetrack"
/// construction (random points, hull, midpoint displacement; G. Maciel, "Generating procedural
/// racetracks", 2014; TrackGen's `hull` generator); written from that description.

#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/detail/stages/families/corner_points.hpp>
#include <track_gen/params.hpp>

#include <cstdint>

namespace track_gen::stages {

/// Generate stage of the hull family. Corners: `detail::family_block_corners` (a count in
/// [corners_min, corners_max], on a jittered grid or in a disc of size `extent`, at least
/// `min_corner_distance` apart, sorted by angle about their centroid, reduced to their convex
/// hull when `convex` = 1). Control point 2i is corner i, control point 2i + 1 the midpoint of
/// edge (i, i+1) moved along the edge's outward normal by u x |edge|, u uniform in
/// [-displacement, displacement]. Then `chaikin_passes` passes of Chaikin's corner cutting
/// (each doubles the points) spread every corner's turn over two points, so that the spline's
/// bends are not tighter than the polygon's edges allow: M = 2 x corners x 2^chaikin_passes
/// control points, z = 0. The spline gets the families' dense budget (detail::family_dense_budget).
///
/// Random stream: stage 11; draws 0 .. detail::family_corner_draws - 1 (the corners), then
/// draw family_corner_draws + i for edge i. Scratch: ws.control_next (corners, then a Chaikin pass), ws.dense (the 2n
/// points), ws.dense_s[0].
struct hull_corners {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 11;
  /// The family this stage draws (a pipeline with it as its generate stage draws only these).
  static constexpr generator_family family = generator_family::hull;
  /// Whether stages::polygon_separation runs many iterations on this family's control polygons (its narrow neighbour band keeps it relaxing for all max_iterations on nearly every track):
  /// its one-family pipeline then relaxes with stages::polygon_separation_listed (presets.hpp).
  static constexpr bool long_relaxation = true;
  /// Whether the CUDA backend relaxes with the lists too: no, testing every segment is 8 % faster
  /// there (docs/performance-log.md, entry 53: the rebuilds' full scans and the lists' loads cost
  /// a warp more than the segments they skip); the host backend keeps them.
  static constexpr bool lists_in_wide_blocks = false;

  /// Largest ws.num_control this stage writes for parameters p (host; sizes the scratch):
  /// 2 x corners_max x 2^chaikin_passes.
  static int max_control_points(const track_params& p) { return (2 * p.hull.corners_max) << p.hull.chaikin_passes; }

  /// Most dense samples the spline makes from them under the dense budget (host; sizes the
  /// scratch); at least the 8 x corners_max tries of the corners (detail::family_block_corners)
  /// and the 2 x corners_max points the stage keeps in ws.dense.
  static int max_dense_samples(const track_params& p) {
    return detail::family_dense_samples(p.spline.samples_per_segment, max_control_points(p), max_scratch_points(p));
  }
  /// The points the stage keeps in ws.dense for itself (host; sizes the scratch of a pipeline
  /// that stores no dense samples): the corners' tries, more than the 2 x corners_max points.
  static int max_scratch_points(const track_params& p) { return detail::family_corner_tries * p.hull.corners_max; }

  /// The displaced midpoint of corner i's edge a -> c (draw family_corner_draws + i of `rng`, the
  /// stage's stream): pushed sideways by up to `displacement` of the edge's length.
  TRACK_GEN_HD static float3 edge_point(const hull_params& h, const philox_stream& rng, float3 a, float3 c, int i) {
    using namespace detail;
    const float u = h.displacement * (2.0f * rng.uniform(family_corner_draws + static_cast<std::uint32_t>(i)).v[0] - 1.0f);
    // (e.y, -e.x) is the outward normal of a counter-clockwise polygon's edge e, |e| long.
    return (a + c) * 0.5f + f3(c.y - a.y, a.x - c.x, 0.0f) * u;
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const hull_params& h = p.hull;
    const philox_stream rng = ws.rng(stage_id);
    const int n = family_block_corners(ctx, ws, rng, h.corners_min, h.corners_max, h.layout, h.extent,
                                       h.min_corner_distance, h.max_turn, h.convex != 0);
    // The 2n points go to ws.dense, then each Chaikin pass to control_next or control, so that
    // the last lands in ws.control.
    for (int i = ctx.rank(); i < n; i += ctx.size()) {
      ws.dense[2 * i] = ws.control_next[i];
      ws.dense[2 * i + 1] = edge_point(h, rng, ws.control_next[i], ws.control_next[wrap(i + 1, n)], i);
    }
    ctx.sync();
    int m = 2 * n;
    const float3* src = ws.dense;
    if (h.chaikin_passes == 0) {
      for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = src[i];
    }
    for (int pass = 0; pass < h.chaikin_passes; ++pass) {
      // Chaikin's corner cutting (G. Chaikin, "An algorithm for high-speed curve generation",
      // 1974): edge (a, b) becomes the points 3/4 a + 1/4 b and 1/4 a + 3/4 b.
      float3* dst = (h.chaikin_passes - pass) % 2 == 1 ? ws.control : ws.control_next;
      for (int i = ctx.rank(); i < m; i += ctx.size()) {
        const float3 a = src[i], c = src[wrap(i + 1, m)];
        dst[2 * i] = a * 0.75f + c * 0.25f;
        dst[2 * i + 1] = a * 0.25f + c * 0.75f;
      }
      ctx.sync();
      src = dst;
      m *= 2;
    }
    ws.num_control = m;
    ws.dense_budget = detail::family_dense_budget(p.spline.samples_per_segment);
    ctx.sync();
  }
};

}  // namespace track_gen::stages

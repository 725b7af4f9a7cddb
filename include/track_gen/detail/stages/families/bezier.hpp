#pragma once
/// @file
/// The bezier generator family (issue 13): random corners joined by a closed piecewise cubic
/// Bezier curve. The construction is the well-known "random shape from Bezier curves" one
/// (ImportanceOfBeingErnest, answer to "Create random shape/contour using matplotlib", Stack
/// Overflow, 2018; also TrackGen's `bezier` generator): corners sorted by angle, a tangent at
/// each corner that bisects its two edges' directions (blended toward the incoming edge by
/// `edgy`), handles `rad` times the distance to the neighbour. Written from that description.

#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/detail/stages/families/corner_points.hpp>
#include <track_gen/params.hpp>

#include <cstdint>

namespace track_gen::stages {

/// Generate stage of the bezier family. Corners: `detail::family_block_corners` (a count in
/// [corners_min, corners_max], on a jittered grid or in a disc of size `extent`, at least
/// `min_corner_distance` apart, sorted by angle: a simple counter-clockwise polygon). Tangent
/// at corner i: the unit bisector b of its incoming and outgoing edge directions, blended as
/// normalize(lerp(b, incoming, edgy)). Piece i runs from corner i to corner i+1 with handles
/// along the tangents; a handle at a corner is min(rad x the edge's length, handle_clamp x the
/// corner's shorter edge), so the two handles of an edge (each <= half of it) never cross. Each
/// piece is sampled at t = j / samples_per_piece, j = 0 .. samples_per_piece - 1: the
/// M = corners x samples_per_piece control points of the shared Catmull-Rom spline, which
/// follows the Bezier curve closely (it interpolates these samples). z = 0.
///
/// The control points are samples of one curve, about 1 m apart, not the corners of a polygon:
/// stages::polygon_separation leaves max(samples_per_piece, 2) segments on either side of a point alone
/// (ws.relax_neighbours: a piece's worth each way), else a corner's own bend
/// reads as the track coming back on itself and the relaxation never settles (68 % of bezier
/// tracks ran all its iterations with 2). The spline gets the families' dense budget
/// (detail::family_dense_budget).
///
/// Random stream: stage 10; draws 0 .. detail::family_corner_draws - 1 (the corners).
/// Scratch: ws.control_next (corners), ws.dense (tangents and handle lengths), ws.dense_s[0].
struct bezier_corners {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 10;
  /// The family this stage draws (a pipeline with it as its generate stage draws only these).
  static constexpr generator_family family = generator_family::bezier;
  /// Whether stages::polygon_separation runs many iterations on this family's control polygons (its tracks mostly stop after the first iteration):
  /// its one-family pipeline then relaxes with stages::polygon_separation_listed (presets.hpp).
  static constexpr bool long_relaxation = false;

  /// Largest ws.num_control this stage writes for parameters p (host; sizes the scratch):
  /// corners_max x samples_per_piece.
  static int max_control_points(const track_params& p) { return p.bezier.corners_max * p.bezier.samples_per_piece; }

  /// Most dense samples the spline makes from them under the dense budget (host; sizes the
  /// scratch); at least the 8 x corners_max tries of the corners (detail::family_block_corners)
  /// and the 2 x corners_max tangents and handles the stage keeps in ws.dense.
  static int max_dense_samples(const track_params& p) {
    return detail::family_dense_samples(p.spline.samples_per_segment, max_control_points(p), max_scratch_points(p));
  }
  /// The points the stage keeps in ws.dense for itself (host; sizes the scratch of a pipeline
  /// that stores no dense samples): the corners' tries, more than the tangents and handles.
  static int max_scratch_points(const track_params& p) { return detail::family_corner_tries * p.bezier.corners_max; }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const bezier_params& b = p.bezier;
    const int n = family_block_corners(ctx, ws, ws.rng(stage_id), b.corners_min, b.corners_max, b.layout, b.extent,
                                       b.min_corner_distance, b.max_turn);
    const float3* corner = ws.control_next;
    // ws.dense[i]: unit tangent of corner i; ws.dense[n + i]: (incoming handle, outgoing handle, 0).
    for (int i = ctx.rank(); i < n; i += ctx.size()) {
      const float3 prev = corner[wrap(i - 1, n)], here = corner[i], next = corner[wrap(i + 1, n)];
      const float d_in = length(here - prev), d_out = length(next - here);
      const float3 in = normalize_or(here - prev, f3(1.0f, 0.0f, 0.0f));
      const float3 out = normalize_or(next - here, in);
      // A reversal (in = -out) has no bisector: the tangent is then the left normal of `in`
      // (the polygon is counter-clockwise).
      const float3 bisector = normalize_or(in + out, f3(-in.y, in.x, 0.0f));
      ws.dense[i] = normalize_or(lerp(bisector, in, b.edgy), bisector);
      const float cap = b.handle_clamp * min_f(d_in, d_out);
      ws.dense[n + i] = f3(min_f(b.rad * d_in, cap), min_f(b.rad * d_out, cap), 0.0f);
    }
    ctx.sync();
    const int k = b.samples_per_piece;
    const int m = n * k;
    for (int w = ctx.rank(); w < m; w += ctx.size()) {
      const int i = w / k;
      const int i1 = wrap(i + 1, n);
      const float t = static_cast<float>(w - i * k) / static_cast<float>(k);
      const float3 p0 = corner[i], p3 = corner[i1];
      const float3 p1 = p0 + ws.dense[i] * ws.dense[n + i].y;
      const float3 p2 = p3 - ws.dense[i1] * ws.dense[n + i1].x;
      const float s = 1.0f - t;
      ws.control[w] = p0 * (s * s * s) + p1 * (3.0f * s * s * t) + p2 * (3.0f * s * t * t) + p3 * (t * t * t);
    }
    ws.num_control = m;
    ws.relax_neighbours = k > 2 ? k : 2;
    ws.dense_budget = detail::family_dense_budget(p.spline.samples_per_segment);
    ctx.sync();
  }
};

}  // namespace track_gen::stages

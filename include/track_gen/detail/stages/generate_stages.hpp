#pragma once
/// @file
/// The generating stages of random tracks: random_polar and the control polygon's relaxation
/// (polygon_separation, polygon_separation_listed).

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>

#include <type_traits>

namespace track_gen::detail {

/// How far from point p the polygon separation stage looks for segments that may push it: the clearance,
/// plus more than the rounding of a point-segment distance near p (relative 1e-3 of the
/// clearance, 1e-5 of p's coordinates), so that a segment beyond it never computes a distance
/// below the clearance and skipping it leaves every sum bit-identical.
TRACK_GEN_HD inline float separation_reach(float clearance, float3 p) {
  return clearance * 1.001f + 1e-5f * (1.0f + std::fabs(p.x) + std::fabs(p.y) + std::fabs(p.z));
}

/// Whether p lies within `reach` of the bounding box of segment [a, b] on every axis (false:
/// the segment is farther than `reach` from p, and its projection can be skipped).
TRACK_GEN_HD inline bool within_segment_box(float3 p, float3 a, float3 b, float reach) {
  return p.x >= min_f(a.x, b.x) - reach && p.x <= max_f(a.x, b.x) + reach && p.y >= min_f(a.y, b.y) - reach &&
         p.y <= max_f(a.y, b.y) + reach && p.z >= min_f(a.z, b.z) - reach && p.z <= max_f(a.z, b.z) + reach;
}

/// The bounding box of group g's segments of the M-point polygon `points` (separation_box): points
/// g x separation_group to the group's last segment's end, wrapping to point 0. Folded with min_f
/// and max_f, whose exact results for non-NaN coordinates make a point that is within `reach` of
/// one of the group's segment boxes (within_segment_box) within `reach` of the group's box too;
/// a NaN point makes the box infinite.
TRACK_GEN_HD inline separation_box segment_group_box(const float3* points, int m, int g) {
  const int first = g * separation_group;
  const int end = first + separation_group < m ? first + separation_group : m;
  float3 lo = points[first], hi = lo;
  bool nan = false;
  for (int j = first; j <= end; ++j) {
    const float3 q = points[j < m ? j : 0];
    nan = nan || !(q.x == q.x && q.y == q.y && q.z == q.z);
    lo = f3(min_f(lo.x, q.x), min_f(lo.y, q.y), min_f(lo.z, q.z));
    hi = f3(max_f(hi.x, q.x), max_f(hi.y, q.y), max_f(hi.z, q.z));
  }
  if (nan) return separation_box{f3(-INFINITY, -INFINITY, -INFINITY), f3(INFINITY, INFINITY, INFINITY)};
  return separation_box{lo, hi};
}

/// The sphere of segment [a, b] that the listed relaxation stages test a point against in blocks
/// that keep no lists (within_segment_sphere): centred on its midpoint, of radius |b - a| / 2
/// raised by 1e-4 of that half-length and 1e-4 of the midpoint's coordinates. Every point of the segment lies within the
/// half-length of the midpoint; the raise is hundreds of times the rounding of the centre, of the
/// radius and of a point's distance to the centre (each a few units of 2^-24 of the coordinates), so
/// that with separation_reach's margin a segment whose computed distance to p is below the
/// clearance always passes the test (tests/geometry/polygon_separation_lists_test checks it on
/// segments and points at the edges of the test, long segments and large coordinates).
TRACK_GEN_HD inline separation_sphere segment_sphere(float3 a, float3 b) {
  const float3 c = (a + b) * 0.5f;
  const float half_length = length(b - a) * 0.5f;
  const float raise = 1e-4f * (half_length + std::fabs(c.x) + std::fabs(c.y) + std::fabs(c.z));
  return separation_sphere{c.x, c.y, c.z, half_length + raise};
}

/// Whether p lies within `reach` of sphere s (segment_sphere): |p - centre| <= radius + reach,
/// compared squared. False when p or the sphere is NaN; a segment with an infinite coordinate
/// (which no point's distance can be below the clearance of) may pass or not.
TRACK_GEN_HD inline bool within_segment_sphere(float3 p, const separation_sphere& s, float reach) {
  const float dx = p.x - s.x, dy = p.y - s.y, dz = p.z - s.z;
  const float limit = s.radius + reach;
  return dx * dx + dy * dy + dz * dz <= limit * limit;
}

/// Whether p lies within `reach` of box b on every axis (within_segment_box for a group's box).
TRACK_GEN_HD inline bool within_group_box(float3 p, const separation_box& b, float reach) {
  return p.x >= b.lo.x - reach && p.x <= b.hi.x + reach && p.y >= b.lo.y - reach && p.y <= b.hi.y + reach &&
         p.z >= b.lo.z - reach && p.z <= b.hi.z + reach;
}

/// Whether segment j (control points j, j + 1) is among the `near` segments on either side of
/// control point i of an M-point polygon, which stages::polygon_separation never pushes it from.
TRACK_GEN_HD inline bool separation_near(int i, int j, int m, int near) {
  // Segment j is rel segments ahead of i (m - k: k behind); i and j are in [0, m), so no modulo
  // (an integer division per pair) is needed.
  const int rel = j >= i ? j - i : j - i + m;
  return rel < near || rel >= m - near;
}

/// Calls f(j) for each segment j in [j_begin, j_end), in increasing order, that is not among the
/// `near` segments on either side of control point i (separation_near false): the loop bounds
/// leave the band out, so that no pair tests it. The band is the wrapped run [i - near, i + near)
/// of segments; 2 x near >= M leaves none.
template <class F>
TRACK_GEN_HD void for_segments_outside_band(int i, int near, int m, int j_begin, int j_end, F&& f) {
  if (2 * near >= m) return;
  const int lo = i - near, hi = i + near;
  // The segments outside the band: [0, lo) and [hi, M), or one run when the band wraps.
  int first_begin = 0, first_end = lo, second_begin = hi, second_end = m;
  if (lo < 0) {
    first_begin = hi;
    first_end = lo + m;
    second_begin = second_end = 0;
  } else if (hi > m) {
    first_begin = hi - m;
    first_end = lo;
    second_begin = second_end = 0;
  }
  const int a_end = first_end < j_end ? first_end : j_end;
  for (int j = first_begin > j_begin ? first_begin : j_begin; j < a_end; ++j) f(j);
  const int b_end = second_end < j_end ? second_end : j_end;
  for (int j = second_begin > j_begin ? second_begin : j_begin; j < b_end; ++j) f(j);
}

/// Adds segment [a, b]'s push on point p to `push` and raises `overlap` to its overlap, when
/// the segment is within `clearance` of p (the callers skip segments whose sphere or box is out
/// of reach first). Every pass of stages::polygon_separation goes through this one function, so that they round
/// alike.
TRACK_GEN_HD inline void separation_push(float3& push, float& overlap, float3 p, float3 a, float3 b, float clearance) {
  const float3 q = lerp(a, b, closest_parameter(p, a, b));
  const float3 away = p - q;
  const float d = length(away);
  if (d < clearance) {
    const float3 side = normalize_or(f3(-(b - a).y, (b - a).x, 0.0f), f3(1.0f, 0.0f, 0.0f));
    push = push + normalize_or(away, side) * (0.5f * (clearance - d));
    overlap = max_f(overlap, clearance - d);
  }
}

/// FamilyStage::lists_in_wide_blocks where the family stage says, else true: whether its one-family
/// pipelines' listed relaxation keeps the lists on the CUDA backend (presets::one_family_pipeline).
template <class FamilyStage, class = void>
inline constexpr bool lists_in_wide_blocks_v = true;
template <class FamilyStage>
inline constexpr bool lists_in_wide_blocks_v<FamilyStage, std::void_t<decltype(FamilyStage::lists_in_wide_blocks)>> =
    FamilyStage::lists_in_wide_blocks;

}  // namespace track_gen::detail

namespace track_gen::stages {

/// M control points at sorted jittered angles around the origin, radii uniform in
/// [radius_min, radius_max] times a lobed profile 1 + a2 cos(2 t + p2) + a3 cos(3 t + p3) of the
/// angle t from the phase (random_polar_params), elevations uniform in [elevation_min,
/// elevation_max]. The profile stays >= 0.1 (the amplitudes sum to at most 0.9), so the points
/// keep strictly increasing polar angles off the origin: the polygon is star-shaped about the
/// origin and never self-intersects. Random stream: stage 1, draw i for point i (angle, radius,
/// elevation), draw M for the phase and the split a2 / (a2 + a3), draw M + 1 for p2, p3 and the
/// total amplitude. With both lobe amplitudes 0 the profile is exactly 1.
struct random_polar {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 1;

  /// One track's draws shared by all its points: the phase of the angles [rad] and the lobes.
  struct shape {
    float phase;     ///< angle of point 0 before its jitter [rad]
    float a2, a3;    ///< lobe amplitudes, fractions of the radius
    float p2, p3;    ///< lobe phases [rad]
  };

  /// The control points it writes for `p` (host; sizes the scratch).
  static int max_control_points(const track_params& p) { return p.polar.control_points; }

  /// The track's shape (draws M and M + 1 of `rng`, the stage's stream).
  TRACK_GEN_HD static shape draw_shape(const track_params& p, const philox_stream& rng) {
    using namespace detail;
    const std::uint32_t m = static_cast<std::uint32_t>(p.polar.control_points);
    const uniform4 d0 = rng.uniform(m);
    const uniform4 d1 = rng.uniform(m + 1u);
    const float total = lerp(p.polar.lobe_amplitude_min, p.polar.lobe_amplitude_max, d1.v[2]);
    shape s;
    s.phase = d0.v[0] * 2.0f * pi;
    s.a2 = mul_rn(total, d0.v[1]);  // used twice (mul_rn: the same bits in every kernel)
    s.a3 = total - s.a2;
    s.p2 = d1.v[0] * 2.0f * pi;
    s.p3 = d1.v[1] * 2.0f * pi;
    return s;
  }

  /// Control point i (draw i of `rng`, the stage's stream) of the track drawn as `s`
  /// (draw_shape(p, rng)).
  TRACK_GEN_HD static float3 point(const track_params& p, const philox_stream& rng, const shape& s, int i) {
    using namespace detail;
    const float step = 2.0f * pi / static_cast<float>(p.polar.control_points);
    const uniform4 u = rng.uniform(static_cast<std::uint32_t>(i));
    const float x = static_cast<float>(i) + p.polar.angle_jitter * (u.v[0] - 0.5f);
    // The angle as the band alone computed it (one multiply-add on the device); t, used three
    // times, rounded on its own (mul_rn): the same bits in every pipeline's kernel.
    const float angle = mul_add(step, x, s.phase);
    float r = lerp(p.polar.radius_min, p.polar.radius_max, u.v[1]);
    // Without lobes the factor would be exactly 1: skipped, so that gate courses and long_track
    // (lobes 0) spend no cosines on it.
    if (s.a2 != 0.0f || s.a3 != 0.0f) {
      const float t = mul_rn(step, x);
      r *= mul_add(s.a3, std::cos(mul_add(3.0f, t, s.p3)), mul_add(s.a2, std::cos(mul_add(2.0f, t, s.p2)), 1.0f));
    }
    const float z = lerp(p.polar.elevation_min, p.polar.elevation_max, u.v[2]);
    return f3(r * std::cos(angle), r * std::sin(angle), z);
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    const int m = p.polar.control_points;
    const philox_stream rng = ws.rng(stage_id);
    const shape s = draw_shape(p, rng);
    for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = point(p, rng, s, i);
    ws.num_control = m;
    ctx.sync();
  }
};

/// BOUNDED relaxation of the control polygon (block scope): every control point closer than
/// `clearance` to a polygon segment that is not among its near neighbours along the polygon (the
/// `ws.relax_neighbours` segments on either side: those incident to it and to its neighbours,
/// more for a polygon refined by corner cutting) is pushed away by half the overlap (summed over
/// segments); while any overlap remains, every point is also pulled a little toward the
/// midpoint of its neighbours. Stops when the largest overlap is below `tolerance` or after
/// `max_iterations`.
///
/// The pull applies to every point, not only to the pushed ones: a pull that switched on at the
/// clearance made a point that sits at the clearance flip between pulled and not pulled from one
/// iteration to the next, never settling, and turned the last bits of rounding (the CUDA
/// backend's fused multiply-adds) into millimetres of difference between backends.
///
/// A segment farther from the point than the clearance cannot push it; its projection is skipped,
/// which changes no result. The scans test each segment's bounding box (detail::
/// within_segment_box), with detail::separation_reach's margin; where `CandidateLists` but the
/// block keeps none (hull and voronoi on the GPU: tests_spheres), every segment is tested against a
/// sphere around it instead (detail::segment_sphere, computed once an iteration: one 16-byte load
/// and nine operations a pair, where the box took three loads and eighteen), with the neighbour
/// band left out of the loop bounds (detail::for_segments_outside_band).
///
/// Scratch: the spheres and the lists are kept in the dense samples' region (ws.separation_spheres,
/// ws.separation_lists): a stage between the generate stage and the spline must not keep anything
/// there.
///
/// Each point's push is the sum, in chunk order, of partial sums over `detail::separation_chunks(M)`
/// chunks of its segments (each partial in segment order). An iteration spreads the M x chunks
/// (point, chunk) tests over the block and adds the partials by the thread that owns the point.
/// No atomics, and the same sums whatever the block size, so the result is deterministic and the
/// host backend's.
///
/// `CandidateLists` (stages::polygon_separation_listed): each point's owner thread scans for it alone,
/// chunk by chunk (the same sums), and keeps a
/// candidate list (a Verlet list: L. Verlet, "Computer 'experiments' on classical fluids",
/// Phys. Rev. 159, 1967), the segments whose bounding box lay within the reach plus a skin
/// (detail::separation_skin of the clearance) when the list was built, and its owner thread tests
/// those only. While the points have moved by less than half the skin in all since then (the
/// largest move of each iteration, summed), no segment outside a list can come within the
/// clearance of its point, so the sums, taken chunk by chunk in the same order, are the same bit
/// for bit as testing every segment. The lists are rebuilt by a full scan when the moves reach
/// half the skin; a point with more candidates than a list holds scans all of them every
/// iteration. The first iteration builds the lists. In one-thread blocks (the host backend) its
/// full scans (the first iteration and each rebuild) test the bounding box of each group of
/// detail::separation_group consecutive segments first (computed once per scan) and skip the
/// groups out of reach: a segment whose box is within reach lies in a group whose box is, so the
/// scans list and push the same segments in the same order. Wider blocks scan every segment: a
/// warp runs the union of its lanes' groups in reach, nearly all of them.
/// Worth it where the relaxation runs many iterations (the hull family runs all max_iterations
/// on nearly every track). In the families' dispatch kernel, whose polar and bezier tracks
/// mostly stop after the first iteration, the extra code made those tracks 6-7 % slower
/// (docs/performance-log.md, entry 34): stages::polygon_separation tests every segment every iteration.
///
/// `ListsInWideBlocks` false: blocks of more than one thread (the CUDA backend's) test every
/// segment outside the band every iteration, against its sphere (tests_spheres); one-thread
/// blocks (the host backend's) keep the lists. The same control points either way.
template <bool CandidateLists, bool ListsInWideBlocks = true>
struct basic_polygon_separation {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 2;

  /// Whether blocks of context Ctx relax with the candidate lists.
  template <class Ctx>
  static constexpr bool uses_lists = CandidateLists && (ListsInWideBlocks || Ctx::size() == 1);

  /// Whether the plain path (blocks without lists) tests spheres around the segments
  /// (detail::segment_sphere, computed at the start of each iteration) instead of their boxes:
  /// in the stages of the long relaxations (hull and voronoi on the GPU: 11 % and 5 % faster).
  /// The plain stage, whose polygons mostly pass the first iteration (the `track` preset, the
  /// families' dispatch), keeps the boxes: the spheres' extra barrier and the larger loop cost
  /// the `track` preset 1.3 % and the five-family mix 19 % (docs/performance-log.md, entry 55).
  static constexpr bool tests_spheres = CandidateLists;

  /// Whether the full scans skip groups of segments by their boxes: where one thread scans for
  /// its point alone (the host backend's one-thread blocks). A warp runs the union of the groups
  /// its lanes have in reach, nearly all of them, and on the GPU the boxes cost more than they
  /// saved (docs/performance-log.md, entries 51 and 53); the scans list and push the same segments
  /// either way.
  template <class Ctx>
  static constexpr bool skips_groups = Ctx::size() == 1;

  /// The group boxes of `points` (detail::segment_group_box) into ws.separation_boxes(), a thread
  /// a group, and a barrier; nothing where the scans do not skip groups.
  template <class Ctx>
  TRACK_GEN_HD static void write_group_boxes(Ctx& ctx, const detail::workspace& ws, const float3* points, int m) {
    if constexpr (skips_groups<Ctx>) {
      detail::separation_box* boxes = ws.separation_boxes();
      for (int g = ctx.rank(); g < detail::separation_groups(m); g += ctx.size()) boxes[g] = detail::segment_group_box(points, m, g);
      ctx.sync();
    }
  }

  /// Calls scan(j0, j1) for each run [j0, j1) of segments in [j_begin, j_end) that one group holds,
  /// in increasing order, skipping the groups whose boxes are beyond `reach` of p; scan(j_begin,
  /// j_end) where the scans do not skip groups.
  template <class Ctx, class Scan>
  TRACK_GEN_HD static void for_groups_in_reach(const detail::separation_box* boxes, float3 p, float reach, int j_begin,
                                               int j_end, Scan&& scan) {
    if constexpr (skips_groups<Ctx>) {
      for (int j = j_begin; j < j_end;) {
        const int g = j / detail::separation_group;
        const int g_end = (g + 1) * detail::separation_group < j_end ? (g + 1) * detail::separation_group : j_end;
        if (detail::within_group_box(p, boxes[g], reach)) scan(j, g_end);
        j = g_end;
      }
    } else if (j_begin < j_end) {
      scan(j_begin, j_end);
    }
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const int m = ws.num_control;
    const float clearance = p.polygon_separation.clearance;
    const int near = ws.relax_neighbours;
    const int chunks = separation_chunks(m);
    const int items = m * chunks;
    const float skin = uses_lists<Ctx> ? separation_skin * clearance : 0.0f;
    float moved = 0.0f;  // block-uniform: the largest move of each iteration since the lists were built, summed
    // The iterate and the next one. The listed stages (the lists' and the spheres' paths) swap
    // them after each iteration instead of copying: the lists' one barrier an iteration
    // (reduce_max_pair) separates every read of an iterate from the next iteration's writes to
    // it, and in the spheres' path the barrier after the next iterate is written separates this
    // iteration's reads of the iterate from the next one's writes. The boxes' path copies, as its
    // polygons rarely reach a second iteration.
    float3* current = ws.control;
    float3* next = ws.control_next;
    for (int iteration = 0; iteration < p.polygon_separation.max_iterations; ++iteration) {
      float overlap = 0.0f;
      if constexpr (!uses_lists<Ctx>) {
        // With the spheres, three barriers an iteration: after the spheres, after the partials
        // (reduce_max), after the next iterate (the next iteration's spheres read it).
        [[maybe_unused]] separation_sphere* const spheres = ws.separation_spheres();
        if constexpr (tests_spheres) {
          for (int j = ctx.rank(); j < m; j += ctx.size()) spheres[j] = segment_sphere(current[j], current[j + 1 < m ? j + 1 : 0]);
          ctx.sync();
        }
        for (int w = ctx.rank(); w < items; w += ctx.size()) {
          const int i = w / chunks;
          const int chunk = w - i * chunks;
          const float3 pi_ = current[i];
          const float reach = separation_reach(clearance, pi_);
          float3 push = f3(0.0f, 0.0f, 0.0f);
          const int j_begin = chunk * m / chunks, j_end = (chunk + 1) * m / chunks;
          if constexpr (tests_spheres) {
            for_segments_outside_band(i, near, m, j_begin, j_end, [&](int j) {
              // A segment too far to push (its sphere out of reach) takes no projection.
              if (within_segment_sphere(pi_, spheres[j], reach))
                separation_push(push, overlap, pi_, current[j], current[j + 1 < m ? j + 1 : 0], clearance);
            });
          } else {
            float3 a = current[j_begin];  // segment j's first point, carried from the previous segment's second
            for (int j = j_begin; j < j_end; ++j) {
              const float3 b = current[j + 1 < m ? j + 1 : 0];
              // A segment too far to push (its box out of reach) takes no projection.
              if (!separation_near(i, j, m, near) && within_segment_box(pi_, a, b, reach))
                separation_push(push, overlap, pi_, a, b, clearance);
              a = b;
            }
          }
          ws.separation[w] = separation_partial{push};
        }
        // reduce_max ends with a barrier: every partial is written.
        if (ctx.reduce_max(overlap) < p.polygon_separation.tolerance) break;
        for (int i = ctx.rank(); i < m; i += ctx.size()) {
          const float3 pi_ = current[i];
          float3 push = f3(0.0f, 0.0f, 0.0f);
          for (int chunk = 0; chunk < chunks; ++chunk) push = push + ws.separation[i * chunks + chunk].push;
          const float3 mid = (current[wrap(i - 1, m)] + current[wrap(i + 1, m)]) * 0.5f;
          next[i] = pi_ + push + (mid - pi_) * p.polygon_separation.smoothing;
        }
        ctx.sync();
      } else {
        // Block-uniform: the lists are built in the first iteration and rebuilt once the points
        // may have closed half the skin. A build also pushes, summed as the plain stage sums.
        const bool rebuild = iteration == 0 || !(2.0f * moved <= skin);  // an infinite move rebuilds
        if (rebuild) {
          moved = 0.0f;
          write_group_boxes(ctx, ws, current, m);
        }
        float largest_move = 0.0f;
        for (int i = ctx.rank(); i < m; i += ctx.size()) {
          const float3 pi_ = current[i];
          const float reach = separation_reach(clearance, pi_);
          separation_list& list = ws.separation_lists()[i];
          float3 push = f3(0.0f, 0.0f, 0.0f);
          if (rebuild) {
            // The groups whose boxes are within the list's reach, segment by segment: the same
            // segments in the same order as a scan of all of them lists and pushes.
            const float list_reach = reach + skin;
            int count = 0;
            for (int chunk = 0; chunk < chunks; ++chunk) {
              float3 part = f3(0.0f, 0.0f, 0.0f);
              const int j_begin = chunk * m / chunks, j_end = (chunk + 1) * m / chunks;
              for_groups_in_reach<Ctx>(ws.separation_boxes(), pi_, list_reach, j_begin, j_end, [&](int j0, int j1) {
                float3 a = current[j0];
                for (int j = j0; j < j1; ++j) {
                  const float3 b = current[j + 1 < m ? j + 1 : 0];
                  if (!separation_near(i, j, m, near) && within_segment_box(pi_, a, b, list_reach)) {
                    if (count < separation_list_capacity) list.segment[count] = static_cast<std::uint16_t>(j);
                    ++count;
                    if (within_segment_box(pi_, a, b, reach)) separation_push(part, overlap, pi_, a, b, clearance);
                  }
                  a = b;
                }
              });
              push = push + part;
            }
            list.count = count <= separation_list_capacity ? static_cast<std::uint16_t>(count) : separation_list_overflow;
          } else if (list.count == separation_list_overflow) {
            // More candidates than a list holds: every segment, every iteration.
            for (int chunk = 0; chunk < chunks; ++chunk) {
              float3 part = f3(0.0f, 0.0f, 0.0f);
              const int j_begin = chunk * m / chunks, j_end = (chunk + 1) * m / chunks;
              float3 a = current[j_begin];  // carried, as in the first iteration's scan
              for (int j = j_begin; j < j_end; ++j) {
                const float3 b = current[j + 1 < m ? j + 1 : 0];
                if (!separation_near(i, j, m, near) && within_segment_box(pi_, a, b, reach))
                  separation_push(part, overlap, pi_, a, b, clearance);
                a = b;
              }
              push = push + part;
            }
          } else {
            const int count = list.count;
            int k = 0;
            for (int chunk = 0; chunk < chunks; ++chunk) {
              float3 part = f3(0.0f, 0.0f, 0.0f);
              const int j_end = (chunk + 1) * m / chunks;
              for (; k < count && list.segment[k] < j_end; ++k) {
                const int j = list.segment[k];
                const float3 a = current[j];
                const float3 b = current[j + 1 < m ? j + 1 : 0];
                if (within_segment_box(pi_, a, b, reach)) separation_push(part, overlap, pi_, a, b, clearance);
              }
              push = push + part;
            }
          }
          const float3 mid = (current[wrap(i - 1, m)] + current[wrap(i + 1, m)]) * 0.5f;
          const float3 moved_to = pi_ + push + (mid - pi_) * p.polygon_separation.smoothing;
          next[i] = moved_to;
          // A NaN move counts as infinite: max_f would drop it (and every maximum before it) for
          // the next finite one, and a list would outlive its skin.
          const float move = length(moved_to - pi_);
          largest_move = max_f(largest_move, move == move ? move : INFINITY);
        }
        // Both maxima after one barrier, after which every `next` is written; the buffers of
        // the two maxima alternate with the iterations (reduce_max_pair).
        const float2 largest = ctx.reduce_max_pair(overlap, largest_move, iteration & 1);
        if (largest.x < p.polygon_separation.tolerance) break;
        // Rounded up: a move computed a little short must not let a list outlive its skin.
        moved += largest.y * 1.001f + 1e-6f;
      }
      if constexpr (CandidateLists) {
        float3* const done = current;
        current = next;
        next = done;
      } else {
        for (int i = ctx.rank(); i < m; i += ctx.size()) current[i] = next[i];
        ctx.sync();
      }
    }
    if constexpr (CandidateLists) {
      if (current != ws.control) {  // the last iterate back where the next stages read it
        for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = current[i];
        ctx.sync();
      }
    }
  }
};

/// The relaxation testing every segment every iteration (basic_polygon_separation): the pipelines whose
/// tracks rarely relax past the first iteration (the `track` preset's, the families' dispatch).
using polygon_separation = basic_polygon_separation<false>;
/// The relaxation with candidate lists (basic_polygon_separation) in every block: the same control
/// points, bit for bit, for polygons that relax for many iterations.
using polygon_separation_listed = basic_polygon_separation<true>;
/// The relaxation with candidate lists on one-thread blocks (the host backend) and every segment
/// every iteration on wider ones (the CUDA backend): the hull and voronoi pipelines (presets.hpp),
/// 8 % and 10 % faster on the GPU without the lists, 35 % and 31 % fewer instructions on the host
/// with them (docs/performance-log.md, entries 51 to 53).
using polygon_separation_listed_on_host = basic_polygon_separation<true, false>;

}  // namespace track_gen::stages

namespace track_gen::detail {

/// The relaxation of FamilyStage's one-family pipelines (presets::one_family_pipeline and
/// elevated_one_family_pipeline): with candidate lists where `long_relaxation`, in wide blocks
/// too unless `lists_in_wide_blocks` is false, else stages::polygon_separation.
template <class FamilyStage>
using family_separation_t =
    std::conditional_t<FamilyStage::long_relaxation,
                       stages::basic_polygon_separation<true, lists_in_wide_blocks_v<FamilyStage>>,
                       stages::polygon_separation>;

}  // namespace track_gen::detail

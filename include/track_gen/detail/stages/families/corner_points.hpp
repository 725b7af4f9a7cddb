#pragma once
/// @file
/// Random corner points shared by the bezier and hull families (families/bezier.hpp,
/// families/hull.hpp): a corner count drawn in a range, corners on a jittered grid or uniform in
/// a disc, a minimum distance between corners, the corners sorted by angle about their centroid
/// (counter-clockwise), their convex hull, and the pruning of sharp corners (at most 64
/// corners). family_corners is the serial form (a gate sequence's thread runs it);
/// family_block_corners gives the same corners bit for bit with a block's threads.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/random.hpp>

#include <cstdint>

namespace track_gen::detail {

/// The most corners a family draws (the ranges' upper bound, param_ranges.hpp).
inline constexpr int family_max_corners = 64;
/// Candidate positions tried per corner before it is dropped (the minimum distance rejection).
inline constexpr int family_corner_tries = 8;
/// Random draws the corner stage uses from its stream: draw 0 is the corner count, then
/// `family_corner_tries` draws per corner. A family's own draws start here.
inline constexpr std::uint32_t family_corner_draws = 1u + family_max_corners * family_corner_tries;

/// Side g of the jittered grid for n corners: the smallest g with g^2 >= 2n, so that at least
/// half the cells stay empty and the layout varies (n = 64: 12 x 12 cells).
TRACK_GEN_HD inline int family_grid_side(int n) {
  int g = 1;
  while (g * g < 2 * n) ++g;
  return g;
}
inline constexpr int family_max_grid_cells = 144;  // family_grid_side(family_max_corners)^2

/// The corner count in [lo, hi] drawn from uniform u in [0, 1).
TRACK_GEN_HD inline int family_corner_count(float u, int lo, int hi) {
  const int span = hi - lo + 1;
  const int k = static_cast<int>(u * static_cast<float>(span));
  return lo + (k < span - 1 ? k : span - 1);
}

/// A candidate corner of the disc layout from its draw u: uniform in the disc of radius extent.
TRACK_GEN_HD inline float3 family_disc_point(const uniform4& u, float extent) {
  const float r = extent * std::sqrt(u.v[0]);
  const float a = 2.0f * pi * u.v[1];
  return f3(r * std::cos(a), r * std::sin(a), 0.0f);
}

/// family_disc_point out of line on the device, for family_block_corners' table of tries (its
/// sine and cosine, inlined, took registers from the generation kernels' hot loops).
TRACK_GEN_HD TRACK_GEN_NOINLINE inline float3 family_disc_point_out_of_line(const uniform4& u, float extent) {
  return family_disc_point(u, extent);
}

/// The grid layout's geometry for n corners: g x g cells of side `cell` over [-extent, extent]^2,
/// a corner jittered inside its cell with `margin` from the cell's edges.
struct family_grid {
  int g;
  float extent, cell, margin;
  TRACK_GEN_HD family_grid(int n, float extent_, float min_distance)
      : g(family_grid_side(n)), extent(extent_), cell(2.0f * extent_ / static_cast<float>(g)),
        margin(min_f(0.5f * min_distance, 0.5f * cell)) {}
  /// Step i of the partial Fisher-Yates shuffle of the cells (family_draw_corners' and
  /// family_block_corners'): swaps cells[i] with the cell of cells[i .. g^2) that the draw u in
  /// [0, 1) picks.
  template <class Cell>
  TRACK_GEN_HD void shuffle_step(Cell* cells, int i, float u) const {
    const int total = g * g;
    int pick = i + static_cast<int>(u * static_cast<float>(total - i));
    pick = pick < total - 1 ? pick : total - 1;
    const Cell t = cells[i];
    cells[i] = cells[pick];
    cells[pick] = t;
  }
  /// The candidate corner in cell c (row-major) from the draw's first two values.
  TRACK_GEN_HD float3 point(int c, float u0, float u1) const {
    const int cx = c % g, cy = c / g;
    return f3(-extent + cell * static_cast<float>(cx) + margin + (cell - 2.0f * margin) * u0,
              -extent + cell * static_cast<float>(cy) + margin + (cell - 2.0f * margin) * u1, 0.0f);
  }
};

/// Whether length(q - p) >= min_distance, decided from the squared distance unless it is within
/// about 2^-20 of min_distance^2; only then is the square root taken. The answers are those of
/// the square root (correctly rounded and increasing: at least 2^-20 above the square, the root
/// is above min_distance; at least 2^-20 below, it is more than an ulp below), without a square
/// root per pair. The margins are relative only while min_distance^2 is a normal float: below
/// that (min_distance < 1.1e-19 m) every comparison takes the square root.
struct family_distance_test {
  float min_distance, above, below;
  bool normal;
  TRACK_GEN_HD explicit family_distance_test(float min_distance_) : min_distance(min_distance_) {
    const float square = min_distance * min_distance;
    normal = square >= 0x1p-126f;  // FLT_MIN
    above = normal ? square * (1.0f + 0x1p-20f) : 0.0f;
    below = normal ? square * (1.0f - 0x1p-20f) : 0.0f;
  }
  TRACK_GEN_HD bool far(float3 q, float3 p) const {
    const float3 d = q - p;
    const float d2 = dot(d, d);
    if (normal && d2 >= above) return true;
    return !(normal && d2 < below) && std::sqrt(d2) >= min_distance;
  }
};

/// Whether length(q - kept[j]) >= min_distance for every j < count (family_distance_test).
TRACK_GEN_HD inline bool family_far_from(float3 q, const float3* kept, int count, float min_distance) {
  const family_distance_test test(min_distance);
  for (int j = 0; j < count; ++j)
    if (!test.far(q, kept[j])) return false;
  return true;
}

/// Draws n corners (z = 0) into out[0..count) and returns count. layout 0: each corner in its
/// own cell of a g x g grid over [-extent, extent]^2 (cells picked by a partial Fisher-Yates
/// shuffle), jittered inside the cell with a margin of min_distance / 2 from its edges, so that
/// corners of different cells are >= min_distance apart whenever a cell is that wide. layout 1:
/// uniform in the disc of radius extent. Either way a candidate closer than min_distance to a
/// kept corner is drawn again (up to family_corner_tries times, draws 1 + i * tries + t) and the
/// corner is dropped after the last try, except that the first 3 corners are always kept (a
/// polygon needs 3). Deterministic: the draws are indexed by corner and try. Serial (a gate
/// sequence's thread); family_block_corners accepts the same corners with a block.
TRACK_GEN_HD inline int family_draw_corners(const philox_stream& rng, int n, int layout, float extent, float min_distance,
                                            float3* out) {
  const family_grid grid(n, extent, min_distance);
  const family_distance_test test(min_distance);
  int cells[family_max_grid_cells];
  if (layout == 0)
    for (int c = 0; c < grid.g * grid.g; ++c) cells[c] = c;
  int count = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t first = 1u + static_cast<std::uint32_t>(i * family_corner_tries);
    const uniform4 u0 = rng.uniform(first);  // the grid's pick and the first try
    if (layout == 0) grid.shuffle_step(cells, i, u0.v[2]);  // this corner's cell
    for (int t = 0; t < family_corner_tries; ++t) {
      const uniform4 u = t == 0 ? u0 : rng.uniform(first + static_cast<std::uint32_t>(t));
      const float3 q = layout == 0 ? grid.point(cells[i], u.v[0], u.v[1]) : family_disc_point(u, extent);
      bool far = true;
      for (int j = 0; j < count && far; ++j) far = test.far(q, out[j]);
      if (far || (count < 3 && t == family_corner_tries - 1)) {
        out[count++] = q;
        break;
      }
    }
  }
  return count;
}

/// The centroid of pts[0..n) (xy; z = 0), summed in index order (family_sort_by_angle and
/// family_block_corners share it: the same bits).
TRACK_GEN_HD inline float3 family_centroid(const float3* pts, int n) {
  float cx = 0.0f, cy = 0.0f;
  for (int i = 0; i < n; ++i) {
    cx += pts[i].x;
    cy += pts[i].y;
  }
  return f3(cx / static_cast<float>(n), cy / static_cast<float>(n), 0.0f);
}

/// Sorts pts[0..n) by increasing angle about their centroid (insertion sort, n <= 64). The
/// centroid lies strictly inside the convex hull of points that are not all on one line, so no
/// two consecutive angles are pi or more apart: the polygon is a fan of triangles about the
/// centroid that do not overlap, a simple counter-clockwise polygon.
TRACK_GEN_HD inline void family_sort_by_angle(float3* pts, int n) {
  const float3 centre = family_centroid(pts, n);
  const float cx = centre.x, cy = centre.y;
  float angle[family_max_corners];
  for (int i = 0; i < n; ++i) {
    const float3 q = pts[i];
    const float a = std::atan2(q.y - cy, q.x - cx);
    int j = i;
    for (; j > 0 && angle[j - 1] > a; --j) {
      angle[j] = angle[j - 1];
      pts[j] = pts[j - 1];
    }
    angle[j] = a;
    pts[j] = q;
  }
}

/// True when a -> b -> c turns left (counter-clockwise), strictly.
TRACK_GEN_HD inline bool family_left_turn(float3 a, float3 b, float3 c) {
  return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x) > 0.0f;
}

/// The lowest-leftmost corner of pts[0..n), a corner of their convex hull: where
/// family_convex_hull's stack pass starts.
TRACK_GEN_HD inline int family_hull_start(const float3* pts, int n) {
  int start = 0;
  for (int i = 1; i < n; ++i)
    if (pts[i].x < pts[start].x || (pts[i].x == pts[start].x && pts[i].y < pts[start].y)) start = i;
  return start;
}

/// family_convex_hull's stack pass over ring[i] = pts[(family_hull_start + i) mod n], into pts.
TRACK_GEN_HD inline int family_hull_scan(float3* pts, const float3* ring, int n) {
  int h = 0;
  for (int i = 0; i < n; ++i) {
    while (h >= 2 && !family_left_turn(pts[h - 2], pts[h - 1], ring[i])) --h;
    pts[h++] = ring[i];
  }
  while (h >= 3 && !family_left_turn(pts[h - 2], pts[h - 1], pts[0])) --h;
  return h;
}

/// Keeps the corners of pts[0..n) (sorted by angle about their centroid, as
/// family_sort_by_angle leaves them) that lie on their convex hull, in the same
/// counter-clockwise order, and returns how many. Graham's scan from an interior point (R. L.
/// Graham, "An efficient algorithm for determining the convex hull of a finite planar set",
/// 1972): the angle order about the centroid is the hull's order, so one stack pass from a hull
/// corner (the lowest-leftmost) drops every corner where the boundary does not turn left.
TRACK_GEN_HD inline int family_convex_hull(float3* pts, int n) {
  const int start = family_hull_start(pts, n);
  float3 ring[family_max_corners];
  for (int i = 0; i < n; ++i) ring[i] = pts[(start + i) % n];
  return family_hull_scan(pts, ring, n);
}

/// The turn angle at b of the path a -> b -> c, in (-pi, pi], positive to the left.
TRACK_GEN_HD inline float family_turn(float3 a, float3 b, float3 c) {
  const float ux = b.x - a.x, uy = b.y - a.y, vx = c.x - b.x, vy = c.y - b.y;
  return std::atan2(ux * vy - uy * vx, ux * vx + uy * vy);
}

/// Drops corners of the closed polygon pts[0..n) while one turns by more than max_turn (either
/// way) and more than 3 remain, the sharpest first (the lowest index on a tie); returns the
/// count kept. A spike or a notch of an angle-sorted random polygon turns by up to ~pi: no
/// spline through it keeps a turn radius of a few tenths of its edges, so it is cut off.
TRACK_GEN_HD inline int family_prune_sharp(float3* pts, int n, float max_turn) {
  while (n > 3) {
    int worst = -1;
    float worst_turn = max_turn;
    for (int i = 0; i < n; ++i) {
      const float t = std::fabs(family_turn(pts[i == 0 ? n - 1 : i - 1], pts[i], pts[i + 1 == n ? 0 : i + 1]));
      if (t > worst_turn) {
        worst_turn = t;
        worst = i;
      }
    }
    if (worst < 0) break;
    for (int i = worst; i + 1 < n; ++i) pts[i] = pts[i + 1];
    --n;
  }
  return n;
}

/// The corners of one attempt into out[0..return) (serial): the count in [lo, hi] (draw 0), the
/// corners (family_draw_corners) sorted by angle (and only their convex hull when `convex`),
/// then those that turn by more than max_turn dropped (family_prune_sharp).
TRACK_GEN_HD inline int family_corners(const philox_stream& rng, int lo, int hi, int layout, float extent,
                                       float min_distance, float max_turn, bool convex, float3* out) {
  const int n = family_corner_count(rng.uniform(0).v[0], lo, hi);
  int count = family_draw_corners(rng, n, layout, extent, min_distance, out);
  family_sort_by_angle(out, count);
  if (convex) count = family_convex_hull(out, count);
  return family_prune_sharp(out, count, max_turn);
}

/// The corners of one attempt for the whole block, family_corners' corners bit for bit, into
/// ws.control_next; returns the count kept, the same on every thread; ends with a barrier. The
/// block draws every try of every corner first (the grid's cells dealt by thread 0: the
/// shuffle's picks do not depend on which corners are kept), then accepts the corners in turn,
/// each in one round: the (try, kept corner) distance tests spread over the block, a block-wide
/// OR of each try's failures (Ctx::reduce_or), and the lowest try that passed kept (the serial
/// loop's first); then the angles and the order of the sort (each corner's rank: the corners of
/// smaller angle, and of equal angle and lower index, as the stable insertion sort leaves them),
/// the hull's ring and the turns of each pruning round are computed by the block.
/// Scratch: ws.dense [0, n x family_corner_tries) (the tries), ws.control [0, n) (the kept
/// corners, then the hull's ring and the pruning's copy), ws.dense_s [0, max(n, g^2) + 1) (the
/// grid's cells, then the count, then angles or turns).
template <class Ctx>
TRACK_GEN_HD int family_block_corners(Ctx& ctx, workspace& ws, const philox_stream& rng, int lo, int hi, int layout,
                                      float extent, float min_distance, float max_turn, bool convex = false) {
  static_assert(family_corner_tries <= 32, "A corner's tries are the bits of one 32-bit mask (reduce_or).");
  const int n = family_corner_count(rng.uniform(0).v[0], lo, hi);
  const int tries_total = n * family_corner_tries;
  float3* const tries = ws.dense;  // try t of corner i at i x family_corner_tries + t
  const family_grid grid(n, extent, min_distance);
  float* const cells = ws.dense_s;  // the grid's cells (exact as floats: < 145), shuffled
  for (int k = ctx.rank(); k < tries_total; k += ctx.size()) {
    const uniform4 u = rng.uniform(1u + static_cast<std::uint32_t>(k));
    tries[k] = layout == 0 ? f3(u.v[0], u.v[1], u.v[2]) : family_disc_point_out_of_line(u, extent);
  }
  if (layout == 0) {
    for (int c = ctx.rank(); c < grid.g * grid.g; c += ctx.size()) cells[c] = static_cast<float>(c);
    ctx.sync();
    if (ctx.rank() == 0)  // family_draw_corners' shuffle: cells[i] is corner i's
      for (int i = 0; i < n; ++i) grid.shuffle_step(cells, i, tries[i * family_corner_tries].z);
    ctx.sync();
    for (int k = ctx.rank(); k < tries_total; k += ctx.size())
      tries[k] = grid.point(static_cast<int>(cells[k / family_corner_tries]), tries[k].x, tries[k].y);
  }
  ctx.sync();
  // The acceptance. Pair (t, j) = (k mod tries, k / tries) of round i tests try t of corner i
  // against kept corner j. Thread 0 appends the kept corner to `drawn` after the round's
  // barrier, so the next round reads the newest kept corner from `newest` (every thread took it
  // from the table), and the others from `drawn`, written before that barrier.
  const family_distance_test test(min_distance);
  float3* const drawn = ws.control;
  float3 newest = f3(0.0f, 0.0f, 0.0f);
  int count = 0;
  for (int i = 0; i < n; ++i) {
    std::uint32_t failed = 0;  // bit t: try t is closer than min_distance to a kept corner
    const float3* const row = tries + i * family_corner_tries;
    for (int k = ctx.rank(); k < count * family_corner_tries; k += ctx.size()) {
      const int t = k % family_corner_tries, j = k / family_corner_tries;
      if (!test.far(row[t], j == count - 1 ? newest : drawn[j])) failed |= 1u << t;
    }
    failed = ctx.reduce_or(failed, i & 1);
    int kept = -1;
    for (int t = family_corner_tries - 1; t >= 0; --t)
      if (!(failed >> t & 1u)) kept = t;
    if (kept < 0 && count < 3) kept = family_corner_tries - 1;  // the first 3 corners are always kept
    if (kept >= 0) {
      newest = row[kept];
      if (ctx.rank() == 0) drawn[count] = newest;
      ++count;
    }
  }
  ctx.sync();
  float* const value = ws.dense_s + 1;  // per corner: its angle, then its turn
  // The sort by angle about the centroid (family_sort_by_angle's).
  const float3 centre = family_centroid(drawn, count);
  for (int i = ctx.rank(); i < count; i += ctx.size()) value[i] = std::atan2(drawn[i].y - centre.y, drawn[i].x - centre.x);
  ctx.sync();
  float3* const pts = ws.control_next;
  for (int i = ctx.rank(); i < count; i += ctx.size()) pts[stable_rank(value, count, i)] = drawn[i];
  ctx.sync();
  if (convex) {
    const int start = family_hull_start(pts, count);
    for (int i = ctx.rank(); i < count; i += ctx.size()) ws.control[i] = pts[(start + i) % count];
    ctx.sync();
    if (ctx.rank() == 0) ws.dense_s[0] = static_cast<float>(family_hull_scan(pts, ws.control, count));
    ctx.sync();
    count = static_cast<int>(ws.dense_s[0]);
  }
  // family_prune_sharp, a round per corner dropped: the turns by the block, then every thread
  // finds the same sharpest corner.
  while (count > 3) {
    for (int i = ctx.rank(); i < count; i += ctx.size())
      value[i] = std::fabs(family_turn(pts[i == 0 ? count - 1 : i - 1], pts[i], pts[i + 1 == count ? 0 : i + 1]));
    ctx.sync();
    int worst = -1;
    float worst_turn = max_turn;
    for (int i = 0; i < count; ++i)
      if (value[i] > worst_turn) {
        worst_turn = value[i];
        worst = i;
      }
    if (worst < 0) break;
    for (int i = ctx.rank(); i + 1 < count; i += ctx.size()) ws.control[i] = pts[i < worst ? i : i + 1];
    ctx.sync();
    --count;
    for (int i = ctx.rank(); i < count; i += ctx.size()) pts[i] = ws.control[i];
    ctx.sync();
  }
  ctx.sync();  // every thread has read the turns before the caller reuses ws.dense_s
  return count;
}

}  // namespace track_gen::detail

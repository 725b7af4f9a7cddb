#pragma once
/// @file
/// The `checkpoint` generator family: stages::checkpoint_walk (issue 13, item 1).

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>

#include <cstdint>

namespace track_gen::stages {

/// A steering walk through random checkpoints, the construction of the CarRacing track
/// (Gymnasium's CarRacing environment, gymnasium/envs/box2d/car_racing.py, Farama Foundation:
/// checkpoints at jittered angles and random radii around a circle, then a walk whose heading
/// turns toward the next checkpoint at a bounded rate). The idea is theirs; the code is ours. Flat
/// (z = 0).
///
/// One candidate:
/// 1. C checkpoints at angles phase + (2 pi / C) (c + angle_jitter (u - 1/2)), radii uniform in
///    [radius_min, radius_max]; the walk starts at checkpoint 0 heading along cp[1] - cp[C-1].
/// 2. Each step of `step_length`: the heading moves by steer_gain x (bearing to the target -
///    heading), clamped to +- max_turn_rate x step_length (a curvature bound of the walk), then
///    the position advances. The target moves on to the next checkpoint when the walk is within
///    control_spacing / 2 of it or has passed its polar angle about the origin (so a missed
///    checkpoint never makes it circle).
/// 3. Two laps, as CarRacing cuts its lap out of a longer walk: the first lap only brings the walk
///    onto its route (its start heading is a guess); the second is recorded from the point S
///    where the walk crosses checkpoint 0's ray again. On the recorded lap's last leg (after
///    checkpoint C-1) the target is S and the turn bound grows linearly with the polar angle
///    covered, up to closure_boost times at S (the closure ramp: the heading is pulled harder
///    toward the start as the loop ends). The walk ends within control_spacing / 2 of S, or on
///    crossing the ray a third time, or after max_steps steps.
/// 4. Every round(control_spacing / step_length) steps of the recorded lap, the position is a
///    control point (a last point recorded less than half a spacing of walk before the end is
///    dropped, so that the closing edge is not short). The
///    remaining gap g = S - end is closed by moving the points of the recorded lap's last
///    quarter by a linear ramp of g (from g / (q + 1) to q g / (q + 1) over its q points), so
///    that the closed polygon has no jump. A walk keeps at most walk_capacity points (twice
///    the longest accepted track's worth): one that would record more ranks last.
///
/// Best of K (`candidates`): candidate k draws its own checkpoints. Its key is, in this order:
/// whether its walk closed (end within closure_tolerance of the start), whether its control
/// polygon is free of self-crossings, then its compactness 4 pi A / P^2 (lower: more varied).
/// The smallest key wins, ties to the lower k. A candidate of fewer than 4 points ranks last; if
/// the winner has fewer than 4, its C checkpoints are the control points.
///
/// Dense samples: the stage sets a dense budget (dense_budget), so the spline gives a walk of M
/// points min(samples_per_segment, max(4, ceil(budget / M))) samples a segment: the scratch holds
/// about max(budget, 4 x walk_capacity, K x (walk_capacity + C)) samples (the spline's, or the K
/// candidates' walks and checkpoints) instead of walk_capacity x samples_per_segment. The bound on a walk's points
/// comes from validate.length_max: in a gate course, which keeps only max_gates of them, a walk
/// of more than walk_capacity points ranks last although its course could be short enough.
///
/// Block work: the block draws the K x C checkpoints into ws.dense [K n, K n + K C) (n =
/// walk_capacity; one (x, y, relative angle) each); candidate k's walk runs on one thread (it is
/// serial; the candidates spread over the warps first), writing its points to ws.dense
/// [k n, (k + 1) n) and its key and count to ws.dense_s [2k, 2k + 1]; the block looks for
/// crossing edge pairs of each polygon (all pairs at once); then every thread picks the same
/// winner and the block copies its points to ws.control.
/// Random stream: stage 13; candidate k uses draws [k * 128, k * 128 + C] (C <= 64).
struct checkpoint_walk {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 13;
  /// The family this stage draws (a pipeline with it as its generate stage draws only these).
  static constexpr generator_family family = generator_family::checkpoint;
  /// Whether stages::polygon_separation runs many iterations on this family's control polygons (its walks leave the relaxation nothing to push):
  /// its one-family pipeline then relaxes with stages::polygon_separation_listed (presets.hpp).
  static constexpr bool long_relaxation = false;

  /// Steps between recorded points: round(control_spacing / step_length), in [1, max_steps].
  TRACK_GEN_HD static int record_every(const checkpoint_params& c) {
    const float r = c.control_spacing / c.step_length;
    if (!(r < static_cast<float>(c.max_steps))) return c.max_steps;
    const int n = static_cast<int>(r + 0.5f);
    return n < 1 ? 1 : n;
  }

  /// Most points one walk records (the start and one every record_every steps).
  TRACK_GEN_HD static int walk_points(const checkpoint_params& c) {
    const int n = c.max_steps / record_every(c) + 1;
    return n > c.checkpoints ? n : c.checkpoints;
  }

  /// Most points one walk keeps: walk_points, at most 2 x validate.length_max / (record_every x
  /// step_length) + 1 (and at least C). A lap of more points is over twice the longest accepted
  /// track in walk, and at the defaults (consecutive points at most 2 rad of heading apart, so
  /// each chord is at least 0.84 of its 1.25 m of walk) its polygon, which the spline is no shorter
  /// than, is too: such a walk ranks last (as one of fewer than 4 points). 193 -> 97 points at the
  /// defaults; no walk of 524,288 (65,536 envs, attempts 0 and 1, seed 0) recorded more than 45.
  TRACK_GEN_HD static int walk_capacity(const track_params& p) {
    const checkpoint_params& c = p.checkpoint;
    const int n = walk_points(c);
    const double spacing = static_cast<double>(record_every(c)) * static_cast<double>(c.step_length);
    const double cap = std::ceil(2.0 * static_cast<double>(p.validate.length_max) / spacing) + 1.0;
    if (!(cap < static_cast<double>(n))) return n;
    const int k = static_cast<int>(cap);
    return k > c.checkpoints ? k : c.checkpoints;
  }

  /// The dense budget this stage sets (ws.dense_budget: detail::family_dense_budget). A walk
  /// of 31 points (the mean at the defaults; up to walk_capacity = 97) gets 25 samples a segment,
  /// 775 samples about 5 cm apart on a 39 m loop, against 992 at 32; the scratch holds at most
  /// 855 samples (95 x 9) instead of 97 x 32. Walks of at most 24 points, and the at most 12
  /// gates a gate course keeps of them, still get the full samples_per_segment.
  TRACK_GEN_HD static int dense_budget(const track_params& p) {
    return detail::family_dense_budget(p.spline.samples_per_segment);
  }

  /// Largest ws.num_control this stage writes for parameters p (host; sizes the scratch): one
  /// walk's points (walk_capacity).
  static int max_control_points(const track_params& p) { return walk_capacity(p); }

  /// Most dense samples for parameters p (host; sizes the scratch): the spline's under the dense
  /// budget for any count of control points up to walk_capacity (a gate course may thin them),
  /// and at least the K candidates' points and checkpoints, which the walks keep in the dense
  /// scratch: K (walk_capacity + C), 428 at the defaults, below the spline's 855.
  static int max_dense_samples(const track_params& p) {
    return detail::family_dense_samples(p.spline.samples_per_segment, walk_capacity(p), max_scratch_points(p));
  }
  /// The points the walks keep in ws.dense (host; sizes the scratch of a pipeline that stores no
  /// dense samples): K (walk_capacity + C).
  static int max_scratch_points(const track_params& p) {
    return p.checkpoint.candidates * (walk_capacity(p) + p.checkpoint.checkpoints);
  }

  /// The angle from the xy direction (x, y) to the direction (x', y') whose cross and dot
  /// products with it are `cross` and `dot`: atan2(cross, dot) in [-pi, pi]. For the small angles
  /// of most walk steps (dot > 0, |cross| <= dot / 8) by atan's series to the x^9 term (the next
  /// term is below 1.2e-11 rad), which costs a division and five FMAs instead of a full atan2.
  TRACK_GEN_HD static float angle_between(float cross, float dot) {
    if (dot > 0.0f && 8.0f * std::fabs(cross) <= dot) {
      const float x = cross / dot, x2 = x * x;
      return x * (1.0f + x2 * (-1.0f / 3.0f + x2 * (1.0f / 5.0f + x2 * (-1.0f / 7.0f + x2 * (1.0f / 9.0f)))));
    }
    return std::atan2(cross, dot);
  }

  /// (cos a, sin a) for the walk's turns: for |a| <= 1/2 by the Taylor series to the x^8 and x^9
  /// terms (the next terms are below 3e-10), else std::cos / std::sin.
  TRACK_GEN_HD static float2 turn_cos_sin(float a) {
    if (std::fabs(a) <= 0.5f) {
      const float a2 = a * a;
      const float c = 1.0f + a2 * (-0.5f + a2 * (1.0f / 24.0f + a2 * (-1.0f / 720.0f + a2 * (1.0f / 40320.0f))));
      const float s = a * (1.0f + a2 * (-1.0f / 6.0f + a2 * (1.0f / 120.0f + a2 * (-1.0f / 5040.0f + a2 * (1.0f / 362880.0f)))));
      return detail::f2(c, s);
    }
    return detail::f2(std::cos(a), std::sin(a));
  }

  /// Checkpoint j of candidate k, and its angle relative to checkpoint 0's (in [0, 2 pi)).
  TRACK_GEN_HD static float3 checkpoint(const philox_stream& rng, int k, int j, const checkpoint_params& c,
                                        float& relative_angle) {
    using namespace detail;
    const std::uint32_t base = static_cast<std::uint32_t>(k) * 128u;
    const float slot = 2.0f * pi / static_cast<float>(c.checkpoints);
    const float phase = rng.uniform(base + static_cast<std::uint32_t>(c.checkpoints)).v[0] * 2.0f * pi;
    const float a0 = slot * c.angle_jitter * (rng.uniform(base).v[0] - 0.5f);
    const uniform4 u = rng.uniform(base + static_cast<std::uint32_t>(j));
    const float a = slot * (static_cast<float>(j) + c.angle_jitter * (u.v[0] - 0.5f));
    const float r = lerp(c.radius_min, c.radius_max, u.v[1]);
    relative_angle = a - a0;
    return f3(r * std::cos(phase + a), r * std::sin(phase + a), 0.0f);
  }

  /// Checkpoint j of candidate k as the walk's table holds it: (x, y, its angle relative to
  /// checkpoint 0's).
  TRACK_GEN_HD static float3 table_entry(const philox_stream& rng, int k, int j, const checkpoint_params& c) {
    float rel = 0.0f;
    const float3 q = checkpoint(rng, k, j, c, rel);
    return detail::f3(q.x, q.y, rel);
  }

  /// Candidate k's C checkpoints into table[0, C), serial (run() fills the K candidates' tables
  /// with the whole block).
  TRACK_GEN_HD static void fill_checkpoints(const philox_stream& rng, int k, const checkpoint_params& c, float3* table) {
    for (int j = 0; j < c.checkpoints; ++j) table[j] = table_entry(rng, k, j, c);
  }

  /// What one candidate's walk gave.
  struct walk_result {
    int count;          ///< points written to out
    bool closed;        ///< the walk ended within closure_tolerance of its start
    float compactness;  ///< 4 pi A / P^2 of the control polygon (1 when degenerate)
  };

  /// True when segments [a, b] and [c, d] cross properly (xy).
  TRACK_GEN_HD static bool segments_cross(float3 a, float3 b, float3 c, float3 d) {
    auto orient = [](float3 p, float3 q, float3 r) { return (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x); };
    const float d1 = orient(c, d, a), d2 = orient(c, d, b), d3 = orient(a, b, c), d4 = orient(a, b, d);
    return ((d1 > 0.0f && d2 < 0.0f) || (d1 < 0.0f && d2 > 0.0f)) && ((d3 > 0.0f && d4 < 0.0f) || (d3 < 0.0f && d4 > 0.0f));
  }

  /// Whether edges i and j (j > i; edge i joins points i and i + 1 mod m) of the closed polygon
  /// pts[0, m) are not adjacent and cross.
  TRACK_GEN_HD static bool edges_cross(const float3* pts, int m, int i, int j) {
    if (j < i + 2 || (i == 0 && j == m - 1)) return false;  // adjacent, or adjacent through the closing edge
    return segments_cross(pts[i], pts[i + 1], pts[j], pts[j + 1 < m ? j + 1 : 0]);
  }

  /// Pairs of non-adjacent edges of the closed polygon pts[0, m) that cross, serial (run() asks
  /// only whether any do, with the whole block).
  TRACK_GEN_HD static int count_crossings(const float3* pts, int m) {
    int n = 0;
    for (int i = 0; i < m; ++i)
      for (int j = i + 2; j < m; ++j) n += edges_cross(pts, m, i, j) ? 1 : 0;
    return n;
  }

  /// A candidate's walk through its checkpoints table[0, C) (fill_checkpoints): its control
  /// points into out[0, capacity), serial. A walk that would record more than `capacity` points
  /// stops there with count 0 (it ranks last).
  TRACK_GEN_HD static walk_result walk(const float3* table, const checkpoint_params& c, float3* out, int capacity) {
    using namespace detail;
    // The parameters in registers: `c` may live in kernel-parameter memory read through a
    // generic pointer, which the stores to `out` would otherwise make the compiler read again.
    const int cps = c.checkpoints, max_steps = c.max_steps;
    const int every = record_every(c);
    const float step_length = c.step_length, steer_gain = c.steer_gain, closure_boost = c.closure_boost;
    const float turn_bound = c.max_turn_rate * c.step_length, closure_tolerance = c.closure_tolerance;
    const float reach = 0.5f * c.control_spacing;
    const float two_pi = 2.0f * pi;
    const float3 origin = f3(table[0].x, table[0].y, 0.0f);
    const float3 before = f3(table[cps - 1].x, table[cps - 1].y, 0.0f);
    const float rel_last = table[cps - 1].z;
    int t = 1;  // target: checkpoint t mod C of lap t / C; t = 2 C is the recorded lap's start
    float3 goal = f3(table[1].x, table[1].y, 0.0f);
    float rel = table[1].z;
    const float3 d0 = goal - before;
    // The heading as a unit vector (hx, hy), turned by rotations: no angle to wrap, no sin and
    // cos of a growing angle each step.
    const float d0_length = std::sqrt(d0.x * d0.x + d0.y * d0.y);
    float hx = d0_length > 0.0f ? d0.x / d0_length : 1.0f, hy = d0_length > 0.0f ? d0.y / d0_length : 0.0f;
    float3 pos = origin, start = origin;
    float turned = 0.0f;  // polar angle covered about the origin since checkpoint 0 (unwrapped)
    int count = 0, since = 0;
    bool recording = false;
    const float reach2 = reach * reach;
    for (int step = 1; step <= max_steps; ++step) {
      // Move the target on past every checkpoint reached or passed.
      while (t < 2 * cps && (dot(goal - pos, goal - pos) < reach2 || turned >= rel)) {
        ++t;
        if (t < 2 * cps) {
          const float3 next = table[t < cps ? t : t - cps];
          goal = f3(next.x, next.y, 0.0f);
          rel = next.z + (t >= cps ? two_pi : 0.0f);
        } else {
          goal = start;
          rel = 2.0f * two_pi;
        }
      }
      const float3 d = goal - pos;
      float bound = turn_bound;
      if (t == 2 * cps) {  // the closure ramp
        const float ramp = clamp_f((turned - rel_last - two_pi) / (two_pi - rel_last), 0.0f, 1.0f);
        bound *= 1.0f + (closure_boost - 1.0f) * ramp;
      }
      // Steer: the bearing of d from the heading, times the gain, within the turn bound.
      const float turn = clamp_f(steer_gain * angle_between(hx * d.y - hy * d.x, hx * d.x + hy * d.y), -bound, bound);
      const float2 cs = turn_cos_sin(turn);
      const float nx = hx * cs.x - hy * cs.y;
      hy = hx * cs.y + hy * cs.x;
      hx = nx;
      const float3 prev = pos;
      pos = pos + f3(hx, hy, 0.0f) * step_length;
      turned += angle_between(prev.x * pos.y - prev.y * pos.x, prev.x * pos.x + prev.y * pos.y);
      if (!recording) {
        if (turned < two_pi) continue;  // the first lap only brings the walk onto its route
        recording = true;
        start = pos;
        out[count++] = pos;
        since = 0;
        continue;
      }
      if (t == 2 * cps && (length(start - pos) < reach || turned >= 2.0f * two_pi)) break;
      if (++since == every) {
        since = 0;
        if (count == capacity) {  // a lap of over twice the longest track: ranks last
          walk_result over;
          over.count = 0;
          over.closed = false;
          over.compactness = 1.0f;
          return over;
        }
        out[count++] = pos;
      }
    }
    walk_result r;
    const float3 gap = start - pos;
    r.closed = length(gap) <= closure_tolerance;
    // A last point less than half a spacing of walk before the end would make a short closing
    // edge (an uneven spline segment): drop it.
    if (count > 1 && 2 * (since + 1) < every) --count;
    // The closure ramp on the points: the last quarter moves by a linear share of the gap.
    const int first = count - count / 4;
    const int span = count - first + 1;
    for (int i = first; i < count; ++i) out[i] = out[i] + gap * (static_cast<float>(i - first + 1) / static_cast<float>(span));
    r.count = count;
    float area2 = 0.0f, perimeter = 0.0f;
    for (int i = 0; i < count; ++i) {
      const float3 a = out[i], b = out[i + 1 < count ? i + 1 : 0];
      area2 += a.x * b.y - b.x * a.y;
      perimeter += length(b - a);
    }
    r.compactness = perimeter > 0.0f ? 2.0f * pi * std::fabs(area2) / (perimeter * perimeter) : 1.0f;
    return r;
  }

  /// Whether any two non-adjacent edges of the closed polygon pts[0, m) cross (count_crossings >
  /// 0), the m^2 edge pairs spread over the block; the same answer in every thread, after a
  /// barrier. Every thread of the block calls it.
  template <class Ctx>
  TRACK_GEN_HD static bool any_crossing(Ctx& ctx, const float3* pts, int m) {
    bool crossed = false;
    for (int q = ctx.rank(); q < m * m && !crossed; q += ctx.size()) {
      const int i = q / m;
      crossed = edges_cross(pts, m, i, q - i * m);
    }
    return ctx.any(crossed);
  }

  /// A candidate's key: 4 x (not closed) + 2 x (crossed) + compactness (in [0, 1]), one float to
  /// compare; 8 (last) for fewer than 4 points or a NaN compactness.
  TRACK_GEN_HD static float key_of(const walk_result& r, bool crossed) {
    const float key = (r.closed ? 0.0f : 4.0f) + (crossed ? 2.0f : 0.0f) + detail::clamp_f(r.compactness, 0.0f, 1.0f);
    return r.count < 4 || !(key == key) ? 8.0f : key;
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const checkpoint_params& c = p.checkpoint;
    const philox_stream rng = ws.rng(stage_id);
    const int n = walk_capacity(p), cps = c.checkpoints, candidates = c.candidates;
    // The candidates' checkpoints, drawn by the whole block (a walk would otherwise stop for
    // three Philox draws, a sine and a cosine at each of its 2 C targets, serially).
    float3* table = ws.dense + candidates * n;
    for (int q = ctx.rank(); q < candidates * cps; q += ctx.size()) table[q] = table_entry(rng, q / cps, q % cps, c);
    ctx.sync();
    // The walks: candidate k on thread `slot` = k mod size, slots spread over the warps first, so
    // that the serial walks of a few candidates run in different warps, not as divergent lanes
    // of one.
    constexpr int warp = 32;
    const int size = ctx.size(), rank = ctx.rank();
    const int slot = size % warp == 0 ? (rank % warp) * (size / warp) + rank / warp : rank;
    for (int k = slot; k < candidates; k += size) {
      const walk_result r = walk(table + k * cps, c, ws.dense + k * n, n);
      ws.dense_s[2 * k] = key_of(r, false);
      ws.dense_s[2 * k + 1] = static_cast<float>(r.count);
    }
    ctx.sync();
    for (int k = 0; k < candidates; ++k) {
      const int m = static_cast<int>(ws.dense_s[2 * k + 1]);
      if (m < 4) continue;  // ranks last whatever its crossings (block-uniform)
      const bool crossed = any_crossing(ctx, ws.dense + k * n, m);
      if (crossed && rank == 0 && ws.dense_s[2 * k] < 8.0f) ws.dense_s[2 * k] += 2.0f;  // 8: last already
    }
    ctx.sync();
    int best = 0;
    for (int k = 1; k < candidates; ++k)
      if (ws.dense_s[2 * k] < ws.dense_s[2 * best]) best = k;
    const int count = static_cast<int>(ws.dense_s[2 * best + 1]);
    if (count >= 4) {
      for (int i = ctx.rank(); i < count; i += ctx.size()) ws.control[i] = ws.dense[best * n + i];
      ws.num_control = count;
    } else {
      for (int j = ctx.rank(); j < cps; j += ctx.size()) ws.control[j] = f3(table[best * cps + j].x, table[best * cps + j].y, 0.0f);
      ws.num_control = cps;
    }
    ws.dense_budget = dense_budget(p);
    ctx.sync();
  }
};

}  // namespace track_gen::stages

#pragma once
/// @file
/// Gate courses (issue 15, items 1-2; presets::gate_course_pipeline): a generator family's
/// anchors become the gates (stages::gate_anchors orders them and keeps a per-env count),
/// stages::gate_spacing lifts them onto the elevation profile and pushes close pairs apart in 3D,
/// then rebuilds the spline through them: the course line, resampled like a track. The gates
/// are the checkpoints, placed at the anchors (stages::gate_checkpoints), so progress, the
/// localizer and the observations work on gate courses unchanged; stages::validate_gates adds
/// the gate test to stages::validate_grade.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/elevation.hpp>
#include <track_gen/detail/stages/shape_stages.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/status.hpp>
#include <track_gen/track_ref.hpp>

namespace track_gen::detail {

/// Relative margin the spacing solve keeps above gates.min_spacing, so that float rounding of
/// the moved centres never brings a pushed pair back under the minimum the gate test checks.
inline constexpr float gate_spacing_margin = 1e-3f;

/// Whether the plan-view segments [a0, a1] and [b0, b1] cross properly (each one's endpoints
/// strictly on both sides of the other's line: the orientation test of T. H. Cormen et al.,
/// Introduction to Algorithms, 3rd ed., section 33.1; touching or collinear segments do not count).
TRACK_GEN_HD inline bool plan_segments_cross(float3 a0, float3 a1, float3 b0, float3 b1) {
  auto side = [](float3 o, float3 p, float3 q) { return (p.x - o.x) * (q.y - o.y) - (p.y - o.y) * (q.x - o.x); };
  const float d1 = side(b0, b1, a0), d2 = side(b0, b1, a1), d3 = side(a0, a1, b0), d4 = side(a0, a1, b1);
  return ((d1 > 0.0f && d2 < 0.0f) || (d1 < 0.0f && d2 > 0.0f)) && ((d3 > 0.0f && d4 < 0.0f) || (d3 < 0.0f && d4 > 0.0f));
}

/// Whether the bars of gates a and b cross: their plan-view bars (centre +- half_width along the
/// horizontal left axis) cross properly and their centres are less than 2 half_height apart in
/// height (the openings overlap vertically). Over/under courses, one gate above another, pass.
TRACK_GEN_HD inline bool gate_bars_cross(const gate& a, const gate& b, float half_height) {
  const float3 la = gate_axes(a.normal).left * a.half_width, lb = gate_axes(b.normal).left * b.half_width;
  return std::fabs(a.centre.z - b.centre.z) < 2.0f * half_height &&
         plan_segments_cross(a.centre - la, a.centre + la, b.centre - lb, b.centre + lb);
}

/// Direction in which gate i leaves gate j when they coincide: a fixed horizontal direction per
/// pair (the golden angle times the pair's index), opposite for (j, i), so the pair separates.
TRACK_GEN_HD inline float3 gate_tie_direction(int i, int j, int m) {
  const int lo = i < j ? i : j, hi = i < j ? j : i;
  const float angle = 2.39996323f * static_cast<float>(lo * m + hi);
  const float s = i < j ? 1.0f : -1.0f;
  return f3(s * std::cos(angle), s * std::sin(angle), 0.0f);
}

/// The push of gate i in one Jacobi round of the spacing solve (stages::gate_spacing): over the
/// gates j != i in index order, half the deficit of each pair closer than `target`, along the
/// line of their centres (detail::gate_tie_direction when they coincide); `deficit` takes the
/// largest deficit seen. A pair whose squared distance is at least `far2` (target^2 (1 + 1e-5),
/// far more than the rounding of length()) is apart and costs no square root: the same sums.
TRACK_GEN_HD inline float3 gate_spacing_push(const float3* g, int m, int i, float target, float far2, float& deficit) {
  const float3 ci = g[i];
  float3 push = f3(0.0f, 0.0f, 0.0f);
  for (int j = 0; j < m; ++j) {
    if (j == i) continue;
    const float3 d = ci - g[j];
    if (dot(d, d) >= far2) continue;
    const float dist = length(d);
    if (dist < target) {
      const float3 dir = dist > 1e-6f * target ? d * (1.0f / dist) : gate_tie_direction(i, j, m);
      push = push + dir * (0.5f * (target - dist));
      deficit = max_f(deficit, target - dist);
    }
  }
  return push;
}

/// The forward direction of a gate whose course-line tangent is `tangent` and chord to the next
/// gate `chord`: the unit tangent, horizontal for yaw_only; the chord where the tangent vanishes.
TRACK_GEN_HD inline float3 gate_forward(float3 tangent, float3 chord, bool yaw_only) {
  const float3 fallback = normalize_or(yaw_only ? f3(chord.x, chord.y, 0.0f) : chord, f3(1.0f, 0.0f, 0.0f));
  return normalize_or(yaw_only ? f3(tangent.x, tangent.y, 0.0f) : tangent, fallback);
}

}  // namespace track_gen::detail

namespace track_gen::stages {

/// Orders the family's anchors (`gates.ordering`: as generated, or counter-clockwise by polar
/// angle about their centroid, ties by index), draws the env's gate count G uniformly in
/// [gates.min_gates, gates.max_gates] and keeps G of the M anchors, anchor floor(j M / G) for
/// j < G (evenly spread around the loop); when M < G all M stay (the gate test then checks the
/// count). Random tracks only; random stream: stage 15, draw 0.
struct gate_anchors {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 15;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const int m = ws.num_control;
    if (p.gates.ordering == static_cast<int>(gate_ordering::angle_sorted)) {
      // Every thread sums the centroid in the same order: the same value on each (no reduction).
      float3 c = f3(0.0f, 0.0f, 0.0f);
      for (int j = 0; j < m; ++j) c = c + ws.control[j];
      c = c * (1.0f / static_cast<float>(m));
      // Rank sort (M <= 256): point i goes to the number of points before it.
      for (int i = ctx.rank(); i < m; i += ctx.size()) {
        const float ai = std::atan2(ws.control[i].y - c.y, ws.control[i].x - c.x);
        int rank = 0;
        for (int j = 0; j < m; ++j) {
          const float aj = std::atan2(ws.control[j].y - c.y, ws.control[j].x - c.x);
          rank += (aj < ai || (aj == ai && j < i)) ? 1 : 0;
        }
        ws.control_next[rank] = ws.control[i];
      }
      ctx.sync();
      for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = ws.control_next[i];
      ctx.sync();
    }
    const int span = p.gates.max_gates - p.gates.min_gates + 1;
    const float u = ws.rng(stage_id).uniform(0u).v[0];
    int g = p.gates.min_gates + static_cast<int>(u * static_cast<float>(span));
    g = g > p.gates.max_gates ? p.gates.max_gates : g;
    if (g < m) {
      for (int j = ctx.rank(); j < g; j += ctx.size())
        ws.control_next[j] = ws.control[static_cast<int>(static_cast<long long>(j) * m / g)];
      ctx.sync();
      for (int j = ctx.rank(); j < g; j += ctx.size()) ws.control[j] = ws.control_next[j];
      ws.num_control = g;
      ctx.sync();
    }
  }
};

/// Lifts each gate onto the course line as the earlier stages left it (gate i takes the z of
/// dense sample i * samples_per_segment, the spline's point at the anchor: the elevation
/// profile's height there, or the anchor's own z when the profile is flat), then the BOUNDED
/// pairwise spacing solve in 3D: `gates.spacing_iterations` Jacobi rounds, in each of which
/// every pair closer than s = min_spacing (1 + detail::gate_spacing_margin) moves apart along
/// the line of their centres by half the deficit each (coincident pairs along
/// detail::gate_tie_direction), all moves from the same positions and summed in index order,
/// so the result is the same on every backend and block size; it stops early once no pair is
/// closer than s. (The symmetric half-deficit push of position-based dynamics: M. Mueller et
/// al., "Position Based Dynamics", VRIPHAC 2006, with Jacobi instead of Gauss-Seidel updates.)
/// Then the spline through the moved gates (stages::catmull_rom): the course line. Random
/// tracks only; draws nothing.
struct gate_spacing {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 16;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const int m = ws.num_control;
    const int per = ws.num_dense / m;
    for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i].z = ws.dense[i * per].z;
    ctx.sync();
    const float target = p.gates.min_spacing * (1.0f + gate_spacing_margin);
    const float far2 = target * target * (1.0f + 1e-5f);
    for (int round = 0; round < p.gates.spacing_iterations; ++round) {
      float deficit = 0.0f;
      for (int i = ctx.rank(); i < m; i += ctx.size())
        ws.control_next[i] = ws.control[i] + gate_spacing_push(ws.control, m, i, target, far2, deficit);
      // reduce_max ends with a barrier: every move is written.
      if (!(ctx.reduce_max(deficit) > 0.0f)) break;
      for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = ws.control_next[i];
      ctx.sync();
    }
    catmull_rom::run(ctx, ws, p);
  }
};

/// The gates are the checkpoints: gate g at control point g (the spline's point at the start of
/// segment g, on the course line), for g < G = min(M, G_max). Its normal (the forward crossing
/// direction, which with a horizontal left axis fixes the frame: track_gen::gate_axes) is the
/// spline's tangent there, horizontal for `gates.align` yaw_only (the chord to the next gate
/// when the tangent is vertical or zero); its half-width is `half_width`; its arc length is the
/// dense arc length at the anchor, the measure of the samples' arc lengths. For a user
/// centreline (no control points) it places evenly spaced gates as stages::checkpoints. Draws
/// nothing.
struct gate_checkpoints {
  static constexpr detail::stage_role role = detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 17;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    if (!ws.dense_is_spline) {
      checkpoints::run(ctx, ws, p);
      return;
    }
    const int m = ws.num_control;
    const int per = ws.num_dense / m;
    const int g_total = m < ws.max_gates ? m : ws.max_gates;
    const bool yaw = p.gates.align == static_cast<int>(gate_align::yaw_only);
    for (int g = ctx.rank(); g < g_total; g += ctx.size()) {
      const spline_segment s = ws.spline[g];
      const float3 chord = ws.control[g + 1 == m ? 0 : g + 1] - ws.control[g];
      const float3 t = gate_forward(s.c1, chord, yaw);
      ws.out.gate_centre[g] = s.c0;
      ws.out.gate_normal[g] = t;
      ws.out.gate_half_width[g] = p.half_width;
      ws.out.gate_arc_length[g] = ws.dense_s[g * per];
    }
    ws.num_gates = g_total;
    ctx.sync();
  }
};

/// stages::validate_grade, then the gate test (status::fail_gates) on a course built from
/// control points: M = G gates with G in [gates.min_gates, gates.max_gates] and G <= G_max;
/// every pair of gate centres at least gates.min_spacing apart (3D); no two gates' bars crossing
/// (detail::gate_bars_cross, with gate_half_height); every gate's centre and normal finite, the
/// normal of unit length within 1e-4 and not within 0.06 degrees of vertical (|horizontal part|
/// >= 1e-3, so the horizontal left axis is defined). Draws nothing.
struct validate_gates {
  static constexpr detail::stage_role role = detail::stage_role::validate;
  static constexpr std::uint32_t stage_id = validate::stage_id;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    validate_grade::run(ctx, ws, p);
    if (!ws.dense_is_spline) return;  // a user centreline has no anchors: evenly spaced gates
    const int g_total = ws.num_gates;
    bool ok = ws.num_control == g_total && g_total >= p.gates.min_gates && g_total <= p.gates.max_gates;
    const float min2 = p.gates.min_spacing * p.gates.min_spacing;
    for (int i = ctx.rank(); i < g_total && ok; i += ctx.size()) {
      const gate a{ws.out.gate_centre[i], ws.out.gate_normal[i], ws.out.gate_half_width[i], 0.0f};
      const float horizontal = std::sqrt(a.normal.x * a.normal.x + a.normal.y * a.normal.y);
      ok = is_finite(a.centre) && is_finite(a.normal) && std::fabs(length(a.normal) - 1.0f) <= 1e-4f && horizontal >= 1e-3f;
      for (int j = i + 1; j < g_total && ok; ++j) {
        const gate b{ws.out.gate_centre[j], ws.out.gate_normal[j], ws.out.gate_half_width[j], 0.0f};
        const float3 d = a.centre - b.centre;
        ok = dot(d, d) >= min2 && !gate_bars_cross(a, b, p.gate_half_height);
      }
    }
    if (!ctx.all(ok)) {
      ws.fail_bits |= status::fail_gates;
      ws.valid = false;
    }
  }
};

}  // namespace track_gen::stages

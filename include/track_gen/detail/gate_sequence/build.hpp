#pragma once
/// @file
/// One env's gate sequence (gate_sequence.hpp), built by one thread from the track parameters:
/// the family's anchors, ordered and thinned, lifted onto the elevation profile, spaced apart,
/// given frames and tested. The same code runs in the CUDA kernel (one thread per env,
/// detail/gate_sequence/kernels.cuh) and in the host loop.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/detail/stages/elevation.hpp>
#include <track_gen/detail/stages/families/corner_points.hpp>
#include <track_gen/detail/stages/gate_course.hpp>
#include <track_gen/detail/stages/random_family.hpp>
#include <track_gen/params.hpp>
#include <track_gen/random.hpp>
#include <track_gen/status.hpp>
#include <track_gen/track_ref.hpp>

#include <cstdint>

namespace track_gen::detail {

/// The most anchors a family may draw for a gate sequence (polar.control_points is checked
/// against it; bezier draws at most 64 corners, hull twice its corners): the size of each of
/// the thread's two anchor arrays.
inline constexpr int gate_sequence_max_anchors = 256;

/// Where one env's gate sequence goes: the slots of env e (max_gates each) and its count and
/// status words. Every pointer in the memory space of the code that runs the build.
struct gate_sequence_out {
  float3* centre;          ///< [E * max_gates]
  float3* forward;         ///< [E * max_gates]
  int* count;              ///< [E]
  std::uint32_t* status;   ///< [E]
  std::uint32_t* episode;  ///< [E]
  int num_envs;
  int max_gates;
};

/// The family's anchors of one attempt into a[0..return), drawn from the same random streams
/// as the family's generate stage (so the anchors are that stage's control polygon before its
/// curve): polar, its control points (stages::random_polar, stream 1); bezier, its corners
/// (stages::bezier_corners, stream 10: drawn, sorted by angle, sharp ones pruned); hull, its
/// corners and displaced edge midpoints (stages::hull_corners, stream 11, before Chaikin).
/// The host refuses the other families. Serial.
/// `keep` > 0 (polar only, anchors as generated): only the anchors the thinning to `keep` gates
/// keeps are computed, anchor floor(j M / keep) into a[j], and `keep` is returned (the others
/// draw from their own indices of the stream, so they are not needed).
TRACK_GEN_HD inline int gate_sequence_anchors(const track_params& p, generator_family f, std::uint64_t seed,
                                              std::uint32_t global_env, std::uint32_t episode, std::uint32_t attempt,
                                              float3* a, float3* scratch, int keep) {
  if (f == generator_family::bezier || f == generator_family::hull) {
    const bool hull = f == generator_family::hull;
    const philox_stream rng(seed, global_env, episode, attempt, hull ? 11u : 10u);
    const int lo = hull ? p.hull.corners_min : p.bezier.corners_min, hi = hull ? p.hull.corners_max : p.bezier.corners_max;
    const int n_drawn = family_corner_count(rng.uniform(0).v[0], lo, hi);
    float3* corners = hull ? scratch : a;
    int n = hull ? family_draw_corners(rng, n_drawn, p.hull.layout, p.hull.extent, p.hull.min_corner_distance, corners)
                 : family_draw_corners(rng, n_drawn, p.bezier.layout, p.bezier.extent, p.bezier.min_corner_distance, corners);
    family_sort_by_angle(corners, n);
    if (hull && p.hull.convex != 0) n = family_convex_hull(corners, n);
    n = family_prune_sharp(corners, n, hull ? p.hull.max_turn : p.bezier.max_turn);
    if (!hull) return n;
    for (int i = 0; i < n; ++i) {
      const float3 c0 = corners[i], c1 = corners[wrap(i + 1, n)];
      const float u = p.hull.displacement * (2.0f * rng.uniform(family_corner_draws + static_cast<std::uint32_t>(i)).v[0] - 1.0f);
      a[2 * i] = c0;
      a[2 * i + 1] = (c0 + c1) * 0.5f + f3(c1.y - c0.y, c0.x - c1.x, 0.0f) * u;
    }
    return 2 * n;
  }
  const int m = p.polar.control_points;
  const philox_stream rng(seed, global_env, episode, attempt, 1u);
  const float step = 2.0f * pi / static_cast<float>(m);
  const float phase = rng.uniform(static_cast<std::uint32_t>(m)).v[0] * 2.0f * pi;
  const int count = keep > 0 && keep < m ? keep : m;
  for (int j = 0; j < count; ++j) {
    const int i = count == m ? j : static_cast<int>(static_cast<long long>(j) * m / count);
    const uniform4 u = rng.uniform(static_cast<std::uint32_t>(i));
    const float angle = phase + step * (static_cast<float>(i) + p.polar.angle_jitter * (u.v[0] - 0.5f));
    const float r = lerp(p.polar.radius_min, p.polar.radius_max, u.v[1]);
    a[j] = f3(r * std::cos(angle), r * std::sin(angle), lerp(p.polar.elevation_min, p.polar.elevation_max, u.v[2]));
  }
  return count;
}

/// Builds env `env`'s gate sequence (gate_sequence.hpp, the file comment of gate_sequences says
/// what each step does) and writes it to `out`; `advance` moves the env to its next episode
/// first. Up to validate.max_attempts attempts; the first that passes the gate test is kept,
/// else the last one, without status::valid. Serial; about 7 KiB of local arrays.
TRACK_GEN_HD inline void build_gate_sequence(const track_params& p, int env, bool advance, const gate_sequence_out& out) {
  float3 g[gate_sequence_max_anchors];
  float3 next[gate_sequence_max_anchors];
  const std::uint32_t global_env = p.env_offset + static_cast<std::uint32_t>(env);
  std::uint32_t episode = out.episode[env];
  if (advance) out.episode[env] = ++episode;
  const generator_family f = draw_family(p.generator, p.seed, global_env, episode, stages::random_family::stage_id);
  const bool yaw_only = p.gates.align == static_cast<int>(gate_align::yaw_only);
  const float min2 = p.gates.min_spacing * p.gates.min_spacing;
  int count = 0;
  std::uint32_t fail = 0;
  int attempt = 0;
  for (; attempt < p.validate.max_attempts; ++attempt) {
    const std::uint32_t at = static_cast<std::uint32_t>(attempt);
    // The count (stage 15, draw 0) of stages::gate_anchors.
    const int span = p.gates.max_gates - p.gates.min_gates + 1;
    const float u = philox_stream(p.seed, global_env, episode, at, stages::gate_anchors::stage_id).uniform(0u).v[0];
    int want = p.gates.min_gates + static_cast<int>(u * static_cast<float>(span));
    want = want > p.gates.max_gates ? p.gates.max_gates : want;
    const bool sorted = p.gates.ordering == static_cast<int>(gate_ordering::angle_sorted);
    int m = gate_sequence_anchors(p, f, p.seed, global_env, episode, at, g, next, sorted ? 0 : want);
    // Ordering (stages::gate_anchors): angle-sorted about the centroid, ties by index.
    if (sorted) {
      float3 c = f3(0.0f, 0.0f, 0.0f);
      for (int j = 0; j < m; ++j) c = c + g[j];
      c = c * (1.0f / static_cast<float>(m));
      for (int i = 0; i < m; ++i) {
        const float ai = std::atan2(g[i].y - c.y, g[i].x - c.x);
        int rank = 0;
        for (int j = 0; j < m; ++j) {
          const float aj = std::atan2(g[j].y - c.y, g[j].x - c.x);
          rank += (aj < ai || (aj == ai && j < i)) ? 1 : 0;
        }
        next[rank] = g[i];
      }
      for (int i = 0; i < m; ++i) g[i] = next[i];
    }
    // The even thinning of stages::gate_anchors (polar anchors as generated come thinned).
    if (want < m) {
      for (int j = 0; j < want; ++j) next[j] = g[static_cast<int>(static_cast<long long>(j) * m / want)];
      for (int j = 0; j < want; ++j) g[j] = next[j];
      m = want;
    }
    // Elevation: the profile of the plan-view arc length fraction along the closed polygon
    // through the gates. Each gate's arc length waits in its z (replaced below); the knots'
    // values and slopes go to next[] (2 K <= 512 floats of its 768).
    const elevation_params& e = p.elevation;
    if (e.profile != elevation_kind::flat) {
      float l_xy = 0.0f;
      for (int i = 0; i < m; ++i) {
        const float3 d = g[wrap(i + 1, m)] - g[i];
        g[i].z = l_xy;
        l_xy += std::sqrt(d.x * d.x + d.y * d.y);
      }
      float* z = &next[0].x;
      float* slope = z + e.knots;
      const int k_knots = e.knots;
      const float h = l_xy / static_cast<float>(k_knots);
      const philox_stream rng(p.seed, global_env, episode, at, stages::elevation_profile::stage_id);
      if (e.profile == elevation_kind::random_walk) {
        elevation_walk_knots(e, rng, h, z, slope);
      } else {
        for (int j = 0; j < k_knots; ++j) z[j] = elevation_knot_value(e, rng, j);
      }
      const float inv_h = h > 0.0f ? 1.0f / h : 0.0f;
      for (int j = 0; j < k_knots; ++j) slope[j] = elevation_knot_slope(z, k_knots, j, inv_h);
      const float inv_l = l_xy > 0.0f ? 1.0f / l_xy : 0.0f;
      for (int i = 0; i < m; ++i) g[i].z = elevation_at(z, slope, k_knots, h, g[i].z * inv_l * static_cast<float>(k_knots));
    }
    // The bounded spacing solve of stages::gate_spacing (Jacobi rounds, the same sums), except
    // that under an elevation profile each move keeps z within [z_min, z_max]: a push apart
    // never takes a gate under the floor or over the ceiling the profile was drawn in.
    // A pair whose squared distance clears target^2 by a relative 1e-5 (far more than the
    // rounding of length()) is apart: its square root is skipped, the result is the same.
    const bool banded = e.profile != elevation_kind::flat;
    const float target = p.gates.min_spacing * (1.0f + gate_spacing_margin);
    const float far2 = target * target * (1.0f + 1e-5f);
    bool spaced = false;  // a round found every pair apart: the spacing test passes
    // Most draws need no move: one pass over the pairs (each once) settles that, and round 0,
    // which would move nothing, is skipped.
    bool any_close = false;
    for (int i = 0; i < m && !any_close; ++i)
      for (int j = i + 1; j < m && !any_close; ++j) {
        const float3 d = g[i] - g[j];
        any_close = !(dot(d, d) >= far2) && length(d) < target;
      }
    if (!any_close && p.gates.spacing_iterations > 0) spaced = true;
    for (int round = 0; round < p.gates.spacing_iterations && !spaced; ++round) {
      float deficit = 0.0f;
      for (int i = 0; i < m; ++i) {
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
        next[i] = ci + push;
        if (banded) next[i].z = clamp_f(next[i].z, e.z_min, e.z_max);
      }
      if (!(deficit > 0.0f)) {
        spaced = true;
        break;
      }
      for (int i = 0; i < m; ++i) g[i] = next[i];
    }
    // Frames: the forward direction is the tangent at the gate of the closed centripetal
    // Catmull-Rom spline through the gates (the course line stages::catmull_rom would draw),
    // horizontal for yaw_only; the chord to the next gate where that tangent vanishes.
    float d_in = centripetal_knot(g[m - 1], g[0]);
    for (int i = 0; i < m; ++i) {
      const float3 after = g[wrap(i + 1, m)];
      const float d_out = centripetal_knot(g[i], after);
      const float3 c1 = catmull_rom_start_tangent(g[wrap(i - 1, m)], g[i], after, d_in, d_out);
      d_in = d_out;
      const float3 chord = after - g[i];
      const float3 fallback = normalize_or(yaw_only ? f3(chord.x, chord.y, 0.0f) : chord, f3(1.0f, 0.0f, 0.0f));
      next[i] = normalize_or(yaw_only ? f3(c1.x, c1.y, 0.0f) : c1, fallback);
    }
    // The gate test of stages::validate_gates, and the grade between consecutive gates.
    count = m;
    fail = 0;
    // Bars are 2 half_width long about their centres: two whose centres are more than
    // 2 half_width apart in plan view cannot cross, and gate_bars_cross is skipped for them.
    // After a solve that found every pair apart, the spacing holds (target > min_spacing).
    const float reach2 = 4.0f * p.half_width * p.half_width * (1.0f + 1e-5f);
    bool ok = m >= p.gates.min_gates && m <= p.gates.max_gates && m <= out.max_gates;
    for (int i = 0; i < m && ok; ++i) {
      const gate a{g[i], next[i], p.half_width, 0.0f};
      const float horizontal = std::sqrt(a.normal.x * a.normal.x + a.normal.y * a.normal.y);
      ok = is_finite(a.centre) && is_finite(a.normal) && std::fabs(length(a.normal) - 1.0f) <= 1e-4f && horizontal >= 1e-3f;
    }
    for (int i = 0; i < m && ok; ++i) {
      for (int j = i + 1; j < m && ok; ++j) {
        const float3 d = g[i] - g[j];
        if (!spaced) ok = dot(d, d) >= min2;
        if (ok && d.x * d.x + d.y * d.y < reach2)
          ok = !gate_bars_cross(gate{g[i], next[i], p.half_width, 0.0f}, gate{g[j], next[j], p.half_width, 0.0f}, p.gate_half_height);
      }
    }
    if (!ok) fail |= status::fail_gates;
    if (e.profile != elevation_kind::flat) {
      bool level = true;
      for (int i = 0; i < m; ++i) {
        const float3 d = g[wrap(i + 1, m)] - g[i];
        level = level && std::fabs(d.z) <= e.max_grade * std::sqrt(d.x * d.x + d.y * d.y);
      }
      if (!level) fail |= status::fail_grade;
    }
    if (fail == 0) break;
  }
  const int attempts = attempt < p.validate.max_attempts ? attempt + 1 : p.validate.max_attempts;
  const int kept = count < out.max_gates ? count : out.max_gates;
  const std::size_t base = static_cast<std::size_t>(env) * static_cast<std::size_t>(out.max_gates);
  const float nan = NAN;
  for (int i = 0; i < out.max_gates; ++i) {
    out.centre[base + i] = i < kept ? g[i] : f3(nan, nan, nan);
    out.forward[base + i] = i < kept ? next[i] : f3(nan, nan, nan);
  }
  out.count[env] = kept;
  out.status[env] = (fail == 0 ? status::valid : fail) | (static_cast<std::uint32_t>(attempts) << status::attempts_shift);
}

}  // namespace track_gen::detail

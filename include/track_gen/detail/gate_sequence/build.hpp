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

/// The polar anchors an attempt computes: `keep` (0 < keep < M: only those the thinning to
/// `keep` gates keeps, with anchors as generated) or all M = polar.control_points.
TRACK_GEN_HD inline int gate_sequence_polar_count(const track_params& p, int keep) {
  const int m = p.polar.control_points;
  return keep > 0 && keep < m ? keep : m;
}

/// The bezier or hull anchors of one attempt into a[0..return), drawn from the same random
/// streams as the family's generate stage (so the anchors are that stage's control polygon
/// before its curve): bezier, its corners (stages::bezier_corners, stream 10: drawn, sorted by
/// angle, sharp ones pruned); hull, its corners and displaced edge midpoints
/// (stages::hull_corners, stream 11, before Chaikin), with `scratch` for the corners. Polar
/// anchors: stages::random_polar::point. The host refuses the
/// other families. Serial.
TRACK_GEN_HD inline int gate_sequence_anchors(const track_params& p, generator_family f, std::uint64_t seed,
                                              std::uint32_t global_env, std::uint32_t episode, std::uint32_t attempt,
                                              float3* a, float3* scratch) {
  if (f == generator_family::bezier) {
    const bezier_params& b = p.bezier;
    const philox_stream rng(seed, global_env, episode, attempt, stages::bezier_corners::stage_id);
    return family_corners(rng, b.corners_min, b.corners_max, b.layout, b.extent, b.min_corner_distance, b.max_turn, false, a);
  }
  const hull_params& h = p.hull;
  const philox_stream rng(seed, global_env, episode, attempt, stages::hull_corners::stage_id);
  const int n = family_corners(rng, h.corners_min, h.corners_max, h.layout, h.extent, h.min_corner_distance, h.max_turn,
                               h.convex != 0, scratch);
  for (int i = 0; i < n; ++i) {
    a[2 * i] = scratch[i];
    a[2 * i + 1] = stages::hull_corners::edge_point(h, rng, scratch[i], scratch[wrap(i + 1, n)], i);
  }
  return 2 * n;
}

/// One lane: the group of the host backend and of the one-thread-per-env kernel. A group is
/// the lanes that build one env together (size() of them, ranks 0 .. size() - 1, all running
/// the same control flow): sync() orders their writes to the env's arrays, any/all/max reduce
/// over them.
struct single_lane {
  TRACK_GEN_HD static constexpr int size() { return 1; }
  TRACK_GEN_HD int rank() const { return 0; }
  TRACK_GEN_HD void sync() const {}
  TRACK_GEN_HD bool any(bool v) const { return v; }
  TRACK_GEN_HD bool all(bool v) const { return v; }
  TRACK_GEN_HD float max(float v) const { return v; }
  TRACK_GEN_HD int broadcast(int v) const { return v; }
  TRACK_GEN_HD float broadcast(float v) const { return v; }
};

/// Builds env `env`'s gate sequence (gate_sequence.hpp's file comment says what each step
/// does) and writes it to `out`; `advance` moves the env to its next episode first. Up to
/// validate.max_attempts attempts; the first that passes the gate test is kept, else the last
/// one, without status::valid. The lanes of `grp` share the work: rank r takes gates r, r + S,
/// ...; the serial steps (corners, the elevation walk) run on rank 0. Each gate's sums run in
/// index order on one lane and the reductions are exact (or, and, max), so every group size
/// builds the same sequence bit for bit. `g` and `next`: the group's two arrays of at least
/// as many float3 as the family draws anchors, and 2 elevation.knots / 3 (memory the lanes share).
template <class Group>
TRACK_GEN_HD void build_gate_sequence(const Group& grp, const track_params& p, int env, bool advance,
                                      const gate_sequence_out& out, float3* g, float3* next) {
  const int rank = grp.rank();
  constexpr int lanes = Group::size();
  const std::uint32_t global_env = p.env_offset + static_cast<std::uint32_t>(env);
  std::uint32_t episode = out.episode[env];
  if (advance) ++episode;
  const generator_family f = draw_family(p.generator, p.seed, global_env, episode, stages::random_family::stage_id);
  const bool yaw_only = p.gates.align == static_cast<int>(gate_align::yaw_only);
  const bool sorted = p.gates.ordering == static_cast<int>(gate_ordering::angle_sorted);
  const float min2 = p.gates.min_spacing * p.gates.min_spacing;
  const elevation_params& e = p.elevation;
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
    int m = 0;
    if (f == generator_family::bezier || f == generator_family::hull) {
      if (rank == 0) m = gate_sequence_anchors(p, f, p.seed, global_env, episode, at, g, next);
      m = grp.broadcast(m);
    } else {
      m = gate_sequence_polar_count(p, sorted ? 0 : want);
      // Control point floor(j M / m) of stages::random_polar (j itself when all are kept).
      const int all = p.polar.control_points;
      const philox_stream rng(p.seed, global_env, episode, at, stages::random_polar::stage_id);
      const stages::random_polar::shape shape = stages::random_polar::draw_shape(p, rng);
      for (int j = rank; j < m; j += lanes)
        g[j] = stages::random_polar::point(p, rng, shape, m == all ? j : static_cast<int>(static_cast<long long>(j) * all / m));
    }
    grp.sync();
    // Ordering (stages::gate_anchors): angle-sorted about the centroid, ties by index.
    if (sorted) {
      float3 c = f3(0.0f, 0.0f, 0.0f);
      for (int j = 0; j < m; ++j) c = c + g[j];
      c = c * (1.0f / static_cast<float>(m));
      for (int i = rank; i < m; i += lanes) {
        const float ai = std::atan2(g[i].y - c.y, g[i].x - c.x);
        int place = 0;
        for (int j = 0; j < m; ++j) {
          const float aj = std::atan2(g[j].y - c.y, g[j].x - c.x);
          place += (aj < ai || (aj == ai && j < i)) ? 1 : 0;
        }
        next[place] = g[i];
      }
      grp.sync();
      for (int i = rank; i < m; i += lanes) g[i] = next[i];
      grp.sync();
    }
    // The even thinning of stages::gate_anchors (polar anchors as generated come thinned).
    if (want < m) {
      for (int j = rank; j < want; j += lanes) next[j] = g[static_cast<int>(static_cast<long long>(j) * m / want)];
      grp.sync();
      for (int j = rank; j < want; j += lanes) g[j] = next[j];
      grp.sync();
      m = want;
    }
    // Elevation: the profile of the plan-view arc length fraction along the closed polygon
    // through the gates. Rank 0 puts each gate's arc length in its z (replaced below) and the
    // knots' values and slopes in next[] (2 K floats).
    if (e.profile != elevation_kind::flat) {
      const int k_knots = e.knots;
      float* z = &next[0].x;
      float* slope = z + k_knots;
      float l_xy = 0.0f;
      if (rank == 0) {
        for (int i = 0; i < m; ++i) {
          const float3 d = g[wrap(i + 1, m)] - g[i];
          g[i].z = l_xy;
          l_xy += std::sqrt(d.x * d.x + d.y * d.y);
        }
        const float h = l_xy / static_cast<float>(k_knots);
        const philox_stream rng(p.seed, global_env, episode, at, stages::elevation_profile::stage_id);
        if (e.profile == elevation_kind::random_walk) {
          elevation_walk_knots(e, rng, h, z, slope);
        } else {
          for (int j = 0; j < k_knots; ++j) z[j] = elevation_knot_value(e, rng, j);
        }
        const float inv_h = h > 0.0f ? 1.0f / h : 0.0f;
        for (int j = 0; j < k_knots; ++j) slope[j] = elevation_knot_slope(z, k_knots, j, inv_h);
      }
      l_xy = grp.broadcast(l_xy);
      grp.sync();
      const float h = l_xy / static_cast<float>(k_knots);
      const float inv_l = l_xy > 0.0f ? 1.0f / l_xy : 0.0f;
      for (int i = rank; i < m; i += lanes)
        g[i].z = elevation_at(z, slope, k_knots, h, g[i].z * inv_l * static_cast<float>(k_knots));
      grp.sync();
    }
    // The bounded spacing solve of stages::gate_spacing (Jacobi rounds, the same sums), except
    // that under an elevation profile each move keeps z within [z_min, z_max]: a push apart
    // never takes a gate under the floor or over the ceiling the profile was drawn in
    // (detail::gate_spacing_push says why far2 changes no sum).
    const bool banded = e.profile != elevation_kind::flat;
    const float target = p.gates.min_spacing * (1.0f + gate_spacing_margin);
    const float far2 = target * target * (1.0f + 1e-5f);
    // Most draws need no move: one pass over the pairs (each once) settles that, and round 0,
    // which would move nothing, is skipped. `spaced`: a round found every pair apart, so the
    // spacing test passes (target > min_spacing).
    // The same pass notes whether two centres lie within reach of each other's bars (below):
    // when none does and nothing moves, the gate test's pair loop has nothing left to find.
    const float reach2 = 4.0f * p.half_width * p.half_width * (1.0f + 1e-5f);
    bool any_close = false, any_within_reach = false;
    for (int i = rank; i < m && !any_close; i += lanes)
      for (int j = i + 1; j < m && !any_close; ++j) {
        const float3 d = g[i] - g[j];
        any_close = !(dot(d, d) >= far2) && length(d) < target;
        any_within_reach = any_within_reach || !(d.x * d.x + d.y * d.y >= reach2);
      }
    bool spaced = !grp.any(any_close) && p.gates.spacing_iterations > 0;
    const bool pairs_clear = spaced && !grp.any(any_within_reach);
    for (int round = 0; round < p.gates.spacing_iterations && !spaced; ++round) {
      float deficit = 0.0f;
      for (int i = rank; i < m; i += lanes) {
        next[i] = g[i] + gate_spacing_push(g, m, i, target, far2, deficit);
        if (banded) next[i].z = clamp_f(next[i].z, e.z_min, e.z_max);
      }
      deficit = grp.max(deficit);
      grp.sync();
      if (!(deficit > 0.0f)) {
        spaced = true;
        break;
      }
      for (int i = rank; i < m; i += lanes) g[i] = next[i];
      grp.sync();
    }
    // Frames: the forward direction is the tangent at the gate of the closed centripetal
    // Catmull-Rom spline through the gates (the course line stages::catmull_rom would draw),
    // horizontal for yaw_only; the chord to the next gate where that tangent vanishes. One lane
    // carries each knot increment to the next gate.
    float d_in = centripetal_knot(g[wrap(rank - 1, m)], g[rank < m ? rank : 0]);
    for (int i = rank; i < m; i += lanes) {
      const float3 after = g[wrap(i + 1, m)];
      if (lanes > 1 && i != rank) d_in = centripetal_knot(g[i - 1], g[i]);
      const float d_out = centripetal_knot(g[i], after);
      const float3 c1 = catmull_rom_start_tangent(g[wrap(i - 1, m)], g[i], after, d_in, d_out);
      d_in = d_out;
      next[i] = gate_forward(c1, after - g[i], yaw_only);
    }
    grp.sync();
    // The gate test of stages::validate_gates, and the grade between consecutive gates.
    // Bars are 2 half_width long about their centres: two whose centres are more than
    // 2 half_width apart in plan view cannot cross, and gate_bars_cross is skipped for them
    // (for every pair when the spacing pass found them all apart and out of reach).
    count = m;
    fail = 0;
    bool ok = m >= p.gates.min_gates && m <= p.gates.max_gates && m <= out.max_gates;
    bool level = true;
    for (int i = rank; i < m && ok; i += lanes) {
      const gate a{g[i], next[i], p.half_width, 0.0f};
      const float horizontal = std::sqrt(a.normal.x * a.normal.x + a.normal.y * a.normal.y);
      ok = is_finite(a.centre) && is_finite(a.normal) && std::fabs(length(a.normal) - 1.0f) <= 1e-4f && horizontal >= 1e-3f;
      for (int j = i + 1; j < m && ok && !pairs_clear; ++j) {
        const float3 d = g[i] - g[j];
        if (!spaced) ok = dot(d, d) >= min2;
        if (ok && d.x * d.x + d.y * d.y < reach2)
          ok = !gate_bars_cross(a, gate{g[j], next[j], p.half_width, 0.0f}, p.gate_half_height);
      }
      if (e.profile != elevation_kind::flat) {
        const float3 d = g[wrap(i + 1, m)] - g[i];
        level = level && std::fabs(d.z) <= e.max_grade * std::sqrt(d.x * d.x + d.y * d.y);
      }
    }
    if (!grp.all(ok)) fail |= status::fail_gates;
    if (!grp.all(level)) fail |= status::fail_grade;
    if (fail == 0) break;
    grp.sync();  // the next attempt overwrites the arrays
  }
  const int attempts = attempt < p.validate.max_attempts ? attempt + 1 : p.validate.max_attempts;
  const int kept = count < out.max_gates ? count : out.max_gates;
  const std::size_t base = static_cast<std::size_t>(env) * static_cast<std::size_t>(out.max_gates);
  const float nan = NAN;
  for (int i = rank; i < out.max_gates; i += lanes) {
    out.centre[base + i] = i < kept ? g[i] : f3(nan, nan, nan);
    out.forward[base + i] = i < kept ? next[i] : f3(nan, nan, nan);
  }
  if (rank == 0) {
    out.count[env] = kept;
    out.status[env] = (fail == 0 ? status::valid : fail) | (static_cast<std::uint32_t>(attempts) << status::attempts_shift);
    if (advance) out.episode[env] = episode;
  }
}

/// build_gate_sequence on one lane with arrays of gate_sequence_max_anchors on the stack (the
/// host backend; the kernel's one-thread-per-env form).
TRACK_GEN_HD inline void build_gate_sequence(const track_params& p, int env, bool advance, const gate_sequence_out& out) {
  float3 g[gate_sequence_max_anchors];
  float3 next[gate_sequence_max_anchors];
  build_gate_sequence(single_lane{}, p, env, advance, out, g, next);
}

}  // namespace track_gen::detail

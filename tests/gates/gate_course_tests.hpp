#pragma once
/// @file
/// Gate courses (presets::gate_course_pipeline, issue 15 items 1-2) against independent
/// double-precision checks: every pair of gate centres at least gates.min_spacing apart (brute
/// force), no two gates' bars crossing (a segment test written here), the per-env gate count the
/// stage's Philox draw gives, within [min_gates, max_gates], frames (gate_orientation's
/// quaternion) unit, orthonormal, roll-free and level for the yaw-only option, gates on the course
/// line at their arc lengths, the grade cap, determinism per seed, and progress through every
/// gate of a lap flown along the course line. Templated over the backend policy; instantiated in
/// gate_course_test.cpp (host) and gate_course_test.cu (CUDA, plus CUDA against host).

#include "geometry/backend_support.hpp"
#include "geometry/reference_checker.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace tg_test {

/// Rotates v by the unit quaternion q (x, y, z, w): v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z).
inline dvec rotate(const track_gen::gate_quaternion& q, dvec v) {
  const dvec u{q.x, q.y, q.z};
  const dvec t = crossd(u, v) * 2.0;
  return v + t * q.w + crossd(u, t);
}

/// Whether the plan-view segments p0-p1 and q0-q1 cross properly, in double: the point of
/// intersection of their lines lies strictly inside both (parametric form, not orientations).
inline bool plan_cross(dvec p0, dvec p1, dvec q0, dvec q1) {
  const double rx = p1.x - p0.x, ry = p1.y - p0.y, sx = q1.x - q0.x, sy = q1.y - q0.y;
  const double den = rx * sy - ry * sx;
  if (den == 0) return false;
  const double t = ((q0.x - p0.x) * sy - (q0.y - p0.y) * sx) / den;
  const double u = ((q0.x - p0.x) * ry - (q0.y - p0.y) * rx) / den;
  return t > 0 && t < 1 && u > 0 && u < 1;
}

/// One batch of gate courses.
struct gate_case {
  std::string name;
  track_gen::track_params params;
  int anchors;  ///< control points the family draws (the count is min(drawn, anchors)); 0: not checked
};

inline std::vector<gate_case> gate_cases() {
  namespace tg = track_gen;
  std::vector<gate_case> c;
  {
    auto p = tg::presets::gate_course(scaled(1024, 32, 16));
    p.seed = 41;
    c.push_back({"gate_course preset (polar, as generated, yaw only)", p, p.polar.control_points});
  }
  {
    auto p = tg::presets::gate_course(scaled(1024, 32, 16));
    p.seed = 42;
    p.gates.ordering = static_cast<int>(tg::gate_ordering::angle_sorted);
    p.gates.align = static_cast<int>(tg::gate_align::full_tangent);
    p.gates.min_gates = 4;
    p.gates.max_gates = 9;
    p.gates.min_spacing = 6.0f;  // wider than most draws: the solve moves many gates
    c.push_back({"polar, angle-sorted, full tangent, 4-9 gates, spacing 6 m", p, p.polar.control_points});
  }
  {
    auto p = tg::presets::gate_course(scaled(1024, 32, 16));
    p.seed = 43;
    p.generator.family = tg::generator_family::bezier;
    p.bezier.extent = 20.0f;  // the gate preset's scale (presets::gate_course says why)
    p.gates.min_gates = 5;
    p.gates.max_gates = 8;
    p.gates.min_spacing = 4.0f;
    p.elevation.profile = tg::elevation_kind::harmonics;
    p.elevation.max_grade = 0.6f;
    p.validate.length_min = 10.0f;
    c.push_back({"bezier anchors, harmonic altitude, 5-8 gates, spacing 4 m", p, 0});
  }
  return c;
}

/// Every check on one snapshot; returns the number of bad envs (prints the first few).
struct gate_sweep {
  int bad = 0, valid = 0, fallback = 0, counts_seen = 0;
  double closest_pair = 1e30;      ///< smallest pair distance / min_spacing over valid courses
  double off_line = 0;             ///< largest gate distance from the sample polyline [m]
};

inline gate_sweep check_gate_courses(const track_gen::track_snapshot& s, const track_gen::track_params& p, int anchors) {
  namespace tg = track_gen;
  gate_sweep r;
  std::vector<int> seen(static_cast<std::size_t>(p.gates.max_gates) + 1, 0);
  const int n = s.num_samples;
  for (int e = 0; e < s.num_envs; ++e) {
    const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
    if ((st & tg::status::fallback) != 0u) {
      ++r.fallback;
      continue;
    }
    std::vector<std::string> problems;
    auto bad = [&problems](const std::string& what) { problems.push_back(what); };
    if ((st & tg::status::valid) == 0u) bad("a random course without fallback is not valid");
    ++r.valid;
    const int g_n = s.num_gates[static_cast<std::size_t>(e)];
    // The count: the stage's draw (stage 15, draw 0, of the accepted attempt), recomputed.
    const tg::philox_stream rng(p.seed, p.env_offset + static_cast<std::uint32_t>(e), 0u,
                                static_cast<std::uint32_t>(tg::status::attempts(st) - 1), tg::stages::gate_anchors::stage_id);
    const int span = p.gates.max_gates - p.gates.min_gates + 1;
    const int drawn = std::min(p.gates.max_gates, p.gates.min_gates + static_cast<int>(rng.uniform(0u).v[0] * static_cast<float>(span)));
    if (anchors > 0 && g_n != std::min(drawn, anchors)) bad("gate count " + std::to_string(g_n) + ", drawn " + std::to_string(drawn));
    if (g_n < p.gates.min_gates || g_n > p.gates.max_gates) bad("gate count " + std::to_string(g_n) + " out of bounds");
    if (g_n >= 0 && g_n <= p.gates.max_gates) ++seen[static_cast<std::size_t>(g_n)];
    std::vector<dvec> c(static_cast<std::size_t>(g_n)), nrm(c.size());
    for (int g = 0; g < g_n; ++g) {
      c[static_cast<std::size_t>(g)] = to_d(s.gate_centre[s.gate_index(e, g)]);
      nrm[static_cast<std::size_t>(g)] = to_d(s.gate_normal[s.gate_index(e, g)]);
    }
    // Spacing and bars, every pair.
    for (int i = 0; i < g_n; ++i) {
      const dvec li = dvec{-nrm[i].y, nrm[i].x, 0} * (p.half_width / std::hypot(nrm[i].x, nrm[i].y));
      for (int j = i + 1; j < g_n; ++j) {
        const double d = normd(c[i] - c[j]);
        r.closest_pair = std::min(r.closest_pair, d / p.gates.min_spacing);
        if (d < p.gates.min_spacing) bad("gates " + std::to_string(i) + ", " + std::to_string(j) + " " + std::to_string(d) + " m apart");
        const dvec lj = dvec{-nrm[j].y, nrm[j].x, 0} * (p.half_width / std::hypot(nrm[j].x, nrm[j].y));
        if (std::fabs(c[i].z - c[j].z) < 2.0 * p.gate_half_height && plan_cross(c[i] - li, c[i] + li, c[j] - lj, c[j] + lj))
          bad("bars of gates " + std::to_string(i) + ", " + std::to_string(j) + " cross");
      }
    }
    // Frames: the quaternion is unit and maps x, y, z to forward (the normal), a level left, up.
    const bool yaw = p.gates.align == static_cast<int>(tg::gate_align::yaw_only);
    for (int g = 0; g < g_n; ++g) {
      const tg::gate gate = {s.gate_centre[s.gate_index(e, g)], s.gate_normal[s.gate_index(e, g)],
                             s.gate_half_width[s.gate_index(e, g)], s.gate_arc_length[s.gate_index(e, g)]};
      const tg::gate_quaternion q = tg::gate_orientation(gate);
      const double qn = std::sqrt(double(q.x) * q.x + double(q.y) * q.y + double(q.z) * q.z + double(q.w) * q.w);
      const dvec fx = rotate(q, {1, 0, 0}), fy = rotate(q, {0, 1, 0}), fz = rotate(q, {0, 0, 1});
      const double err = std::max({std::fabs(qn - 1), normd(fx - nrm[g]), std::fabs(dotd(fx, fy)), std::fabs(dotd(fy, fz)),
                                   std::fabs(dotd(fx, fz)), std::fabs(normd(fy) - 1), std::fabs(fy.z)});
      if (!(err <= 1e-5)) bad("gate " + std::to_string(g) + " frame error " + std::to_string(err));
      if (yaw && !(std::fabs(nrm[g].z) <= 1e-6 && fz.z >= 1 - 1e-6)) bad("gate " + std::to_string(g) + " not level");
      if (!(fz.z > 0)) bad("gate " + std::to_string(g) + " upside down");
      const tg::gate_posts_t posts = tg::gate_posts(gate);
      const dvec pl = to_d(posts.left), pr = to_d(posts.right);
      if (!(std::fabs(normd(pl - pr) - 2.0 * p.half_width) <= 1e-5 * (1 + p.half_width) &&
            normd((pl + pr) * 0.5 - c[g]) <= 1e-5 * (1 + normd(c[g])) && dotd(pl - c[g], fy) > 0))
        bad("gate " + std::to_string(g) + " posts");
    }
    // On the course line: distance to the sample polyline, and the arc length there.
    const double L = s.length[static_cast<std::size_t>(e)];
    const double ds = L / n;
    double previous = -1;
    for (int g = 0; g < g_n; ++g) {
      double best = 1e30, at = 0;
      for (int k = 0; k < n; ++k) {
        const dvec a = to_d(s.position[s.sample_index(e, k)]), b = to_d(s.position[s.sample_index(e, (k + 1) % n)]);
        const dvec ab = b - a;
        const double t = std::clamp(dotd(c[g] - a, ab) / std::max(dotd(ab, ab), 1e-30), 0.0, 1.0);
        const double d = normd(a + ab * t - c[g]);
        if (d < best) best = d, at = (k + t) * ds;
      }
      r.off_line = std::max(r.off_line, best);
      const double arc = s.gate_arc_length[s.gate_index(e, g)];
      if (!(best <= 0.02)) bad("gate " + std::to_string(g) + " " + std::to_string(best) + " m off the course line");
      if (!(std::fabs(arc - at) <= 0.05 || std::fabs(std::fabs(arc - at) - L) <= 0.05))
        bad("gate " + std::to_string(g) + " arc length " + std::to_string(arc) + " vs " + std::to_string(at));
      if (!(arc > previous)) bad("gate arc lengths not increasing");
      previous = arc;
    }
    if (g_n > 0 && !(s.gate_arc_length[s.gate_index(e, 0)] == 0.0f)) bad("gate 0 is not the start line");
    // Grade of the course line, the closing pair included.
    for (int k = 0; k < n; ++k) {
      const dvec a = to_d(s.position[s.sample_index(e, k)]), b = to_d(s.position[s.sample_index(e, (k + 1) % n)]);
      if (std::fabs(b.z - a.z) > p.elevation.max_grade * std::hypot(b.x - a.x, b.y - a.y) * (1 + 1e-5) + 1e-6) {
        bad("grade above the cap at sample " + std::to_string(k));
        break;
      }
    }
    if (!problems.empty()) {
      if (r.bad < 5) MESSAGE("env " << e << ": " << problems.front() << " (" << problems.size() << " problems)");
      ++r.bad;
    }
  }
  for (int v : seen) r.counts_seen += v > 0 ? 1 : 0;
  return r;
}

TEST_CASE_TEMPLATE_DEFINE("gate courses: spacing, bars, counts, frames, course line and grade on every course", Policy,
                          gate_course_sweep) {
  namespace tg = track_gen;
  typename backend<Policy>::stream_holder stream;
  for (const gate_case& gc : gate_cases()) {
    CAPTURE(gc.name);
    const tg::track_params& p = gc.params;
    tg::course<tg::presets::gate_course_pipeline, Policy> course(p, tg::presets::gate_course_spacing(p), stream.get());
    REQUIRE(course.max_gates() >= p.gates.max_gates);
    const tg::track_snapshot s = course.copy_tracks(stream.get());
    const gate_sweep r = check_gate_courses(s, p, gc.anchors);
    MESSAGE(gc.name << ": " << p.num_envs << " envs, " << r.valid << " valid, " << r.fallback << " fallback, "
                    << r.counts_seen << " distinct gate counts, closest pair " << r.closest_pair
                    << " x min_spacing, largest gate distance from the course line " << r.off_line << " m");
    CHECK(r.bad == 0);
    CHECK(r.valid >= p.num_envs * 9 / 10);
    // Every count of the band is drawn in a thousand envs; a few in the small scale's 32.
    const int span = p.gates.max_gates - p.gates.min_gates + 1;
    CHECK(r.counts_seen >= (small_scale() ? 2 : span));
    CHECK(r.counts_seen <= span);
    CHECK(r.closest_pair >= 1.0);
  }
}

/// Two courses of the same parameters give the same bytes; another seed gives other courses.
TEST_CASE_TEMPLATE_DEFINE("gate courses are deterministic per seed", Policy, gate_course_determinism) {
  namespace tg = track_gen;
  typename backend<Policy>::stream_holder stream;
  auto p = tg::presets::gate_course(scaled(256, 16, 16));
  p.seed = 7;
  const float spacing = tg::presets::gate_course_spacing(p);
  tg::course<tg::presets::gate_course_pipeline, Policy> a(p, spacing, stream.get());
  tg::course<tg::presets::gate_course_pipeline, Policy> b(p, spacing, stream.get());
  const tg::track_snapshot sa = a.copy_tracks(stream.get()), sb = b.copy_tracks(stream.get());
#define TG_GATES_SAME(name, type, ext, doc) \
  CHECK_MESSAGE(std::memcmp(sa.name.data(), sb.name.data(), sa.name.size() * sizeof(type)) == 0, #name " differs");
  TRACK_GEN_TRACK_FIELDS(TG_GATES_SAME)
#undef TG_GATES_SAME
  p.seed = 8;
  tg::course<tg::presets::gate_course_pipeline, Policy> other(p, spacing, stream.get());
  const tg::track_snapshot so = other.copy_tracks(stream.get());
  CHECK(std::memcmp(sa.gate_centre.data(), so.gate_centre.data(), sa.gate_centre.size() * sizeof(float3)) != 0);
}

/// An agent flown along the course line (every sample in turn, two laps) passes every gate in
/// order and completes the laps: progress through gates works on gate courses unchanged.
TEST_CASE_TEMPLATE_DEFINE("progress counts every gate of a gate course flown along its course line", Policy,
                          gate_course_progress) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  auto p = tg::presets::gate_course(scaled(64, 8, 8));
  p.seed = 9;
  tg::course<tg::presets::gate_course_pipeline, Policy> course(p, tg::presets::gate_course_spacing(p), stream.get());
  const tg::track_snapshot s = course.copy_tracks(stream.get());
  const int n = s.num_samples, e_n = s.num_envs;
  std::vector<float3> at(static_cast<std::size_t>(e_n));
  auto place = [&](int k) {
    for (int e = 0; e < e_n; ++e) {
      // Half a sample past sample k: never exactly on a gate plane.
      const float3 a = s.position[s.sample_index(e, k % n)], b = s.position[s.sample_index(e, (k + 1) % n)];
      at[static_cast<std::size_t>(e)] = {0.5f * (a.x + b.x), 0.5f * (a.y + b.y), 0.5f * (a.z + b.z)};
    }
  };
  place(0);
  typename B::template buffer<float3> positions(at);
  course.bind(positions.get());
  course.step(stream.get());
  for (int k = 1; k <= 2 * n; ++k) {
    place(k);
    positions.upload(at);
    course.step(stream.get());
  }
  const tg::progress_snapshot pr = course.copy_progress(stream.get());
  for (int e = 0; e < e_n; ++e) {
    CAPTURE(e);
    const int g_n = s.num_gates[static_cast<std::size_t>(e)];
    CHECK(pr.gates_passed[static_cast<std::size_t>(e)] == 2 * g_n);
    CHECK(pr.laps[static_cast<std::size_t>(e)] == 2);
  }
}

}  // namespace tg_test

#pragma once
/// @file
/// Gate sequences (gate_sequence.hpp) against independent double-precision checks: the count
/// band, every pair of centres at least gates.min_spacing apart (brute force), no two gates'
/// bars crossing (the parametric segment test of gate_course_tests.hpp), unit frames, level for
/// yaw_only, each forward along the tangent of the centripetal Catmull-Rom curve through the
/// gates (the Barry-Goldman pyramid differentiated numerically in double), the grade between
/// consecutive gates, the altitude band, NaN past the count; the gates of the gate-course
/// pipeline where both took their first attempt with nothing to move; determinism, masks and
/// episodes. Templated over the backend policy; instantiated in gate_sequence_test.cpp (host)
/// and gate_sequence_test.cu (CUDA, plus CUDA against host).

#include "gates/gate_course_tests.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tg_test {

/// The arrays of a gate_sequences, copied to the host.
struct sequence_snapshot {
  int num_envs = 0, max_gates = 0;
  std::vector<float3> centre, forward;
  std::vector<int> count;
  std::vector<std::uint32_t> status, episode;
  std::size_t at(int e, int g) const { return static_cast<std::size_t>(e) * max_gates + g; }
};

template <class Policy>
sequence_snapshot snapshot_of(const track_gen::gate_sequences<Policy>& s) {
  using B = backend<Policy>;
  const track_gen::detail::gate_sequence_out o = s.view().arrays();
  sequence_snapshot r;
  r.num_envs = o.num_envs;
  r.max_gates = o.max_gates;
  const std::size_t slots = static_cast<std::size_t>(o.num_envs) * o.max_gates, e = o.num_envs;
  r.centre = B::download(o.centre, slots);
  r.forward = B::download(o.forward, slots);
  r.count = B::download(o.count, e);
  r.status = B::download(o.status, e);
  r.episode = B::download(o.episode, e);
  return r;
}

/// Point of the centripetal Catmull-Rom segment p1 -> p2 (knots |d|^(1/2)) at t in [t1, t2], by
/// the Barry-Goldman pyramid in double.
inline dvec barry_goldman(dvec p0, dvec p1, dvec p2, dvec p3, double t) {
  const double t0 = 0, t1 = t0 + std::sqrt(normd(p1 - p0)), t2 = t1 + std::sqrt(normd(p2 - p1)),
               t3 = t2 + std::sqrt(normd(p3 - p2));
  const dvec a1 = p0 * ((t1 - t) / (t1 - t0)) + p1 * ((t - t0) / (t1 - t0));
  const dvec a2 = p1 * ((t2 - t) / (t2 - t1)) + p2 * ((t - t1) / (t2 - t1));
  const dvec a3 = p2 * ((t3 - t) / (t3 - t2)) + p3 * ((t - t2) / (t3 - t2));
  const dvec b1 = a1 * ((t2 - t) / (t2 - t0)) + a2 * ((t - t0) / (t2 - t0));
  const dvec b2 = a2 * ((t3 - t) / (t3 - t1)) + a3 * ((t - t1) / (t3 - t1));
  return b1 * ((t2 - t) / (t2 - t1)) + b2 * ((t - t1) / (t2 - t1));
}

/// Unit tangent at p1 of that curve: a one-sided difference quotient at t1 (h = 1e-6 of the knot span).
inline dvec curve_tangent(dvec p0, dvec p1, dvec p2, dvec p3) {
  const double span = std::sqrt(normd(p2 - p1));
  const double t1 = std::sqrt(normd(p1 - p0));
  const dvec d = barry_goldman(p0, p1, p2, p3, t1 + 1e-6 * span) - p1;
  return d * (1.0 / normd(d));
}

/// What the independent checks found over a batch.
struct sequence_report {
  int valid = 0, close_pairs = 0, crossing_bars = 0, bad_frames = 0, off_tangent = 0, steep = 0, out_of_band = 0,
      bad_count = 0, not_nan = 0;
  double worst_tangent = 0;
};

inline sequence_report check_sequences(const sequence_snapshot& s, const track_gen::track_params& p) {
  namespace tg = track_gen;
  sequence_report r;
  const bool yaw = p.gates.align == static_cast<int>(tg::gate_align::yaw_only);
  for (int e = 0; e < s.num_envs; ++e) {
    const int g_n = s.count[static_cast<std::size_t>(e)];
    for (int g = g_n; g < s.max_gates; ++g) r.not_nan += std::isnan(s.centre[s.at(e, g)].x) && std::isnan(s.forward[s.at(e, g)].x) ? 0 : 1;
    if ((s.status[static_cast<std::size_t>(e)] & tg::status::valid) == 0u) continue;
    ++r.valid;
    r.bad_count += (g_n < p.gates.min_gates || g_n > p.gates.max_gates) ? 1 : 0;
    std::vector<dvec> c(static_cast<std::size_t>(g_n));
    for (int g = 0; g < g_n; ++g) c[static_cast<std::size_t>(g)] = to_d(s.centre[s.at(e, g)]);
    auto at = [&](int i) { return c[static_cast<std::size_t>(((i % g_n) + g_n) % g_n)]; };
    for (int i = 0; i < g_n; ++i) {
      const dvec f = to_d(s.forward[s.at(e, i)]);
      const bool unit = std::fabs(normd(f) - 1.0) <= 2e-4;
      r.bad_frames += (!unit || (yaw && f.z != 0.0)) ? 1 : 0;
      dvec t = curve_tangent(at(i - 1), at(i), at(i + 1), at(i + 2));
      if (yaw) t = dvec{t.x, t.y, 0} * (1.0 / std::hypot(t.x, t.y));
      const double off = angle_between(f, t);
      r.worst_tangent = std::max(r.worst_tangent, off);
      r.off_tangent += off > 5e-3 ? 1 : 0;  // float rounding where two anchors nearly coincide
      const dvec d = at(i + 1) - at(i);
      if (p.elevation.profile != tg::elevation_kind::flat) {
        r.steep += std::fabs(d.z) > p.elevation.max_grade * std::hypot(d.x, d.y) * (1 + 1e-5) + 1e-6 ? 1 : 0;
        r.out_of_band += (at(i).z < p.elevation.z_min - 1e-4 || at(i).z > p.elevation.z_max + 1e-4) ? 1 : 0;
      }
      const dvec left_i = dvec{-f.y, f.x, 0} * (p.half_width / std::hypot(f.x, f.y));
      for (int j = i + 1; j < g_n; ++j) {
        r.close_pairs += normd(at(j) - at(i)) < p.gates.min_spacing ? 1 : 0;
        const dvec fj = to_d(s.forward[s.at(e, j)]);
        const dvec left_j = dvec{-fj.y, fj.x, 0} * (p.half_width / std::hypot(fj.x, fj.y));
        const bool cross = std::fabs(at(i).z - at(j).z) < 2.0 * p.gate_half_height &&
                           plan_cross(at(i) - left_i, at(i) + left_i, at(j) - left_j, at(j) + left_j);
        r.crossing_bars += cross ? 1 : 0;
      }
    }
  }
  return r;
}

/// Sequence batches: the gate-course preset (polar), angle-sorted with the full tangent, bezier
/// and hull corners at gate scale with harmonics and uniform profiles, and a mix.
inline std::vector<gate_case> sequence_cases() {
  namespace tg = track_gen;
  std::vector<gate_case> c;
  const int e = scaled(4096, 32, 64);
  {
    auto p = tg::presets::gate_course(e);
    p.seed = 7;
    c.push_back({"gate_course preset (polar)", p, 0});
  }
  {
    auto p = tg::presets::gate_course(e);
    p.seed = 8;
    p.gates.ordering = static_cast<int>(tg::gate_ordering::angle_sorted);
    p.gates.align = static_cast<int>(tg::gate_align::full_tangent);
    p.gates.min_spacing = 6.0f;
    c.push_back({"polar, angle-sorted, full tangent, spacing 6 m", p, 0});
  }
  {
    auto p = tg::presets::gate_course(e);
    p.seed = 9;
    p.generator.family = tg::generator_family::bezier;
    p.bezier.extent = 25.0f;
    p.elevation.profile = tg::elevation_kind::harmonics;
    c.push_back({"bezier corners, extent 25 m, harmonics", p, 0});
  }
  {
    auto p = tg::presets::gate_course(e);
    p.seed = 10;
    p.generator.family = tg::generator_family::hull;
    p.hull.extent = 25.0f;
    p.gates.max_gates = 24;
    p.elevation.profile = tg::elevation_kind::uniform;
    p.elevation.max_grade = 1.0f;
    c.push_back({"hull corners and midpoints, extent 25 m, uniform altitude, up to 24 gates", p, 0});
  }
  {
    auto p = tg::presets::gate_course(e);
    p.seed = 11;
    p.generator.weights[0] = 1.0f;
    p.generator.weights[1] = 1.0f;
    p.generator.weights[2] = 1.0f;
    p.bezier.extent = 25.0f;
    p.hull.extent = 25.0f;
    p.elevation.profile = tg::elevation_kind::flat;
    c.push_back({"a mix of polar, bezier and hull, flat", p, 0});
  }
  return c;
}

TEST_CASE_TEMPLATE_DEFINE("gate sequences pass the independent checks", Policy, gate_sequence_checks) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  for (const gate_case& gc : sequence_cases()) {
    CAPTURE(gc.name);
    tg::gate_sequences<Policy> seq(gc.params, stream.get());
    seq.generate(stream.get());
    stream.sync();
    const sequence_snapshot s = snapshot_of(seq);
    const sequence_report r = check_sequences(s, gc.params);
    MESSAGE(gc.name << ": " << r.valid << " of " << s.num_envs << " valid, largest angle to the curve's tangent "
                    << r.worst_tangent << " rad");
    CHECK(r.valid >= s.num_envs * 99 / 100);
    CHECK(r.bad_count == 0);
    CHECK(r.close_pairs == 0);
    CHECK(r.crossing_bars == 0);
    CHECK(r.bad_frames == 0);
    CHECK(r.off_tangent == 0);
    CHECK(r.steep == 0);
    CHECK(r.out_of_band == 0);
    CHECK(r.not_nan == 0);
  }
}

// With a flat profile, nothing to space and the anchors as generated, a sequence's gates are
// the control points the gate-course pipeline's stages keep as gates (random_polar's points,
// thinned by gate_anchors' count), and its forwards the pipeline's spline tangents there: so
// wherever both kept their first attempt, the gates agree (the pipeline spends more attempts,
// since it also tests its course line as a track).
TEST_CASE_TEMPLATE_DEFINE("gate sequences are the gate-course pipeline's gates where both kept attempt 1", Policy,
                          gate_sequence_vs_pipeline) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  auto p = tg::presets::gate_course(scaled(1024, 16, 64));
  p.seed = 3;
  p.elevation.profile = tg::elevation_kind::flat;
  p.gates.min_spacing = 0.5f;  // polar anchors at radii 10-14 m, 12 around: never this close
  tg::gate_sequences<Policy> seq(p, stream.get());
  seq.generate(stream.get());
  stream.sync();
  const sequence_snapshot s = snapshot_of(seq);
  tg::course<tg::presets::gate_course_pipeline, Policy> course(p, tg::presets::gate_course_spacing(p), stream.get());
  const tg::track_snapshot t = course.copy_tracks(stream.get());
  int compared = 0, different = 0;
  double worst_normal = 0;
  for (int e = 0; e < s.num_envs; ++e) {
    if (tg::status::attempts(t.status[e]) != 1 || tg::status::attempts(s.status[e]) != 1) continue;
    if ((t.status[e] & tg::status::valid) == 0u || (s.status[e] & tg::status::valid) == 0u) continue;
    ++compared;
    REQUIRE(t.num_gates[e] == s.count[e]);
    for (int g = 0; g < s.count[e]; ++g) {
      const float3 a = s.centre[s.at(e, g)], b = t.gate_centre[t.gate_index(e, g)];
      different += (a.x != b.x || a.y != b.y || a.z != b.z) ? 1 : 0;
      worst_normal = std::max(worst_normal, normd(to_d(s.forward[s.at(e, g)]) - to_d(t.gate_normal[t.gate_index(e, g)])));
    }
  }
  MESSAGE(compared << " envs compared, largest forward difference " << worst_normal);
  CHECK(compared >= s.num_envs / 4);
  CHECK(different == 0);
  CHECK(worst_normal <= 1e-5);
}

TEST_CASE_TEMPLATE_DEFINE("gate sequences: the same episode again is bit-identical; a masked advance changes only its envs",
                          Policy, gate_sequence_masks) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  auto p = tg::presets::gate_course(scaled(512, 8, 32));
  tg::gate_sequences<Policy> seq(p, stream.get());
  seq.generate(stream.get());
  stream.sync();
  const sequence_snapshot first = snapshot_of(seq);
  seq.generate(stream.get());
  stream.sync();
  const sequence_snapshot again = snapshot_of(seq);
  CHECK(same_bytes(first.centre, again.centre));
  CHECK(same_bytes(first.forward, again.forward));
  CHECK(same_bytes(first.status, again.status));
  std::vector<std::int32_t> mask(static_cast<std::size_t>(p.num_envs), 0);
  for (int e = 0; e < p.num_envs; e += 3) mask[static_cast<std::size_t>(e)] = 1;
  typename B::template buffer<std::int32_t> dmask(mask);
  seq.generate(dmask.get(), true, stream.get());
  stream.sync();
  const sequence_snapshot next = snapshot_of(seq);
  int changed_unmasked = 0, same_masked = 0;
  for (int e = 0; e < p.num_envs; ++e) {
    const bool m = mask[static_cast<std::size_t>(e)] != 0;
    CHECK(next.episode[static_cast<std::size_t>(e)] == (m ? 1u : 0u));
    bool same = next.count[e] == first.count[e];
    for (int g = 0; g < p.gates.max_gates && same; ++g) {
      const float3 a = next.centre[next.at(e, g)], b = first.centre[first.at(e, g)];
      same = std::memcmp(&a, &b, sizeof(float3)) == 0;
    }
    if (m) same_masked += same ? 1 : 0;
    else changed_unmasked += same ? 0 : 1;
  }
  CHECK(changed_unmasked == 0);
  CHECK(same_masked == 0);
}

}  // namespace tg_test

#pragma once
/// @file
/// The per-track trust radius (the track field `trust_radius`, set by stages::validate; read by
/// track_ref::project_local): its value against a brute-force double computation of its
/// definition, and every local search that it lets through against the brute-force nearest
/// point, on random tracks of every family but repulsive, flat and lifted, probed close to the
/// radius on both sides. Test bodies templated over the policy; applied in
/// trust_radius_test.cpp and trust_radius_test.cu.

#include "geometry/reference_checker.hpp"
#include "progress_harness.hpp"

#include <limits>

namespace progress_test {

using tg_test::crossd;
using tg_test::dvec;
using tg_test::normd;
using tg_test::to_d;

/// The trust radius of env e by its definition, in double: min(S / 2, t cos(a / (2 t))) with
/// t = min(rho, r), rho the least over the samples of min(|a|, |b|) / (2 tan(theta / 2)) for the
/// edges a, b meeting there at turn theta (tg_test::angle_between), r the accepted turn radius
/// max(turn_radius_min, half_width + clearance_margin / 2), a = max(0, (w + 2) h - pi t) with
/// h = 1.0011 L / N when every chord is at most 1.001 L / N (else 1.05 L / N, the spacing
/// test's bound) and w stages::validate's window in samples, and S the least distance
/// (tg_test::segment_distance, the geometry checker's) between two segments whose index gap
/// (around the loop) is at least w + 2: the clearance test's pairs.
struct trust_reference {
  double separation, turn, radius;
  bool tight;  ///< every chord at most 1.001 L / N (h = 1.0011 L / N), else h = 1.05 L / N
};
inline trust_reference trust_radius_reference(const tg::track_snapshot& t, int e, const tg::track_params& p) {
  const int n = t.num_samples;
  const std::size_t first = t.sample_index(e, 0);
  const auto at = [&](int k) { return to_d(t.position[first + static_cast<std::size_t>(((k % n) + n) % n)]); };
  const double length = t.length[static_cast<std::size_t>(e)];
  const int w = tg::stages::validate::window_samples(p, static_cast<float>(length), n);
  double separation = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i)
    for (int j = i + w + 2; j <= i + n - w - 2 && j < n; ++j)
      separation = std::min(separation, tg_test::segment_distance(at(i), at(i + 1), at(j), at(j + 1)));
  double rho = std::numeric_limits<double>::infinity(), longest = 0.0;
  for (int k = 0; k < n; ++k) {
    const dvec a = at(k) - at(k - 1), b = at(k + 1) - at(k);
    const double theta = tg_test::angle_between(a, b);
    if (theta > 0.0) rho = std::min(rho, std::min(normd(a), normd(b)) / (2.0 * std::tan(0.5 * theta)));
    longest = std::max(longest, normd(b));
  }
  const double r = std::max(double(p.validate.turn_radius_min), p.half_width + 0.5 * p.validate.clearance_margin);
  double turn = std::min(rho, r);
  const bool tight = longest <= 1.001 * length / n;
  const double h = (tight ? 1.0011 : 1.05) * length / n;
  const double excess = (w + 2) * h - pi * turn;
  if (excess > 0.0) turn *= std::cos(std::min(0.5 * excess / turn, 0.5 * pi));
  return {separation, turn, std::min(0.5 * separation, turn), tight};
}

/// A shape stage that stretches the chord from sample 0 to sample 1 of every track to about
/// 1.002 L / N (sample 1 moved 0.2 % along it, the next chord shortened as much: both within the
/// spacing test), so that validate's tight chord test fails and the trust radius takes the
/// spacing test's 1.05 L / N bound. Frames' stored curvature is left as it was.
struct stretch_one_chord {
  static constexpr tg::detail::stage_role role = tg::detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 40;
  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, tg::detail::workspace& ws, const tg::track_params&) {
    using namespace tg::detail;
    if (ctx.rank() == 0) {  // the stages before end with a barrier: their samples are written
      const float3 a = ws.position[0], b = ws.position[1];
      const float chord = length(b - a), ds = ws.length / static_cast<float>(ws.num_samples);
      ws.position[1] = a + (b - a) * (1.002f * ds / chord);
    }
    ctx.sync();
  }
};
using stretched_track_pipeline = tg::pipeline<tg::stages::random_polar, tg::stages::polygon_separation, tg::stages::catmull_rom,
                                              tg::stages::resample, tg::stages::frames, tg::stages::checkpoints,
                                              stretch_one_chord, tg::stages::validate>;

/// What check_trust_radius counted over a batch.
struct trust_tally {
  int tracks = 0, probes = 0, trusted = 0, beyond = 0;
  int by_separation = 0, by_turn = 0;  ///< tracks whose radius is half the separation, or the turns' part
  int loose = 0;  ///< tracks with a chord longer than 1.001 L / N (the window bounded by 1.05 L / N)
  int between = 0, between_trusted = 0;  ///< probes nearer than the radius but off the road, and those trusted

  trust_tally& operator+=(const trust_tally& o) {
    tracks += o.tracks, probes += o.probes, trusted += o.trusted, beyond += o.beyond, loose += o.loose;
    by_separation += o.by_separation, by_turn += o.by_turn;
    between += o.between, between_trusted += o.between_trusted;
    return *this;
  }
};

/// Generates a batch of `Pipeline` on `Policy`'s backend and checks env by env: the field
/// against trust_radius_reference; then points at 0.85-1.3 trust radii from random points of
/// the centreline (random directions across the segment), each projected from a hint within 3
/// segments, window 8: a local search let through (no full search) must find the brute-force
/// nearest point, and a point farther than the radius (and the half-width) from every point of
/// the track must get the full search.
template <class Policy, class Pipeline = tg::presets::track_pipeline>
trust_tally check_trust_radius(const tg::track_params& params, std::uint64_t seed, const tg::user_tracks* user = nullptr) {
  rig<Policy, Pipeline> r = user != nullptr ? rig<Policy, Pipeline>(params, 10.0f, *user) : rig<Policy, Pipeline>(params, 10.0f);
  const tg::track_snapshot t = r.tracks();
  const int n = t.num_samples;
  const int window = 8;
  lcg rng{seed};
  trust_tally tally;
  for (int e = 0; e < params.num_envs; ++e) {
    const auto ue = static_cast<std::size_t>(e);
    const float radius = t.trust_radius[ue];
    INFO("env " << e << " status " << hex(t.status[ue]) << " trust radius " << radius);
    if ((t.status[ue] & tg::status::valid) == 0u) {
      CHECK(radius == 0.0f);
      continue;
    }
    const trust_reference ref = trust_radius_reference(t, e, params);
    INFO("reference: separation " << ref.separation << " turn " << ref.turn << " radius " << ref.radius);
    // float32 segment distances and turns against double: 1e-4 m (about 1e-4 of the radius).
    CHECK(std::fabs(radius - ref.radius) < 1e-4);
    ++tally.tracks;
    const bool by_separation = 0.5 * ref.separation < ref.turn;
    tally.by_separation += by_separation ? 1 : 0;
    tally.by_turn += by_separation ? 0 : 1;
    tally.loose += ref.tight ? 0 : 1;

    const std::size_t first = t.sample_index(e, 0);
    double widest = 0.0;
    for (int k = 0; k < n; ++k) {
      const float2 hw = t.half_widths[first + static_cast<std::size_t>(k)];
      widest = std::max(widest, double(std::max(hw.x, hw.y)));
    }
    const int probes = scaled(160, 24);
    std::vector<float3> points;
    std::vector<int> hints;
    for (int i = 0; i < probes; ++i) {
      const int k = std::min(static_cast<int>(rng.next() * n), n - 1);
      const dvec a = to_d(t.position[first + static_cast<std::size_t>(k)]);
      const dvec b = to_d(t.position[first + static_cast<std::size_t>((k + 1) % n)]);
      const dvec u = (b - a) * (1.0 / normd(b - a));
      dvec left = {-u.y, u.x, 0.0};
      left = left * (1.0 / normd(left));
      const dvec up = crossd(u, left);
      const double phi = 2.0 * pi * rng.next();
      const double d = radius * (0.85 + 0.45 * rng.next());
      const dvec p = (a + (b - a) * rng.next()) + (left * std::cos(phi) + up * std::sin(phi)) * d;
      points.push_back(v3(p.x, p.y, p.z));
      hints.push_back(((k + static_cast<int>(rng.next() * 7.0) - 3) % n + n) % n);
    }
    const std::vector<tg::projection> got = r.project(e, points, hints, window);
    for (int i = 0; i < probes; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const tg::projection& lo = got[u];
      const brute_result br = brute_nearest(t.position, first, n, points[u]);
      INFO("probe " << i << " at (" << points[u].x << ", " << points[u].y << ", " << points[u].z << ") hint " << hints[u]
                    << ": segment " << lo.segment << " distance " << lo.distance << " full " << lo.full_search
                    << "; brute segment " << br.segment << " distance " << br.distance);
      ++tally.probes;
      if (!lo.full_search) {
        // Let through: a nearest point of the whole track (its distance: on the inside of a
        // turn, two points of the track can be equally near, and either is right).
        CHECK(std::fabs(lo.distance - br.distance) < 2e-5);
        ++tally.trusted;
      }
      const double limit = std::max(double(radius), widest);
      if (br.distance > limit * (1.0 + 1e-5) + 1e-6) {
        CHECK(lo.full_search);
        ++tally.beyond;
      }
      if (br.distance > widest + 1e-3 && br.distance < radius - 1e-3) {
        ++tally.between;
        tally.between_trusted += lo.full_search ? 0 : 1;
      }
    }
  }
  return tally;
}

/// A closed "dog bone" (clockwise, flat): two lobes of radius `lobe` joined by a neck whose
/// sides are arcs of radius `neck` bending away from each other, `waist` apart at the
/// narrowest, every arc tangent to the next; sampled about every 5 cm. The two sides of the
/// neck are far apart along the track and `waist` apart across it: a separation below twice
/// the least turn radius when waist < 2 min(lobe, neck).
inline std::vector<float3> dog_bone(double lobe, double neck, double waist) {
  std::vector<float3> pts;
  const auto arc = [&pts](double cx, double cy, double r, double a0, double a1) {
    const int m = std::max(8, static_cast<int>(std::ceil(std::fabs(a1 - a0) * r * 20.0)));
    for (int i = 0; i < m; ++i) {
      const double a = a0 + (a1 - a0) * i / m;
      pts.push_back(v3(cx + r * std::cos(a), cy + r * std::sin(a)));
    }
  };
  const double h = 0.5 * waist + neck;                                // the neck arcs' centres (0, +-h)
  const double d = std::sqrt((lobe + neck) * (lobe + neck) - h * h);  // the lobes' centres (+-d, 0)
  const double phi = std::atan2(-h, d);                               // from the upper neck centre to the right lobe's
  arc(0.0, h, neck, -0.5 * pi, phi);                                  // upper neck, left to right
  arc(d, 0.0, lobe, pi + phi, -pi - phi);                             // right lobe, clockwise
  arc(0.0, -h, neck, -phi, pi + phi);                                 // lower neck, right to left
  arc(-d, 0.0, lobe, phi, -phi - 2.0 * pi);                           // left lobe, clockwise
  arc(0.0, h, neck, std::atan2(-h, -d), -0.5 * pi);                   // upper neck, back to the start
  return pts;
}

TEST_CASE_TEMPLATE_DEFINE("trust radius: the field follows its definition, and every local search it trusts finds "
                          "the nearest point",
                          Policy, trust_radius_random_tracks) {
  const int envs = scaled(40, 6);
  trust_tally all;
  const auto add = [&all](const trust_tally& t) { all += t; };
  {
    INFO("the track preset (lobed polar, flat)");
    tg::track_params p = tg::presets::track(envs);
    p.seed = 11;
    add(check_trust_radius<Policy>(p, 101u));
  }
  {
    INFO("the drone_track preset (lifted: z from 0.5 to 2.5 m)");
    tg::track_params p = tg::presets::drone_track(envs);
    p.seed = 12;
    add(check_trust_radius<Policy>(p, 102u));
  }
  {
    INFO("a mix of bezier, hull, voronoi and checkpoint tracks (family_pipeline)");
    tg::track_params p = tg::presets::track(envs);
    p.seed = 13;
    for (int f = 1; f <= 4; ++f) p.generator.weights[f] = 1.0f;
    add(check_trust_radius<Policy, tg::presets::family_pipeline>(p, 103u));
  }
  {
    INFO("the track preset with one chord of each track stretched to 1.002 L / N (stretch_one_chord): "
         "validate bounds the window by the spacing test's 1.05 L / N");
    tg::track_params p = tg::presets::track(envs);
    p.seed = 14;
    const trust_tally t = check_trust_radius<Policy, stretched_track_pipeline>(p, 105u);
    CHECK(t.tracks >= envs * 9 / 10);
    CHECK(t.loose == t.tracks);
    add(t);
  }
  {
    INFO("a dog bone user track: the neck's sides 0.6 m apart, turns of 1 m and more (radius = half the separation)");
    tg::track_params p = user_track_params(2);
    p.half_width = 0.2f;  // clearance 2 * 0.2 + 0.1 = 0.5 m <= the 0.6 m waist
    const tg::user_tracks bone = centreline({dog_bone(3.0, 1.0, 0.6), dog_bone(2.0, 1.5, 0.7)});
    const trust_tally t = check_trust_radius<Policy>(p, 104u, &bone);
    CHECK(t.tracks == 2);
    CHECK(t.by_separation == 2);
    add(t);
  }
  MESSAGE(all.tracks << " valid tracks (radius set by the separation on " << all.by_separation << ", by the turns on "
                     << all.by_turn << "; " << all.loose << " with a chord beyond 1.001 L / N), " << all.probes << " probes: " << all.trusted << " trusted, " << all.beyond
                     << " beyond the radius (full search); " << all.between_trusted << " of " << all.between
                     << " off the road within the radius trusted");
  CHECK(all.tracks >= 4 * envs * 9 / 10 + 2);
  // The radius must do its job: off the road but within it, the local search is trusted
  // (the rest: a walk that met the window's edge).
  CHECK(all.between > 0);
  CHECK(all.between_trusted >= all.between * 9 / 10);
  CHECK(all.beyond > 0);
}

}  // namespace progress_test

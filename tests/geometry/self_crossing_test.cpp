// A track that crosses itself is never valid, whatever its sampling (issue 17, item 6). A
// figure-eight centreline resampled to N ~ 256 points (about 2 m between samples, half-width
// 0.3 m, c = 0.7 m) passed `validate` in some phases when clearance was tested between sample
// points only: the nearest samples across the crossing were 1.4 m apart. The clearance test is
// exact for segments now. Host backend.
#include "backend_support.hpp"
#include "reference_checker.hpp"
#include "shapes.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;
using host_course = tg::course<tg::presets::track_pipeline, tg::host_policy>;
using tg_test::pi_d;

/// Lemniscate of Bernoulli with half-width `a` [m] (x = a cos t / (1 + sin^2 t), y = a sin t
/// cos t / (1 + sin^2 t); length about 5.2441 a; it crosses itself at the origin at right
/// angles), as a closed polyline of `count` points starting at t = 2 pi `phase`.
std::vector<float3> lemniscate(double a, int count, double phase) {
  std::vector<float3> pts;
  for (int i = 0; i < count; ++i) {
    const double t = 2 * pi_d * (phase + static_cast<double>(i) / count);
    const double s = std::sin(t), c = std::cos(t), den = 1 + s * s;
    pts.push_back(float3{static_cast<float>(a * c / den), static_cast<float>(a * s * c / den), 0.0f});
  }
  return pts;
}

/// The verdict of one candidate track under the clearance test of sample pairs (before issue
/// 17) and under the segment test (now).
struct verdict {
  std::uint32_t env, attempt;
  bool random, before, now;
};
std::vector<verdict>& verdicts() {
  static std::vector<verdict> v;
  return v;
}

/// The clearance test of stages::validate before issue 17 (distances between samples only),
/// replayed on a candidate: its loop as it was.
bool sample_pairs_clear(const tg::detail::workspace& ws, const tg::track_params& p) {
  const int n = ws.num_samples;
  const int w = tg::stages::validate::window_samples(p, ws.length, n);
  const float c = 2.0f * p.half_width + p.validate.clearance_margin;
  const float inv_chord = 0.999f / (1.05f * (ws.length / static_cast<float>(n)));
  const int half = n / 2;
  for (int i = 0; i < n; ++i) {
    const int last = (n % 2 == 0) && i >= half ? half - 1 : half;
    for (int o = w + 1; o <= last;) {
      const int j = i + o < n ? i + o : i + o - n;
      const float dx = ws.position[j].x - ws.position[i].x, dy = ws.position[j].y - ws.position[i].y,
                  dz = ws.position[j].z - ws.position[i].z;
      const float d2 = dx * dx + dy * dy + dz * dz;
      if (d2 < c * c) return false;
      const float skip = (std::sqrt(d2) - c) * inv_chord;
      o += 1 + (skip < static_cast<float>(n) ? static_cast<int>(skip) : n);
    }
  }
  return true;
}

/// stages::validate, recording each candidate's verdict before issue 17 (the cheap tests and
/// the sample-pair clearance) and now (the stage's own).
struct recording_validate {
  static constexpr tg::detail::stage_role role = tg::detail::stage_role::validate;
  static constexpr std::uint32_t stage_id = tg::stages::validate::stage_id;
  template <class Ctx>
  static void run(Ctx& ctx, tg::detail::workspace& ws, const tg::track_params& p) {
    tg::stages::validate::run(ctx, ws, p);
    const bool cheap_tests_pass = (ws.fail_bits & ~tg::status::fail_clearance) == 0u;
    verdicts().push_back({ws.global_env, ws.attempt, ws.source == tg::detail::track_source::random,
                          cheap_tests_pass && sample_pairs_clear(ws, p), ws.valid});
  }
};
using recording_pipeline = tg::pipeline<tg::stages::random_polar, tg::stages::polygon_separation, tg::stages::catmull_rom,
                                        tg::stages::resample, tg::stages::frames, tg::stages::checkpoints,
                                        recording_validate>;

}  // namespace

TEST_CASE("validate's segment distance agrees with a double-precision reference (crossing, parallel, degenerate, random)") {
  using tg::stages::validate;
  auto f = [](double x, double y, double z) { return float3{static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)}; };
  auto check = [&](float3 p1, float3 q1, float3 p2, float3 q2) {
    const double ref = tg_test::segment_distance(tg_test::to_d(p1), tg_test::to_d(q1), tg_test::to_d(p2), tg_test::to_d(q2));
    const double got = std::sqrt(static_cast<double>(validate::segment_distance2(p1, q1, p2, q2)));
    const double scale = std::max({tg_test::normd(tg_test::to_d(q1) - tg_test::to_d(p1)),
                                   tg_test::normd(tg_test::to_d(q2) - tg_test::to_d(p2)), 1.0});
    CAPTURE(ref);
    CAPTURE(got);
    CHECK(std::fabs(got - ref) <= 1e-5 * scale);
  };
  check(f(-1, 0, 0), f(1, 0, 0), f(0, -1, 0), f(0, 1, 0));         // crossing: 0
  check(f(-1, 0, 0), f(1, 0, 0), f(0, -1, 0.5), f(0, 1, 0.5));     // crossing above: 0.5
  check(f(0, 0, 0), f(2, 0, 0), f(1, 0.3, 0), f(3, 0.3, 0));       // parallel, overlapping: 0.3
  check(f(0, 0, 0), f(2, 0, 0), f(3, 0.3, 0), f(5, 0.3, 0));       // parallel, apart: |(1, 0.3)|
  check(f(0, 0, 0), f(2, 0, 0), f(2, 0.3, 0), f(0, 0.3, 0));       // antiparallel
  check(f(0, 0, 0), f(2, 0, 0), f(4, 0, 0), f(6, 0, 0));           // collinear, apart: 2
  check(f(0, 0, 0), f(2, 0, 0), f(1, 0, 0), f(3, 0, 0));           // collinear, overlapping: 0
  check(f(1, 1, 1), f(1, 1, 1), f(0, 0, 0), f(2, 0, 0));           // a point and a segment
  check(f(0, 0, 0), f(2, 0, 0), f(1, 1, 0), f(1, 1, 0));           // a segment and a point
  check(f(1, 1, 1), f(1, 1, 1), f(0, 0, 0), f(0, 0, 0));           // two points
  check(f(0, 0, 0), f(1, 0, 0), f(0.5, 0.2, 0), f(1.5, 0.2001, 0)); // nearly parallel
  std::uint64_t state = 12345;
  auto uniform = [&state] {  // xorshift64*, in [-1, 1)
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<double>((state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
  };
  for (int k = 0; k < 20000; ++k) {
    const double sc = k % 2 == 0 ? 3.0 : 0.3;
    const float3 p1 = f(sc * uniform(), sc * uniform(), k % 3 == 0 ? 0.0 : sc * uniform());
    const float3 q1 = f(sc * uniform(), sc * uniform(), k % 3 == 0 ? 0.0 : sc * uniform());
    const float3 p2 = f(sc * uniform(), sc * uniform(), k % 3 == 0 ? 0.0 : sc * uniform());
    const float3 q2 = f(sc * uniform(), sc * uniform(), k % 3 == 0 ? 0.0 : sc * uniform());
    check(p1, q1, p2, q2);
  }
}

TEST_CASE("segment clearance changes the verdict of few random tracks of the track preset, and only to invalid") {
  // 2000 envs of the `track` preset on the host, every candidate judged both ways. A pair of
  // segments can be closer than any pair of their endpoints, so a few candidates that passed
  // the sample-pair test fail now (and their env takes a later attempt); none can go the other
  // way, since every sample pair the old test checked is an endpoint pair the new one checks.
  verdicts().clear();
  const int num_envs = tg_test::scaled(2000, 10, 100);
  tg::track_params p = tg::presets::track(num_envs);
  p.seed = 2024;
  tg::course<recording_pipeline, tg::host_policy> course(p, 0.6f);
  const tg::track_snapshot s = course.copy_tracks({});
  int candidates = 0, to_invalid = 0, to_valid = 0;
  std::map<std::uint32_t, std::uint32_t> first_before, first_now;  // env -> first valid attempt
  for (const verdict& v : verdicts()) {
    if (!v.random) continue;
    ++candidates;
    to_invalid += v.before && !v.now;
    to_valid += !v.before && v.now;
    if (v.before && first_before.count(v.env) == 0) first_before[v.env] = v.attempt;
    if (v.now && first_now.count(v.env) == 0) first_now[v.env] = v.attempt;
  }
  // An env's track changed when the attempt it accepts changed (or it fell back to the ellipse).
  int envs_changed = 0, envs_fallback_now = 0;
  for (int e = 0; e < num_envs; ++e) {
    const std::uint32_t env = static_cast<std::uint32_t>(e);
    const bool had = first_before.count(env) != 0, has = first_now.count(env) != 0;
    if (had != has || (had && first_before[env] != first_now[env])) ++envs_changed;
    if (had && !has) ++envs_fallback_now;
  }
  MESSAGE(num_envs << " envs, " << candidates << " random candidates: " << to_invalid
                   << " valid by sample pairs but not by segments, " << to_valid << " the other way; " << envs_changed
                   << " envs accept another attempt than before (" << envs_fallback_now << " of them the fallback)");
  CHECK(to_valid == 0);
  CHECK(envs_changed * 50 <= num_envs);  // at most 2 %
  // Every accepted track passes the independent checker's segment clearance.
  const tg_test::track_limits lim = tg_test::track_limits::from(p, 0.6f, course.max_gates());
  int failures = 0;
  for (int e = 0; e < num_envs; ++e) {
    if ((s.status[static_cast<std::size_t>(e)] & tg::status::valid) == 0u) continue;
    const tg_test::track_measure m = tg_test::measure(s, e, lim, 1 + 1e-3);
    tg_test::problem_list pl(e);
    tg_test::check_valid_track(lim, m, tg_test::check_tolerances{}, pl);
    for (const std::string& line : pl.lines())
      if (failures++ < 10) MESSAGE(line);
  }
  CHECK(failures == 0);
}

TEST_CASE("a self-crossing centreline (lemniscate) is rejected at every N from 240 to 270 and every phase") {
  // a = 98 m: L ~ 514 m, so N = 240..270 puts samples 1.9 to 2.1 m apart, the sampling at which
  // the nearest samples across the crossing can be farther apart than c = 0.7 m.
  const std::vector<double> phases = {0.0, 0.013, 0.07, 0.125, 0.2, 0.25, 0.31, 0.4, 0.5, 0.62, 0.75, 0.9};
  tg::user_tracks tracks;
  tracks.type = tg::user_tracks::kind::centreline;
  for (const double phase : phases) tracks.tracks.push_back(lemniscate(98.0, 4000, phase));
  int cases = 0, rejected = 0;
  for (int n = 240; n <= 270; ++n) {
    tg::track_params p = tg::presets::track(static_cast<int>(phases.size()));
    p.num_samples = n;
    p.validate.length_max = 600.0f;
    host_course course(p, 1.0f, tracks);
    const tg::track_snapshot s = course.copy_tracks({});
    for (std::size_t e = 0; e < phases.size(); ++e) {
      CAPTURE(n);
      CAPTURE(phases[e]);
      const std::uint32_t st = s.status[e];
      ++cases;
      CHECK((st & tg::status::user_track) != 0u);
      // Everything but the clearance passes: the crossing is what rejects it.
      CHECK((st & (tg::status::fail_length | tg::status::fail_curvature | tg::status::fail_spacing |
                   tg::status::fail_not_finite)) == 0u);
      CHECK((st & tg::status::valid) == 0u);
      CHECK((st & tg::status::fail_clearance) != 0u);
      if ((st & tg::status::valid) == 0u) ++rejected;
      // The independent checker agrees: two far-apart segments meet.
      const tg_test::track_measure m =
          tg_test::measure(s, static_cast<int>(e), tg_test::track_limits::from(p, 1.0f, course.max_gates()));
      CHECK(m.min_far_segment_distance < 1e-3);
    }
  }
  MESSAGE(rejected << " of " << cases << " (N, phase) cases rejected");
}

TEST_CASE("the same figure-eight opened into a loop that does not cross itself stays valid") {
  // Control of the test above: an ellipse of about the same length and sampling passes, so the
  // rejection above is the crossing's, not the sampling's or the size's.
  tg::user_tracks tracks;
  tracks.type = tg::user_tracks::kind::centreline;
  std::vector<float3> ellipse;
  for (int i = 0; i < 4000; ++i) {
    const double t = 2 * pi_d * i / 4000.0;
    ellipse.push_back(float3{static_cast<float>(98 * std::cos(t)), static_cast<float>(60 * std::sin(t)), 0.0f});
  }
  tracks.tracks.push_back(ellipse);
  for (const int n : {240, 256, 257, 258, 270}) {
    CAPTURE(n);
    tg::track_params p = tg::presets::track(1);
    p.num_samples = n;
    p.validate.length_max = 600.0f;
    host_course course(p, 1.0f, tracks);
    const tg::track_snapshot s = course.copy_tracks({});
    CHECK((s.status[0] & tg::status::valid) != 0u);
  }
}

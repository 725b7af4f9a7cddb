#pragma once
/// @file
/// Degenerate and bad input: user tracks with duplicated, nearly coincident or repeated closing
/// points (both kinds) give finite, uniformly spaced tracks, the same as their clean version;
/// bad user tracks and bad parameters throw std::invalid_argument naming the culprit. Templated
/// over the backend policy; instantiated in user_input_test.cpp (host) and .cu (CUDA).

#include "backend_support.hpp"
#include "reference_checker.hpp"
#include "shapes.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace tg_test {

/// One degenerate variant of a clean point list, and why it is degenerate.
struct degenerate_case {
  std::string name;
  std::vector<float3> points;
};

/// Degenerate variants that the documented cleaning (user_tracks.hpp: a repeated closing point
/// is dropped, consecutive points closer than 1e-6 of the extent are merged) maps back onto
/// `clean`.
inline std::vector<degenerate_case> degenerate_variants(const std::vector<float3>& clean) {
  std::vector<degenerate_case> out;
  // A point d from p in x and -d in y, or one float ulp where d is below float resolution
  // (1e-7 m is, at 7 m from the origin): never the same point.
  auto offset = [](float3 p, float d) {
    float3 q{p.x + d, p.y - d, p.z};
    if (q.x == p.x) q.x = std::nextafter(p.x, 1e30f);
    if (q.y == p.y) q.y = std::nextafter(p.y, -1e30f);
    return q;
  };
  {
    std::vector<float3> v;  // points 0, 3 and 7 repeated (twice, three times, twice)
    for (std::size_t i = 0; i < clean.size(); ++i) {
      v.push_back(clean[i]);
      if (i == 0 || i == 7) v.push_back(clean[i]);
      if (i == 3) v.insert(v.end(), 2, clean[i]);
    }
    out.push_back({"duplicated points", v});
  }
  {
    std::vector<float3> v;  // points 1e-7 m after points 2, 5 and 9 (far below the merge distance)
    for (std::size_t i = 0; i < clean.size(); ++i) {
      v.push_back(clean[i]);
      if (i == 2 || i == 5 || i == 9) v.push_back(offset(clean[i], 1e-7f));
    }
    out.push_back({"nearly coincident points (1e-7 m)", v});
  }
  {
    std::vector<float3> v = clean;  // a closed list: the first point again at the end
    v.push_back(clean.front());
    out.push_back({"first point repeated at the end", v});
  }
  {
    std::vector<float3> v = clean;  // closed by a point 1e-7 m from the first, then the first
    v.push_back(offset(clean.front(), 1e-7f));
    v.push_back(clean.front());
    out.push_back({"closed twice, nearly coincident", v});
  }
  {
    std::vector<float3> v;  // everything at once, the whole list repeated point by point
    for (const float3& p : clean) {
      v.push_back(p);
      v.push_back(p);
      v.push_back(offset(p, 1e-7f));
    }
    v.push_back(clean.front());
    out.push_back({"every point tripled, closed", v});
  }
  return out;
}

TEST_CASE_TEMPLATE_DEFINE("degenerate user tracks give finite, uniformly spaced tracks (both kinds)", Policy,
                          degenerate_user_tracks) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const float spacing = 1.0f;
  for (const auto type : {tg::user_tracks::kind::control_points, tg::user_tracks::kind::centreline}) {
    const bool control = type == tg::user_tracks::kind::control_points;
    CAPTURE(control);
    const std::vector<float3> clean = ellipse_points(control ? 12 : 240);
    const std::vector<degenerate_case> cases = degenerate_variants(clean);
    // One env per case, plus env 0 with the clean list, in one batch (one track per env).
    tg::user_tracks tracks;
    tracks.type = type;
    tracks.tracks.push_back(clean);
    for (const degenerate_case& c : cases) tracks.tracks.push_back(c.points);
    const int envs = static_cast<int>(tracks.tracks.size());
    tg::track_params p = tg::presets::track(envs);
    tg::course<tg::presets::track_pipeline, Policy> course(p, spacing, tracks, stream.get());
    const tg::track_snapshot s = course.copy_tracks(stream.get());
    const track_limits lim = track_limits::from(p, spacing, course.max_gates());
    check_tolerances tol;
    tol.spacing = 0.02;
    for (int e = 0; e < envs; ++e) {
      const std::string name = e == 0 ? std::string("clean") : cases[static_cast<std::size_t>(e - 1)].name;
      CAPTURE(name);
      CHECK(all_finite(s, e));
      const track_measure m = measure(s, e, lim, 1 + tol.threshold);
      problem_list pl(e);
      // A centreline is the user's polyline: its length is known exactly (the degenerate lists
      // add nothing but zero-length or 1e-7 m segments).
      tol.reference_length = control ? 0.0 : closed_length(clean);
      check_geometry(s, e, lim, m, tol, pl);
      check_valid_track(lim, m, tol, pl);  // the ellipse meets the preset's thresholds
      for (const std::string& line : pl.lines()) MESSAGE(line);
      CHECK(pl.empty());
      const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
      CHECK((st & tg::status::user_track) != 0u);
      CHECK((st & tg::status::fallback) == 0u);
      CHECK((st & tg::status::valid) != 0u);
      CHECK(tg::status::attempts(st) == 1);
      // The cleaning maps the degenerate list onto the clean one: the same track.
      CHECK(max_sample_distance(s, e, s, 0) <= 1e-6 * s.length[0]);
      CHECK(s.num_gates[static_cast<std::size_t>(e)] == s.num_gates[0]);
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("close but distinct user points (above the merge distance) stay finite", Policy,
                          close_user_points) {
  // Points 1e-4 m apart on a 14 m track are 7x the merge distance (1e-6 of the extent): they
  // are kept. A centreline takes the 1e-4 m segment as is: the full geometry contract holds.
  // Control points: the centripetal spline makes a ~1 cm loop between the two points, smaller
  // than a sample interval, which sampled validation cannot see (reported to the lead); only
  // finiteness and the status word are checked for them here.
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  for (const auto type : {tg::user_tracks::kind::control_points, tg::user_tracks::kind::centreline}) {
    const bool control = type == tg::user_tracks::kind::control_points;
    CAPTURE(control);
    const std::vector<float3> clean = ellipse_points(control ? 12 : 240);
    std::vector<float3> pts;
    for (std::size_t i = 0; i < clean.size(); ++i) {
      pts.push_back(clean[i]);
      if (i % 4 == 1) pts.push_back(float3{clean[i].x + 1e-4f, clean[i].y, clean[i].z});
    }
    tg::user_tracks tracks;
    tracks.type = type;
    tracks.tracks.push_back(pts);
    tg::track_params p = tg::presets::track(2);  // one track shared by both envs
    const float spacing = 1.0f;
    tg::course<tg::presets::track_pipeline, Policy> course(p, spacing, tracks, stream.get());
    const tg::track_snapshot s = course.copy_tracks(stream.get());
    const track_limits lim = track_limits::from(p, spacing, course.max_gates());
    check_tolerances tol;
    tol.spacing = 0.02;
    tol.reference_length = closed_length(pts);
    for (int e = 0; e < 2; ++e) {
      CHECK(all_finite(s, e));
      const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
      CHECK((st & tg::status::user_track) != 0u);
      CHECK(tg::status::attempts(st) == 1);
      CHECK((st & tg::status::fallback) == 0u);
      if (control) continue;
      const track_measure m = measure(s, e, lim, 1 + tol.threshold);
      problem_list pl(e);
      check_geometry(s, e, lim, m, tol, pl);
      if ((st & tg::status::valid) != 0u) check_valid_track(lim, m, tol, pl);
      for (const std::string& line : pl.lines()) MESSAGE(line);
      CHECK(pl.empty());
    }
    CHECK(max_sample_distance(s, 0, s, 1) == 0.0);  // the shared track, twice
  }
}

/// Runs `make` and checks that it throws std::invalid_argument whose message holds every
/// string of `needles`.
inline void expect_invalid_argument(const std::function<void()>& make, std::initializer_list<const char*> needles) {
  bool thrown = false;
  try {
    make();
  } catch (const std::invalid_argument& err) {
    thrown = true;
    const std::string what = err.what();
    CAPTURE(what);
    for (const char* needle_text : needles) {
      const std::string needle = needle_text;
      CAPTURE(needle);
      CHECK(what.find(needle) != std::string::npos);
    }
  }
  CHECK(thrown);
}

TEST_CASE_TEMPLATE_DEFINE("bad user tracks throw std::invalid_argument naming the track", Policy, bad_user_tracks) {
  namespace tg = track_gen;
  using course_t = tg::course<tg::presets::track_pipeline, Policy>;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const tg::track_params p = tg::presets::track(4);
  const std::vector<float3> good = ellipse_points(12);
  auto make = [&](tg::user_tracks::kind type, std::vector<std::vector<float3>> lists) {
    return [&p, &stream, type, lists] {
      tg::user_tracks t;
      t.type = type;
      t.tracks = lists;
      course_t c(p, 1.0f, t, stream.get());
    };
  };
  for (const auto type : {tg::user_tracks::kind::control_points, tg::user_tracks::kind::centreline}) {
    std::vector<float3> nan_point = good;
    nan_point[3].y = std::nanf("");
    expect_invalid_argument(make(type, {nan_point}), {"user_tracks.tracks[0][3]", "not finite"});
    std::vector<float3> inf_point = good;
    inf_point[5].z = HUGE_VALF;
    expect_invalid_argument(make(type, {good, good, good, inf_point}), {"user_tracks.tracks[3][5]", "not finite"});
    // Finite, but beyond the positions step accepts (+-1e7 m: no agent could drive on it).
    std::vector<float3> far_point = good;
    far_point[2].x = 2e7f;
    expect_invalid_argument(make(type, {far_point}),
                            {"user_tracks.tracks[0][2] = (2e7,", "outside [-1e7, 1e7] m", "step position coordinates"});
    // Two distinct points, the second one repeated: too few whatever the kind (>= 3 or 4 needed).
    expect_invalid_argument(make(type, {{good[0], good[1], good[1], good[1], good[0]}}),
                            {"user_tracks.tracks[0]", "2 distinct points"});
    expect_invalid_argument(make(type, {}), {"user_tracks.tracks", "num_envs = 4", "got 0"});
    expect_invalid_argument(make(type, {good, good}), {"user_tracks.tracks", "num_envs = 4", "got 2"});
    expect_invalid_argument(make(type, {good, good, good, good, good}), {"user_tracks.tracks", "got 5"});
  }
  // Three distinct control points are too few for a closed spline (4 needed); a centreline of
  // three points is a triangle, accepted.
  const std::vector<float3> triangle = {good[0], good[4], good[8]};
  expect_invalid_argument(make(tg::user_tracks::kind::control_points, {triangle}),
                          {"user_tracks.tracks[0]", "3 distinct points", "at least 4"});
  {
    tg::user_tracks t;
    t.type = tg::user_tracks::kind::centreline;
    t.tracks = {triangle};
    tg::track_params q = p;
    q.validate.length_min = 1.0f;
    course_t c(q, 1.0f, t, stream.get());
    const tg::track_snapshot s = c.copy_tracks(stream.get());
    for (int e = 0; e < 4; ++e) CHECK(all_finite(s, e));
  }
}

TEST_CASE_TEMPLATE_DEFINE("an invalid user_tracks::kind throws std::invalid_argument naming user_tracks.type", Policy,
                          bad_user_kind) {
  // Issue 17, item 1: static_cast<user_tracks::kind>(7) was sized as a centreline (dense
  // capacity = the point count) but built as control points (count * samples_per_segment dense
  // samples): 100 points overflowed the host backend's scratch buffer, 10 were silently accepted.
  namespace tg = track_gen;
  using course_t = tg::course<tg::presets::track_pipeline, Policy>;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const tg::track_params p = tg::presets::track(2);
  for (const int count : {10, 100}) {
    for (const int raw : {7, 2, -1, 255}) {
      CAPTURE(count);
      CAPTURE(raw);
      tg::user_tracks t;
      t.type = static_cast<tg::user_tracks::kind>(raw);
      t.tracks = {ellipse_points(count)};
      expect_invalid_argument([&] { course_t c(p, 1.0f, t, stream.get()); },
                              {"user_tracks.type", std::to_string(raw).c_str(), "kind::control_points", "kind::centreline"});
    }
  }
  // The one validation maps the two valid kinds onto their sources.
  CHECK(tg::detail::user_track_source(tg::user_tracks::kind::control_points) == tg::detail::track_source::control_points);
  CHECK(tg::detail::user_track_source(tg::user_tracks::kind::centreline) == tg::detail::track_source::centreline);
}

TEST_CASE_TEMPLATE_DEFINE("bad parameters throw std::invalid_argument naming the parameter and its range", Policy,
                          bad_params) {
  namespace tg = track_gen;
  using course_t = tg::course<tg::presets::track_pipeline, Policy>;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  auto with = [&](const std::function<void(tg::track_params&)>& edit, float spacing = 0.6f) {
    return [&stream, edit, spacing] {
      tg::track_params p = tg::presets::track(4);
      edit(p);
      course_t c(p, spacing, stream.get());
    };
  };
  expect_invalid_argument(with([](tg::track_params& p) { p.num_samples = 3; }), {"num_samples", "3", "[8, 4096]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.num_samples = 5000; }), {"num_samples", "[8, 4096]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.num_envs = 0; }), {"num_envs"});
  expect_invalid_argument(with([](tg::track_params& p) { p.validate.length_max = 5.0f; }),
                          {"validate.length_max", "out of range", "[10,"});
  expect_invalid_argument(with([](tg::track_params&) {}, 0.0f), {"checkpoint_spacing", "out of range"});
  expect_invalid_argument(with([](tg::track_params&) {}, -1.0f), {"checkpoint_spacing"});
  expect_invalid_argument(with([](tg::track_params&) {}, std::nanf("")), {"checkpoint_spacing"});
  expect_invalid_argument(with([](tg::track_params& p) { p.half_width = 0.0f; }), {"half_width", "out of range"});
  expect_invalid_argument(with([](tg::track_params& p) { p.half_width = std::nanf(""); }), {"half_width"});
  expect_invalid_argument(with([](tg::track_params& p) { p.polar.control_points = 3; }), {"polar.control_points", "[4,"});
  expect_invalid_argument(with([](tg::track_params& p) { p.polar.radius_max = 1.0f; }), {"polar.radius_max", "[4.5,"});
  expect_invalid_argument(with([](tg::track_params& p) { p.polar.angle_jitter = 1.0f; }), {"polar.angle_jitter"});
  expect_invalid_argument(with([](tg::track_params& p) { p.spline.samples_per_segment = 2; }),
                          {"spline.samples_per_segment", "[4, 256]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.validate.turn_radius_min = 0.0f; }),
                          {"validate.turn_radius_min"});
  expect_invalid_argument(with([](tg::track_params& p) { p.validate.max_attempts = 0; }),
                          {"validate.max_attempts", "[1, 255]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.validate.max_attempts = 256; }),
                          {"validate.max_attempts", "[1, 255]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.polygon_separation.max_iterations = -1; }),
                          {"polygon_separation.max_iterations", "[0, 1000]"});
  expect_invalid_argument(with([](tg::track_params& p) {
                            p.num_envs = 16;
                            p.env_offset = 4294967290u;
                          }),
                          {"env_offset"});
  // Issue 17, item 8: the value is printed with enough digits to differ from the bound it
  // breaks (0.9990001 used to print as 0.999, "out of range [0, 0.999]"); shortest round-trip digits.
  expect_invalid_argument(with([](tg::track_params& p) { p.polar.angle_jitter = std::nextafter(0.999f, 1.0f); }),
                          {"track_params.polar.angle_jitter = 0.9990001 is out of range", "[0, 0.999]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.polygon_separation.smoothing = std::nextafter(0.999f, 1.0f); }),
                          {"track_params.polygon_separation.smoothing = 0.9990001 is out of range", "[0, 0.999]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.half_width = std::nextafter(1e-4f, 0.0f); }),
                          {"track_params.half_width [m] = 9.999999e-5 is out of range", "[0.0001, 1e6]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.dense_repulsive.step = std::nextafter(1.0f, 2.0f); }),
                          {"track_params.dense_repulsive.step = 1.0000001 is out of range", "[1e-6, 1]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.num_envs = (1 << 30) + 1; }),
                          {"track_params.num_envs = 1073741825 is out of range", "[1, 1073741824]"});
  expect_invalid_argument(with([](tg::track_params& p) { p.polar.radius_max = std::nextafter(p.polar.radius_min, 0.0f); }),
                          {"track_params.polar.radius_max [m] = 4.4999995 is out of range", "[4.5, 1e6]",
                           "track_params.polar.radius_min"});
  expect_invalid_argument(with([](tg::track_params&) {}, std::nextafter(1e-3f, 0.0f)),
                          {"checkpoint_spacing [m] = 0.0009999999 is out of range", "[0.001, 1e6]"});
}

}  // namespace tg_test

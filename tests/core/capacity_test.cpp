// Capacities computed in size_t and capped (issue 17, item 2): control points x
// samples_per_segment overflowed int for user tracks of 8 to 17 million distinct points (SIGSEGV
// or SIGFPE in the spline stage), and just below the overflow one track asked for a 34 GB scratch
// buffer. Every capacity now has a bound in the table of param_ranges.hpp (points per user track,
// scratch bytes per track, bytes per course) and breaking one throws std::invalid_argument naming
// the input and the bound; the presets and the documented ranges still construct.
#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;
using tg::detail::param;
using host_course = tg::course<tg::presets::track_pipeline, tg::host_policy>;

/// `n` distinct points on a serpentine raster of 1 m steps (a circle cannot hold millions of
/// points farther apart than the merge distance, 1e-6 of the extent; a raster of side < 1e6 can).
std::vector<float3> raster_points(std::size_t n) {
  const std::size_t side = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  std::vector<float3> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t row = i / side, col = i % side;
    const std::size_t x = row % 2 == 0 ? col : side - 1 - col;
    out.push_back({static_cast<float>(x), static_cast<float>(row), 0.0f});
  }
  return out;
}

/// `n` points on a circle of radius 1000 m (distinct for n up to about 3 million).
std::vector<float3> circle_points(int n) {
  std::vector<float3> out;
  for (int i = 0; i < n; ++i) {
    const double a = 2.0 * 3.14159265358979323846 * i / n;
    out.push_back({static_cast<float>(1000.0 * std::cos(a)), static_cast<float>(1000.0 * std::sin(a)), 0.0f});
  }
  return out;
}

tg::user_tracks user(tg::user_tracks::kind kind, std::vector<float3> points) {
  tg::user_tracks t;
  t.type = kind;
  t.tracks = {std::move(points)};
  return t;
}

/// generator_inputs::make's verdict (the checks and the plan, no allocation): empty when accepted.
std::string plan_verdict(const tg::track_params& p, float spacing, const tg::user_tracks* t) {
  try {
    tg::detail::generator_inputs::make(p, spacing, t, nullptr, false, static_cast<int>(tg::generator_family::polar),
                                       {&tg::detail::random_control_points, &tg::detail::random_dense_samples}, 0, 0);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

std::string bound(param id) {
  const tg::detail::param_range& r = tg::detail::range_of(id);
  return tg::detail::bound_text(r, r.max);
}

}  // namespace

TEST_CASE("user tracks of millions of points (the int overflow) throw, naming points per user track") {
  tg::track_params p = tg::presets::track(1);
  p.spline.samples_per_segment = 256;
  // 9e6 x 256 = 2.3e9 dense samples: past INT_MAX (SIGSEGV / SIGFPE before the fix).
  const tg::user_tracks t = user(tg::user_tracks::kind::control_points, raster_points(9000000));
  // Gates every 10 m: the raster's 1.35e7 m would break gates per track at 1 m, before the overflow.
  const auto make = [&] { host_course c(p, 10.0f, t, tg::host_stream{}); };
  CHECK_THROWS_WITH_AS(make(), doctest::Contains("points per user track"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(make(), doctest::Contains("9000000 distinct points; at most 16384"), std::invalid_argument);
}

TEST_CASE("a user track just below the overflow (a 34 GB scratch buffer) throws before allocating") {
  tg::track_params p = tg::presets::track(1);
  p.spline.samples_per_segment = 256;
  // 8.3e6 x 256 x 16 bytes: 34 GB of scratch for one track before the fix.
  const tg::user_tracks t = user(tg::user_tracks::kind::control_points, raster_points(8300000));
  const std::string message = plan_verdict(p, 10.0f, &t);
  CAPTURE(message);
  CHECK(message.find("user_tracks.tracks[0] has 8300000 distinct points") != std::string::npos);
  CHECK(message.find("points per user track") != std::string::npos);
}

TEST_CASE("points per user track: the bound passes the point count check, one more point fails") {
  const std::size_t max_points = static_cast<std::size_t>(tg::detail::range_of(param::user_track_points).max);
  for (const auto kind : {tg::user_tracks::kind::control_points, tg::user_tracks::kind::centreline}) {
    CAPTURE(static_cast<int>(kind));
    const tg::user_tracks at = user(kind, raster_points(max_points));
    CHECK_NOTHROW(tg::detail::sanitize(at, 1));
    const tg::user_tracks past = user(kind, raster_points(max_points + 1));
    CHECK_THROWS_WITH_AS(tg::detail::sanitize(past, 1),
                         doctest::Contains("16385 distinct points; at most 16384 are supported (points per user track"),
                         std::invalid_argument);
  }
}

TEST_CASE("scratch bytes per track: combinations past one block's shared memory throw, naming the inputs") {
  const std::string limit = "at most " + bound(param::scratch_bytes_per_track) + " scratch bytes per track";
  {  // 2000 user control points x 256 samples per segment: 8 MB of scratch for one track
    tg::track_params p = tg::presets::track(1);
    p.spline.samples_per_segment = 256;
    const tg::user_tracks t = user(tg::user_tracks::kind::control_points, circle_points(2000));
    const std::string message = plan_verdict(p, 1.0f, &t);
    CAPTURE(message);
    CHECK(message.find(limit) != std::string::npos);
    CHECK(message.find("2000 control points, 512000 dense samples") != std::string::npos);
  }
  {  // random tracks: 1024 control points x 256 samples per segment, both in range
    tg::track_params p = tg::presets::track(1);
    p.polar.control_points = 1024;
    p.spline.samples_per_segment = 256;
    const std::string message = plan_verdict(p, 1.0f, nullptr);
    CAPTURE(message);
    CHECK(message.find(limit) != std::string::npos);
    CHECK_THROWS_WITH_AS(host_course::required_bytes(p, 1.0f), doctest::Contains(limit.c_str()), std::invalid_argument);
  }
  {  // a user centreline of 16384 points (the most a track may have) with N = 4096
    tg::track_params p = tg::presets::track(1);
    p.num_samples = 4096;
    const tg::user_tracks t = user(tg::user_tracks::kind::centreline, circle_points(16384));
    CHECK(plan_verdict(p, 1.0f, &t).find(limit) != std::string::npos);
  }
}

TEST_CASE("bytes per course: a course past 1 TiB throws, naming the bound") {
  const std::string limit = "at most " + bound(param::course_bytes) + " bytes per course";
  // 2^30 envs of the track preset, and 4096 envs of 1e7 gates each (320 MB per env).
  tg::track_params many = tg::presets::track(1073741824);
  CHECK_THROWS_WITH_AS(host_course::required_bytes(many, 1.0f), doctest::Contains(limit.c_str()), std::invalid_argument);
  tg::track_params gates = tg::presets::track(4096);
  gates.validate.length_max = 1e6f;
  gates.budget.bytes_per_env = 1e12f;  // past the default budget too (tests/core/budget_test.cpp): raised
  CHECK_THROWS_WITH_AS(host_course::required_bytes(gates, 0.1f), doctest::Contains(limit.c_str()), std::invalid_argument);
}

TEST_CASE("the presets and the documented ranges still plan and construct") {
  for (const tg::track_params& p : {tg::presets::track(2), tg::presets::drone_track(2), tg::presets::long_track(2)}) {
    CHECK(plan_verdict(p, 1.0f, nullptr).empty());
    host_course c(p, 1.0f, tg::host_stream{});
    CHECK(c.num_envs() == 2);
  }
  tg::track_params p = tg::presets::track(1);
  p.polar.control_points = 1024;  // the documented example: 1024 points at 8 samples per segment
  p.spline.samples_per_segment = 8;
  CHECK(plan_verdict(p, 1.0f, nullptr).empty());
  p.polar.control_points = 12;  // the largest samples_per_segment with the preset's points
  p.spline.samples_per_segment = 256;
  CHECK(plan_verdict(p, 1.0f, nullptr).empty());
  // A user centreline of 10000 points and control points at 4 samples per segment: in range.
  tg::track_params q = tg::presets::track(1);
  const tg::user_tracks centreline = user(tg::user_tracks::kind::centreline, circle_points(10000));
  CHECK(plan_verdict(q, 1.0f, &centreline).empty());
  q.spline.samples_per_segment = 4;
  const tg::user_tracks control = user(tg::user_tracks::kind::control_points, circle_points(1000));
  CHECK(plan_verdict(q, 1.0f, &control).empty());
  // The largest courses the table allows on one GPU still plan: 2^20 envs of the track preset.
  CHECK(host_course::required_bytes(tg::presets::track(1 << 20), 1.0f) > 0);
}

#pragma once
/// @file
/// The per-sample fields of a track batch against closed forms: on a counter-clockwise circle
/// of radius R the signed curvature is +1/R and the left edge lies at R - w from the centre; on
/// a clockwise one, -1/R and R + w; the arc length of sample k is k L / N; both half-widths are
/// the parameter's. Templated over the backend; instantiated in track_fields_test.cpp (host)
/// and track_fields_test.cu (CUDA).

#include "backend_support.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cmath>
#include <vector>

namespace tg_test {

TEST_CASE_TEMPLATE_DEFINE("signed curvature, arc length, half-widths and road edges of circles", Policy, circle_fields) {
  namespace tg = track_gen;
  typename backend<Policy>::stream_holder stream;
  const double radius = 6.0;
  const float half_width = 0.3f;
  const int points = 720;
  tg::user_tracks u;
  u.type = tg::user_tracks::kind::centreline;
  for (int turn : {+1, -1}) {  // env 0 counter-clockwise, env 1 clockwise
    std::vector<float3> circle;
    for (int i = 0; i < points; ++i) {
      const double a = turn * 2.0 * 3.14159265358979323846 * i / points;
      circle.push_back(float3{static_cast<float>(radius * std::cos(a)), static_cast<float>(radius * std::sin(a)), 0.0f});
    }
    u.tracks.push_back(circle);
  }
  tg::track_params p = tg::presets::track(2);
  p.half_width = half_width;
  tg::course<tg::presets::track_pipeline, Policy> course(p, 0.6f, u, stream.get());
  const tg::track_snapshot s = course.copy_tracks(stream.get());
  const int n = s.num_samples;
  for (int e = 0; e < 2; ++e) {
    CAPTURE(e);
    const double sign = e == 0 ? 1.0 : -1.0;
    const double length = s.length[static_cast<std::size_t>(e)];
    REQUIRE((s.status[static_cast<std::size_t>(e)] & tg::status::valid) != 0u);
    CHECK(length == doctest::Approx(2 * 3.14159265358979323846 * radius).epsilon(1e-4));
    int bad_curvature = 0, bad_arc = 0, bad_edge = 0, bad_width = 0;
    for (int k = 0; k < n; ++k) {
      const std::size_t i = s.sample_index(e, k);
      // The samples lie on the chords of the polygon, so their Menger curvature is 1/R to a few
      // per cent (the reference checker compares it with the samples' own Menger curvature).
      if (std::fabs(s.curvature[i] - sign / radius) > 0.05 / radius) ++bad_curvature;
      if (std::fabs(s.arc_length[i] - k * length / n) > 1e-5 * length) ++bad_arc;
      if (s.half_widths[i].x != half_width || s.half_widths[i].y != half_width) ++bad_width;
      const double left = std::hypot(s.border_left[i].x, s.border_left[i].y);
      const double right = std::hypot(s.border_right[i].x, s.border_right[i].y);
      if (std::fabs(left - (radius - sign * half_width)) > 1e-3 || std::fabs(right - (radius + sign * half_width)) > 1e-3)
        ++bad_edge;
    }
    CHECK(bad_curvature == 0);
    CHECK(bad_arc == 0);
    CHECK(bad_width == 0);
    CHECK(bad_edge == 0);
  }
}

}  // namespace tg_test

#pragma once
// Inputs at the edges of the documented ranges of the runtime device functions, found by an
// adversarial review (third session of 2026-12-01): each case failed before its fix.
// - localize / collide_box with a window near INT_MAX: 2 window + 1 overflowed (UB), which set
//   `lost` for a point where the O(N) search is the only one;
// - track_ahead at s = 1e9: s + spacing lost the spacing to float rounding (every point equal);
// - collide_disc with a valid 1e-30 m box: du^2 + dv^2 underflowed to 0, NaN point and normal;
// - progress_delta with an infinite length returned a number, not NaN.
#include "progress_harness.hpp"

#include <track_gen/collision.hpp>
#include <track_gen/localizer.hpp>
#include <track_gen/observations.hpp>

#include <climits>
#include <cmath>
#include <vector>

namespace progress_test {

struct edge_localize_query {
  float3 p;
  int hint, window;
};
struct edge_localize_fn {
  TRACK_GEN_HD tg::localization operator()(const tg::course_ref& v, const edge_localize_query& q) const {
    return tg::localize(v.track(0), q.p, q.hint, q.window);
  }
};
struct edge_box_fn {
  TRACK_GEN_HD tg::box_contact operator()(const tg::course_ref& v, const edge_localize_query& q) const {
    return tg::collide_box(v.track(0), tg::box{q.p, float4{0.0f, 0.0f, 0.0f, 1.0f}, float2{0.2f, 0.1f}}, q.hint, q.window);
  }
};
struct edge_ahead_query {
  float s;
  float3 position;
  float yaw;
};
struct edge_ahead_points {
  float3 p[4];
};
struct edge_ahead_fn {
  TRACK_GEN_HD edge_ahead_points operator()(const tg::course_ref& v, const edge_ahead_query& q) const {
    edge_ahead_points out;
    tg::track_ahead(v.track(0), q.s, q.position, q.yaw, 4, 0.5f, out.p);
    return out;
  }
};
struct edge_disc_fn {
  TRACK_GEN_HD tg::disc_hit operator()(const tg::course_ref&, const float& scale) const {
    const tg::box tiny{float3{0.0f, 0.0f, 0.0f}, float4{0.0f, 0.0f, 0.0f, 1.0f}, float2{scale, scale}};
    return tg::collide_disc(tiny, float3{3.0f * scale, 0.5f * scale, 0.0f}, 1.0f);
  }
};
struct edge_delta_fn {
  TRACK_GEN_HD float operator()(const tg::course_ref&, const float3& q) const { return tg::progress_delta(q.x, q.y, q.z); }
};

TEST_CASE_TEMPLATE_DEFINE("runtime functions at the edges of their documented input ranges", Policy, edge_inputs) {
  const circle c{50.0};
  rig<Policy> r(user_track_params(1), 10.0f, centreline({c.polyline(400)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;

  SUBCASE("any int window: a window of N or more is the O(N) search, never lost") {
    // 0.4 m left of the road's 0.3 m half-width: the windowed search fails there.
    const float3 off = c.at(20.0, 0.4);
    const std::vector<edge_localize_query> in = {
        {off, 10, n / 2}, {off, 10, n}, {off, 10, INT_MAX}, {off, 10, INT_MAX / 2 + 1}, {off, 10, 0}};
    const std::vector<tg::localization> got = map_on_backend(r, edge_localize_fn{}, in);
    for (std::size_t i = 0; i < in.size(); ++i) {
      INFO("window " << in[i].window);
      CHECK_FALSE(got[i].lost);
      CHECK(got[i].hint == got[0].hint);
      CHECK(got[i].n == got[0].n);
    }
    const std::vector<tg::box_contact> boxes = map_on_backend(r, edge_box_fn{}, in);
    for (std::size_t i = 0; i < in.size(); ++i) {
      INFO("window " << in[i].window << " flags " << boxes[i].flags);
      CHECK((boxes[i].flags & tg::contact_flags::lost) == 0u);
      CHECK((boxes[i].flags & tg::contact_flags::out_of_bounds) != 0u);
    }
  }

  SUBCASE("track_ahead from an unwrapped s keeps its spacing: the same points as from the wrapped s") {
    const float L = t.length[0];
    const float far = 1.0e9f, wrapped = std::fmod(far, L);  // fmod is exact
    const float3 p = c.at(double(wrapped) * c.length() / L);
    const std::vector<edge_ahead_query> in = {{far, p, 0.3f}, {wrapped, p, 0.3f}, {-far, p, 0.3f},
                                              {L - std::fmod(far, L), p, 0.3f}};
    const std::vector<edge_ahead_points> got = map_on_backend(r, edge_ahead_fn{}, in);
    for (int i = 0; i < 4; ++i) {
      INFO("point " << i);
      CHECK(dist3(got[0].p[i], got[1].p[i].x, got[1].p[i].y, got[1].p[i].z) < 1e-5);
      CHECK(dist3(got[2].p[i], got[3].p[i].x, got[3].p[i].y, got[3].p[i].z) < 1e-5);
      if (i > 0) {  // 0.5 m of arc apart on a 50 m circle: a chord within 1e-3 of it
        const float3 a = got[0].p[i - 1], b = got[0].p[i];
        CHECK(std::fabs(dist3(a, b.x, b.y, b.z) - 0.5) < 1e-3);
      }
    }
  }

  SUBCASE("collide_disc on boxes down to 1e-30 m: a finite unit normal and a finite point") {
    const std::vector<float> scales = {1.0f, 1e-10f, 1e-20f, 1e-30f};
    const std::vector<tg::disc_hit> got = map_on_backend(r, edge_disc_fn{}, scales);
    for (std::size_t i = 0; i < scales.size(); ++i) {
      INFO("scale " << scales[i]);
      CHECK(std::isfinite(got[i].normal.x));
      CHECK(std::isfinite(got[i].normal.y));
      CHECK(std::fabs(std::hypot(double(got[i].normal.x), double(got[i].normal.y)) - 1.0) < 1e-5);
      CHECK(std::isfinite(got[i].point.x));
      CHECK(std::isfinite(got[i].point.y));
      // The nearest point of the box to (3, 0.5) scale is its corner side (1, 0.5) scale: normal +x.
      CHECK(got[i].normal.x > 0.999f);
      CHECK(((got[i].flags & tg::contact_flags::hit) != 0u) == (scales[i] < 0.1f));  // 1 m reaches all but the 1 m box
    }
  }

  SUBCASE("progress_delta: a length that is not finite gives NaN") {
    const std::vector<float3> in = {{1.0f, 2.0f, INFINITY}, {1.0f, 2.0f, NAN}, {1.0f, 2.0f, 10.0f}};
    const std::vector<float> got = map_on_backend(r, edge_delta_fn{}, in);
    CHECK(std::isnan(got[0]));
    CHECK(std::isnan(got[1]));
    CHECK(got[2] == 1.0f);
  }
}

}  // namespace progress_test

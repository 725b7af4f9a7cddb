#pragma once
/// @file
/// User tracks far from the origin (issue 17, item 7): a track with a point beyond 8192 m is
/// flagged `status::far_from_origin`; with `user_tracks::recentre` it is moved to a frame centred
/// on it, reported in the `origin` field, and is then the same track, bit for bit, as the one
/// given at the origin (so is the progress of an agent given in that frame). Templated over the
/// backend policy; applied in far_from_origin_test.cpp (host) and .cu (CUDA).

#include "progress_harness.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace progress_test {

/// The stadium (straights 150 m, radius 10 m) with every coordinate on the 1/128 m grid, so that
/// the same points moved by whole metres up to 131072 m stay exact in float32 (spacing 2^-7 m in
/// [65536, 131072)): the re-centred input is then the input at the origin, bit for bit.
inline std::vector<float3> grid_stadium() {
  std::vector<float3> pts = stadium{75.0, 10.0}.polyline(2000);
  for (float3& p : pts) {
    p.x = static_cast<float>(std::round(p.x * 128.0) / 128.0);
    p.y = static_cast<float>(std::round(p.y * 128.0) / 128.0);
  }
  return pts;
}

inline std::vector<float3> moved(const std::vector<float3>& pts, double dx, double dy, double dz) {
  std::vector<float3> out;
  for (const float3& p : pts) out.push_back(v3(p.x + dx, p.y + dy, p.z + dz));
  return out;
}

inline bool same_float3(float3 a, float3 b) { return std::memcmp(&a, &b, sizeof(float3)) == 0; }

TEST_CASE_TEMPLATE_DEFINE("user tracks far from the origin: flagged, or re-centred to the same track bit for bit",
                          Policy, far_from_origin) {
  const std::vector<float3> s = grid_stadium();
  {
    double c[2] = {0.0, 0.0};
    for (const float3& p : s) c[0] += p.x, c[1] += p.y;
    REQUIRE(std::fabs(c[0] / s.size()) < 0.4);  // so that the rounded centroid of s + T is T
    REQUIRE(std::fabs(c[1] / s.size()) < 0.4);
  }
  const double t0[3] = {100000.0, 100000.0, 0.0}, t1[3] = {-120000.0, 70000.0, 10.0};
  const std::vector<std::vector<float3>> far = {moved(s, t0[0], t0[1], t0[2]), moved(s, t1[0], t1[1], t1[2])};
  const tg::track_params params = user_track_params(2);
  const float spacing = 10.0f;

  rig<Policy> at_origin(params, spacing, centreline({s}));
  tg::user_tracks given = centreline(far);
  rig<Policy> as_given(params, spacing, given);
  given.recentre = true;
  rig<Policy> recentred(params, spacing, given);

  const tg::track_snapshot a = at_origin.tracks(), g = as_given.tracks(), r = recentred.tracks();
  require_valid_user_tracks(a);
  require_valid_user_tracks(g);
  require_valid_user_tracks(r);
  for (int e = 0; e < 2; ++e) {
    CAPTURE(e);
    const std::size_t u = static_cast<std::size_t>(e);
    const double* t = e == 0 ? t0 : t1;
    CHECK_FALSE(has(a.status[u], tg::status::far_from_origin));
    CHECK(has(g.status[u], tg::status::far_from_origin));
    CHECK_FALSE(has(r.status[u], tg::status::far_from_origin));
    CHECK(same_float3(a.origin[u], v3(0, 0, 0)));
    CHECK(same_float3(g.origin[u], v3(0, 0, 0)));
    CHECK(same_float3(r.origin[u], v3(t[0], t[1], t[2])));
    CHECK(r.status[u] == a.status[u]);
    CHECK(same_bits(r.length[u], a.length[u]));
    CHECK(r.num_gates[u] == a.num_gates[u]);
    // Every per-sample and per-gate array of the re-centred track is the track built at the origin.
    const std::size_t n = static_cast<std::size_t>(a.num_samples), first = u * n;
    const std::size_t gates = static_cast<std::size_t>(a.num_gates[u]), first_gate = u * a.max_gates;
#define TG_TEST_SAME(name, type, ext, doc)                                                                    \
  if (tg::detail::extent::ext != tg::detail::extent::env) {                                                 \
    const bool samples = tg::detail::extent::ext == tg::detail::extent::samples;                             \
    const std::size_t at = samples ? first : first_gate, count = samples ? n : gates;                         \
    INFO("field " #name);                                                                                   \
    CHECK(std::memcmp(r.name.data() + at, a.name.data() + at, count * sizeof(type)) == 0);                 \
  }
    TRACK_GEN_TRACK_FIELDS(TG_TEST_SAME)
#undef TG_TEST_SAME
  }

  // Agents 0.7 m left of the centreline on the straights and in the turns: positions in the
  // user's frame (double), given as floats to the course as given and, minus the origin, to the
  // re-centred one; the re-centred progress is the progress at the origin, bit for bit.
  const stadium st{75.0, 10.0};
  double worst_given = 0.0;
  for (int i = 0; i < scaled(40, 8); ++i) {
    const double arc = st.length() * (i + 0.37) / scaled(40, 8);
    const float3 local = st.at(arc, 0.7);
    for (int e = 0; e < 2; ++e) {
      const double* t = e == 0 ? t0 : t1;
      const std::size_t u = static_cast<std::size_t>(e);
      at_origin.positions[u] = local;
      as_given.positions[u] = v3(local.x + t[0], local.y + t[1], local.z + t[2]);
      recentred.positions[u] = local;  // (local + T) - origin, exact in double
    }
    at_origin.step();
    as_given.step();
    recentred.step();
    const tg::progress_snapshot pa = at_origin.progress(), pg = as_given.progress(), pr = recentred.progress();
    for (std::size_t u = 0; u < 2; ++u) {
      CAPTURE(i);
      CAPTURE(u);
      CHECK(same_bits(pr.lateral[u], pa.lateral[u]));
      CHECK(same_bits(pr.lap_progress[u], pa.lap_progress[u]));
      CHECK(pr.flags[u] == pa.flags[u]);
      worst_given = std::fmax(worst_given, std::fabs(static_cast<double>(pg.lateral[u]) - pa.lateral[u]));
    }
  }
  // What re-centring saves (not a pass criterion: it is float32's resolution at 1e5 m).
  MESSAGE("largest lateral difference of the course left far from the origin vs at the origin: " << worst_given
          << " m; re-centred: 0");
}

TEST_CASE_TEMPLATE_DEFINE("far_from_origin is set from 8192 m on, and recentre rounds the mean to whole metres",
                          Policy, far_threshold) {
  // The stadium reaches x = 85 m: moved by 8100 - 85 its largest coordinate is 8100 m (no flag),
  // by 8300 - 85 it is 8300 m (flag); the third track lies at -8300 m in y.
  const std::vector<float3> s = grid_stadium();
  tg::user_tracks tracks = centreline({moved(s, 8015, 0, 0), moved(s, 8215, 0, 0), moved(s, 0, -8290, 0)});
  rig<Policy> plain(user_track_params(3), 10.0f, tracks);
  const tg::track_snapshot t = plain.tracks();
  require_valid_user_tracks(t);
  CHECK_FALSE(has(t.status[0], tg::status::far_from_origin));
  CHECK(has(t.status[1], tg::status::far_from_origin));
  CHECK(has(t.status[2], tg::status::far_from_origin));

  // Mean (1e5 + 0.6, -2.4, 0.5) of a square: the origin is (100001, -2, 1), the nearest whole
  // metres (std::round: halves away from zero).
  tg::user_tracks square;
  square.type = tg::user_tracks::kind::control_points;
  square.recentre = true;
  const double cx = 100000.6, cy = -2.4;
  square.tracks = {{v3(cx - 20, cy - 20, 0.5), v3(cx + 20, cy - 20, 0.5), v3(cx + 20, cy + 20, 0.5), v3(cx - 20, cy + 20, 0.5)}};
  tg::track_params p = user_track_params(1);
  p.validate.length_min = 1.0f;
  rig<Policy> sq(p, 10.0f, square);
  const tg::track_snapshot q = sq.tracks();
  CHECK(same_float3(q.origin[0], v3(100001.0, -2.0, 1.0)));
  CHECK_FALSE(has(q.status[0], tg::status::far_from_origin));

  // A mean in (-0.5, 0) rounds to -0.0; the origin reported is +0, bit for bit, as without
  // recentre (found by a fresh tester: origin (0, -0, -0)).
  tg::user_tracks near = centreline({moved(s, 0.25, -0.25, -0.125)});
  const tg::track_snapshot plain_near = rig<Policy>(user_track_params(1), 10.0f, near).tracks();
  near.recentre = true;
  const tg::track_snapshot re_near = rig<Policy>(user_track_params(1), 10.0f, near).tracks();
  CHECK(same_float3(re_near.origin[0], v3(0, 0, 0)));
  CHECK(same_float3(plain_near.origin[0], v3(0, 0, 0)));
  CHECK(std::memcmp(re_near.position.data(), plain_near.position.data(), re_near.position.size() * sizeof(float3)) == 0);
}

}  // namespace progress_test

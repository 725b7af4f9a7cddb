#pragma once
/// @file
/// track_ahead, progress_delta and distance_to_gate (observations.hpp) against independent
/// references: the centreline ahead computed directly in double (the sample polygon at each arc
/// length, moved and rotated into the agent's frame) on a circle, a stadium and generated
/// tracks, including wrapping past the start line, several laps ahead and looking behind; on the
/// circle, the closed form of the points ahead of an agent on the centreline; progress_delta
/// across the start line both ways against a hand-written table and a double reference; gate
/// distances against the circle's geometry and the stored gate centres. Every function runs on
/// the backend (map_on_backend). Templated over the backend policy; applied in
/// observations_test.cpp (host) and .cu (CUDA).

#include "progress_harness.hpp"

#include <track_gen/observations.hpp>

#include <cmath>
#include <vector>

namespace progress_test {

constexpr int max_ahead = 16;

struct ahead_query {
  int env;
  float s;
  float3 position;
  float yaw;
  int count;
  float spacing;
};
struct ahead_points {
  float3 p[max_ahead];
};
/// track_ahead into points pre-filled with a canary, (-999, -999, -999): it must not write
/// past the count asked for.
struct ahead_fn {
  TRACK_GEN_HD ahead_points operator()(const tg::course_ref& v, const ahead_query& q) const {
    ahead_points r;
    for (int i = 0; i < max_ahead; ++i) r.p[i] = tg::detail::f3(-999.0f, -999.0f, -999.0f);
    tg::track_ahead(v.track(q.env), q.s, q.position, q.yaw, q.count, q.spacing, r.p);
    return r;
  }
};

struct delta_query {
  float prev, now, length;
};
struct delta_fn {
  TRACK_GEN_HD float operator()(const tg::course_ref&, const delta_query& q) const {
    return tg::progress_delta(q.prev, q.now, q.length);
  }
};

struct gate_query {
  int env, gate;
  float3 p;
};
struct gate_distance_fn {
  TRACK_GEN_HD float operator()(const tg::course_ref& v, const gate_query& q) const {
    return tg::distance_to_gate(v.track(q.env), q.gate, q.p);
  }
};

/// Checks track_ahead for `queries` on the rig's backend against the direct computation in
/// double: point i = the polygon at s + spacing (i + 1), minus the position, rotated by -yaw.
template <class Policy>
void check_track_ahead(rig<Policy>& r, const tg::track_snapshot& t, const std::vector<ahead_query>& queries) {
  const std::vector<ahead_points> got = map_on_backend(r, ahead_fn{}, queries);
  for (std::size_t u = 0; u < queries.size(); ++u) {
    const ahead_query& q = queries[u];
    const double length = t.length[static_cast<std::size_t>(q.env)];
    const double c = std::cos(double(q.yaw)), sn = std::sin(double(q.yaw));
    for (int i = 0; i < max_ahead; ++i) {
      const float3 g = got[u].p[i];
      INFO("env " << q.env << " query " << u << " s " << q.s << " yaw " << q.yaw << " spacing " << q.spacing
                  << " point " << i << " of " << q.count << ": (" << g.x << ", " << g.y << ", " << g.z << ")");
      if (i >= q.count) {
        CHECK(dist3(g, -999.0, -999.0, -999.0) == 0.0);
        continue;
      }
      const double ahead = double(q.s) + double(q.spacing) * (i + 1);
      const polygon_point w = polygon_at(t, q.env, ahead);
      const double dx = w.x - q.position.x, dy = w.y - q.position.y, dz = w.z - q.position.z;
      const double x = c * dx + sn * dy, y = -sn * dx + c * dy;
      // Float: the arc length s + spacing (i + 1) and the stored L carry ~6e-8 relative each.
      const double tol = 1e-4 + 3e-7 * (std::fabs(ahead) + length) + 1e-6 * std::sqrt(dx * dx + dy * dy);
      CHECK(dist3(g, x, y, dz) < tol);
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("track_ahead: the centreline ahead in the agent's frame, circle and stadium", Policy,
                          observations_track_ahead_known) {
  const circle c{50.0};
  const stadium st{75.0, 10.0};
  rig<Policy> r(user_track_params(2), 10.0f, centreline({c.polyline(2000), st.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;

  // Agents anywhere near the road at any yaw; spacings that stay within a lap, wrap past the
  // start line several times (16 x 70 m on 314 m / 363 m loops), or look behind (negative).
  lcg rng{31u};
  std::vector<ahead_query> queries;
  const float spacings[] = {0.5f, 2.0f, 7.3f, 70.0f, -1.5f};
  for (int e = 0; e < 2; ++e) {
    const double length = e == 0 ? c.length() : st.length();
    for (int i = 0; i < scaled(60, 10); ++i) {
      const double s = rng.next() * length;
      const float3 p = e == 0 ? c.at(s, (rng.next() - 0.5) * 0.8, 0.3) : st.at(s, (rng.next() - 0.5) * 0.8, 0.3);
      const float yaw = static_cast<float>((rng.next() - 0.5) * 4.0 * pi);
      const int count = i % 4 == 0 ? max_ahead : 1 + i % max_ahead;
      queries.push_back({e, static_cast<float>(s), p, yaw, count, spacings[i % 5]});
    }
  }
  queries.push_back({0, static_cast<float>(c.length() - 0.5), c.at(c.length() - 0.5), 0.0f, 0, 1.0f});  // K = 0
  check_track_ahead(r, t, queries);

  // The closed form on the circle: an agent on the centreline at s facing the direction of
  // travel sees the point an arc a ahead at (R sin(a / R), R (1 - cos(a / R)), 0): ahead and
  // to the LEFT (y > 0) on a counter-clockwise loop. Across the start line too.
  std::vector<ahead_query> on_line;
  const double R = c.r, length = t.length[0];
  for (double s : {0.0, 100.0, length - 3.0, length - 0.01}) {
    const float3 p = c.at(s * c.length() / length);
    const float yaw = static_cast<float>(wrap_angle(s * c.length() / length / R + pi / 2));
    on_line.push_back({0, static_cast<float>(s), p, yaw, max_ahead, 2.5f});
  }
  const std::vector<ahead_points> got = map_on_backend(r, ahead_fn{}, on_line);
  for (std::size_t u = 0; u < on_line.size(); ++u) {
    for (int i = 0; i < max_ahead; ++i) {
      const double a = 2.5 * (i + 1) * c.length() / length;
      const float3 g = got[u].p[i];
      INFO("s " << on_line[u].s << " point " << i << ": (" << g.x << ", " << g.y << ", " << g.z << ")");
      CHECK(dist3(g, R * std::sin(a / R), R * (1.0 - std::cos(a / R)), 0.0) < sagitta(c.length() / n, R) + 2e-3);
      CHECK(g.y > 0.0f);
    }
  }
}

TEST_CASE_TEMPLATE_DEFINE("track_ahead on generated tracks against the direct computation in double", Policy,
                          observations_track_ahead_generated) {
  const int num_envs = 3;
  tg::track_params params = tg::presets::drone_track(num_envs);
  params.seed = 5;
  rig<Policy> r(params, 0.6f);
  const tg::track_snapshot t = r.tracks();
  lcg rng{77u};
  std::vector<ahead_query> queries;
  for (int e = 0; e < num_envs; ++e) {
    REQUIRE(has(t.status[static_cast<std::size_t>(e)], tg::status::valid));
    const double length = t.length[static_cast<std::size_t>(e)];
    for (int i = 0; i < scaled(60, 10); ++i) {
      const double s = rng.next() * length;
      const polygon_point w = polygon_at(t, e, s);
      const float3 p = v3(w.x + 0.2 * w.nx, w.y + 0.2 * w.ny, w.z + 0.4);
      const float yaw = static_cast<float>(std::atan2(w.ty, w.tx) + (rng.next() - 0.5));
      queries.push_back({e, static_cast<float>(s), p, yaw, max_ahead, static_cast<float>(length / 5.0)});
    }
  }
  check_track_ahead(r, t, queries);
}

TEST_CASE_TEMPLATE_DEFINE("progress_delta: shortest signed difference modulo L, across the start line both ways",
                          Policy, observations_progress_delta) {
  rig<Policy> r(user_track_params(1), 10.0f, centreline({circle{50.0}.polyline(400)}));
  const float L = 314.0f;
  struct row {
    float prev, now, length;
    double want;
  };
  // Hand-derived.
  const std::vector<row> table = {
      {10.0f, 12.0f, L, 2.0},           // forwards
      {12.0f, 10.0f, L, -2.0},          // backwards
      {L - 1.0f, 0.5f, L, 1.5},         // forwards over the start line
      {0.5f, L - 1.0f, L, -1.5},        // backwards over it
      {0.0f, L / 2, L, L / 2},          // half a lap: +L/2 (the interval is (-L/2, L/2])
      {L / 2, 0.0f, L, L / 2},          // the other way: -L/2 is +L/2
      {0.0f, 0.0f, L, 0.0},             // standing
      {3.0f * L + 1.0f, 2.0f, L, 1.0},  // inputs outside [0, L): unwrapped arc lengths work too
      {-1.0f, 1.0f, L, 2.0},
      {1.0f, -1.0f, L, -2.0},
      {100.0f, 300.0f, L, -114.0},      // farther than L/2 forwards is nearer backwards
  };
  std::vector<delta_query> in;
  for (const row& q : table) in.push_back({q.prev, q.now, q.length});
  lcg rng{8u};
  for (int i = 0; i < scaled(2000, 200); ++i) {
    const float length = static_cast<float>(10.0 + rng.next() * 1000.0);
    in.push_back({static_cast<float>(rng.next() * length), static_cast<float>(rng.next() * length), length});
  }
  in.push_back({1.0f, 2.0f, 0.0f});   // not a loop: NaN
  in.push_back({NAN, 2.0f, L});       // NaN in: NaN out
  const std::vector<float> got = map_on_backend(r, delta_fn{}, in);
  for (std::size_t i = 0; i + 2 < in.size(); ++i) {
    const delta_query& q = in[i];
    const double length = q.length;
    double want;
    if (i < table.size()) {
      want = table[i].want;
    } else {
      want = std::remainder(double(q.now) - double(q.prev), length);
      if (want <= -length / 2) want += length;
    }
    INFO("progress_delta(" << q.prev << ", " << q.now << ", " << q.length << ") = " << got[i] << ", want " << want);
    CHECK(got[i] > -q.length / 2);
    CHECK(got[i] <= q.length / 2);
    CHECK(std::fabs(got[i] - want) < 1e-6 * length + 1e-6);
  }
  CHECK(got[4] == L / 2);
  CHECK(got[5] == L / 2);
  CHECK(std::isnan(got[in.size() - 2]));
  CHECK(std::isnan(got[in.size() - 1]));
}

TEST_CASE_TEMPLATE_DEFINE("distance_to_gate: the circle's gate centres and the stored ones", Policy,
                          observations_distance_to_gate) {
  const circle c{50.0};
  rig<Policy> r(user_track_params(1), 10.0f, centreline({c.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int gates = t.num_gates[0];
  REQUIRE(gates == 31);  // floor(2 pi 50 / 10)
  lcg rng{3u};
  std::vector<gate_query> in;
  for (int i = 0; i < scaled(400, 40); ++i) {
    const int g = i % gates;
    in.push_back({0, g, v3((rng.next() - 0.5) * 140.0, (rng.next() - 0.5) * 140.0, (rng.next() - 0.5) * 4.0)});
  }
  const std::vector<float> got = map_on_backend(r, gate_distance_fn{}, in);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const gate_query& q = in[i];
    const float3 centre = t.gate_centre[t.gate_index(0, q.gate)];
    // Gate g sits at arc g L / G: on the circle, the angle 2 pi g / G.
    const double a = 2.0 * pi * q.gate / gates;
    const double exact = dist3(q.p, c.r * std::cos(a), c.r * std::sin(a), 0.0);
    INFO("gate " << q.gate << " point (" << q.p.x << ", " << q.p.y << ", " << q.p.z << "): " << got[i] << ", circle "
                 << exact);
    CHECK(std::fabs(got[i] - dist3(q.p, centre.x, centre.y, centre.z)) < 1e-5 * (1.0 + got[i]));
    CHECK(std::fabs(got[i] - exact) < sagitta(c.length() / t.num_samples, c.r) + 1e-2);
  }
}

}  // namespace progress_test

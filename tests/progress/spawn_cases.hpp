#pragma once
/// @file
/// spawn_pose, gates_after and progress_tracker_ref::spawn (spawn.hpp, through course_ref::spawn)
/// against an independent model: an agent spawned at arc length s0 then driven forwards with the
/// library's own step must pass the gates ahead of s0 in order, and its first lap must count at
/// the first gate crossing at or after a full circuit from s0 (s0 + L), once, then every G gates.
/// The model lists every gate instance (gate g at a_g + k L) beyond s0 and counts them; it
/// knows nothing of the tracker's countdown. On a circle (user track: spawns at the start line,
/// between gates, exactly on a gate, 1 cm before and after a gate, just before the line, with
/// lateral offsets, at arc lengths outside [0, L)) and on generated tracks. Also: the pose
/// against the circle's geometry, the state right after a spawn, a non-finite arc length.
/// Templated over the backend policy; applied in spawn_test.cpp (host) and .cu (CUDA).

#include "progress_harness.hpp"

#include <track_gen/spawn.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace progress_test {

struct spawn_query {
  int env;
  float s, lateral;
};
/// Spawns env q.env (course_ref::spawn) and returns the pose to put its agent at.
struct spawn_fn {
  TRACK_GEN_HD tg::track_pose operator()(const tg::course_ref& v, const spawn_query& q) const {
    v.spawn(q.env, q.s, q.lateral);
    return tg::spawn_pose(v.track(q.env), q.s, q.lateral);
  }
};
/// Resets env e (course_ref::reset_progress).
struct reset_fn {
  TRACK_GEN_HD int operator()(const tg::course_ref& v, const int& e) const {
    v.reset_progress(e);
    return 0;
  }
};

/// The gates an agent spawned at s0 meets driving forwards (unwrapped arc lengths), from the
/// gate arc lengths alone: every instance a_g + k L strictly beyond s0 in order, and the first
/// lap at the first of them at or beyond s0 + L (no lap before a full circuit), then one every G.
struct spawn_model {
  double s0, length;
  int gates;
  std::vector<double> at;    ///< the crossings ahead, ascending [m]
  std::vector<int> gate;     ///< their gate indices
  std::size_t first_lap = 0; ///< index in `at` of the first lap

  spawn_model(const tg::track_snapshot& t, int e, double s) : s0(s), length(t.length[static_cast<std::size_t>(e)]) {
    gates = t.num_gates[static_cast<std::size_t>(e)];
    for (int k = 0; k < 4; ++k) {
      for (int g = 0; g < gates; ++g) {
        const double x = t.gate_arc_length[t.gate_index(e, g)] + k * length;
        if (x > s0) at.push_back(x), gate.push_back(g);
      }
    }
    while (first_lap < at.size() && at[first_lap] < s0 + length) ++first_lap;
  }
  /// Gates crossed by the time the agent reaches u (unwrapped, >= s0).
  int crossed(double u) const {
    return static_cast<int>(std::upper_bound(at.begin(), at.end(), u) - at.begin());
  }
  int laps(double u) const {
    const int c = crossed(u), f = static_cast<int>(first_lap);
    return c <= f ? 0 : 1 + (c - 1 - f) / gates;
  }
  int next_gate(double u) const { return gate[static_cast<std::size_t>(crossed(u))]; }
  /// Crossings until the next lap counts, that one included.
  int gates_to_lap(double u) const {
    const int c = crossed(u), f = static_cast<int>(first_lap);
    const int next_lap = c <= f ? f : f + ((c - f + gates - 1) / gates) * gates;
    return next_lap - c + 1;
  }
  /// Whether some gate lies within `margin` of u (the crossing there would be a matter of rounding).
  bool near_gate(double u, double margin) const {
    for (double x : at)
      if (std::fabs(x - u) < margin) return true;
    return false;
  }
};

/// The pose at unwrapped arc length u, `lateral` metres left: the sample polygon in double.
inline float3 polygon_pose(const tg::track_snapshot& t, int e, double u, double lateral) {
  const polygon_point w = polygon_at(t, e, u);
  return v3(w.x + lateral * w.nx, w.y + lateral * w.ny, w.z + lateral * w.nz);
}

/// Spawns the agents of `r` as `spawns` says (one per env, every env), checks the state right
/// after, then drives each forwards along its track (steps of 0.37 gate spacings, offset by its
/// lateral) through two laps and a bit with the library's step, checking each step against
/// spawn_model. Returns the poses.
template <class Policy>
std::vector<tg::track_pose> spawn_and_drive(rig<Policy>& r, const tg::track_snapshot& t,
                                            const std::vector<spawn_query>& spawns) {
  const int num_envs = r.num_envs();
  REQUIRE(static_cast<int>(spawns.size()) == num_envs);
  const std::vector<tg::track_pose> poses = map_on_backend(r, spawn_fn{}, spawns);
  std::vector<spawn_model> models;
  std::vector<double> ds, u(static_cast<std::size_t>(num_envs));
  const tg::progress_snapshot first = r.progress();
  for (int e = 0; e < num_envs; ++e) {
    const std::size_t i = static_cast<std::size_t>(e);
    const spawn_query& q = spawns[i];
    const tg::track_pose& pose = poses[i];
    const double length = t.length[i];
    models.emplace_back(t, e, pose.s);
    const spawn_model& m = models.back();
    ds.push_back(0.37 * length / m.gates);
    u[i] = pose.s;
    INFO("env " << e << " spawned at s " << q.s << " lateral " << q.lateral << " -> pose s " << pose.s << " hint "
                << pose.hint << "; expected next gate " << m.gate[0] << ", gates to the lap " << m.first_lap + 1);
    // The pose: the polygon at s (wrapped), `lateral` to the left, facing the tangent.
    CHECK(arc_distance(pose.s, wrap_arc(q.s, length), length) < 1e-4 * (1.0 + std::fabs(q.s) / length));
    const float3 want = polygon_pose(t, e, pose.s, q.lateral);
    CHECK(dist3(pose.position, want.x, want.y, want.z) < 1e-4);
    const polygon_point w = polygon_at(t, e, pose.s);
    CHECK(std::fabs(wrap_angle(pose.yaw - std::atan2(w.ty, w.tx))) < 1e-5);
    CHECK((pose.hint == w.segment || std::min(w.f, 1.0 - w.f) < 1e-4));  // (either side of a sample)
    // The state: as if the agent stood there.
    const progress_entry p = entry(first, e);
    CHECK(p.next_gate == m.gate[0]);
    CHECK(first.gates_to_lap[i] == static_cast<int>(m.first_lap) + 1);
    CHECK(p.laps == 0);
    CHECK(p.gates_passed == 0);
    CHECK(p.lap_progress == pose.s);
    CHECK(p.lateral == q.lateral);
    CHECK(p.hint == pose.hint);
    // (The same expression evaluated in two places of a kernel: FMA contraction may differ.)
    CHECK(dist3(p.last_position, pose.position.x, pose.position.y, pose.position.z) < 1e-5);
    CHECK(p.flags == tg::progress_flags::has_last);
    r.positions[i] = pose.position;
  }

  std::vector<int> lap_steps(static_cast<std::size_t>(num_envs), 0);
  for (int step = 1;; ++step) {
    REQUIRE(step < 100000);
    bool done = true;
    std::vector<double> before = u;
    for (int e = 0; e < num_envs; ++e) {
      const std::size_t i = static_cast<std::size_t>(e);
      const spawn_model& m = models[i];
      double next = u[i] + ds[i];
      while (m.near_gate(next, 0.01)) next += 0.03;  // keep every step's end 1 cm or more from a gate
      u[i] = next;
      r.positions[i] = polygon_pose(t, e, next, spawns[i].lateral);
      if (next < m.s0 + 2.0 * m.length + 2.0 * m.length / m.gates) done = false;
    }
    r.step();
    const tg::progress_snapshot snap = r.progress();
    for (int e = 0; e < num_envs; ++e) {
      const std::size_t i = static_cast<std::size_t>(e);
      const spawn_model& m = models[i];
      const progress_entry p = entry(snap, e);
      INFO("env " << e << " (spawned at s " << spawns[i].s << ") step " << step << ": from " << before[i] << " to "
                  << u[i] << " (s0 + " << u[i] - m.s0 << ", L = " << m.length << "): " << describe(p)
                  << " gates_to_lap " << snap.gates_to_lap[i]);
      CHECK(p.gates_passed == m.crossed(u[i]));
      CHECK(p.next_gate == m.next_gate(u[i]));
      CHECK(p.laps == m.laps(u[i]));
      CHECK(snap.gates_to_lap[i] == m.gates_to_lap(u[i]));
      CHECK(has(p.flags, tg::progress_flags::gate_passed) == (m.crossed(u[i]) > m.crossed(before[i])));
      CHECK(has(p.flags, tg::progress_flags::lap_completed) == (m.laps(u[i]) > m.laps(before[i])));
      CHECK_FALSE(has(p.flags, tg::progress_flags::wrong_way));
      CHECK_FALSE(has(p.flags, tg::progress_flags::off_track));
      // The statement itself, without the model: no lap before a full circuit from s0, and one
      // by the end of the first gap after it.
      if (u[i] < m.s0 + m.length) CHECK(p.laps == 0);
      if (u[i] > m.s0 + m.length + m.length / m.gates + 0.01) CHECK(p.laps >= 1);
      if (p.laps == 1 && lap_steps[i] == 0) lap_steps[i] = step;
    }
    if (done) break;
  }
  for (int e = 0; e < num_envs; ++e) CHECK(lap_steps[static_cast<std::size_t>(e)] > 0);
  return poses;
}

TEST_CASE_TEMPLATE_DEFINE("spawn on a circle: gates in order from s, the first lap after one full circuit", Policy,
                          spawn_circle) {
  const circle c{50.0};
  const int num_envs = 12;
  rig<Policy> r(user_track_params(num_envs), 10.0f, centreline({c.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  REQUIRE(t.num_gates[0] == 31);
  const float L = t.length[0];
  auto gate_arc = [&](int g) { return t.gate_arc_length[t.gate_index(0, g)]; };
  const float gap = gate_arc(1);
  const std::vector<spawn_query> spawns = {
      {0, 0.0f, 0.0f},                         // the start line: the state of a reset, with a last position
      {1, gate_arc(5) + 0.4f * gap, 0.0f},     // between two gates
      {2, gate_arc(7), 0.0f},                  // exactly on a gate
      {3, gate_arc(12) - 0.01f, 0.0f},         // 1 cm before a gate: the first step passes it
      {4, gate_arc(12) + 0.01f, 0.0f},         // 1 cm after a gate
      {5, L - 0.01f, 0.0f},                    // 1 cm before the start line: next gate 0
      {6, gate_arc(20) + 0.7f * gap, 0.2f},    // left of the centreline
      {7, gate_arc(25), -0.2f},                // on a gate, right of the centreline
      {8, -3.0f, 0.0f},                        // outside [0, L): L - 3
      {9, 2.0f * L + 5.0f, 0.0f},              // two laps on: 5
      {10, gate_arc(30) + 0.5f * gap, 0.1f},   // the last gap: next gate 0
      {11, gate_arc(1) + 1e-3f, 0.0f},         // 1 mm after gate 1
  };
  const std::vector<tg::track_pose> poses = spawn_and_drive(r, t, spawns);

  // Hand-derived facts (G = 31): the next gate and the gates to the first lap right after the
  // spawn are in spawn_and_drive's checks through the model; here the pose on the circle itself.
  for (const spawn_query& q : spawns) {
    const tg::track_pose& pose = poses[static_cast<std::size_t>(q.env)];
    const double a = wrap_arc(q.s, L) / L * 2.0 * pi;  // angle of the pose on the circle
    INFO("env " << q.env << " s " << q.s);
    CHECK(dist3(pose.position, (c.r - q.lateral) * std::cos(a), (c.r - q.lateral) * std::sin(a), 0.0) <
          sagitta(c.length() / t.num_samples, c.r) + 2e-3);
    CHECK(std::fabs(wrap_angle(pose.yaw - (a + pi / 2))) < 0.5 * c.length() / t.num_samples / c.r + 1e-3);
  }
}

TEST_CASE_TEMPLATE_DEFINE("spawn on generated tracks: between gates and on a gate, two laps each", Policy,
                          spawn_generated) {
  const int num_envs = 6;
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 13;
  rig<Policy> r(params, 0.6f);
  const tg::track_snapshot t = r.tracks();
  std::vector<spawn_query> spawns;
  lcg rng{17u};
  for (int e = 0; e < num_envs; ++e) {
    const std::size_t i = static_cast<std::size_t>(e);
    REQUIRE(has(t.status[i], tg::status::valid));
    REQUIRE(t.num_gates[i] > 3);
    const int g = static_cast<int>(rng.next() * t.num_gates[i]);
    const float arc = t.gate_arc_length[t.gate_index(e, g)];
    const float lateral = static_cast<float>((rng.next() - 0.5) * 0.3);
    // Odd envs on a gate exactly, even ones in the gap after it.
    spawns.push_back({e, e % 2 == 1 ? arc : arc + 0.5f * t.length[i] / t.num_gates[i], lateral});
  }
  spawn_and_drive(r, t, spawns);
}

TEST_CASE_TEMPLATE_DEFINE("spawn at s = 0 is a reset with a last position; reset after a spawn; non-finite s",
                          Policy, spawn_reset_and_invalid) {
  const circle c{50.0};
  rig<Policy> r(user_track_params(4), 10.0f, centreline({c.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int gates = t.num_gates[0];
  // Env 0 spawned at 0; env 1 spawned mid-lap then reset; env 2 given NaN, env 3 an infinite lateral.
  map_on_backend(r, spawn_fn{}, std::vector<spawn_query>{{0, 0.0f, 0.0f}, {1, 123.4f, 0.1f}});
  map_on_backend(r, reset_fn{}, std::vector<int>{1});
  map_on_backend(r, spawn_fn{}, std::vector<spawn_query>{{2, NAN, 0.0f}, {3, 10.0f, INFINITY}});
  const tg::progress_snapshot p = r.progress();
  const tg::track_snapshot after = r.tracks();
  for (int e = 0; e < 4; ++e) {
    const std::size_t i = static_cast<std::size_t>(e);
    const progress_entry q = entry(p, e);
    INFO("env " << e << " " << describe(q) << " gates_to_lap " << p.gates_to_lap[i]);
    CHECK(q.next_gate == 1);  // the start line's state
    CHECK(p.gates_to_lap[i] == gates);
    CHECK(q.laps == 0);
    CHECK(q.gates_passed == 0);
    CHECK(q.lap_progress == 0.0f);
    CHECK(q.lateral == 0.0f);
    CHECK(q.hint == 0);
    // Only the spawn at 0 has a last position (sample 0); a reset leaves none.
    CHECK(q.flags == (e == 0 ? tg::progress_flags::has_last : 0u));
    if (e == 0) CHECK(dist3(q.last_position, t.position[0].x, t.position[0].y, t.position[0].z) == 0.0);
    CHECK(has(after.status[i], tg::status::invalid_input) == (e >= 2));
  }
}

TEST_CASE_TEMPLATE_DEFINE("one gate: crossing the line back and forth counts nothing; a reset behind the line waits a circuit",
                          Policy, spawn_one_gate) {
  // A circle of 50 m radius (L = 314 m) with gates every 200 m: G = 1, the next gate is always
  // gate 0. Expected counts from the unwrapped distance driven alone: a lap is a full circuit
  // past the line that the agent's state says it last passed.
  const circle c{50.0};
  rig<Policy> r(user_track_params(4), 200.0f, centreline({c.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  REQUIRE(t.num_gates[0] == 1);
  const double L = t.length[0];
  // Env 0: reset (no spawn), first seen 1 m behind the line; env 1: spawned on the line, then
  // wiggles over it; env 2: reset, first seen 1 m past the line; env 3: spawned half a lap on,
  // wiggles over the line after its first crossing.
  map_on_backend(r, spawn_fn{}, std::vector<spawn_query>{{1, 0.0f, 0.0f}, {3, static_cast<float>(0.5 * L), 0.0f}});
  std::vector<double> u = {L - 1.0, L, L + 1.0, 1.5 * L};  // unwrapped, the line at multiples of L
  auto place = [&] {
    for (int e = 0; e < 4; ++e) r.positions[static_cast<std::size_t>(e)] = polygon_pose(t, e, u[static_cast<std::size_t>(e)], 0.0);
    r.step();
    return r.progress();
  };
  tg::progress_snapshot p = place();
  // The first lap of each env (unwrapped arc length of its crossing): env 0 first crosses the
  // line at L, but the reset's "gate 0 passed" is not true of an agent that was behind the line,
  // so that crossing only passes it: the lap comes at 2L (as on tracks with more gates, where
  // gate 0 is not the next gate after a reset). Env 1: a full circuit from the line, 2L. Env 2:
  // past the line after the reset, 2L. Env 3: a full circuit from 0.5 L ends at 1.5 L: 3L.
  const double first_lap[4] = {2.0 * L, 2.0 * L, 2.0 * L, 3.0 * L};
  // Keeps a position 5 cm or more from the line (a crossing there is a matter of rounding).
  auto off_line = [&](double x) { return std::fabs(x - std::round(x / L) * L) < 0.05 ? x + 0.1 : x; };
  // Env 1 and env 3 wiggle: 20 times 3 m back and 3 m forward, around u = L (env 1, on the line
  // at the start: 1 m forward first) and u = 2L (env 3, after its first crossing, which passes a
  // gate without a lap: spawned mid-lap, its first lap needs a full circuit from 0.5 L).
  int steps = 0;
  auto drive_to = [&](int e, double target) {
    while (u[static_cast<std::size_t>(e)] < target) {
      u[static_cast<std::size_t>(e)] = off_line(std::min(target, u[static_cast<std::size_t>(e)] + 0.7));
      p = place();
      ++steps;
    }
  };
  auto wiggle = [&](int e, double around) {
    for (int k = 0; k < 20; ++k) {
      u[static_cast<std::size_t>(e)] = around - 1.5;
      p = place();
      const progress_entry back = entry(p, e);
      INFO("env " << e << " wiggle " << k << " back: " << describe(back) << " gates_to_lap " << p.gates_to_lap[static_cast<std::size_t>(e)]);
      CHECK_FALSE(has(back.flags, tg::progress_flags::gate_passed));
      CHECK_FALSE(has(back.flags, tg::progress_flags::lap_completed));
      u[static_cast<std::size_t>(e)] = around + 1.5;
      p = place();
      const progress_entry fwd = entry(p, e);
      INFO("env " << e << " wiggle " << k << " forward: " << describe(fwd));
      CHECK_FALSE(has(fwd.flags, tg::progress_flags::gate_passed));
      CHECK_FALSE(has(fwd.flags, tg::progress_flags::lap_completed));
    }
  };
  u[1] = L + 1.0;
  p = place();
  wiggle(1, L);
  drive_to(3, 2.0 * L + 1.5);  // env 3's first crossing (a gate, no lap)
  {
    const progress_entry q = entry(p, 3);
    INFO(describe(q));
    CHECK(q.gates_passed == 1);
    CHECK(q.laps == 0);
  }
  wiggle(3, 2.0 * L);
  {
    const progress_entry q = entry(p, 3);
    CHECK(q.gates_passed == 1);  // the wiggles added nothing
    CHECK(q.laps == 0);
  }
  // Everyone drives on to 4L; laps counted at every crossing from first_lap on.
  for (double goal = 0.0; goal < 4.0 * L + 2.0;) {
    goal = std::min(4.0 * L + 2.0, goal + 0.7);
    for (int e = 0; e < 4; ++e) u[static_cast<std::size_t>(e)] = off_line(std::max(u[static_cast<std::size_t>(e)], goal));
    p = place();
    for (int e = 0; e < 4; ++e) {
      const double x = u[static_cast<std::size_t>(e)];
      const int laps = x < first_lap[e] ? 0 : 1 + static_cast<int>(std::floor((x - first_lap[e]) / L + 1e-9));
      const progress_entry q = entry(p, e);
      INFO("env " << e << " at u " << x << " (L = " << L << "): " << describe(q) << " gates_to_lap "
                  << p.gates_to_lap[static_cast<std::size_t>(e)]);
      CHECK(q.laps == laps);
    }
  }
  CHECK(steps > 0);
}

}  // namespace progress_test

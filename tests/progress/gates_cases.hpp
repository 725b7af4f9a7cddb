#pragma once
/// @file
/// Gate rules: no credit for cutting corners or oscillating across a gate, and the 3D opening
/// of a gate (half-width sideways, half-height vertically, forward direction only). Test bodies
/// templated over the policy; applied in gates_test.cpp and gates_test.cu.

#include "progress_harness.hpp"

namespace progress_test {

TEST_CASE_TEMPLATE_DEFINE("no credit for cutting corners, and oscillating across a gate counts it once", Policy,
                          gates_cutting_and_oscillation) {
  // Circle r = 50 m, 10 m spacing: G = 31 gates, gate g at g * 10.134 m, half-width 0.3 m.
  // Env 0 skips gate 1's opening 0.5 m to the right of the centreline (outside the circle),
  // env 1 0.5 m to the left; both then rejoin the centreline. Path, in arc length s [m]:
  //   A: s = 0..12 at the skipping offset (gate 1 at 10.13 is crossed outside its opening);
  //   B: at s = 12 step sideways onto the centreline, drive on to s = 33 through the openings
  //      of gates 2 (20.27) and 3 (30.40): they must not count, gate 1 is still next;
  //   C: drive backwards to s = 8 (behind gate 1);
  //   D: drive forwards to s = 40: gates 1, 2, 3 now count, in order;
  //   E: oscillate across gate 4 (40.54): s = 41, 40, 41, 40, ...: it counts once;
  //   F: drive on to s = 52: gate 5 (50.67) counts.
  const circle c{50.0};
  const double length = c.length();
  const int gates = 31;
  rig<Policy> r(user_track_params(2), 10.0f, centreline({c.polyline(2000)}));
  {
    const tg::track_snapshot t = r.tracks();
    require_valid_user_tracks(t);
    REQUIRE(t.num_gates[0] == gates);
  }
  struct waypoint {
    double s, left;  // left: offset of env 1; env 0 uses -left
    char phase;
  };
  std::vector<waypoint> path;
  for (int s = 0; s <= 12; ++s) path.push_back({double(s), 0.5, 'A'});
  for (int s = 12; s <= 33; ++s) path.push_back({double(s), 0.0, 'B'});
  for (int s = 32; s >= 8; --s) path.push_back({double(s), 0.0, 'C'});
  for (int s = 9; s <= 40; ++s) path.push_back({double(s), 0.0, 'D'});
  for (int k = 0; k < 10; ++k) path.push_back({k % 2 == 0 ? 41.0 : 40.0, 0.0, 'E'});
  for (int s = 41; s <= 52; ++s) path.push_back({double(s), 0.0, 'F'});

  arc_gate_model model[2] = {{length, gates, 0.3}, {length, gates, 0.3}};
  int gate4_events = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const waypoint w = path[i];
    r.positions[0] = c.at(w.s, -w.left);
    r.positions[1] = c.at(w.s, w.left);
    r.step();
    const tg::progress_snapshot snap = r.progress();
    for (int e = 0; e < 2; ++e) {
      const double left = e == 0 ? -w.left : w.left;
      const arc_gate_model::events ev = model[e].step(w.s, left);
      const progress_entry p = entry(snap, e);
      INFO("step " << i << " phase " << w.phase << " env " << e << " s = " << w.s << " left = " << left << " "
                   << describe(p));
      REQUIRE_FALSE(ev.ambiguous);
      CHECK(p.gates_passed == model[e].gates_passed);
      CHECK(p.next_gate == model[e].next_gate);
      CHECK(p.laps == 0);
      CHECK(has(p.flags, tg::progress_flags::gate_passed) == (ev.passed > 0));
      CHECK(has(p.flags, tg::progress_flags::off_track) == (std::fabs(left) > 0.3));

      // Hand-derived expectations per phase (independent of the model).
      if (w.phase == 'A' || w.phase == 'B' || w.phase == 'C') {
        CHECK(p.gates_passed == 0);
        CHECK(p.next_gate == 1);
      }
      if (w.phase == 'D') CHECK(p.gates_passed == (w.s >= 31 ? 3 : w.s >= 21 ? 2 : w.s >= 11 ? 1 : 0));
      if (w.phase == 'E') {
        CHECK(p.gates_passed == 4);
        CHECK(p.next_gate == 5);
        if (e == 0 && has(p.flags, tg::progress_flags::gate_passed)) ++gate4_events;
      }
      if (w.phase == 'F') CHECK(p.gates_passed == (w.s >= 51 ? 5 : 4));
    }
  }
  CHECK(gate4_events == 1);  // the first forward crossing only
  const tg::progress_snapshot end = r.progress();
  CHECK(end.gates_passed[0] == 5);
  CHECK(end.gates_passed[1] == 5);
  CHECK(end.next_gate[0] == 6);
}

TEST_CASE_TEMPLATE_DEFINE("crosses_gate: the opening is a rectangle in the gate plane, crossed forwards", Policy,
                          gates_crosses_gate_direct) {
  // Hand-built gates; the expected answers follow from the definition: the segment must go
  // from the negative to the non-negative side of the plane through `centre` with normal
  // `normal`, and the crossing point must lie within half_width along the horizontal left axis
  // and within half_height along the axis normal x left.
  rig<Policy> r(user_track_params(1), 10.0f, centreline({circle{50.0}.polyline(400)}));
  const tg::gate flat{v3(2, 3, 1), v3(1, 0, 0), 0.3f, 0.0f};  // left = +y, up = +z
  const double inv = 1.0 / std::sqrt(2.0);
  const tg::gate diagonal{v3(0, 0, 0), v3(inv, inv, 0), 0.5f, 0.0f};  // left = (-1, 1, 0)/sqrt2
  const tg::gate climbing{v3(0, 0, 0), v3(0.8, 0, 0.6), 0.3f, 0.0f};  // left = +y, up = (-0.6, 0, 0.8)
  struct probe {
    tg::gate g;
    float3 a, b;
    float half_height;
    bool expected;
    const char* what;
  };
  const std::vector<probe> probes = {
      {flat, v3(1, 3, 1), v3(3, 3, 1), 1.0f, true, "straight through the centre"},
      {flat, v3(3, 3, 1), v3(1, 3, 1), 1.0f, false, "backwards through the centre"},
      {flat, v3(-18, 3, 1), v3(22, 3, 1), 1.0f, true, "20 m before to 20 m after"},
      {flat, v3(1, 3, 3), v3(3, 3, 3), 1.0f, false, "2 m above"},
      {flat, v3(1, 3, -1), v3(3, 3, -1), 1.0f, false, "2 m below"},
      {flat, v3(1, 3, 1.9), v3(3, 3, 1.9), 1.0f, true, "0.9 m above, inside"},
      {flat, v3(1, 3, 1.9), v3(3, 3, 1.9), 0.8f, false, "0.9 m above a 0.8 m half-height"},
      {flat, v3(1, 3.25, 1), v3(3, 3.25, 1), 1.0f, true, "0.25 m left, inside"},
      {flat, v3(1, 2.6, 1), v3(3, 2.6, 1), 1.0f, false, "0.4 m right, outside"},
      {flat, v3(1, 2.5, 1), v3(3, 3.5, 1), 1.0f, true, "slanted: endpoints outside, crossing at the centre"},
      {flat, v3(1, 3, -0.5), v3(3, 3, 2.5), 1.0f, true, "climbing: crossing at z = 1"},
      {flat, v3(1, 3, 1.5), v3(3, 3, 4.5), 1.0f, false, "climbing: crossing at z = 3"},
      {flat, v3(1, 3, 1), v3(2, 3, 1), 1.0f, true, "ending on the plane (non-negative side)"},
      {flat, v3(2, 3, 1), v3(3, 3, 1), 1.0f, false, "starting on the plane"},
      {flat, v3(0, 3, 1), v3(1.5, 3, 1), 1.0f, false, "stopping short of the plane"},
      {flat, v3(2.5, 3, 1), v3(4, 3, 1), 1.0f, false, "entirely beyond the plane"},
      {flat, v3(1, 3, 1), v3(1, 3, 1), 1.0f, false, "not moving"},
      {diagonal, v3(-1, -1, 0), v3(1, 1, 0), 1.0f, true, "diagonal gate, along its normal"},
      {diagonal, v3(-1.3, -0.7, 0), v3(0.7, 1.3, 0), 1.0f, true, "diagonal gate, 0.42 m left"},
      {diagonal, v3(-1.5, -0.5, 0), v3(0.5, 1.5, 0), 1.0f, false, "diagonal gate, 0.71 m left"},
      {diagonal, v3(1, 1, 0), v3(-1, -1, 0), 1.0f, false, "diagonal gate, backwards"},
      {climbing, v3(-0.8 - 0.54, 0, -0.6 + 0.72), v3(0.8 - 0.54, 0, 0.6 + 0.72), 1.0f, true,
       "climbing gate, 0.9 m up its own vertical axis"},
      {climbing, v3(-0.8 - 0.66, 0, -0.6 + 0.88), v3(0.8 - 0.66, 0, 0.6 + 0.88), 1.0f, false,
       "climbing gate, 1.1 m up its own vertical axis"},
      {climbing, v3(-0.8, 0.25, -0.6), v3(0.8, 0.25, 0.6), 1.0f, true, "climbing gate, 0.25 m left"},
      {climbing, v3(-0.8, 0.35, -0.6), v3(0.8, 0.35, 0.6), 1.0f, false, "climbing gate, 0.35 m left"},
  };
  std::vector<crossing_query> queries;
  for (const probe& p : probes) queries.push_back({p.g, p.a, p.b, p.half_height});
  const std::vector<int> on_backend = r.crosses(queries);
  REQUIRE(on_backend.size() == probes.size());
  for (std::size_t i = 0; i < probes.size(); ++i) {
    INFO(probes[i].what);
    CHECK((on_backend[i] != 0) == probes[i].expected);
  }
}

TEST_CASE_TEMPLATE_DEFINE("a gate's 3D opening on a straight: above, below, beside and against the gate", Policy,
                          gates_opening_on_a_straight) {
  // Stadium: straights of 150 m at y = -10 (driven towards +x) and y = +10, semicircles of
  // 10 m; L = 300 + 20 pi = 362.83 m; 40 m spacing gives G = 9 gates, gate 1 at x = -75 + L / 9
  // = -34.69 m on the lower straight, gate 2 at x = +5.63 m. Half-height 1 m, half-width 0.3 m.
  const stadium st{75.0, 10.0};
  const double length = st.length();
  const int gates = static_cast<int>(std::floor(length / 40.0));
  REQUIRE(gates == 9);
  const double x_gate = -75.0 + length / gates;
  const double before = x_gate - 20.0, after = x_gate + 20.0;  // one 40 m step through the gate
  REQUIRE(after < -75.0 + 2.0 * length / gates - 1.0);         // gate 2 is not reached
  const double y = -10.0;

  // Per env: the position of step 0 (initialises only) and of step 1; step 2 goes to `again`
  // (for the env that first crossed backwards: forwards through the gate).
  struct scenario {
    const char* what;
    float3 p0, p1, again;
    int gates_after_step1;
    int gates_after_step2;
  };
  const float3 still = v3(after, y, 0);
  const std::vector<scenario> scenarios = {
      {"through the opening", v3(before, y, 0), v3(after, y, 0), still, 1, 1},
      {"2 m above the gate", v3(before, y, 2), v3(after, y, 2), v3(after, y, 2), 0, 0},
      {"2 m below the gate", v3(before, y, -2), v3(after, y, -2), v3(after, y, -2), 0, 0},
      {"0.9 m above the centre", v3(before, y, 0.9), v3(after, y, 0.9), v3(after, y, 0.9), 1, 1},
      {"against the gate's direction, then forwards", v3(after, y, 0), v3(before, y, 0), v3(after, y, 0), 0, 1},
      {"climbing through: z from -1.5 to 1.5, 0 at the gate", v3(before, y, -1.5), v3(after, y, 1.5),
       v3(after, y, 1.5), 1, 1},
      {"climbing over: z from 0.5 to 3.5, 2 at the gate", v3(before, y, 0.5), v3(after, y, 3.5), v3(after, y, 3.5), 0,
       0},
      {"0.25 m left of the centre", v3(before, y + 0.25, 0), v3(after, y + 0.25, 0), v3(after, y + 0.25, 0), 1, 1},
      {"0.35 m right of the centre", v3(before, y - 0.35, 0), v3(after, y - 0.35, 0), v3(after, y - 0.35, 0), 0, 0},
  };
  const int n = static_cast<int>(scenarios.size());
  tg::track_params params = user_track_params(n);
  params.gate_half_height = 1.0f;
  rig<Policy> r(params, 40.0f, centreline({st.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  REQUIRE(t.num_gates[0] == gates);
  // The gate sits where the stadium's geometry puts it (a precondition of the scenarios).
  const tg::gate g1 = tg::gate{t.gate_centre[1], t.gate_normal[1], t.gate_half_width[1], t.gate_arc_length[1]};
  REQUIRE(g1.centre.x == doctest::Approx(x_gate).epsilon(1e-3));
  REQUIRE(g1.centre.y == doctest::Approx(y).epsilon(1e-4));
  REQUIRE(g1.normal.x == doctest::Approx(1.0).epsilon(1e-5));

  for (int step = 0; step < 3; ++step) {
    for (int e = 0; e < n; ++e) {
      const scenario& sc = scenarios[static_cast<std::size_t>(e)];
      r.positions[static_cast<std::size_t>(e)] = step == 0 ? sc.p0 : step == 1 ? sc.p1 : sc.again;
    }
    r.step();
    const tg::progress_snapshot snap = r.progress();
    for (int e = 0; e < n; ++e) {
      const scenario& sc = scenarios[static_cast<std::size_t>(e)];
      const progress_entry p = entry(snap, e);
      INFO("step " << step << ": " << sc.what << " " << describe(p));
      const int expected = step == 0 ? 0 : step == 1 ? sc.gates_after_step1 : sc.gates_after_step2;
      const int expected_before = step <= 1 ? 0 : sc.gates_after_step1;
      CHECK(p.gates_passed == expected);
      CHECK(p.next_gate == 1 + expected);
      CHECK(has(p.flags, tg::progress_flags::gate_passed) == (expected > expected_before));
      CHECK(p.laps == 0);
      if (step == 1 && e == 4) CHECK(has(p.flags, tg::progress_flags::wrong_way));
    }
  }
}

}  // namespace progress_test

#pragma once
/// @file
/// Laps and gates passed in order, for agents driving along a circle of radius 50 m (test
/// bodies templated over the policy; applied in laps_test.cpp and laps_test.cu).
///
/// Expected values come from the circle's geometry: G = floor(2 pi 50 / spacing) gates at arc
/// lengths g * L / G, an agent at arc length s, and `arc_gate_model` (harness) for which gates
/// a step crosses.

#include "progress_harness.hpp"

namespace progress_test {

/// Checks one env's progress entry against the model's state and this step's events.
inline void check_against_model(const tg::progress_snapshot& snap, int e, const arc_gate_model& model,
                                const arc_gate_model::events& ev) {
  const progress_entry p = entry(snap, e);
  INFO("entry " << describe(p));
  REQUIRE_FALSE(ev.ambiguous);  // test geometry: no gate within 5 mm of a step endpoint
  CHECK(p.gates_passed == model.gates_passed);
  CHECK(p.next_gate == model.next_gate);
  CHECK(p.laps == model.laps);
  CHECK(has(p.flags, tg::progress_flags::gate_passed) == (ev.passed > 0));
  CHECK(has(p.flags, tg::progress_flags::lap_completed) == ev.lap);
  CHECK(has(p.flags, tg::progress_flags::wrong_way) == ev.wrong_way);
  CHECK(has(p.flags, tg::progress_flags::has_last));
}

TEST_CASE_TEMPLATE_DEFINE("one lap at 1 m of arc per step on a circle of radius 50 m, 10 m gate spacing", Policy,
                          laps_one_metre_per_step) {
  const circle c{50.0};
  const double length = c.length();                         // 314.159 m
  const int gates = static_cast<int>(std::floor(length / 10.0));  // 31
  REQUIRE(gates == 31);
  rig<Policy> r(user_track_params(1), 10.0f, centreline({c.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  REQUIRE(t.num_gates[0] == gates);
  CHECK(t.length[0] == doctest::Approx(length).epsilon(3e-5));  // float32 sum of 2000 chords

  // The lap completes on the first step whose arc length reaches L again: s_i = i m, so i = ceil(L).
  const int lap_step = static_cast<int>(std::ceil(length));  // 315
  REQUIRE(lap_step == 315);
  // Gate 1 of the second lap sits at L + L / G = 324.29 m: the first step at or beyond it.
  const int next_gate1_step = static_cast<int>(std::ceil(length + length / gates));  // 325

  arc_gate_model model(length, gates, 0.3);
  int lap_steps_seen = 0;
  for (int i = 0; i <= next_gate1_step + 5; ++i) {
    const double s = i;  // 1 m of arc per step, counter-clockwise from gate 0
    r.positions[0] = c.at(s);
    r.step();
    const arc_gate_model::events ev = model.step(s, 0.0);
    const tg::progress_snapshot snap = r.progress();
    const progress_entry p = entry(snap, 0);
    INFO("step " << i << ", s = " << s << " m");
    check_against_model(snap, 0, model, ev);

    // Hand-derived facts that do not depend on the model.
    if (i == 0) {
      CHECK(p.next_gate == 1);  // the agent starts at gate 0, the start line
      CHECK(p.gates_passed == 0);
      CHECK(p.flags == tg::progress_flags::has_last);  // the first step only initialises
    }
    if (i < lap_step) CHECK(p.laps == 0);
    if (i == lap_step) {
      CHECK(p.laps == 1);
      CHECK(p.gates_passed == gates);  // gates 1..30 then gate 0
      CHECK(p.next_gate == 1);
      CHECK(has(p.flags, tg::progress_flags::lap_completed));
      CHECK(has(p.flags, tg::progress_flags::gate_passed));
    }
    if (i == lap_step + 1) {  // no double count right after the line
      CHECK(p.laps == 1);
      CHECK(p.gates_passed == gates);
      CHECK_FALSE(has(p.flags, tg::progress_flags::lap_completed));
      CHECK_FALSE(has(p.flags, tg::progress_flags::gate_passed));
    }
    if (i == next_gate1_step) {
      CHECK(p.gates_passed == gates + 1);
      CHECK(p.next_gate == 2);
    }
    lap_steps_seen += has(p.flags, tg::progress_flags::lap_completed) ? 1 : 0;

    // On the centreline, driving forwards: arc length = s mod L, no lateral offset, no flags.
    // Budget: L is a float32 sum of 2000 chords (relative error up to ~2e-5, 6 mm here) and
    // the arc of a projection scales with L; the 512-sample discretisation adds < 0.1 mm.
    CHECK(arc_distance(p.lap_progress, s, length) < 1e-2);
    CHECK(p.lap_progress >= 0.0f);
    CHECK(p.lap_progress < t.length[0]);
    CHECK(std::fabs(p.lateral) < 2e-3);  // chord sagitta of 512 samples on r = 50 m: 0.9 mm
    CHECK_FALSE(has(p.flags, tg::progress_flags::off_track));
    CHECK_FALSE(has(p.flags, tg::progress_flags::wrong_way));
    CHECK_FALSE(has(p.flags, tg::progress_flags::invalid_position));
  }
  CHECK(lap_steps_seen == 1);
}

TEST_CASE_TEMPLATE_DEFINE("a fast agent passes several gates per step, each in order", Policy, laps_fast_agent) {
  // 12 m of arc per step with 5 m spacing: 2 or 3 gates per step. A 12 m step is a chord that
  // cuts 50 (1 - cos(0.12)) = 0.36 m inside the circle at its middle, so the gates are made
  // 1 m wide (half-width) for every crossing to lie inside the opening.
  const circle c{50.0};
  const double length = c.length();
  const int gates = static_cast<int>(std::floor(length / 5.0));  // 62
  REQUIRE(gates == 62);
  tg::track_params params = user_track_params(1);
  params.half_width = 1.0f;
  rig<Policy> r(params, 5.0f, centreline({c.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  REQUIRE(t.num_gates[0] == gates);
  REQUIRE(50.0 * (1.0 - std::cos(12.0 / 50.0 / 2.0)) < 0.5);  // sagitta well inside the half-width

  const int steps = static_cast<int>(std::ceil(scaled(2, 1) * length / 12.0)) + 2;
  int max_per_step = 0, min_per_step = 1 << 20;
  int previous = 0;
  for (int i = 0; i <= steps; ++i) {
    const double s = 12.0 * i;
    r.positions[0] = c.at(s);
    r.step();
    const tg::progress_snapshot snap = r.progress();
    const progress_entry p = entry(snap, 0);
    INFO("step " << i << ", s = " << s << " m, " << describe(p));

    // My own count: gate g (at g L / G, repeating every lap) is passed by the time the agent
    // reaches s when 0 < g L / G + k L <= s with g >= 1 or k >= 1, i.e. floor(s G / L) crossings.
    const int expected = static_cast<int>(std::floor(s * gates / length));
    const double frac = s * gates / length - expected;
    REQUIRE((i == 0 || (frac > 1e-3 && frac < 1.0 - 1e-3)));  // no gate within 5 mm of an endpoint
    CHECK(p.gates_passed == expected);
    CHECK(p.laps == expected / gates);  // gate 0 is the G-th, 2G-th, ... gate passed
    CHECK(p.next_gate == (1 + expected) % gates);
    const int this_step = expected - previous;
    CHECK(has(p.flags, tg::progress_flags::gate_passed) == (this_step > 0));
    CHECK(has(p.flags, tg::progress_flags::lap_completed) == (expected / gates > previous / gates));
    if (i > 0) {
      max_per_step = std::max(max_per_step, this_step);
      min_per_step = std::min(min_per_step, this_step);
    }
    previous = expected;
  }
  CHECK(min_per_step == 2);  // 12 / 5.07 = 2.37 gates per step
  CHECK(max_per_step == 3);
}

TEST_CASE_TEMPLATE_DEFINE("a lap driven backwards earns nothing; the following lap forwards counts once", Policy,
                          laps_backwards_then_forwards) {
  const circle c{50.0};
  const double length = c.length();
  const int gates = 31;  // floor(314.16 / 10)
  rig<Policy> r(user_track_params(1), 10.0f, centreline({c.polyline(2000)}));
  require_valid_user_tracks(r.tracks());

  arc_gate_model model(length, gates, 0.3);
  const int back = static_cast<int>(std::ceil(length));  // 315 m backwards: past the start line
  // Backwards: s = 0, -1, ..., -315 (clockwise), crossing every gate plane the wrong way and the
  // start line once.
  for (int i = 0; i <= back; ++i) {
    const double s = -static_cast<double>(i);
    r.positions[0] = c.at(s);
    r.step();
    const arc_gate_model::events ev = model.step(s, 0.0);
    const tg::progress_snapshot snap = r.progress();
    INFO("backwards step " << i << ", s = " << s << " m");
    check_against_model(snap, 0, model, ev);
    CHECK(snap.laps[0] == 0);
    CHECK(snap.gates_passed[0] == 0);
    CHECK(snap.next_gate[0] == 1);
    CHECK(has(snap.flags[0], tg::progress_flags::wrong_way) == (i > 0));
  }
  // Forwards from s = -315 by 1 m steps offset by 0.5 m (s = -314.5, ..., +0.5): over the start
  // line at -L (not the next gate: no credit), then gates 1..30, and gate 0 at s = 0, which
  // completes the lap on the last step.
  int step = 0;
  for (double s = -back + 0.5; s <= 0.5; s += 1.0, ++step) {
    r.positions[0] = c.at(s);
    r.step();
    const arc_gate_model::events ev = model.step(s, 0.0);
    const tg::progress_snapshot snap = r.progress();
    INFO("forwards step " << step << ", s = " << s << " m");
    check_against_model(snap, 0, model, ev);
    CHECK_FALSE(has(snap.flags[0], tg::progress_flags::wrong_way));
    CHECK(snap.laps[0] == (s >= 0.0 ? 1 : 0));
  }
  const tg::progress_snapshot end = r.progress();
  CHECK(end.laps[0] == 1);
  CHECK(end.gates_passed[0] == gates);
  CHECK(end.next_gate[0] == 1);
}

}  // namespace progress_test

#pragma once
/// @file
/// NaN/Inf positions, and finite positions beyond the documented bound (every coordinate within
/// +-1e7 m, detail::max_position; issue 17: at 1e19 m the squared distance overflowed and the
/// projection fell silently on segment 0): the env's progress is left as it was,
/// status::invalid_input and progress_flags::invalid_position report it, other envs are
/// unaffected, and regeneration clears the status bit. A position on the bound is accepted. Test bodies templated over the policy; applied in
/// invalid_input_test.cpp and invalid_input_test.cu.

#include "progress_harness.hpp"

#include <cmath>
#include <limits>

namespace progress_test {

TEST_CASE_TEMPLATE_DEFINE("NaN/Inf positions leave the env's progress unchanged and are reported", Policy,
                          invalid_input_positions) {
  // Three envs on the circle (r = 50 m, 10 m spacing: gate 1 at 10.13 m, gate 2 at 20.27 m).
  // Course `a` feeds env 1 non-finite positions for five steps; course `b` is identical except
  // that env 1 keeps finite positions: envs 0 and 2 must match bit for bit between them.
  const circle c{50.0};
  const int n = 3;
  rig<Policy> a(user_track_params(n), 10.0f, centreline({c.polyline(2000)}));
  rig<Policy> b(user_track_params(n), 10.0f, centreline({c.polyline(2000)}));
  require_valid_user_tracks(a.tracks());

  auto set_all = [&](double s) {
    for (int e = 0; e < n; ++e) a.positions[static_cast<std::size_t>(e)] = b.positions[static_cast<std::size_t>(e)] = c.at(s);
  };
  // Steps 0-2: everybody drives to s = 10.5 m, crossing gate 1 on step 2.
  for (double s : {0.0, 5.0, 10.5}) {
    set_all(s);
    a.step();
    b.step();
  }
  const tg::progress_snapshot before = a.progress();
  const progress_entry env1 = entry(before, 1);
  REQUIRE(env1.gates_passed == 1);  // the test's premise: a state worth preserving, with an event
  REQUIRE(has(env1.flags, tg::progress_flags::gate_passed));

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float bound = static_cast<float>(tg::detail::max_position);
  const float past = std::nextafter(bound, inf);  // the first float outside
  float3 bad[] = {v3(nan, 0, 0), v3(0, inf, 0), v3(0, 0, -inf), v3(nan, nan, nan), v3(50.0, 0.0, nan),
                  v3(1e19, 0, 0), v3(0, -3e38, 0), v3(1e19, 1e19, 1e19), v3(0, 0, 0), v3(0, 0, 0)};
  bad[8] = {past, 0.0f, 0.0f};
  bad[9] = {0.0f, 0.0f, -past};
  double s_others = 10.5;
  for (const float3& p : bad) {
    s_others += 1.0;  // envs 0 and 2 drive on and cross gate 2 (20.27 m) during these ten steps
    set_all(s_others);
    a.positions[1] = p;
    a.step();
    b.step();
    const tg::progress_snapshot pa = a.progress(), pb = b.progress();
    const tg::track_snapshot ta = a.tracks(), tb = b.tracks();
    INFO("invalid position (" << p.x << ", " << p.y << ", " << p.z << "); env 1 " << describe(entry(pa, 1)));
    // Env 1: every field as before the bad steps; the flags keep has_last, lose the previous
    // step's events and gain invalid_position.
    progress_entry expected = env1;
    expected.flags = (env1.flags & ~tg::progress_flags::step_events) | tg::progress_flags::invalid_position;
    CHECK(same_bits(entry(pa, 1), expected));
    CHECK(has(ta.status[1], tg::status::invalid_input));
    CHECK(ta.status[1] == (tb.status[1] | tg::status::invalid_input));
    // Envs 0 and 2: exactly what they are in the course that never saw a bad position.
    for (int e : {0, 2}) {
      INFO("env " << e << ": " << describe(entry(pa, e)) << " vs " << describe(entry(pb, e)));
      CHECK(same_bits(entry(pa, e), entry(pb, e)));
      CHECK(ta.status[static_cast<std::size_t>(e)] == tb.status[static_cast<std::size_t>(e)]);
      CHECK_FALSE(has(ta.status[static_cast<std::size_t>(e)], tg::status::invalid_input));
      CHECK_FALSE(has(pa.flags[static_cast<std::size_t>(e)], tg::progress_flags::invalid_position));
    }
  }
  REQUIRE(entry(a.progress(), 0).gates_passed == 2);  // the others did pass a gate meanwhile

  // A finite position again: progress resumes from the last finite position (10.5 m), so the
  // move to 21 m crosses gate 2; invalid_input stays set until the env is regenerated.
  a.positions[1] = c.at(21.0);
  a.step();
  {
    const tg::progress_snapshot pa = a.progress();
    const progress_entry p = entry(pa, 1);
    INFO("env 1 after the bad steps: " << describe(p));
    CHECK(p.gates_passed == 2);
    CHECK(p.next_gate == 3);
    CHECK(has(p.flags, tg::progress_flags::gate_passed));
    CHECK_FALSE(has(p.flags, tg::progress_flags::invalid_position));
    CHECK(same_bits(p.last_position.x, c.at(21.0).x));
    CHECK(same_bits(p.last_position.y, c.at(21.0).y));
    CHECK(arc_distance(p.lap_progress, 21.0, c.length()) < 1e-2);
    CHECK(has(a.tracks().status[1], tg::status::invalid_input));
  }

  // Regenerating env 1 (same track) clears invalid_input and resets its progress; envs 0 and 2
  // are untouched, bit for bit.
  const tg::progress_snapshot p_before = a.progress();
  const tg::track_snapshot t_before = a.tracks();
  a.regenerate({0, 1, 0}, false);
  const tg::progress_snapshot p_after = a.progress();
  const tg::track_snapshot t_after = a.tracks();
  CHECK_FALSE(has(t_after.status[1], tg::status::invalid_input));
  CHECK(has(t_after.status[1], tg::status::valid));
  CHECK(t_after.status[1] == (t_before.status[1] & ~tg::status::invalid_input));
  CHECK(t_after.episode[1] == t_before.episode[1]);  // advance = false: the same episode
  const progress_entry reset{1, 0, 0, 0, 0.0f, 0.0f, v3(0, 0, 0), 0u};
  INFO("env 1 after regeneration: " << describe(entry(p_after, 1)));
  CHECK(same_bits(entry(p_after, 1), reset));
  for (int e : {0, 2}) {
    const auto u = static_cast<std::size_t>(e);
    CHECK(same_bits(entry(p_after, e), entry(p_before, e)));
    CHECK(t_after.status[u] == t_before.status[u]);
    CHECK(t_after.episode[u] == t_before.episode[u]);
  }

  // Positions on the bound are valid input: the step runs (env 1 is far off the track), and
  // nothing reports invalid input.
  for (const float3& p : {v3(bound, 0, 0), v3(-bound, bound, -bound)}) {
    INFO("position on the bound (" << p.x << ", " << p.y << ", " << p.z << ")");
    a.positions[1] = p;
    a.step();
    const tg::progress_snapshot pa = a.progress();
    const progress_entry q = entry(pa, 1);
    INFO("env 1 " << describe(q));
    CHECK_FALSE(has(q.flags, tg::progress_flags::invalid_position));
    CHECK(has(q.flags, tg::progress_flags::off_track));
    CHECK_FALSE(has(a.tracks().status[1], tg::status::invalid_input));
    CHECK(same_bits(q.last_position.x, p.x));
    CHECK(same_bits(q.last_position.z, p.z));
    CHECK(std::isfinite(q.lateral));
  }
}


/// Spawns env e 50 m down the track (course_ref::spawn).
struct spawn_state_fn {
  TRACK_GEN_HD int operator()(const tg::course_ref& v, const int& e) const {
    v.spawn(e, 50.0f, 0.0f);
    return 0;
  }
};

/// Writes one int of env `env`'s state where the user's kernels would (next_gate of the progress
/// or num_gates of the track), as a user writing into the course's arrays would.
struct poke_state {
  enum field_id { next_gate, num_gates } field;
  int env, value;
};
struct poke_fn {
  TRACK_GEN_HD int operator()(const tg::course_ref& v, const poke_state& q) const {
    if (q.field == poke_state::next_gate) {
      v.progress_data().next_gate[q.env] = q.value;
    } else {
      v.tracks().num_gates[q.env] = q.value;
    }
    return 0;
  }
};

TEST_CASE_TEMPLATE_DEFINE("A gate state out of range skips the gate tests and is reported", Policy,
                          invalid_input_gate_state) {
  // As above: three envs on the circle (r = 50 m, gates every 10.13 m), course `b` the twin
  // that nobody writes into. Env 1 of `a` gets out-of-range next_gate and num_gates values.
  const circle c{50.0};
  const int n = 3;
  rig<Policy> a(user_track_params(n), 10.0f, centreline({c.polyline(2000)}));
  rig<Policy> b(user_track_params(n), 10.0f, centreline({c.polyline(2000)}));
  require_valid_user_tracks(a.tracks());
  const int gates = a.tracks().num_gates[1];
  const int max_gates = a.course().view().max_gates();
  REQUIRE(gates > 4);
  auto poke = [&](poke_state::field_id f, int value) { map_on_backend(a, poke_fn{}, std::vector<poke_state>{{f, 1, value}}); };
  auto drive = [&](double s) {
    for (int e = 0; e < n; ++e) a.positions[static_cast<std::size_t>(e)] = b.positions[static_cast<std::size_t>(e)] = c.at(s);
    a.step();
    b.step();
  };
  // The others are never touched: bit for bit what they are in `b`.
  auto others_unchanged = [&] {
    const tg::progress_snapshot pa = a.progress(), pb = b.progress();
    const tg::track_snapshot ta = a.tracks(), tb = b.tracks();
    for (int e : {0, 2}) {
      INFO("env " << e << ": " << describe(entry(pa, e)) << " vs " << describe(entry(pb, e)));
      CHECK(same_bits(entry(pa, e), entry(pb, e)));
      CHECK(ta.status[static_cast<std::size_t>(e)] == tb.status[static_cast<std::size_t>(e)]);
    }
  };
  for (double s : {0.0, 5.0, 10.5}) drive(s);
  REQUIRE(entry(a.progress(), 1).gates_passed == 1);
  REQUIRE(entry(a.progress(), 1).next_gate == 2);

  // next_gate far beyond G, then negative: the agent drives over gate 2 (20.27 m) meanwhile.
  double s = 10.5;
  for (int bad : {1000000, gates, -3, 1000000}) {
    poke(poke_state::next_gate, bad);
    for (int k = 0; k < 3; ++k) {
      s += 1.0 + 2.0 * k;
      drive(s);
      const tg::progress_snapshot pa = a.progress();
      const progress_entry p = entry(pa, 1);
      INFO("next_gate = " << bad << ", s = " << s << ": " << describe(p));
      CHECK(has(p.flags, tg::progress_flags::invalid_state));
      CHECK_FALSE(has(p.flags, tg::progress_flags::gate_passed));
      CHECK(p.gates_passed == 1);
      CHECK(p.next_gate == bad);  // left as written: the library does not guess the intent
      CHECK(pa.checkpoint_passed[1] == -1);
      CHECK(pa.wrong_checkpoint[1] == -1);
      CHECK(arc_distance(p.lap_progress, s, c.length()) < 1e-2);  // the projection still ran
      CHECK(has(a.tracks().status[1], tg::status::invalid_input));
      others_unchanged();
    }
  }
  // A valid next_gate again: gate 4 (40.5 m) ahead of the agent counts, and invalid_state is gone
  // (invalid_input stays until the env is regenerated).
  poke(poke_state::next_gate, 4);
  drive(39.0);
  drive(41.5);
  {
    const progress_entry p = entry(a.progress(), 1);
    INFO("after next_gate = 4: " << describe(p));
    CHECK(has(p.flags, tg::progress_flags::gate_passed));
    CHECK_FALSE(has(p.flags, tg::progress_flags::invalid_state));
    CHECK(p.gates_passed == 2);
    CHECK(p.next_gate == 5);
    CHECK(has(a.tracks().status[1], tg::status::invalid_input));
  }
  others_unchanged();

  // Gate counts out of [1, G_max]: the gate tests are skipped, nothing reads past the storage.
  s = 41.5;
  for (int bad : {1000000, max_gates + 1, 0, -7}) {
    poke(poke_state::num_gates, bad);
    s += 3.0;
    drive(s);
    const tg::progress_snapshot pa = a.progress();
    const progress_entry p = entry(pa, 1);
    INFO("num_gates = " << bad << ": " << describe(p));
    CHECK(has(p.flags, tg::progress_flags::invalid_state));
    CHECK(p.gates_passed == 2);
    CHECK(arc_distance(p.lap_progress, s, c.length()) < 1e-2);
    others_unchanged();
  }
  // A spawn with the count out of range: a reset (start line) with invalid_input, as for a
  // non-finite arc length.
  poke(poke_state::num_gates, 1000000);
  map_on_backend(a, spawn_state_fn{}, std::vector<int>{1});
  {
    const progress_entry p = entry(a.progress(), 1);
    INFO("after a spawn with num_gates = 1000000: " << describe(p));
    CHECK(p.gates_passed == 0);
    CHECK(p.laps == 0);
    CHECK(p.flags == 0u);
    CHECK(has(a.tracks().status[1], tg::status::invalid_input));
  }
  others_unchanged();

  // Regeneration rebuilds the track: its gate count, status and progress as in `b`'s reset.
  a.regenerate({0, 1, 0}, false);
  b.regenerate({0, 1, 0}, false);
  {
    const tg::track_snapshot ta = a.tracks(), tb = b.tracks();
    CHECK(ta.num_gates[1] == gates);
    CHECK(ta.status[1] == tb.status[1]);
    CHECK(same_bits(entry(a.progress(), 1), entry(b.progress(), 1)));
  }
  drive(s + 1.0);
  drive(s + 2.0);
  CHECK(same_bits(entry(a.progress(), 1), entry(b.progress(), 1)));
  others_unchanged();
}

}  // namespace progress_test

#pragma once
/// @file
/// The course step's outputs beside the progress state: the gate events (checkpoint_passed,
/// wrong_checkpoint; the seed system's names) on a scripted path with hand-derived answers,
/// and the box contacts of course::bind(positions, orientations, half_extents) against
/// collide_box called directly and against the exact circle; bind's checks. Test bodies
/// templated over the policy; applied in step_events_test.cpp and step_events_test.cu.

#include "progress_harness.hpp"

#include <limits>

namespace progress_test {

/// Every progress field of every env of `a` and `b` bit for bit (the twin tracker's check).
inline void check_same_progress(const tg::progress_snapshot& a, const tg::progress_snapshot& b) {
#define TRACK_GEN_SAME(name, type, ext, doc)                                                         \
  REQUIRE(a.name.size() == b.name.size());                                                           \
  for (std::size_t i = 0; i < a.name.size(); ++i) {                                                  \
    INFO(#name " of env " << i);                                                                     \
    CHECK(std::memcmp(&a.name[i], &b.name[i], sizeof(type)) == 0);                                   \
  }
  TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_SAME)
#undef TRACK_GEN_SAME
}

/// One step of a scripted path: where the agent goes (arc length, metres left of the
/// centreline) and the events that step must report, worked out by hand from the gate
/// positions g * L / G.
struct scripted_step {
  double s, left;
  int checkpoint_passed, wrong_checkpoint;
  const char* what;
};

TEST_CASE_TEMPLATE_DEFINE("gate events: passed in order, crossed out of order, skipped, backwards, a lap", Policy,
                          step_events_scripted_path) {
  // Circle r = 50 m, 10 m spacing: G = 31 gates, gate g at g * 10.134 m, half-width 0.3 m.
  const circle c{50.0};
  const double length = c.length();
  const int gates = 31;
  const double spacing = length / gates;
  rig<Policy> r(user_track_params(2), 10.0f, centreline({c.polyline(2000)}));
  {
    const tg::track_snapshot t = r.tracks();
    require_valid_user_tracks(t);
    REQUIRE(t.num_gates[0] == gates);
  }
  // The course finds wrong gates by arithmetic (gate_layout::even: user tracks' checkpoints);
  // a twin tracker with the binary search of gate_layout::anchored must agree bit for bit.
  REQUIRE(r.course().tracker().view().layout() == tg::gate_layout::even);
  r.add_twin(tg::gate_layout::anchored, r.course().tracker().view().gate_half_height());
  std::vector<scripted_step> path = {
      {1, 0, -1, -1, "first step: primes only"},
      {5, 0, -1, -1, "between gates 0 and 1"},
      {11, 0, 1, -1, "gate 1 (10.13) in order"},
      {15, 0, -1, -1, "nothing crossed"},
      {21, 0, 2, -1, "gate 2 (20.27) in order"},
      {19, 0, -1, 2, "gate 2 crossed backwards: not the next gate (3)"},
      {22, 0, -1, 2, "gate 2 crossed forwards again: already passed, not the next one"},
      {26, 0, -1, -1, "nothing crossed"},
      {31, 0, 3, -1, "gate 3 (30.40) in order"},
      {35, 1.0, -1, -1, "sideways, 1 m left: off the road"},
      {45, 1.0, -1, -1, "past gate 4 (40.54) outside its opening: no crossing at all"},
      {48, 0, -1, -1, "back onto the centreline"},
      {52, 0, -1, 5, "gate 5 (50.67) crossed with gate 4 skipped: wrong"},
      {48, 0, -1, 5, "gate 5 crossed backwards: wrong"},
      {44, 0, -1, -1, "nothing crossed"},
      {39.5, 0, -1, -1, "gate 4 crossed backwards: the next gate, not a wrong one"},
      {51, 0, 5, -1, "gates 4 and 5 in one step: the last one passed"},
  };
  // Then forwards in 4 m steps once round to 1 m past the start line: each gate in order, gate 0
  // completes the lap. The expected gate: the one whose arc lies in (previous s, s].
  for (double s = 54.5; s <= length + 1.5; s += 4) path.push_back({s, 0, -2, -1, "forwards"});
  path.push_back({length + 1.5, 0, -2, -1, "past the start line"});

  int passed_total = 0, laps = 0;
  double previous = 0.0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    scripted_step w = path[i];
    if (w.checkpoint_passed == -2) {  // the forward phase: at most one gate per 4 m step
      const int before = static_cast<int>(std::floor(previous / spacing));
      const int after = static_cast<int>(std::floor(w.s / spacing));
      w.checkpoint_passed = after > before ? after % gates : -1;
      if (after > before && after % gates == 0) ++laps;
    }
    for (int g = 0; g <= gates; ++g) REQUIRE(std::fabs(w.s - g * spacing) > 0.05);  // no endpoint on a gate
    r.positions[0] = c.at(w.s, w.left);
    r.positions[1] = c.at(3.0);  // env 1 stands still: never an event
    r.step();
    const tg::progress_snapshot p = r.progress();
    INFO("step " << i << " s = " << w.s << " left = " << w.left << ": " << w.what << "; got " << describe(entry(p, 0))
                 << " checkpoint_passed " << p.checkpoint_passed[0] << " wrong_checkpoint " << p.wrong_checkpoint[0]);
    CHECK(p.checkpoint_passed[0] == w.checkpoint_passed);
    CHECK(p.wrong_checkpoint[0] == w.wrong_checkpoint);
    CHECK(has(p.flags[0], tg::progress_flags::gate_passed) == (w.checkpoint_passed >= 0));
    if (w.checkpoint_passed >= 0) {
      passed_total += (i == 16) ? 2 : 1;  // the double step passes gates 4 and 5
      CHECK(p.next_gate[0] == (w.checkpoint_passed + 1) % gates);
    }
    CHECK(p.gates_passed[0] == passed_total);
    CHECK(p.laps[0] == laps);
    CHECK(p.checkpoint_passed[1] == -1);
    CHECK(p.wrong_checkpoint[1] == -1);
    check_same_progress(p, r.twin_progress());
    previous = w.s;
  }
  CHECK(laps == 1);
  CHECK(passed_total == gates);  // gates 1 to 30, then gate 0
}

TEST_CASE_TEMPLATE_DEFINE("gate events with gates denser than the samples: each crossing reported", Policy,
                          step_events_dense_gates) {
  // Circle r = 50 m, N = 512 samples (0.61 m apart), gates every 0.5 m: G = 628, gate g at
  // g * 0.50026 m. The agent goes forwards, backwards over the gates it passed (each a wrong
  // checkpoint), forwards again over them (wrong again, they are passed already) and on to the
  // next gate (passed in order). Expected gates from the arc lengths alone.
  const circle c{50.0};
  rig<Policy> r(user_track_params(1), 0.5f, centreline({c.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int gates = t.num_gates[0];
  REQUIRE(gates == 628);
  r.add_twin(tg::gate_layout::anchored, r.course().tracker().view().gate_half_height());
  const double spacing = c.length() / gates;
  std::vector<double> path;
  for (double s = 0.23; s < 3.0; s += 0.3) path.push_back(s);  // forwards from between gates 0 and 1
  for (double s = 2.83; s > 1.0; s -= 0.3) path.push_back(s);  // backwards
  for (double s = 1.13; s < 4.6; s += 0.3) path.push_back(s);  // forwards again, and on
  int next = 1, passed = 0, wrongs = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const double s = path[i];
    for (int g = 0; g < 40; ++g) REQUIRE(std::fabs(s - g * spacing) > 0.01);
    r.positions[0] = c.at(s);
    r.step();
    const tg::progress_snapshot p = r.progress();
    int want_passed = -1, want_wrong = -1;
    if (i > 0) {
      const int before = static_cast<int>(std::floor(path[i - 1] / spacing));
      const int after = static_cast<int>(std::floor(s / spacing));
      if (after > before) {  // forwards over gates before + 1 .. after (one per step here)
        REQUIRE(after == before + 1);
        if (after == next) {
          want_passed = after;
          next = after + 1;
          ++passed;
        } else {
          want_wrong = after;
        }
      } else if (after < before) {  // backwards over gate `before`
        REQUIRE(after == before - 1);
        if (before != next) want_wrong = before;
      }
    }
    INFO("step " << i << " s = " << s << " " << describe(entry(p, 0)) << " checkpoint_passed " << p.checkpoint_passed[0]
                 << " wrong_checkpoint " << p.wrong_checkpoint[0]);
    CHECK(p.checkpoint_passed[0] == want_passed);
    CHECK(p.wrong_checkpoint[0] == want_wrong);
    CHECK(p.next_gate[0] == next);
    check_same_progress(p, r.twin_progress());
    if (want_wrong >= 0) ++wrongs;
  }
  CHECK(passed == 8);   // gates 1 to 5, then 6 to 8
  CHECK(wrongs == 6);   // gates 5 to 3 backwards, 3 to 5 forwards again
}

TEST_CASE_TEMPLATE_DEFINE("gate events on a gate course (gates at anchors, unevenly spaced): a skipped gate is reported", Policy,
                          step_events_gate_course) {
  // A random gate course; the scripted env's gate 2 lies at least 3 sample spacings away from
  // 2 L / G, where evenly spaced gates would put it: a wrong-gate search that assumed even
  // spacing would not test it. The agent flies the course line past gate 1 outside its opening
  // (1.25 m to the side of the gate), through gate 2 (wrong: gate 1 is next), back through
  // gates 2 (wrong again) and 1 (the next gate, backwards: no event), then forwards through
  // gates 1, 2 and 3 in order. Expected events from the gate arc lengths alone.
  tg::track_params params = tg::presets::gate_course(16);
  params.seed = 5;
  rig<Policy, tg::presets::gate_course_pipeline> r(params, tg::presets::gate_course_spacing(params));
  REQUIRE(r.course().tracker().view().layout() == tg::gate_layout::anchored);
  const tg::track_snapshot t = r.tracks();
  const int n = t.num_samples;
  int env = -1;
  for (int e = 0; e < t.num_envs && env < 0; ++e) {
    const std::size_t i = static_cast<std::size_t>(e);
    const int g = t.num_gates[i];
    if (!has(t.status[i], tg::status::valid) || g < 5) continue;
    const double length = t.length[i], ds = length / n;
    if (std::fabs(t.gate_arc_length[t.gate_index(e, 2)] - 2.0 * length / g) > 3.0 * ds) env = e;
  }
  REQUIRE(env >= 0);
  const std::size_t ei = static_cast<std::size_t>(env);
  const double length = t.length[ei], ds = length / n;
  auto arc = [&](int g) { return static_cast<double>(t.gate_arc_length[t.gate_index(env, g)]); };
  auto on_line = [&](double s) {  // the sample polyline at arc length s
    const double u = s / ds;
    const int k = static_cast<int>(std::floor(u));
    const float w = static_cast<float>(u - k);
    const float3 a = t.position[t.sample_index(env, k % n)], b = t.position[t.sample_index(env, (k + 1) % n)];
    return tg::detail::lerp(a, b, w);
  };
  const tg::gate gate1{t.gate_centre[t.gate_index(env, 1)], t.gate_normal[t.gate_index(env, 1)], 0.0f, 0.0f};
  using tg::detail::operator*;
  using tg::detail::operator+;
  const float3 aside = tg::gate_axes(gate1.normal).left * (params.half_width + 0.5f);
  for (int e = 0; e < t.num_envs; ++e) r.positions[static_cast<std::size_t>(e)] = t.position[t.sample_index(e, 3)];

  // The path: arc lengths (nudged off the gates) and whether the agent is beside gate 1.
  std::vector<std::pair<double, bool>> path;
  auto go = [&](double from, double to, bool beside_gate1) {
    const double step = to > from ? 0.3 : -0.3;
    for (double s = from; step > 0 ? s <= to : s >= to; s += step) {
      double at = s;
      for (int g = 0; g < 4; ++g)
        if (std::fabs(at - arc(g)) < 0.06) at += 0.12;
      path.push_back({at, beside_gate1 && std::fabs(at - arc(1)) < 1.0});
    }
  };
  go(arc(1) - 1.5, arc(2) + 0.9, true);
  go(arc(2) + 0.6, arc(1) - 0.8, false);
  go(arc(1) - 0.5, arc(3) + 0.5, false);

  int next = 1, passed = 0, wrongs = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const double s = path[i].first;
    r.positions[ei] = on_line(s) + (path[i].second ? aside : tg::detail::f3(0.0f, 0.0f, 0.0f));
    r.step();
    const tg::progress_snapshot p = r.progress();
    int want_passed = -1, want_wrong = -1;
    if (i > 0) {
      const double before = path[i - 1].first;
      for (int g = 1; g <= 3; ++g) {
        const bool forwards = before < arc(g) && arc(g) < s, backwards = s < arc(g) && arc(g) < before;
        const bool beside = g == 1 && path[i].second && path[i - 1].second;
        if (beside || !(forwards || backwards)) continue;
        if (g == next) {
          if (forwards) {
            want_passed = g;
            ++next;
            ++passed;
          }
        } else {
          want_wrong = g;
        }
      }
    }
    INFO("env " << env << " step " << i << " s = " << s << " (gates at " << arc(1) << ", " << arc(2) << ", " << arc(3)
                << ") " << describe(entry(p, env)) << " checkpoint_passed " << p.checkpoint_passed[ei]
                << " wrong_checkpoint " << p.wrong_checkpoint[ei]);
    CHECK(p.checkpoint_passed[ei] == want_passed);
    CHECK(p.wrong_checkpoint[ei] == want_wrong);
    CHECK(p.next_gate[ei] == next);
    if (want_wrong >= 0) ++wrongs;
  }
  CHECK(passed == 3);
  CHECK(wrongs == 2);  // gate 2 forwards with gate 1 skipped, then backwards
}

TEST_CASE_TEMPLATE_DEFINE("gate events: reset, spawn and invalid positions clear them", Policy, step_events_clearing) {
  const circle c{50.0};
  rig<Policy> r(user_track_params(3), 10.0f, centreline({c.polyline(2000)}));
  require_valid_user_tracks(r.tracks());
  {
    const tg::progress_snapshot p = r.progress();  // after construction: reset by the generator
    for (int e = 0; e < 3; ++e) {
      CHECK(p.checkpoint_passed[static_cast<std::size_t>(e)] == -1);
      CHECK(p.wrong_checkpoint[static_cast<std::size_t>(e)] == -1);
    }
  }
  for (int e = 0; e < 3; ++e) r.positions[static_cast<std::size_t>(e)] = c.at(8.0);
  r.step();
  for (int e = 0; e < 3; ++e) r.positions[static_cast<std::size_t>(e)] = c.at(12.0);
  r.step();
  {
    const tg::progress_snapshot p = r.progress();
    for (int e = 0; e < 3; ++e) CHECK(p.checkpoint_passed[static_cast<std::size_t>(e)] == 1);
  }
  // Env 0: an invalid position; env 1: regenerated (same track); env 2: steps on without a gate.
  r.positions[0] = v3(std::numeric_limits<double>::quiet_NaN(), 0.0);
  r.positions[2] = c.at(14.0);
  r.regenerate({0, 1, 0}, false);
  r.step();
  const tg::progress_snapshot p = r.progress();
  CHECK(p.checkpoint_passed[0] == -1);
  CHECK(has(p.flags[0], tg::progress_flags::invalid_position));
  CHECK(p.checkpoint_passed[1] == -1);  // the first step after a reset only primes
  CHECK(p.wrong_checkpoint[1] == -1);
  CHECK(p.checkpoint_passed[2] == -1);
  CHECK(p.next_gate[2] == 2);
}

// ---------------------------------------------------------------------------------------------
// Box contacts through the course.

/// The exact signed distance to the band of the circle of radius `rc`, half-width `w`, of
/// the worst corner of the box: each corner's lateral offset n = rc - |corner| (positive left,
/// towards the centre), its distance min(w - n, n + w); the least over the four corners.
inline double circle_clearance(double rc, double w, float3 centre, double yaw, double hx, double hy) {
  double best = 1e30;
  const double fx = std::cos(yaw), fy = std::sin(yaw);
  for (int i = 0; i < 4; ++i) {
    const double sx = (i == 0 || i == 3) ? 1.0 : -1.0, sy = (i == 0 || i == 1) ? 1.0 : -1.0;
    const double x = centre.x + sx * hx * fx - sy * hy * fy, y = centre.y + sx * hx * fy + sy * hy * fx;
    const double n = rc - std::hypot(x, y);
    best = std::min(best, std::min(w - n, n + w));
  }
  return best;
}

/// A box of env `env` and the hint to search its foot from.
struct box_query {
  tg::box b;
  int hint, env;
};

/// collide_box of the query's env, run where the user's kernels run (map_on_backend), with the
/// course's trust margin (half the validation's clearance_margin on a valid track).
struct direct_collide {
  int window;
  float trust_margin;
  TRACK_GEN_HD tg::box_contact operator()(const tg::course_ref& view, const box_query& in) const {
    const tg::track_ref tr = view.track(in.env);
    return tg::collide_box(tr, in.b, in.hint, window, (tr.status() & tg::status::valid) != 0u ? trust_margin : 0.0f);
  }
};

TEST_CASE_TEMPLATE_DEFINE("course step with boxes: contacts equal collide_box and the exact circle", Policy,
                          step_events_contacts) {
  using support = typename rig<Policy>::support;
  const circle c{50.0};
  const int envs = 12;
  const double w = 0.3;
  rig<Policy> r(user_track_params(envs), 10.0f, centreline({c.polyline(2000)}));
  require_valid_user_tracks(r.tracks());
  typename support::template buffer<float4> orientation(envs);
  typename support::template buffer<float2> extents(envs);
  std::vector<float4> q(envs);
  std::vector<float2> h(envs);
  std::vector<double> yaw(envs), hx(envs), hy(envs);
  auto pose = [&](int step) {
    for (int e = 0; e < envs; ++e) {
      const double s = 7.0 * e + 0.9 * step;  // every env moves on, 0.9 m a step
      const double left = 0.35 * std::sin(0.7 * e + 0.3 * step) - 0.05;  // some boxes leave the road
      const double heading = s / c.r + pi / 2 + 0.4 * std::sin(1.3 * e);  // tangent, turned by up to 23 degrees
      yaw[e] = heading;
      hx[e] = 0.1 + 0.02 * (e % 4);
      hy[e] = 0.05 + 0.01 * (e % 3);
      r.positions[static_cast<std::size_t>(e)] = c.at(s, left, 0.1);
      q[static_cast<std::size_t>(e)] = euler_quaternion(heading);
      h[static_cast<std::size_t>(e)] = f2d(hx[e], hy[e]);
    }
    orientation.upload(q, r.stream());
    extents.upload(h, r.stream());
  };
  pose(0);
  r.course().bind(r.device_positions(), orientation.data(), extents.data(), r.stream().get());
  CHECK(r.course().has_boxes());
  int out_of_bounds = 0;
  for (int step = 0; step < 6; ++step) {
    pose(step);
    r.step();
    const tg::contact_snapshot got = r.course().copy_contacts(r.stream().get());
    const tg::progress_snapshot p = r.progress();
    std::vector<box_query> in;
    for (int e = 0; e < envs; ++e) {
      const auto i = static_cast<std::size_t>(e);
      in.push_back({tg::box{r.positions[i], q[i], h[i]}, p.hint[i], e});
    }
    const std::vector<tg::box_contact> want =
        map_on_backend(r, direct_collide{r.course().view().tracker().window(),
                                         0.5f * r.course().params().validate.clearance_margin},
                       in);
    for (int e = 0; e < envs; ++e) {
      const auto i = static_cast<std::size_t>(e);
      INFO("step " << step << " env " << e << " clearance " << got.clearance[i] << " direct " << want[i].clearance);
      CHECK(got.contact_flags[i] == want[i].flags);
      CHECK(same_bits(got.clearance[i], want[i].clearance));
      CHECK(same_bits(got.contact_point[i].x, want[i].nearest.x));
      CHECK(same_bits(got.contact_point[i].y, want[i].nearest.y));
      CHECK(same_bits(got.contact_normal[i].x, want[i].normal.x));
      CHECK(same_bits(got.contact_normal[i].y, want[i].normal.y));
      CHECK(got.contact_border[i] == static_cast<int>(want[i].border));
      // The exact circle: within the polygon's sagitta (2000 sides of r = 50 m: 6e-5 m).
      const double exact = circle_clearance(c.r, w, r.positions[i], yaw[e], hx[e], hy[e]);
      CHECK(std::fabs(got.clearance[i] - exact) < 1e-3);
      CHECK(has(got.contact_flags[i], tg::contact_flags::out_of_bounds) == (got.clearance[i] < 0.0f));
      if (got.clearance[i] < 0.0f) ++out_of_bounds;
    }
  }
  CHECK(out_of_bounds > 0);  // the path covers both cases
  CHECK(out_of_bounds < 6 * envs);

  // A box made invalid after bind (zero extent) and an invalid position: flagged on the device,
  // NaN clearance, the other envs unchanged.
  pose(6);
  h[3] = f2d(0.0, 0.05);
  extents.upload(h, r.stream());
  r.positions[5] = v3(std::numeric_limits<double>::infinity(), 0.0);
  r.step();
  const tg::contact_snapshot got = r.course().copy_contacts(r.stream().get());
  CHECK(has(got.contact_flags[3], tg::contact_flags::invalid));
  CHECK(std::isnan(got.clearance[3]));
  CHECK(has(got.contact_flags[5], tg::contact_flags::invalid));
  CHECK(std::isnan(got.clearance[5]));
  CHECK_FALSE(has(got.contact_flags[4], tg::contact_flags::invalid));
  CHECK(std::isfinite(got.clearance[4]));

  // Positions only again: step leaves the contacts as they were.
  r.course().bind(r.device_positions());
  CHECK_FALSE(r.course().has_boxes());
  pose(7);
  r.step();
  const tg::contact_snapshot kept = r.course().copy_contacts(r.stream().get());
  CHECK(same_bits(kept.clearance[4], got.clearance[4]));
}

TEST_CASE_TEMPLATE_DEFINE("course bind checks the boxes and names what is wrong", Policy, step_events_bind_checks) {
  using support = typename rig<Policy>::support;
  const circle c{50.0};
  const int envs = 4;
  rig<Policy> r(user_track_params(envs), 10.0f, centreline({c.polyline(2000)}));
  typename support::template buffer<float4> orientation(envs);
  typename support::template buffer<float2> extents(envs);
  const std::vector<float4> good_q(envs, euler_quaternion(0.3));
  const std::vector<float2> good_h(envs, f2d(0.2, 0.1));
  auto bind_with = [&](std::vector<float4> q, std::vector<float2> h) {
    orientation.upload(q, r.stream());
    extents.upload(h, r.stream());
    r.course().bind(r.device_positions(), orientation.data(), extents.data(), r.stream().get());
  };
  CHECK_NOTHROW(bind_with(good_q, good_h));
  CHECK(r.course().has_boxes());

  std::vector<float2> h = good_h;
  h[2] = f2d(0.0, 0.1);
  CHECK_THROWS_WITH_AS(bind_with(good_q, h), doctest::Contains("bind: env 2: half_extents.x"), std::invalid_argument);
  h[2] = f2d(0.2, -1.0);
  CHECK_THROWS_WITH_AS(bind_with(good_q, h), doctest::Contains("bind: env 2: half_extents.y"), std::invalid_argument);
  h[2] = f2d(std::numeric_limits<double>::infinity(), 0.1);
  CHECK_THROWS_WITH_AS(bind_with(good_q, h), doctest::Contains("half_extents.x"), std::invalid_argument);

  std::vector<float4> q = good_q;
  q[1].w = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH_AS(bind_with(q, good_h), doctest::Contains("bind: env 1: orientation.w"), std::invalid_argument);
  q = good_q;
  q[3] = q4(0, 0, 0, 2);
  CHECK_THROWS_WITH_AS(bind_with(q, good_h), doctest::Contains("bind: env 3: orientation (its norm)"),
                       std::invalid_argument);
  q[3] = q4(0, 0, 0, 0);
  CHECK_THROWS_WITH_AS(bind_with(q, good_h), doctest::Contains("orientation (its norm)"), std::invalid_argument);

  CHECK_THROWS_WITH_AS(r.course().bind(r.device_positions(), orientation.data(), nullptr, r.stream().get()),
                       doctest::Contains("half_extents is null"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(r.course().bind(r.device_positions(), nullptr, extents.data(), r.stream().get()),
                       doctest::Contains("orientations is null"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(r.course().bind(nullptr, orientation.data(), extents.data(), r.stream().get()),
                       doctest::Contains("positions is null"), std::invalid_argument);
  // A failed bind keeps what was bound before (the good boxes).
  CHECK(r.course().has_boxes());
}

#if defined(__CUDACC__)
/// Bit-for-bit equality of two contact snapshots, with the field named on failure.
inline void check_same_contacts(const tg::contact_snapshot& a, const tg::contact_snapshot& b) {
  REQUIRE(a.clearance.size() == b.clearance.size());
  for (std::size_t i = 0; i < a.clearance.size(); ++i) {
    INFO("env " << i);
    CHECK(a.contact_flags[i] == b.contact_flags[i]);
    CHECK(same_bits(a.clearance[i], b.clearance[i]));
    CHECK(std::memcmp(&a.contact_point[i], &b.contact_point[i], sizeof(float3)) == 0);
    CHECK(std::memcmp(&a.contact_normal[i], &b.contact_normal[i], sizeof(float3)) == 0);
    CHECK(a.contact_border[i] == b.contact_border[i]);
  }
}

/// CUDA only: course.step with boxes captured once (progress step + contact launch in one
/// graph) and replayed gives, bit for bit, what the same steps made eagerly on a twin course
/// give: progress (with the gate events) and contacts.
TEST_CASE_TEMPLATE_DEFINE("captured step with boxes replays bit for bit like eager steps", Policy,
                          step_events_graph_replay) {
  using support = typename rig<Policy>::support;
  const circle c{50.0};
  const int envs = 96;
  rig<Policy> a(user_track_params(envs), 10.0f, centreline({c.polyline(2000)}));
  rig<Policy> b(user_track_params(envs), 10.0f, centreline({c.polyline(2000)}));
  typename support::template buffer<float4> qa(envs), qb(envs);
  typename support::template buffer<float2> ha(envs), hb(envs);
  std::vector<float4> q(envs);
  std::vector<float2> h(envs);
  auto place = [&](int step) {
    for (int e = 0; e < envs; ++e) {
      const double s = 3.3 * e + (0.6 + 0.05 * (e % 7)) * step - (e % 5 == 2 ? 1.7 * step : 0.0);
      const double left = 0.4 * std::sin(0.3 * e + 0.2 * step);
      a.positions[static_cast<std::size_t>(e)] = b.positions[static_cast<std::size_t>(e)] = c.at(s, left);
      q[static_cast<std::size_t>(e)] = euler_quaternion(s / c.r + pi / 2 + 0.3 * std::sin(0.1 * step + e));
      h[static_cast<std::size_t>(e)] = f2d(0.15 + 0.01 * (e % 3), 0.08);
    }
    qa.upload(q, a.stream());
    qb.upload(q, b.stream());
    ha.upload(h, a.stream());
    hb.upload(h, b.stream());
  };
  place(0);
  a.course().bind(a.device_positions(), qa.data(), ha.data(), a.stream().get());
  b.course().bind(b.device_positions(), qb.data(), hb.data(), b.stream().get());
  a.step();  // loads the kernels outside the capture
  b.step();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaStreamBeginCapture(a.stream().raw(), cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  a.course().step(a.stream().get());
  check_cuda(cudaStreamEndCapture(a.stream().raw(), &graph), "cudaStreamEndCapture");
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  int gates = 0;
  // 40 steps at every scale: the first gates in order are crossed only after several steps
  // (8 steps, the old small scale, crossed none under compute-sanitizer on the H200).
  for (int step = 1; step < 40; ++step) {
    place(step);
    // The positions go to a's buffer the same way (rig::step uploads then steps; here the graph).
    check_cuda(cudaMemcpy(a.device_positions(), a.positions.data(), sizeof(float3) * envs, cudaMemcpyHostToDevice),
               "cudaMemcpy (positions)");
    check_cuda(cudaGraphLaunch(exec, a.stream().raw()), "cudaGraphLaunch");
    b.step();
    const tg::progress_snapshot pa = a.progress(), pb = b.progress();
    for (int e = 0; e < envs; ++e) {
      INFO("step " << step << " env " << e);
      CHECK(same_bits(entry(pa, e), entry(pb, e)));
      CHECK(pa.checkpoint_passed[static_cast<std::size_t>(e)] == pb.checkpoint_passed[static_cast<std::size_t>(e)]);
      CHECK(pa.wrong_checkpoint[static_cast<std::size_t>(e)] == pb.wrong_checkpoint[static_cast<std::size_t>(e)]);
      if (pa.checkpoint_passed[static_cast<std::size_t>(e)] >= 0) ++gates;
    }
    check_same_contacts(a.course().copy_contacts(a.stream().get()), b.course().copy_contacts(b.stream().get()));
  }
  CHECK(gates > 0);  // the run passed gates: there was something to compare
  check_cuda(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check_cuda(cudaGraphDestroy(graph), "cudaGraphDestroy");
}
#endif

}  // namespace progress_test

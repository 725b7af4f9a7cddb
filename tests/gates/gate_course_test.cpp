// Host instantiation of gate_course_tests.hpp, and the gate-course parameters' checks.
#include "gate_course_tests.hpp"

#include <random>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(gate_course_sweep, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_determinism, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_progress, std::tuple<track_gen::host_policy>);

TEST_CASE("the gate test's bar crossing agrees with the double-precision segment test") {
  namespace tg = track_gen;
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  int crossing = 0, disagree = 0;
  for (int i = 0; i < 20000; ++i) {
    auto draw = [&] {
      const float yaw = 3.14159265f * unit(gen), pitch = 0.5f * unit(gen);
      return tg::gate{{2.0f * unit(gen), 2.0f * unit(gen), 0.5f * unit(gen)},
                      {std::cos(pitch) * std::cos(yaw), std::cos(pitch) * std::sin(yaw), std::sin(pitch)},
                      0.5f + 0.5f * (unit(gen) + 1.0f), 0.0f};
    };
    const tg::gate a = draw(), b = draw();
    const float half_height = 0.4f;
    auto bar = [](const tg::gate& g, dvec& l0, dvec& l1) {
      const dvec n = to_d(g.normal);
      const dvec left = dvec{-n.y, n.x, 0} * (g.half_width / std::hypot(n.x, n.y));
      l0 = to_d(g.centre) - left;
      l1 = to_d(g.centre) + left;
    };
    dvec a0, a1, b0, b1;
    bar(a, a0, a1);
    bar(b, b0, b1);
    const bool expected = std::fabs(a0.z - b0.z) < 2.0 * half_height && plan_cross(a0, a1, b0, b1);
    crossing += expected ? 1 : 0;
    disagree += tg::detail::gate_bars_cross(a, b, half_height) != expected ? 1 : 0;
  }
  MESSAGE(crossing << " of 20000 random gate pairs cross, " << disagree << " verdicts differ");
  CHECK(crossing > 1000);
  CHECK(disagree <= 2);  // only pairs whose crossing point sits at a bar's end within float rounding
}

TEST_CASE("gate-course parameters out of range are refused with their name and range") {
  namespace tg = track_gen;
  auto p = tg::presets::gate_course(4);
  p.gates.min_gates = 2;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::gate_course_pipeline, tg::host_policy>(p, 10.0f)),
                       doctest::Contains("track_params.gates.min_gates = 2 is out of range: expected [3, 256]"),
                       std::invalid_argument);
  p = tg::presets::gate_course(4);
  p.gates.max_gates = 5;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::gate_course_pipeline, tg::host_policy>(p, 10.0f)),
                       doctest::Contains("track_params.gates.max_gates = 5 is out of range"), std::invalid_argument);
}

TEST_CASE("a gate storage smaller than the gate count fails the gate test instead of writing past it") {
  namespace tg = track_gen;
  auto p = tg::presets::gate_course(32);
  p.gates.min_gates = p.gates.max_gates = 12;
  p.validate.max_attempts = 2;
  // 150 m / 20 m: 8 gate slots for 12 gates.
  tg::course<tg::presets::gate_course_pipeline, tg::host_policy> course(p, 20.0f);
  REQUIRE(course.max_gates() == 8);
  const tg::track_snapshot s = course.copy_tracks({});
  for (int e = 0; e < s.num_envs; ++e) {
    CAPTURE(e);
    CHECK((s.status[e] & tg::status::fallback) != 0u);
    CHECK((s.status[e] & tg::status::fail_gates) != 0u);
    CHECK(s.num_gates[e] <= 8);
  }
}
}  // namespace tg_test

// Host instantiation of gate_sequence_tests.hpp, and the parameters gate sequences refuse.
#include "gate_sequence_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(gate_sequence_checks, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_sequence_vs_pipeline, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_sequence_masks, std::tuple<track_gen::host_policy>);

TEST_CASE("gate sequences refuse what they cannot build, naming the parameter") {
  namespace tg = track_gen;
  auto p = tg::presets::gate_course(4);
  p.generator.family = tg::generator_family::voronoi;
  CHECK_THROWS_WITH_AS((tg::gate_sequences<tg::host_policy>{p}), doctest::Contains("selects the 'voronoi' family"),
                       std::invalid_argument);
  p = tg::presets::gate_course(4);
  p.generator.weights[static_cast<int>(tg::generator_family::checkpoint)] = 0.5f;
  p.generator.weights[0] = 1.0f;
  CHECK_THROWS_WITH_AS((tg::gate_sequences<tg::host_policy>{p}), doctest::Contains("selects the 'checkpoint' family"),
                       std::invalid_argument);
  p = tg::presets::gate_course(4);
  p.polar.control_points = 300;
  CHECK_THROWS_WITH_AS((tg::gate_sequences<tg::host_policy>{p}),
                       doctest::Contains("track_params.polar.control_points = 300 is out of range: expected [4, 256]"),
                       std::invalid_argument);
  p = tg::presets::gate_course(4);
  p.gates.min_gates = 2;
  CHECK_THROWS_WITH_AS((tg::gate_sequences<tg::host_policy>{p}),
                       doctest::Contains("track_params.gates.min_gates = 2 is out of range: expected [3, 256]"),
                       std::invalid_argument);
  p = tg::presets::gate_course(0);
  CHECK_THROWS_AS((tg::gate_sequences<tg::host_policy>{p}), std::invalid_argument);
}

TEST_CASE("a gate_sequence_ref is trivially copyable, and the owner move-only") {
  static_assert(std::is_trivially_copyable_v<track_gen::gate_sequence_ref>, "views are passed by value into kernels");
  static_assert(!std::is_copy_constructible_v<track_gen::gate_sequences<track_gen::host_policy>>, "owners are move-only");
  static_assert(std::is_nothrow_move_constructible_v<track_gen::gate_sequences<track_gen::host_policy>>, "owners move");
  auto p = track_gen::presets::gate_course(2);
  track_gen::gate_sequences<track_gen::host_policy> a(p);
  track_gen::gate_sequences<track_gen::host_policy> b(std::move(a));
  CHECK_THROWS_AS(a.view(), std::logic_error);  // NOLINT(bugprone-use-after-move): what a moved-from owner does
  b.generate();
  CHECK(b.view().count(0) >= p.gates.min_gates);
}
}  // namespace tg_test

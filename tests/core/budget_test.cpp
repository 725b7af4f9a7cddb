// The cost of a parameter set, stated before building and refused past a documented budget
// unless the user raises it (issue 17, item 9): legal parameters could cost an hour per env
// (1024 control points, 1000 polygon separation iterations, 255 attempts: 15.7 s per attempt on the CPU),
// and gates every 0.1 m of a 1e6 m length_max reserved 320 MB per env for a few hundred gates
// used. track_gen::estimate_cost states the worst-case operations per track and the bytes per
// env; construction (and course::required_bytes) refuses a set past track_params.budget with a
// message that names the budget and how to raise it; the presets stay within it.
#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <stdexcept>
#include <string>

namespace {

namespace tg = track_gen;

/// The plan's sizes where no pipeline is known (estimate_cost's).
const tg::detail::pipeline_sizes random_sizes{&tg::detail::random_control_points, &tg::detail::random_dense_samples};
using host_course = tg::course<tg::presets::track_pipeline, tg::host_policy>;
using long_course = tg::course<tg::presets::long_track_pipeline, tg::host_policy>;

/// The hour per env: 1024 control points (at 8 samples per segment, the most that fit one
/// block's scratch), 1000 polygon separation iterations, 255 attempts.
tg::track_params hour_per_env() {
  tg::track_params p = tg::presets::track(1);
  p.polar.control_points = 1024;
  p.spline.samples_per_segment = 8;
  p.polygon_separation.max_iterations = 1000;
  p.validate.max_attempts = 255;
  return p;
}

/// 320 MB per env: gates every 0.1 m of a 1e6 m length_max (1e7 gates).
tg::track_params gates_per_env() {
  tg::track_params p = tg::presets::track(1);
  p.validate.length_max = 1e6f;
  return p;
}

}  // namespace

TEST_CASE("estimate_cost states the worst-case work and memory of a parameter set") {
  const tg::cost_estimate hour = tg::estimate_cost(hour_per_env(), 1.0f);
  // 255 attempts x 1000 iterations x 1024^2 point-segment tests, plus the shaping.
  CHECK(hour.operations_per_track >= 255.0 * 1000.0 * 1024.0 * 1024.0);
  CHECK(hour.operations_per_track < 1.01 * 255.0 * 1000.0 * 1024.0 * 1024.0);
  const tg::cost_estimate gates = tg::estimate_cost(gates_per_env(), 0.1f);
  CHECK(gates.gates_per_track == 10000000);
  CHECK(gates.bytes_per_env >= 32.0 * 1e7);
  // The presets: well inside the default budget.
  const tg::budget_params defaults;
  for (const auto& [name, p, grid] : {std::make_tuple("track", tg::presets::track(1), false),
                                      std::make_tuple("drone_track", tg::presets::drone_track(1), false),
                                      std::make_tuple("long_track", tg::presets::long_track(1), true)}) {
    CAPTURE(name);
    const tg::cost_estimate c = tg::estimate_cost(p, 1.0f, grid);
    CHECK(c.operations_per_track > 0.0);
    CHECK(c.operations_per_track <= defaults.operations_per_track / 10.0);
    CHECK(c.bytes_per_env <= defaults.bytes_per_env / 100.0);
  }
}

TEST_CASE("1024 control points x 1000 iterations x 255 attempts is refused until the budget is raised") {
  tg::track_params p = hour_per_env();
  CHECK_THROWS_WITH_AS(host_course::required_bytes(p, 1.0f),
                       doctest::Contains("more than the budget track_params.budget.operations_per_track = 1e10"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(host_course::required_bytes(p, 1.0f),
                       doctest::Contains("raise track_params.budget.operations_per_track to accept this cost"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(host_course(p, 1.0f, tg::host_stream{}), doctest::Contains("budget.operations_per_track"),
                       std::invalid_argument);
  // Raised: accepted (the check alone: building it would take the hour).
  p.budget.operations_per_track = 1e12f;
  CHECK(host_course::required_bytes(p, 1.0f) > 0);
  // The budget of variants is the batch's.
  tg::track_variants v;
  v.variants = {tg::presets::track(1), hour_per_env()};
  v.env_variant = {1};
  tg::track_params batch = tg::presets::track(1);
  CHECK_THROWS_WITH_AS(tg::detail::generator_inputs::make(batch, 1.0f, nullptr, &v, false, static_cast<int>(tg::generator_family::polar), random_sizes, 0, 0),
                       doctest::Contains("budget.operations_per_track"), std::invalid_argument);
  batch.budget.operations_per_track = 1e12f;
  CHECK_NOTHROW(tg::detail::generator_inputs::make(batch, 1.0f, nullptr, &v, false, static_cast<int>(tg::generator_family::polar), random_sizes, 0, 0));
}

TEST_CASE("gates every 0.1 m of a 1e6 m length_max (320 MB per env) are refused until the budget is raised") {
  tg::track_params p = gates_per_env();
  CHECK_THROWS_WITH_AS(host_course::required_bytes(p, 0.1f),
                       doctest::Contains("10000000 gates of 32 bytes"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(host_course::required_bytes(p, 0.1f),
                       doctest::Contains("more than the budget track_params.budget.bytes_per_env = 1e8"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(host_course::required_bytes(p, 0.1f),
                       doctest::Contains("raise track_params.budget.bytes_per_env to accept it"), std::invalid_argument);
  p.budget.bytes_per_env = 1e9f;
  CHECK(host_course::required_bytes(p, 0.1f) >= 320000000u);
}

TEST_CASE("the presets construct within the default budget") {
  host_course a(tg::presets::track(2), 1.0f, tg::host_stream{});
  host_course b(tg::presets::drone_track(2), 1.0f, tg::host_stream{});
  long_course c(tg::presets::long_track(1), 10.0f, tg::host_stream{});
  CHECK(a.num_envs() == 2);
  CHECK(b.num_envs() == 2);
  CHECK(c.num_envs() == 1);
}

TEST_CASE("the repulsive family's flow counts: a slow ratchet to a long curve is refused until the budget is raised") {
  using growth_course = tg::course<tg::presets::repulsive_pipeline, tg::host_policy>;
  tg::track_params p = tg::presets::track(1);
  p.generator.family = tg::generator_family::repulsive;
  // The defaults: 16 attempts x 252 iterations x 3 x 256^2, within the budget.
  const double defaults = tg::estimate_cost(p, 1.0f).operations_per_track;
  const double flow = 16.0 * tg::stages::repulsive_growth::max_iterations(p.repulsive_growth) * 3.0 * 256.0 * 256.0;
  CHECK(tg::stages::repulsive_growth::max_iterations(p.repulsive_growth) == 252);  // 1.6 x 132, rounded up, + 40: ratchet to 4.8
  CHECK(defaults >= flow);
  CHECK(defaults < p.budget.operations_per_track);
  // Ratchet 1e-4 to 20 x (29,959 ratchet iterations: 47,975 in all), 512 points: about 6e11
  // operations.
  p.repulsive_growth.ratchet_rate = 1e-4f;
  p.repulsive_growth.grow_mult_max = 20.0f;
  p.repulsive_growth.points = 512;
  p.validate.length_max = 1000.0f;
  CHECK_THROWS_WITH_AS(growth_course::required_bytes(p, 1.0f), doctest::Contains("repulsive family validate.max_attempts"),
                       std::invalid_argument);
  p.budget.operations_per_track = 1e12f;
  CHECK(growth_course::required_bytes(p, 1.0f) > 0u);
}

// presets::one_family_pipeline against presets::family_pipeline with the same family selected
// (the same stage code: bit for bit on the host), and the selections it refuses.
#include "geometry/backend_support.hpp"
#include "geometry/elevation_tests.hpp"

namespace tg_test {

namespace {
template <class Stage>
void one_family_matches(std::uint64_t seed) {
  namespace tg = track_gen;
  auto p = tg::presets::track(scaled(256, 8, 16));
  p.seed = seed;
  p.generator.family = Stage::family;
  CAPTURE(tg::generator_family_names[static_cast<int>(Stage::family)]);
  same_tracks<tg::presets::one_family_pipeline<Stage>, tg::presets::family_pipeline, tg::host_policy>(p, 0.6f);
  // The family field names the family (a one-family pipeline knows it without drawing it).
  tg::course<tg::presets::one_family_pipeline<Stage>, tg::host_policy> c(p, 0.6f);
  const tg::track_snapshot s = c.copy_tracks({});
  for (int e = 0; e < s.num_envs; ++e) CHECK(s.family[static_cast<std::size_t>(e)] == static_cast<int>(Stage::family));
}
}  // namespace

TEST_CASE("one_family_pipeline builds family_pipeline's tracks of that family, bit for bit (host)") {
  namespace tg = track_gen;
  one_family_matches<tg::stages::bezier_corners>(5);
  one_family_matches<tg::stages::hull_corners>(6);
  one_family_matches<tg::stages::voronoi_sites>(7);
  one_family_matches<tg::stages::checkpoint_walk>(8);
  static_assert(tg::presets::bezier_pipeline::fixed_family == static_cast<int>(tg::generator_family::bezier),
                "bezier_pipeline draws bezier tracks");
  static_assert(tg::presets::family_pipeline::family_rule == tg::detail::any_family_but_repulsive,
                "family_pipeline draws any family but repulsive");
  static_assert(tg::presets::any_family_pipeline::family_rule == tg::detail::any_family,
                "any_family_pipeline draws any family");
  static_assert(tg::presets::repulsive_pipeline::fixed_family == static_cast<int>(tg::generator_family::repulsive),
                "repulsive_pipeline draws repulsive tracks");
  static_assert(tg::presets::track_pipeline::family_rule == static_cast<int>(tg::generator_family::polar),
                "track_pipeline draws polar tracks");
}

namespace {
// The elevated forms with each elevation profile of elevation_cases(): what the Python course
// builds for a batch of one family.
template <class Stage>
void elevated_one_family_matches(std::uint64_t seed) {
  namespace tg = track_gen;
  for (const elevation_case& ec : elevation_cases()) {
    auto p = ec.params;
    p.num_envs = scaled(128, 8, 16);
    p.seed = seed;
    p.generator.family = Stage::family;
    CAPTURE(tg::generator_family_names[static_cast<int>(Stage::family)]);
    CAPTURE(ec.name);
    same_tracks<tg::presets::elevated_one_family_pipeline<Stage>, tg::presets::elevated_family_pipeline, tg::host_policy>(p, 0.6f);
  }
}
}  // namespace

TEST_CASE("elevated_one_family_pipeline builds elevated_family_pipeline's tracks of that family, bit for bit (host)") {
  namespace tg = track_gen;
  elevated_one_family_matches<tg::stages::bezier_corners>(15);
  elevated_one_family_matches<tg::stages::hull_corners>(16);
  elevated_one_family_matches<tg::stages::voronoi_sites>(17);
  elevated_one_family_matches<tg::stages::checkpoint_walk>(18);
}

TEST_CASE("one_family_pipeline refuses another family or a mix, naming the field and the remedy") {
  namespace tg = track_gen;
  auto p = tg::presets::track(4);
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::hull_pipeline, tg::host_policy>(p, 0.6f)),
                       doctest::Contains("track_params.generator selects the 'polar' family, but this pipeline draws hull "
                                         "tracks only (presets::one_family_pipeline): set generator.family = hull"),
                       std::invalid_argument);
  p.generator.family = tg::generator_family::hull;
  p.generator.weights[0] = 1.0f;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::hull_pipeline, tg::host_policy>(p, 0.6f)),
                       doctest::Contains("selects by weights the families 'polar', but this pipeline draws hull"),
                       std::invalid_argument);
  p.generator.weights[2] = 1.0f;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::hull_pipeline, tg::host_policy>(p, 0.6f)),
                       doctest::Contains("selects by weights the families 'polar', 'hull'"), std::invalid_argument);
  p.generator.weights[0] = 0.0f;  // a weight on hull alone draws hull only, whatever generator.family says
  p.generator.family = tg::generator_family::polar;
  CHECK_NOTHROW((tg::course<tg::presets::hull_pipeline, tg::host_policy>(p, 0.6f)));
  p.generator.weights[2] = 0.0f;
  p.generator.family = tg::generator_family::hull;
  CHECK_NOTHROW((tg::course<tg::presets::hull_pipeline, tg::host_policy>(p, 0.6f)));
  // The polar-only pipeline's message is unchanged.
  p.generator.family = tg::generator_family::bezier;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::track_pipeline, tg::host_policy>(p, 0.6f)),
                       doctest::Contains("this pipeline's generate stage is stages::random_polar (polar tracks only)"),
                       std::invalid_argument);
}

}  // namespace tg_test

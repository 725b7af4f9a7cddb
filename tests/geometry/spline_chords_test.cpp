// Host instantiation of spline_chords_tests.hpp, and the scratch layout of the pipelines that
// store no dense samples.
#include "spline_chords_tests.hpp"

#include <algorithm>
#include <string>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(spline_chords_tracks, std::tuple<track_gen::host_policy>);

namespace {
/// `smaller`: whether the family's own arrays take less room than its dense samples (the
/// repulsive family's flow arrays take as much).
template <class FamilyStage>
void chords_layout(bool smaller) {
  namespace tg = track_gen;
  using chords = tg::presets::one_family_pipeline<FamilyStage>;
  using points = points_pipeline<FamilyStage>;
  static_assert(!chords::stores_dense_points && points::stores_dense_points,
                "one_family_pipeline keeps the chords only; the catmull_rom pipeline stores the samples");
  tg::track_params p = tg::presets::track(64);
  p.generator.family = FamilyStage::family;
  const std::string name = tg::generator_family_names[static_cast<int>(FamilyStage::family)];
  CAPTURE(name);
  const auto plan = [&](tg::detail::pipeline_sizes sizes) {
    return tg::detail::make_generator_plan(p, 0.6f, nullptr, tg::user_tracks::kind::control_points, {}, false, sizes, 0, 0)
        .scratch;
  };
  const tg::detail::scratch_layout c = plan(tg::detail::sizes_of<chords>());
  const tg::detail::scratch_layout s = plan(tg::detail::sizes_of<points>());
  // The same capacities but the dense region's points: the family stage's own arrays.
  CHECK(c.dense_capacity == s.dense_capacity);
  CHECK(c.control_capacity == s.control_capacity);
  CHECK(s.dense_points_capacity == s.dense_capacity);
  CHECK(c.dense_points_capacity == FamilyStage::max_scratch_points(p));
  CHECK((c.dense_points_capacity < c.dense_capacity) == smaller);
  // The region holds the larger of those points and the separation's lists.
  const std::size_t region = std::max(sizeof(float3) * static_cast<std::size_t>(c.dense_points_capacity),
                                      sizeof(tg::detail::separation_list) * static_cast<std::size_t>(c.separation_capacity));
  CHECK(c.dense_s - c.dense == tg::detail::scratch_layout::align(region));
  CHECK(s.bytes - c.bytes == (s.dense_s - s.dense) - (c.dense_s - c.dense));
  MESSAGE(name << ": " << s.bytes << " -> " << c.bytes << " scratch bytes per track");
}
}  // namespace

TEST_CASE("family_pipeline's scratch holds the drawn families' own points") {
  namespace tg = track_gen;
  static_assert(!tg::presets::family_pipeline::stores_dense_points && family_points_pipeline::stores_dense_points,
                "family_pipeline keeps the chords only");
  tg::track_params p = tg::presets::track(64);
  const auto points = [&] { return tg::presets::family_pipeline::max_dense_points(p); };
  CHECK(points() == 0);  // polar keeps nothing in the dense region
  p.generator.family = tg::generator_family::checkpoint;
  CHECK(points() == tg::stages::checkpoint_walk::max_scratch_points(p));
  p.generator.family = tg::generator_family::polar;
  p.generator.weights[static_cast<int>(tg::generator_family::hull)] = 1.0f;
  p.generator.weights[static_cast<int>(tg::generator_family::voronoi)] = 1.0f;
  CHECK(points() == std::max(tg::stages::hull_corners::max_scratch_points(p), tg::stages::voronoi_sites::max_scratch_points(p)));
}

TEST_CASE("one_family_pipeline's scratch holds no dense samples, only the family stage's own points") {
  namespace tg = track_gen;
  chords_layout<tg::stages::bezier_corners>(true);
  chords_layout<tg::stages::hull_corners>(true);
  chords_layout<tg::stages::voronoi_sites>(true);
  chords_layout<tg::stages::checkpoint_walk>(true);
  chords_layout<tg::stages::repulsive_growth>(false);
}
}  // namespace tg_test

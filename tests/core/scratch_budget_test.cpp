// The per-track scratch memory (shared memory of one block on the GPU) that make_generator_plan lays out,
// against the 227 KiB a block may opt into on sm_80 / sm_90 (232,448 bytes; NVIDIA's Hopper and
// Ampere tuning guides): the presets and large documented parameter values must fit, and the
// spline's segments share one region with the polygon separation stage's partial sums (they are never
// live together), so adding that stage's work split did not shrink what fits.
#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <cstddef>
#include <vector>

namespace {

namespace tg = track_gen;
constexpr std::size_t sm90_block_optin_bytes = 232448;

std::size_t scratch_bytes(const tg::track_params& p) {
  return tg::detail::make_generator_plan(p, 1.0f, nullptr, tg::user_tracks::kind::control_points, {}, false,
                                         {&tg::detail::random_control_points, &tg::detail::random_dense_samples}, 0, 0).scratch.bytes;
}

}  // namespace

TEST_CASE("the presets' scratch fits one sm_90 block") {
  CHECK(scratch_bytes(tg::presets::track(1)) <= sm90_block_optin_bytes);
  CHECK(scratch_bytes(tg::presets::drone_track(1)) <= sm90_block_optin_bytes);
  CHECK(scratch_bytes(tg::presets::long_track(1)) <= sm90_block_optin_bytes);
}

TEST_CASE("1024 control points with 8 samples per segment fit one sm_90 block") {
  tg::track_params p = tg::presets::track(1);
  p.polar.control_points = 1024;
  p.spline.samples_per_segment = 8;
  const std::size_t bytes = scratch_bytes(p);
  INFO("scratch " << bytes << " bytes");
  CHECK(bytes <= sm90_block_optin_bytes);
}

TEST_CASE("the spline's segments and the repulsive partial sums share one region") {
  tg::track_params p = tg::presets::track(1);
  p.polar.control_points = 256;
  const tg::detail::scratch_layout l =
      tg::detail::make_generator_plan(p, 1.0f, nullptr, tg::user_tracks::kind::control_points, {}, false,
                                             {&tg::detail::random_control_points, &tg::detail::random_dense_samples}, 0, 0).scratch;
  tg::detail::workspace ws{};
  std::vector<unsigned char> base(l.bytes);
  ws.bind_scratch(base.data(), l);
  CHECK(static_cast<void*>(ws.separation) == static_cast<void*>(ws.spline));
  // The region holds the larger of the two: 256 segments of 48 bytes, and 256 points x
  // separation_chunks(256) = 1 partial (a float3) a point.
  const std::size_t region = l.dense - l.spline;
  CHECK(region >= sizeof(tg::detail::spline_segment) * 256);
  CHECK(region >= sizeof(tg::detail::separation_partial) * 256 * tg::detail::separation_chunks(256));
  CHECK(region < sizeof(tg::detail::spline_segment) * 256 + sizeof(tg::detail::separation_partial) * 256);
}

TEST_CASE("separation_chunks keeps about 128 work items and at most 8 chunks a point") {
  for (int m = 4; m <= 1024; ++m) {
    const int c = tg::detail::separation_chunks(m);
    CHECK(c >= 1);
    CHECK(c <= 8);
    CHECK(m * c <= (m > 128 ? m : 128));
  }
  CHECK(tg::detail::separation_chunks(12) == 8);  // the track preset: the split measured on the H200
}

namespace {
template <class Generate>
using single_family_pipeline = tg::pipeline<Generate, tg::stages::polygon_separation, tg::stages::catmull_rom, tg::stages::resample,
                                            tg::stages::frames, tg::stages::checkpoints, tg::stages::validate>;

/// A generate stage that does not say how many control points it writes (as a user's might not).
struct silent_generate {
  static constexpr tg::detail::stage_role role = tg::detail::stage_role::generate;
};

template <class Pipeline>
int planned_control_capacity(const tg::track_params& p) {
  return tg::detail::make_generator_plan(p, 1.0f, nullptr, tg::user_tracks::kind::control_points, {}, false,
                                         tg::detail::sizes_of<Pipeline>(), 0, 0)
      .scratch.control_capacity;
}
}  // namespace

TEST_CASE("the control-point scratch is sized by the pipeline's own generate stage") {
  tg::track_params p = tg::presets::track(1);
  p.bezier.corners_max = 20;  // 20 x 8 = 160 points: far more than polar's 12
  p.hull.corners_max = 24;
  REQUIRE(tg::stages::bezier_corners::max_control_points(p) > p.polar.control_points);
  // The pipeline's count is its generate stage's, whatever generator.family selects (a pipeline
  // without stages::random_family ignores it).
  CHECK(single_family_pipeline<tg::stages::bezier_corners>::max_control_points(p) ==
        tg::stages::bezier_corners::max_control_points(p));
  CHECK(single_family_pipeline<tg::stages::hull_corners>::max_control_points(p) ==
        tg::stages::hull_corners::max_control_points(p));
  CHECK(tg::presets::track_pipeline::max_control_points(p) == p.polar.control_points);
  // random_family counts the families the selection can draw.
  CHECK(tg::presets::family_pipeline::max_control_points(p) == p.polar.control_points);
  p.generator.family = tg::generator_family::bezier;
  CHECK(tg::presets::family_pipeline::max_control_points(p) == tg::stages::bezier_corners::max_control_points(p));
  // A generate stage that does not say falls back to polar.control_points.
  CHECK(tg::pipeline<silent_generate, tg::stages::validate>::max_control_points(p) == p.polar.control_points);
  // The plan holds them: polar's 12 points would not.
  p.generator.family = tg::generator_family::polar;
  CHECK(planned_control_capacity<single_family_pipeline<tg::stages::bezier_corners>>(p) >=
        tg::stages::bezier_corners::max_control_points(p));
  CHECK(planned_control_capacity<single_family_pipeline<tg::stages::hull_corners>>(p) >=
        tg::stages::hull_corners::max_control_points(p));
}

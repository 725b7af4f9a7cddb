#pragma once
/// @file
/// stages::catmull_rom_chords (the spline of the one-family pipelines and of family_pipeline: the
/// dense samples' chords, no dense samples stored) against stages::catmull_rom in an otherwise
/// equal pipeline: the same tracks, bit for bit, over two episodes, for every family with a
/// one-family pipeline and for family_pipeline's default (polar) and five-family mix.
/// Templated over the backend policy; instantiated in spline_chords_test.cpp (host, with the
/// scratch layout's checks) and spline_chords_test.cu (CUDA).

#include "elevation_tests.hpp"

#include <track_gen/track_gen.hpp>

namespace tg_test {

/// FamilyStage's one-family pipeline with the spline that stores its dense samples.
template <class FamilyStage>
using points_pipeline =
    track_gen::pipeline<FamilyStage, track_gen::detail::family_separation_t<FamilyStage>, track_gen::stages::catmull_rom,
                        track_gen::stages::resample, track_gen::stages::frames, track_gen::stages::checkpoints,
                        track_gen::stages::validate>;

/// presets::family_pipeline with the spline that stores its dense samples.
using family_points_pipeline =
    track_gen::pipeline<track_gen::stages::random_family, track_gen::stages::polygon_separation,
                        track_gen::stages::catmull_rom, track_gen::stages::resample, track_gen::stages::frames,
                        track_gen::stages::checkpoints, track_gen::stages::validate>;

template <class FamilyStage, class Policy>
void chords_match_points(std::uint64_t seed, int envs) {
  namespace tg = track_gen;
  tg::track_params p = tg::presets::track(envs);
  p.seed = seed;
  p.generator.family = FamilyStage::family;
  CAPTURE(tg::generator_family_names[static_cast<int>(FamilyStage::family)]);
  same_tracks<tg::presets::one_family_pipeline<FamilyStage>, points_pipeline<FamilyStage>, Policy>(p, 0.6f);
}

TEST_CASE_TEMPLATE_DEFINE("one_family_pipeline's chords-only spline builds the tracks of the spline with stored samples, bit for bit",
                          Policy, spline_chords_tracks) {
  namespace tg = track_gen;
  chords_match_points<tg::stages::bezier_corners, Policy>(41, scaled(1024, 16, 16));
  chords_match_points<tg::stages::hull_corners, Policy>(42, scaled(1024, 16, 16));
  chords_match_points<tg::stages::voronoi_sites, Policy>(43, scaled(1024, 16, 16));
  chords_match_points<tg::stages::checkpoint_walk, Policy>(44, scaled(1024, 16, 16));
  chords_match_points<tg::stages::repulsive_growth, Policy>(45, scaled(32, 4, 4));
  for (const bool mix : {false, true}) {
    CAPTURE(mix);
    tg::track_params p = tg::presets::track(scaled(1024, 16, 16));
    p.seed = 46;
    if (mix)
      for (int f = 0; f < tg::num_generator_families; ++f)
        p.generator.weights[f] = f == static_cast<int>(tg::generator_family::repulsive) ? 0.0f : 1.0f;
    same_tracks<tg::presets::family_pipeline, family_points_pipeline, Policy>(p, 0.6f);
  }
}

}  // namespace tg_test

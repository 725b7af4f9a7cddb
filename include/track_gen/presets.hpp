#pragma once
/// @file
/// Presets: a pipeline type plus documented default parameters.

#include <track_gen/params.hpp>
#include <track_gen/pipeline.hpp>

namespace track_gen::presets {

/// The pipeline of the random `track` preset (DESIGN §3).
using track_pipeline = pipeline<stages::random_polar, stages::repulsive, stages::catmull_rom, stages::resample,
                                stages::frames, stages::checkpoints, stages::validate>;

/// A small closed circuit for RC cars or micro drones, flat (z = 0).
///
/// Defaults and why: 12 control points at radii 4-7 m give centrelines of roughly 30-50 m
/// (accepted 10-60 m); half-width 0.3 m fits a 1:10 RC car with room to overtake nothing;
/// minimum turn radius 0.4 m is about the tightest turn of such a car at low speed; the
/// repulsive stage keeps control points 1.5 m from non-adjacent polygon sides so that the
/// spline leaves room for two track widths (2 * 0.3 m + 0.1 m margin); 256 samples give about
/// 0.1-0.2 m between samples; 16 attempts before the ellipse fallback.
inline track_params track(int num_envs) {
  track_params p;
  p.num_envs = num_envs;
  return p;
}

/// A 3D variant for drone racing: as `track`, with control-point elevations in [0.5, 2.5] m and
/// gates 0.5 m high on each side of the centreline.
inline track_params drone_track(int num_envs) {
  track_params p = track(num_envs);
  p.polar.elevation_min = 0.5f;
  p.polar.elevation_max = 2.5f;
  p.half_width = 0.5f;
  p.gate_half_height = 0.5f;
  p.repulsive.clearance = 2.0f;
  return p;
}

}  // namespace track_gen::presets

#pragma once
/// @file
/// User-supplied tracks (a real circuit): control points interpolated by the spline stage, or a
/// centreline polyline taken as is; both go through resample, frames, checkpoints and validate.

#include <track_gen/detail/config.hpp>

#include <vector>

namespace track_gen {

struct user_tracks {
  enum class kind {
    control_points,  ///< points the closed centripetal Catmull-Rom spline passes through
    centreline,      ///< a closed polyline (the dense centreline itself)
  };
  kind type = kind::control_points;
  /// One closed track per env, or exactly one shared by every env. Host memory, metres,
  /// env-local frame. Need not repeat the first point at the end (a repeat is dropped), and
  /// consecutive points closer than 1e-6 of the track's extent are merged.
  std::vector<std::vector<float3>> tracks;
};

}  // namespace track_gen

#pragma once
/// @file
/// User-supplied tracks (a real circuit): control points interpolated by the spline stage, or a
/// centreline polyline taken as is; both go through resample, frames, checkpoints and validate.

#include <track_gen/detail/config.hpp>
#include <track_gen/params.hpp>

#include <cstdint>
#include <vector>

namespace track_gen {

struct user_tracks {
  enum class kind {
    control_points,  ///< points the closed centripetal Catmull-Rom spline passes through
    centreline,      ///< a closed polyline (the dense centreline itself)
  };
  /// One of the two kinds above; any other value (an integer cast to `kind`) is rejected at
  /// construction with std::invalid_argument naming `user_tracks.type`.
  kind type = kind::control_points;
  /// One closed track per env, or exactly one shared by every env. Host memory, metres,
  /// env-local frame. Need not repeat the first point at the end (a repeat is dropped), and
  /// consecutive points closer than 1e-6 of the track's extent are merged. At most 16384
  /// distinct points per track, and the track's scratch (16 bytes per dense sample: the points
  /// of a centreline, or points x samples_per_segment; 4 for the latter in the pipelines that
  /// store no dense samples, stages::catmull_rom_chords) must fit 227 KiB: docs/parameters.md.
  std::vector<std::vector<float3>> tracks;
  /// Moves each track to a frame centred on it: the origin is the mean of its points rounded to
  /// whole metres (exact in float32), subtracted in double precision before the points become
  /// float32 again. The generated track, its gates and the positions `step` reads are then in
  /// that frame (subtract the env's `origin` field from your positions), which keeps 0.5 mm
  /// resolution for any circuit up to 8 km across wherever it lies (a circuit in UTM
  /// coordinates, 1e5 to 1e6 m from the origin: float32 spacing 7.8 to 62 mm). Off (false): the
  /// tracks stay where they are, `origin` is zero, and a track with a given point beyond 8192 m
  /// of the origin on some axis gets status::far_from_origin (the points given are checked, not
  /// the spline through them, which may bulge a little beyond).
  bool recentre = false;
};

namespace detail {
/// Where one user track lies after sanitize(): the origin subtracted from its points (zero
/// unless user_tracks::recentre) and the status bits every env of the track gets.
struct user_frame {
  float3 origin;
  std::uint32_t status;
};
}  // namespace detail

/// Per-environment generation parameters (curriculum levels, mixed difficulties): env e
/// generates with `variants[env_variant[e]]`. The batch-wide fields of a variant (num_envs,
/// env_offset, seed, num_samples, gate_half_height, and the loop shape of a grid-scope stage:
/// dense_repulsive.max_windows, iterations_per_window and tolerance) are ignored: the batch's
/// params rule them. Given those, an env's track depends only on its own variant, so envs of
/// other variants are the same, bit for bit, as in a batch without them.
struct track_variants {
  std::vector<track_params> variants;  ///< at least one; host memory
  std::vector<int> env_variant;        ///< [E], each in [0, variants.size())
};

}  // namespace track_gen

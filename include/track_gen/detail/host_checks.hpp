#pragma once
/// @file
/// Host-side validation of parameters and user tracks (clear errors naming the parameter and
/// its valid range), and the capacities derived from them.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/user_tracks.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <vector>

namespace track_gen::detail {

/// `value` as text, as an ostream would print it by default (integers exactly, floating point
/// as %g). No iostreams: error messages built with a std::ostringstream crashed the torch
/// extension as built on the H200 machine; built this way they raise ValueError there
/// (docs/gpu-report.md, runs from 9ffa800 on).
template <class T>
std::string format_number(T value) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", static_cast<double>(value));
    return text;
  }
}

template <class T>
void require_range(const char* name, T value, T lo, T hi) {
  if (!(value >= lo && value <= hi)) {
    throw std::invalid_argument(std::string("track_gen: ") + name + " = " + format_number(value) +
                                " is out of range: expected [" + format_number(lo) + ", " + format_number(hi) + "]");
  }
}

inline void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("track_gen: " + message);
}

inline void check_params(const track_params& p, float checkpoint_spacing) {
  constexpr float big = 1e6f;
  require_range("track_params.num_envs", p.num_envs, 1, 1 << 30);
  require_range("track_params.num_samples", p.num_samples, 8, 4096);
  require_range("track_params.half_width [m]", p.half_width, 1e-4f, big);
  require_range("track_params.gate_half_height [m]", p.gate_half_height, 1e-4f, big);
  require_range("checkpoint_spacing [m]", checkpoint_spacing, 1e-3f, big);
  require_range("track_params.polar.control_points", p.polar.control_points, 4, 1024);
  require_range("track_params.polar.radius_min [m]", p.polar.radius_min, 1e-3f, big);
  require_range("track_params.polar.radius_max [m]", p.polar.radius_max, p.polar.radius_min, big);
  require_range("track_params.polar.angle_jitter", p.polar.angle_jitter, 0.0f, 0.999f);
  require_range("track_params.polar.elevation_min [m]", p.polar.elevation_min, -big, big);
  require_range("track_params.polar.elevation_max [m]", p.polar.elevation_max, p.polar.elevation_min, big);
  require_range("track_params.repulsive.clearance [m]", p.repulsive.clearance, 0.0f, big);
  require_range("track_params.repulsive.smoothing", p.repulsive.smoothing, 0.0f, 0.999f);
  require_range("track_params.repulsive.max_iterations", p.repulsive.max_iterations, 0, 1000);
  require_range("track_params.repulsive.tolerance [m]", p.repulsive.tolerance, 1e-9f, big);
  require_range("track_params.spline.samples_per_segment", p.spline.samples_per_segment, 4, 256);
  require_range("track_params.validate.length_min [m]", p.validate.length_min, 1e-3f, big);
  require_range("track_params.validate.length_max [m]", p.validate.length_max, p.validate.length_min, big);
  require_range("track_params.validate.turn_radius_min [m]", p.validate.turn_radius_min, 1e-4f, big);
  require_range("track_params.validate.clearance_margin [m]", p.validate.clearance_margin, 0.0f, big);
  require_range("track_params.validate.max_attempts", p.validate.max_attempts, 1, 255);
  require_range("track_params.dense_repulsive.clearance [m]", p.dense_repulsive.clearance, 0.0f, big);
  require_range("track_params.dense_repulsive.step", p.dense_repulsive.step, 1e-6f, 1.0f);
  require_range("track_params.dense_repulsive.smoothing", p.dense_repulsive.smoothing, 0.0f, 0.999f);
  require_range("track_params.dense_repulsive.iterations_per_window", p.dense_repulsive.iterations_per_window, 2, 256);
  require(p.dense_repulsive.iterations_per_window % 2 == 0,
          "track_params.dense_repulsive.iterations_per_window = " + std::to_string(p.dense_repulsive.iterations_per_window) +
              " must be even (the iterations alternate between two buffers and a window ends in the first)");
  require_range("track_params.dense_repulsive.max_windows", p.dense_repulsive.max_windows, 0, 1000);
  require_range("track_params.dense_repulsive.tolerance [m]", p.dense_repulsive.tolerance, 1e-9f, big);
  require(static_cast<double>(p.env_offset) + p.num_envs - 1 <= 4294967295.0,
          "track_params.env_offset + num_envs - 1 must fit in 32 bits (global env ids are uint32)");
}

/// Checks per-env variants; returns them with the batch-wide fields replaced by the batch's.
inline std::vector<track_params> check_variants(const track_variants& v, const track_params& batch, float spacing) {
  require(!v.variants.empty(), "track_variants.variants is empty: give at least one parameter set");
  require(v.env_variant.size() == static_cast<std::size_t>(batch.num_envs),
          "track_variants.env_variant has " + std::to_string(v.env_variant.size()) + " entries; expected num_envs = " +
              std::to_string(batch.num_envs));
  std::vector<track_params> out;
  for (std::size_t i = 0; i < v.variants.size(); ++i) {
    track_params p = v.variants[i];
    p.num_envs = batch.num_envs;
    p.env_offset = batch.env_offset;
    p.seed = batch.seed;
    p.num_samples = batch.num_samples;
    p.gate_half_height = batch.gate_half_height;
    // A grid-scope stage loops over the whole batch: its loop shape is the batch's.
    p.dense_repulsive.max_windows = batch.dense_repulsive.max_windows;
    p.dense_repulsive.iterations_per_window = batch.dense_repulsive.iterations_per_window;
    p.dense_repulsive.tolerance = batch.dense_repulsive.tolerance;
    try {
      check_params(p, spacing);
    } catch (const std::invalid_argument& err) {
      throw std::invalid_argument(std::string(err.what()) + " (in track_variants.variants[" + std::to_string(i) + "])");
    }
    out.push_back(p);
  }
  const int count = static_cast<int>(v.variants.size());
  for (std::size_t e = 0; e < v.env_variant.size(); ++e)
    require_range(("track_variants.env_variant[" + std::to_string(e) + "]").c_str(), v.env_variant[e], 0, count - 1);
  return out;
}

/// The one validation of `user_tracks::type`: the track source of a valid kind, or
/// std::invalid_argument naming `user_tracks.type` and the valid values. Every place that
/// branches on the kind (sanitize, the capacities, the generation arguments) goes through it:
/// an out-of-range enum value (static_cast<user_tracks::kind>(7)) compared against one kind
/// falls into the other branch, and two places that pick different "other" branches size the
/// scratch for one kind and build the other (issue 17: a heap overflow in the spline stage).
inline track_source user_track_source(user_tracks::kind type) {
  switch (type) {
    case user_tracks::kind::control_points: return track_source::control_points;
    case user_tracks::kind::centreline: return track_source::centreline;
  }
  throw std::invalid_argument("track_gen: user_tracks.type = " + std::to_string(static_cast<int>(type)) +
                              " is not a user_tracks::kind: expected kind::control_points (" +
                              std::to_string(static_cast<int>(user_tracks::kind::control_points)) + ") or kind::centreline (" +
                              std::to_string(static_cast<int>(user_tracks::kind::centreline)) + ")");
}

/// User tracks after cleaning: concatenated points, offsets, and the longest polyline length.
struct sanitized_tracks {
  std::vector<float3> points;
  std::vector<int> offsets{0};
  int max_count = 0;
  float max_polyline_length = 0.0f;
};

/// Drops non-repeating duplicates (consecutive points, cyclically, closer than 1e-6 of the
/// track's extent, so a list that repeats its first point at the end is closed once), checks
/// that every point is finite and that enough points remain.
inline sanitized_tracks sanitize(const user_tracks& in, int num_envs) {
  const int min_points = user_track_source(in.type) == track_source::control_points ? 4 : 3;
  const int count = static_cast<int>(in.tracks.size());
  require(count == 1 || count == num_envs,
          "user_tracks.tracks must hold 1 track (shared by every env) or num_envs = " + std::to_string(num_envs) +
              " tracks, got " + std::to_string(count));
  sanitized_tracks out;
  for (int t = 0; t < count; ++t) {
    const auto& pts = in.tracks[static_cast<std::size_t>(t)];
    float lo[3] = {3e38f, 3e38f, 3e38f}, hi[3] = {-3e38f, -3e38f, -3e38f};
    for (std::size_t i = 0; i < pts.size(); ++i) {
      require(is_finite(pts[i]), "user_tracks.tracks[" + std::to_string(t) + "][" + std::to_string(i) + "] is not finite");
      const float v[3] = {pts[i].x, pts[i].y, pts[i].z};
      for (int c = 0; c < 3; ++c) {
        lo[c] = std::fmin(lo[c], v[c]);
        hi[c] = std::fmax(hi[c], v[c]);
      }
    }
    float extent = 0.0f;
    for (int c = 0; c < 3 && !pts.empty(); ++c) extent = std::fmax(extent, hi[c] - lo[c]);
    const float eps = 1e-6f * std::fmax(extent, 1e-3f);
    std::vector<float3> kept;
    for (const float3& p : pts)
      if (kept.empty() || length(p - kept.back()) > eps) kept.push_back(p);
    while (kept.size() > 1 && length(kept.back() - kept.front()) <= eps) kept.pop_back();
    require(static_cast<int>(kept.size()) >= min_points,
            "user_tracks.tracks[" + std::to_string(t) + "] has " + std::to_string(kept.size()) +
                " distinct points; at least " + std::to_string(min_points) + " are needed");
    float len = 0.0f;
    for (std::size_t i = 0; i < kept.size(); ++i) len += length(kept[(i + 1) % kept.size()] - kept[i]);
    out.max_polyline_length = std::fmax(out.max_polyline_length, len);
    out.max_count = std::max(out.max_count, static_cast<int>(kept.size()));
    require(out.points.size() + kept.size() <= static_cast<std::size_t>(INT32_MAX),
            "user_tracks.tracks hold more than 2^31 - 1 points in total");
    out.points.insert(out.points.end(), kept.begin(), kept.end());
    out.offsets.push_back(static_cast<int>(out.points.size()));
  }
  return out;
}

}  // namespace track_gen::detail

#pragma once
/// @file
/// Host-side validation of parameters and user tracks (clear errors naming the parameter and
/// its valid range, read from the one table of ranges, param_ranges.hpp), and the capacities
/// derived from them.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/param_ranges.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/status.hpp>
#include <track_gen/user_tracks.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <vector>

namespace track_gen::detail {

/// `value` as text, no iostreams: error messages built with a std::ostringstream crashed the
/// torch extension as built on the H200 machine; built this way they raise ValueError there
/// (docs/gpu-report.md, runs from 9ffa800 on). Integers exactly; floating point with the fewest
/// significant digits that read back as the same value (float: at most 9, double: at most 17),
/// so that a value just outside a range never prints as the bound it breaks (issue 17: 0.9990001
/// printed as 0.999, "out of range [0, 0.999]"); %g's notation with a short exponent (1e6, 1e-6).
template <class T>
std::string format_number(T value) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    char text[40];
    const int max_digits = std::is_same_v<T, float> ? 9 : 17;
    int digits = 1;
    for (; digits < max_digits && std::isfinite(value); ++digits) {
      std::snprintf(text, sizeof(text), "%.*e", digits - 1, static_cast<double>(value));
      const T back = std::is_same_v<T, float> ? static_cast<T>(std::strtof(text, nullptr))
                                              : static_cast<T>(std::strtod(text, nullptr));
      if (back == value) break;
    }
    // As %g: plain notation for decimal exponents in [-4, 6), with every integer digit (10, not 1e1).
    const int exponent10 = std::isfinite(value) && value != 0 ? std::atoi(std::strchr(text, 'e') + 1) : 0;
    if (exponent10 >= 0 && exponent10 < 6 && digits < exponent10 + 1) digits = exponent10 + 1;
    std::snprintf(text, sizeof(text), "%.*g", digits, static_cast<double>(value));
    std::string out = text;
    const std::size_t e = out.find('e');
    if (e != std::string::npos) {  // "1e+06" -> "1e6", "9.9e-05" -> "9.9e-5"
      std::string exponent = out.substr(e + 1);
      const bool negative = !exponent.empty() && exponent[0] == '-';
      if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.erase(0, 1);
      while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
      out = out.substr(0, e + 1) + (negative ? "-" : "") + exponent;
    }
    return out;
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

/// A bound of `r` as text, in the parameter's type (`float` for real parameters).
inline std::string bound_text(const param_range& r, double v) {
  return r.integer ? format_number(static_cast<long long>(v)) : format_number(static_cast<float>(v));
}

/// The range of `r` as docs/parameters.md and params.hpp write it: "[4, 1024]", "(0, 1]",
/// "[radius_min, 1e6]" (a lower bound taken from another field).
inline std::string range_text(const param_range& r) {
  std::string lo = bound_text(r, r.min);
  if (r.min_from != nullptr) {  // the other field's short name: "radius_min"
    const char* dot = std::strrchr(r.min_from, '.');
    lo = dot != nullptr ? dot + 1 : r.min_from;
  }
  return std::string(r.min_bound == bound::closed ? "[" : "(") + lo + ", " + bound_text(r, r.max) +
         (r.max_bound == bound::closed ? "]" : ")");
}

/// Throws std::invalid_argument unless `value` lies in the range of `id` (param_ranges.hpp),
/// with `lo` as the lower bound instead of the table's (a field whose lower bound is another
/// field's value: `min_from`). The message names the parameter and its unit, prints the value
/// with enough digits to differ from the bound it breaks, and the range.
template <class T>
void check_range(param id, T value, T lo) {
  static_assert(std::is_same_v<T, int> || std::is_same_v<T, float> || std::is_same_v<T, double>,
                "parameters are int or float");
  const param_range& r = range_of(id);
  const T hi = static_cast<T>(r.max);
  const bool above_lo = r.min_bound == bound::closed ? value >= lo : value > lo;
  const bool below_hi = r.max_bound == bound::closed ? value <= hi : value < hi;
  if (above_lo && below_hi) return;
  std::string name = r.name;
  if (r.unit[0] != '\0') name += std::string(" [") + r.unit + "]";
  std::string message = "track_gen: " + name + " = " + format_number(value) + " is out of range: expected " +
                        (r.min_bound == bound::closed ? "[" : "(") + format_number(lo) + ", " + format_number(hi) +
                        (r.max_bound == bound::closed ? "]" : ")");
  if (r.min_from != nullptr) message += std::string(" (the lower bound is ") + r.min_from + ")";
  throw std::invalid_argument(message);
}

/// As above, with the table's lower bound.
template <class T>
void check_range(param id, T value) {
  check_range(id, value, static_cast<T>(range_of(id).min));
}

inline void check_params(const track_params& p, float checkpoint_spacing) {
  check_range(param::num_envs, p.num_envs);
  check_range(param::num_samples, p.num_samples);
  check_range(param::half_width, p.half_width);
  check_range(param::gate_half_height, p.gate_half_height);
  check_range(param::checkpoint_spacing, checkpoint_spacing);
  check_range(param::generator_family, static_cast<int>(p.generator.family));
  for (const float w : p.generator.weights) check_range(param::generator_weights, w);
  check_range(param::polar_control_points, p.polar.control_points);
  check_range(param::polar_radius_min, p.polar.radius_min);
  check_range(param::polar_radius_max, p.polar.radius_max, p.polar.radius_min);
  check_range(param::polar_angle_jitter, p.polar.angle_jitter);
  check_range(param::polar_lobe_amplitude_min, p.polar.lobe_amplitude_min);
  check_range(param::polar_lobe_amplitude_max, p.polar.lobe_amplitude_max, p.polar.lobe_amplitude_min);
  check_range(param::polar_elevation_min, p.polar.elevation_min);
  check_range(param::polar_elevation_max, p.polar.elevation_max, p.polar.elevation_min);
  check_range(param::polygon_separation_clearance, p.polygon_separation.clearance);
  check_range(param::polygon_separation_smoothing, p.polygon_separation.smoothing);
  check_range(param::polygon_separation_max_iterations, p.polygon_separation.max_iterations);
  check_range(param::polygon_separation_tolerance, p.polygon_separation.tolerance);
  check_range(param::spline_samples_per_segment, p.spline.samples_per_segment);
  check_range(param::validate_length_min, p.validate.length_min);
  check_range(param::validate_length_max, p.validate.length_max, p.validate.length_min);
  check_range(param::validate_turn_radius_min, p.validate.turn_radius_min);
  check_range(param::validate_clearance_margin, p.validate.clearance_margin);
  check_range(param::validate_max_attempts, p.validate.max_attempts);
  check_range(param::dense_repulsive_clearance, p.dense_repulsive.clearance);
  check_range(param::dense_repulsive_step, p.dense_repulsive.step);
  check_range(param::dense_repulsive_smoothing, p.dense_repulsive.smoothing);
  check_range(param::dense_repulsive_iterations_per_window, p.dense_repulsive.iterations_per_window);
  {
    const param_rule& even = rule_of(rule::iterations_per_window_even);
    require(p.dense_repulsive.iterations_per_window % 2 == 0,
            std::string(even.name) + " = " + std::to_string(p.dense_repulsive.iterations_per_window) + " must be " +
                even.rule + " (" + even.reason + ")");
  }
  check_range(param::dense_repulsive_max_windows, p.dense_repulsive.max_windows);
  check_range(param::dense_repulsive_tolerance, p.dense_repulsive.tolerance);
  check_range(param::budget_operations_per_track, p.budget.operations_per_track);
  check_range(param::budget_bytes_per_env, p.budget.bytes_per_env);
  check_range(param::voronoi_control_points, p.voronoi.control_points);
  check_range(param::voronoi_radius_min, p.voronoi.radius_min);
  check_range(param::voronoi_radius_max, p.voronoi.radius_max, p.voronoi.radius_min);
  check_range(param::voronoi_angle_jitter, p.voronoi.angle_jitter);
  check_range(param::voronoi_site_spacing, p.voronoi.site_spacing);
  check_range(param::voronoi_site_jitter, p.voronoi.site_jitter);
  check_range(param::voronoi_min_angle_gap, p.voronoi.min_angle_gap);
  check_range(param::voronoi_chaikin_rounds, p.voronoi.chaikin_rounds);
  check_range(param::checkpoint_checkpoints, p.checkpoint.checkpoints);
  check_range(param::checkpoint_radius_min, p.checkpoint.radius_min);
  check_range(param::checkpoint_radius_max, p.checkpoint.radius_max, p.checkpoint.radius_min);
  check_range(param::checkpoint_angle_jitter, p.checkpoint.angle_jitter);
  check_range(param::checkpoint_step_length, p.checkpoint.step_length);
  check_range(param::checkpoint_max_turn_rate, p.checkpoint.max_turn_rate);
  check_range(param::checkpoint_steer_gain, p.checkpoint.steer_gain);
  check_range(param::checkpoint_closure_boost, p.checkpoint.closure_boost);
  check_range(param::checkpoint_control_spacing, p.checkpoint.control_spacing);
  check_range(param::checkpoint_max_steps, p.checkpoint.max_steps);
  check_range(param::checkpoint_candidates, p.checkpoint.candidates);
  check_range(param::checkpoint_closure_tolerance, p.checkpoint.closure_tolerance);
  check_range(param::bezier_corners_min, p.bezier.corners_min);
  check_range(param::bezier_corners_max, p.bezier.corners_max, p.bezier.corners_min);
  check_range(param::bezier_extent, p.bezier.extent);
  check_range(param::bezier_layout, p.bezier.layout);
  check_range(param::bezier_min_corner_distance, p.bezier.min_corner_distance);
  check_range(param::bezier_max_turn, p.bezier.max_turn);
  check_range(param::bezier_rad, p.bezier.rad);
  check_range(param::bezier_edgy, p.bezier.edgy);
  check_range(param::bezier_handle_clamp, p.bezier.handle_clamp);
  check_range(param::bezier_samples_per_piece, p.bezier.samples_per_piece);
  check_range(param::hull_corners_min, p.hull.corners_min);
  check_range(param::hull_corners_max, p.hull.corners_max, p.hull.corners_min);
  check_range(param::hull_extent, p.hull.extent);
  check_range(param::hull_layout, p.hull.layout);
  check_range(param::hull_min_corner_distance, p.hull.min_corner_distance);
  check_range(param::hull_max_turn, p.hull.max_turn);
  check_range(param::hull_displacement, p.hull.displacement);
  check_range(param::hull_convex, p.hull.convex);
  check_range(param::hull_chaikin_passes, p.hull.chaikin_passes);
  {
    const repulsive_growth_params& g = p.repulsive_growth;
    check_range(param::repulsive_growth_domain_radius, g.domain_radius);
    check_range(param::repulsive_growth_init_ratio, g.init_ratio);
    check_range(param::repulsive_growth_grow_mult_min, g.grow_mult_min);
    check_range(param::repulsive_growth_grow_mult_max, g.grow_mult_max, g.grow_mult_min);
    check_range(param::repulsive_growth_obstacles_min, g.obstacles_min);
    check_range(param::repulsive_growth_obstacles_max, g.obstacles_max, g.obstacles_min);
    check_range(param::repulsive_growth_obstacle_radius_min, g.obstacle_radius_min);
    check_range(param::repulsive_growth_obstacle_radius_max, g.obstacle_radius_max, g.obstacle_radius_min);
    check_range(param::repulsive_growth_ratchet_rate, g.ratchet_rate);
    check_range(param::repulsive_growth_alpha, g.alpha);
    check_range(param::repulsive_growth_beta, g.beta);
    {
      // The table holds beta's widest range, (2, 17]; its bounds move with alpha.
      const param_rule& beta = rule_of(rule::repulsive_growth_beta);
      const float lo = g.alpha + 1.0f, hi = 2.0f * g.alpha + 1.0f;
      require(g.beta > lo && g.beta <= hi,
              std::string(beta.name) + " = " + format_number(g.beta) + " is out of range: expected (" +
                  format_number(lo) + ", " + format_number(hi) + "], " + beta.rule +
                  " with track_params.repulsive_growth.alpha = " + format_number(g.alpha) + " (" + beta.reason + ")");
    }
    check_range(param::repulsive_growth_tau, g.tau);
    check_range(param::repulsive_growth_length_weight, g.length_weight);
    check_range(param::repulsive_growth_points, g.points);
    check_range(param::repulsive_growth_levels, g.levels);
    {
      const param_rule& points = rule_of(rule::repulsive_growth_points);
      const int coarsest = 1 << (g.levels - 1);  // levels is in [1, 4] here
      require(g.points % coarsest == 0 && g.points / coarsest >= 8,
              std::string(points.name) + " = " + std::to_string(g.points) + " must be " + points.rule +
                  " (track_params.repulsive_growth.levels = " + std::to_string(g.levels) + ": a multiple of " +
                  std::to_string(coarsest) + ", at least " + std::to_string(8 * coarsest) + "; " + points.reason +
                  ")");
    }
    check_range(param::repulsive_growth_settle_iterations, g.settle_iterations);
    check_range(param::repulsive_growth_resample_every, g.resample_every);
    check_range(param::repulsive_growth_stall_window, g.stall_window);
    check_range(param::repulsive_growth_stall_area_tolerance, g.stall_area_tolerance);
    check_range(param::repulsive_growth_deactivate_obstacles, g.deactivate_obstacles);
  }
  {
    const relaxation_params& r = p.relaxation;
    check_range(param::relaxation_max_iterations, r.max_iterations);
    check_range(param::relaxation_margin, r.margin);
    check_range(param::relaxation_separation_weight, r.separation_weight);
    check_range(param::relaxation_spacing_weight, r.spacing_weight);
    check_range(param::relaxation_bending_weight, r.bending_weight);
    check_range(param::relaxation_chebyshev_rho, r.chebyshev_rho);
    check_range(param::relaxation_chebyshev_gamma, r.chebyshev_gamma);
    check_range(param::relaxation_chebyshev_start, r.chebyshev_start);
    check_range(param::relaxation_smoothing_passes, r.smoothing_passes);
  }
  check_range(param::elevation_profile, static_cast<int>(p.elevation.profile));
  check_range(param::elevation_knots, p.elevation.knots);
  check_range(param::elevation_z_min, p.elevation.z_min);
  check_range(param::elevation_z_max, p.elevation.z_max, p.elevation.z_min);
  check_range(param::elevation_max_grade, p.elevation.max_grade);
  check_range(param::elevation_harmonics, p.elevation.harmonics);
  check_range(param::gates_ordering, p.gates.ordering);
  check_range(param::gates_min_gates, p.gates.min_gates);
  check_range(param::gates_max_gates, p.gates.max_gates, p.gates.min_gates);
  check_range(param::gates_min_spacing, p.gates.min_spacing);
  check_range(param::gates_spacing_iterations, p.gates.spacing_iterations);
  check_range(param::gates_align, p.gates.align);
  {
    const param_rule& ids = rule_of(rule::env_offset);
    require(static_cast<double>(p.env_offset) + p.num_envs - 1 <= 4294967295.0,
            std::string(ids.name) + " = " + std::to_string(p.env_offset) + " with num_envs = " +
                std::to_string(p.num_envs) + " breaks " + ids.rule + " (" + ids.reason + ")");
  }
}

/// The gate capacity per track, G_max = ceil(length_cap / spacing), checked against its range
/// (param::gates_per_track). `length_cap`: the longest track the course may hold.
inline int checked_max_gates(float length_cap, float spacing) {
  const param_range& r = range_of(param::gates_per_track);
  const double gates = std::ceil(static_cast<double>(length_cap) / spacing);
  if (!(gates <= r.max)) {
    throw std::invalid_argument("track_gen: checkpoint_spacing = " + format_number(spacing) + " m gives " +
                                format_number(gates) + " gates on a track of up to " + format_number(length_cap) +
                                " m; at most " + bound_text(r, r.max) + " " + r.name + " are supported (" + r.reason +
                                ")");
  }
  return gates < r.min ? static_cast<int>(r.min) : static_cast<int>(gates);
}

/// Throws std::invalid_argument unless one track's scratch memory, `bytes` (scratch_layout::bytes,
/// computed in size_t), is within param::scratch_bytes_per_track; the message names the inputs
/// that size it.
inline void check_scratch_bytes(std::size_t bytes, std::size_t control_capacity, std::size_t dense_capacity,
                                int num_samples, int relaxation_iterations = 0) {
  const param_range& r = range_of(param::scratch_bytes_per_track);
  if (bytes <= static_cast<std::size_t>(r.max)) return;
  throw std::invalid_argument(
      "track_gen: one track needs " + std::to_string(bytes) + " bytes of scratch memory (" +
      std::to_string(control_capacity) + " control points, " + std::to_string(dense_capacity) +
      " dense samples, num_samples = " + std::to_string(num_samples) + "); at most " + bound_text(r, r.max) + " " +
      r.name + " are supported (" + r.reason +
      "): lower the control points of the generator families in use (polar.control_points; bezier.corners_max x "
      "samples_per_piece; hull.corners_max x 2^(chaikin_passes + 1); voronoi.control_points x 2^chaikin_rounds; "
      "checkpoint.max_steps x step_length / control_spacing, at most 2 x validate.length_max / control_spacing, and "
      "its candidates; repulsive_growth.points), spline.samples_per_segment, "
      "num_samples or the "
      "points of the user tracks" +
      (relaxation_iterations > 0
           ? std::string("; relaxation.max_iterations = ") + std::to_string(relaxation_iterations) +
                 " turns the centreline relaxation on, which keeps 4 x num_samples dense samples (num_samples up to "
                 "about 3000 with it)"
           : std::string()));
}

/// Throws std::invalid_argument unless a course's memory, `bytes`, is within param::course_bytes.
inline void check_course_bytes(std::size_t bytes, int num_envs, int max_gates) {
  const param_range& r = range_of(param::course_bytes);
  if (bytes <= static_cast<std::size_t>(r.max)) return;
  throw std::invalid_argument("track_gen: the course needs " + std::to_string(bytes) + " bytes (num_envs = " +
                              std::to_string(num_envs) + ", " + std::to_string(max_gates) +
                              " gates per env); at most " + bound_text(r, r.max) + " " + r.name +
                              " are supported (" + r.reason +
                              "): lower num_envs, or raise checkpoint_spacing / lower validate.length_max");
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
    p.budget = batch.budget;  // the batch's budget holds for every track
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
  std::vector<user_frame> frames;  ///< one per track
  int max_count = 0;
  float max_polyline_length = 0.0f;
};

/// With `recentre`, moves `points` by the mean of the points rounded to whole metres (every such
/// value up to max_position is a float32 exactly, so `origin + point` gives back the input up to
/// one rounding of the difference); flags a track that keeps a coordinate beyond
/// precise_position (the points given: a spline through control points may bulge a little
/// beyond them). Returns the origin used and the status bits.
inline user_frame place(std::vector<float3>& points, bool recentre) {
  user_frame frame{float3{0.0f, 0.0f, 0.0f}, 0u};
  if (recentre && !points.empty()) {
    double sum[3] = {0.0, 0.0, 0.0};
    for (const float3& p : points) {
      sum[0] += p.x;
      sum[1] += p.y;
      sum[2] += p.z;
    }
    const double n = static_cast<double>(points.size());
    // + 0.0: a mean in (-0.5, 0) rounds to -0.0, reported as +0 like a track not re-centred.
    const double o[3] = {std::round(sum[0] / n) + 0.0, std::round(sum[1] / n) + 0.0, std::round(sum[2] / n) + 0.0};
    for (float3& p : points) {
      p = float3{static_cast<float>(static_cast<double>(p.x) - o[0]), static_cast<float>(static_cast<double>(p.y) - o[1]),
                 static_cast<float>(static_cast<double>(p.z) - o[2])};
    }
    frame.origin = float3{static_cast<float>(o[0]), static_cast<float>(o[1]), static_cast<float>(o[2])};
  }
  for (const float3& p : points) {
    const double m = std::fmax(std::fabs(p.x), std::fmax(std::fabs(p.y), std::fabs(p.z)));
    if (m > precise_position) frame.status |= status::far_from_origin;
  }
  return frame;
}

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
      if (!is_position(pts[i])) {  // a track no position step accepts could reach
        const param_range& r = range_of(param::position);
        require(false, "user_tracks.tracks[" + std::to_string(t) + "][" + std::to_string(i) + "] = (" +
                           format_number(pts[i].x) + ", " + format_number(pts[i].y) + ", " + format_number(pts[i].z) +
                           ") has a coordinate outside " + range_text(r) + " m (" + r.name + ": " + r.reason + ")");
      }
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
    require(kept.size() >= static_cast<std::size_t>(min_points),
            "user_tracks.tracks[" + std::to_string(t) + "] has " + std::to_string(kept.size()) +
                " distinct points; at least " + std::to_string(min_points) + " are needed");
    {
      // Before any size is computed from the count (issue 17: 8 to 17 million points overflowed
      // count x samples_per_segment in int).
      const param_range& r = range_of(param::user_track_points);
      require(kept.size() <= static_cast<std::size_t>(r.max),
              "user_tracks.tracks[" + std::to_string(t) + "] has " + std::to_string(kept.size()) +
                  " distinct points; at most " + bound_text(r, r.max) + " are supported (" + r.name + ": " + r.reason +
                  "); resample the track");
    }
    out.frames.push_back(place(kept, in.recentre));
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

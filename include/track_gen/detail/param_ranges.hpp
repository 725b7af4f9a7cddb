#pragma once
/// @file
/// The range of every parameter, in one table: name, unit, bounds (open or closed), and why.
/// The construction checks (host_checks.hpp) read it, params.hpp's comments state it, and
/// docs/parameters.md is generated from it; tests/core/param_ranges_test.cpp fails when the doc
/// or a params.hpp comment disagrees with the table, or when a bound is not enforced exactly.

#include <cstddef>

namespace track_gen::detail {

/// Every range-checked parameter (the index of its row in `param_ranges`).
enum class param : int {
  num_envs,
  num_samples,
  half_width,
  gate_half_height,
  checkpoint_spacing,
  generator_family,
  generator_weights,
  polar_control_points,
  polar_radius_min,
  polar_radius_max,
  polar_angle_jitter,
  polar_lobe_amplitude_min,
  polar_lobe_amplitude_max,
  polar_elevation_min,
  polar_elevation_max,
  polygon_separation_clearance,
  polygon_separation_smoothing,
  polygon_separation_max_iterations,
  polygon_separation_tolerance,
  spline_samples_per_segment,
  validate_length_min,
  validate_length_max,
  validate_turn_radius_min,
  validate_clearance_margin,
  validate_max_attempts,
  dense_repulsive_clearance,
  dense_repulsive_step,
  dense_repulsive_smoothing,
  dense_repulsive_iterations_per_window,
  dense_repulsive_max_windows,
  dense_repulsive_tolerance,
  budget_operations_per_track,
  budget_bytes_per_env,
  bezier_corners_min,
  bezier_corners_max,
  bezier_extent,
  bezier_layout,
  bezier_min_corner_distance,
  bezier_max_turn,
  bezier_rad,
  bezier_edgy,
  bezier_handle_clamp,
  bezier_samples_per_piece,
  hull_corners_min,
  hull_corners_max,
  hull_extent,
  hull_layout,
  hull_min_corner_distance,
  hull_max_turn,
  hull_displacement,
  hull_convex,
  hull_chaikin_passes,
  repulsive_growth_domain_radius,
  repulsive_growth_init_ratio,
  repulsive_growth_grow_mult_min,
  repulsive_growth_grow_mult_max,
  repulsive_growth_obstacles_min,
  repulsive_growth_obstacles_max,
  repulsive_growth_obstacle_radius_min,
  repulsive_growth_obstacle_radius_max,
  repulsive_growth_ratchet_rate,
  repulsive_growth_alpha,
  repulsive_growth_beta,
  repulsive_growth_tau,
  repulsive_growth_length_weight,
  repulsive_growth_points,
  repulsive_growth_levels,
  repulsive_growth_settle_iterations,
  repulsive_growth_resample_every,
  repulsive_growth_stall_window,
  repulsive_growth_stall_area_tolerance,
  repulsive_growth_deactivate_obstacles,
  relaxation_max_iterations,
  relaxation_margin,
  relaxation_separation_weight,
  relaxation_spacing_weight,
  relaxation_bending_weight,
  relaxation_chebyshev_rho,
  relaxation_chebyshev_gamma,
  relaxation_chebyshev_start,
  relaxation_smoothing_passes,
  gates_per_track,
  user_track_points,
  scratch_bytes_per_track,
  course_bytes,
  position,
  voronoi_control_points,
  voronoi_radius_min,
  voronoi_radius_max,
  voronoi_angle_jitter,
  voronoi_site_spacing,
  voronoi_site_jitter,
  voronoi_min_angle_gap,
  voronoi_chaikin_rounds,
  checkpoint_checkpoints,
  checkpoint_radius_min,
  checkpoint_radius_max,
  checkpoint_angle_jitter,
  checkpoint_step_length,
  checkpoint_max_turn_rate,
  checkpoint_steer_gain,
  checkpoint_closure_boost,
  checkpoint_control_spacing,
  checkpoint_max_steps,
  checkpoint_candidates,
  checkpoint_closure_tolerance,
  elevation_profile,
  elevation_knots,
  elevation_z_min,
  elevation_z_max,
  elevation_max_grade,
  elevation_harmonics,
  gates_ordering,
  gates_min_gates,
  gates_max_gates,
  gates_min_spacing,
  gates_spacing_iterations,
  gates_align,
  sdf_resolution,
  gate_frame_half_thickness,
  gate_frame_half_depth,
  gate_frame_radius,
  heightfield_resolution,
  heightfield_margin,
  count
};

/// Whether a bound belongs to the range.
enum class bound : unsigned char { closed, open };

/// One parameter's range.
struct param_range {
  param id;
  const char* name;      ///< as messages and docs name it, e.g. "track_params.polar.angle_jitter"
  const char* unit;      ///< "m", or "" for counts and fractions
  bool integer;          ///< an int parameter (bounds are whole numbers)
  double min, max;       ///< converted to the parameter's type before comparing (float bounds as float)
  bound min_bound, max_bound;
  /// nullptr, or the parameter whose value is the lower bound instead of `min` (e.g.
  /// "track_params.polar.radius_min" for radius_max >= radius_min; `min` is then that
  /// parameter's own lower bound).
  const char* min_from;
  const char* reason;    ///< why these bounds (docs/parameters.md prints it)
};

/// Lengths share one upper bound: float32 coordinates are 0.06 m apart at 1e6 m, and squared
/// lengths (1e12) stay far below float's range.
inline constexpr double max_length = 1e6;

/// The largest coordinate magnitude of a position that progress_tracker_ref::step accepts [m]
/// (param::position): 10 times the longest length a track's parameters may have, so that any
/// agent within 9e6 m of a track is tracked, while float32 still resolves 1 m there (the ulp of
/// 1e7 is 1) and squared distances (at most 3 x (2e7)^2 = 1.2e15) stay far below float's range
/// (3.4e38, reached at |p| ~ 1e19 m: `lateral` became +inf and the projection fell silently on
/// segment 0, issue 17).
inline constexpr double max_position = 1e7;

/// The largest coordinate magnitude at which float32 still resolves 1 mm [m]: the spacing of
/// binary32 values (24-bit significand, IEEE 754-2008 §3.4) is 2^(e - 23) in [2^e, 2^(e+1)), so
/// 2^-11 m (0.49 mm) below 8192 m and 2^-10 m (0.98 mm) up to 16384 m, 7.8 mm at 1e5 m. A user
/// track with a point beyond it gets status::far_from_origin (user_tracks::recentre removes it).
inline constexpr double precise_position = 8192.0;

/// The shared memory one block may opt into on sm_80 and sm_90 (the H200): 227 KiB (NVIDIA's
/// Ampere and Hopper tuning guides). A track's scratch arrays live there on the GPU.
inline constexpr double block_shared_bytes = 232448;

// clang-format off
/// The table, in `param` order (checked at compile time below).
inline constexpr param_range param_ranges[] = {
  {param::num_envs, "track_params.num_envs", "", true, 1, 1073741824, bound::closed, bound::closed, nullptr,
   "one track per env; env indices are int in the kernels and in cub::DeviceSelect's item count: 2^30 leaves a "
   "factor of two of room below INT_MAX for index arithmetic"},
  {param::num_samples, "track_params.num_samples", "", true, 8, 4096, bound::closed, bound::closed, nullptr,
   "fewer than 8 samples make a closed track a coarse polygon whose curvature and spacing tests say little; the N "
   "samples (12 bytes each) sit in one block's shared memory next to the dense samples, and every O(N) progress "
   "search scans them. Random tracks at the track preset's other defaults validate from about 64 samples up "
   "(host backend, 256 envs: the fallback ellipse for 221 envs at N = 32, 51 at 48, 8 at 56, 2 at 64, none from "
   "128 to 4096): below that the samples are too coarse for the lobes' tightest turns. Before resample mapped "
   "the dense intervals through the spline's speed, N above 640 failed its spacing test too (band-only tracks: 27 "
   "envs at 768, all at 4096; none since)"},
  {param::half_width, "track_params.half_width", "m", false, 1e-4, max_length, bound::closed, bound::closed, nullptr,
   "a road has a width (0.1 mm at least); lengths stay <= 1e6 m (float32 coordinates)"},
  {param::gate_half_height, "track_params.gate_half_height", "m", false, 1e-4, max_length, bound::closed, bound::closed,
   nullptr, "a gate has an opening (0.1 mm at least); lengths stay <= 1e6 m (float32 coordinates)"},
  {param::checkpoint_spacing, "checkpoint_spacing", "m", false, 1e-3, max_length, bound::closed, bound::closed, nullptr,
   "the course constructor's gate spacing: positive (1 mm at least); it also sizes the gate storage, see "
   "gates per track"},
  {param::generator_family, "track_params.generator.family", "", true, 0, 5, bound::closed, bound::closed, nullptr,
   "a track_gen::generator_family: polar 0, bezier 1, hull 2, voronoi 3, checkpoint 4, repulsive 5"},
  {param::generator_weights, "track_params.generator.weights", "", false, 0, 1e6, bound::closed, bound::closed,
   nullptr,
   "relative weights (each env draws a family with probability weight / sum; all 0: `family` for every env): "
   "not negative; 1e6 each keeps their sum and every partial sum exact enough in float32 to compare with one "
   "uniform draw"},
  {param::polar_control_points, "track_params.polar.control_points", "", true, 4, 1024, bound::closed, bound::closed,
   nullptr,
   "a closed Catmull-Rom spline needs 4 points; 1024 points at 8 samples per segment still fit one sm_90 block's "
   "shared memory (tests/core/scratch_budget_test.cpp), and the polygon separation stage's work grows as M^2"},
  {param::polar_radius_min, "track_params.polar.radius_min", "m", false, 1e-3, max_length, bound::closed, bound::closed,
   nullptr, "control points lie off the origin (1 mm at least); lengths stay <= 1e6 m"},
  {param::polar_radius_max, "track_params.polar.radius_max", "m", false, 1e-3, max_length, bound::closed, bound::closed,
   "track_params.polar.radius_min", "a radius band: radius_max >= radius_min; lengths stay <= 1e6 m"},
  {param::polar_angle_jitter, "track_params.polar.angle_jitter", "", false, 0, 0.999, bound::closed, bound::closed,
   nullptr,
   "a fraction of the angular step 2 pi / M; each angle moves at most jitter / 2 of a step either way, so below 1 "
   "the angles stay strictly increasing; 0.999 leaves room for float rounding"},
  {param::polar_lobe_amplitude_min, "track_params.polar.lobe_amplitude_min", "", false, 0, 0.9, bound::closed,
   bound::closed, nullptr,
   "a fraction of the radius; at most 0.9, so the radial profile 1 + a2 cos(2t + p2) + a3 cos(3t + p3) stays >= 0.1 "
   "and the control points stay off the origin (star-shaped, never self-intersecting)"},
  {param::polar_lobe_amplitude_max, "track_params.polar.lobe_amplitude_max", "", false, 0, 0.9, bound::closed,
   bound::closed, "track_params.polar.lobe_amplitude_min", "an amplitude band: lobe_amplitude_max >= lobe_amplitude_min"},
  {param::polar_elevation_min, "track_params.polar.elevation_min", "m", false, -max_length, max_length, bound::closed,
   bound::closed, nullptr, "an elevation band; lengths stay within 1e6 m"},
  {param::polar_elevation_max, "track_params.polar.elevation_max", "m", false, -max_length, max_length, bound::closed,
   bound::closed, "track_params.polar.elevation_min", "an elevation band: elevation_max >= elevation_min; lengths stay within 1e6 m"},
  {param::polygon_separation_clearance, "track_params.polygon_separation.clearance", "m", false, 0, max_length, bound::closed,
   bound::closed, nullptr, "0 pushes nothing; lengths stay <= 1e6 m"},
  {param::polygon_separation_smoothing, "track_params.polygon_separation.smoothing", "", false, 0, 0.999, bound::closed, bound::closed,
   nullptr,
   "the fraction of the way each point moves toward its neighbours' midpoint per iteration while an overlap "
   "remains: 1 would put it there and undo the push; 0.999 leaves room for float rounding"},
  {param::polygon_separation_max_iterations, "track_params.polygon_separation.max_iterations", "", true, 0, 1000, bound::closed,
   bound::closed, nullptr,
   "the bound of the BOUNDED loop (0 disables the stage); each iteration tests M^2 point-segment pairs, and 1000 "
   "bounds the cost of one attempt"},
  {param::polygon_separation_tolerance, "track_params.polygon_separation.tolerance", "m", false, 1e-9, max_length, bound::closed,
   bound::closed, nullptr, "the loop stops once the largest overlap is below it: positive"},
  {param::spline_samples_per_segment, "track_params.spline.samples_per_segment", "", true, 4, 256, bound::closed,
   bound::closed, nullptr,
   "a few samples per segment at least (resample evaluates the spline again between them); the M x this dense "
   "samples sit in one block's shared memory (the bezier, hull, voronoi, checkpoint and repulsive families spend "
   "a budget of 24 x this over their M segments instead, at least 4 each)"},
  {param::validate_length_min, "track_params.validate.length_min", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, nullptr, "a track has a length (1 mm at least); lengths stay <= 1e6 m"},
  {param::validate_length_max, "track_params.validate.length_max", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, "track_params.validate.length_min",
   "a length band: length_max >= length_min; it also sizes the gate storage (gates per track); lengths stay "
   "<= 1e6 m"},
  {param::validate_turn_radius_min, "track_params.validate.turn_radius_min", "m", false, 1e-4, max_length,
   bound::closed, bound::closed, nullptr, "positive: 1 / turn_radius_min bounds the curvature"},
  {param::validate_clearance_margin, "track_params.validate.clearance_margin", "m", false, 0, max_length, bound::closed,
   bound::closed, nullptr, "an extra gap, none at 0; lengths stay <= 1e6 m"},
  {param::validate_max_attempts, "track_params.validate.max_attempts", "", true, 1, 255, bound::closed, bound::closed,
   nullptr, "one attempt at least; the count is stored in 8 bits of the status word (status::attempts)"},
  {param::dense_repulsive_clearance, "track_params.dense_repulsive.clearance", "m", false, 0, max_length,
   bound::closed, bound::closed, nullptr, "0 turns the stage off; lengths stay <= 1e6 m"},
  {param::dense_repulsive_step, "track_params.dense_repulsive.step", "", false, 1e-6, 1, bound::closed, bound::closed,
   nullptr, "the fraction of the summed push applied per iteration: positive (a step of 0 never moves), at most all"},
  {param::dense_repulsive_smoothing, "track_params.dense_repulsive.smoothing", "", false, 0, 0.999, bound::closed,
   bound::closed, nullptr,
   "the fraction of the way a pushed sample moves toward its neighbours' midpoint: 1 would undo the push; 0.999 "
   "leaves room for float rounding"},
  {param::dense_repulsive_iterations_per_window, "track_params.dense_repulsive.iterations_per_window", "", true, 2, 256,
   bound::closed, bound::closed, nullptr,
   "Jacobi iterations per window (one launch each), an even number (see the rules below); 256 bounds a window's "
   "launches"},
  {param::dense_repulsive_max_windows, "track_params.dense_repulsive.max_windows", "", true, 0, 1000, bound::closed,
   bound::closed, nullptr, "the bound of the BOUNDED loop (0 disables the stage); it bounds the launches of one "
   "regeneration"},
  {param::dense_repulsive_tolerance, "track_params.dense_repulsive.tolerance", "m", false, 1e-9, max_length,
   bound::closed, bound::closed, nullptr, "a track stops once its largest overlap is below it: positive"},
  {param::budget_operations_per_track, "track_params.budget.operations_per_track", "", false, 1, 1e18, bound::closed,
   bound::closed, nullptr,
   "the worst-case work of one track that construction accepts (track_gen::estimate_cost); legal parameters reach "
   "2.7e11 (1024 control points, 1000 polygon separation iterations, 255 attempts: an hour per env on a CPU core), so the "
   "default 1e10 refuses them until the user raises it; 1e18 is beyond any use"},
  {param::budget_bytes_per_env, "track_params.budget.bytes_per_env", "", false, 1, 1e12, bound::closed,
   bound::closed, nullptr,
   "the track storage per env that construction accepts (estimate_cost: samples and gate capacity); legal "
   "parameters reach 320 MB per env (gates every 0.1 m of a 1e6 m length_max), so the default 1e8 refuses them "
   "until the user raises it; 1e12 is about bytes per course (2^40)"},
  {param::bezier_corners_min, "track_params.bezier.corners_min", "", true, 3, 64, bound::closed, bound::closed, nullptr,
   "a closed polygon needs 3 corners; 64 bounds the serial corner work of one thread (O(n^2) distance tests) and "
   "its local arrays"},
  {param::bezier_corners_max, "track_params.bezier.corners_max", "", true, 3, 64, bound::closed, bound::closed,
   "track_params.bezier.corners_min", "a count range: corners_max >= corners_min; 64 as corners_min"},
  {param::bezier_extent, "track_params.bezier.extent", "m", false, 1e-3, max_length, bound::closed, bound::closed, nullptr,
   "the corners' square or disc has a size (1 mm at least); lengths stay <= 1e6 m"},
  {param::bezier_layout, "track_params.bezier.layout", "", true, 0, 1, bound::closed, bound::closed, nullptr,
   "0 (jittered grid) or 1 (disc): the only layouts"},
  {param::bezier_min_corner_distance, "track_params.bezier.min_corner_distance", "m", false, 0, max_length, bound::closed,
   bound::closed, nullptr, "0 accepts any corner; lengths stay <= 1e6 m"},
  {param::bezier_max_turn, "track_params.bezier.max_turn", "rad", false, 0.1, 3.1416, bound::closed, bound::closed, nullptr,
   "a turn angle: corners of a polygon turn by at most pi (3.1416 keeps every corner); below 0.1 rad nearly every "
   "corner would go (a polygon turns by 2 pi in all)"},
  {param::bezier_rad, "track_params.bezier.rad", "", false, 0, 1, bound::closed, bound::closed, nullptr,
   "a fraction of the distance to the neighbouring corner (handle_clamp caps it below 0.5 anyway)"},
  {param::bezier_edgy, "track_params.bezier.edgy", "", false, 0, 1, bound::closed, bound::closed, nullptr,
   "a blend weight between the bisector (0) and the incoming edge (1)"},
  {param::bezier_handle_clamp, "track_params.bezier.handle_clamp", "", false, 0, 0.5, bound::closed, bound::closed,
   nullptr, "a fraction of the shorter edge: at most 0.5, so that the two handles of an edge never cross"},
  {param::bezier_samples_per_piece, "track_params.bezier.samples_per_piece", "", true, 1, 16, bound::closed,
   bound::closed, nullptr,
   "control points per Bezier piece: 1 gives the corners alone; 16 x 64 corners = 1024 control points, the most "
   "polar.control_points allows"},
  {param::hull_corners_min, "track_params.hull.corners_min", "", true, 3, 64, bound::closed, bound::closed, nullptr,
   "a closed polygon needs 3 corners; 64 bounds the serial corner work of one thread (O(n^2) distance tests) and "
   "its local arrays"},
  {param::hull_corners_max, "track_params.hull.corners_max", "", true, 3, 64, bound::closed, bound::closed,
   "track_params.hull.corners_min", "a count range: corners_max >= corners_min; 64 as corners_min"},
  {param::hull_extent, "track_params.hull.extent", "m", false, 1e-3, max_length, bound::closed, bound::closed, nullptr,
   "the corners' square or disc has a size (1 mm at least); lengths stay <= 1e6 m"},
  {param::hull_layout, "track_params.hull.layout", "", true, 0, 1, bound::closed, bound::closed, nullptr,
   "0 (jittered grid) or 1 (disc): the only layouts"},
  {param::hull_min_corner_distance, "track_params.hull.min_corner_distance", "m", false, 0, max_length, bound::closed,
   bound::closed, nullptr, "0 accepts any corner; lengths stay <= 1e6 m"},
  {param::hull_max_turn, "track_params.hull.max_turn", "rad", false, 0.1, 3.1416, bound::closed, bound::closed, nullptr,
   "a turn angle: corners of a polygon turn by at most pi (3.1416 keeps every corner); below 0.1 rad nearly every "
   "corner would go (a polygon turns by 2 pi in all)"},
  {param::hull_displacement, "track_params.hull.displacement", "", false, 0, 1, bound::closed, bound::closed,
   nullptr, "a fraction of the edge's length; beyond 1 the midpoints leave the polygon's neighbourhood"},
  {param::hull_convex, "track_params.hull.convex", "", true, 0, 1, bound::closed, bound::closed, nullptr,
   "0 (all corners) or 1 (their convex hull)"},
  {param::hull_chaikin_passes, "track_params.hull.chaikin_passes", "", true, 0, 3, bound::closed, bound::closed,
   nullptr, "each pass doubles the control points: 2 x 64 x 2^3 = 1024, the most polar.control_points allows"},
  {param::repulsive_growth_domain_radius, "track_params.repulsive_growth.domain_radius", "m", false, 1e-3, max_length,
   bound::closed, bound::closed, nullptr, "the disc the curve grows in has a size (1 mm at least); lengths stay <= 1e6 m"},
  {param::repulsive_growth_init_ratio, "track_params.repulsive_growth.init_ratio", "", false, 1.5, 100, bound::closed,
   bound::closed, nullptr,
   "the domain radius over the start circle's: from 1.5 the start circle leaves a third of the radius for the "
   "obstacles and the growth; 100 (a start circle of 1 % of the domain) is far beyond the default 4"},
  {param::repulsive_growth_grow_mult_min, "track_params.repulsive_growth.grow_mult_min", "", false, 1, 20,
   bound::closed, bound::closed, nullptr,
   "the flow only grows the start circle's length (1 at least); 20 bounds the ratchet's iterations (ln 20 / "
   "ln(1 + ratchet_rate)) and so the flow's"},
  {param::repulsive_growth_grow_mult_max, "track_params.repulsive_growth.grow_mult_max", "", false, 1, 20,
   bound::closed, bound::closed, "track_params.repulsive_growth.grow_mult_min",
   "a multiple range: grow_mult_max >= grow_mult_min; 20 as grow_mult_min"},
  {param::repulsive_growth_obstacles_min, "track_params.repulsive_growth.obstacles_min", "", true, 0, 32,
   bound::closed, bound::closed, nullptr,
   "0: the domain wall alone; the discs' points sit in the flow's scratch, sized for 32 (growth::max_obstacles)"},
  {param::repulsive_growth_obstacles_max, "track_params.repulsive_growth.obstacles_max", "", true, 0, 32,
   bound::closed, bound::closed, "track_params.repulsive_growth.obstacles_min",
   "a count range: obstacles_max >= obstacles_min; 32 as obstacles_min"},
  {param::repulsive_growth_obstacle_radius_min, "track_params.repulsive_growth.obstacle_radius_min", "", false, 0, 0.5,
   bound::closed, bound::closed, nullptr,
   "a fraction of the domain radius (0: discs of no mass); a disc's centre lies within [1 / init_ratio + r + 0.05, "
   "0.9] domain radii (else the disc is left out): at 0.5 that band is 0.1 wide at the default init_ratio"},
  {param::repulsive_growth_obstacle_radius_max, "track_params.repulsive_growth.obstacle_radius_max", "", false, 0, 0.5,
   bound::closed, bound::closed, "track_params.repulsive_growth.obstacle_radius_min",
   "a fraction range: obstacle_radius_max >= obstacle_radius_min; 0.5 as obstacle_radius_min"},
  {param::repulsive_growth_ratchet_rate, "track_params.repulsive_growth.ratchet_rate", "", false, 1e-4, 0.5,
   bound::closed, bound::closed, nullptr,
   "the target length's growth per iteration: at 0.0001 the ratchet to grow_mult_max = 20 takes 30,000 iterations "
   "(each O(points^2)); 0.5 grows it by half in one iteration, far beyond the default 0.012"},
  {param::repulsive_growth_alpha, "track_params.repulsive_growth.alpha", "", false, 1, 8, bound::closed, bound::closed,
   nullptr,
   "the exponent of the tangent-point kernel's numerator (Yu et al.): at least 1; 8 is far beyond the seed system's 3"},
  {param::repulsive_growth_beta, "track_params.repulsive_growth.beta", "", false, 2, 17, bound::open, bound::closed,
   nullptr,
   "the energy is defined and repulsive for beta in (alpha + 1, 2 alpha + 1] (checked too, see the rules below); "
   "with alpha in [1, 8] that spans (2, 17]"},
  {param::repulsive_growth_tau, "track_params.repulsive_growth.tau", "", false, 0, 1, bound::open, bound::closed,
   nullptr,
   "the largest move per iteration as a fraction of the mean edge: positive (0 never moves), at most one mean edge "
   "(the default 0.4)"},
  {param::repulsive_growth_length_weight, "track_params.repulsive_growth.length_weight", "", false, 0, 1e6,
   bound::closed, bound::closed, nullptr,
   "the weight of ((P - L_t) / L_0)^2 in the energy: not negative (0 leaves the length to the rescaling after each "
   "step); 1e6 is far beyond the default 30"},
  {param::repulsive_growth_points, "track_params.repulsive_growth.points", "", true, 16, 512, bound::closed,
   bound::closed, nullptr,
   "the finest level's points become the control points: 16 at least (two levels of 8, see the rules below); every "
   "iteration tests points^2 pairs, and 512 bounds that work and the flow's arrays in the scratch"},
  {param::repulsive_growth_levels, "track_params.repulsive_growth.levels", "", true, 1, 4, bound::closed,
   bound::closed, nullptr,
   "levels of the coarse-to-fine schedule, each with twice the points of the one before: 4 levels start 512 "
   "points at 64"},
  {param::repulsive_growth_settle_iterations, "track_params.repulsive_growth.settle_iterations", "", true, 0, 10000,
   bound::closed, bound::closed, nullptr,
   "0: none after the ratchet's; every iteration costs O(points^2), and 10000 bounds that work"},
  {param::repulsive_growth_resample_every, "track_params.repulsive_growth.resample_every", "", true, 1, 10000,
   bound::closed, bound::closed, nullptr, "an iteration count: 1 resamples after every iteration; 10000 as "
   "settle_iterations"},
  {param::repulsive_growth_stall_window, "track_params.repulsive_growth.stall_window", "", true, 1, 10000,
   bound::closed, bound::closed, nullptr, "an iteration count: 1 tests after every iteration; 10000 as "
   "settle_iterations"},
  {param::repulsive_growth_stall_area_tolerance, "track_params.repulsive_growth.stall_area_tolerance", "", false, 0, 1,
   bound::closed, bound::closed, nullptr,
   "a fraction of the enclosed area: 0 never stops early (the flow runs its iteration bound), 1 stops at nearly "
   "the first test past the final length"},
  {param::repulsive_growth_deactivate_obstacles, "track_params.repulsive_growth.deactivate_obstacles", "", true, 0, 1,
   bound::closed, bound::closed, nullptr, "0 (the discs stay) or 1 (they stop repelling at the final length)"},
  {param::relaxation_max_iterations, "track_params.relaxation.max_iterations", "", true, 0, 1000, bound::closed,
   bound::closed, nullptr,
   "the bound of the BOUNDED loop (0 turns the stage off); each sweep tests up to N^2 / 2 bead pairs, and 1000 "
   "bounds the work of one attempt"},
  {param::relaxation_margin, "track_params.relaxation.margin", "", false, 0, 1, bound::closed, bound::closed, nullptr,
   "a fraction of validation's clearance and turn radius: 0 aims at the thresholds themselves, 1 at twice them"},
  {param::relaxation_separation_weight, "track_params.relaxation.separation_weight", "", false, 0, 2, bound::closed,
   bound::closed, nullptr, "a scale of the averaged push: 1 moves a bead half the overlap; above 2 it overshoots"},
  {param::relaxation_spacing_weight, "track_params.relaxation.spacing_weight", "", false, 0, 2, bound::closed,
   bound::closed, nullptr, "a scale of the edge correction: 1 corrects each edge halfway; above 2 it overshoots"},
  {param::relaxation_bending_weight, "track_params.relaxation.bending_weight", "", false, 0, 10, bound::closed,
   bound::closed, nullptr,
   "a scale of the radius deficit; the pull is capped at the neighbours' midpoint, so 10 pulls all the way from a "
   "tenth of a deficit"},
  {param::relaxation_chebyshev_rho, "track_params.relaxation.chebyshev_rho", "", false, 0, 0.999, bound::closed,
   bound::closed, nullptr,
   "a spectral radius estimate, below 1 (the weights 4 / (4 - rho^2 w) stay finite); 0: no acceleration "
   "(chebyshev_gamma still damps)"},
  {param::relaxation_chebyshev_gamma, "track_params.relaxation.chebyshev_gamma", "", false, 0, 1, bound::open,
   bound::closed, nullptr, "an under-relaxation factor: positive, at most 1 (no damping)"},
  {param::relaxation_chebyshev_start, "track_params.relaxation.chebyshev_start", "", true, 0, 1000, bound::closed,
   bound::closed, nullptr, "a sweep index within max_iterations' range (at or past max_iterations: no sweep is "
   "accelerated)"},
  {param::relaxation_smoothing_passes, "track_params.relaxation.smoothing_passes", "", true, 0, 100, bound::closed,
   bound::closed, nullptr, "Taubin passes of two O(N) steps each: 100 is far past what smooths a push's kink"},
  {param::gates_per_track, "gates per track", "", true, 1, 1e7, bound::closed, bound::closed, nullptr,
   "G_max = ceil(L_cap / checkpoint_spacing), L_cap the longest track the course may hold: validate.length_max "
   "(the largest over track_variants), or 1.5 times the longest user polyline; every env stores G_max gates of "
   "32 bytes, G_max an int: 1e7 gates are 320 MB per env"},
  {param::user_track_points, "points per user track", "", true, 3, 16384, bound::closed, bound::closed, nullptr,
   "the distinct points of one user track (after merging, see user_tracks.tracks[t] below) become its dense samples "
   "(centreline) or its control points (times samples_per_segment dense samples): 16 bytes of scratch each, so "
   "more than 16384 never fit one block's scratch (scratch bytes per track); the bound also keeps every count x "
   "samples_per_segment product (<= 2^22) far below INT_MAX"},
  {param::scratch_bytes_per_track, "scratch bytes per track", "", true, 0, block_shared_bytes, bound::closed,
   bound::closed, nullptr,
   "a track's scratch arrays (2 x 12 bytes per control point, the spline's 48 bytes per segment, 16 bytes per dense "
   "sample (4 where the pipeline keeps only their chords: stages::catmull_rom_chords), 12 bytes per resampled "
   "sample: control capacity max(M, 16) or the largest user track) live in one "
   "block's shared memory on the GPU: 227 KiB on sm_80 and sm_90 (the H200); the host backend holds the same limit, "
   "so that a parameter set behaves alike on both (the kernel's own shared memory can lower the GPU's limit by a "
   "little more)"},
  {param::course_bytes, "bytes per course", "", true, 0, 1099511627776.0, bound::closed, bound::closed, nullptr,
   "a course's one allocation (course::required_bytes: the batch with its gates, the progress tracker, the "
   "generator): 1 TiB (2^40 bytes) is beyond any one GPU's memory (the H200's 141 GB) and keeps every size_t sum "
   "of the plan far from overflow"},
  {param::position, "step position coordinates", "m", false, -max_position, max_position, bound::closed,
   bound::closed, nullptr,
   "every coordinate of a position passed to progress_tracker_ref::step (and of user track points); outside, or "
   "NaN / Inf, a step is invalid input: status::invalid_input, progress_flags::invalid_position, state unchanged. 1e7 m "
   "is 10 x the longest track length, float32 still resolves 1 m there, and squared distances stay far below "
   "float's range (beyond ~1e19 m they overflow: the projection's lateral offset became +inf)"},
  {param::voronoi_control_points, "track_params.voronoi.control_points", "", true, 4, 256, bound::closed, bound::closed,
   nullptr,
   "K targets: a closed Catmull-Rom spline needs 4 points; K x 2^chaikin_rounds <= 1024 control points, the most "
   "that fit one block's scratch (as polar.control_points), and thread 0 removes duplicates in O(K^2)"},
  {param::voronoi_radius_min, "track_params.voronoi.radius_min", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, nullptr, "targets lie off the origin (1 mm at least); lengths stay <= 1e6 m"},
  {param::voronoi_radius_max, "track_params.voronoi.radius_max", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, "track_params.voronoi.radius_min", "a radius band: radius_max >= radius_min; lengths stay <= 1e6 m"},
  {param::voronoi_angle_jitter, "track_params.voronoi.angle_jitter", "", false, 0, 0.999, bound::closed, bound::closed,
   nullptr, "a fraction of the angular step 2 pi / K, as polar.angle_jitter: below 1 the target angles stay sorted"},
  {param::voronoi_site_spacing, "track_params.voronoi.site_spacing", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, nullptr,
   "a cell has a size (1 mm at least); lengths stay <= 1e6 m, so that radius / spacing (the cell index) stays far "
   "below INT_MAX"},
  {param::voronoi_site_jitter, "track_params.voronoi.site_jitter", "", false, 0, 1, bound::closed, bound::closed,
   nullptr,
   "a fraction of the cell: at most 1 keeps each site inside its own cell, which makes the nearest-site search over "
   "the 5 x 5 cells around a target exact"},
  {param::voronoi_min_angle_gap, "track_params.voronoi.min_angle_gap", "", false, 0, 0.999, bound::closed,
   bound::closed, nullptr,
   "a fraction of the angular step 2 pi / K (0 keeps every distinct site); below 1, so that targets a step apart "
   "can both stay"},
  {param::voronoi_chaikin_rounds, "track_params.voronoi.chaikin_rounds", "", true, 0, 2, bound::closed, bound::closed,
   nullptr,
   "each round doubles the control points; 2 rounds already give corners of about the spline's own roundness, and "
   "keep K x 2^rounds within the scratch"},
  {param::checkpoint_checkpoints, "track_params.checkpoint.checkpoints", "", true, 4, 64, bound::closed, bound::closed,
   nullptr,
   "C checkpoints: 4 so that the checkpoints themselves can be the control points (the spline needs 4); candidate "
   "k draws [128 k, 128 k + C], so C < 128, and 64 bounds the checkpoint work"},
  {param::checkpoint_radius_min, "track_params.checkpoint.radius_min", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, nullptr, "checkpoints lie off the origin (1 mm at least); lengths stay <= 1e6 m"},
  {param::checkpoint_radius_max, "track_params.checkpoint.radius_max", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, "track_params.checkpoint.radius_min",
   "a radius band: radius_max >= radius_min; lengths stay <= 1e6 m"},
  {param::checkpoint_angle_jitter, "track_params.checkpoint.angle_jitter", "", false, 0, 0.999, bound::closed,
   bound::closed, nullptr,
   "a fraction of the angular step 2 pi / C: below 1 the checkpoint angles stay sorted, as the walk visits them"},
  {param::checkpoint_step_length, "track_params.checkpoint.step_length", "m", false, 1e-3, max_length, bound::closed,
   bound::closed, nullptr, "the walk moves (1 mm per step at least); lengths stay <= 1e6 m"},
  {param::checkpoint_max_turn_rate, "track_params.checkpoint.max_turn_rate", "rad/m", false, 1e-3, 1e6, bound::closed,
   bound::closed, nullptr, "the walk must be able to turn (positive); 1e6 rad/m is no bound at any step length"},
  {param::checkpoint_steer_gain, "track_params.checkpoint.steer_gain", "", false, 1e-3, 1, bound::closed,
   bound::closed, nullptr,
   "a fraction of the heading error: positive (0 never steers), at most all of it (more would overshoot)"},
  {param::checkpoint_closure_boost, "track_params.checkpoint.closure_boost", "", false, 1, 100, bound::closed,
   bound::closed, nullptr, "a multiplier of the turn bound: 1 is no ramp; 100 is far beyond any use"},
  {param::checkpoint_control_spacing, "track_params.checkpoint.control_spacing", "m", false, 1e-3, max_length,
   bound::closed, bound::closed, nullptr, "a length (1 mm at least); lengths stay <= 1e6 m"},
  {param::checkpoint_max_steps, "track_params.checkpoint.max_steps", "", true, 16, 4096, bound::closed, bound::closed,
   nullptr,
   "the bound of the BOUNDED walk (two laps: a warm-up and the recorded one); every candidate's serial walk costs "
   "up to this many steps, and its recorded points (max_steps / steps per point + 1) sit in the dense scratch"},
  {param::checkpoint_candidates, "track_params.checkpoint.candidates", "", true, 1, 64, bound::closed, bound::closed,
   nullptr,
   "one candidate at least; K candidates' points share the dense scratch, and 64 bounds the work of an attempt"},
  {param::checkpoint_closure_tolerance, "track_params.checkpoint.closure_tolerance", "m", false, 0, max_length,
   bound::closed, bound::closed, nullptr, "a distance; lengths stay <= 1e6 m"},
  {param::elevation_profile, "track_params.elevation.profile", "", true, 0, 3, bound::closed, bound::closed, nullptr,
   "a track_gen::elevation_kind: flat 0, uniform 1, random_walk 2, harmonics 3"},
  {param::elevation_knots, "track_params.elevation.knots", "", true, 3, 256, bound::closed, bound::closed, nullptr,
   "a closed profile needs 3 knots to rise and fall; the K values and slopes (8 bytes each) share the 2 KiB "
   "scratch region of the spline segments"},
  {param::elevation_z_min, "track_params.elevation.z_min", "m", false, -max_length, max_length, bound::closed,
   bound::closed, nullptr, "an elevation band; lengths stay within 1e6 m"},
  {param::elevation_z_max, "track_params.elevation.z_max", "m", false, -max_length, max_length, bound::closed,
   bound::closed, "track_params.elevation.z_min", "an elevation band: z_max >= z_min; lengths stay within 1e6 m"},
  {param::elevation_max_grade, "track_params.elevation.max_grade", "", false, 0, 1e6, bound::closed, bound::closed,
   nullptr, "a rise over a run: 0 accepts only level tracks; 1e6 is no bound at any sample spacing"},
  {param::elevation_harmonics, "track_params.elevation.harmonics", "", true, 1, 16, bound::closed, bound::closed,
   nullptr, "one cosine at least; each knot sums H of them, and 16 bounds that work"},
  {param::gates_ordering, "track_params.gates.ordering", "", true, 0, 1, bound::closed, bound::closed, nullptr,
   "a track_gen::gate_ordering: as_generated 0, angle_sorted 1"},
  {param::gates_min_gates, "track_params.gates.min_gates", "", true, 3, 256, bound::closed, bound::closed, nullptr,
   "a closed course line needs 3 gates; the gates are control points, and 256 bounds the O(G^2) spacing work"},
  {param::gates_max_gates, "track_params.gates.max_gates", "", true, 3, 256, bound::closed, bound::closed,
   "track_params.gates.min_gates", "a count band: max_gates >= min_gates; 256 bounds the O(G^2) spacing work"},
  {param::gates_min_spacing, "track_params.gates.min_spacing", "m", false, 0, max_length, bound::closed, bound::closed,
   nullptr, "a distance (0: no spacing); lengths stay <= 1e6 m"},
  {param::gates_spacing_iterations, "track_params.gates.spacing_iterations", "", true, 0, 256, bound::closed,
   bound::closed, nullptr, "0 turns the solve off; each round is O(G^2), and 256 bounds that work"},
  {param::gates_align, "track_params.gates.align", "", true, 0, 1, bound::closed, bound::closed, nullptr,
   "a track_gen::gate_align: yaw_only 0, full_tangent 1"},
  {param::sdf_resolution, "sdf_field.resolution", "", true, 8, 512, bound::closed, bound::closed, nullptr,
   "texels per side of an env's signed distance grid (sdf.hpp): 8 leaves 4 cells across the track inside the "
   "2-cell margins; 512 (1 MiB per env) bounds the memory (E R^2 x 4 bytes) and a bake's work per env"},
  {param::gate_frame_half_thickness, "gate_frame.half_thickness", "m", false, 1e-4, max_length, bound::closed,
   bound::closed, nullptr,
   "half the size of a gate frame's posts and bars across, in the gate plane (gate_collision.hpp): a member has a "
   "size (0.1 mm at least); lengths stay <= 1e6 m"},
  {param::gate_frame_half_depth, "gate_frame.half_depth", "m", false, 1e-4, max_length, bound::closed, bound::closed,
   nullptr,
   "half the size of a gate frame's posts and bars along the gate normal (gate_collision.hpp): a member has a size "
   "(0.1 mm at least); lengths stay <= 1e6 m"},
  {param::gate_frame_radius, "gate_frame.radius", "m", false, 0, max_length, bound::open, bound::closed, nullptr,
   "the radius of the sphere tested against gate frames (collide_gate_frames): positive (a sphere, not a point); "
   "lengths stay <= 1e6 m"},
  {param::heightfield_resolution, "heightfield.resolution", "", true, 2, 512, bound::closed, bound::closed, nullptr,
   "texels per side of an env's terrain-height grid (heightfield.hpp): bilinear sampling needs 2; 512 (1 MiB per "
   "env) bounds the memory (E R^2 x 4 bytes) and a bake's work per env"},
  {param::heightfield_margin, "heightfield.margin", "m", false, 0, max_length, bound::closed, bound::closed, nullptr,
   "grid around the borders' bounding box on every side (0: the box alone); lengths stay <= 1e6 m"},
};
// clang-format on

inline constexpr std::size_t param_count = static_cast<std::size_t>(param::count);
static_assert(sizeof(param_ranges) / sizeof(param_ranges[0]) == param_count, "one row per track_gen::detail::param");

constexpr bool param_ranges_in_order() {
  for (std::size_t i = 0; i < param_count; ++i)
    if (static_cast<std::size_t>(param_ranges[i].id) != i) return false;
  return true;
}
static_assert(param_ranges_in_order(), "param_ranges rows must be in track_gen::detail::param order");

/// The row of `p`.
constexpr const param_range& range_of(param p) { return param_ranges[static_cast<std::size_t>(p)]; }

/// A constraint that is not a range (docs/parameters.md lists them under the table).
struct param_rule {
  const char* name;
  const char* rule;
  const char* reason;
};

/// Index of each rule in `param_rules`.
enum class rule : int {
  iterations_per_window_even,
  env_offset,
  repulsive_growth_beta,
  repulsive_growth_points,
  user_tracks_type,
  user_tracks_count,
  user_track_points,
  user_track_far,
  env_variant
};

// clang-format off
inline constexpr param_rule param_rules[] = {
  {"track_params.dense_repulsive.iterations_per_window", "even",
   "the iterations alternate between two buffers and a window ends in the first"},
  {"track_params.env_offset", "env_offset + num_envs - 1 <= 2^32 - 1",
   "global env ids (env_offset + e) are uint32: they key the random streams"},
  {"track_params.repulsive_growth.beta", "in (alpha + 1, 2 alpha + 1]",
   "the tangent-point energy of Yu et al. is defined and repulsive there"},
  {"track_params.repulsive_growth.points", "a multiple of 2^(levels - 1), at least 8 x 2^(levels - 1)",
   "each level has twice the points of the one before, and the coarsest needs 8 (the energy pairs points at least "
   "3 apart)"},
  {"user_tracks.type", "kind::control_points or kind::centreline",
   "every place that builds a user track branches on it"},
  {"user_tracks.tracks", "1 track (shared by every env) or num_envs tracks",
   "one track per env, or one for all"},
  {"user_tracks.tracks[t]", "finite points; at least 4 distinct points (control_points) or 3 (centreline), and at "
   "most 16384 (points per user track), after merging consecutive points closer than 1e-6 of the track's extent",
   "a closed Catmull-Rom spline needs 4 points, a closed polyline 3"},
  {"user_tracks.recentre", "false: a track with a given point beyond 8192 m (precise_position) on some axis gets "
   "status::far_from_origin; true: the track moves by its mean rounded to whole metres, reported as the env's origin",
   "float32 resolves less than 1 mm beyond 8192 m (7.8 mm at 1e5 m): the frames and the lateral offset lose it"},
  {"track_variants.env_variant[e]", "in [0, variants.size() - 1]; variants not empty; num_envs entries",
   "env e generates with variants[env_variant[e]]"},
};
// clang-format on

static_assert(sizeof(param_rules) / sizeof(param_rules[0]) == static_cast<std::size_t>(rule::env_variant) + 1,
              "one row per track_gen::detail::rule");

/// The row of `r`.
constexpr const param_rule& rule_of(rule r) { return param_rules[static_cast<std::size_t>(r)]; }

}  // namespace track_gen::detail

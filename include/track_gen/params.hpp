#pragma once
/// @file
/// Generation parameters: one struct per stage, gathered in `track_params`. All lengths in
/// metres, angles in radians. Each field's comment states its range as the construction checks
/// enforce it: they read one table, detail/param_ranges.hpp, which docs/parameters.md prints
/// with the reason for every bound (tests/core/param_ranges_test.cpp keeps the three in step).

#include <track_gen/detail/config.hpp>

#include <cstdint>

namespace track_gen {

/// The generator families of random tracks (stages::random_any_family draws each env's; stages::random_family
/// all but repulsive).
enum class generator_family : int {
  polar = 0,       ///< stages::random_polar: sorted jittered angles, radii in a band
  bezier = 1,      ///< stages::bezier_corners
  hull = 2,        ///< stages::hull_corners
  voronoi = 3,     ///< stages::voronoi_sites
  checkpoint = 4,  ///< stages::checkpoint_walk
  repulsive = 5,   ///< stages::repulsive_growth (the seed system's `repulsive` generator)
};

/// Number of generator families (the extent of generator_params::weights).
inline constexpr int num_generator_families = 6;

/// The families' names, in generator_family order (the seed system's `generator=` names; Python
/// takes them as `generator="bezier"` and `generator_weights={"bezier": 1.0, ...}`).
inline constexpr const char* generator_family_names[num_generator_families] = {"polar", "bezier", "hull", "voronoi",
                                                                               "checkpoint", "repulsive"};

namespace detail {
/// A pipeline's family_rule when `track_params::generator` may select any family.
inline constexpr int any_family = -2;
/// A pipeline's family_rule when `track_params::generator` may select any family but repulsive
/// (stages::random_family).
inline constexpr int any_family_but_repulsive = -3;
}  // namespace detail

/// `stages::random_family`: which generator family draws each env's control points.
struct generator_params {
  /// The family of every env when all `weights` are 0, a generator_family in [0, 5].
  generator_family family = generator_family::polar;
  /// Relative weight of each family, indexed by generator_family, each in [0, 1e6]. When any is
  /// positive, each env draws its family for each episode with probability weight / sum (one
  /// Philox draw keyed on seed, global env and episode: every attempt of an episode keeps the
  /// family, so failed attempts do not shift the mix), and `family` is ignored.
  float weights[num_generator_families] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
};

/// `stages::random_polar`: control points at sorted jittered angles around the origin, their
/// radii drawn in a band and scaled by a random lobed profile (two and three lobes).
///
/// Defaults and why (the `track` preset: tracks of 10-60 m, half-width 0.3 m): 12 points at
/// radii 4.5-6 m, each angle jittered by up to 0.15 of a step either way (angle_jitter 0.3: 1.07
/// attempts a track against 1.09 at 0.4, host, E = 512, seed 0), and lobes whose amplitudes sum
/// to 0.48-0.8 of the radius. The lobes make peanuts, kidneys, L- and Y-shapes of 36-56 m (median
/// compactness 0.65 on the host at seed 0, against 0.86 for the band alone: docs/shapes.md);
/// they are smooth at the scale of the points, so the spline keeps its turns wider than the
/// 0.4 m validate asks for (1.07 attempts a track, against 1.2 for the band alone). A narrow
/// band with strong lobes, rather than a wide band: radii drawn independently in 1.5-7 m reach
/// only 0.71, and they put spikes between neighbours: 94 % of their first attempts fail the turn
/// radius.
struct random_polar_params {
  /// Number of control points M, in [4, 1024].
  int control_points = 12;
  /// Smallest radius of the control points [m], in [0.001, 1e6].
  float radius_min = 4.5f;
  /// Largest radius of the control points [m], in [radius_min, 1e6].
  float radius_max = 6.0f;
  /// Angular jitter as a fraction of the angular step 2*pi/M, in [0, 0.999]: angles stay strictly
  /// increasing because each point moves at most jitter/2 of a step either way.
  float angle_jitter = 0.3f;
  /// Smallest total amplitude a2 + a3 of the lobes, a fraction of the radius, in [0, 0.9]. Point
  /// i at angle phase + t has radius r_i (1 + a2 cos(2 t + p2) + a3 cos(3 t + p3)), with r_i
  /// uniform in the radius band, the total drawn uniform in [lobe_amplitude_min,
  /// lobe_amplitude_max] per track, its split between a2 and a3 and the phases p2, p3 uniform.
  /// Both amplitudes 0: no lobes (the band alone, the points of the library before the lobes).
  float lobe_amplitude_min = 0.48f;
  /// Largest total amplitude of the lobes, in [lobe_amplitude_min, 0.9].
  float lobe_amplitude_max = 0.8f;
  /// Lowest elevation of the control points [m], in [-1e6, 1e6] (both 0: a flat track).
  float elevation_min = 0.0f;
  /// Highest elevation of the control points [m], in [elevation_min, 1e6].
  float elevation_max = 0.0f;
};

/// `stages::polygon_separation`: bounded relaxation pushing non-adjacent control-polygon segments apart.
struct polygon_separation_params {
  /// Target clearance [m], in [0, 1e6], between a control point and every polygon segment that
  /// is not one of its near neighbours (the segments incident to it and to its neighbours; for
  /// a family refined by r rounds of corner cutting, 2^r segments on either side).
  float clearance = 1.5f;
  /// Pull of every control point toward the midpoint of its neighbours, per iteration while an
  /// overlap remains, in [0, 0.999].
  float smoothing = 0.12f;
  /// Iteration bound (the BOUNDED loop), in [0, 1000]; 0 disables the stage.
  ///
  /// Why 12 and 0.12: at their defaults the polar, bezier and checkpoint families' polygons (and
  /// long_track's) pass the first iteration's test without a push, so the schedule leaves their
  /// tracks as they were; voronoi's settle within a few iterations and change a little. The
  /// hull family's polygon never settles (its Chaikin points sit inside the clearance of the
  /// segments just past the band): the bound and the pull are its corner rounding, and 12
  /// iterations at 0.12 round its corners nearly as 32 at 0.05 did, in fewer iterations
  /// (docs/performance-log.md, entry 49).
  int max_iterations = 12;
  /// Stop once the largest overlap is below this [m], in [1e-9, 1e6].
  float tolerance = 1e-3f;
};

/// `stages::catmull_rom`: periodic centripetal Catmull-Rom spline through the control points.
struct spline_params {
  /// Dense samples per spline segment, in [4, 256].
  int samples_per_segment = 32;
};

/// `stages::dense_repulsive` (grid scope): Jacobi relaxation of the dense centreline samples
/// of a random track that pushes sections far apart along the track to at least `clearance`
/// apart in space. Runs as windows of launches (several blocks per track); the stage is off when
/// `max_windows` or `clearance` is 0 (the default: only pipelines that contain the stage read it).
struct dense_repulsive_params {
  /// Target distance [m], in [0, 1e6], between dense samples farther apart along the track than a
  /// half circle of diameter `clearance`. The samples that never repel are capped at half the
  /// track, so a clearance above about L / pi has no pair left to push: the stage does nothing.
  float clearance = 0.0f;
  /// Fraction of the summed push applied per iteration, in [1e-6, 1].
  float step = 0.25f;
  /// Pull of a pushed sample toward the midpoint of its neighbours, per iteration, in [0, 0.999].
  float smoothing = 0.5f;
  /// Jacobi iterations per window (one launch each), even, in [2, 256].
  int iterations_per_window = 8;
  /// Window bound (the BOUNDED loop), in [0, 1000]: a track stops after this many windows even
  /// if it has not converged. Cost per track, worst case: max_windows * iterations_per_window
  /// iterations of O(D^2) work (D dense samples; 4.2e6 pairs per iteration at D = 2048).
  int max_windows = 0;
  /// A track stops once its largest overlap in the last iteration of a window is below this [m],
  /// in [1e-9, 1e6]. Below about 1e-6 of the track's coordinates (float32 resolution) it never converges, and
  /// every track runs all max_windows windows.
  float tolerance = 1e-2f;
};

/// `stages::validate`: acceptance test of a candidate track and the retry budget.
struct validate_params {
  /// Shortest accepted centreline [m], in [0.001, 1e6].
  float length_min = 10.0f;
  /// Longest accepted centreline [m], in [length_min, 1e6]. It also sizes every env's gate
  /// storage: ceil(length_max / checkpoint_spacing) gates, at most 1e7.
  float length_max = 60.0f;
  /// Minimum turn radius of the centreline [m], in [0.0001, 1e6]: max curvature <= 1 / r with
  /// r = max(turn_radius_min, half_width + clearance_margin / 2) (tighter folds the inner edge).
  float turn_radius_min = 0.4f;
  /// Extra gap required between track edges that are far apart along the track [m], in [0, 1e6]:
  /// such sections of the centreline (the segments between its samples, as segments) must be
  /// >= 2 * half_width + clearance_margin apart; a centreline that crosses itself never passes.
  float clearance_margin = 0.1f;
  /// Attempts before the fallback ellipse, in [1, 255].
  int max_attempts = 16;
};

/// The most a batch's parameters may cost, per track, before construction refuses them: legal
/// parameters can otherwise ask for an hour of work per env (1024 control points, 1000 repulsive
/// iterations, 255 attempts) or hundreds of MB per env (gates every 0.1 m of a 1e6 m length_max).
/// `track_gen::estimate_cost` states both for a parameter set before anything is built; raise a
/// field to accept a costlier set. Batch-wide (a variant's budget is the batch's).
struct budget_params {
  /// Worst-case operations to generate one track (estimate_cost: point-segment and
  /// segment-segment tests, dense samples), in [1, 1e18]. The default, 1e10, is about a minute
  /// of one CPU core, and 36 times the long_track preset's worst case.
  float operations_per_track = 1e10f;
  /// Bytes of track storage per env (estimate_cost: the samples and the gate capacity),
  /// in [1, 1e12]. The default, 1e8, is 3 million gates of 32 bytes.
  float bytes_per_env = 1e8f;
};

/// `stages::voronoi_sites` (family `voronoi`): K targets at sorted jittered angles around the
/// origin, each snapped to its nearest site of a jittered grid (the owner of its Voronoi cell),
/// duplicates removed, then Chaikin corner cutting. Flat (z = 0).
///
/// Defaults and why (the `track` preset's scale: tracks of 10-60 m, half-width 0.3 m): 14 targets
/// at radii 2.5-7.5 m give loops of about 38 m whose radius varies by a factor of 3 around the lap
/// (median compactness about 0.80: docs/generators.md; 0.86 for random_polar's 4-7 m band
/// without lobes); sites 2 m apart, jittered by 0.9 of a cell, move each target by up to about a
/// metre, the irregularity of the field; dropping sites closer than half a step in angle
/// removes the radial spikes that otherwise fail the 0.4 m turn radius; 2 Chaikin rounds round
/// the corners enough that 78 % of first attempts pass validation (1 round: 42 %).
/// docs/generators.md has the figures.
struct voronoi_params {
  /// Number of targets K (control points before corner cutting), in [4, 256].
  int control_points = 14;
  /// Smallest radius of the targets [m], in [0.001, 1e6].
  float radius_min = 2.5f;
  /// Largest radius of the targets [m], in [radius_min, 1e6].
  float radius_max = 7.5f;
  /// Angular jitter of the targets as a fraction of the step 2*pi/K, in [0, 0.999].
  float angle_jitter = 0.5f;
  /// Spacing of the site grid [m], in [0.001, 1e6]: one site per square cell of this side.
  float site_spacing = 2.0f;
  /// Jitter of each site inside its cell, as a fraction of the cell, in [0, 1] (0: a square lattice).
  float site_jitter = 0.9f;
  /// Least polar angle between consecutive kept sites, as a fraction of the step 2*pi/K,
  /// in [0, 0.999]: a site closer in angle to the last kept one is dropped (a radial spike).
  float min_angle_gap = 0.5f;
  /// Rounds of Chaikin corner cutting, in [0, 2]: each doubles the control points.
  int chaikin_rounds = 2;
};

/// `stages::checkpoint_walk` (family `checkpoint`, after Gymnasium's CarRacing track): checkpoints at
/// jittered angles and random radii, a steering walk with a bounded turn rate through them, the
/// best of several candidates. Flat (z = 0).
///
/// Defaults and why (the `track` preset's scale): 10 checkpoints at radii 2.5-7.5 m, jittered by
/// 0.8 of their angular step, give loops of about 38 m with lobes and dents (median compactness
/// about 0.64); steps of 0.25 m with at most 0.8 rad/m of turn (a 1.25 m radius, three times the
/// 0.4 m turn radius of validation, so the spline through the walk stays within it) and half the
/// heading error corrected per step follow the checkpoints without circling them; a closure boost
/// of 2 turns the walk back onto its start; a control point every 1.25 m (5 steps) keeps points
/// about 1 m or more apart, as stages::polygon_separation expects; 960 steps are two laps of the longest
/// loops; 4 candidates, the first closed and uncrossed one of the lowest compactness winning,
/// cost 4 walks per attempt, and 99.9 % of first attempts pass validation.
struct checkpoint_params {
  /// Number of checkpoints C around the origin, in [4, 64].
  int checkpoints = 10;
  /// Smallest radius of the checkpoints [m], in [0.001, 1e6].
  float radius_min = 2.5f;
  /// Largest radius of the checkpoints [m], in [radius_min, 1e6].
  float radius_max = 7.5f;
  /// Angular jitter of the checkpoints as a fraction of the step 2*pi/C, in [0, 0.999].
  float angle_jitter = 0.8f;
  /// Length of one walk step [m], in [0.001, 1e6].
  float step_length = 0.25f;
  /// Largest turn of the walk per metre [rad/m], in [0.001, 1e6] (the walk's curvature bound).
  float max_turn_rate = 0.8f;
  /// Fraction of the heading error toward the target corrected per step (before the turn bound),
  /// in [0.001, 1].
  float steer_gain = 0.5f;
  /// Turn-bound multiplier reached at the end of the last leg (the closure ramp), in [1, 100].
  float closure_boost = 2.0f;
  /// Walk length between two recorded control points [m], in [0.001, 1e6].
  float control_spacing = 1.25f;
  /// Step bound of the walk (the BOUNDED loop), in [16, 4096].
  int max_steps = 960;
  /// Candidate walks per attempt (the best is kept), in [1, 64].
  int candidates = 4;
  /// A candidate whose walk ends farther than this from its start [m] ranks below every closed one,
  /// in [0, 1e6].
  float closure_tolerance = 1.0f;
};

/// `stages::bezier_corners` (the bezier family, families/bezier.hpp): random corners sorted by
/// angle, joined by a closed piecewise cubic Bezier curve whose samples are the control points.
struct bezier_params {
  /// Fewest corners drawn per track, in [3, 64]. 8-12 corners in a disc of radius 6.5 m give
  /// tracks of about 32-42 m (p10-p90) with bends of different sizes.
  int corners_min = 8;
  /// Most corners drawn per track, in [corners_min, 64].
  int corners_max = 12;
  /// Half-size of the corners' region [m], in [0.001, 1e6]: the square [-extent, extent]^2
  /// (grid layout) or the disc of radius extent.
  float extent = 6.5f;
  /// 0: one corner per cell of a jittered g x g grid (g^2 >= 2 x corners), 1: uniform in a disc;
  /// in [0, 1]. The disc: with min_corner_distance 3 m the grid's cells (2.6-3.3 m) leave the
  /// corners almost no jitter, and regular shapes.
  int layout = 1;
  /// Least distance between two corners [m], in [0, 1e6]: closer candidates are drawn again
  /// (8 tries, then the corner is dropped). 3 m keeps the bends between corners wide enough for
  /// the 0.4 m turn radius in half the attempts, and leaves stages::polygon_separation little to push: at
  /// 2.5 m its pushes left kinks between samples in 1 track of 1,000 (a spacing error of the
  /// resampled centreline beyond 1 %).
  float min_corner_distance = 3.0f;
  /// Largest turn of the corner polygon at a corner [rad], in [0.1, 3.1416]: sharper corners
  /// (spikes and notches of the angle-sorted polygon) are dropped, the sharpest first, while
  /// more than 3 remain. Off (3.1416 > pi) by default: the Bezier handles round sharp corners,
  /// and pruning makes the shapes rounder and shorter (median compactness 0.91 at 1.8).
  float max_turn = 3.1416f;
  /// Handle length as a fraction of the distance to the neighbouring corner, in [0, 1]: 0 gives
  /// the corner polygon, larger values rounder bends.
  float rad = 0.4f;
  /// Blend of each corner's tangent from the bisector of its two edges (0, smooth) toward its
  /// incoming edge (1, the bend turns after the corner), in [0, 1].
  float edgy = 0.0f;
  /// Largest handle as a fraction of the corner's shorter edge, in [0, 0.5]: the two handles
  /// on an edge then sum to at most the edge and never cross.
  float handle_clamp = 0.4f;
  /// Control points sampled per Bezier piece (at t = j / samples_per_piece), in [1, 16]. 4 keeps
  /// the Catmull-Rom spline close to the Bezier curve at sharp corners (51 % of attempts pass
  /// validation, 36 % at 3) with points about 1 m apart, as stages::polygon_separation expects.
  int samples_per_piece = 4;
};

/// `stages::hull_corners` (the hull family, families/hull.hpp): random corners sorted by angle
/// (or their convex hull), each edge's midpoint pushed sideways, the 2 x corners points
/// interpolated by the shared spline.
struct hull_params {
  /// Fewest corners drawn per track, in [3, 64]. 10-14 corners (fewer after max_turn) in a
  /// 13 x 13 m square give tracks of about 23-40 m (p10-p90).
  int corners_min = 10;
  /// Most corners drawn per track, in [corners_min, 64].
  int corners_max = 14;
  /// Half-size of the corners' region [m], in [0.001, 1e6]: the square [-extent, extent]^2
  /// (grid layout) or the disc of radius extent.
  float extent = 6.5f;
  /// 0: one corner per cell of a jittered grid, 1: uniform in a disc; in [0, 1].
  int layout = 0;
  /// Least distance between two corners [m], in [0, 1e6] (as bezier_params).
  float min_corner_distance = 2.0f;
  /// Largest turn of the corner polygon at a corner [rad], in [0.1, 3.1416]: sharper corners
  /// (spikes and notches of the angle-sorted polygon) are dropped, the sharpest first, while
  /// more than 3 remain. 2 rad: a sharper corner of the polygon cannot keep the 0.4 m turn radius
  /// after one Chaikin pass with corners 2 m apart (7 % of attempts pass without pruning, 46 %
  /// with it).
  float max_turn = 2.0f;
  /// Largest sideways push of an edge's midpoint as a fraction of the edge's length, in [0, 1]
  /// (uniform in [-displacement, displacement]; positive is outward). 0.3 adds a bend between
  /// corners; 0.1 keeps nearer the corner polygon (1.5 attempts per track instead of 2.1).
  float displacement = 0.3f;
  /// 0: every corner, sorted by angle; 1: only the corners on their convex hull (rounder,
  /// fewer bends); in [0, 1].
  int convex = 0;
  /// Passes of Chaikin corner cutting of the 2 x corners points, in [0, 3]; each doubles the
  /// control points. 1 rounds the polygon's corners enough for the 0.4 m turn radius. From 2 on
  /// the control points come closer than polygon_separation.clearance (1.5 m): lower it (0.75 m) or
  /// the relaxation kinks the polygon between the resampled samples.
  int chaikin_passes = 1;
};

/// `stages::repulsive_growth` (family `repulsive`, families/repulsive_growth.hpp): a closed curve
/// grown from a small circle inside a disc with disc obstacles, by steepest descent of the
/// tangent-point energy under a ratcheted length (Yu, Schumacher & Crane, "Repulsive Curves",
/// ACM TOG 40(2), 2021; as a track generator: Henrich & Kötter, "Generating Race Tracks With
/// Repulsive Curves"). The seed system's `repulsive_*` parameters, with its defaults; lengths in
/// metres instead of fractions of its scale. The flow runs in the seed system's units (domain
/// radius 1.716) and is scaled to `domain_radius` at the end, so the shapes do not depend on it.
///
/// Defaults and why: a 7.5 m domain and a final length of 4.0-4.8 times the start circle's
/// (2 pi x 7.5 / 4 = 11.8 m) give loops of 47-57 m, inside the `track` preset's 10-60 m, with
/// strands about 2 m apart: 246 of 256 tracks passed its validation at the first attempt (host,
/// seed 1), against 34 of 64 with a 6.5 m domain and 4.5-5.5 (the seed system's multiples).
/// Resampling every 5 iterations instead of its 25: at 25 the curve grew saw-teeth between
/// resamplings that no track's turn radius survived. The other defaults are the seed system's
/// (64 -> 128 -> 256 points, ratchet 1.2 % an iteration, alpha 3, beta 6; docs/generators/repulsive.md).
struct repulsive_growth_params {
  /// Radius of the disc the curve grows in [m], in [0.001, 1e6] (the seed's
  /// repulsive_domain_frac x its reference length x scale).
  float domain_radius = 7.5f;
  /// Domain radius over the start circle's radius, in [1.5, 100] (repulsive_domain_init_ratio).
  float init_ratio = 4.0f;
  /// Least final length as a multiple of the start circle's, in [1, 20] (repulsive_grow_mult_min).
  float grow_mult_min = 4.0f;
  /// Largest final length multiple, in [grow_mult_min, 20] (repulsive_grow_mult_max).
  float grow_mult_max = 4.8f;
  /// Fewest disc obstacles, in [0, 32] (repulsive_obstacle_count_min).
  int obstacles_min = 8;
  /// Most disc obstacles, in [obstacles_min, 32] (repulsive_obstacle_count_max).
  int obstacles_max = 12;
  /// Smallest obstacle radius as a fraction of the domain radius, in [0, 0.5]
  /// (repulsive_obstacle_radius_min_frac).
  float obstacle_radius_min = 0.02f;
  /// Largest obstacle radius fraction, in [obstacle_radius_min, 0.5] (repulsive_obstacle_radius_max_frac).
  float obstacle_radius_max = 0.045f;
  /// Growth of the target length per iteration, in [0.0001, 0.5] (repulsive_ratchet_rate).
  float ratchet_rate = 0.012f;
  /// Tangent-point exponent alpha, in [1, 8] (repulsive_alpha). Usable tracks come with beta near
  /// 2 alpha (3 / 6, 3 / 7, 4 / 8); with beta near alpha + 1 (3 / 5, 3 / 4.5, 1 / 2.5) every
  /// attempt failed validation (docs/generators/repulsive.md).
  float alpha = 3.0f;
  /// Tangent-point exponent beta, in (2, 17] and in (alpha + 1, 2 alpha + 1] (repulsive_beta):
  /// the range of Yu et al.'s tangent-point energy.
  float beta = 6.0f;
  /// Largest move of a point per iteration as a fraction of the mean edge length, in (0, 1]
  /// (repulsive_tau).
  float tau = 0.4f;
  /// Weight of the length term, in [0, 1e6] (repulsive_w_len).
  float length_weight = 30.0f;
  /// Points of the finest level (the curve handed to the spline), in [16, 512] (the last of
  /// repulsive_stages).
  int points = 256;
  /// Levels of the coarse-to-fine schedule, in [1, 4]: level k has points / 2^(levels - 1 - k)
  /// points (at least 8), and the flow moves to the next level when the target length has doubled.
  int levels = 3;
  /// Iterations after the last length-ratchet iteration, in [0, 10000] (repulsive_settle_iters).
  int settle_iterations = 40;
  /// Iterations between arc-length resamplings of the curve, in [1, 10000] (repulsive_resample_every).
  int resample_every = 5;
  /// Iterations between the stall tests on the finest level, in [1, 10000] (repulsive_stall_window).
  int stall_window = 16;
  /// The flow stops once the length is reached and the enclosed area changed by less than this
  /// fraction over a stall window, in [0, 1] (repulsive_stall_area_tol).
  float stall_area_tolerance = 0.05f;
  /// 1: the disc obstacles stop repelling once the final length is reached (the domain wall
  /// stays), 0: they stay; in [0, 1] (repulsive_deactivate_obstacles).
  int deactivate_obstacles = 1;
};

/// The z profiles of stages::elevation_profile (detail/stages/elevation.hpp; the seed system's
/// `z_profile`: its "noise" is `harmonics` here).
enum class elevation_kind : int {
  flat = 0,         ///< z left as the earlier stages made it (the stage does nothing)
  uniform = 1,      ///< knot values uniform in [z_min, z_max]
  random_walk = 2,  ///< a walk over the knots with its grade capped, closed around the loop
  harmonics = 3,    ///< a sum of `harmonics` cosines of the loop's arc length fraction
};

/// Number of elevation profiles.
inline constexpr int num_elevation_kinds = 4;

/// The profiles' names, in elevation_kind order (Python's `elevation={"profile": "random_walk"}`).
inline constexpr const char* elevation_kind_names[num_elevation_kinds] = {"flat", "uniform", "random_walk", "harmonics"};

/// `stages::elevation_profile` and `stages::validate_grade` (presets::elevated_track_pipeline):
/// z of a random track as a periodic monotone cubic through K knots spaced evenly in plan-view
/// arc length, and the largest grade accepted. Read only by pipelines that hold those stages.
struct elevation_params {
  /// The profile, an elevation_kind in [0, 3] (0, flat: the pipeline's tracks are those of the
  /// pipeline without the two stages, bit for bit).
  elevation_kind profile = elevation_kind::flat;
  /// Knots K around the loop (seed: z_control_points), in [3, 256].
  int knots = 10;
  /// Lowest elevation [m], in [-1e6, 1e6].
  float z_min = 0.0f;
  /// Highest elevation [m], in [z_min, 1e6].
  float z_max = 0.0f;
  /// Largest grade |dz| / (plan-view ds) between consecutive samples, in [0, 1e6] (seed:
  /// z_valid_grade); a steeper track fails validation (status::fail_grade). The random walk's steps
  /// keep every piece of its curve within it.
  float max_grade = 0.5f;
  /// Cosines of the `harmonics` profile, periods L_xy / n for n = 1..H (seed:
  /// z_noise_harmonics), in [1, 16].
  int harmonics = 3;
};

/// How stages::gate_anchors orders a family's anchors into a gate sequence.
enum class gate_ordering : int {
  as_generated = 0,  ///< the family's own order (its polygon: a closed loop already)
  angle_sorted = 1,  ///< counter-clockwise by polar angle about the anchors' centroid (seen from above)
};

/// How a gate's frame follows the course line (stages::gate_checkpoints).
enum class gate_align : int {
  yaw_only = 0,      ///< level gates: forward is the plan-view tangent, posts vertical
  full_tangent = 1,  ///< forward is the 3D tangent: the gate pitches with the climb (never rolls)
};

/// Gate courses (presets::gate_course_pipeline; issue 15 items 1-2): the gates are a family's
/// anchors, ordered, thinned to a per-env count and spaced apart in 3D; the course line is the
/// closed spline through them. The openings are 2 half_width wide and 2 gate_half_height high
/// (track_params' fields, which progress tracking reads too). Read only by pipelines that hold
/// the gate stages.
struct gate_course_params {
  /// Order of the anchors, a gate_ordering in [0, 1] (0: as generated; 1: angle-sorted).
  int ordering = 0;
  /// Fewest gates of a course, in [3, 256]: a closed course line needs 3 gates; a family with
  /// fewer anchors fails the gate test (status::fail_gates) and is drawn again.
  int min_gates = 6;
  /// Most gates of a course, in [min_gates, 256]: each env draws its count uniformly in
  /// [min_gates, max_gates] and keeps that many of the family's anchors, evenly spread. The gate
  /// storage must hold it: pass presets::gate_course_spacing(p) as the checkpoint spacing.
  int max_gates = 12;
  /// Smallest distance between two gate centres [m], in [0, 1e6] (3D): the spacing solve pushes
  /// closer pairs apart and the gate test rejects a course that still has one.
  float min_spacing = 3.0f;
  /// Jacobi rounds of the pairwise spacing solve, in [0, 256] (it stops early once every pair
  /// is apart).
  int spacing_iterations = 32;
  /// Frame of each gate, a gate_align in [0, 1] (0: yaw only; 1: full tangent).
  int align = 0;
};

/// `stages::centreline_relaxation`: XPBD-style relaxation of a random attempt that would fail
/// validation on its shape (the seed system's `relax_*` parameters; its defaults, except that
/// the stage is off unless a pipeline's preset turns it on: docs/generators.md, "Relaxation").
struct relaxation_params {
  /// Sweep bound, in [0, 1000]; 0 turns the stage off (relax_iters).
  int max_iterations = 0;
  /// How far past validation's thresholds the sweeps aim, as a fraction, in [0, 1]: separation
  /// target c (1 + margin), radius target r (1 + margin) (relax_margin).
  float margin = 0.15f;
  /// Scale of the averaged separation push, in [0, 2] (relax_sep_relax).
  float separation_weight = 1.0f;
  /// Scale of the edge-length correction toward L / N, in [0, 2] (relax_spc_relax).
  float spacing_weight = 1.0f;
  /// Scale of the bending guard's pull toward the neighbours' midpoint, in [0, 10]
  /// (relax_bend_relax).
  float bending_weight = 1.5f;
  /// Spectral radius estimate of the Chebyshev acceleration, in [0, 0.999]; 0: no acceleration,
  /// the sweeps from chebyshev_start on still damped by chebyshev_gamma (relax_cheby_rho;
  /// relax_accel = "none" is rho 0 and gamma 1).
  float chebyshev_rho = 0.98f;
  /// Under-relaxation of the accelerated sweeps, in (0, 1] (relax_cheby_gamma).
  float chebyshev_gamma = 0.9f;
  /// Plain sweeps before the acceleration starts, in [0, 1000] (relax_cheby_start).
  int chebyshev_start = 8;
  /// Shrink-free Taubin smoothing passes after the sweeps, in [0, 100] (relax_smooth_passes).
  int smoothing_passes = 5;
};

/// Everything that defines a batch of tracks. Build one with `presets::track(num_envs)` and
/// change what you need.
struct track_params {
  /// Environments in this batch (one track each), in [1, 1073741824] (2^30).
  int num_envs = 1;
  /// Global id of local environment 0 (sharding across devices): env e draws the random stream
  /// of global id env_offset + e; env_offset + num_envs - 1 <= 2^32 - 1.
  std::uint32_t env_offset = 0;
  /// Seed of every random stream of the batch.
  std::uint64_t seed = 0;
  /// Samples N of the resampled centreline (uniform in arc length), in [8, 4096].
  int num_samples = 256;
  /// Track half-width [m], in [0.0001, 1e6] (stored per sample).
  float half_width = 0.3f;
  /// Half-height of every gate's opening [m], in [0.0001, 1e6]: a crossing counts when it is
  /// within the half-width sideways and this vertically of the gate centre.
  float gate_half_height = 1.0f;

  generator_params generator;
  random_polar_params polar;
  polygon_separation_params polygon_separation;
  spline_params spline;
  validate_params validate;
  dense_repulsive_params dense_repulsive;
  budget_params budget;
  voronoi_params voronoi;
  checkpoint_params checkpoint;
  bezier_params bezier;
  hull_params hull;
  repulsive_growth_params repulsive_growth;
  relaxation_params relaxation;
  elevation_params elevation;
  gate_course_params gates;
};

/// What a parameter set costs, before anything is built (`track_gen::estimate_cost`).
struct cost_estimate {
  /// Worst-case operations to generate one track: every attempt failing (validate.max_attempts
  /// attempts of polygon_separation.max_iterations x polar.control_points^2 point-segment tests, the dense
  /// samples, and the clearance test's num_samples^2 / 2 segment pairs), the fallback, and the
  /// dense_repulsive stage's max_windows x iterations_per_window x (dense samples)^2 pair tests
  /// when it is on. Compared with budget_params::operations_per_track.
  double operations_per_track = 0.0;
  /// Bytes of track storage per env: the samples' fields and `gates_per_track` gates. Compared
  /// with budget_params::bytes_per_env.
  double bytes_per_env = 0.0;
  /// The gate capacity of every env: ceil(longest track / checkpoint_spacing).
  int gates_per_track = 0;
};

}  // namespace track_gen

#pragma once
/// @file
/// Presets: a pipeline type plus documented default parameters.

#include <track_gen/params.hpp>
#include <track_gen/pipeline.hpp>

#include <type_traits>

namespace track_gen::presets {

/// The pipeline of the random `track` preset (docs/generators.md): random polar control points
/// (`track_params::generator` must select polar: use family_pipeline for the other families).
using track_pipeline = pipeline<stages::random_polar, stages::polygon_separation, stages::catmull_rom, stages::resample,
                                stages::frames, stages::checkpoints, stages::validate>;

/// The `track` preset's pipeline with stages::random_family as its generate stage: every
/// generator family but repulsive (any_family_pipeline has it too), one per batch (`generator.family`) or a mix drawn per env and episode
/// (`generator.weights`), in one launch (docs/generators.md). With the default parameters its
/// tracks are track_pipeline's bit for bit. It is a pipeline of its own because its kernel
/// holds every family's code, which costs the batches that only draw polar tracks: at its
/// 72-register cap it spills where track_pipeline's kernel does not, and the same polar tracks
/// take 1.16x as long (docs/performance-log.md, entries 12, 24 and 38).
using family_pipeline = pipeline<stages::random_family, stages::polygon_separation, stages::catmull_rom_chords,
                                 stages::resample, stages::frames, stages::checkpoints, stages::validate>;

/// family_pipeline with stages::random_any_family: every family, the repulsive growth included
/// (mixes with it). Its own kernel, because the growth's code made family_pipeline's slower for
/// the other families (stages::basic_random_family says how much). Its tracks are
/// family_pipeline's where that pipeline can draw them. Its kernel has the growth's register
/// bound (stages::repulsive_growth::generate_threads_per_sm: 128 a thread, 8 blocks of 64 an
/// SM), which the other families' tracks get too (their speed through it: not measured yet).
using any_family_pipeline = pipeline<stages::random_any_family, stages::polygon_separation, stages::catmull_rom,
                                     stages::resample, stages::frames, stages::checkpoints, stages::validate>;

/// any_family_pipeline with stages::centreline_relaxation after the frames: attempts that would
/// fail validation on their shape are relaxed instead of drawn again when
/// `relaxation.max_iterations` > 0 (docs/generators.md, "Relaxation"); with it 0, the tracks are
/// any_family_pipeline's bit for bit. A pipeline of its own because the stage's code made the
/// any-family kernel spill more (docs/performance-log.md, entry 36).
using relaxed_family_pipeline = pipeline<stages::random_any_family, stages::polygon_separation, stages::catmull_rom,
                                         stages::resample, stages::frames, stages::centreline_relaxation,
                                         stages::checkpoints, stages::validate>;

/// family_pipeline with one family's own generate stage in place of stages::random_family
/// (FamilyStage: stages::bezier_corners, hull_corners, voronoi_sites, checkpoint_walk or
/// repulsive_growth): the same tracks as family_pipeline (any_family_pipeline for
/// repulsive_growth) with generator.family set to that family and no weights, bit
/// for bit on the host, in a kernel that holds only that family's code (construction refuses
/// any other selection). A batch of one family runs faster through it (docs/performance-log.md,
/// entry 26); family_pipeline remains the pipeline of mixes. Both keep the spline's chords
/// only (stages::catmull_rom_chords: a smaller scratch, more tracks an SM; entry 54). It relaxes with
/// stages::polygon_separation_listed where `FamilyStage::long_relaxation` (hull, voronoi: the same control
/// points, faster where the relaxation runs many iterations; entry 34), on the host backend only
/// where `FamilyStage::lists_in_wide_blocks` is false (hull and voronoi:
/// stages::polygon_separation_listed_on_host, entries 52 and 53), else stages::polygon_separation.
template <class FamilyStage>
using one_family_pipeline =
    pipeline<FamilyStage, detail::family_separation_t<FamilyStage>,
             stages::catmull_rom_chords, stages::resample, stages::frames, stages::checkpoints, stages::validate>;
using bezier_pipeline = one_family_pipeline<stages::bezier_corners>;
using hull_pipeline = one_family_pipeline<stages::hull_corners>;
using voronoi_pipeline = one_family_pipeline<stages::voronoi_sites>;
using checkpoint_pipeline = one_family_pipeline<stages::checkpoint_walk>;
using repulsive_pipeline = one_family_pipeline<stages::repulsive_growth>;

/// A small closed circuit for RC cars or micro drones, flat (z = 0).
///
/// Defaults and why: 12 control points at radii 4.5-6 m, scaled by random two- and three-lobed
/// profiles (random_polar_params), give centrelines of roughly 36-56 m (accepted 10-60 m) shaped
/// as peanuts, kidneys, L- and Y-shapes rather than blobs; half-width 0.3 m fits a 1:10 RC car
/// with room to overtake nothing; minimum turn radius 0.4 m is about the tightest turn of such
/// a car at low speed; the polygon separation stage keeps control points 1.5 m from non-adjacent polygon sides so that the
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
  p.polygon_separation.clearance = 2.0f;
  return p;
}

/// The `track` pipeline with an elevation profile (stages::elevation_profile between the spline
/// and the resampling) and the grade test (stages::validate_grade): z as a function of the
/// plan-view arc length, `track_params::elevation` (docs/shapes.md, "Elevation profiles"). With
/// the flat profile (the default) its tracks are track_pipeline's bit for bit. A pipeline of its
/// own so that track_pipeline's kernel keeps its code.
using elevated_track_pipeline = pipeline<stages::random_polar, stages::polygon_separation, stages::catmull_rom,
                                         stages::elevation_profile, stages::resample, stages::frames,
                                         stages::checkpoints, stages::validate_grade>;

/// family_pipeline with the elevation stages (as elevated_track_pipeline): the pipeline of the
/// Python course. With the flat profile its tracks are family_pipeline's bit for bit.
using elevated_family_pipeline = pipeline<stages::random_family, stages::polygon_separation, stages::catmull_rom,
                                          stages::elevation_profile, stages::resample, stages::frames,
                                          stages::checkpoints, stages::validate_grade>;

/// elevated_family_pipeline with stages::random_any_family (as any_family_pipeline): the Python
/// course's pipeline when a batch can draw the repulsive family.
using elevated_any_family_pipeline = pipeline<stages::random_any_family, stages::polygon_separation, stages::catmull_rom,
                                              stages::elevation_profile, stages::resample, stages::frames,
                                              stages::checkpoints, stages::validate_grade>;

/// elevated_any_family_pipeline with stages::centreline_relaxation (as relaxed_family_pipeline):
/// the Python course's pipeline when a batch turns the relaxation on.
using elevated_relaxed_family_pipeline =
    pipeline<stages::random_any_family, stages::polygon_separation, stages::catmull_rom, stages::elevation_profile,
             stages::resample, stages::frames, stages::centreline_relaxation, stages::checkpoints,
             stages::validate_grade>;

/// one_family_pipeline with the elevation stages (as elevated_family_pipeline): the Python
/// course's pipeline when every env of a batch draws the same family, bezier, hull, voronoi or
/// checkpoint, without the centreline relaxation. Its tracks are elevated_family_pipeline's with
/// that family selected, bit for bit on the host, from a kernel that holds only that family's
/// code (docs/performance-log.md, entries 26 and 40).
template <class FamilyStage>
using elevated_one_family_pipeline =
    pipeline<FamilyStage, detail::family_separation_t<FamilyStage>,
             stages::catmull_rom, stages::elevation_profile, stages::resample, stages::frames, stages::checkpoints,
             stages::validate_grade>;
using elevated_bezier_pipeline = elevated_one_family_pipeline<stages::bezier_corners>;
using elevated_hull_pipeline = elevated_one_family_pipeline<stages::hull_corners>;
using elevated_voronoi_pipeline = elevated_one_family_pipeline<stages::voronoi_sites>;
using elevated_checkpoint_pipeline = elevated_one_family_pipeline<stages::checkpoint_walk>;

/// A drone course for `elevated_track_pipeline`: as `drone_track`, with level control points and
/// a random-walk profile in [0.5, 2.5] m through 10 knots (one every 4-6 m of these 36-58 m
/// loops) and grades up to 0.3 (17 degrees): steps of at most 0.8-1.3 m between knots.
inline track_params elevated_drone_track(int num_envs) {
  track_params p = drone_track(num_envs);
  p.polar.elevation_min = 0.0f;
  p.polar.elevation_max = 0.0f;
  p.elevation.profile = elevation_kind::random_walk;
  p.elevation.knots = 10;
  p.elevation.z_min = 0.5f;
  p.elevation.z_max = 2.5f;
  p.elevation.max_grade = 0.3f;
  return p;
}

/// The gate-course pipeline (issue 15 items 1-2; docs/drones.md): a family's anchors
/// (stages::random_family, any family but repulsive) become the gates (stages::gate_anchors: ordering, per-env
/// count), the elevation profile lifts them (stages::elevation_profile on the spline through
/// them), stages::gate_spacing pushes close pairs apart in 3D and rebuilds the spline: the course
/// line, resampled like a track; the gates are its checkpoints, at the anchors
/// (stages::gate_checkpoints); stages::validate_gates adds the gate test (status::fail_gates) to
/// the track tests and the grade test. Give it presets::gate_course_spacing(p) as the checkpoint
/// spacing, so that every env has room for gates.max_gates gates.
using gate_course_pipeline = pipeline<stages::random_family, stages::gate_anchors, stages::catmull_rom,
                                      stages::elevation_profile, stages::gate_spacing, stages::resample,
                                      stages::frames, stages::gate_checkpoints, stages::validate_gates>;

/// gate_course_pipeline with stages::random_polar as its generate stage: the gate courses of
/// polar anchors (the gate_course preset's), bit for bit those of gate_course_pipeline, from a
/// kernel without the other families' code (as track_pipeline is to family_pipeline;
/// docs/performance-log.md, entry 42). Construction refuses another family, and weights on any
/// family but polar.
using polar_gate_course_pipeline = pipeline<stages::random_polar, stages::gate_anchors, stages::catmull_rom,
                                            stages::elevation_profile, stages::gate_spacing, stages::resample,
                                            stages::frames, stages::gate_checkpoints, stages::validate_gates>;

/// The checkpoint spacing to construct a gate_course_pipeline generator or course with: the
/// gate storage is ceil(length_max / spacing) gates per env, here at least gates.max_gates.
inline float gate_course_spacing(const track_params& p) {
  return p.validate.length_max / static_cast<float>(p.gates.max_gates);
}

/// A drone-racing gate course for gate_course_pipeline: 6-12 gates, 1.5 m x 1.5 m openings.
///
/// Defaults and why: 12 polar anchors (one per gate at most) at radii 10-14 m give course lines of 66-84 m (4,096
/// envs, seed 0; accepted 25-150 m), gates 6-13 m apart, a second or two at racing speeds (radii 8-14 m zig-zag
/// more: 47% of first attempts failed the turn radius, against 8% at 10-14 m; host, 2,048 envs, seed 0); half_width
/// = gate_half_height = 0.75 m make the 1.5 m square gate of the common drone-racing leagues; gate centres at least
/// 3 m apart (two gate widths: room to line up the next gate), 32 spacing rounds (a pair separates in one; chains
/// need a few); a random-walk altitude in [1, 4] m (above the ground, under an indoor ceiling) through 8 knots with
/// grades up to 0.5 (27 degrees, a climb a racing quad holds at speed); a minimum turn radius of 1.5 m for the
/// course line (the tightest a quad takes at racing speed without braking hard) and 0.5 m between its far-apart
/// sections beyond the gate width; 64 spline samples per segment, so that even 4 gates give 256 dense samples, as
/// many as the course line's N = 256 (32 left 493 of 512 four-gate courses failing the 5% sample-spacing test,
/// host, seed 5); yaw-only (level) gates, as built; 32 attempts, since the spacing and the gate test reject more
/// draws than a road does. Other families draw anchors at their own scale (bezier and hull: corners within +-6.5 m,
/// where gates 3 m apart need turns tighter than 1.5 m): scale them up with the gates (e.g. bezier.extent = 20).
/// The fallback ellipse has 16 control points, so it is a 16-gate course that fails the gate test when max_gates <
/// 16 (status::fallback without valid). The anchors are polar points without lobes, at angle jitter 0.5: lobes of
/// the `track` preset's amplitude bring a gate course's anchors to radii of 2-25 m, where gates 3 m apart on a
/// 1.5 m turn radius fail more often (first attempts kept by both the gates alone and the course: 23 % of 1,024
/// envs with lobes, at least 25 % without).
inline track_params gate_course(int num_envs) {
  track_params p = track(num_envs);
  p.half_width = 0.75f;
  p.gate_half_height = 0.75f;
  p.polar.control_points = 12;
  p.polar.radius_min = 10.0f;
  p.polar.radius_max = 14.0f;
  p.polar.angle_jitter = 0.5f;
  p.polar.lobe_amplitude_min = 0.0f;
  p.polar.lobe_amplitude_max = 0.0f;
  p.validate.length_min = 25.0f;
  p.validate.length_max = 150.0f;
  p.validate.turn_radius_min = 1.5f;
  p.validate.clearance_margin = 0.5f;
  p.validate.max_attempts = 32;
  p.spline.samples_per_segment = 64;
  p.elevation.profile = elevation_kind::random_walk;
  p.elevation.knots = 8;
  p.elevation.z_min = 1.0f;
  p.elevation.z_max = 4.0f;
  p.elevation.max_grade = 0.5f;
  return p;
}

/// The pipeline of `long_track`: the `track` pipeline with stages::dense_repulsive (grid scope)
/// between the spline and the resampling.
using long_track_pipeline = pipeline<stages::random_polar, stages::polygon_separation, stages::catmull_rom, stages::dense_repulsive,
                                     stages::resample, stages::frames, stages::checkpoints, stages::validate>;

/// A full-size circuit (use with `long_track_pipeline`): 1-3 km long, 12 m wide, 2048 samples.
///
/// Defaults and why: 32 control points at radii 250-300 m give centrelines of about 1.8-1.9 km
/// (accepted 800-3000 m); half-width 6 m is a 12 m wide circuit; minimum turn radius 8 m is a
/// tight hairpin; 64 spline samples per segment
/// give 2048 dense samples (about 0.8 m apart) and N = 2048 resampled ones; the control
/// polygon keeps 60 m from non-adjacent sides; then stages::dense_repulsive keeps sections
/// that are far apart along the track at least 40 m apart (the width of the track plus run-off
/// on both sides), in windows of 8 iterations, at most 8 windows. On the host backend, 12 envs
/// with seed 11: every track valid, 5 relaxed, 0 relaxations rejected (printed by
/// `build/tests/grid_dense_repulsive_test`).
inline track_params long_track(int num_envs) {
  track_params p;
  p.num_envs = num_envs;
  p.num_samples = 2048;
  p.half_width = 6.0f;
  p.gate_half_height = 4.0f;
  p.polar.control_points = 32;
  p.polar.radius_min = 250.0f;
  p.polar.radius_max = 300.0f;
  p.polar.angle_jitter = 0.5f;
  p.polar.lobe_amplitude_min = 0.0f;  // the band alone: lengths stay in the 1.8-1.9 km measured below
  p.polar.lobe_amplitude_max = 0.0f;
  p.polygon_separation.clearance = 60.0f;
  p.polygon_separation.tolerance = 0.05f;
  p.spline.samples_per_segment = 64;
  p.validate.length_min = 800.0f;
  p.validate.length_max = 3000.0f;
  p.validate.turn_radius_min = 8.0f;
  p.validate.clearance_margin = 2.0f;
  p.dense_repulsive.clearance = 40.0f;
  p.dense_repulsive.max_windows = 8;
  p.dense_repulsive.iterations_per_window = 8;
  p.dense_repulsive.tolerance = 0.05f;
  return p;
}

}  // namespace track_gen::presets

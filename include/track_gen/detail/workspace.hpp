#pragma once
/// @file
/// The per-track workspace the stages share: scratch arrays (shared memory on the GPU, a
/// preallocated host buffer on the CPU) and scalars that every thread of the block holds the
/// same value of (they are only ever computed from broadcast collectives).

#include <track_gen/track_ref.hpp>
#include <track_gen/detail/config.hpp>
#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/random.hpp>

#include <cstddef>
#include <cstdint>

namespace track_gen::detail {

/// Where a track's geometry comes from.
enum class track_source : int {
  random = 0,          ///< the generating stages draw it
  control_points = 1,  ///< user control points, interpolated by the spline stage
  centreline = 2,      ///< a user polyline taken as the dense centreline
  fallback = 3,        ///< control points on the fallback ellipse
};

/// Work items the polygon separation stage aims at per iteration (M x chunks, for M below it).
inline constexpr int separation_work_items = 128;
/// The spline-segment region holds at least this many bytes whatever M is: stages keep small
/// per-track tables there once the segments are dead (stages::elevation_profile's knots and
/// slopes, 2 x 256 floats).
inline constexpr std::size_t spline_region_min_bytes = 2048;

/// The polygon separation stage splits each control point's segment tests into this many chunks (partial
/// sums added in chunk order): about separation_work_items work items in all, at most 8 chunks a
/// point, one for M >= separation_work_items. A function of M only, so the result does not depend
/// on the block size (or backend).
TRACK_GEN_HD constexpr int separation_chunks(int m) {
  return m >= separation_work_items ? 1 : (separation_work_items / m < 8 ? separation_work_items / m : 8);
}

/// One chunk's partial push of the polygon separation stage.
struct separation_partial {
  float3 push;  ///< sum of the chunk's pushes [m]
};

/// Consecutive segments per group of stages::polygon_separation_listed's full scans: a point tests
/// a group's bounding box before its segments, and skips the group when the box is out of reach.
inline constexpr int separation_group = 8;

/// Bounding box of one group of separation_group consecutive polygon segments [m] (infinite when a
/// point of the group is NaN, so that no group whose segments a test could take is skipped).
struct separation_box {
  float3 lo, hi;
};

/// Groups of separation_group segments of an M-point polygon.
TRACK_GEN_HD constexpr int separation_groups(int m) { return (m + separation_group - 1) / separation_group; }

// The listed stage's group boxes take the partial sums' place (it writes no partial sums): the
// boxes of M points, at most (M / 8 + 1) x 24 bytes, fit in the max(M, separation_work_items) x 12
// bytes the layout reserves for the partials.
static_assert(sizeof(separation_box) * (separation_work_items / separation_group + 1) <=
                      sizeof(separation_partial) * separation_work_items &&
                  2 * sizeof(separation_box) <= sizeof(separation_partial) * separation_group,
              "The group boxes of a polygon must fit where its partial sums would.");

/// Candidate segments stages::polygon_separation_listed keeps for one control point between full scans.
inline constexpr int separation_list_capacity = 15;
/// separation_list::count of a point with more candidates than a list holds (it scans every segment).
inline constexpr std::uint16_t separation_list_overflow = 0xffffu;
/// Skin of stages::polygon_separation_listed's candidate lists, a fraction of the clearance: a list holds the
/// segments within the clearance plus the skin, and is rebuilt once the points may have moved
/// half of it. A quarter: hull tracks rebuilt their lists about every 6 of the 32 iterations the
/// bound then allowed, about 3 segments a list (4 rebuilds in the 12 of today's bound, entry 49);
/// half the clearance was 2 % slower on the H200 (performance log, entry 34).
inline constexpr float separation_skin = 0.25f;

/// One control point's candidate segments (stages::polygon_separation_listed), in increasing index order.
struct separation_list {
  std::uint16_t count;  ///< listed segments, or separation_list_overflow
  std::uint16_t segment[separation_list_capacity];  ///< segment j joins control points j and j + 1
};

/// A sphere around one polygon segment (the listed relaxation stages' test of every segment in
/// blocks that keep no lists: stages::basic_polygon_separation::tests_spheres): its midpoint and
/// a radius a little over its half-length (detail::segment_sphere). 16 bytes, aligned, so that a
/// test loads it in one instruction.
struct alignas(16) separation_sphere {
  float x, y, z;  ///< the segment's midpoint [m]
  float radius;   ///< [m]
};

// The spheres take the lists' place (a block keeps one or the other, never both): one sphere a
// control point fits where its list would.
static_assert(sizeof(separation_sphere) <= sizeof(separation_list) && alignof(separation_sphere) <= 16,
              "A segment's sphere must fit where its point's candidate list would.");

/// Byte offsets of the scratch arrays inside one block's scratch memory.
struct scratch_layout {
  int control_capacity = 0;  ///< control points
  int separation_capacity = 0;  ///< control points of random tracks (the polygon separation stage's partial sums and lists)
  int dense_capacity = 0;    ///< dense centreline samples
  int dense_points_capacity = 0;  ///< points the dense region holds (dense_capacity where the dense samples are stored)
  int num_samples = 0;       ///< N
  std::size_t control = 0, control_next = 0, spline = 0, dense = 0, dense_s = 0, position = 0, bytes = 0;

  static constexpr std::size_t align(std::size_t b) { return (b + 15u) & ~std::size_t{15u}; }

  /// The layout for these capacities, every size in size_t. The int fields are only meaningful
  /// when `bytes` is within param::scratch_bytes_per_track (make_generator_plan checks it before
  /// using the layout; within it every capacity is far below INT_MAX). `separation_capacity`:
  /// `control_capacity` when left out. `dense_points_capacity`: the points the dense region holds
  /// (ws.dense), `dense_capacity` when left out (the dense samples are stored); less for a pipeline
  /// that keeps only their chords (stages::catmull_rom_chords: the generate stages' own arrays).
  static scratch_layout make(std::size_t control_capacity, std::size_t dense_capacity, std::size_t num_samples,
                             std::size_t separation_capacity = static_cast<std::size_t>(-1),
                             std::size_t dense_points_capacity = static_cast<std::size_t>(-1)) {
    if (separation_capacity == static_cast<std::size_t>(-1)) separation_capacity = control_capacity;
    if (dense_points_capacity == static_cast<std::size_t>(-1)) dense_points_capacity = dense_capacity;
    scratch_layout l;
    l.control_capacity = static_cast<int>(control_capacity);
    l.separation_capacity = static_cast<int>(separation_capacity);
    l.dense_capacity = static_cast<int>(dense_capacity);
    l.dense_points_capacity = static_cast<int>(dense_points_capacity);
    l.num_samples = static_cast<int>(num_samples);
    std::size_t at = 0;
    l.control = at;
    at = align(at + sizeof(float3) * control_capacity);
    l.control_next = at;
    at = align(at + sizeof(float3) * control_capacity);
    // The spline's segments (catmull_rom to resample) and the polygon separation stage's partial sums
    // (before catmull_rom, in the next attempt after resample) are never live together: one
    // region holds both, and at least spline_region_min_bytes.
    l.spline = at;
    const std::size_t m = separation_capacity;  // M x separation_chunks(M) <= max(M, separation_work_items)
    const std::size_t work_items = static_cast<std::size_t>(separation_work_items);
    const std::size_t partials = sizeof(separation_partial) * (m > work_items ? m : work_items);  // or the group boxes
    const std::size_t segments = sizeof(spline_segment) * control_capacity;
    const std::size_t region = partials > segments ? partials : segments;
    at = align(at + (region > spline_region_min_bytes ? region : spline_region_min_bytes));
    // The polygon separation stage's candidate lists share the dense samples' region: they live before
    // the spline writes the first dense sample, and after the generate stage's last use of it.
    l.dense = at;
    const std::size_t dense = sizeof(float3) * dense_points_capacity;
    const std::size_t lists = sizeof(separation_list) * separation_capacity;
    at = align(at + (dense > lists ? dense : lists));
    l.dense_s = at;
    at = align(at + sizeof(float) * (dense_capacity + 1));
    l.position = at;
    at = align(at + sizeof(float3) * num_samples);
    l.bytes = at;
    return l;
  }
};

/// What one block (one track) works with.
struct workspace {
  // Scratch arrays.
  float3* control;       ///< [control_capacity] control points
  float3* control_next;  ///< [control_capacity] next iterate of the polygon separation
  spline_segment* spline;  ///< [control_capacity] power form of each spline segment (catmull_rom)
  separation_partial* separation;  ///< [M * separation_chunks(M)] the polygon separation stage's partial sums (aliases `spline`; the listed stage's group boxes instead, separation_boxes)
  float3* dense;         ///< [dense_capacity] dense centreline samples
  float* dense_s;        ///< [dense_capacity + 1] cumulative chord length, dense_s[0] = 0
  float3* position;      ///< [N] resampled centreline

  /// This env's slice of the arrays the stages write (frames, checkpoints); the rest of the
  /// batch's fields are written once, when the track is stored (generate_track.hpp).
  struct stage_outputs {
    float3* tangent;
    float3* normal;
    float* curvature;
    float3* gate_centre;
    float3* gate_normal;
    float* gate_half_width;
    float* gate_arc_length;
  } out;

  /// This env's slice of the grid-scope stage's first buffer (null: no grid stage, or do not keep).
  float3* grid_dense;

  // Identity and random stream of this attempt.
  std::uint64_t seed;
  std::uint32_t global_env, episode, attempt;
  track_source source;

  // Sizes and block-uniform scalars.
  int num_control;
  /// Polygon segments on each side of a control point that stages::polygon_separation never pushes it
  /// from: 2 (the segments incident to it and to its neighbours) unless the generate stage set
  /// more for a polygon refined by corner cutting, whose near neighbours are the same corner.
  int relax_neighbours;
  int num_dense;
  /// The dense samples the spline stage aims at for this track's control points (0: every
  /// segment gets spline.samples_per_segment): set by a generate stage that writes many control
  /// points (the bezier, hull, voronoi, checkpoint and repulsive_growth stages:
  /// detail::family_dense_budget), 0 for user tracks and the fallback
  /// (budgeted_samples_per_segment says how it is spent).
  int dense_budget;
  int num_samples;
  int max_gates;
  float checkpoint_spacing;
  bool dense_is_spline;  ///< dense samples come from the spline (resample re-evaluates it); a stage that moves them sets false
  bool dense_chords;  ///< dense_s[1..num_dense] already holds the dense samples' chords (stages::catmull_rom_chords stores no samples)
  bool relaxed;  ///< stages::centreline_relaxation moved this attempt's samples
  float length;
  float max_curvature;
  bool finite;
  int num_gates;
  bool valid;
  std::uint32_t fail_bits;
  float trust_radius;  ///< stages::validate: the track field trust_radius of a valid attempt [m]

  /// [M] stages::polygon_separation_listed's candidate lists, in the dense samples' region (no field of
  /// their own: the generation kernels keep the workspace in registers, at their bound).
  TRACK_GEN_HD separation_list* separation_lists() const { return reinterpret_cast<separation_list*>(dense); }

  /// [M] the listed relaxation stages' segment spheres in blocks that keep no lists
  /// (stages::basic_polygon_separation::tests_spheres), where the other blocks keep their lists.
  TRACK_GEN_HD separation_sphere* separation_spheres() const { return reinterpret_cast<separation_sphere*>(dense); }

  /// [separation_groups(num_control)] stages::polygon_separation_listed's group boxes, where the
  /// plain stage keeps its partial sums (the listed stage writes none).
  TRACK_GEN_HD separation_box* separation_boxes() const { return reinterpret_cast<separation_box*>(separation); }

  /// The random stream of `stage` for this (seed, env, episode, attempt).
  TRACK_GEN_HD philox_stream rng(std::uint32_t stage) const {
    return philox_stream(seed, global_env, episode, attempt, stage);
  }

  TRACK_GEN_HD void bind_scratch(unsigned char* base, const scratch_layout& l) {
    control = reinterpret_cast<float3*>(base + l.control);
    control_next = reinterpret_cast<float3*>(base + l.control_next);
    spline = reinterpret_cast<spline_segment*>(base + l.spline);
    separation = reinterpret_cast<separation_partial*>(base + l.spline);
    dense = reinterpret_cast<float3*>(base + l.dense);
    dense_s = reinterpret_cast<float*>(base + l.dense_s);
    position = reinterpret_cast<float3*>(base + l.position);
  }

};

/// The roles a stage can play; the pipeline skips roles that do not apply to a track's source.
enum class stage_role : int {
  generate,     ///< draws control points (random tracks only)
  interpolate,  ///< control points -> dense centreline (not for user centrelines)
  shape,        ///< dense centreline -> samples, frames, gates (every track)
  validate,     ///< decides `valid` (last stage of a pipeline)
};

}  // namespace track_gen::detail

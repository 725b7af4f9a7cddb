#pragma once
/// @file
/// A generator's checked inputs and its byte plan: capacities (control points, dense samples,
/// gates), the scratch layout of one track, and the offsets of its buffers in its memory.

#include <track_gen/detail/generate/generate_track.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/detail/select/env_selection.hpp>
#include <track_gen/user_tracks.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace track_gen::detail {

inline std::size_t align256(std::size_t b) { return (b + 255u) & ~std::size_t{255u}; }

/// Capacities and byte offsets of a generator's memory (all relative to its base).
struct generator_plan {
  scratch_layout scratch;
  int max_gates = 0;
  std::size_t launch_count = 0;  ///< unsigned long long: generation launches that ran
  std::size_t any_flag = 0;      ///< int: any-of-mask flag of conditional regeneration
  std::size_t env_count = 0;     ///< int: how many envs the mask selected
  std::size_t env_next = 0;      ///< int: the list kernel's work counter
  std::size_t env_list = 0;      ///< int [E]: the selected envs, in env order
  std::size_t user_points = 0, user_offsets = 0, variants = 0, env_variant = 0;
  /// Temporary storage of the mask compaction (backend::cuda: cub::DeviceSelect; 0 on the host).
  std::size_t select_temp = 0, select_temp_bytes = 0;
  /// Grid-scope stage arrays (pipelines with one; size 0 otherwise).
  bool grid = false;
  std::size_t grid_buffer[2] = {0, 0}, grid_count = 0, grid_spacing = 0, grid_active = 0, grid_residual = 0,
              grid_moved = 0, grid_pending = 0, grid_flags = 0;
  std::size_t args = 0;  ///< the generation arguments the kernels read (generate_kernel says why)
  std::size_t bytes = 0;
};

/// Capacities and byte offsets for `params` with optional user tracks or variants.
inline generator_plan make_generator_plan(const track_params& params, float spacing, const sanitized_tracks* user,
                                          user_tracks::kind user_kind, const std::vector<track_params>& sets, bool grid,
                                          std::size_t select_temp_bytes, std::size_t args_bytes) {
  // Every capacity in size_t (issue 17: control points x samples_per_segment overflowed int for
  // user tracks of millions of points), checked against param::scratch_bytes_per_track before the
  // layout's int fields are used.
  using sz = std::size_t;
  const sz fallback = static_cast<sz>(fallback_control_points);
  const sz m = static_cast<sz>(params.polar.control_points);
  const sz per = static_cast<sz>(params.spline.samples_per_segment);
  sz control_cap = std::max(m, fallback);
  sz random_control_cap = m;  // the repulsive stage only runs on random tracks
  sz dense_cap = control_cap * per;
  float length_cap = params.validate.length_max;
  for (const track_params& v : sets) {
    const sz cap = std::max(static_cast<sz>(v.polar.control_points), fallback);
    control_cap = std::max(control_cap, cap);
    random_control_cap = std::max(random_control_cap, static_cast<sz>(v.polar.control_points));
    dense_cap = std::max(dense_cap, cap * static_cast<sz>(v.spline.samples_per_segment));
    length_cap = std::max(length_cap, v.validate.length_max);
  }
  if (user != nullptr) {
    const bool spline = user_track_source(user_kind) == track_source::control_points;
    const sz count = static_cast<sz>(user->max_count);
    if (spline) control_cap = std::max(control_cap, count);
    dense_cap = std::max(dense_cap, spline ? count * per : count);
    // A spline through the points is rarely more than 1.5x its control polygon.
    length_cap = std::max(length_cap, 1.5f * user->max_polyline_length);
  }
  generator_plan plan;
  plan.max_gates = checked_max_gates(length_cap, spacing);
  plan.scratch = scratch_layout::make(control_cap, dense_cap, static_cast<sz>(params.num_samples), random_control_cap);
  check_scratch_bytes(plan.scratch.bytes, control_cap, dense_cap, params.num_samples);
  const std::size_t envs = static_cast<std::size_t>(params.num_envs);
  std::size_t at = 0;
  auto take = [&at](std::size_t bytes) {
    const std::size_t off = at;
    at = align256(at + bytes);
    return off;
  };
  plan.launch_count = take(sizeof(unsigned long long));
  plan.any_flag = take(sizeof(int));
  plan.env_count = take(sizeof(int));
  plan.env_next = take(sizeof(int));
  plan.env_list = take(envs * sizeof(int));
  plan.user_points = take(user != nullptr ? user->points.size() * sizeof(float3) : 0);
  plan.user_offsets = take(user != nullptr ? user->offsets.size() * sizeof(int) : 0);
  plan.variants = take(sets.size() * sizeof(track_params));
  plan.env_variant = take(sets.empty() ? 0 : envs * sizeof(std::int32_t));
  if (grid) {
    const std::size_t samples = envs * static_cast<std::size_t>(plan.scratch.dense_capacity);
    plan.grid = true;
    for (std::size_t& b : plan.grid_buffer) b = take(samples * sizeof(float3));
    for (std::size_t* per_env : {&plan.grid_count, &plan.grid_spacing, &plan.grid_active, &plan.grid_residual,
                                 &plan.grid_moved, &plan.grid_pending})
      *per_env = take(envs * 4u);  // int, float or int32 per env
    plan.grid_flags = take(2 * sizeof(int));  // any_active, windows
  }
  plan.select_temp_bytes = select_temp_bytes;
  plan.select_temp = take(select_temp_bytes);
  plan.args = take(args_bytes);
  plan.bytes = at;
  return plan;
}

/// A generator's inputs once checked: the parameters, the variants, the user tracks (merged,
/// concatenated) and the plan.
struct generator_inputs {
  track_params params;
  float spacing = 0.0f;
  std::vector<track_params> sets;          ///< variants (empty: `params` for every env)
  std::vector<std::int32_t> env_variant;   ///< [E] with variants
  sanitized_tracks user;
  bool has_user = false;
  user_tracks::kind user_kind = user_tracks::kind::control_points;
  generator_plan plan;

  /// Checks everything (std::invalid_argument naming the parameter and its range) and plans.
  /// `args_bytes`: the size of the generation arguments kept in the generator's memory.
  static generator_inputs make(const track_params& params, float spacing, const user_tracks* tracks,
                               const track_variants* variants, bool grid, std::size_t select_temp_bytes,
                               std::size_t args_bytes = 0) {
    check_params(params, spacing);
    generator_inputs in;
    in.params = params;
    in.spacing = spacing;
    if (variants != nullptr) {
      in.sets = check_variants(*variants, params, spacing);
      in.env_variant.assign(variants->env_variant.begin(), variants->env_variant.end());
    }
    if (tracks != nullptr) {
      in.user = sanitize(*tracks, params.num_envs);
      in.has_user = true;
      in.user_kind = tracks->type;
    }
    in.plan = make_generator_plan(params, spacing, in.has_user ? &in.user : nullptr, in.user_kind, in.sets, grid,
                                  select_temp_bytes, args_bytes);
    return in;
  }
};

}  // namespace track_gen::detail

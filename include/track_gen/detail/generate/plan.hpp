#pragma once
/// @file
/// A generator's checked inputs and its byte plan: capacities (control points, dense samples,
/// gates), the scratch layout of one track, and the offsets of its buffers in its memory.

#include <track_gen/detail/fields.hpp>
#include <track_gen/detail/generate/generate_track.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/stages/centreline_relaxation.hpp>
#include <track_gen/detail/stages/random_family.hpp>
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

/// The most control points a random track of given parameters has: a pipeline's
/// max_control_points (pipeline.hpp), or random_control_points where no pipeline is known.
using control_points_fn = int (*)(const track_params&);
/// The most dense samples the spline makes for a random track of given parameters: a pipeline's
/// max_dense_samples (pipeline.hpp), or random_dense_samples where no pipeline is known.
using dense_samples_fn = int (*)(const track_params&);

/// What a plan asks of a pipeline: its control points and dense samples at most (both given:
/// a dense count derived from the control points would under-size the families that keep more
/// than their spline in the dense scratch, such as the checkpoint family's walks).
struct pipeline_sizes {
  control_points_fn control_points;
  dense_samples_fn dense_samples;
  /// Whether the pipeline holds stages::centreline_relaxation (pipeline::relaxes_centreline).
  bool relaxes_centreline;
  /// The points a random track needs in the dense region where the pipeline stores no dense
  /// samples (pipeline::max_dense_points of a pipeline with stages::catmull_rom_chords); null: it
  /// stores them (the region holds dense_samples points).
  dense_samples_fn dense_points;
  pipeline_sizes(control_points_fn c, dense_samples_fn d, bool relaxes = false, dense_samples_fn points = nullptr)
      : control_points(c), dense_samples(d), relaxes_centreline(relaxes), dense_points(points) {}
};

/// Pipeline's sizes (pipeline.hpp: max_control_points, max_dense_samples, max_dense_points).
template <class Pipeline>
pipeline_sizes sizes_of() {
  return {&Pipeline::max_control_points, &Pipeline::max_dense_samples, Pipeline::relaxes_centreline,
          Pipeline::stores_dense_points ? nullptr : &Pipeline::max_dense_points};
}

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
  std::size_t user_points = 0, user_offsets = 0, user_frames = 0, variants = 0, env_variant = 0;
  /// Temporary storage of the mask compaction (backend::cuda: cub::DeviceSelect; 0 on the host).
  std::size_t select_temp = 0, select_temp_bytes = 0;
  /// Grid-scope stage arrays (pipelines with one; size 0 otherwise).
  bool grid = false;
  std::size_t grid_buffer[2] = {0, 0}, grid_count = 0, grid_spacing = 0, grid_active = 0, grid_residual = 0,
              grid_moved = 0, grid_pending = 0, grid_flags = 0;
  std::size_t args = 0;  ///< the generation arguments the kernels read (generate_kernel says why)
  std::size_t bytes = 0;
  /// The most control points a random track of given parameters has (the pipeline's
  /// max_control_points); the plan's capacities and the cost estimate use it.
  control_points_fn control_points = nullptr;
  /// The most dense samples of a random track of given parameters (the pipeline's
  /// max_dense_samples).
  dense_samples_fn dense_samples = nullptr;
  /// Whether the pipeline relaxes failing attempts (stages::centreline_relaxation).
  bool relaxes_centreline = false;
};

/// The dense samples a random track of `p` needs room for under `plan`: the pipeline's count,
/// and at least the fallback ellipse's fallback_control_points x samples_per_segment.
inline std::size_t random_dense_capacity(const track_params& p, const generator_plan& plan) {
  using sz = std::size_t;
  const sz per = static_cast<sz>(p.spline.samples_per_segment);
  const sz fallback = static_cast<sz>(fallback_control_points) * per;
  return std::max(static_cast<sz>(plan.dense_samples(p)), fallback);
}

/// The most control points a random track of `p` has when the pipeline is not known
/// (estimate_cost): the largest count of the families `p` can draw (stages::random_any_family), and
/// polar.control_points for pipelines that run stages::random_polar directly.
inline int random_control_points(const track_params& p) {
  return std::max(p.polar.control_points, stages::random_any_family::max_control_points(p));
}

/// The most dense samples of a random track of `p` when the pipeline is not known
/// (estimate_cost): as random_control_points, the largest of the families' and the polar stage's,
/// and the centreline relaxation's scratch when it is on.
inline int random_dense_samples(const track_params& p) {
  return std::max({p.polar.control_points * p.spline.samples_per_segment, stages::random_any_family::max_dense_samples(p),
                   stages::centreline_relaxation::max_dense_samples(p)});
}

/// Throws std::invalid_argument unless `p.generator` selects only the family `family` (an int
/// generator_family: a pipeline whose generate stage is stages::random_polar, or one family's own
/// stage, draws nothing else); `what` names the field.
inline void check_one_family(const track_params& p, int family, const char* what) {
  // Weights on `family` alone draw only it, as the selection of `family` does.
  std::string weighted;
  int positive = 0;
  for (int f = 0; f < num_generator_families; ++f) {
    if (!(p.generator.weights[f] > 0.0f)) continue;
    weighted += std::string(positive++ == 0 ? "'" : ", '") + generator_family_names[f] + "'";
  }
  const bool one = positive == 0 ? static_cast<int>(p.generator.family) == family
                                 : positive == 1 && p.generator.weights[family] > 0.0f;
  if (one) return;
  const std::string chosen = positive > 0
                                 ? std::string("by weights the families ") + weighted
                                 : std::string("the '") + generator_family_names[static_cast<int>(p.generator.family)] + "' family";
  const std::string name = generator_family_names[family];
  // The pipelines that draw the selection: family_pipeline leaves the repulsive family out.
  const std::string remedy = family_in_use(p.generator, generator_family::repulsive)
                                 ? "presets::any_family_pipeline (or presets::repulsive_pipeline for the repulsive family "
                                   "alone)"
                                 : "presets::family_pipeline";
  if (family == static_cast<int>(generator_family::polar))
    throw std::invalid_argument(std::string("track_gen: ") + what + " selects " + chosen +
                                ", but this pipeline's generate stage is stages::random_polar (polar tracks only): use " +
                                remedy + " (or stages::random_any_family in your pipeline)");
  throw std::invalid_argument(std::string("track_gen: ") + what + " selects " + chosen + ", but this pipeline draws " +
                              name + " tracks only (presets::one_family_pipeline): set generator.family = " + name +
                              " (or a weight on " + name + " alone), or use " + remedy);
}


/// Throws std::invalid_argument when `p.generator` can draw the repulsive family, which a
/// pipeline of stages::random_family does not hold; `what` names the field.
inline void check_no_growth(const track_params& p, const char* what) {
  if (!family_in_use(p.generator, generator_family::repulsive)) return;
  throw std::invalid_argument(std::string("track_gen: ") + what +
                              " can draw the 'repulsive' family, which this pipeline's stages::random_family "
                              "leaves out: for tracks use presets::any_family_pipeline or elevated_any_family_pipeline "
                              "(stages::random_any_family: every family, in a kernel of its own) or "
                              "presets::repulsive_pipeline (the repulsive family alone); no gate course draws it (for gates, "
                              "drop its weight or choose another family)");
}

/// Capacities and byte offsets for `params` with optional user tracks or variants.
/// `sizes`: the pipeline's max_control_points and max_dense_samples (sizes_of, pipeline.hpp).
inline generator_plan make_generator_plan(const track_params& params, float spacing, const sanitized_tracks* user,
                                          user_tracks::kind user_kind, const std::vector<track_params>& sets, bool grid,
                                          pipeline_sizes sizes, std::size_t select_temp_bytes,
                                          std::size_t args_bytes) {
  // Every capacity in size_t (issue 17: control points x samples_per_segment overflowed int for
  // user tracks of millions of points), checked against param::scratch_bytes_per_track before the
  // layout's int fields are used.
  using sz = std::size_t;
  generator_plan plan;
  plan.control_points = sizes.control_points;
  plan.dense_samples = sizes.dense_samples;
  plan.relaxes_centreline = sizes.relaxes_centreline;
  const sz fallback = static_cast<sz>(fallback_control_points);
  const sz m = static_cast<sz>(plan.control_points(params));
  const sz per = static_cast<sz>(params.spline.samples_per_segment);
  sz control_cap = std::max(m, fallback);
  sz random_control_cap = m;  // the polygon separation stage only runs on random tracks
  sz dense_cap = random_dense_capacity(params, plan);
  // The dense region's points where the pipeline stores no dense samples: the generate stages'
  // own arrays and a user centreline's points (splines, the fallback's too, keep chords only).
  const bool chords = sizes.dense_points != nullptr;
  sz points_cap = chords ? static_cast<sz>(sizes.dense_points(params)) : 0;
  float length_cap = params.validate.length_max;
  for (const track_params& v : sets) {
    const sz cap = std::max(static_cast<sz>(plan.control_points(v)), fallback);
    control_cap = std::max(control_cap, cap);
    random_control_cap = std::max(random_control_cap, static_cast<sz>(plan.control_points(v)));
    dense_cap = std::max(dense_cap, random_dense_capacity(v, plan));
    if (chords) points_cap = std::max(points_cap, static_cast<sz>(sizes.dense_points(v)));
    length_cap = std::max(length_cap, v.validate.length_max);
  }
  if (user != nullptr) {
    const bool spline = user_track_source(user_kind) == track_source::control_points;
    const sz count = static_cast<sz>(user->max_count);
    if (spline) control_cap = std::max(control_cap, count);
    dense_cap = std::max(dense_cap, spline ? count * per : count);
    if (!spline) points_cap = std::max(points_cap, count);
    // A spline through the points is rarely more than 1.5x its control polygon.
    length_cap = std::max(length_cap, 1.5f * user->max_polyline_length);
  }
  plan.max_gates = checked_max_gates(length_cap, spacing);
  plan.scratch = scratch_layout::make(control_cap, dense_cap, static_cast<sz>(params.num_samples), random_control_cap,
                                      chords ? points_cap : dense_cap);
  check_scratch_bytes(plan.scratch.bytes, control_cap, dense_cap, params.num_samples,
                      sizes.relaxes_centreline ? params.relaxation.max_iterations : 0);
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
  plan.user_frames = take(user != nullptr ? user->frames.size() * sizeof(user_frame) : 0);
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

/// The worst-case operations of one track with parameters `p` (cost_estimate says what is
/// counted): `dense` dense samples (random_dense_capacity for random tracks, the plan's dense
/// capacity for user tracks), `random`: the random stages run (not user tracks), `grid`: the
/// pipeline holds a grid-scope stage (dense_repulsive). `parts`, when given, receives the five
/// terms (polygon separation, per-attempt shaping and clearance, dense_repulsive, the repulsive
/// family's growth, the centreline relaxation) for messages.
inline double track_operations(const track_params& p, const generator_plan& plan, double dense, bool random, bool grid,
                               double* parts = nullptr) {
  const double m = plan.control_points(p), n = p.num_samples;
  const double attempts = random ? p.validate.max_attempts : 1.0;
  const double repulsive = random ? attempts * p.polygon_separation.max_iterations * m * m : 0.0;
  // Each attempt (and the fallback) evaluates the dense samples, resamples them, and tests the
  // clearance of every pair of its N segments at worst (validate: N^2 / 2 pairs).
  const double shape = (attempts + (random ? 1.0 : 0.0)) * (dense + n + 0.5 * n * n);
  const bool dense_stage = grid && p.dense_repulsive.clearance > 0.0f && p.dense_repulsive.max_windows > 0;
  const double relax =
      dense_stage ? static_cast<double>(p.dense_repulsive.max_windows) * p.dense_repulsive.iterations_per_window * dense * dense
                  : 0.0;
  // The repulsive family's flow: per iteration, its pair pass and two circular convolutions over
  // the points, and every point against every obstacle point (stages::repulsive_growth), for
  // every attempt.
  const repulsive_growth_params& g = p.repulsive_growth;
  const double growth =
      random && family_in_use(p.generator, generator_family::repulsive)
          ? attempts * stages::repulsive_growth::max_iterations(g) *
                (3.0 * g.points * g.points +
                 static_cast<double>(g.points) * (detail::growth::wall_points + detail::growth::disc_points * g.obstacles_max))
          : 0.0;
  // stages::centreline_relaxation: per sweep every bead against the beads outside its window
  // (N^2 at worst), for every attempt.
  const double centreline = random && plan.relaxes_centreline
                                ? attempts * static_cast<double>(p.relaxation.max_iterations) * n * n
                                : 0.0;
  if (parts != nullptr) {
    parts[0] = repulsive;
    parts[1] = shape;
    parts[2] = relax;
    parts[3] = growth;
    parts[4] = centreline;
  }
  return repulsive + shape + relax + growth + centreline;
}

/// The dense samples one track of `p` evaluates at most: random_dense_capacity (the pipeline's
/// count, at least the fallback's) for random tracks, the plan's dense capacity for user tracks.
inline double track_dense_samples(const track_params& p, const generator_plan& plan, bool random) {
  return random ? static_cast<double>(random_dense_capacity(p, plan)) : static_cast<double>(plan.scratch.dense_capacity);
}

/// The bytes of track storage per env: one env's samples and `max_gates` gates.
inline double track_bytes_per_env(int num_samples, int max_gates) {
  using layout = soa_layout<sizeof(track_fields) / sizeof(track_fields[0])>;
  return static_cast<double>(layout::make(track_fields, 1, num_samples, max_gates).bytes);
}

/// Throws std::invalid_argument when `p` turns the centreline relaxation on for a pipeline
/// without stages::centreline_relaxation, which would ignore it; `what` names the field.
inline void check_no_relaxation(const track_params& p, const char* what) {
  if (p.relaxation.max_iterations <= 0) return;
  throw std::invalid_argument(std::string("track_gen: ") + what + " = " + std::to_string(p.relaxation.max_iterations) +
                              " turns the centreline relaxation on, but this pipeline has no "
                              "stages::centreline_relaxation: for tracks use presets::relaxed_family_pipeline or "
                              "elevated_relaxed_family_pipeline (or put the stage directly after stages::frames in your "
                              "pipeline); gate courses build no road to relax: set it to 0");
}

/// The cost of `params` (and its variants `sets`, user tracks `user`) as planned in `plan`.
inline cost_estimate estimate_cost(const track_params& params, const std::vector<track_params>& sets,
                                   const sanitized_tracks* user, const generator_plan& plan, bool grid,
                                   const track_params** costliest = nullptr) {
  cost_estimate c;
  c.gates_per_track = plan.max_gates;
  c.bytes_per_env = track_bytes_per_env(params.num_samples, plan.max_gates);
  const bool random = user == nullptr;
  auto consider = [&](const track_params& p) {
    const double ops = track_operations(p, plan, track_dense_samples(p, plan, random), random, grid);
    if (ops > c.operations_per_track) {
      c.operations_per_track = ops;
      if (costliest != nullptr) *costliest = &p;
    }
  };
  if (sets.empty()) consider(params);
  for (const track_params& v : sets) consider(v);
  return c;
}

/// Throws std::invalid_argument when `c` exceeds `params.budget`, naming the budget, the terms of
/// the estimate and how to raise it.
inline void check_budget(const cost_estimate& c, const track_params& params, const track_params& costliest,
                         const generator_plan& plan, bool random, bool grid, double dense) {
  const budget_params& b = params.budget;
  if (c.operations_per_track > static_cast<double>(b.operations_per_track)) {
    double parts[5];
    track_operations(costliest, plan, dense, random, grid, parts);
    throw std::invalid_argument(
        "track_gen: one track may cost up to " + format_number(c.operations_per_track) +
        " operations in the worst case (track_gen::estimate_cost: polygon separation validate.max_attempts x "
        "polygon_separation.max_iterations x (control points)^2 = " + format_number(parts[0]) +
        ", dense samples and clearance tests of every attempt " + format_number(parts[1]) +
        ", dense_repulsive max_windows x iterations_per_window x dense samples^2 = " + format_number(parts[2]) +
        ", repulsive family validate.max_attempts x its iterations x (3 x repulsive_growth.points^2 + points x "
        "obstacle points) = " +
        format_number(parts[3]) + ", centreline relaxation validate.max_attempts x relaxation.max_iterations x "
        "num_samples^2 = " + format_number(parts[4]) + "), more than the budget track_params.budget.operations_per_track = " + format_number(b.operations_per_track) +
        " (docs/parameters.md): raise track_params.budget.operations_per_track to accept this cost, or lower those "
        "parameters");
  }
  if (c.bytes_per_env > static_cast<double>(b.bytes_per_env)) {
    throw std::invalid_argument(
        "track_gen: every env stores " + format_number(c.bytes_per_env) + " bytes of track (" +
        std::to_string(c.gates_per_track) +
        " gates of 32 bytes: ceil(longest track / checkpoint_spacing), with validate.length_max = " +
        format_number(params.validate.length_max) + " m; and num_samples = " + std::to_string(params.num_samples) +
        " samples), more than the budget track_params.budget.bytes_per_env = " + format_number(b.bytes_per_env) +
        " (docs/parameters.md): raise track_params.budget.bytes_per_env to accept it, or raise checkpoint_spacing / "
        "lower validate.length_max");
  }
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
  /// `family_rule`: what `params.generator` may select (pipeline::family_rule): any_family, or
  /// the one family the pipeline draws (another selection is refused).
  /// `args_bytes`: the size of the generation arguments kept in the generator's memory.
  /// A bool for `family_rule` (the former `families` flag) would convert to a family: refused.
  static generator_inputs make(const track_params&, float, const user_tracks*, const track_variants*, bool, bool,
                               pipeline_sizes, std::size_t, std::size_t = 0) = delete;
  static generator_inputs make(const track_params& params, float spacing, const user_tracks* tracks,
                               const track_variants* variants, bool grid, int family_rule,
                               pipeline_sizes sizes, std::size_t select_temp_bytes,
                               std::size_t args_bytes = 0) {
    check_params(params, spacing);
    generator_inputs in;
    in.params = params;
    in.spacing = spacing;
    if (variants != nullptr) {
      in.sets = check_variants(*variants, params, spacing);
      in.env_variant.assign(variants->env_variant.begin(), variants->env_variant.end());
    }
    if (family_rule == any_family_but_repulsive) {
      check_no_growth(params, "track_params.generator");
      for (std::size_t i = 0; i < in.sets.size(); ++i)
        check_no_growth(in.sets[i], ("track_variants.variants[" + std::to_string(i) + "].generator").c_str());
    } else if (family_rule != any_family) {
      check_one_family(params, family_rule, "track_params.generator");
      for (std::size_t i = 0; i < in.sets.size(); ++i)
        check_one_family(in.sets[i], family_rule, ("track_variants.variants[" + std::to_string(i) + "].generator").c_str());
    }
    if (!sizes.relaxes_centreline) {
      check_no_relaxation(params, "track_params.relaxation.max_iterations");
      for (std::size_t i = 0; i < in.sets.size(); ++i)
        check_no_relaxation(in.sets[i], ("track_variants.variants[" + std::to_string(i) + "].relaxation.max_iterations").c_str());
    }
    if (tracks != nullptr) {
      in.user = sanitize(*tracks, params.num_envs);
      in.has_user = true;
      in.user_kind = tracks->type;
    }
    in.plan = make_generator_plan(params, spacing, in.has_user ? &in.user : nullptr, in.user_kind, in.sets, grid,
                                  sizes, select_temp_bytes, args_bytes);
    const track_params* costliest = &in.params;
    const cost_estimate cost =
        estimate_cost(in.params, in.sets, in.has_user ? &in.user : nullptr, in.plan, grid, &costliest);
    check_budget(cost, in.params, *costliest, in.plan, !in.has_user, grid,
                 track_dense_samples(*costliest, in.plan, !in.has_user));
    return in;
  }
};

}  // namespace track_gen::detail

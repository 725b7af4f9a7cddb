#pragma once
/// @file
/// Compile-time composition of stages into one generation pass, and the bounded retry loop
/// with the fallback ellipse after it.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/grid_scope.hpp>
#include <track_gen/params.hpp>
#include <track_gen/stages.hpp>

#include <algorithm>
#include <tuple>
#include <type_traits>
#include <utility>

namespace track_gen {

namespace detail {
template <class Stage, class = void>
struct stage_scope {
  using type = scope::block;
};
template <class Stage>
struct stage_scope<Stage, std::void_t<typename Stage::scope>> {
  using type = typename Stage::scope;
};
/// Whether `Stage` runs at grid scope (its `scope` member type is scope::grid).
template <class Stage>
inline constexpr bool is_grid_stage = std::is_same_v<typename stage_scope<Stage>::type, scope::grid>;

/// Whether the grid-scope stage at `grid` sits where its input, the dense centreline, is
/// complete and not yet used: every stage before it generates or interpolates (at least one
/// interpolates), every stage after it shapes or validates.
template <class... Stages>
constexpr bool grid_stage_well_placed(int grid) {
  constexpr stage_role roles[] = {Stages::role...};
  bool interpolated = false;
  for (int i = 0; i < grid; ++i) {
    if (roles[i] != stage_role::generate && roles[i] != stage_role::interpolate) return false;
    interpolated = interpolated || roles[i] == stage_role::interpolate;
  }
  for (int i = grid + 1; i < static_cast<int>(sizeof...(Stages)); ++i)
    if (roles[i] != stage_role::shape && roles[i] != stage_role::validate) return false;
  return interpolated;
}

/// The family generate stage `Stage` draws (its `family` member: the families' own stages), or -1.
template <class Stage, class = void>
struct stage_family : std::integral_constant<int, -1> {};
template <class Stage>
struct stage_family<Stage, std::void_t<decltype(Stage::family)>>
    : std::integral_constant<int, Stage::role == stage_role::generate ? static_cast<int>(Stage::family) : -1> {};

/// The threads of a generation kernel holding `Stage` that must fit on one SM (its
/// `generate_threads_per_sm` member), or 896 (generate/kernels.cuh says why).
template <class Stage, class = void>
struct stage_threads_per_sm : std::integral_constant<int, 896> {};
template <class Stage>
struct stage_threads_per_sm<Stage, std::void_t<decltype(Stage::generate_threads_per_sm)>>
    : std::integral_constant<int, Stage::generate_threads_per_sm> {};

template <class Stage, class = void>
struct has_control_points : std::false_type {};
template <class Stage>
struct has_control_points<Stage, std::void_t<decltype(Stage::max_control_points(std::declval<const track_params&>()))>>
    : std::true_type {};
/// The control points generate stage `Stage` writes at most for `p` (its max_control_points);
/// -1 for other stages and for generate stages that do not say.
template <class Stage>
int stage_control_points(const track_params& p) {
  if constexpr (Stage::role == stage_role::generate && has_control_points<Stage>::value)
    return Stage::max_control_points(p);
  else
    return -1;
}

template <class Stage, class = void>
struct has_dense_samples : std::false_type {};
template <class Stage>
struct has_dense_samples<Stage, std::void_t<decltype(Stage::max_dense_samples(std::declval<const track_params&>()))>>
    : std::true_type {};
/// The dense samples the spline makes at most from generate stage `Stage`'s control points for
/// `p`: its max_dense_samples when it has one (a stage that sets a dense budget), else its
/// max_control_points x spline.samples_per_segment; -1 for other stages and for generate stages
/// that say neither.
template <class Stage>
int stage_dense_samples(const track_params& p) {
  if constexpr (Stage::role == stage_role::generate && has_dense_samples<Stage>::value)
    return Stage::max_dense_samples(p);
  else if constexpr (Stage::role == stage_role::generate && has_control_points<Stage>::value)
    return Stage::max_control_points(p) * p.spline.samples_per_segment;
  else
    return -1;
}

/// The dense scratch samples a stage of another role needs for `p` (its max_dense_samples, e.g.
/// stages::centreline_relaxation's second buffer); -1 for generate stages and stages that do not say.
template <class Stage>
int stage_scratch_samples(const track_params& p) {
  if constexpr (Stage::role != stage_role::generate && has_dense_samples<Stage>::value)
    return Stage::max_dense_samples(p);
  else
    return -1;
}

template <class Stage, class = void>
struct has_scratch_points : std::false_type {};
template <class Stage>
struct has_scratch_points<Stage, std::void_t<decltype(Stage::max_scratch_points(std::declval<const track_params&>()))>>
    : std::true_type {};
/// The dense-region points stage `Stage` keeps for itself at most for `p` when the spline's dense
/// samples are not stored (stages::catmull_rom_chords): a generate stage's max_scratch_points (its
/// working arrays in ws.dense), else what it says of the dense samples (stage_dense_samples, an
/// upper bound); -1 for the other stages.
template <class Stage>
int stage_scratch_points(const track_params& p) {
  if constexpr (Stage::role == stage_role::generate && has_scratch_points<Stage>::value)
    return Stage::max_scratch_points(p);
  else
    return stage_dense_samples<Stage>(p);
}

template <class Stage, class = void>
struct is_chords_spline : std::false_type {};
template <class Stage>
struct is_chords_spline<Stage, std::enable_if_t<!Stage::keeps_points>> : std::true_type {};

/// Whether the stages after stages::catmull_rom_chords (if the pack holds it) read no dense
/// samples: only resample, frames, checkpoints and validate may follow it.
template <class... Stages>
constexpr bool chords_well_placed() {
  constexpr bool chords[] = {is_chords_spline<Stages>::value..., false};
  constexpr bool allowed[] = {(std::is_same_v<Stages, stages::resample> || std::is_same_v<Stages, stages::frames> ||
                               std::is_same_v<Stages, stages::checkpoints> || std::is_same_v<Stages, stages::validate>)...,
                              true};
  bool after = false;
  for (std::size_t i = 0; i < sizeof...(Stages); ++i) {
    if (after && !allowed[i]) return false;
    after = after || chords[i];
  }
  return true;
}

/// Whether every stages::centreline_relaxation of the pack directly follows stages::frames (it
/// reads the frames' curvature and redoes them).
template <class... Stages>
constexpr bool relaxation_well_placed() {
  constexpr bool relaxation[] = {std::is_same_v<Stages, stages::centreline_relaxation>..., false};
  constexpr bool frames[] = {std::is_same_v<Stages, stages::frames>..., false};
  for (int i = 0; i < static_cast<int>(sizeof...(Stages)); ++i)
    if (relaxation[i] && (i == 0 || !frames[i - 1])) return false;
  return true;
}

/// Index of the first grid-scope stage of the pack (the pack size if none).
template <class... Stages>
constexpr int first_grid_index() {
  constexpr bool grid[] = {is_grid_stage<Stages>..., false};
  int i = 0;
  while (i < static_cast<int>(sizeof...(Stages)) && !grid[i]) ++i;
  return i;
}
}  // namespace detail

/// Stages run in order, all fused in one kernel (one block per track). Stages whose role does
/// not apply to a track's source are skipped: `generate` stages run for random tracks only,
/// `interpolate` stages not for user centrelines. A grid-scope stage (grid_scope.hpp) splits the
/// pass: the fused kernel skips it (keeping its input, the dense samples), the grid stage runs
/// on its own launches, and `run_after_grid` rebuilds what follows it.
template <class... Stages>
struct pipeline {
  static_assert(sizeof...(Stages) >= 1, "A pipeline needs at least one stage.");
  static_assert(((Stages::role == detail::stage_role::validate) + ...) == 1,
                "A pipeline needs exactly one stage with role validate (e.g. stages::validate).");
  static_assert(std::tuple_element_t<sizeof...(Stages) - 1, std::tuple<Stages...>>::role == detail::stage_role::validate,
                "The validating stage must be the last stage of a pipeline: it judges the finished track.");
  static_assert((detail::is_grid_stage<Stages> + ... + 0) <= 1, "A pipeline holds at most one grid-scope stage.");

  /// Whether a stage of the pipeline is stages::random_family or random_any_family (it draws
  /// the generator families).
  static constexpr bool draws_families =
      (std::is_same_v<Stages, stages::random_family> || ...) || (std::is_same_v<Stages, stages::random_any_family> || ...);
  /// Whether a stage of the pipeline is stages::random_family, which leaves the repulsive family out.
  static constexpr bool draws_families_but_growth = (std::is_same_v<Stages, stages::random_family> || ...);
  /// Whether a stage of the pipeline is stages::random_polar.
  static constexpr bool draws_polar = (std::is_same_v<Stages, stages::random_polar> || ...);
  /// Whether `track_params::generator` may select a family other than polar: false for a pipeline
  /// that draws with stages::random_polar and not stages::random_family (construction refuses
  /// such a selection there); a pipeline with another generate stage ignores the selection.
  static constexpr bool accepts_families = draws_families || !draws_polar;
  /// The one family a pipeline whose generate stage is a family's own stage (e.g.
  /// stages::bezier_corners: presets::one_family_pipeline) draws, as an int generator_family;
  /// -1 for the others.
  static constexpr int fixed_family = std::max({-1, detail::stage_family<Stages>::value...});
  /// What construction lets `track_params::generator` select: detail::any_family (the pipeline
  /// draws with stages::random_any_family, or with a stage of the user's),
  /// detail::any_family_but_repulsive (stages::random_family), or the one family it draws (polar
  /// for stages::random_polar; a family's own stage's family), any other selection refused.
  static constexpr int family_rule = fixed_family >= 0          ? fixed_family
                                     : draws_families_but_growth ? detail::any_family_but_repulsive
                                     : accepts_families          ? detail::any_family
                                                                 : static_cast<int>(generator_family::polar);
  /// The threads of the pipeline's generation kernel that must fit on one SM (the least its
  /// stages ask for; `__launch_bounds__` then gives each thread at most 65,536 / this registers).
  static constexpr int generate_threads_per_sm = std::min({detail::stage_threads_per_sm<Stages>::value...});
  /// Where the pipeline's gates lie (progress_tracker's gate_layout): evenly spaced (gate g at
  /// g L / G) when stages::checkpoints places them; otherwise (stages::gate_checkpoints: at the
  /// anchors, or a stage of the user's) anchored, which suits any ascending arc lengths.
  static constexpr bool gates_evenly_spaced = (std::is_same_v<Stages, stages::checkpoints> || ...);
  /// Whether the pipeline relaxes failing attempts (stages::centreline_relaxation): the stored
  /// status then says which accepted tracks it moved (status::relaxed).
  static constexpr bool relaxes_centreline = (std::is_same_v<Stages, stages::centreline_relaxation> || ...);
  static_assert((std::is_same_v<Stages, stages::centreline_relaxation> + ... + 0) <= 1,
                "A pipeline holds stages::centreline_relaxation at most once: a second one would find the attempt "
                "mended and clear the first one's status::relaxed.");
  /// Whether the spline's dense samples are stored in the scratch (every pipeline but those with
  /// stages::catmull_rom_chords, which keep their chords only).
  static constexpr bool stores_dense_points = !(detail::is_chords_spline<Stages>::value || ...);
  static_assert(detail::chords_well_placed<Stages...>(),
                "stages::catmull_rom_chords stores no dense samples: only stages::resample, frames, checkpoints and "
                "validate may follow it (a stage that reads or moves the dense samples needs stages::catmull_rom).");
  static_assert(detail::relaxation_well_placed<Stages...>(),
                "stages::centreline_relaxation reads the curvature stages::frames computes and recomputes the "
                "frames after it moves the samples: put it directly after stages::frames.");

  /// The most control points the pipeline's generate stages write for a random track of `p`
  /// (each stage's own `max_control_points(p)`: stages::random_family's counts only the families
  /// `p.generator` selects); `p.polar.control_points` when no generate stage says. The generator
  /// sizes each track's control-point scratch from it.
  static int max_control_points(const track_params& p) {
    int most = -1;
    ((most = std::max(most, detail::stage_control_points<Stages>(p))), ...);
    return most < 0 ? p.polar.control_points : most;
  }

  /// The most dense samples the spline makes from the control points of the pipeline's generate
  /// stages for a random track of `p` (each stage's max_dense_samples, or its max_control_points x
  /// spline.samples_per_segment); max_control_points(p) x samples_per_segment when no generate
  /// stage says. The generator sizes each track's dense scratch from it.
  static int max_dense_samples(const track_params& p) {
    int most = -1;
    ((most = std::max(most, detail::stage_dense_samples<Stages>(p))), ...);
    if (most < 0) most = max_control_points(p) * p.spline.samples_per_segment;
    // Stages after the spline that keep a buffer in the dense samples' region.
    ((most = std::max(most, detail::stage_scratch_samples<Stages>(p))), ...);
    return most;
  }

  /// The points the scratch's dense region must hold for a random track of `p`: the dense
  /// samples (max_dense_samples) where they are stored, else what the generate stages keep there
  /// for themselves (their max_scratch_points, or what they say of their dense samples;
  /// max_dense_samples where no generate stage says anything).
  static int max_dense_points(const track_params& p) {
    if constexpr (stores_dense_points) {
      return max_dense_samples(p);
    } else {
      int most = -1;
      ((most = std::max(most, detail::stage_scratch_points<Stages>(p))), ...);
      // No generate stage says: as much as the samples would take (a user's stage may keep arrays there).
      return most < 0 ? max_dense_samples(p) : most;
    }
  }

  /// Position of the grid-scope stage in the pack (the pack size when there is none).
  static constexpr int grid_index = detail::first_grid_index<Stages...>();
  static constexpr bool has_grid = grid_index < static_cast<int>(sizeof...(Stages));
  static_assert(!has_grid || detail::grid_stage_well_placed<Stages...>(grid_index),
                "A grid-scope stage relaxes the dense centreline: put it after the stage that makes it "
                "(stages::catmull_rom) and before the stages that use it (stages::resample and after).");
  /// The grid-scope stage (void when there is none).
  using grid_stage = std::conditional_t<has_grid, std::tuple_element_t<(has_grid ? grid_index : 0), std::tuple<Stages...>>, void>;

  /// One generation attempt of the track described by `ws` (all threads of the block call it).
  /// A grid-scope stage is skipped; its input (the dense samples) goes to `ws.grid_dense` when set.
  template <class Ctx>
  TRACK_GEN_HD static void run_attempt(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    run_from<0>(ctx, ws, p);
  }

  /// The stages after the grid-scope stage, on the dense samples in `ws` (all threads call it).
  template <class Ctx>
  TRACK_GEN_HD static void run_after_grid(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    if constexpr (has_grid) run_from<grid_index + 1>(ctx, ws, p);
  }

 private:
  template <int First, class Ctx>
  TRACK_GEN_HD static void run_from(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    run_indexed<First>(ctx, ws, p, std::make_integer_sequence<int, sizeof...(Stages)>{});
  }

  template <int First, class Ctx, int... I>
  TRACK_GEN_HD static void run_indexed(Ctx& ctx, detail::workspace& ws, const track_params& p,
                                       std::integer_sequence<int, I...>) {
    (run_if<(I >= First), Stages>(ctx, ws, p), ...);
  }

  template <bool Run, class Stage, class Ctx>
  TRACK_GEN_HD static void run_if(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    if constexpr (Run) run_stage<Stage>(ctx, ws, p);
  }

  template <class Stage, class Ctx>
  TRACK_GEN_HD static void run_stage(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using detail::stage_role;
    using detail::track_source;
    if constexpr (detail::is_grid_stage<Stage>) {
      // Keep the grid stage's input for its launches (the last attempt's copy wins).
      if (ws.grid_dense != nullptr && ws.source == track_source::random)
        for (int i = ctx.rank(); i < ws.num_dense; i += ctx.size()) ws.grid_dense[i] = ws.dense[i];
      return;
    } else {
      if constexpr (Stage::role == stage_role::generate) {
        if (ws.source != track_source::random) return;
      }
      if constexpr (Stage::role == stage_role::interpolate) {
        if (ws.source == track_source::centreline) return;
      }
      Stage::run(ctx, ws, p);
    }
  }
};

}  // namespace track_gen

#pragma once
/// @file
/// stages::random_family: the generate stage that draws each env's generator family and runs
/// it: the families' stages, in generator_family order, are the cases of random_family::run.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/families/bezier.hpp>
#include <track_gen/detail/stages/families/checkpoint.hpp>
#include <track_gen/detail/stages/families/hull.hpp>
#include <track_gen/detail/stages/families/repulsive_growth.hpp>
#include <track_gen/detail/stages/families/voronoi.hpp>
#include <track_gen/detail/stages/generate_stages.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/random.hpp>

#include <algorithm>

namespace track_gen {

namespace detail {

/// Whether any family weight is positive (the mix is on).
TRACK_GEN_HD inline bool mixes_families(const generator_params& g) {
  for (int f = 0; f < num_generator_families; ++f)
    if (g.weights[f] > 0.0f) return true;
  return false;
}

/// The family of env `global_env`'s track in `episode`: `g.family` when no weight is positive,
/// else the first family f with u * sum < w_0 + ... + w_f, u uniform in [0, 1) from Philox
/// (seed, global_env, episode, attempt 0, stage `stage_id`, draw 0). Families of weight 0 are
/// never drawn (the comparison is strict, and a rounding at the top end falls on the last
/// family of positive weight).
TRACK_GEN_HD inline generator_family draw_family(const generator_params& g, std::uint64_t seed, std::uint32_t global_env,
                                                 std::uint32_t episode, std::uint32_t stage_id) {
  if (!mixes_families(g)) return g.family;
  float sum = 0.0f;
  int last = 0;
  for (int f = 0; f < num_generator_families; ++f) {
    sum += g.weights[f];
    if (g.weights[f] > 0.0f) last = f;
  }
  const float target = philox_stream(seed, global_env, episode, 0u, stage_id).uniform(0u).v[0] * sum;
  float cumulative = 0.0f;
  for (int f = 0; f < num_generator_families; ++f) {
    cumulative += g.weights[f];
    if (g.weights[f] > 0.0f && target < cumulative) return static_cast<generator_family>(f);
  }
  return static_cast<generator_family>(last);
}

/// Whether family f can be drawn under `g` (it is `g.family`, or its weight is positive).
inline bool family_in_use(const generator_params& g, generator_family f) {
  return mixes_families(g) ? g.weights[static_cast<int>(f)] > 0.0f : g.family == f;
}

}  // namespace detail

namespace stages {

/// Draws each env's generator family (generator_params: one family for the batch, or a mix by
/// weights, drawn once per env and episode) and runs that family's stage, which writes the
/// control points. Random stream: stage 9 for the draw (only when the mix is on), then the
/// family stage's own. With the default parameters (family polar, no weights) it is exactly
/// stages::random_polar. The store recomputes the family for the `family` field (draw_family).
///
/// `WithGrowth`: whether the repulsive family (stages::repulsive_growth) is among the cases.
/// stages::random_family (false) draws the five others; stages::random_any_family (true) all six.
/// Two stages because the growth's flow, out of line as it is, made the kernel of the other five
/// spill more (2,416 -> 2,640 bytes of stack, `ptxas -v`, sm_90) and their tracks slower (polar
/// 13 %, bezier 4 % at E = 65,536 on the H200: docs/performance-log.md, entry 35). A pipeline of
/// stages::random_family refuses a selection that can draw the repulsive family at construction.
template <bool WithGrowth>
struct basic_random_family {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 9;
  /// Whether the repulsive family is among the families this stage runs.
  static constexpr bool with_growth = WithGrowth;
  /// The growth's register room (stages::repulsive_growth::generate_threads_per_sm) when it is here.
  static constexpr int generate_threads_per_sm = WithGrowth ? repulsive_growth::generate_threads_per_sm : 896;

  /// The most control points any family that `p` can draw writes (host; sizes the scratch).
  static int max_control_points(const track_params& p) {
    return largest_in_use(p.generator, {random_polar::max_control_points(p), bezier_corners::max_control_points(p),
                                        hull_corners::max_control_points(p), voronoi_sites::max_control_points(p),
                                        checkpoint_walk::max_control_points(p),
                                        WithGrowth ? repulsive_growth::max_control_points(p) : 0});
  }

  /// The most dense samples any family that `p` can draw makes (host; sizes the scratch): the
  /// polar family's control points x spline.samples_per_segment, each other family's own count
  /// (they set the families' dense budget).
  static int max_dense_samples(const track_params& p) {
    return largest_in_use(p.generator, {random_polar::max_control_points(p) * p.spline.samples_per_segment,
                                        bezier_corners::max_dense_samples(p), hull_corners::max_dense_samples(p),
                                        voronoi_sites::max_dense_samples(p), checkpoint_walk::max_dense_samples(p),
                                        WithGrowth ? repulsive_growth::max_dense_samples(p) : 0});
  }

  /// The points any family that `p` can draw keeps in ws.dense for itself (host; sizes the
  /// scratch of a pipeline that stores no dense samples): each family stage's
  /// max_scratch_points, none for the polar family.
  static int max_scratch_points(const track_params& p) {
    return largest_in_use(p.generator, {0, bezier_corners::max_scratch_points(p), hull_corners::max_scratch_points(p),
                                        voronoi_sites::max_scratch_points(p), checkpoint_walk::max_scratch_points(p),
                                        WithGrowth ? repulsive_growth::max_scratch_points(p) : 0});
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    const generator_family f = detail::draw_family(p.generator, ws.seed, ws.global_env, ws.episode, stage_id);
    if (f == generator_family::polar) {
      random_polar::run(ctx, ws, p);
      return;
    }
    // The other families run out of line on a copy of the workspace, and the fields they set
    // come back: the block's own workspace never has its address taken by a call, so it stays
    // in registers with its scratch pointers known to be shared memory. Inlined, or called
    // with the workspace itself, the kernel kept it in local memory and reached the scratch
    // of every stage through generic loads (2-7 % of the families' time on the H200;
    // docs/performance-log.md, entry 24).
    detail::workspace family_ws = ws;
    // Without the growth, repulsive (refused at construction: pipeline::family_rule) is the
    // default case's.
    bool grown = false;
    if constexpr (WithGrowth) {
      if (f == generator_family::repulsive) {
        run_out_of_line<repulsive_growth>(ctx, family_ws, p);
        grown = true;
      }
    }
    if (!grown) {
      switch (f) {
        case generator_family::bezier: run_out_of_line<bezier_corners>(ctx, family_ws, p); break;
        case generator_family::hull: run_out_of_line<hull_corners>(ctx, family_ws, p); break;
        case generator_family::voronoi: run_out_of_line<voronoi_sites>(ctx, family_ws, p); break;
        case generator_family::checkpoint: run_out_of_line<checkpoint_walk>(ctx, family_ws, p); break;
        default: random_polar::run(ctx, ws, p); return;  // not a family (the host checks refuse it): polar, as before
      }
    }
    ws.num_control = family_ws.num_control;
    ws.relax_neighbours = family_ws.relax_neighbours;
    ws.dense_budget = family_ws.dense_budget;
  }

 private:
  /// Stage::run, kept out of line in device code (run says why).
  template <class Stage, class Ctx>
  TRACK_GEN_HD TRACK_GEN_NOINLINE static void run_out_of_line(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    Stage::run(ctx, ws, p);
  }

  /// The largest of `values` (one per family, in generator_family order) over the families `g`
  /// can draw; 0 when none.
  static int largest_in_use(const generator_params& g, const int (&values)[num_generator_families]) {
    int most = 0;
    for (int f = 0; f < num_generator_families; ++f)
      if (detail::family_in_use(g, static_cast<generator_family>(f))) most = std::max(most, values[f]);
    return most;
  }
};

/// The five families but repulsive (basic_random_family says why the growth has its own stage).
using random_family = basic_random_family<false>;
/// Every family, the repulsive growth included.
using random_any_family = basic_random_family<true>;

}  // namespace stages
}  // namespace track_gen

#pragma once
/// @file
/// Compile-time composition of stages into one generation pass, and the bounded retry loop
/// with the fallback ellipse after it.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/stages.hpp>

#include <tuple>
#include <type_traits>

namespace track_gen {

/// Stages run in order, all fused in one kernel (one block per track). Stages whose role does
/// not apply to a track's source are skipped: `generate` stages run for random tracks only,
/// `interpolate` stages not for user centrelines.
template <class... Stages>
struct pipeline {
  static_assert(sizeof...(Stages) >= 1, "A pipeline needs at least one stage.");
  static_assert(((Stages::role == detail::stage_role::validate) + ...) == 1,
                "A pipeline needs exactly one stage with role validate (e.g. stages::validate).");
  static_assert(std::tuple_element_t<sizeof...(Stages) - 1, std::tuple<Stages...>>::role == detail::stage_role::validate,
                "The validating stage must be the last stage of a pipeline: it judges the finished track.");

  /// One generation attempt of the track described by `ws` (all threads of the block call it).
  template <class Ctx>
  TRACK_GEN_HD static void run_attempt(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    (run_stage<Stages>(ctx, ws, p), ...);
  }

 private:
  template <class Stage, class Ctx>
  TRACK_GEN_HD static void run_stage(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using detail::stage_role;
    using detail::track_source;
    if constexpr (Stage::role == stage_role::generate) {
      if (ws.source != track_source::random) return;
    }
    if constexpr (Stage::role == stage_role::interpolate) {
      if (ws.source == track_source::centreline) return;
    }
    Stage::run(ctx, ws, p);
  }
};

}  // namespace track_gen

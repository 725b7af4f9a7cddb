#pragma once
/// @file
/// The generation stages (functors run by every thread of a block, or by the host context).
///
/// A stage is a type with `static constexpr detail::stage_role role`, a `stage_id` (its random
/// stream) and `template <class Ctx> static void run(Ctx&, detail::workspace&, const
/// track_params&)`, called by all threads of the block; it reads and writes the workspace and
/// synchronises through the context's collectives (every collective is a barrier).
///
/// Plugin stages are written the same way. Besides the collectives (`reduce_max`, `reduce_min`,
/// `all`, `any`, `inclusive_sum`, `sync`, `rank`, `size`) the context offers, at block scope
/// (`scope::block`: the loop runs inside the fused kernel), `skip_unless(flag, body)` and
/// `bounded_loop(max_windows, active, body)`; examples/plugin_stage.hpp is a complete plugin
/// (tests/core/launch_context_* test the protocol). Grid scope (windows as launches under the
/// skip policy, for stages spanning several blocks) is described in grid_scope.hpp;
/// stages::dense_repulsive is one.

#include <track_gen/detail/stages/centreline_relaxation.hpp>
#include <track_gen/detail/stages/dense_repulsive.hpp>
#include <track_gen/detail/stages/elevation.hpp>
#include <track_gen/detail/stages/gate_course.hpp>
#include <track_gen/detail/stages/generate_stages.hpp>
#include <track_gen/detail/stages/random_family.hpp>
#include <track_gen/detail/stages/shape_stages.hpp>
#include <track_gen/grid_scope.hpp>

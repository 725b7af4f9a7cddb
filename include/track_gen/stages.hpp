#pragma once
/// @file
/// The generation stages (functors run by every thread of a block, or by the host context).
///
/// A stage is a type with `static constexpr detail::stage_role role`, a `stage_id` (its random
/// stream) and `template <class Ctx> static void run(Ctx&, detail::workspace&, const
/// track_params&)`, called by all threads of the block; it reads and writes the workspace and
/// synchronises through the context's collectives (every collective is a barrier).

#include <track_gen/detail/stages/generate_stages.hpp>
#include <track_gen/detail/stages/shape_stages.hpp>

#pragma once
/// @file
/// track_gen: batches of closed race tracks generated on the GPU (or the CPU), gates along
/// them, and progress tracking of one agent per environment. Include this header.
/// Data flows one way: parameters -> generator -> track_batch -> runtime utilities
/// (progress_tracker) -> course, the facade that composes them.

#include <track_gen/collision.hpp>
#include <track_gen/course.hpp>
#include <track_gen/course_ref.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/errors.hpp>
#include <track_gen/gate_collision.hpp>
#include <track_gen/gate_course.hpp>
#include <track_gen/gate_sequence.hpp>
#include <track_gen/generator.hpp>
#include <track_gen/heightfield.hpp>
#include <track_gen/localizer.hpp>
#include <track_gen/observations.hpp>
#include <track_gen/params.hpp>
#include <track_gen/pipeline.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/presets.hpp>
#include <track_gen/progress_tracker.hpp>
#include <track_gen/props.hpp>
#include <track_gen/queries.hpp>
#include <track_gen/random.hpp>
#include <track_gen/sdf.hpp>
#include <track_gen/shape_metrics.hpp>
#include <track_gen/shard.hpp>
#include <track_gen/speed_profile.hpp>
#include <track_gen/snapshot.hpp>
#include <track_gen/spawn.hpp>
#include <track_gen/stages.hpp>
#include <track_gen/status.hpp>
#include <track_gen/track_batch.hpp>
#include <track_gen/track_ref.hpp>
#include <track_gen/user_tracks.hpp>

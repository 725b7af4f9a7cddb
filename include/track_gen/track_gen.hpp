#pragma once
/// @file
/// track_gen: batches of closed race tracks generated on the GPU (or the CPU), gates along
/// them, and progress tracking of one agent per environment. Include this header.

#include <track_gen/course.hpp>
#include <track_gen/course_ref.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/errors.hpp>
#include <track_gen/params.hpp>
#include <track_gen/pipeline.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/presets.hpp>
#include <track_gen/random.hpp>
#include <track_gen/snapshot.hpp>
#include <track_gen/stages.hpp>
#include <track_gen/status.hpp>
#include <track_gen/user_tracks.hpp>

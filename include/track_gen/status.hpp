#pragma once
/// @file
/// Per-environment status bits of a track and the per-step event/flag bits of progress tracking.

#include <track_gen/detail/config.hpp>

#include <cstdint>

namespace track_gen {

/// Bits of the per-environment track status word (`uint32_t [E]`).
namespace status {
/// The track passed `stages::validate` (a fallback track can be valid too).
inline constexpr std::uint32_t valid = 1u << 0;
/// Every attempt failed validation and the fallback ellipse replaced the track.
inline constexpr std::uint32_t fallback = 1u << 1;
/// An invalid position (NaN/Inf, or a coordinate beyond +-1e7 m: docs/parameters.md) was passed
/// to `step` since the last regeneration; the progress state was left unchanged on those steps.
/// Also set when a step found the env's gate state out of range (progress_flags::invalid_state).
inline constexpr std::uint32_t invalid_input = 1u << 2;
/// The track comes from user-supplied control points or a centreline (no random stages).
inline constexpr std::uint32_t user_track = 1u << 3;
/// Why the track is not valid, or, with `fallback`, why the last random attempt failed.
inline constexpr std::uint32_t fail_not_finite = 1u << 4;
inline constexpr std::uint32_t fail_length = 1u << 5;
inline constexpr std::uint32_t fail_curvature = 1u << 6;
inline constexpr std::uint32_t fail_clearance = 1u << 7;
/// Consecutive samples were not L/N apart within 5% (a loop between samples).
inline constexpr std::uint32_t fail_spacing = 1u << 16;
/// A relaxation moved the track and the result passed validation: the stored track is the
/// relaxed one (a grid-scope stage such as stages::dense_repulsive, or
/// stages::centreline_relaxation on the accepted attempt).
inline constexpr std::uint32_t relaxed = 1u << 17;
/// A grid-scope stage moved the track but the result failed validation: the stored track is
/// the one before the stage (rebuilt from the same random streams), still valid.
inline constexpr std::uint32_t relax_rejected = 1u << 18;
/// A user track has a given point (control point or centreline vertex) farther than 8192 m
/// from its frame's origin on some axis
/// (detail::precise_position), where float32 positions are coarser than 1 mm and the
/// projection's lateral offset loses precision; `user_tracks::recentre = true` re-centres it.
/// A warning: the track is built and tracked as usual.
inline constexpr std::uint32_t far_from_origin = 1u << 19;
/// The track rises or falls more steeply than elevation.max_grade between two consecutive
/// samples (stages::validate_grade).
inline constexpr std::uint32_t fail_grade = 1u << 20;
/// A gate course failed its gate test (stages::validate_gates): a gate count outside
/// [gates.min_gates, gates.max_gates] or beyond the gate storage, two gate centres closer than
/// gates.min_spacing, two gates' bars crossing, or a gate frame not finite and level-defined.
inline constexpr std::uint32_t fail_gates = 1u << 21;
/// Bits 8..15 hold the number of generation attempts made (1..255), the fallback not counted.
inline constexpr int attempts_shift = 8;
inline constexpr std::uint32_t attempts_mask = 0xffu << attempts_shift;
/// The number of attempts recorded in a status word.
TRACK_GEN_HD constexpr int attempts(std::uint32_t s) { return static_cast<int>((s & attempts_mask) >> attempts_shift); }
}  // namespace status

/// Bits of the per-environment progress flag word (`uint32_t [E]`), rewritten by every `step`.
namespace progress_flags {
/// The last position is known (false right after a reset: the first step only initialises).
inline constexpr std::uint32_t has_last = 1u << 0;
/// |lateral offset| > half-width at the projection of the current position.
inline constexpr std::uint32_t off_track = 1u << 1;
/// The agent moved against the track tangent on this step.
inline constexpr std::uint32_t wrong_way = 1u << 2;
/// Event of this step: at least one gate was passed.
inline constexpr std::uint32_t gate_passed = 1u << 3;
/// Event of this step: a lap was completed (gate 0 passed after all the others).
inline constexpr std::uint32_t lap_completed = 1u << 4;
/// Event of this step: the projection fell back to a full O(N) search (the agent jumped, or
/// is farther than the half-width from the centreline).
inline constexpr std::uint32_t full_search = 1u << 5;
/// This step's position was invalid (NaN/Inf, or a coordinate beyond +-1e7 m) and was ignored.
inline constexpr std::uint32_t invalid_position = 1u << 6;
/// This step found the env's gate state out of range (next_gate outside [0, G), or G = num_gates
/// outside [1, G_max]: the arrays were written from outside the library): its gate tests were
/// skipped, and status::invalid_input is set on the track. The projection ran as usual.
inline constexpr std::uint32_t invalid_state = 1u << 7;
/// Mask of the bits that describe one step only (cleared at the start of every step).
inline constexpr std::uint32_t step_events = off_track | wrong_way | gate_passed | lap_completed |
                                             full_search | invalid_position | invalid_state;
}  // namespace progress_flags

}  // namespace track_gen

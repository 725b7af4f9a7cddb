#pragma once
/// @file
/// Spawning an agent anywhere on its track: the pose at an arc length (`spawn_pose`), and which
/// gate comes next from there and how many gates make the first lap (`gates_after`), from which
/// progress_tracker_ref::spawn (and course_ref::spawn) resets one env's progress as if its agent
/// stood at that arc length. Device functions over one env's `track_ref` (one thread per env,
/// in your kernel or on the host). Frames and signs as in localizer.hpp.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/localizer.hpp>
#include <track_gen/track_ref.hpp>

namespace track_gen {

/// Where to put an agent: a position on the track and the heading of the direction of travel.
struct track_pose {
  float3 position;  ///< [m], track frame
  float yaw;        ///< heading of the centreline there, about +z from +x, in (-pi, pi] [rad]
  float s;          ///< arc length of the pose, in [0, L) [m]
  int hint;         ///< sample index of the segment holding s: a projection hint (track_ref::project, localize)
};

/// The pose at arc length `s` [m] (any real: wrapped into [0, L)), `lateral` metres to the
/// LEFT of the centreline (negative: right) along the interpolated left normal:
/// centreline_at(track, s).position + lateral * normal, facing the direction of travel. The
/// height is the centreline's (add your vehicle's ride height). When `s` or `lateral` is not
/// finite, the pose of a reset: the start line on the centreline (s = 0, lateral 0), where
/// progress_tracker_ref::spawn puts the env's progress for such input. O(1).
TRACK_GEN_HD inline track_pose spawn_pose(const track_ref& track, float s, float lateral = 0.0f) {
  using namespace detail;
  const bool finite = is_finite(s) && is_finite(lateral);
  const centreline_point c = centreline_at(track, finite ? s : 0.0f);
  return {c.position + c.normal * (finite ? lateral : 0.0f), c.yaw, c.s, c.segment};
}

/// The gates of a spawn (gates_after).
struct spawn_gates {
  int next_gate;     ///< the first gate ahead of the spawn point, in [0, G)
  int gates_to_lap;  ///< gates to pass, counting next_gate, until the first lap counts: G or G + 1
};

/// For an agent standing at arc length `s` (in [0, L), e.g. spawn_pose(...).s) at position `p`
/// (spawn_pose(...).position): the next gate to pass, and the gates to pass until the first lap
/// counts so that **no lap counts before a full circuit from s**, and one counts at the first
/// gate reached once the circuit is complete:
/// - `next_gate` is the first gate whose arc length is > s (gate 0 after the last gate, whose
///   next instance is at L). A gate within one sample spacing ahead whose plane `p` is already
///   on or past (the crossing test, crosses_gate, needs the start strictly behind the plane;
///   that happens at a gate's own arc length, up to float rounding) counts as the gate the agent
///   stands on: the next gate is the one after it.
/// - Standing on a gate (s equal to its arc length, or the case above), a full circuit ends at
///   that same gate after G crossings: `gates_to_lap` = G. (s = 0 gives next gate 1 and G, the
///   state of a reset at the start line.) Between two gates, a full circuit ends between them;
///   the first gate after it is next_gate again, G + 1 crossings away: `gates_to_lap` = G + 1
///   (the lap counts L + (arc of next_gate - s) metres after the spawn).
/// Later laps count every G gates, so a spawned env's laps always complete at the same gate (its
/// finish line): the gate at s, or the first gate after s. O(log G).
TRACK_GEN_HD inline spawn_gates gates_after(const track_ref& track, float s, float3 p) {
  using namespace detail;
  const int count = track.num_gates();
  int lo = 0, hi = count;  // the first gate whose arc length is > s (count: none)
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (track.gate(mid).arc_length > s) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  const int ahead = lo == count ? 0 : lo;
  const int behind = (lo == 0 ? count : lo) - 1;
  const float ahead_arc = lo == count ? track.length() : track.gate(lo).arc_length;
  const track_gen::gate g = track.gate(ahead);
  if (ahead_arc - s <= track.sample_spacing() && dot(p - g.centre, g.normal) >= 0.0f)
    return {ahead + 1 == count ? 0 : ahead + 1, count};
  return {ahead, track.gate(behind).arc_length == s ? count : count + 1};
}

}  // namespace track_gen

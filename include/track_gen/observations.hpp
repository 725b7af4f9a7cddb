#pragma once
/// @file
/// What an agent observes of its track each step: the centreline ahead in its own frame
/// (`track_ahead`), its signed progress along the loop (`progress_delta`) and its distance to a
/// gate (`distance_to_gate`). Device functions over one env's `track_ref` (one thread per env,
/// in your kernel or on the host); they allocate nothing and synchronise nothing. Frames and
/// signs as in localizer.hpp (track frame, metres, radians, z up, yaw counter-clockwise from +x).

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/localizer.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>

namespace track_gen {

/// Writes `count` centreline points ahead of arc length `s` to `out[0 .. count)`: point i is the
/// centreline at arc length s + spacing * (i + 1) (centreline_at: interpolated between samples,
/// wrapping around the loop past the start line, several times if count * spacing > L),
/// expressed in the agent's frame: x forward, y left, z up, origin at `position`, rotated by
/// -yaw about z (out = Rz(-yaw) (point - position); roll and pitch are ignored).
///
/// @param s        arc length the points start from [m] (any real; e.g. localize(...).s)
/// @param position the agent's position [m], track frame
/// @param yaw      the agent's heading about +z from +x [rad]
/// @param count    number of points K >= 0
/// @param spacing  arc length between points [m] (negative looks behind)
/// @param out      float3 [K], same memory space as the caller (a thread's registers, local
///                 memory, or device memory in a kernel)
/// O(K).
TRACK_GEN_HD inline void track_ahead(const track_ref& track, float s, float3 position, float yaw, int count, float spacing,
                                     float3* out);

namespace detail {
/// Points per group of track_ahead_to: a group's loads are issued before any of its points is
/// passed on (see there).
inline constexpr int track_ahead_group = 8;

/// track_ahead's points, handed to `sink` instead of stored: sink.point(i, value) for i in
/// [0, count), then sink.group_done(first, n) after each group of track_ahead_group points
/// (points first .. first + n - 1). The same values, bit for bit, whatever the sink does with
/// them (the batch query's warp form stages them in shared memory and writes them coalesced).
template <class Sink>
TRACK_GEN_HD void track_ahead_to(const track_ref& track, float s, float3 position, float yaw, int count, float spacing,
                                 Sink& sink) {
  const float c = std::cos(yaw), sn = std::sin(yaw);
  // Wrapped first: s + spacing at s = 1e9 would lose the spacing to float rounding.
  const float s0 = wrap_arc_length(s, track.length());
  // Eight points at a time, all read before any is written: `out` might alias the track's
  // arrays as far as the compiler knows, so one point at a time waited on memory once per point.
  constexpr int group = track_ahead_group;
  for (int first = 0; first < count; first += group) {
    float3 d[group];
    TRACK_GEN_UNROLL
    for (int j = 0; j < group; ++j)
      if (first + j < count) d[j] = centreline_at(track, s0 + spacing * static_cast<float>(first + j + 1)).position - position;
    TRACK_GEN_UNROLL
    for (int j = 0; j < group; ++j)
      if (first + j < count) sink.point(first + j, f3(c * d[j].x + sn * d[j].y, -sn * d[j].x + c * d[j].y, d[j].z));
    sink.group_done(first, count - first < group ? count - first : group);
  }
}

/// The sink of track_ahead: point i to out[i].
struct store_points {
  float3* out;
  TRACK_GEN_HD void point(int i, float3 v) const { out[i] = v; }
  TRACK_GEN_HD void group_done(int, int) const {}
};
}  // namespace detail

TRACK_GEN_HD inline void track_ahead(const track_ref& track, float s, float3 position, float yaw, int count, float spacing,
                                     float3* out) {
  detail::store_points sink{out};
  detail::track_ahead_to(track, s, position, yaw, count, spacing, sink);
}

/// The signed change of arc length from `s_prev` to `s_now` [m] on a loop of length `length`
/// > 0 [m]: the shortest signed difference modulo L, in (-L/2, L/2]. Crossing the start line
/// forwards (s_prev = L - 1, s_now = 0.5) gives +1.5; backwards gives -1.5; any move against
/// the direction of travel is negative. Meaningful while an agent moves less than L/2 between
/// two calls (e.g. a reward term: progress_delta(previous s, localize(...).s, track.length())).
/// A length that is not a finite value > 0, a non-finite input, or inputs so far apart that
/// their difference overflows (beyond about 1.7e38 m) give NaN.
TRACK_GEN_HD inline float progress_delta(float s_prev, float s_now, float length) {
  if (!(length > 0.0f && std::isfinite(length))) return NAN;
  const float half = 0.5f * length;
  float d = s_now - s_prev;
  if (!(d > -half && d <= half)) {
    d = std::remainder(d, length);  // exact, in [-L/2, L/2]
    if (d <= -half) d += length;
  }
  return d;
}

/// Distance [m] from `p` [m, track frame] to the centre of gate `g` of `track` (g in
/// [0, track.num_gates()), not checked): with g = the env's next_gate, the seed system's
/// `dist_to_next` (a reward shaping term: its decrease from one step to the next).
TRACK_GEN_HD inline float distance_to_gate(const track_ref& track, int g, float3 p) {
  using namespace detail;
  return length(p - track.gate(g).centre);
}

}  // namespace track_gen

#pragma once
/// @file
/// Localization on one env's track, in both directions: a point -> its track coordinates
/// (`localize`: arc length s, signed lateral offset n, vertical offset, curvature, half-widths,
/// heading), and an arc length -> the centreline point and frame there (`centreline_at`); plus
/// `heading_error`. Device functions over a `track_ref` (one thread per env, in your kernel or
/// on the host); they allocate nothing and synchronise nothing.
///
/// Frames and signs: everything is in the env's track frame (the frame of the track's samples;
/// subtract the env's `origin` field from positions given in your frame when the tracks were
/// re-centred, user_tracks.hpp). Metres and radians; z up; yaw is measured about +z from +x,
/// counter-clockwise positive. Lateral offsets and curvature are POSITIVE TO THE LEFT of the
/// direction of travel (along the track's left normal; a counter-clockwise circle of radius R
/// has curvature +1/R). The seed system (TrackGen's `TrackFrame.n`) uses positive-right: negate
/// `n` to compare.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>

namespace track_gen {

/// The centreline of a track at one arc length, with its frame.
struct centreline_point {
  float s;          ///< arc length from the start line, wrapped into [0, L) [m]
  int segment;      ///< sample index k: the point lies between samples k and k + 1 (mod N)
  float t;          ///< fraction along that segment, in [0, 1]
  float3 position;  ///< the centreline point [m], track frame
  float3 tangent;   ///< unit tangent (direction of travel), interpolated between the two samples
  float3 normal;    ///< unit horizontal left normal, interpolated between the two samples
  float yaw;        ///< heading of `tangent`: atan2(tangent.y, tangent.x), in (-pi, pi] [rad]
};

/// Where a point lies relative to a track (localize()).
struct localization {
  float s;                 ///< arc length of the nearest centreline point (the foot), in [0, L) [m]
  float n;                 ///< signed lateral offset along the left normal at the foot [m]: POSITIVE LEFT (seed system: positive right)
  float vertical;          ///< p.z minus the centreline's height at the foot [m] (positive above)
  float curvature;         ///< signed curvature at s [1/m], positive turning left; interpolated between the samples
  float half_width_left;   ///< road half-width left of the centreline at s [m], interpolated
  float half_width_right;  ///< road half-width right of the centreline at s [m], interpolated
  float heading;           ///< yaw of the centreline's tangent at s, in (-pi, pi] [rad]
  float distance;          ///< distance from the point to the foot [m]
  float3 point;            ///< the foot: the nearest centreline point [m], track frame
  int hint;                ///< sample index of the foot's segment: pass it as the next call's `hint`
  bool lost;               ///< the windowed search around the hint failed and all N segments were searched
};

namespace detail {
/// Yaw of a direction, atan2(d.y, d.x), folded into (-pi, pi] (atan2 gives -pi for (-1, -0)).
TRACK_GEN_HD inline float yaw_of(float3 d) {
  const float yaw = std::atan2(d.y, d.x);
  return yaw <= -pi ? pi : yaw;
}
}  // namespace detail

/// `s` [m] wrapped into [0, length) for a closed track of length `length` > 0 (any real s:
/// s = -1 gives L - 1, s = L + 1 gives 1). A non-finite s, or a length that is not > 0, gives 0.
TRACK_GEN_HD inline float wrap_arc_length(float s, float length) {
  if (!(std::isfinite(s) && length > 0.0f)) return 0.0f;
  if (s >= 0.0f && s < length) return s;
  float r = std::fmod(s, length);
  if (r < 0.0f) r += length;
  return r < length ? r : 0.0f;  // -tiny + L rounds to L
}

/// The centreline point of `track` at arc length `s` [m] (any real: wrapped into [0, L) around
/// the loop), linearly interpolated between the two samples around it; the arc length of sample
/// k is k L / N (track_ref::sample_arc_length: the `arc_length` field's value, computed rather
/// than read), and L for the loop's closing segment. The tangent and left normal are the
/// samples' ones interpolated and renormalised (track_ref::frame_at: the samples' frames
/// computed from their neighbours, the stored ones' bits). A non-finite s is taken as 0. O(1).
TRACK_GEN_HD inline centreline_point centreline_at(const track_ref& track, float s) {
  using namespace detail;
  const int n = track.num_samples();
  const float length = track.length();
  s = wrap_arc_length(s, length);
  const float spacing = track.sample_spacing();
  int k = spacing > 0.0f ? static_cast<int>(s / spacing) : 0;
  k = k < 0 ? 0 : (k >= n ? n - 1 : k);
  // s / spacing may round across a sample: settle k on arc(k) <= s < arc(k + 1).
  if (k > 0 && track.sample_arc_length(k) > s) {
    --k;
  } else if (k + 1 < n && track.sample_arc_length(k + 1) <= s) {
    ++k;
  }
  const float a0 = track.sample_arc_length(k), a1 = k + 1 < n ? track.sample_arc_length(k + 1) : length;
  const float t = a1 > a0 ? clamp_f((s - a0) / (a1 - a0), 0.0f, 1.0f) : 0.0f;
  centreline_point c;
  c.s = s;
  c.segment = k;
  c.t = t;
  const segment_frame f = track.frame_at(k, t);
  c.position = f.point;
  c.tangent = f.tangent;
  c.normal = f.left;
  c.yaw = yaw_of(c.tangent);
  return c;
}

/// Localizes `p` [m, track frame] on `track`: the nearest point of the centreline polyline (the
/// foot) by track_ref::project(p, hint, window) — a search of about `window` segments around
/// segment `hint` (the previous call's `hint`), and the O(N) search of every segment when that
/// fails (the point moved `window` segments or more, or lies farther than the half-width from
/// the centreline, where another part of the track may be nearer) or when `window` <= 0 (no
/// hint yet: the first call, or after a teleport). Then, at the foot: s interpolated between the
/// arc lengths k L / N of the segment's two samples (track_ref::sample_arc_length, the
/// `arc_length` field's values; L for the closing segment) and wrapped into
/// [0, L); n along the interpolated left normal (positive left); the vertical offset, the
/// curvature, both half-widths and the heading there.
///
/// `lost` is true when a window was given (window > 0 and 2 window + 1 < N, otherwise the O(N)
/// search is the only one; any int window is accepted) and the O(N) search was needed: the hint
/// was stale (a jump, a reset), or the point is farther than both the narrower half-width and
/// the track's trust radius (track_ref::trust_radius) from the centreline in 3D (off the road
/// sideways, or above or below it by that much: then another part of the track may be nearer).
///
/// `p` must be a valid position (finite, each coordinate within +-1e7 m: detail::is_position);
/// not checked here (a NaN gives NaN offsets and a meaningless distance, on segment 0).
/// O(window), O(N) when lost.
TRACK_GEN_HD inline localization localize(const track_ref& track, float3 p, int hint = 0, int window = 0) {
  using namespace detail;
  const projection pr = track.project(p, hint, window);
  const int n = track.num_samples();
  const int k = pr.segment, k1 = k + 1 == n ? 0 : k + 1;
  const float length = track.length();
  const float a0 = track.sample_arc_length(k), a1 = k + 1 < n ? track.sample_arc_length(k + 1) : length;
  const float s = lerp(a0, a1, pr.t);
  localization r;
  r.s = s >= length ? s - length : s;
  r.n = pr.lateral;
  r.vertical = p.z - pr.point.z;
  r.curvature = lerp(track.curvature(k), track.curvature(k1), pr.t);
  r.half_width_left = lerp(track.half_width_left(k), track.half_width_left(k1), pr.t);
  r.half_width_right = lerp(track.half_width_right(k), track.half_width_right(k1), pr.t);
  r.heading = yaw_of(pr.tangent);
  r.distance = pr.distance;
  r.point = pr.point;
  r.hint = k;
  r.lost = pr.full_search && window > 0 && window < n && 2 * window + 1 < n;  // window < n first: no overflow
  return r;
}

/// The agent's heading relative to the track's: yaw_agent - yaw_track [rad] wrapped into
/// (-pi, pi]; positive when the agent points to the left of the direction of travel (e.g.
/// heading_error(yaw, localize(...).heading)). Any finite yaws (not only in (-pi, pi]; the
/// reduction is against float(2 pi), so beyond about 1e4 rad of difference the result drifts
/// from the exact angle); NaN or Inf gives NaN.
TRACK_GEN_HD inline float heading_error(float yaw_agent, float yaw_track) {
  using detail::pi;
  float d = yaw_agent - yaw_track;
  if (!(d > -pi && d <= pi)) {
    d = std::remainder(d, 2.0f * pi);  // exact, in [-pi, pi]
    if (d <= -pi) d += 2.0f * pi;
  }
  return d;
}

}  // namespace track_gen

#pragma once
/// @file
/// Props along a road edge for rendering and as obstacles: cones (points) and wall pieces
/// (segments between consecutive cones) at an even spacing along either border of one env's
/// track, closing the loop without a seam. Device functions over a `track_ref` (one thread per
/// env, in your kernel or on the host); the runtime utility that fills a batch's props for the
/// regenerated envs is not written yet (issue 14).

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>

namespace track_gen {

/// Which road edge: `left` is position + half_widths.x * normal, `right` position -
/// half_widths.y * normal (on a counter-clockwise track the left edge is the inner one).
enum class border_side : int { left = 0, right = 1 };

/// An instancing transform of a wall piece: the midpoint of its segment [m], its heading (yaw
/// about +z from +x, radians in (-pi, pi]) and its length [m].
struct wall_piece {
  float3 position;
  float yaw;
  float length;
};

/// The smallest spacing the batch queries (border_cones, border_walls) accept [m]: a prop every
/// millimetre keeps border length / spacing far below prop_count's 1e9 cut-off for any track.
inline constexpr float min_prop_spacing = 1.0e-3f;

/// The number of props on a border of length `border_length` [m] at `spacing` [m]: the nearest
/// whole number to border_length / spacing, at least 3, so that they close the loop at an even
/// spacing (border_length / count, within a half spacing of the one asked for).
TRACK_GEN_HD inline int prop_count(float border_length, float spacing) {
  const float ratio = border_length / spacing;
  if (!(ratio < 1.0e9f)) return 3;  // NaN or absurd: the caller's spacing is not usable
  const int count = static_cast<int>(std::floor(ratio + 0.5f));
  return count < 3 ? 3 : count;
}

/// Sample k of the road edge `side`.
TRACK_GEN_HD inline float3 border_point(const track_ref& t, border_side side, int k) {
  return side == border_side::left ? t.border_left(k) : t.border_right(k);
}

/// Length [m] of the closed polyline through the border samples of `side`.
TRACK_GEN_HD inline float border_length(const track_ref& t, border_side side) {
  using namespace detail;
  const int n = t.num_samples();
  float total = 0.0f;
  for (int k = 0; k < n; ++k) total += length(border_point(t, side, k + 1 == n ? 0 : k + 1) - border_point(t, side, k));
  return total;
}

/// Cones along `side` of `t`: prop_count(border_length, spacing) points at arc lengths
/// i * border_length / count along the border polyline from its sample 0, i in [0, count).
/// Writes the first min(count, capacity) to `cones` (same memory space as the caller) and
/// returns count (more than `capacity` means the output was cut: size it by prop_count).
/// `spacing` > 0 [m]. O(N + count), synchronous, allocates nothing.
TRACK_GEN_HD inline int border_cones(const track_ref& t, border_side side, float spacing, float3* cones, int capacity) {
  using namespace detail;
  const int n = t.num_samples();
  const float total = border_length(t, side);
  const int count = prop_count(total, spacing);
  const float step = total / static_cast<float>(count);
  int k = 0;             // segment k -> k + 1 holds the next cone
  float start = 0.0f;    // arc length of sample k along the border
  float3 a = border_point(t, side, 0), b = border_point(t, side, n > 1 ? 1 : 0);
  float seg = length(b - a);
  for (int i = 0; i < count && i < capacity; ++i) {
    const float s = static_cast<float>(i) * step;
    while (s > start + seg && k + 1 < n) {  // advance to the segment that holds arc length s
      start += seg;
      ++k;
      a = b;
      b = border_point(t, side, k + 1 == n ? 0 : k + 1);
      seg = length(b - a);
    }
    const float f = seg > 0.0f ? min_f((s - start) / seg, 1.0f) : 0.0f;
    cones[i] = lerp(a, b, f);
  }
  return count;
}

/// Wall pieces along `side`: the segments between consecutive cones of border_cones (the last
/// one closing the loop back to cone 0). `scratch` holds capacity + 1 cones (float3, caller's
/// memory); the first min(count, capacity) pieces go to `walls`. Returns count as border_cones.
TRACK_GEN_HD inline int border_walls(const track_ref& t, border_side side, float spacing, float3* scratch,
                                     wall_piece* walls, int capacity) {
  using namespace detail;
  const int count = border_cones(t, side, spacing, scratch, capacity + 1);
  const int written = count < capacity ? count : capacity;
  for (int i = 0; i < written; ++i) {
    const float3 a = scratch[i];
    const float3 b = i + 1 < count ? scratch[i + 1] : scratch[0];
    const float3 d = b - a;
    walls[i] = wall_piece{lerp(a, b, 0.5f), std::atan2(d.y, d.x), length(d)};
  }
  return count;
}

}  // namespace track_gen

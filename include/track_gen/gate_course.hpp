#pragma once
/// @file
/// Gate courses (presets::gate_course_pipeline): each gate's pose as a unit quaternion and its
/// left and right posts, from the gate a track_ref gives (track_ref::gate). Host and device.

#include <track_gen/track_ref.hpp>
#include <track_gen/detail/math.hpp>

#include <cmath>

namespace track_gen {

/// A unit quaternion (x, y, z, w), w the scalar part: the rotation from the world axes to a
/// gate's axes (gate_axes: local x forward, y left, z up), the seed system's layout.
struct gate_quaternion {
  float x, y, z, w;
};

/// The rotation whose matrix has columns forward, left, up (orthonormal, right-handed), as a
/// unit quaternion: the largest of |w|, |x|, |y|, |z| is found from the trace and the diagonal
/// first, so no division is by a small number (S. W. Shepperd, "Quaternion from rotation
/// matrix", J. Guidance and Control 1(3), 1978).
TRACK_GEN_HD inline gate_quaternion gate_orientation(const gate& g) {
  const gate_axes_t a = gate_axes(g.normal);
  // R = [forward left up]: R(r, c) with r the world axis and c the local one.
  const float m00 = a.forward.x, m01 = a.left.x, m02 = a.up.x;
  const float m10 = a.forward.y, m11 = a.left.y, m12 = a.up.y;
  const float m20 = a.forward.z, m21 = a.left.z, m22 = a.up.z;
  const float trace = m00 + m11 + m22;
  gate_quaternion q;
  if (trace >= m00 && trace >= m11 && trace >= m22) {
    const float s = 2.0f * std::sqrt(1.0f + trace);
    q = {(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, 0.25f * s};
  } else if (m00 >= m11 && m00 >= m22) {
    const float s = 2.0f * std::sqrt(detail::max_f(1.0f + m00 - m11 - m22, 0.0f));
    q = {0.25f * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s};
  } else if (m11 >= m22) {
    const float s = 2.0f * std::sqrt(detail::max_f(1.0f + m11 - m00 - m22, 0.0f));
    q = {(m01 + m10) / s, 0.25f * s, (m12 + m21) / s, (m02 - m20) / s};
  } else {
    const float s = 2.0f * std::sqrt(detail::max_f(1.0f + m22 - m00 - m11, 0.0f));
    q = {(m02 + m20) / s, (m12 + m21) / s, 0.25f * s, (m10 - m01) / s};
  }
  const float n = 1.0f / std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  return {q.x * n, q.y * n, q.z * n, q.w * n};
}

/// A gate's left and right posts [m]: centre +- half_width
/// along the gate's left axis (level, at the centre's height).
struct gate_posts_t {
  float3 left, right;
};

/// The left and right posts of gate `g` [m] (gate_posts_t).
TRACK_GEN_HD inline gate_posts_t gate_posts(const gate& g) {
  using namespace detail;
  const float3 l = gate_axes(g.normal).left * g.half_width;
  return {g.centre + l, g.centre - l};
}

}  // namespace track_gen

#pragma once
/// @file
/// Gate-frame collision (issue 15 item 3): the agent as a sphere against the frames of drone
/// gates: each gate's two posts and two bars as thin boxes in the gate's frame. Device functions
/// (host and device, `TRACK_GEN_HD`): one gate (collide_gate_frame), and the gates near env e's
/// current target (collide_gate_frames: the next gate and the one passed last, from the progress
/// state); the batch query over every env is queries.hpp's `collide_gate_frames`. They allocate
/// nothing and synchronise nothing.
///
/// The frame of a gate (gate_axes, the frame crosses_gate and gate_orientation use): x forward
/// (the gate normal), y left (level), z up. The opening is |y| <= half_width, |z| <= half_height
/// (the gate's half_width, the course's gate_half_height). A frame of half-thickness t (each
/// member's half size across, in the gate plane) and half-depth d (along the normal) is the
/// rectangular ring |x| <= d, |y| <= half_width + 2t, |z| <= half_height + 2t minus the opening,
/// made of four members that partition it (gate_member):
/// - the left and right posts: boxes centred at y = +-(half_width + t), half extents
///   (d, t, half_height + 2t): the full height, corners included;
/// - the top and bottom bars: boxes centred at z = +-(half_height + t), half extents
///   (d, half_width, t): between the posts.
/// So the opening a drone flies through is exactly the one progress counts (crosses_gate), and
/// the frame lies outside it.
///
/// The test is exact. Outside the frame the signed distance s of the sphere's centre p is the
/// least distance to the four members; each is the distance to p's closest point on that box,
/// found by clamping p's box-local coordinates to the half extents (in the gate's frame every
/// member is axis-aligned: C. Ericson, "Real-Time Collision Detection", Morgan Kaufmann 2005,
/// §5.1.3 closest point on an AABB to a point, and §5.2.5 testing a sphere against an AABB; in
/// the world frame they are the OBBs of §5.1.4 and §5.2.6). Inside the frame (p in a member,
/// boundary included), s is minus the distance to the frame's boundary: the least of d - |x|,
/// (half_width + 2t) - |y|, (half_height + 2t) - |z| (the outer faces) and the yz distance to
/// the opening (the inner faces, or an inner edge), so the depth counts only faces a sphere can
/// leave by, never a face one member shares with the next. The sphere hits when s <= radius
/// (touching counts); its penetration depth is radius - s (radius + the distance to the nearest
/// face when the centre is inside a member).

#include <track_gen/collision.hpp>
#include <track_gen/course_ref.hpp>
#include <track_gen/detail/config.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/detail/param_ranges.hpp>
#include <track_gen/progress_tracker.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>
#include <cstdint>

namespace track_gen {

/// The four members of a gate's frame (gate_frame_hit::member).
enum class gate_member : int {
  none = -1,       ///< no member: invalid input
  left_post = 0,   ///< at y = +(half_width + t), along the gate's left axis
  right_post = 1,  ///< at y = -(half_width + t)
  top_bar = 2,     ///< at z = +(half_height + t)
  bottom_bar = 3,  ///< at z = -(half_height + t)
};

/// The frame model shared by every gate: members of square-ish section, half sizes [m].
/// Ranges (param_ranges.hpp, docs/parameters.md): each in [1e-4, 1e6] m; check_gate_frame checks
/// them on the host.
struct gate_frame {
  float half_thickness = 0.05f;  ///< half the member's size across, in the gate plane [m]
  float half_depth = 0.05f;      ///< half the member's size along the gate normal [m]
};

/// Which gates of env e collide_gate_frames tests.
enum class gate_scope : int {
  /// The next gate (progress next_gate) and the gate before it (the one passed last, or the
  /// start gate after a reset): the gates a drone flying the course can touch, O(1).
  adjacent = 0,
  /// Every gate of the env (O(G)): also a gate of another part of the course that the drone
  /// passes near, out of order.
  all = 1,
};

/// A sphere against a gate frame (collide_gate_frame), or against the nearest of several
/// (collide_gate_frames).
struct gate_frame_hit {
  std::uint32_t flags;  ///< contact_flags::hit (the sphere touches the frame), contact_flags::invalid
  /// Penetration depth [m], >= 0: radius - distance when hit, 0 when not hit or invalid. Moving
  /// the sphere by `depth` along `normal` clears the nearest point of the frame (a sphere wider
  /// than the opening may then touch the opposite member, which is not reported).
  float depth;
  /// Signed distance from the sphere's centre to the frame [m]: positive outside (the gap plus
  /// the radius), negative inside a member (minus the distance to the nearest face it can leave
  /// by). NaN when invalid.
  float distance;
  /// The point of the frame's surface nearest to the centre [m], track frame: centre - normal *
  /// distance. NaN when invalid.
  float3 point;
  /// Unit contact normal from the frame toward the sphere: from `point` to the centre when the
  /// centre is outside, the outward normal of the nearest face (or the direction out through the
  /// nearest inner edge) when it is inside. Push the sphere along +normal by `depth`. NaN when
  /// invalid.
  float3 normal;
  /// The member nearest to the centre (outside), or containing it (inside), as an int
  /// gate_member; the first in gate_member order on ties; -1 when invalid.
  int member;
  /// The gate's index (collide_gate_frames), -1 from collide_gate_frame and when invalid.
  int gate;
};

namespace detail {
/// What the gate-frame functions return for invalid input (a centre that is not a valid
/// position, a radius or frame out of range): no hit, depth 0, NaN elsewhere.
TRACK_GEN_HD inline gate_frame_hit invalid_gate_frame_hit() {
  const float3 nan3 = f3(NAN, NAN, NAN);
  return gate_frame_hit{contact_flags::invalid, 0.0f, NAN, nan3, nan3, -1, -1};
}

/// The device-side range of a radius or frame half size: finite, in (0, 1e6] m.
TRACK_GEN_HD inline bool is_frame_size(float v) { return v > 0.0f && v <= static_cast<float>(max_length); }
}  // namespace detail

/// Whether the gate-frame functions accept `frame` (device side): both half sizes finite in
/// (0, 1e6] m. (check_gate_frame, on the host, holds them to [1e-4, 1e6].)
TRACK_GEN_HD inline bool is_valid_gate_frame(const gate_frame& frame) {
  return detail::is_frame_size(frame.half_thickness) && detail::is_frame_size(frame.half_depth);
}

/// Throws std::invalid_argument naming the field of `frame` out of its range
/// (gate_frame.half_thickness, gate_frame.half_depth: [1e-4, 1e6] m, param_ranges.hpp). Host only.
inline void check_gate_frame(const gate_frame& frame) {
  detail::check_range(detail::param::gate_frame_half_thickness, frame.half_thickness);
  detail::check_range(detail::param::gate_frame_half_depth, frame.half_depth);
}

/// Throws std::invalid_argument unless `radius` lies in (0, 1e6] m (gate_frame.radius,
/// param_ranges.hpp). Host only.
inline void check_gate_frame_radius(float radius) { detail::check_range(detail::param::gate_frame_radius, radius); }

/// The sphere of `radius` [m] around `centre` [m, track frame] against the frame of gate `g`
/// whose opening is 2 g.half_width wide and 2 `half_height` high (the course's
/// gate_half_height), with members of `frame`'s half sizes (file comment: the members, the
/// signed distance, the depth). flags = contact_flags::hit when the distance is <= radius; gate
/// -1. A centre that is not a valid position (NaN, Inf, a coordinate beyond +-1e7 m:
/// detail::is_position), a radius or frame half size not in (0, 1e6] m, or a gate whose
/// half_width or `half_height` is not positive finite gives invalid_gate_frame_hit(): flags =
/// contact_flags::invalid, no hit, depth 0, NaN distance, point and normal, member -1. O(1):
/// four box tests.
TRACK_GEN_HD inline gate_frame_hit collide_gate_frame(const gate& g, float half_height, const gate_frame& frame,
                                                      float3 centre, float radius) {
  using namespace detail;
  if (!(is_position(centre) && is_frame_size(radius) && is_valid_gate_frame(frame) && is_frame_size(g.half_width) &&
        is_frame_size(half_height)))
    return invalid_gate_frame_hit();
  const gate_axes_t a = gate_axes(g.normal);
  const float3 r = centre - g.centre;
  const float x = dot(r, a.forward), y = dot(r, a.left), z = dot(r, a.up);  // gate coordinates
  const float t = frame.half_thickness, d = frame.half_depth, w = g.half_width, h = half_height;
  const float outer_y = w + 2.0f * t, outer_z = h + 2.0f * t;
  // The members (gate_member order): centres (0, cy, cz), half extents (d, ey, ez).
  const float cy[4] = {w + t, -(w + t), 0.0f, 0.0f};
  const float cz[4] = {0.0f, 0.0f, h + t, -(h + t)};
  const float ey[4] = {t, t, w, w};
  const float ez[4] = {outer_z, outer_z, t, t};
  // Per member: the gap from p to the box along each local axis (Ericson §5.1.3: p minus its
  // clamp to the box), 0 where p lies within the box's extent. Kept: the nearest box p lies
  // outside of (squared distances compared; the winner's distance is computed scaled below, so
  // that gaps of 1e-20 m do not underflow), and the first box that holds p.
  const float gx = x - clamp_f(x, -d, d);
  float best2 = INFINITY, gy = 0.0f, gz = 0.0f;
  int outside = -1, inside = -1;
  for (int m = 0; m < 4; ++m) {
    const float ly = y - cy[m], lz = z - cz[m];
    const float my = ly - clamp_f(ly, -ey[m], ey[m]), mz = lz - clamp_f(lz, -ez[m], ez[m]);
    if (gx == 0.0f && my == 0.0f && mz == 0.0f) {
      if (inside < 0) inside = m;
      continue;
    }
    const float g2 = gx * gx + my * my + mz * mz;
    if (outside < 0 || g2 < best2) {
      best2 = g2;
      gy = my;
      gz = mz;
      outside = m;
    }
  }
  float s, nx, ny, nz;  // signed distance, and the normal in gate coordinates
  int member;
  if (inside < 0) {
    member = outside;
    const float m = max_f(std::fabs(gx), max_f(std::fabs(gy), std::fabs(gz)));  // > 0: p is outside
    const float ux = gx / m, uy = gy / m, uz = gz / m;
    const float len = std::sqrt(ux * ux + uy * uy + uz * uz);  // in [1, sqrt 3]
    s = m * len;
    nx = ux / len;
    ny = uy / len;
    nz = uz / len;
  } else {
    // Inside the frame: the nearest face a sphere can leave by (file comment).
    member = inside;
    const float sx = x >= 0.0f ? 1.0f : -1.0f, sy = y >= 0.0f ? 1.0f : -1.0f, sz = z >= 0.0f ? 1.0f : -1.0f;
    const float oy = std::fabs(y) - w, oz = std::fabs(z) - h;  // beyond the opening's sides (one is >= 0)
    // The distance to the opening (the infinite prism |y| < w, |z| < h) and the way into it.
    float hole, hy, hz;
    if (oy > 0.0f && oz > 0.0f) {  // beside a corner of the opening: toward its edge
      const float m = max_f(oy, oz);
      const float len = std::sqrt((oy / m) * (oy / m) + (oz / m) * (oz / m));
      hole = m * len;
      hy = -sy * (oy / m) / len;
      hz = -sz * (oz / m) / len;
    } else if (oy >= oz) {
      hole = oy;
      hy = -sy;
      hz = 0.0f;
    } else {
      hole = oz;
      hy = 0.0f;
      hz = -sz;
    }
    // The least of the four ways out, the first on ties.
    const float to_front = d - std::fabs(x), to_side = outer_y - std::fabs(y), to_top = outer_z - std::fabs(z);
    int way = 0;
    float least = to_front;
    if (to_side < least) {
      least = to_side;
      way = 1;
    }
    if (to_top < least) {
      least = to_top;
      way = 2;
    }
    if (hole < least) {
      least = hole;
      way = 3;
    }
    s = -least;
    nx = way == 0 ? sx : 0.0f;
    ny = way == 1 ? sy : (way == 3 ? hy : 0.0f);
    nz = way == 2 ? sz : (way == 3 ? hz : 0.0f);
  }
  gate_frame_hit out;
  out.distance = s;
  out.depth = s <= radius ? radius - s : 0.0f;
  out.flags = s <= radius ? contact_flags::hit : 0u;
  out.normal = a.forward * nx + a.left * ny + a.up * nz;
  out.point = centre - out.normal * s;
  out.member = member;
  out.gate = -1;
  return out;
}

/// The sphere of `radius` [m] around `centre` [m, env e's track frame] against the gate frames
/// of env e near its current target (`scope`, gate_scope): by default the next gate
/// (progress next_gate) and the gate before it, the one passed last (after a reset: gate 0, the
/// start gate, where the agent starts), so a drone clipping a gate just after passing through it
/// counts as well as one hitting the gate ahead; `gate_scope::all` tests every gate of the env.
/// Returns the hit of the least signed distance among the gates tested (the deepest hit; with no
/// hit, the nearest frame), its index in `gate`; the next gate first on ties, then in index
/// order. Gate half-height: the tracker's gate_half_height(). Read the progress after the step
/// that moved the agent (it is not written here). Invalid input as collide_gate_frame. O(1)
/// (adjacent) or O(G) (all).
TRACK_GEN_HD inline gate_frame_hit collide_gate_frames(const progress_tracker_ref& view, int e, float3 centre,
                                                       float radius, const gate_frame& frame,
                                                       gate_scope scope = gate_scope::adjacent) {
  using namespace detail;
  const track_ref tr = view.track(e);
  const int num_gates = tr.num_gates();
  const float h = view.gate_half_height();
  if (num_gates < 1) return invalid_gate_frame_hit();
  const int next = wrap(view.arrays().next_gate[e], num_gates);
  gate_frame_hit best = collide_gate_frame(tr.gate(next), h, frame, centre, radius);
  if ((best.flags & contact_flags::invalid) != 0u) return best;
  best.gate = next;
  const int count = scope == gate_scope::all ? num_gates : (num_gates > 1 ? 2 : 1);
  for (int i = 1; i < count; ++i) {
    // adjacent: the gate before the next one; all: every other gate in index order.
    const int g = scope == gate_scope::all ? (i <= next ? i - 1 : i) : wrap(next - 1, num_gates);
    gate_frame_hit hit = collide_gate_frame(tr.gate(g), h, frame, centre, radius);
    if (hit.distance < best.distance) {
      best = hit;
      best.gate = g;
    }
  }
  return best;
}

/// collide_gate_frames over a course's view (course_ref::tracker()).
TRACK_GEN_HD inline gate_frame_hit collide_gate_frames(const course_ref& view, int e, float3 centre, float radius,
                                                       const gate_frame& frame,
                                                       gate_scope scope = gate_scope::adjacent) {
  return collide_gate_frames(view.tracker(), e, centre, radius, frame, scope);
}

}  // namespace track_gen

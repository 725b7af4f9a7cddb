#pragma once
/// @file
/// collision.hpp against independent references:
/// - collide_box on a stadium (straights of 60 m, semicircles of radius 6 m, built through the
///   user-track path) with asymmetric half-widths (env 0: 1.2 m left, 1.8 m right) and widths that
///   vary along the track (env 1), boxes at 64 yaws and lateral offsets straddling both borders:
///   the corner-wise signed lateral offset of the exact stadium (its closed-form nearest point, in
///   double) gives the clearance, the out-of-bounds flag (exact away from a tolerance band), the
///   critical corner and side, the border point and the inward normal; the border point lies on
///   the stored border polyline; warm, cold and teleported searches agree; on env 0 (parallel
///   borders) the gap between the corner-wise clearance and the box outline's, sampled densely,
///   stays within the documented bound e^2 / (8 rho) and is really there at the inner curb;
/// - yaw_of and footprint against z-y-x Euler angles built into quaternions in double;
/// - collide_disc against the box outline sampled densely (inside test by edge half-planes);
///   collide_discs over the cones of border_cones with NaN padding, against the same brute force;
/// - invalid boxes: the device functions set contact_flags::invalid and nothing else, check_box
///   names the field and its range.
/// Every device function runs on the backend (map_on_backend: a host loop, or a CUDA kernel).
/// Templated over the backend policy; applied in collision_test.cpp (host) and .cu (CUDA).

#include "progress_harness.hpp"

#include <track_gen/collision.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace progress_test {

// ---------------------------------------------------------------------------------------------
// Inputs, and the functors that run the functions under test on the backend.

inline tg::box make_box(float3 centre, double yaw, double hx, double hy) {
  tg::box b;
  b.centre = centre;
  b.orientation = euler_quaternion(yaw);
  b.half_extents = f2d(hx, hy);
  return b;
}

/// The corners of a box of yaw `yaw` in double (x, y), in box_footprint's order.
struct corners_ref {
  double x[4], y[4];
};
inline corners_ref corners_of(double cx, double cy, double yaw, double hx, double hy) {
  const double c = std::cos(yaw), s = std::sin(yaw);
  const double sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
  corners_ref r;
  for (int i = 0; i < 4; ++i) {
    r.x[i] = cx + c * sx[i] * hx - s * sy[i] * hy;
    r.y[i] = cy + s * sx[i] * hx + c * sy[i] * hy;
  }
  return r;
}

/// Every track array of a snapshot (edited by the test) in buffers of the rig's backend, and
/// the `track_arrays` over them: the functors below build track_refs of it in the kernel.
template <class Policy>
class track_copy {
 public:
  template <class T>
  using buffer = typename rig<Policy>::template buffer<T>;

  track_copy(rig<Policy>& r, const tg::track_snapshot& t) : num_samples(t.num_samples), max_gates(t.max_gates) {
#define TRACK_GEN_COPY(name, type, ext, doc)                \
  name##_ = std::make_unique<buffer<type>>(t.name.size()); \
  name##_->upload(t.name, r.stream());                     \
  arrays.name = name##_->data();
    TRACK_GEN_TRACK_FIELDS(TRACK_GEN_COPY)
#undef TRACK_GEN_COPY
  }

  tg::track_arrays arrays;
  int num_samples, max_gates;

 private:
#define TRACK_GEN_MEMBER(name, type, ext, doc) std::unique_ptr<buffer<type>> name##_;
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_MEMBER)
#undef TRACK_GEN_MEMBER
};

struct box_query {
  int env;
  tg::box b;
  int hint, window;
  float trust_margin = 0.0f;
};
struct collide_box_fn {
  tg::track_arrays arrays;
  int num_samples, max_gates;
  TRACK_GEN_HD tg::box_contact operator()(const tg::course_ref&, const box_query& q) const {
    return tg::collide_box(tg::track_ref(arrays, q.env, num_samples, max_gates), q.b, q.hint, q.window, q.trust_margin);
  }
};

struct disc_query {
  tg::box b;
  float3 centre;
  float radius;
};
struct collide_disc_fn {
  TRACK_GEN_HD tg::disc_hit operator()(const tg::course_ref&, const disc_query& q) const {
    return tg::collide_disc(q.b, q.centre, q.radius);
  }
};
struct collide_discs_fn {
  const float3* centres;
  int count;
  float radius;
  TRACK_GEN_HD tg::disc_hit operator()(const tg::course_ref&, const tg::box& b) const {
    return tg::collide_discs(b, centres, count, radius);
  }
};

/// yaw_of, footprint and is_valid_box of one box, as computed on the backend.
struct footprint_result {
  float yaw;
  tg::box_footprint f;
  int valid;
};
struct footprint_fn {
  TRACK_GEN_HD footprint_result operator()(const tg::course_ref&, const tg::box& b) const {
    return {tg::yaw_of(b.orientation), tg::footprint(b), tg::is_valid_box(b) ? 1 : 0};
  }
};

// ---------------------------------------------------------------------------------------------
// The stadium and its band, in closed form.

/// The stadium of these tests and the half-widths of its two envs as functions of the fraction
/// u = s / L of the lap: env 0 constant and asymmetric (parallel borders), env 1 varying.
struct stadium_band {
  stadium st{30.0, 6.0};

  double left(int e, double s) const {
    const double u = wrap_arc(s, st.length()) / st.length();
    return e == 0 ? 1.2 : 1.5 + 0.4 * std::sin(4.0 * pi * u);
  }
  double right(int e, double s) const {
    const double u = wrap_arc(s, st.length()) / st.length();
    return e == 0 ? 1.8 : 1.5 + 0.3 * std::cos(6.0 * pi * u);
  }
  /// Largest |d half_width / ds| of env e.
  double slope(int e) const { return e == 0 ? 0.0 : std::max(0.4 * 4.0, 0.3 * 6.0) * pi / st.length(); }

  /// Signed distance to the band of the point (x, y) (the definition of collision.hpp with the
  /// exact stadium): d = min(left - n, n + right) at its exact nearest centreline point; also
  /// that point's arc and lateral offset, and which side is nearer.
  struct signed_distance {
    double d, arc, lateral;
    bool left_side;
  };
  signed_distance at(int e, double x, double y) const {
    const curve_point c = st.nearest(x, y);
    const double to_left = left(e, c.arc) - c.lateral, to_right = c.lateral + right(e, c.arc);
    return {std::min(to_left, to_right), c.arc, c.lateral, to_left <= to_right};
  }
  /// The unit left normal of the centreline at arc s.
  void left_normal(double s, double& nx, double& ny) const {
    double x, y, tx, ty;
    st.centre(s, x, y, tx, ty);
    nx = -ty;
    ny = tx;
  }
};

/// The edited snapshot: both envs' half-widths set from `band` at the samples' fractions k / N
/// of the lap, and the borders rebuilt from them as the generator builds them (float32).
inline void set_band(tg::track_snapshot& t, const stadium_band& band) {
  for (int e = 0; e < t.num_envs; ++e) {
    for (int k = 0; k < t.num_samples; ++k) {
      const std::size_t i = t.sample_index(e, k);
      const double s = band.st.length() * k / t.num_samples;
      const float wl = static_cast<float>(band.left(e, s)), wr = static_cast<float>(band.right(e, s));
      t.half_widths[i] = f2d(wl, wr);
      const float3 p = t.position[i], nrm = t.normal[i];
      t.border_left[i] = v3(p.x + nrm.x * wl, p.y + nrm.y * wl, p.z + nrm.z * wl);
      t.border_right[i] = v3(p.x - nrm.x * wr, p.y - nrm.y * wr, p.z - nrm.z * wr);
    }
  }
}

/// Distance in double from (x, y) to the closed polyline of `pts[first .. first + n)` (xy).
inline double polyline_distance(const std::vector<float3>& pts, std::size_t first, int n, double x, double y) {
  double best = 1e300;
  for (int k = 0; k < n; ++k) {
    const float3 a = pts[first + static_cast<std::size_t>(k)], b = pts[first + static_cast<std::size_t>((k + 1) % n)];
    const double dx = double(b.x) - a.x, dy = double(b.y) - a.y, len2 = dx * dx + dy * dy;
    const double u = len2 > 0 ? std::clamp(((x - a.x) * dx + (y - a.y) * dy) / len2, 0.0, 1.0) : 0.0;
    best = std::min(best, std::hypot(x - (a.x + u * dx), y - (a.y + u * dy)));
  }
  return best;
}

/// A rig with the stadium in two envs (1024 samples, 1.5 m half-width at generation), its
/// snapshot with the band of `stadium_band`, and that snapshot on the backend.
template <class Policy>
struct stadium_rig {
  stadium_band band;
  rig<Policy> r;
  tg::track_snapshot t;
  std::unique_ptr<track_copy<Policy>> copy;

  static tg::track_params params() {
    tg::track_params p = user_track_params(2);
    p.num_samples = 1024;
    p.half_width = 1.5f;
    return p;
  }
  stadium_rig() : r(params(), 10.0f, centreline({band.st.polyline(4000)})), t(r.tracks()) {
    require_valid_user_tracks(t);
    set_band(t, band);
    copy = std::make_unique<track_copy<Policy>>(r, t);
  }
  collide_box_fn collide() const { return {copy->arrays, t.num_samples, t.max_gates}; }
};

// ---------------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE_DEFINE("collide_box on a stadium with asymmetric and varying half-widths: closed forms at 64 yaws",
                          Policy, collision_stadium) {
  stadium_rig<Policy> sr;
  const stadium_band& band = sr.band;
  const tg::track_snapshot& t = sr.t;
  const int n = t.num_samples;
  const double length = band.st.length(), r = band.st.r, ds = length / n;
  const int window = 32;  // > the walk from the centre's foot to a corner's (half diagonal 2.3 m / ds, x 1.5 on the inner side)
  // The fourth search trusts the local minimum up to half the validation's clearance margin
  // beyond the half-width (what course::step passes on valid tracks).
  const float trust = 0.5f * sr.params().validate.clearance_margin;

  // Boxes: centres at arc lengths spread over straights, turns and junctions, lateral offsets
  // straddling both borders (relative to the local half-widths), a normal and a long box, 64 yaws;
  // half the centres 0.15 m above the road (heights play no part in the contact; the trust
  // radius bounds 3D distances). Each queried warm (a hint within 2 segments, a window), cold
  // (no window) and teleported (a hint half a lap away).
  const int spots = scaled(16, 6), yaws = scaled(64, 8);  // 6 spots: two of them on the turns
  lcg rng{2024u};
  struct probe {
    int e;
    double x, y, z, yaw, hx, hy;
  };
  std::vector<probe> probes;
  std::vector<box_query> queries;
  for (int e = 0; e < 2; ++e) {
    for (int j = 0; j < spots; ++j) {
      const double s = (j + 0.37) * length / spots;
      const double wl = band.left(e, s), wr = band.right(e, s);
      const double offsets[] = {-wr - 0.8, -wr - 0.2, -wr + 0.3, -0.5, 0.0, 0.5, wl - 0.3, wl + 0.2, wl + 0.8};
      for (const double lateral : offsets) {
        for (int i = 0; i < yaws; ++i) {
          const double yaw = 2.0 * pi * i / yaws;
          const bool long_box = (i + j) % 2 == 1;
          const double hx = long_box ? 2.2 : 1.0, hy = long_box ? 0.5 : 0.45;
          const float3 c = band.st.at(s, lateral, j % 2 == 1 ? 0.15 : 0.0);
          const tg::box b = make_box(c, yaw, hx, hy);
          const int k = static_cast<int>(std::floor(wrap_arc(s, length) / ds));
          const int near = ((k + static_cast<int>(rng.next() * 5.0) - 2) % n + n) % n;
          probes.push_back({e, double(c.x), double(c.y), double(c.z), yaw, hx, hy});
          queries.push_back({e, b, near, window});
          queries.push_back({e, b, 0, 0});
          queries.push_back({e, b, (k + n / 2) % n, window});
          queries.push_back({e, b, near, window, trust});
        }
      }
    }
  }
  const std::vector<tg::box_contact> got = map_on_backend(sr.r, sr.collide(), queries);

  double worst_clearance = 0.0, worst_gap = 0.0;
  int oob_boxes = 0, inside_boxes = 0, trusted_saves = 0;
  for (std::size_t u = 0; u < probes.size(); ++u) {
    const probe& p = probes[u];
    const int e = p.e;
    const corners_ref cr = corners_of(p.x, p.y, p.yaw, p.hx, p.hy);
    stadium_band::signed_distance d[4];
    double d_min = 1e300, n_max = 0.0;
    for (int i = 0; i < 4; ++i) {
      d[i] = band.at(e, cr.x[i], cr.y[i]);
      d_min = std::min(d_min, d[i].d);
      n_max = std::max(n_max, std::fabs(d[i].lateral));
    }
    // Tolerance of the corner-wise reference: the polygon's sagitta and the interpolated normal's
    // angle (ds / 2R) at offsets up to n_max; where the width varies, its slope times the foot's arc
    // error on a polygon (arc_tolerance).
    const double tol = sagitta(ds, r) + 0.5 * n_max * (ds / r) * (ds / r) + 2e-4 +
                       band.slope(e) * arc_tolerance(length, n, r, n_max);
    const tg::box_contact& c = got[4 * u];
    INFO("env " << e << " box " << u << " at (" << p.x << ", " << p.y << ") yaw " << p.yaw << " half extents ("
                << p.hx << ", " << p.hy << "): clearance " << c.clearance << " (reference " << d_min << ") flags "
                << hex(c.flags) << " corner " << c.corner << " border " << static_cast<int>(c.border) << " hint "
                << c.hint);
    CHECK((c.flags & tg::contact_flags::invalid) == 0u);
    CHECK(std::fabs(c.clearance - d_min) < tol);
    worst_clearance = std::max(worst_clearance, std::fabs(c.clearance - d_min));
    const bool oob = (c.flags & tg::contact_flags::out_of_bounds) != 0u;
    CHECK(oob == (c.clearance < 0.0f));
    if (std::fabs(d_min) > tol) CHECK(oob == (d_min < 0.0));
    oob_boxes += d_min < -tol ? 1 : 0;
    inside_boxes += d_min > tol ? 1 : 0;
    // The critical corner and side reach the least distance (ties: either).
    REQUIRE(c.corner >= 0);
    REQUIRE(c.corner < 4);
    const stadium_band::signed_distance& dc = d[c.corner];
    const bool left_side = c.border == tg::border_side::left;
    const double d_side = left_side ? band.left(e, dc.arc) - dc.lateral : dc.lateral + band.right(e, dc.arc);
    CHECK(d_side < d_min + 2.0 * tol);
    // The border point: on the stored border polyline, at the exact border point of the corner's
    // exact foot (within the foot's arc error on the polygon, scaled to the border's radius).
    const std::size_t first = t.sample_index(e, 0);
    CHECK(polyline_distance(left_side ? t.border_left : t.border_right, first, n, c.nearest.x, c.nearest.y) < 1e-4);
    const float3 b_ref = band.st.at(dc.arc, left_side ? band.left(e, dc.arc) : -band.right(e, dc.arc));
    const double arc_tol = arc_tolerance(length, n, r, std::fabs(dc.lateral)) * (1.0 + (1.0 + n_max) / r);
    CHECK(dist3(c.nearest, b_ref.x, b_ref.y, 0.0) < arc_tol + tol);
    // The inward normal: unit, horizontal, along minus the left normal (left border) or plus it.
    double nx, ny;
    band.left_normal(dc.arc, nx, ny);
    const double sign = left_side ? -1.0 : 1.0;
    CHECK(std::fabs(std::hypot(c.normal.x, c.normal.y) - 1.0) < 1e-5);
    CHECK(c.normal.z == 0.0f);
    CHECK(std::fabs(std::atan2(c.normal.x * sign * ny - c.normal.y * sign * nx, c.normal.x * sign * nx + c.normal.y * sign * ny)) <
          0.5 * ds / r + arc_tol / r);
    // The distance from the critical corner to the border point is |clearance|, but for the part
    // of the corner's offset across the interpolated normal (feet on a vertex: up to half a turn
    // between segments).
    const double to_border = std::hypot(cr.x[c.corner] - c.nearest.x, cr.y[c.corner] - c.nearest.y);
    CHECK(to_border >= std::fabs(c.clearance) - tol);
    CHECK(to_border < std::hypot(std::fabs(c.clearance), std::fabs(dc.lateral) * ds / r) + tol);
    // The hint: the centre's foot segment (a brute-force nearest segment, or one of its neighbours).
    const brute_result bc = brute_nearest(t.position, first, n, v3(p.x, p.y, 0.0));
    CHECK((c.hint == bc.segment || (c.hint + 1) % n == bc.segment || (bc.segment + 1) % n == c.hint));
    // The three searches find the same contact; warm on the road is never lost, teleported always.
    for (int variant = 1; variant < 4; ++variant) {
      const tg::box_contact& o = got[4 * u + static_cast<std::size_t>(variant)];
      CAPTURE(variant);
      CHECK(std::fabs(o.clearance - c.clearance) < 1e-5);
      CHECK((o.flags & tg::contact_flags::out_of_bounds) == (c.flags & tg::contact_flags::out_of_bounds));
      CHECK(o.hint == c.hint);
    }
    CHECK((got[4 * u + 1].flags & tg::contact_flags::lost) == 0u);  // no window: nothing to lose
    CHECK((got[4 * u + 2].flags & tg::contact_flags::lost) != 0u);
    // (A corner's windowed search gives up farther than both the narrower half-width and the
    // track's trust radius from the centreline.)
    const double trust_radius = t.trust_radius[static_cast<std::size_t>(e)];
    bool on_road = true, far_off = false;
    for (int i = 0; i < 4; ++i) {
      const double wl = band.left(e, d[i].arc), wr = band.right(e, d[i].arc), off = std::fabs(d[i].lateral);
      on_road = on_road && off < std::min(wl, wr) - 0.01;
      // (The trust radius bounds the 3D distance to the centreline: the height counts there.)
      far_off = far_off || (off > std::max(wl, wr) + 0.01 && std::hypot(off, p.z) > trust_radius + 0.01);
    }
    if (on_road) CHECK((c.flags & tg::contact_flags::lost) == 0u);
    if (far_off) CHECK((c.flags & tg::contact_flags::lost) != 0u);
    // With the trust margin: no O(N) search while every corner is within the narrower
    // half-width plus the margin or within the trust radius, one when a corner is beyond both the
    // wider one plus the margin and the trust radius (up to the widths' change over a segment:
    // the search compares with a sample's width; and the polygon's sagitta).
    const double width_tol = 0.01 + band.slope(e) * ds;
    bool within_trust = true, beyond_trust = false;
    for (int i = 0; i < 4; ++i) {
      const double wl = band.left(e, d[i].arc), wr = band.right(e, d[i].arc), off = std::fabs(d[i].lateral);
      within_trust = within_trust && (off < std::min(wl, wr) + trust - width_tol || std::hypot(off, p.z) < trust_radius - 0.01);
      beyond_trust = beyond_trust || (off > std::max(wl, wr) + trust + width_tol && std::hypot(off, p.z) > trust_radius + 0.01);
    }
    const tg::box_contact& trusted = got[4 * u + 3];
    if (within_trust) CHECK((trusted.flags & tg::contact_flags::lost) == 0u);
    if (beyond_trust) CHECK((trusted.flags & tg::contact_flags::lost) != 0u);
    trusted_saves += (within_trust && !on_road) ? 1 : 0;

    // Env 0 (constant widths, borders parallel to the centreline): d of a point is its Euclidean
    // signed distance to the exact borders, so d's least value over the box outline (sampled
    // every ~1 cm) is the box's own. The corners see it up to the documented dip of an edge of
    // length e toward the inner border: e^2 / (8 rho), rho the least distance of the outline from
    // the turn's centre (r - the largest offset).
    if (e == 0) {
      double outline = d_min, lateral_max = -1e300;
      for (int i = 0; i < 4; ++i) {
        const int i1 = (i + 1) % 4;
        const double edge = std::hypot(cr.x[i1] - cr.x[i], cr.y[i1] - cr.y[i]);
        const int m = static_cast<int>(edge / 0.01) + 1;
        for (int q = 0; q <= m; ++q) {
          const double f = double(q) / m;
          const stadium_band::signed_distance dq =
              band.at(e, cr.x[i] + f * (cr.x[i1] - cr.x[i]), cr.y[i] + f * (cr.y[i1] - cr.y[i]));
          outline = std::min(outline, dq.d);
          lateral_max = std::max(lateral_max, dq.lateral);
        }
      }
      const double e_max = 2.0 * std::max(p.hx, p.hy), rho = r - lateral_max;
      CHECK(c.clearance > outline - tol);
      CHECK(c.clearance < outline + e_max * e_max / (8.0 * rho) + tol);
      worst_gap = std::max(worst_gap, double(c.clearance) - outline);
    }
  }
  MESSAGE("worst clearance error " << worst_clearance << " m; largest gap corners - outline " << worst_gap << " m; "
                                   << oob_boxes << " boxes out, " << inside_boxes << " in");
  CHECK(oob_boxes > static_cast<int>(probes.size()) / 10);
  CHECK(inside_boxes > static_cast<int>(probes.size()) / 20);
  MESSAGE(trusted_saves << " boxes with a corner off the road but within the trust margin (no O(N) search with it)");
  // The corners miss an edge's dip at the inner curb: a 4.4 m box along the 4.8 m curb, ~0.5 m.
  if (!small_scale()) CHECK(worst_gap > 0.1);
}

TEST_CASE_TEMPLATE_DEFINE("yaw_of and footprint: z-y-x Euler angles in double, any norm, both signs", Policy,
                          collision_footprint) {
  rig<Policy> r(user_track_params(1), 10.0f, centreline({circle{50.0}.polyline(400)}));
  lcg rng{31u};
  std::vector<tg::box> boxes;
  std::vector<double> yaws, pitches;
  const int count = scaled(2000, 200);
  for (int i = 0; i < count; ++i) {
    const double yaw = (rng.next() * 2.0 - 1.0) * pi, pitch = (rng.next() - 0.5) * 2.8, roll = (rng.next() - 0.5) * 6.2;
    pitches.push_back(pitch);
    const double scale = i % 3 == 0 ? 1.0 : (i % 3 == 1 ? -1.0 : 0.6 + rng.next());  // q, -q, s q
    float4 q = euler_quaternion(yaw, pitch, roll);
    q = q4(q.x * scale, q.y * scale, q.z * scale, q.w * scale);
    tg::box b;
    b.centre = v3((rng.next() - 0.5) * 100.0, (rng.next() - 0.5) * 100.0, rng.next());
    b.orientation = q;
    b.half_extents = f2d(0.2 + rng.next() * 2.0, 0.1 + rng.next());
    boxes.push_back(b);
    yaws.push_back(yaw);
  }
  // Yaw exactly pi (q = (0, 0, 1, 0) and its negative): pi, never -pi.
  for (const double w : {1.0, -1.0}) {
    boxes.push_back(make_box(v3(0, 0, 0), 0.0, 1.0, 1.0));
    boxes.back().orientation = q4(0, 0, w, 0);
    yaws.push_back(pi);
    pitches.push_back(0.0);
  }
  const std::vector<footprint_result> got = map_on_backend(r, footprint_fn{}, boxes);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const tg::box& b = boxes[i];
    const footprint_result& g = got[i];
    INFO("box " << i << " yaw " << yaws[i] << ": yaw_of " << g.yaw);
    CHECK(g.valid == 1);
    // float32 quaternions: the forward axis's projection, cos(pitch) long, is exact to ~1e-7.
    const double tol = 1e-6 / std::cos(pitches[i]);
    CHECK(std::fabs(wrap_angle(g.yaw - yaws[i])) < tol);
    CHECK(g.yaw > -static_cast<float>(pi));
    CHECK(g.yaw <= static_cast<float>(pi));
    const corners_ref cr = corners_of(b.centre.x, b.centre.y, yaws[i], b.half_extents.x, b.half_extents.y);
    double area = 0.0;
    for (int k = 0; k < 4; ++k) {
      CHECK(std::hypot(g.f.corner[k].x - cr.x[k], g.f.corner[k].y - cr.y[k]) < 1e-5 + 3.0 * tol);
      CHECK(g.f.corner[k].z == b.centre.z);
      const int k1 = (k + 1) % 4;
      area += 0.5 * (double(g.f.corner[k].x) * g.f.corner[k1].y - double(g.f.corner[k1].x) * g.f.corner[k].y);
    }
    CHECK(area == doctest::Approx(4.0 * b.half_extents.x * b.half_extents.y).epsilon(1e-3));  // counter-clockwise
    CHECK(std::fabs(g.f.forward.x - std::cos(yaws[i])) + std::fabs(g.f.forward.y - std::sin(yaws[i])) < 2.0 * tol);
    CHECK(g.f.left.x == -g.f.forward.y);
    CHECK(g.f.left.y == g.f.forward.x);
    CHECK(g.f.forward.z == 0.0f);
  }
}

TEST_CASE_TEMPLATE_DEFINE("collide_disc and collide_discs against the box outline sampled densely", Policy,
                          collision_discs) {
  stadium_rig<Policy> sr;
  lcg rng{77u};

  // Brute force in double: the nearest of ~4000 points per edge of the outline, the inside test by
  // the four edges' half-planes (counter-clockwise corners); depth = radius - signed distance.
  struct reference {
    double depth, qx, qy, spacing, face_gap;
    bool inside;
  };
  auto brute = [](const tg::box& b, double yaw, double x, double y, double radius) {
    const corners_ref cr = corners_of(b.centre.x, b.centre.y, yaw, b.half_extents.x, b.half_extents.y);
    reference ref{0, 0, 0, 0, 0, true};
    double best = 1e300, second_face = 1e300, best_face = 1e300;
    for (int i = 0; i < 4; ++i) {
      const int i1 = (i + 1) % 4;
      const double ex = cr.x[i1] - cr.x[i], ey = cr.y[i1] - cr.y[i], edge = std::hypot(ex, ey);
      ref.inside = ref.inside && ex * (y - cr.y[i]) - ey * (x - cr.x[i]) >= 0.0;
      const int m = 4000;
      ref.spacing = std::max(ref.spacing, edge / m);
      double face = 1e300;
      for (int q = 0; q <= m; ++q) {
        const double px = cr.x[i] + ex * q / m, py = cr.y[i] + ey * q / m, dist = std::hypot(x - px, y - py);
        face = std::min(face, dist);
        if (dist < best) best = dist, ref.qx = px, ref.qy = py;
      }
      if (face < best_face) {
        second_face = best_face;
        best_face = face;
      } else {
        second_face = std::min(second_face, face);
      }
    }
    ref.depth = radius - (ref.inside ? -best : best);
    ref.face_gap = second_face - best_face;
    return ref;
  };

  // Single discs around boxes of 64 yaws: centres anywhere from inside the box to a little past
  // its reach, radii 0.05-0.6 m.
  std::vector<disc_query> queries;
  std::vector<double> yaws;
  const int count = scaled(3000, 300);
  for (int i = 0; i < count; ++i) {
    const double yaw = 2.0 * pi * (i % 64) / 64.0, hx = 0.3 + rng.next() * 2.0, hy = 0.2 + rng.next() * 0.8;
    const tg::box b = make_box(v3((rng.next() - 0.5) * 50.0, (rng.next() - 0.5) * 50.0, rng.next()), yaw, hx, hy);
    const double radius = 0.05 + rng.next() * 0.55;
    const double reach_x = hx + 1.5 * radius + 0.2, reach_y = hy + 1.5 * radius + 0.2;
    const double u = (rng.next() * 2.0 - 1.0) * reach_x, v = (rng.next() * 2.0 - 1.0) * reach_y;
    const float3 centre = v3(b.centre.x + u * std::cos(yaw) - v * std::sin(yaw), b.centre.y + u * std::sin(yaw) + v * std::cos(yaw),
                             rng.next() * 3.0);
    queries.push_back({b, centre, static_cast<float>(radius)});
    yaws.push_back(yaw);
  }
  const std::vector<tg::disc_hit> got = map_on_backend(sr.r, collide_disc_fn{}, queries);
  int hits = 0, inside = 0;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const disc_query& q = queries[i];
    const tg::disc_hit& h = got[i];
    const reference ref = brute(q.b, yaws[i], q.centre.x, q.centre.y, q.radius);
    const double tol = ref.spacing + 1e-5;
    INFO("disc " << i << " depth " << h.depth << " (reference " << ref.depth << ", inside " << ref.inside << ") flags "
                 << hex(h.flags));
    CHECK(std::fabs(h.depth - ref.depth) < tol);
    if (std::fabs(ref.depth) > tol) CHECK(((h.flags & tg::contact_flags::hit) != 0u) == (ref.depth >= 0.0));
    CHECK(((h.flags & tg::contact_flags::hit) != 0u) == (h.depth >= 0.0f));
    CHECK(h.disc == 0);
    CHECK(std::fabs(std::hypot(h.normal.x, h.normal.y) - 1.0) < 1e-5);
    CHECK(h.normal.z == 0.0f);
    CHECK(h.point.z == q.b.centre.z);
    const double dist = std::hypot(q.centre.x - ref.qx, q.centre.y - ref.qy);
    if (!ref.inside || ref.face_gap > 2.0 * tol) {  // the nearest point of the outline is unique
      CHECK(std::hypot(h.point.x - ref.qx, h.point.y - ref.qy) < tol);
      if (dist > 100.0 * tol) {
        const double sign = ref.inside ? -1.0 : 1.0;  // from the box toward the disc: outward
        const double wx = sign * (q.centre.x - ref.qx) / dist, wy = sign * (q.centre.y - ref.qy) / dist;
        CHECK(std::hypot(h.normal.x - wx, h.normal.y - wy) < 3.0 * tol / dist);
      }
    }
    hits += (h.flags & tg::contact_flags::hit) != 0u ? 1 : 0;
    inside += ref.inside ? 1 : 0;
  }
  CHECK(hits > count / 4);
  CHECK(inside > count / 50);

  // The cones of env 0's left (inner) border at a 1.5 m spacing, every 7th replaced by NaN
  // padding, against boxes near that border at 64 yaws: the deepest (or nearest) valid cone.
  tg::track_snapshot& t = sr.t;
  const tg::track_ref host_track(host_arrays(t), 0, t.num_samples, t.max_gates);
  std::vector<float3> cones(400);
  const int cone_count = tg::border_cones(host_track, tg::border_side::left, 1.5f, cones.data(), 400);
  REQUIRE(cone_count <= 400);
  cones.resize(static_cast<std::size_t>(cone_count));
  for (std::size_t i = 3; i < cones.size(); i += 7) cones[i] = v3(NAN, 0.0, 0.0);
  typename rig<Policy>::template buffer<float3> cone_buffer(cones.size());
  cone_buffer.upload(cones, sr.r.stream());
  const float radius = 0.15f;
  std::vector<tg::box> boxes;
  std::vector<double> box_yaws;
  for (int i = 0; i < scaled(640, 64); ++i) {
    const double s = rng.next() * sr.band.st.length(), yaw = 2.0 * pi * (i % 64) / 64.0;
    const float3 c = sr.band.st.at(s, sr.band.left(0, s) - 0.9 + rng.next() * 1.6);
    boxes.push_back(make_box(c, yaw, 0.5 + rng.next() * 0.7, 0.3 + rng.next() * 0.3));
    box_yaws.push_back(yaw);
  }
  boxes.push_back(boxes.front());
  box_yaws.push_back(box_yaws.front());
  const std::vector<tg::disc_hit> deepest =
      map_on_backend(sr.r, collide_discs_fn{cone_buffer.data(), cone_count, radius}, boxes);
  const tg::disc_hit none = map_on_backend(sr.r, collide_discs_fn{cone_buffer.data(), 0, radius}, boxes).front();
  int cone_hits = 0;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const tg::box& b = boxes[i];
    const tg::disc_hit& h = deepest[i];
    double best = -1e300, second = -1e300;
    int best_cone = -1;
    reference best_ref{};
    for (int k = 0; k < cone_count; ++k) {
      const float3 cone = cones[static_cast<std::size_t>(k)];
      if (!std::isfinite(cone.x)) continue;
      const double reach = std::hypot(b.half_extents.x, b.half_extents.y) + 4.0;
      if (std::hypot(cone.x - b.centre.x, cone.y - b.centre.y) > reach) continue;  // never the nearest here
      const reference ref = brute(b, box_yaws[i], cone.x, cone.y, radius);
      if (ref.depth > best) {
        second = best;
        best = ref.depth, best_cone = k, best_ref = ref;
      } else {
        second = std::max(second, ref.depth);
      }
    }
    INFO("box " << i << ": disc " << h.disc << " depth " << h.depth << "; reference cone " << best_cone << " depth "
                << best);
    REQUIRE(best_cone >= 0);
    const double tol = best_ref.spacing + 1e-5;
    CHECK(std::fabs(h.depth - best) < tol);
    if (best - second > 2.0 * tol) CHECK(h.disc == best_cone);
    CHECK(h.disc % 7 != 3);  // never a NaN entry
    if (std::fabs(best) > tol) CHECK(((h.flags & tg::contact_flags::hit) != 0u) == (best >= 0.0));
    cone_hits += (h.flags & tg::contact_flags::hit) != 0u ? 1 : 0;
  }
  CHECK(cone_hits > 10);
  CHECK(static_cast<std::size_t>(cone_hits) < boxes.size());
  // No discs: nothing hit, depth -Inf, index -1.
  CHECK(none.flags == 0u);
  CHECK(none.disc == -1);
  CHECK(std::isinf(none.depth));
  CHECK(none.depth < 0.0f);
}

TEST_CASE_TEMPLATE_DEFINE("invalid boxes: the invalid bit and nothing else; check_box names the field and range",
                          Policy, collision_invalid) {
  stadium_rig<Policy> sr;
  const float inf = INFINITY, nan = NAN;
  const tg::box good = make_box(sr.band.st.at(10.0, 0.2), 0.3, 1.0, 0.5);
  struct bad_case {
    tg::box b;
    const char* field;  ///< what check_box must name
  };
  std::vector<bad_case> bad;
  auto with = [&](auto edit, const char* field) {
    tg::box b = good;
    edit(b);
    bad.push_back({b, field});
  };
  with([&](tg::box& b) { b.centre.x = nan; }, "box.centre.x");
  with([&](tg::box& b) { b.centre.y = inf; }, "box.centre.y");
  with([&](tg::box& b) { b.centre.z = -inf; }, "box.centre.z");
  with([&](tg::box& b) { b.centre.x = 2e7f; }, "box.centre.x");
  with([&](tg::box& b) { b.orientation.x = nan; }, "box.orientation.x");
  with([&](tg::box& b) { b.orientation.w = inf; }, "box.orientation.w");
  with([&](tg::box& b) { b.orientation = q4(0, 0, 0, 0); }, "box.orientation (its norm)");
  with([&](tg::box& b) { b.orientation = q4(0, 0, 0.1, 0.1); }, "box.orientation (its norm)");
  with([&](tg::box& b) { b.half_extents.x = 0.0f; }, "box.half_extents.x");
  with([&](tg::box& b) { b.half_extents.y = -0.5f; }, "box.half_extents.y");
  with([&](tg::box& b) { b.half_extents.x = nan; }, "box.half_extents.x");
  with([&](tg::box& b) { b.half_extents.y = inf; }, "box.half_extents.y");

  std::vector<box_query> queries;
  std::vector<disc_query> discs;
  std::vector<tg::box> boxes;
  for (const bad_case& c : bad) {
    queries.push_back({0, c.b, 17, 8});
    discs.push_back({c.b, sr.band.st.at(10.0, 0.0), 0.3f});
    boxes.push_back(c.b);
  }
  // A valid box with an invalid disc: a NaN or far centre, a negative, NaN or infinite radius.
  discs.push_back({good, v3(NAN, 0.0, 0.0), 0.3f});
  discs.push_back({good, v3(0.0, 3e7, 0.0), 0.3f});
  discs.push_back({good, good.centre, -0.1f});
  discs.push_back({good, good.centre, nan});
  discs.push_back({good, good.centre, inf});
  queries.push_back({0, good, 17, 8});  // the valid box last: a contact, no invalid bit

  const std::vector<tg::box_contact> got = map_on_backend(sr.r, sr.collide(), queries);
  const std::vector<tg::disc_hit> hits = map_on_backend(sr.r, collide_disc_fn{}, discs);
  std::vector<float3> cone(1, good.centre);
  typename rig<Policy>::template buffer<float3> cone_buffer(1);
  cone_buffer.upload(cone, sr.r.stream());
  const std::vector<tg::disc_hit> span_hits = map_on_backend(sr.r, collide_discs_fn{cone_buffer.data(), 1, 0.3f}, boxes);
  const std::vector<footprint_result> valid = map_on_backend(sr.r, footprint_fn{}, boxes);
  for (std::size_t i = 0; i < bad.size(); ++i) {
    INFO("bad box " << i << " (" << bad[i].field << ")");
    const tg::box_contact& c = got[i];
    CHECK(c.flags == tg::contact_flags::invalid);
    CHECK(c.hint == 17);  // the caller's search state, unchanged
    CHECK(std::isnan(c.clearance));
    CHECK(std::isnan(c.nearest.x));
    CHECK(std::isnan(c.normal.x));
    CHECK(c.corner == -1);
    CHECK(c.border == tg::border_side::left);
    for (const tg::disc_hit& h : {hits[i], span_hits[i]}) {
      CHECK(h.flags == tg::contact_flags::invalid);
      CHECK(std::isnan(h.depth));
      CHECK(h.disc == -1);
    }
    CHECK(valid[i].valid == 0);
    // check_box on the host: the field and its range in the message.
    bool thrown = false;
    try {
      tg::check_box(bad[i].b);
    } catch (const std::invalid_argument& ex) {
      thrown = true;
      const std::string what = ex.what();
      INFO(what);
      CHECK(what.find(bad[i].field) != std::string::npos);
      CHECK(what.find("expected") != std::string::npos);
    }
    CHECK(thrown);
  }
  for (std::size_t i = bad.size(); i < discs.size(); ++i) {
    CHECK(hits[i].flags == tg::contact_flags::invalid);
    CHECK(hits[i].disc == -1);
  }
  const tg::box_contact& ok = got.back();
  CHECK((ok.flags & tg::contact_flags::invalid) == 0u);
  CHECK(ok.clearance > 0.0f);
  // check_box messages name the valid range; a norm within 1e-3 of 1 passes; the device is more
  // lenient (any norm in [0.5, 2]: the yaw does not depend on it).
  CHECK_NOTHROW(tg::check_box(good));
  tg::box near_unit = good;
  near_unit.orientation = q4(0, 0, 0, 1.0009);
  CHECK_NOTHROW(tg::check_box(near_unit));
  tg::box off_unit = good;
  off_unit.orientation = q4(0, 0, 0, 1.01);
  CHECK_THROWS_WITH_AS(tg::check_box(off_unit), doctest::Contains("norm within 1e-3 of 1"), std::invalid_argument);
  CHECK(tg::is_valid_box(off_unit));
  tg::box flat = good;
  flat.half_extents.x = 0.0f;
  CHECK_THROWS_WITH_AS(tg::check_box(flat), doctest::Contains("(0, 1e7]"), std::invalid_argument);
  tg::box lost = good;
  lost.centre.y = nan;
  CHECK_THROWS_WITH_AS(tg::check_box(lost), doctest::Contains("[-1e7, 1e7]"), std::invalid_argument);
}

}  // namespace progress_test

#pragma once
/// @file
/// Collision, exact backend: oriented boxes (vehicles) against the drivable band of one env's
/// track, and boxes against disc obstacles (cones, gate posts). Device functions over a
/// `track_ref` (one thread per box, in your kernel or on the host); they allocate nothing and
/// synchronise nothing. The runtime utility that owns B boxes per env and their contacts, and
/// the SDF backend, are not written yet (issue 14).
///
/// Frames and signs: everything is in the env's track frame (subtract the env's `origin` from
/// positions given in your frame when the tracks were re-centred, user_tracks.hpp), metres and
/// radians, z up, yaw about +z from +x, counter-clockwise positive. Lateral offsets are POSITIVE
/// TO THE LEFT of the direction of travel (localizer.hpp). Collision is planar: a box is its
/// footprint, the rectangle of its two half extents turned by its yaw, at the height of its
/// centre; roll and pitch are ignored (as in the seed system, which uses only the yaw about +z).
///
/// The band (the road) is defined through the centreline, not through the border polylines:
/// a point p is on the road when its lateral offset n (localize: along the interpolated left
/// normal at p's foot, the nearest point of the centreline polyline to p) lies in
/// [-half_width_right, +half_width_left], both interpolated at the foot. Its signed distance
/// to the band is d(p) = min(half_width_left - n, n + half_width_right): positive inside (the
/// distance along the normal to the nearer border), negative outside (minus the penetration).
/// collide_box evaluates d at the box's four corners. Where that differs from the Euclidean
/// distance between the box and the border polylines (border_left / border_right):
/// - along the box's edges, on the inner side of a turn: d is evaluated at the corners only. On
///   straights and against the outer border of a turn d is concave along an edge (its minimum is
///   at a corner); against the inner border d is the distance to a convex set, convex along an
///   edge, and an edge of length e can dip below the corners' d by up to e^2 / (8 rho), rho the
///   least distance of the edge from the turn's centre (about 1 / |curvature| - half_width_left).
///   A 4 m long box on an inner curb of radius 8 m: up to 0.25 m; a box can then clip the inner
///   curb with all four corners on the road (the seed system's edge-crossing case). The tests
///   check the gap against e^2 / (8 rho) with the box outline sampled densely on a stadium with
///   parallel borders, and that it is really there (~0.5 m for a 4.4 m box on a 4.8 m curb);
/// - pointwise, the sampled geometry: the border polylines join the border samples while d
///   measures along interpolated normals: on a turn of radius R sampled every ds they differ by
///   about half_width * (ds / R)^2 / 8 (0.15 mm for 1.8 m and ds / R = 0.026), and the feet of
///   points far outside a turn fall on a vertex, where n is measured along the vertex normal
///   (the tests compare d with the exact stadium's within the polygon's sagitta ds^2 / (8 R));
/// - where the half-width changes along the track, d is measured along the centreline's normal,
///   not perpendicular to the border: it exceeds the Euclidean distance by a factor of about
///   sqrt(1 + (d half_width / ds)^2) (1.0005 for a slope of 0.03; not measured by the tests,
///   which check varying widths against this definition).
/// The generator's validation keeps distant parts of the centreline at least 2 half_width +
/// clearance_margin apart (params.hpp), so the bands of two parts of the track never overlap;
/// a corner in the infield of a hairpin takes its foot on whichever part of the centreline is
/// nearer.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/detail/param_ranges.hpp>
#include <track_gen/localizer.hpp>
#include <track_gen/props.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace track_gen {

/// Bits of `box_contact::flags`, `disc_hit::flags` and `gate_frame_hit::flags` (gate_collision.hpp).
namespace contact_flags {
/// collide_box: a corner of the box is off the road (the clearance is negative).
inline constexpr std::uint32_t out_of_bounds = 1u << 0;
/// collide_box: a window was given but a search (the centre's or a corner's) fell back to the
/// O(N) scan: the hint was stale (a jump, a reset), or a corner lies farther from the
/// centreline than both the narrower half-width and the track's trust radius (see
/// track_ref::project_local).
inline constexpr std::uint32_t lost = 1u << 1;
/// The box (or the disc radius, or the disc centre of collide_disc) is not valid (is_valid_box):
/// nothing was computed, every other field holds the fixed value its function documents.
inline constexpr std::uint32_t invalid = 1u << 2;
/// collide_disc / collide_discs: the box and the disc overlap or touch (depth >= 0); the
/// gate-frame functions: the sphere overlaps or touches a frame. (The gate-frame functions set
/// `invalid` for a centre that is not a valid position, or a radius or frame out of range.)
inline constexpr std::uint32_t hit = 1u << 3;
}  // namespace contact_flags

/// An oriented box: a vehicle's collision footprint.
struct box {
  float3 centre;        ///< centre of the box [m], track frame
  /// Its orientation, body to track frame: a unit quaternion in (x, y, z, w) order (Warp's and
  /// the seed system's; Isaac Lab's root_quat_w is (w, x, y, z): reorder it). Only the yaw is
  /// used (yaw_of).
  float4 orientation;
  /// Half extents [m] along the body's forward (+x) and left (+y) axes, > 0.
  float2 half_extents;
};

/// A box's planar footprint: its corners and its horizontal unit axes.
struct box_footprint {
  /// Corners at the height of the box's centre, counter-clockwise seen from above: front-left
  /// (+x, +y half extents), rear-left, rear-right, front-right [m], track frame.
  float3 corner[4];
  float3 forward;  ///< unit, horizontal: the body's +x axis projected on the xy plane
  float3 left;     ///< unit, horizontal: forward turned by +90 degrees about +z
};

/// The contact of a box with the road band (collide_box).
struct box_contact {
  std::uint32_t flags;  ///< contact_flags: out_of_bounds, lost, invalid
  /// Signed clearance [m]: the least signed distance d of the four corners to the band (file
  /// comment): with every corner on the road, the distance from the box to the nearer border
  /// (>= 0); otherwise minus the deepest corner's penetration (< 0).
  float clearance;
  /// The border point facing the critical corner (the one that gave `clearance`): the point of
  /// the border polyline `border` at the same sample index and fraction as the corner's foot
  /// [m], track frame; on the normal line through the foot where the half-width is constant.
  /// |corner - nearest| is |clearance| (within half_width (ds / R)^2 / 8) but for the corner's
  /// offset across that normal, which a foot on a vertex allows (up to |n| ds / (2 R)).
  float3 nearest;
  /// Unit, horizontal normal at `nearest` pointing into the road: minus the centreline's
  /// interpolated left normal at the foot for the left border, plus it for the right one. Moving
  /// the critical corner by x changes its d by dot(normal, x) (to first order), so the box
  /// leaves the border along +normal.
  float3 normal;
  border_side border;  ///< which border `nearest` lies on (the nearer one to the critical corner)
  int corner;          ///< index of the critical corner in box_footprint::corner, in [0, 4)
  int hint;            ///< segment of the box centre's foot: pass it as the next call's `hint`
};

/// The contact of a box with a disc (collide_disc), or with the deepest of several (collide_discs).
struct disc_hit {
  std::uint32_t flags;  ///< contact_flags: hit (depth >= 0), invalid
  /// Penetration depth [m]: radius - s, s the planar signed distance from the disc's centre to
  /// the box (negative inside it). When hit (>= 0) the shortest planar translation that
  /// separates them; when not (< 0), minus the gap between them.
  float depth;
  /// The point of the box's outline nearest to the disc's centre (Ericson's closest point on
  /// the box when the centre is outside; on the nearest face when it is inside) [m], at the
  /// box centre's height.
  float3 point;
  /// Unit, horizontal contact normal from the box toward the disc: from `point` to the disc's
  /// centre when it is outside the box, the nearest face's outward normal when it is inside.
  /// Push the disc along +normal, or the box along -normal, by `depth` to separate them.
  float3 normal;
  int disc;  ///< the disc's index in the span (collide_discs; 0 for collide_disc), -1 when none
};

/// Yaw [rad] in (-pi, pi] of the rotation `q` = (x, y, z, w): the heading of the body's +x axis
/// projected on the xy plane, atan2(2 (w z + x y), w^2 + x^2 - y^2 - z^2): the yaw of the z-y-x
/// (yaw, pitch, roll) Euler angles, as in the quaternion-to-Euler conversions of J. Diebel,
/// "Representing Attitude: Euler Angles, Unit Quaternions, and Rotation Vectors", Stanford
/// University, 2006 (there with w first). Written without the unit norm
/// (w^2 + x^2 + y^2 + z^2 in place of 1), it is the same for q and s q, s != 0. Meaningless when
/// the body's +x axis is vertical (pitch +-90 degrees: both arguments ~0).
TRACK_GEN_HD inline float yaw_of(float4 q) {
  return detail::yaw_of(detail::f3(q.w * q.w + q.x * q.x - q.y * q.y - q.z * q.z, 2.0f * (q.w * q.z + q.x * q.y), 0.0f));
}

/// Whether collide_box and collide_disc accept `b` (the device-side check; check_box is the host
/// one): centre a valid position (finite, each coordinate within +-1e7 m: detail::is_position),
/// half extents in (0, 1e7] m, and an orientation whose squared norm lies in [0.25, 4] (finite,
/// not zero; the footprint uses the yaw only, which does not depend on the norm). NaN or Inf
/// anywhere fails.
TRACK_GEN_HD inline bool is_valid_box(const box& b) {
  constexpr float bound = static_cast<float>(detail::max_position);
  const float4 q = b.orientation;
  const float norm2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
  return detail::is_position(b.centre) & (b.half_extents.x > 0.0f) & (b.half_extents.x <= bound) &
         (b.half_extents.y > 0.0f) & (b.half_extents.y <= bound) & (norm2 >= 0.25f) & (norm2 <= 4.0f);
}

/// Throws std::invalid_argument naming the first field of `b` out of range: centre.x/y/z finite
/// and within [-1e7, 1e7] m, orientation.x/y/z/w finite with a norm within 1e-3 of 1,
/// half_extents.x/y finite in (0, 1e7] m. A box that passes is_valid_box too. Host only.
inline void check_box(const box& b) {
  constexpr double bound = detail::max_position;
  auto bad = [](const std::string& name, float v, const char* range) {
    throw std::invalid_argument("track_gen: box." + name + " = " + std::to_string(v) + ", expected " + range);
  };
  const char* position_range = "a finite value in [-1e7, 1e7] [m]";
  if (!(std::fabs(b.centre.x) <= bound)) bad("centre.x", b.centre.x, position_range);
  if (!(std::fabs(b.centre.y) <= bound)) bad("centre.y", b.centre.y, position_range);
  if (!(std::fabs(b.centre.z) <= bound)) bad("centre.z", b.centre.z, position_range);
  const float4 q = b.orientation;
  const char* quaternion_range = "a finite component of a unit quaternion (x, y, z, w)";
  if (!std::isfinite(q.x)) bad("orientation.x", q.x, quaternion_range);
  if (!std::isfinite(q.y)) bad("orientation.y", q.y, quaternion_range);
  if (!std::isfinite(q.z)) bad("orientation.z", q.z, quaternion_range);
  if (!std::isfinite(q.w)) bad("orientation.w", q.w, quaternion_range);
  const double norm = std::sqrt(double(q.x) * q.x + double(q.y) * q.y + double(q.z) * q.z + double(q.w) * q.w);
  if (!(std::fabs(norm - 1.0) <= 1e-3))
    bad("orientation (its norm)", static_cast<float>(norm), "a unit quaternion (x, y, z, w): norm within 1e-3 of 1");
  const char* extent_range = "a finite value in (0, 1e7] [m]";
  if (!(b.half_extents.x > 0.0f && b.half_extents.x <= bound)) bad("half_extents.x", b.half_extents.x, extent_range);
  if (!(b.half_extents.y > 0.0f && b.half_extents.y <= bound)) bad("half_extents.y", b.half_extents.y, extent_range);
}

/// The footprint of `b`: its forward axis is the body's +x axis rotated by the orientation and
/// projected on the xy plane, normalised (the heading yaw_of(b.orientation); +x when that axis
/// is vertical), computed from the quaternion without trigonometry. `b` must be valid
/// (is_valid_box). O(1).
TRACK_GEN_HD inline box_footprint footprint(const box& b) {
  using namespace detail;
  const float4 q = b.orientation;
  box_footprint f;
  f.forward = normalize_or(f3(q.w * q.w + q.x * q.x - q.y * q.y - q.z * q.z, 2.0f * (q.w * q.z + q.x * q.y), 0.0f),
                           f3(1.0f, 0.0f, 0.0f));
  f.left = f3(-f.forward.y, f.forward.x, 0.0f);
  const float3 x = f.forward * b.half_extents.x, y = f.left * b.half_extents.y;
  f.corner[0] = b.centre + x + y;
  f.corner[1] = b.centre - x + y;
  f.corner[2] = b.centre - x - y;
  f.corner[3] = b.centre + x - y;
  return f;
}

/// What collide_box returns for a box that is not valid: flags = contact_flags::invalid, `hint`
/// the hint given (so that storing it keeps the caller's search state), clearance, nearest and
/// normal NaN, border left, corner -1.
TRACK_GEN_HD inline box_contact invalid_box_contact(int hint) {
  using namespace detail;
  const float3 nan3 = f3(NAN, NAN, NAN);
  return box_contact{contact_flags::invalid, NAN, nan3, nan3, border_side::left, -1, hint};
}

namespace detail {
/// What collide_box does with its projections (collide_box_warp shares it): `add` takes corner
/// i's projection, i = 0, 1, 2, 3 in order, and keeps the corner of least signed distance to the
/// band (the first on ties); `contact` builds the box_contact from it. `lost` when a search,
/// the centre's or a corner's, fell back to O(N) although a window was given.
class box_corners {
 public:
  TRACK_GEN_HD box_corners(const track_ref& track, int window, const projection& centre)
      : track_(track),
        n_(track.num_samples()),
        windowed_(window > 0 && window < n_ && 2 * window + 1 < n_),  // window < n first: no overflow
        flags_(centre.full_search && windowed_ ? contact_flags::lost : 0u),
        best_segment_(centre.segment),
        best_t_(centre.t),
        centre_segment_(centre.segment) {}

  TRACK_GEN_HD void add(int i, const projection& p) {
    if (p.full_search && windowed_) flags_ |= contact_flags::lost;
    const int k = p.segment, k1 = k + 1 == n_ ? 0 : k + 1;
    const float to_left = lerp(track_.half_width_left(k), track_.half_width_left(k1), p.t) - p.lateral;
    const float to_right = p.lateral + lerp(track_.half_width_right(k), track_.half_width_right(k1), p.t);
    const float d = min_f(to_left, to_right);
    if (d < best_) {
      best_ = d;
      best_corner_ = i;
      best_segment_ = k;
      best_t_ = p.t;
      side_ = to_left <= to_right ? border_side::left : border_side::right;
    }
  }

  TRACK_GEN_HD box_contact contact() const {
    const int k = best_segment_, k1 = k + 1 == n_ ? 0 : k + 1;
    const float3 left = normalize_or(lerp(track_.normal(k), track_.normal(k1), best_t_), track_.normal(k));
    box_contact c;
    c.flags = flags_ | (best_ < 0.0f ? contact_flags::out_of_bounds : 0u);
    c.clearance = best_;
    c.nearest = lerp(border_point(track_, side_, k), border_point(track_, side_, k1), best_t_);
    c.normal = side_ == border_side::left ? left * -1.0f : left;
    c.border = side_;
    c.corner = best_corner_;
    c.hint = centre_segment_;
    return c;
  }

 private:
  const track_ref& track_;
  int n_;
  bool windowed_;
  std::uint32_t flags_;
  float best_ = INFINITY;
  int best_corner_ = 0, best_segment_;
  float best_t_;
  border_side side_ = border_side::left;
  int centre_segment_;
};
}  // namespace detail

/// The contact of box `b` with the road band of `track` (the definitions are in the file
/// comment): the box centre is localized by track_ref::project(b.centre, hint, window) (about
/// `window` segments around segment `hint`, the O(N) search when that fails or window <= 0),
/// then each corner by track_ref::project(corner, centre's segment, window) (a short walk from
/// the centre's foot: the corners lie within the half diagonal of it; the O(N) search when the
/// walk reaches the window's edge or the corner is farther from the centreline than both the
/// narrower half-width and the track's trust_radius()). Each corner's signed distance d = min(half_width_left - n, n + half_width_right)
/// at its foot; the contact reports the least of the four (the first corner on ties), its side
/// (the left border when both are equally near), the border point and inward normal at its foot,
/// and `out_of_bounds` when it is negative: a corner exactly on a border is on the road.
///
/// `b` is checked with is_valid_box; an invalid box returns invalid_box_contact(hint) (status
/// bit contact_flags::invalid, nothing else computed). O(window) for a box on the road with a
/// good hint; up to five O(N) searches when lost or off the road. `hint` is any integer (wrapped),
/// `window` as for track_ref::project. `trust_margin` [m], >= 0: the local searches are trusted
/// up to the half-width plus it from the centreline (track_ref::project_local): at most half the
/// validation's clearance_margin, and only on a track with status::valid (course::step passes
/// that), so that a car whose corners are off the road by less than it pays no O(N) search; 0
/// (the default): the half-width alone. The track's trust radius applies either way
/// (track_ref::project_local). The answer is the O(N) search's either way.
TRACK_GEN_HD inline box_contact collide_box(const track_ref& track, const box& b, int hint = 0, int window = 0,
                                            float trust_margin = 0.0f) {
  using namespace detail;
  if (!is_valid_box(b)) return invalid_box_contact(hint);
  const projection centre = track.project(b.centre, hint, window, trust_margin);
  const box_footprint f = footprint(b);
  box_corners corners(track, window, centre);
  for (int i = 0; i < 4; ++i) corners.add(i, track.project(f.corner[i], centre.segment, window, trust_margin));
  return corners.contact();
}

#if defined(__CUDACC__)
namespace detail {
/// collide_box_warp's body: `corner_samples(going, centre)` gives what the corners' searches
/// read the samples through, once the centre is projected (the track's array, or a warp window).
template <class CornerSamples>
__device__ box_contact collide_box_warp_with(const track_ref& track, const box& b, int hint, int window,
                                             float trust_margin, bool active, CornerSamples corner_samples) {
  const bool going = active && is_valid_box(b);
  const projection centre = track.project_warp(b.centre, hint, window, trust_margin, going);
  const box_footprint f = going ? footprint(b) : box_footprint{};
  box_corners corners(track, window, centre);
  const auto samples = corner_samples(going, centre);
  for (int i = 0; i < 4; ++i) {
    const projection p = track.project_warp_in(samples, f.corner[i], centre.segment, window, trust_margin, going);
    if (going) corners.add(i, p);
  }
  return going ? corners.contact() : invalid_box_contact(hint);
}
}  // namespace detail

/// collide_box by the 32 lanes of a warp together, for the user's kernels as for the library's
/// (the batch query collide_boxes, course::step's contacts): in each active lane the same
/// box_contact as collide_box(track, b, hint, window, trust_margin), bit for bit, but every
/// O(N) search (the centre's and each corner's: up to five per box, for a stale hint, a box off
/// the road or `window <= 0`) is run by the whole warp, one after another
/// (track_ref::project_warp: lane l scans segments l, l + 32, ... of the owner's track,
/// coalesced, and a shuffle reduction keeps the first minimum). The centre first, then corner
/// 0, 1, 2, 3, each after all lanes' previous one: a warp runs as many O(N) searches as its
/// lanes need, each at about N / 32 segments per lane instead of N in one lane.
///
/// Device code only. Every lane of the warp must call it, converged (a block size that is a
/// multiple of 32, no early return before it); the lanes may follow different tracks. A lane
/// without a box passes `active = false`: its `b` and `track` are not read (a
/// default-constructed track_ref and box{} will do; only `track`'s scalars are copied), and it
/// gets invalid_box_contact(hint). Not checked: `__activemask()` may see a warp that has not
/// reconverged yet, so it cannot tell a missing lane from a late one.
__device__ inline box_contact collide_box_warp(const track_ref& track, const box& b, int hint, int window,
                                               float trust_margin, bool active) {
  const float3* position = track.arrays().position;
  return detail::collide_box_warp_with(track, b, hint, window, trust_margin, active,
                                       [position](bool, const projection&) { return position; });
}

/// The shared memory of one warp's collide_box_warp with storage (CUB's TempStorage protocol:
/// declare one per warp `__shared__`, pass the warp's own). Each lane keeps there the
/// `samples` centreline samples from 3 before its box centre's foot, which its four corners'
/// local searches and projections read instead of global memory (samples outside them are
/// read from the track's array): one gathered read of the track where each corner's walk made
/// a dozen. 3 KiB.
struct collide_box_warp_storage {
  /// Samples foot - 3 .. foot + 4: the distances to segments foot - 3 .. foot + 3, and the
  /// frames of segments foot - 2 .. foot + 2 (a frame reads one sample either side).
  static constexpr int samples = 8;
  float x[samples][32], y[samples][32], z[samples][32];  ///< [sample][lane]: a lane's reads hit its own bank
};

namespace detail {
/// Sample k of a lane's track: from its collide_box_warp_storage when k is among the `samples`
/// from `first` on (mod N), else from the track's array. Device code.
struct warp_window_positions {
  const float3* track;
  const collide_box_warp_storage* storage;
  int num_samples, first, lane;
  __device__ float3 operator[](int k) const {
    int j = k - first;
    if (j < 0) j += num_samples;
    if (j < collide_box_warp_storage::samples) return f3(storage->x[j][lane], storage->y[j][lane], storage->z[j][lane]);
    return track[k];
  }
};
}  // namespace detail

/// collide_box_warp with `storage` (this warp's, see collide_box_warp_storage): the same
/// box_contact, bit for bit, with the corners' searches reading the samples around the centre's
/// foot from shared memory. Faster when the batch is large (the library's collide_boxes and
/// course::step's contacts use it: docs/performance-log.md, entry 32); the requirements on the
/// warp are those of collide_box_warp. The lanes write their own columns of `storage` and read
/// nothing else, so no barrier is needed; do not use the same storage for another purpose
/// until every lane has returned.
__device__ inline box_contact collide_box_warp(const track_ref& track, const box& b, int hint, int window,
                                               float trust_margin, bool active, collide_box_warp_storage& storage) {
  using namespace detail;
  const int n = track.num_samples(), lane = lane_index();
  const float3* position = track.arrays().position;
  return collide_box_warp_with(track, b, hint, window, trust_margin, active, [&](bool going, const projection& centre) {
    int first = 0;
    if (going) {
      first = wrap(centre.segment - 3, n);
      // Sample first + j (mod N) in row j, for any N (a track shorter than the window repeats).
      for (int j = 0, k = first; j < collide_box_warp_storage::samples; ++j, k = k + 1 == n ? 0 : k + 1) {
        const float3 q = position[k];
        storage.x[j][lane] = q.x;
        storage.y[j][lane] = q.y;
        storage.z[j][lane] = q.z;
      }
    }
    return warp_window_positions{position, &storage, n, first, lane};
  });
}
#endif

namespace detail {
/// What collide_disc / collide_discs return for an invalid box, radius or disc.
TRACK_GEN_HD inline disc_hit invalid_disc_hit() {
  const float3 nan3 = f3(NAN, NAN, NAN);
  return disc_hit{contact_flags::invalid, NAN, nan3, nan3, -1};
}

/// Box (centre, footprint axes, half extents) against the disc at `centre` of `radius`, in the
/// xy plane. The closest point of the box to an outside centre clamps the centre's box
/// coordinates to the half extents (C. Ericson, "Real-Time Collision Detection", Morgan
/// Kaufmann 2005, §5.1.4 closest point on an OBB to a point, used for sphere vs OBB in §5.2.6);
/// an inside centre takes the nearest face (the least of the two coordinate gaps).
TRACK_GEN_HD inline disc_hit disc_against(const box& b, const box_footprint& f, float3 centre, float radius, int index) {
  const float dx = centre.x - b.centre.x, dy = centre.y - b.centre.y;
  const float u = dx * f.forward.x + dy * f.forward.y, v = dx * f.left.x + dy * f.left.y;  // box coordinates
  const float hx = b.half_extents.x, hy = b.half_extents.y;
  const float gap_u = std::fabs(u) - hx, gap_v = std::fabs(v) - hy;
  float s, nu, nv;  // signed distance, and the normal in box coordinates
  if (gap_u > 0.0f || gap_v > 0.0f) {
    const float du = u - clamp_f(u, -hx, hx), dv = v - clamp_f(v, -hy, hy);
    // Scaled by the larger gap (> 0: one gap is), so that a box of 1e-30 m does not underflow
    // du^2 + dv^2 to 0 and divide by it.
    const float m = max_f(std::fabs(du), std::fabs(dv));
    const float a = du / m, c = dv / m;
    const float r = std::sqrt(a * a + c * c);  // in [1, sqrt 2]
    s = m * r;
    nu = a / r;
    nv = c / r;
  } else if (gap_u >= gap_v) {
    s = gap_u;
    nu = u >= 0.0f ? 1.0f : -1.0f;
    nv = 0.0f;
  } else {
    s = gap_v;
    nu = 0.0f;
    nv = v >= 0.0f ? 1.0f : -1.0f;
  }
  disc_hit h;
  h.depth = radius - s;
  h.flags = h.depth >= 0.0f ? contact_flags::hit : 0u;
  h.normal = f.forward * nu + f.left * nv;
  h.point = b.centre + f.forward * (u - nu * s) + f.left * (v - nv * s);
  h.disc = index;
  return h;
}

TRACK_GEN_HD inline bool is_radius(float radius) {
  return radius >= 0.0f && radius <= static_cast<float>(max_position);
}
}  // namespace detail

/// Box `b` against the disc (a cone, a gate post: a vertical cylinder) of `radius` [m] around
/// `centre` [m], in the xy plane (heights ignored). They hit when the planar distance from the
/// disc's centre to the solid box is <= radius (touching counts). Invalid input (is_valid_box,
/// a centre that is not a valid position, a radius not in [0, 1e7]) gives flags =
/// contact_flags::invalid, depth, point and normal NaN, disc -1. O(1).
TRACK_GEN_HD inline disc_hit collide_disc(const box& b, float3 centre, float radius) {
  if (!(is_valid_box(b) && detail::is_position(centre) && detail::is_radius(radius))) return detail::invalid_disc_hit();
  return detail::disc_against(b, footprint(b), centre, radius, 0);
}

/// Box `b` against `count` discs of one `radius` (e.g. the cones of props.hpp's border_cones,
/// or gate posts), `centres` in the caller's memory space: the disc of largest depth (the
/// deepest hit; with no hit the nearest disc, -depth its gap), its index in `disc`, the first
/// on ties. Centres that are not valid positions (NaN padding) are skipped; with none left,
/// flags 0, depth -Inf, point and normal NaN, disc -1. An invalid box or radius gives what
/// collide_disc gives. O(count).
TRACK_GEN_HD inline disc_hit collide_discs(const box& b, const float3* centres, int count, float radius) {
  using namespace detail;
  if (!(is_valid_box(b) && is_radius(radius))) return invalid_disc_hit();
  const box_footprint f = footprint(b);
  const float3 nan3 = f3(NAN, NAN, NAN);
  disc_hit best{0u, -INFINITY, nan3, nan3, -1};
  for (int i = 0; i < count; ++i) {
    if (!is_position(centres[i])) continue;
    const disc_hit h = disc_against(b, f, centres[i], radius, i);
    if (h.depth > best.depth) best = h;
  }
  return best;
}

}  // namespace track_gen

#pragma once
/// @file
/// `track_arrays` (the pointers of a batch of tracks, generated from the field table) and
/// `track_ref`, the trivially copyable view of one environment's track: samples, frames, road
/// edges, gates, and the projection of a point on the centreline.
///
/// Memory space: every pointer lives where its batch lives (device memory for `backend::cuda`,
/// host memory for `backend::host`). Layout: structure of arrays, env-major (sample k of env e
/// at index e * N + k; gate g of env e at e * G_max + g).

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/fields.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/status.hpp>

#include <cstddef>
#include <cstdint>

namespace track_gen {

/// One gate (checkpoint) of a track.
struct gate {
  float3 centre;      ///< on the centreline [m]
  float3 normal;      ///< unit track tangent at the gate: the forward crossing direction
  float half_width;   ///< half-width of the opening [m]
  float arc_length;   ///< arc length of the gate from the start line, in [0, L) [m]
};

/// Result of projecting a point on a track's centreline (the closed polyline of its samples).
struct projection {
  int segment;        ///< sample index k: the nearest point lies between samples k and k+1 (mod N)
  float t;            ///< fraction along that segment, in [0, 1]
  float arc_length;   ///< arc length of the nearest point, in [0, L) [m]
  float lateral;      ///< signed offset along the left normal [m] (positive: left of the centreline)
  float distance;     ///< distance from the point to the nearest centreline point [m]
  float half_width;   ///< road half-width at the nearest point on the side of the point (left when lateral >= 0) [m]
  float3 point;       ///< the nearest centreline point [m]
  float3 tangent;     ///< unit tangent at the nearest point
  bool full_search;   ///< the local search failed and the O(N) search was used
};

/// A point of a track's centreline polyline with its frame (track_ref::frame_at).
struct segment_frame {
  float3 point;    ///< the point [m]
  float3 tangent;  ///< unit tangent
  float3 left;     ///< unit left normal (level)
};

/// The nearest segment found so far by a search of a track's centreline.
struct nearest_segment {
  int segment = 0;        ///< sample index k of the segment (samples k, k+1 mod N)
  float t = 0.0f;         ///< fraction along it of the nearest point, in [0, 1]
  float distance2 = 3.0e38f;  ///< squared distance to that point [m^2]; 3e38 = none found yet
};

#if defined(__CUDACC__)
namespace detail {
/// This thread's lane in its warp (blocks of any shape: the warps take consecutive linear
/// thread indices, x fastest).
__device__ inline int lane_index() {
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return static_cast<int>(linear % 32u);
}

/// The least (distance2, segment) over the 32 lanes of a warp, which must all call it (every
/// lane gets the result): the first of equal minima in segment order, as one scan keeps it.
__device__ inline nearest_segment warp_nearest(nearest_segment mine) {
  constexpr unsigned all_lanes = 0xffffffffu;
  for (int offset = 16; offset > 0; offset /= 2) {
    nearest_segment other;
    other.segment = __shfl_xor_sync(all_lanes, mine.segment, offset);
    other.t = __shfl_xor_sync(all_lanes, mine.t, offset);
    other.distance2 = __shfl_xor_sync(all_lanes, mine.distance2, offset);
    if (other.distance2 < mine.distance2 || (other.distance2 == mine.distance2 && other.segment < mine.segment))
      mine = other;
  }
  return mine;
}
}  // namespace detail
#endif

/// Pointers to every track array of a batch (detail/fields.hpp lists them with their units):
/// env-major structure of arrays, `samples` fields [E * N], `gates` fields [E * G_max], `env`
/// fields [E]. Memory space: where the batch lives (device memory for backend::cuda).
struct track_arrays {
#define TRACK_GEN_POINTER(name, type, ext, doc) type* name = nullptr;
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_POINTER)
#undef TRACK_GEN_POINTER

  /// The arrays of one allocation at `base` laid out by `layout` (track_batch::layout).
  template <class Layout>
  static track_arrays at(unsigned char* base, const Layout& layout) {
    track_arrays a;
    std::size_t i = 0;
#define TRACK_GEN_AT(name, type, ext, doc) a.name = reinterpret_cast<type*>(base + layout.offset[i++]);
    TRACK_GEN_TRACK_FIELDS(TRACK_GEN_AT)
#undef TRACK_GEN_AT
    return a;
  }

  /// The same arrays advanced to env `e`'s first element (one env's slice).
  TRACK_GEN_HD track_arrays slice(int e, int num_samples, int max_gates) const {
    track_arrays a;
#define TRACK_GEN_SLICE(name, type, ext, doc) \
  a.name = name + static_cast<std::size_t>(e) * detail::elements_per_env(detail::extent::ext, num_samples, max_gates);
    TRACK_GEN_TRACK_FIELDS(TRACK_GEN_SLICE)
#undef TRACK_GEN_SLICE
    return a;
  }
};

/// View of one environment's track. Trivially copyable; valid while its course lives.
class track_ref {
 public:
  track_ref() = default;
  TRACK_GEN_HD track_ref(const track_arrays& a, int env, int num_samples, int max_gates)
      : a_(a.slice(env, num_samples, max_gates)),
        length_(a.length[env]),
        num_samples_(num_samples),
        num_gates_(usable_gates(a.num_gates[env], max_gates)),
        status_(a.status[env]) {}

  TRACK_GEN_HD int num_samples() const { return num_samples_; }
  /// The track's gate count G, in [1, G_max]; 0 when the stored count lies outside that range
  /// (written from outside the library), so that no reader indexes beyond the gate storage.
  TRACK_GEN_HD int num_gates() const { return num_gates_; }
  /// Centreline length L [m].
  TRACK_GEN_HD float length() const { return length_; }
  /// Arc-length spacing of the samples, L / N [m].
  TRACK_GEN_HD float sample_spacing() const { return length_ / static_cast<float>(num_samples_); }
  TRACK_GEN_HD std::uint32_t status() const { return status_; }
  /// Where this track's frame lies in the user's frame [m] (user_tracks::recentre; else zero).
  TRACK_GEN_HD float3 origin() const { return a_.origin[0]; }
  /// How far from the centreline a local minimum of the distance is the nearest point of the
  /// whole track [m] (the stored field, from stages::validate; 0 on a track that failed it):
  /// project_local trusts its local search that far.
  TRACK_GEN_HD float trust_radius() const { return a_.trust_radius[0]; }
  TRACK_GEN_HD float3 position(int k) const { return a_.position[k]; }
  TRACK_GEN_HD float3 tangent(int k) const { return a_.tangent[k]; }
  TRACK_GEN_HD float3 normal(int k) const { return a_.normal[k]; }
  /// Road half-width left / right of sample k [m].
  TRACK_GEN_HD float half_width_left(int k) const { return a_.half_widths[k].x; }
  TRACK_GEN_HD float half_width_right(int k) const { return a_.half_widths[k].y; }
  /// The narrower of the two half-widths at sample k [m].
  TRACK_GEN_HD float half_width(int k) const {
    const float2 w = a_.half_widths[k];
    return detail::min_f(w.x, w.y);
  }
  /// Signed curvature at sample k [1/m], positive turning left.
  TRACK_GEN_HD float curvature(int k) const { return a_.curvature[k]; }
  /// Arc length of sample k from the start line [m] (the stored field).
  TRACK_GEN_HD float arc_length(int k) const { return a_.arc_length[k]; }
  /// Arc length of sample k, k L / N [m], computed instead of read: the generator stores the
  /// `arc_length` field with the same float operations (k times L / N), so this is the field's
  /// value, bit for bit, for every track the library built, without a scattered read.
  TRACK_GEN_HD float sample_arc_length(int k) const { return static_cast<float>(k) * sample_spacing(); }
  TRACK_GEN_HD float3 border_left(int k) const { return a_.border_left[k]; }
  TRACK_GEN_HD float3 border_right(int k) const { return a_.border_right[k]; }
  /// This env's arrays (the batch's arrays advanced to its first element).
  TRACK_GEN_HD const track_arrays& arrays() const { return a_; }
  /// Gate g in [0, num_gates()).
  TRACK_GEN_HD track_gen::gate gate(int g) const {
    return {a_.gate_centre[g], a_.gate_normal[g], a_.gate_half_width[g], a_.gate_arc_length[g]};
  }

  /// Nearest point of the centreline to `p`: a local search within `window` segments of
  /// segment `hint` (O(distance moved since the hint), at most O(window)), and all N segments
  /// (O(N)) when the local minimum lies `window` segments away or farther than the half-width
  /// from `p` (a jump, or an off-track agent). `window <= 0` searches everything.
  ///
  /// The local search walks downhill from the hint (to the neighbouring segment while it is
  /// nearer), then takes the nearest of the minimum and its two neighbours in track order, so
  /// that of two segments sharing the nearest sample the earlier one is reported, as a scan of
  /// the whole window would. It reads a few samples where a scan of the window reads 2W + 2.
  ///
  /// `p` must be a valid position: finite, every coordinate within +-1e7 m (detail::is_position,
  /// docs/parameters.md); project() does not check it (progress_tracker_ref::step does, and
  /// reports invalid input). Beyond the bound the result is meaningless: past ~1e19 m the squared
  /// distances overflow, `lateral` and `distance` become +inf and `segment` falls on 0.
  TRACK_GEN_HD projection project(float3 p, int hint = 0, int window = 0, float trust_margin = 0.0f) const {
    nearest_segment best;
    // Any window of N or more means the O(N) search; clamping keeps 2 window + 1 from overflowing.
    const bool full = project_local(p, hint, window > num_samples_ ? num_samples_ : window, best, trust_margin);
    if (full) scan_segments(p, 0, 1, best);
    return projection_at(p, best, full);
  }

  /// The local part of project(): the downhill walk from `hint` and the scan around its
  /// minimum. Returns false with that minimum in `best`, or true when the O(N) search is needed
  /// instead (`window <= 0`, 2 window + 1 >= N, the minimum on the window's edge, or farther
  /// from `p` than both the half-width plus `trust_margin` [m] and the track's trust_radius()),
  /// with `best` reset to `nearest_segment{}`, where that search starts. `trust_margin` may be up
  /// to half the validation's clearance_margin on a track that passed validation
  /// (status::valid): distant parts are then 2 half_width + clearance_margin apart, so within
  /// half_width + clearance_margin / 2 of the local minimum no other part is nearer (the
  /// triangle inequality). 0: the half-width alone. The trust radius T is read only when the
  /// minimum lies beyond that: validation measured every two sections farther apart than its
  /// window at least 2 T apart (the same triangle inequality), and the polyline's turns no
  /// tighter than a radius t >= T, so that the sections within half a turn of radius t stay
  /// outside the ball of radius T tangent to the minimum's segment on `p`'s side (the
  /// tangent-ball argument), and T leaves room for the rest of the window
  /// (stages::validate::trusted_turn). The discrete turns and the circle as the extreme case
  /// are checked by tests/progress/trust_radius_test, not proved.
  TRACK_GEN_HD bool project_local(float3 p, int hint, int window, nearest_segment& best,
                                  float trust_margin = 0.0f) const {
    return project_local_in(a_.position, p, hint, window, best, trust_margin);
  }

  /// project_local with the samples read through `position`: anything whose `position[k]` is
  /// this track's sample k for every k in [0, N) (the track's own array, as project_local
  /// passes, or a cache of part of it: collision's collide_box_warp_storage). The same result,
  /// bit for bit, whatever gives the samples.
  template <class Positions>
  TRACK_GEN_HD bool project_local_in(const Positions& position, float3 p, int hint, int window, nearest_segment& best,
                                     float trust_margin = 0.0f) const {
    using namespace detail;
    const int n = num_samples_;
    best = nearest_segment{};
    if (window <= 0 || 2 * window + 1 >= n) return true;
    hint = wrap(hint, n);
    float t;  // (unused: the walk compares distances only)
    const float here = segment_distance2(position, n, p, hint, t);
    const float before = segment_distance2(position, n, p, wrap(hint - 1, n), t);
    const float after = segment_distance2(position, n, p, wrap(hint + 1, n), t);
    const int dir = before < here ? -1 : (after < here ? 1 : 0);
    int off = 0;  // offset of the local minimum from the hint
    if (dir != 0) {
      float d2 = dir < 0 ? before : after;
      off = dir;
      while (off != dir * window) {
        const float next = segment_distance2(position, n, p, wrap(hint + off + dir, n), t);
        if (!(next < d2)) break;
        d2 = next;
        off += dir;
      }
    }
    for (int o = off - 1; o <= off + 1; ++o) scan_segment(position, n, p, wrap(hint + o, n), best);
    // On the window's edge the minimum may lie beyond. Farther than the half-width from the
    // local minimum, another part of the track may be nearer (a jump across the infield):
    // validation only guarantees that distant parts are 2 * half_width + margin apart, so
    // within the half-width (the narrower side's) the local minimum is global, and within the
    // trust radius it measured on this track.
    const bool full = off == window || off == -window ||
                      (best.distance2 > square(half_width(best.segment) + trust_margin) &&
                       !(best.distance2 <= square(trust_radius())));
    if (full) best = nearest_segment{};
    return full;
  }

  /// Part of the O(N) search: segments first, first + stride, ... < N in increasing order,
  /// each replacing `best` when strictly nearer (so the first of equal minima stays). `stride`
  /// lanes scanning first = 0 .. stride - 1, whose results are then reduced to the least
  /// (distance2, segment), find what one scan of all N segments finds.
  TRACK_GEN_HD void scan_segments(float3 p, int first, int stride, nearest_segment& best) const {
    scan_segments(a_.position, num_samples_, p, first, stride, best);
  }

  /// scan_segments over the N = `num_samples` centreline samples `position` of a track (its
  /// arrays().position): what the lanes of a warp run on another lane's track, of which they
  /// receive that pointer alone (project_warp).
  TRACK_GEN_HD static void scan_segments(const float3* position, int num_samples, float3 p, int first, int stride,
                                         nearest_segment& best) {
    // The samples of scan_batch segments are loaded before any is measured, so that their reads
    // wait on memory together: one segment after another paid a latency each (about 2 us of a
    // warp's O(N) search at N = 256; docs/performance-log.md entry 46). The same segments in
    // the same order, so the same result, bit for bit.
    constexpr int scan_batch = 4;
    int k = first;
    for (; k + (scan_batch - 1) * stride < num_samples; k += scan_batch * stride) {
      float3 a[scan_batch], b[scan_batch];
      TRACK_GEN_UNROLL
      for (int j = 0; j < scan_batch; ++j) {
        const int at = k + j * stride;
        a[j] = position[at];
        b[j] = position[at + 1 == num_samples ? 0 : at + 1];
      }
      TRACK_GEN_UNROLL
      for (int j = 0; j < scan_batch; ++j) scan_points(a[j], b[j], p, k + j * stride, best);
    }
    for (; k < num_samples; k += stride) scan_segment(position, num_samples, p, k, best);
  }

#if defined(__CUDACC__)
  /// project() by the 32 lanes of a warp together: in each active lane the same projection as
  /// project(p, hint, window, trust_margin), bit for bit, but every O(N) search a lane needs
  /// (a stale hint, `window <= 0`, a point off the road) is run by the whole warp, one lane's
  /// after another: lane l scans segments l, l + 32, ... of that lane's track (coalesced loads)
  /// and a shuffle reduction (detail::warp_nearest) keeps the first minimum, as the one-thread
  /// scan does. Device code only. Every lane of the warp must call it, converged (a block size
  /// that is a multiple of 32, no early return before it); the lanes may follow different
  /// tracks (of any batch in device memory). A lane without a point passes `active = false`:
  /// its `p`, `hint`, `window` and `trust_margin` are not used and nothing is read through its
  /// track's pointers (a default-constructed track_ref will do); it gets a value-initialised
  /// projection. Not checked:
  /// `__activemask()` may see a warp that has not reconverged yet, so it cannot tell a missing
  /// lane from a late one.
  __device__ projection project_warp(float3 p, int hint, int window, float trust_margin, bool active) const;

  /// project_warp with the local search and the projection reading the samples through
  /// `position` (as project_local_in); the O(N) searches read the track's own array. The same
  /// projection, bit for bit.
  template <class Positions>
  __device__ projection project_warp_in(const Positions& position, float3 p, int hint, int window, float trust_margin,
                                        bool active) const;
#endif

  /// The point at fraction `t` in [0, 1] of segment k in [0, N) (samples k and k + 1 mod N),
  /// with the tangent and left normal of its two samples interpolated and renormalised. The
  /// samples' frames come from the four samples around the segment (detail::frame_between, the
  /// formula stages::frames stores them with: the bits of the stored tangent and normal of every
  /// track the library built) instead of from the tangent and normal arrays: a search has just
  /// read those samples, where the two arrays would be two more scattered reads of DRAM.
  TRACK_GEN_HD segment_frame frame_at(int k, float t) const { return frame_at_in(a_.position, k, t); }

  /// frame_at with the samples read through `position` (as project_local_in).
  template <class Positions>
  TRACK_GEN_HD segment_frame frame_at_in(const Positions& position, int k, float t) const {
    using namespace detail;
    const int n = num_samples_, next = k + 1 == n ? 0 : k + 1;
    const float3 before = position[k == 0 ? n - 1 : k - 1], here = position[k], there = position[next],
                 after = position[next + 1 == n ? 0 : next + 1];
    const sample_frame f0 = frame_between(before, there), f1 = frame_between(here, after);
    return {lerp(here, there, t), normalize_or(lerp(f0.tangent, f1.tangent, t), f0.tangent),
            normalize_or(lerp(f0.left, f1.left, t), f0.left)};
  }

  /// The projection of `p` on the nearest segment `best` (`full`: found by the O(N) search);
  /// its point, tangent and left normal are frame_at's.
  TRACK_GEN_HD projection projection_at(float3 p, const nearest_segment& best, bool full) const {
    return projection_at_in(a_.position, p, best, full);
  }

  /// projection_at with the samples read through `position` (as project_local_in).
  template <class Positions>
  TRACK_GEN_HD projection projection_at_in(const Positions& position, float3 p, const nearest_segment& best,
                                           bool full) const {
    using namespace detail;
    const int k = best.segment;
    const int next = k + 1 == num_samples_ ? 0 : k + 1;
    const segment_frame f = frame_at_in(position, k, best.t);
    projection r;
    r.segment = k;
    r.t = best.t;
    r.point = f.point;
    r.tangent = f.tangent;
    r.lateral = dot(p - r.point, f.left);
    // Both sides come in one load per sample (interleaved: reading a second array cost the
    // step 23 % at 1M envs on the H200); then the point's side.
    const float2 w0 = a_.half_widths[k], w1 = a_.half_widths[next];
    r.half_width = r.lateral >= 0.0f ? lerp(w0.x, w1.x, best.t) : lerp(w0.y, w1.y, best.t);
    r.distance = std::sqrt(best.distance2);
    float s = (static_cast<float>(k) + best.t) * sample_spacing();
    r.arc_length = s >= length_ ? s - length_ : s;
    r.full_search = full;
    return r;
  }

 private:
  /// Squared distance from `p` to segment k (samples k, k + 1 of the N = `num_samples`
  /// samples `position`), and the closest point's fraction t.
  template <class Positions>
  TRACK_GEN_HD static float segment_distance2(const Positions& position, int num_samples, float3 p, int k, float& t) {
    return points_distance2(position[k], position[k + 1 == num_samples ? 0 : k + 1], p, t);
  }

  /// Squared distance from `p` to the segment from `a` to `b`, and the closest point's fraction t.
  TRACK_GEN_HD static float points_distance2(float3 a, float3 b, float3 p, float& t) {
    using namespace detail;
    t = closest_parameter(p, a, b);
    const float3 d = p - lerp(a, b, t);
    return dot(d, d);
  }

  template <class Positions>
  TRACK_GEN_HD static void scan_segment(const Positions& position, int num_samples, float3 p, int k,
                                        nearest_segment& best) {
    scan_points(position[k], position[k + 1 == num_samples ? 0 : k + 1], p, k, best);
  }

  /// scan_segment of segment k, whose samples `a` and `b` are read already.
  TRACK_GEN_HD static void scan_points(float3 a, float3 b, float3 p, int k, nearest_segment& best) {
    float t;
    const float d2 = points_distance2(a, b, p, t);
    if (d2 < best.distance2) best = nearest_segment{k, t, d2};
  }

  TRACK_GEN_HD static float square(float v) { return v * v; }
  TRACK_GEN_HD static int usable_gates(int count, int max_gates) { return count >= 1 && count <= max_gates ? count : 0; }

  track_arrays a_;  ///< this env's slice
  float length_ = 0.0f;
  int num_samples_ = 0;
  int num_gates_ = 0;
  std::uint32_t status_ = 0;
};

#if defined(__CUDACC__)
namespace detail {
/// `p` of lane `owner`, in every lane.
__device__ inline float3 shfl_point(float3 p, int owner) {
  constexpr unsigned all_lanes = 0xffffffffu;
  return f3(__shfl_sync(all_lanes, p.x, owner), __shfl_sync(all_lanes, p.y, owner), __shfl_sync(all_lanes, p.z, owner));
}

/// The O(N) searches of a warp, shared by its 32 lanes, which must all call it converged: for
/// each lane whose `needed` is set, in lane order, every lane runs scan(owner, lane, mine) (its
/// part of that lane's search: track_ref::scan_segments(q, lane, 32, mine) of the owner's point
/// q on the owner's track, both taken from the owner by shuffles; coalesced loads), warp_nearest
/// reduces, and the owner's `best` becomes what scan_segments(q, 0, 1, best) finds from
/// nearest_segment{}, bit for bit. The other lanes' `best` is left as it was.
template <class Scan>
__device__ void warp_full_searches(bool needed, nearest_segment& best, Scan scan) {
  constexpr unsigned all_lanes = 0xffffffffu;
  const int lane = lane_index();
  unsigned waiting = __ballot_sync(all_lanes, needed);
  while (waiting != 0u) {
    const int owner = __ffs(static_cast<int>(waiting)) - 1;
    waiting &= waiting - 1u;
    nearest_segment mine;
    scan(owner, lane, mine);
    const nearest_segment found = warp_nearest(mine);
    if (lane == owner) best = found;
  }
}
}  // namespace detail

// project() with its O(N) search shared by the warp (the declaration says what it returns).
__device__ inline projection track_ref::project_warp(float3 p, int hint, int window, float trust_margin,
                                                     bool active) const {
  return project_warp_in(a_.position, p, hint, window, trust_margin, active);
}

template <class Positions>
__device__ projection track_ref::project_warp_in(const Positions& position, float3 p, int hint, int window,
                                                 float trust_margin, bool active) const {
  nearest_segment best;
  // As project(): any window of N or more means the O(N) search.
  const bool full =
      active && project_local_in(position, p, hint, window > num_samples_ ? num_samples_ : window, best, trust_margin);
  // The owner's track reaches the other lanes as its samples' pointer and count (the lanes may
  // follow different tracks).
  detail::warp_full_searches(full, best, [&](int owner, int lane, nearest_segment& mine) {
    const auto* samples = reinterpret_cast<const float3*>(
        __shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(a_.position), owner));
    const int n = __shfl_sync(0xffffffffu, num_samples_, owner);
    scan_segments(samples, n, detail::shfl_point(p, owner), lane, 32, mine);
  });
  return active ? projection_at_in(position, p, best, full) : projection{};
}
#endif

/// The axes of a gate's frame: x forward (the gate normal), y left (horizontal), z up
/// (forward x left). Roll-free: the left axis is level, so a gate only yaws and pitches.
struct gate_axes_t {
  float3 forward, left, up;
};

/// The frame of a gate of normal `normal` (unit): left is the horizontal unit vector 90 degrees
/// counter-clockwise of the normal's plan-view direction ((0, 1, 0) for a vertical normal).
TRACK_GEN_HD inline gate_axes_t gate_axes(float3 normal) {
  using namespace detail;
  const float3 left = normalize_or(f3(-normal.y, normal.x, 0.0f), f3(0.0f, 1.0f, 0.0f));
  return {normal, left, cross(normal, left)};
}

namespace detail {
/// crosses_opening (below) with a's and b's signed distances from the gate's plane, `da` and
/// `db` [m], already computed (dot(a - centre, normal), dot(b - centre, normal)): a caller that
/// tested the sides first passes the same values, so that its test and this one cannot disagree
/// for a point on the plane (two evaluations of one dot product may round differently where the
/// compiler contracts them into fused multiply-adds differently).
template <class HalfWidth>
TRACK_GEN_HD bool crosses_opening_at(float3 centre, float3 normal, const HalfWidth& half_width, float3 a, float3 b,
                                     float da, float db, float half_height) {
  if (!(da < 0.0f && db >= 0.0f)) return false;
  const float3 x = lerp(a, b, da / (da - db));
  const gate_axes_t axes = gate_axes(normal);
  const float3 r = x - centre;
  return std::fabs(dot(r, axes.left)) <= half_width() && std::fabs(dot(r, axes.up)) <= half_height;
}

/// crosses_gate (below) for a gate given by its centre and unit normal, its half-width from
/// `half_width()`, called only when the segment crosses the gate's plane forwards (so that a
/// caller holding the gate's plane reads the half-width only then).
template <class HalfWidth>
TRACK_GEN_HD bool crosses_opening(float3 centre, float3 normal, const HalfWidth& half_width, float3 a, float3 b,
                                  float half_height) {
  return crosses_opening_at(centre, normal, half_width, a, b, dot(a - centre, normal), dot(b - centre, normal),
                            half_height);
}
}  // namespace detail

/// Does the segment a -> b cross gate `g` forwards through its opening? Forward means from the
/// negative to the non-negative side of the gate plane (normal = track tangent); the opening
/// is |lateral| <= half_width along the horizontal left axis and |vertical| <= half_height.
TRACK_GEN_HD inline bool crosses_gate(const gate& g, float3 a, float3 b, float half_height) {
  return detail::crosses_opening(g.centre, g.normal, [&] { return g.half_width; }, a, b, half_height);
}

}  // namespace track_gen

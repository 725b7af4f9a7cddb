#pragma once
/// @file
/// Trivially copyable views of a batch of tracks and of the progress state, for use inside the
/// library's kernels, the host backend and the user's own `__device__` code.
///
/// Memory space: every pointer of a view lives where its course lives (device memory for
/// `backend::cuda`, host memory for `backend::host`). Layout: structure of arrays, env-major
/// (sample k of env e at index e * N + k; gate g of env e at e * G_max + g).

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/status.hpp>

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
  float half_width;   ///< half-width at the nearest point [m]
  float3 point;       ///< the nearest centreline point [m]
  float3 tangent;     ///< unit tangent at the nearest point
  bool full_search;   ///< the local search failed and the O(N) search was used
};

/// The nearest segment found so far by a search of a track's centreline.
struct nearest_segment {
  int segment = 0;        ///< sample index k of the segment (samples k, k+1 mod N)
  float t = 0.0f;         ///< fraction along it of the nearest point, in [0, 1]
  float distance2 = 3.0e38f;  ///< squared distance to that point [m^2]; 3e38 = none found yet
};

/// Pointers to every track array of a batch (see the file comment for layout and memory space).
struct track_arrays {
  float3* position = nullptr;         ///< [E * N] centreline samples [m]
  float3* tangent = nullptr;          ///< [E * N] unit tangents
  float3* normal = nullptr;           ///< [E * N] unit left normals (horizontal)
  float* half_width = nullptr;        ///< [E * N] [m]
  float* curvature = nullptr;         ///< [E * N] [1/m]
  float3* gate_centre = nullptr;      ///< [E * G_max] [m]
  float3* gate_normal = nullptr;      ///< [E * G_max] unit
  float* gate_half_width = nullptr;   ///< [E * G_max] [m]
  float* gate_arc_length = nullptr;   ///< [E * G_max] [m]
  float* length = nullptr;            ///< [E] centreline length L [m]
  int* num_gates = nullptr;           ///< [E] G = floor(L / spacing) clamped to [1, G_max]
  std::uint32_t* status = nullptr;    ///< [E] status bits (status.hpp)
  std::uint32_t* episode = nullptr;   ///< [E] episode counter of each env
};

/// Pointers to the progress state of a batch ([E] each).
struct progress_arrays {
  int* next_gate = nullptr;           ///< index of the next gate to pass, in [0, G)
  int* laps = nullptr;                ///< laps completed since the last reset
  int* gates_passed = nullptr;        ///< gates passed in total since the last reset
  float* lap_progress = nullptr;      ///< arc length of the last projection, in [0, L) [m]
  float* lateral = nullptr;           ///< signed lateral offset of the last projection [m]
  int* hint = nullptr;                ///< segment of the last projection (local search start)
  float3* last_position = nullptr;    ///< last finite position [m]
  std::uint32_t* flags = nullptr;     ///< progress_flags bits
};

/// One environment's progress, by value.
struct progress_state {
  int next_gate, laps, gates_passed;
  float lap_progress, lateral;
  int hint;
  float3 last_position;
  std::uint32_t flags;
};

/// View of one environment's track. Trivially copyable; valid while its course lives.
class track_ref {
 public:
  track_ref() = default;
  TRACK_GEN_HD track_ref(const track_arrays& a, int env, int num_samples, int max_gates)
      : position_(a.position + static_cast<std::size_t>(env) * num_samples),
        tangent_(a.tangent + static_cast<std::size_t>(env) * num_samples),
        normal_(a.normal + static_cast<std::size_t>(env) * num_samples),
        half_width_(a.half_width + static_cast<std::size_t>(env) * num_samples),
        curvature_(a.curvature + static_cast<std::size_t>(env) * num_samples),
        gate_centre_(a.gate_centre + static_cast<std::size_t>(env) * max_gates),
        gate_normal_(a.gate_normal + static_cast<std::size_t>(env) * max_gates),
        gate_half_width_(a.gate_half_width + static_cast<std::size_t>(env) * max_gates),
        gate_arc_length_(a.gate_arc_length + static_cast<std::size_t>(env) * max_gates),
        length_(a.length[env]),
        num_samples_(num_samples),
        num_gates_(a.num_gates[env]),
        status_(a.status[env]) {}

  TRACK_GEN_HD int num_samples() const { return num_samples_; }
  TRACK_GEN_HD int num_gates() const { return num_gates_; }
  /// Centreline length L [m].
  TRACK_GEN_HD float length() const { return length_; }
  /// Arc-length spacing of the samples, L / N [m].
  TRACK_GEN_HD float sample_spacing() const { return length_ / static_cast<float>(num_samples_); }
  TRACK_GEN_HD std::uint32_t status() const { return status_; }
  TRACK_GEN_HD float3 position(int k) const { return position_[k]; }
  TRACK_GEN_HD float3 tangent(int k) const { return tangent_[k]; }
  TRACK_GEN_HD float3 normal(int k) const { return normal_[k]; }
  TRACK_GEN_HD float half_width(int k) const { return half_width_[k]; }
  TRACK_GEN_HD float curvature(int k) const { return curvature_[k]; }
  /// Gate g in [0, num_gates()).
  TRACK_GEN_HD track_gen::gate gate(int g) const {
    return {gate_centre_[g], gate_normal_[g], gate_half_width_[g], gate_arc_length_[g]};
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
  TRACK_GEN_HD projection project(float3 p, int hint = 0, int window = 0) const {
    nearest_segment best;
    const bool full = project_local(p, hint, window, best);
    if (full) scan_segments(p, 0, 1, best);
    return projection_at(p, best, full);
  }

  /// The local part of project(): the downhill walk from `hint` and the scan around its
  /// minimum. Returns false with that minimum in `best`, or true when the O(N) search is needed
  /// instead (`window <= 0`, 2 window + 1 >= N, the minimum on the window's edge, or farther than
  /// the half-width), with `best` reset to `nearest_segment{}`, where that search starts.
  TRACK_GEN_HD bool project_local(float3 p, int hint, int window, nearest_segment& best) const {
    using namespace detail;
    const int n = num_samples_;
    best = nearest_segment{};
    if (window <= 0 || 2 * window + 1 >= n) return true;
    hint = wrap(hint, n);
    const float here = segment_distance2(p, hint);
    const float before = segment_distance2(p, wrap(hint - 1, n));
    const float after = segment_distance2(p, wrap(hint + 1, n));
    const int dir = before < here ? -1 : (after < here ? 1 : 0);
    int off = 0;  // offset of the local minimum from the hint
    if (dir != 0) {
      float d2 = dir < 0 ? before : after;
      off = dir;
      while (off != dir * window) {
        const float next = segment_distance2(p, wrap(hint + off + dir, n));
        if (!(next < d2)) break;
        d2 = next;
        off += dir;
      }
    }
    for (int o = off - 1; o <= off + 1; ++o) scan_segment(p, wrap(hint + o, n), best);
    // On the window's edge the minimum may lie beyond. Farther than the half-width from the
    // local minimum, another part of the track may be nearer (a jump across the infield):
    // validation only guarantees that distant parts are 2 * half_width + margin apart, so
    // within the half-width the local minimum is global.
    const bool full = off == window || off == -window ||
                      best.distance2 > half_width_[best.segment] * half_width_[best.segment];
    if (full) best = nearest_segment{};
    return full;
  }

  /// Part of the O(N) search: segments first, first + stride, ... < N in increasing order,
  /// each replacing `best` when strictly nearer (so the first of equal minima stays). `stride`
  /// lanes scanning first = 0 .. stride - 1, whose results are then reduced to the least
  /// (distance2, segment), find what one scan of all N segments finds.
  TRACK_GEN_HD void scan_segments(float3 p, int first, int stride, nearest_segment& best) const {
    for (int k = first; k < num_samples_; k += stride) scan_segment(p, k, best);
  }

  /// The projection of `p` on the nearest segment `best` (`full`: found by the O(N) search).
  TRACK_GEN_HD projection projection_at(float3 p, const nearest_segment& best, bool full) const {
    using namespace detail;
    const int k = best.segment;
    const int next = k + 1 == num_samples_ ? 0 : k + 1;
    projection r;
    r.segment = k;
    r.t = best.t;
    r.point = lerp(position_[k], position_[next], best.t);
    r.tangent = normalize_or(lerp(tangent_[k], tangent_[next], best.t), tangent_[k]);
    const float3 left = normalize_or(lerp(normal_[k], normal_[next], best.t), normal_[k]);
    r.half_width = lerp(half_width_[k], half_width_[next], best.t);
    r.lateral = dot(p - r.point, left);
    r.distance = std::sqrt(best.distance2);
    float s = (static_cast<float>(k) + best.t) * sample_spacing();
    r.arc_length = s >= length_ ? s - length_ : s;
    r.full_search = full;
    return r;
  }

 private:
  /// Squared distance from `p` to segment k (samples k, k + 1), and the closest point's fraction t.
  TRACK_GEN_HD float segment_distance2(float3 p, int k, float& t) const {
    using namespace detail;
    const float3 a = position_[k];
    const float3 b = position_[k + 1 == num_samples_ ? 0 : k + 1];
    t = closest_parameter(p, a, b);
    const float3 d = p - lerp(a, b, t);
    return dot(d, d);
  }
  TRACK_GEN_HD float segment_distance2(float3 p, int k) const {
    float t;
    return segment_distance2(p, k, t);
  }

  TRACK_GEN_HD void scan_segment(float3 p, int k, nearest_segment& best) const {
    float t;
    const float d2 = segment_distance2(p, k, t);
    if (d2 < best.distance2) best = nearest_segment{k, t, d2};
  }

  const float3* position_ = nullptr;
  const float3* tangent_ = nullptr;
  const float3* normal_ = nullptr;
  const float* half_width_ = nullptr;
  const float* curvature_ = nullptr;
  const float3* gate_centre_ = nullptr;
  const float3* gate_normal_ = nullptr;
  const float* gate_half_width_ = nullptr;
  const float* gate_arc_length_ = nullptr;
  float length_ = 0.0f;
  int num_samples_ = 0;
  int num_gates_ = 0;
  std::uint32_t status_ = 0;
};

/// Does the segment a -> b cross gate `g` forwards through its opening? Forward means from the
/// negative to the non-negative side of the gate plane (normal = track tangent); the opening
/// is |lateral| <= half_width along the horizontal left axis and |vertical| <= half_height.
TRACK_GEN_HD inline bool crosses_gate(const gate& g, float3 a, float3 b, float half_height) {
  using namespace detail;
  const float da = dot(a - g.centre, g.normal);
  const float db = dot(b - g.centre, g.normal);
  if (!(da < 0.0f && db >= 0.0f)) return false;
  const float3 x = lerp(a, b, da / (da - db));
  const float3 left = normalize_or(f3(-g.normal.y, g.normal.x, 0.0f), f3(0.0f, 1.0f, 0.0f));
  const float3 up = cross(g.normal, left);
  const float3 r = x - g.centre;
  return std::fabs(dot(r, left)) <= g.half_width && std::fabs(dot(r, up)) <= half_height;
}

namespace detail {
/// Progress state of env e at the start line: next gate 1 (0 when the track has one gate),
/// nothing passed, no last position. Shared by regeneration and course_ref.
TRACK_GEN_HD inline void reset_progress(const progress_arrays& pa, int e, int num_gates) {
  pa.next_gate[e] = num_gates > 1 ? 1 : 0;
  pa.laps[e] = 0;
  pa.gates_passed[e] = 0;
  pa.lap_progress[e] = 0.0f;
  pa.lateral[e] = 0.0f;
  pa.hint[e] = 0;
  pa.last_position[e] = f3(0.0f, 0.0f, 0.0f);
  pa.flags[e] = 0u;
}
}  // namespace detail

#if defined(__CUDACC__)
namespace detail {
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

/// Trivially copyable view of a whole course: tracks, gates and progress of every env.
/// Pass it by value into your kernels; its members are `__host__ __device__`.
class course_ref {
 public:
  course_ref() = default;
  course_ref(const track_arrays& tracks, const progress_arrays& progress, int num_envs,
             int num_samples, int max_gates, int window, float gate_half_height)
      : tracks_(tracks),
        progress_(progress),
        num_envs_(num_envs),
        num_samples_(num_samples),
        max_gates_(max_gates),
        window_(window),
        gate_half_height_(gate_half_height) {}

  TRACK_GEN_HD int num_envs() const { return num_envs_; }
  TRACK_GEN_HD int num_samples() const { return num_samples_; }
  TRACK_GEN_HD int max_gates() const { return max_gates_; }
  TRACK_GEN_HD const track_arrays& tracks() const { return tracks_; }
  TRACK_GEN_HD const progress_arrays& progress_data() const { return progress_; }
  /// The track of env e in [0, num_envs()).
  TRACK_GEN_HD track_ref track(int e) const { return track_ref(tracks_, e, num_samples_, max_gates_); }
  /// Gate g of env e.
  TRACK_GEN_HD track_gen::gate gate(int e, int g) const { return track(e).gate(g); }
  /// Env e's progress state, by value.
  TRACK_GEN_HD progress_state progress(int e) const {
    return {progress_.next_gate[e], progress_.laps[e],   progress_.gates_passed[e],
            progress_.lap_progress[e], progress_.lateral[e], progress_.hint[e],
            progress_.last_position[e], progress_.flags[e]};
  }

  /// Resets env e's progress to the start line (next gate 1, nothing passed, no last position).
  TRACK_GEN_HD void reset_progress(int e) const { detail::reset_progress(progress_, e, tracks_.num_gates[e]); }

  /// Advances env e's progress to position `p` [m, env-local frame] (DESIGN §4): projection,
  /// lateral offset, off-track, gates passed in order (several per step allowed), laps,
  /// wrong-way. A non-finite `p` leaves the state unchanged, sets `status::invalid_input` and
  /// reports `progress_flags::invalid_position` (this step's other event bits are cleared).
  /// Not thread-safe for the same e.
  TRACK_GEN_HD void step(int e, float3 p) const {
    pending_step s;
    if (!begin_step(e, p, s)) return;
    if (s.full_search) track(e).scan_segments(p, 0, 1, s.nearest);
    finish_step(e, p, s);
  }

#if defined(__CUDACC__)
  /// step() by the 32 lanes of a warp together, for the user's kernels as for the library's:
  /// the same result as step(e, p) in each lane, bit for bit, but the O(N) searches (the first
  /// step after a reset, jumps, agents off the track) are shared: for each lane that needs one,
  /// lane l of the warp scans segments l, l + 32, ... (coalesced loads) and a shuffle reduction
  /// keeps the first minimum. Device code only. Every lane of the warp must call it, converged
  /// (a block size that is a multiple of 32, no early return before it), on the same course
  /// (each lane scans the owner's env in its own view's arrays); lanes without an env pass
  /// `active = false` (their `e` and `p` are not read). Not checked: `__activemask()` may see a
  /// warp that has not reconverged yet, so it cannot tell a missing lane from a late one.
  __device__ void step_warp(int e, float3 p, bool active) const {
    constexpr unsigned all_lanes = 0xffffffffu;
    const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int lane = static_cast<int>(linear % 32u);
    pending_step s;
    const bool going = active && begin_step(e, p, s);
    unsigned waiting = __ballot_sync(all_lanes, going && s.full_search);
    while (waiting != 0u) {
      const int owner = __ffs(static_cast<int>(waiting)) - 1;
      waiting &= waiting - 1u;
      const int env = __shfl_sync(all_lanes, e, owner);
      const float3 q = detail::f3(__shfl_sync(all_lanes, p.x, owner), __shfl_sync(all_lanes, p.y, owner),
                                  __shfl_sync(all_lanes, p.z, owner));
      nearest_segment mine;
      track(env).scan_segments(q, lane, 32, mine);
      const nearest_segment best = detail::warp_nearest(mine);
      if (lane == owner) s.nearest = best;
    }
    if (going) finish_step(e, p, s);
  }
#endif

  /// What step() carries from its local search to the rest of the step.
  struct pending_step {
    std::uint32_t flags = 0;  ///< the progress flags, this step's events cleared
    nearest_segment nearest;  ///< the local search's result, or the O(N) search's once done
    bool full_search = false; ///< the O(N) search is needed (`nearest` is then reset for it)
  };

  /// step() in phases (step_warp is built from them): begin_step, then, when `s.full_search`, a
  /// scan of all N segments into `s.nearest` (track_ref::scan_segments), then finish_step.
  /// begin_step returns false when `p` is not finite; it has then recorded that, and the step
  /// is over.
  TRACK_GEN_HD bool begin_step(int e, float3 p, pending_step& s) const {
    using namespace detail;
    s.flags = progress_.flags[e] & ~progress_flags::step_events;
    if (!is_finite(p)) {
      progress_.flags[e] = s.flags | progress_flags::invalid_position;
      tracks_.status[e] |= status::invalid_input;
      return false;
    }
    const bool has_last = (s.flags & progress_flags::has_last) != 0u;
    s.full_search = track(e).project_local(p, progress_.hint[e], has_last ? window_ : 0, s.nearest);
    return true;
  }

  /// The rest of step() once `s.nearest` is final (see begin_step).
  TRACK_GEN_HD void finish_step(int e, float3 p, const pending_step& s) const {
    using namespace detail;
    const track_ref tr = track(e);
    std::uint32_t flags = s.flags;
    const bool has_last = (flags & progress_flags::has_last) != 0u;
    const projection pr = tr.projection_at(p, s.nearest, s.full_search);
    if (pr.full_search && has_last) flags |= progress_flags::full_search;
    if (std::fabs(pr.lateral) > pr.half_width) flags |= progress_flags::off_track;
    if (has_last) {
      const float3 a = progress_.last_position[e];
      const float3 d = p - a;
      if (dot(d, d) > 1e-12f && dot(d, pr.tangent) < 0.0f) flags |= progress_flags::wrong_way;
      const int num_gates = tr.num_gates();
      int next = progress_.next_gate[e];
      int passed = 0;
      // Gates count only in order: test the next gate, then its successor, at most G times.
      while (passed < num_gates && crosses_gate(tr.gate(next), a, p, gate_half_height_)) {
        flags |= progress_flags::gate_passed;
        if (next == 0) {
          flags |= progress_flags::lap_completed;
          progress_.laps[e] += 1;
        }
        next = next + 1 == num_gates ? 0 : next + 1;
        ++passed;
      }
      progress_.next_gate[e] = next;
      progress_.gates_passed[e] += passed;
    }
    progress_.lap_progress[e] = pr.arc_length;
    progress_.lateral[e] = pr.lateral;
    progress_.hint[e] = pr.segment;
    progress_.last_position[e] = p;
    progress_.flags[e] = flags | progress_flags::has_last;
  }

 private:
  track_arrays tracks_;
  progress_arrays progress_;
  int num_envs_ = 0;
  int num_samples_ = 0;
  int max_gates_ = 0;
  int window_ = 8;
  float gate_half_height_ = 1.0f;
};

}  // namespace track_gen

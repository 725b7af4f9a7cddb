#pragma once
/// @file
/// `progress_tracker`: the progress of one agent per environment along its track (gates in
/// order, laps, lateral offset, off-track, wrong way; docs/guide.md), and `progress_tracker_ref`,
/// its trivially copyable view whose `step` runs in the library's kernel, on the host backend
/// and in users' own kernels.

#include <track_gen/detail/fields.hpp>
#include <track_gen/detail/ops.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/snapshot.hpp>
#include <track_gen/spawn.hpp>
#include <track_gen/status.hpp>
#include <track_gen/track_batch.hpp>
#include <track_gen/track_ref.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace track_gen {

/// Pointers to the progress state of a batch ([E] each; detail/fields.hpp lists the fields).
struct progress_arrays {
#define TRACK_GEN_POINTER(name, type, ext, doc) type* name = nullptr;
  TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_POINTER)
#undef TRACK_GEN_POINTER

  /// The arrays of one allocation at `base` laid out by `layout`.
  template <class Layout>
  static progress_arrays at(unsigned char* base, const Layout& layout) {
    progress_arrays a;
    std::size_t i = 0;
#define TRACK_GEN_AT(name, type, ext, doc) a.name = reinterpret_cast<type*>(base + layout.offset[i++]);
    TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_AT)
#undef TRACK_GEN_AT
    return a;
  }
};

/// How the gates of the tracks a progress tracker follows lie along their centrelines: what
/// step() may assume when it looks for a wrong checkpoint near the agent.
enum class gate_layout : int {
  /// Gate g at arc length g L / G (stages::checkpoints: generated tracks, user tracks,
  /// circuits): the gates near the agent follow from its arc length, with no memory read.
  even = 0,
  /// Any arc lengths ascending in g within [0, L) (stages::gate_checkpoints: gate courses, gates
  /// at anchors): a binary search of gate_arc_length, each step.
  anchored = 1,
};

/// One environment's progress, by value.
struct progress_state {
#define TRACK_GEN_VALUE(name, type, ext, doc) type name;
  TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_VALUE)
#undef TRACK_GEN_VALUE
};

namespace detail {
using progress_layout = soa_layout<sizeof(progress_fields) / sizeof(progress_fields[0])>;

/// No gate held for env e: its next step reads its next gate from the track (the track may
/// be new since the copy was taken, with the same next gate index).
TRACK_GEN_HD inline void forget_held_gate(const progress_arrays& pa, int e) {
  pa.held_gate[e] = -1;
  pa.held_gate_centre[e] = f3(0.0f, 0.0f, 0.0f);
  pa.held_gate_normal[e] = f3(0.0f, 0.0f, 0.0f);
}

/// Progress state of env e at the start line: next gate 1 (0 when the track has one gate), G
/// gates to the first lap (it counts at gate 0), nothing passed, no last position.
TRACK_GEN_HD inline void reset_progress(const progress_arrays& pa, int e, int num_gates) {
  pa.next_gate[e] = num_gates > 1 ? 1 : 0;
  pa.laps[e] = 0;
  pa.gates_passed[e] = 0;
  pa.gates_to_lap[e] = num_gates;
  pa.lap_progress[e] = 0.0f;
  pa.lateral[e] = 0.0f;
  pa.hint[e] = 0;
  pa.last_position[e] = f3(0.0f, 0.0f, 0.0f);
  pa.flags[e] = 0u;
  pa.checkpoint_passed[e] = -1;
  pa.wrong_checkpoint[e] = -1;
  forget_held_gate(pa, e);
}

/// What a generator does for an env whose track it has just rebuilt (before anything reads
/// it): nothing.
struct no_env_hook {
  TRACK_GEN_HD void operator()(int, int) const {}
};

/// The progress tracker's part of a regeneration: env e's progress back to the start line.
/// Called by the block that built env e's track, in the same kernel (no extra launch).
struct progress_reset_hook {
  progress_arrays progress;
  TRACK_GEN_HD void operator()(int e, int num_gates) const { reset_progress(progress, e, num_gates); }
};
}  // namespace detail

namespace detail {
/// The gates of one env, as step()'s wrong-gate search reads them (pointers at the env's first
/// gate, in the batch's memory space).
struct gate_list {
  const float3* centre;
  const float3* normal;
  const float* half_width;
  const float* arc_length;  ///< ascending in g, in [0, length)
  int num_gates;
  float length;        ///< centreline length L [m]
  float half_height;   ///< half-height of every opening [m]
};

/// The first gate of gates first, ..., first + count - 1 (indices modulo G; at most G of them)
/// met along the motion (ascending when `forward`) whose opening the segment a-p crosses either
/// way, skipping first_next and the `passed` gates after it (at least first_next); -1 when none.
TRACK_GEN_HD inline int crossing_among(gate_list gates, int first, int count, bool forward, float3 a, float3 p,
                                       int first_next, int passed) {
  const int num_gates = gates.num_gates;
  const int step = forward ? 1 : -1, skipped = passed > 0 ? passed : 1;
  for (int i = 0, g = forward ? first : first + count - 1; i < (count < num_gates ? count : num_gates); ++i, g += step) {
    const int k = wrap(g, num_gates);
    if (wrap(k - first_next, num_gates) < skipped) continue;
    const float3 centre = gates.centre[k], normal = gates.normal[k];
    // One evaluation of each side, shared by the test below (crosses_opening_at).
    const float da = dot(a - centre, normal), dp = dot(p - centre, normal);
    if ((da < 0.0f) == (dp < 0.0f)) continue;  // a and p on one side
    const auto half_width = [&] { return gates.half_width[k]; };
    if (crosses_opening_at(centre, normal, half_width, a, p, da, dp, gates.half_height) ||
        crosses_opening_at(centre, normal, half_width, p, a, dp, da, gates.half_height))
      return k;
  }
  return -1;
}

/// crossing_among over the gates whose arc length, taken around the loop, lies in [lo, hi] (lo
/// may be negative, hi beyond L; hi - lo < L): a binary search of the ascending arc lengths for
/// the first, then a walk while they stay in range. For gates at any arc lengths
/// (gate_layout::anchored).
TRACK_GEN_HD inline int anchored_crossing(gate_list gates, float lo, float hi, bool forward, float3 a, float3 p,
                                          int first_next, int passed) {
  const int num_gates = gates.num_gates;
  const float length = gates.length;
  float from = lo - std::floor(lo / length) * length;  // lo wrapped into [0, L)
  if (from >= length) from = 0.0f;
  int first = 0, end = num_gates;  // the first gate at or after `from` (num_gates: gate 0, next lap)
  while (first < end) {
    const int mid = (first + end) / 2;
    if (gates.arc_length[mid] < from) first = mid + 1;
    else end = mid;
  }
  int count = 0;
  for (; count < num_gates; ++count) {
    const int g = first + count;
    const float arc = g < num_gates ? gates.arc_length[g] : gates.arc_length[g - num_gates] + length;
    if (arc - from > hi - lo) break;
  }
  return count > 0 ? crossing_among(gates, first, count, forward, a, p, first_next, passed) : -1;
}
}  // namespace detail

/// Trivially copyable view of the progress state of a batch, with the tracks it follows.
/// Pass it by value (or see docs/guide.md, "Views inside conditional bodies"); its members are
/// `__host__ __device__` (`step_warp`: `__device__`). Valid while its tracker and batch live.
class progress_tracker_ref {
 public:
  progress_tracker_ref() = default;
  progress_tracker_ref(const track_batch_ref& tracks, const progress_arrays& progress, int window, float gate_half_height,
                       gate_layout layout = gate_layout::anchored)
      : tracks_(tracks), progress_(progress), window_(window), gate_half_height_(gate_half_height), layout_(layout) {}

  TRACK_GEN_HD int num_envs() const { return tracks_.num_envs(); }
  /// The tracks this state follows.
  TRACK_GEN_HD const track_batch_ref& tracks() const { return tracks_; }
  /// Every progress array ([E] each).
  TRACK_GEN_HD const progress_arrays& arrays() const { return progress_; }
  /// The track of env e.
  TRACK_GEN_HD track_ref track(int e) const { return tracks_.track(e); }
  /// Env e's progress state, by value.
  TRACK_GEN_HD progress_state progress(int e) const {
    progress_state s;
#define TRACK_GEN_READ(name, type, ext, doc) s.name = progress_.name[e];
    TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_READ)
#undef TRACK_GEN_READ
    return s;
  }
  /// Half-height of every gate's opening [m].
  TRACK_GEN_HD float gate_half_height() const { return gate_half_height_; }
  /// Segments searched around the hint before the O(N) search.
  TRACK_GEN_HD int window() const { return window_; }
  /// Where the gates lie along the tracks (gate_layout): how step() finds a wrong checkpoint.
  TRACK_GEN_HD gate_layout layout() const { return layout_; }

  /// Resets env e's progress to the start line (next gate 1, nothing passed, no last position).
  TRACK_GEN_HD void reset(int e) const { detail::reset_progress(progress_, e, tracks_.arrays().num_gates[e]); }

  /// Resets env e's progress as if its agent stood at arc length `s` [m] (any real: wrapped into
  /// [0, L)), `lateral` metres left of the centreline: put the agent at
  /// spawn_pose(track(e), s, lateral) (spawn.hpp) before its next step.
  ///
  /// The state: next gate and gates to the first lap from gates_after (spawn.hpp): the first
  /// gate ahead of s is the next one, and the first lap counts at the first gate reached once a
  /// full circuit from s is complete (at the gate at s itself when s is a gate's arc length,
  /// G crossings later; otherwise at the first gate after s, G + 1 crossings later), never
  /// before; later laps every G gates, at that same gate. Laps and gates passed 0; lap progress
  /// s, lateral offset `lateral`, hint the segment of s; and, unlike reset(), a last position:
  /// the spawn pose's. So the next step already tests the gates between the spawn point and the
  /// agent (an agent spawned 1 cm before a gate and moving 5 cm gets it on its first step);
  /// the agent must then be at or near that pose (moved by at most the projection window).
  /// reset(e) is spawn(e, 0) but for the last position (reset leaves none: the first step only
  /// initialises).
  ///
  /// A non-finite `s` or `lateral`, or a gate count out of range (track_ref::num_gates() = 0),
  /// resets env e to the start line (reset()) and sets `status::invalid_input` on its track. `lateral` is not bounded: keep it within the road
  /// (beyond the centre of curvature of a turn the gate planes' sides flip). Not thread-safe
  /// for the same e; O(log G).
  ///
  /// A track with ONE gate (G = 1: checkpoint_spacing > L / 2): step() undoes a backward
  /// crossing of the start line with the next forward one, which counts nothing (see
  /// progress_state::gates_to_lap), so crossing the line back and forth counts no laps.
  ///
  /// Returns the pose the progress now assumes: spawn_pose(track(e), s, lateral), or the start
  /// line's where the env was reset instead (put the agent there).
  TRACK_GEN_HD track_pose spawn(int e, float s, float lateral = 0.0f) const {
    using namespace detail;
    const track_ref tr = track(e);
    if (!(is_finite(s) && is_finite(lateral)) || tr.num_gates() < 1) {
      reset(e);
      tracks_.arrays().status[e] |= status::invalid_input;
      return spawn_pose(tr, 0.0f, 0.0f);
    }
    const track_pose pose = spawn_pose(tr, s, lateral);
    const spawn_gates g = gates_after(tr, pose.s, pose.position);
    progress_.next_gate[e] = g.next_gate;
    progress_.laps[e] = 0;
    progress_.gates_passed[e] = 0;
    progress_.gates_to_lap[e] = g.gates_to_lap;
    progress_.lap_progress[e] = pose.s;
    progress_.lateral[e] = lateral;
    progress_.hint[e] = pose.hint;
    progress_.last_position[e] = pose.position;
    progress_.flags[e] = progress_flags::has_last;
    progress_.checkpoint_passed[e] = -1;
    progress_.wrong_checkpoint[e] = -1;
    detail::forget_held_gate(progress_, e);
    return pose;
  }

  /// Advances env e's progress to position `p` [m, env-local frame] (docs/guide.md): projection,
  /// lateral offset, off-track, gates passed in order (several per step allowed), laps,
  /// wrong-way, and this step's gate events (the seed system's, fields.hpp):
  /// - `checkpoint_passed`: the gate passed in order by this step, the last of them when it
  ///   passed several; -1 when none;
  /// - `wrong_checkpoint`: a gate the segment from the last position to `p` crosses through
  ///   its opening, in either direction, other than the next gate at the start of the step and
  ///   the gates passed in order; the first met along the motion when several; -1 when none.
  ///   Only the gates within one segment of the segments the projection swept are tested (the
  ///   shorter way round, at most G; none on a usual step between gates): a jump across the
  ///   infield crossing gates far from both projections is not reported. The candidates come
  ///   from the gates' arc lengths (gate_layout: by arithmetic for evenly spaced gates, by a
  ///   binary search of gate_arc_length for gates at anchors). Always -1 on a one-gate track
  ///   (its only gate is the next one) and on the first step after a reset.
  /// A `p` that is not finite or has a coordinate beyond +-1e7 m (detail::max_position,
  /// docs/parameters.md: past ~1e19 m squared distances overflow) leaves the state unchanged,
  /// sets `status::invalid_input` and reports `progress_flags::invalid_position` (this step's
  /// other event bits are cleared, both gate events are -1).
  /// A gate state out of range (next_gate outside [0, G), or a stored gate count outside
  /// [1, G_max]: arrays written from outside the library) skips the gate tests and reports
  /// `progress_flags::invalid_state` and `status::invalid_input`; the rest of the step runs.
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
  /// keeps the first minimum (detail::warp_full_searches, as track_ref::project_warp). Device
  /// code only. Every lane of the warp must call it, converged (a block size that is a multiple
  /// of 32, no early return before it), on the same course (each lane scans the owner's env in
  /// its own view's arrays); lanes without an env pass `active = false` (their `e` and `p` are
  /// not read). Not checked: `__activemask()` may see a warp that has not reconverged yet, so
  /// it cannot tell a missing lane from a late one.
  __device__ void step_warp(int e, float3 p, bool active) const {
    pending_step s;
    const bool going = active && begin_step(e, p, s);
    // Every lane follows this course: the owner's env is enough to find its track.
    detail::warp_full_searches(going && s.full_search, s.nearest, [&](int owner, int lane, nearest_segment& mine) {
      track(__shfl_sync(0xffffffffu, e, owner)).scan_segments(detail::shfl_point(p, owner), lane, 32, mine);
    });
    if (going) finish_step(e, p, s);
  }
#endif

  /// What step() carries from its local search to the rest of the step.
  struct pending_step {
    std::uint32_t flags = 0;  ///< the progress flags, this step's events cleared
    nearest_segment nearest;  ///< the local search's result, or the O(N) search's once done
    bool full_search = false; ///< the O(N) search is needed (`nearest` is then reset for it)
    /// The progress fields finish_step reads when `flags` has progress_flags::has_last, loaded
    /// by begin_step with flags and hint, before the search: their loads then wait on memory
    /// together with the search's instead of after it.
    float3 last_position = {0.0f, 0.0f, 0.0f};
    int next_gate = 0;
    int held_gate = -1;
    float3 held_gate_centre = {0.0f, 0.0f, 0.0f};
    float3 held_gate_normal = {0.0f, 0.0f, 0.0f};
    float lap_progress = 0.0f;
  };

  /// step() in phases (step_warp is built from them): begin_step, then, when `s.full_search`, a
  /// scan of all N segments into `s.nearest` (track_ref::scan_segments), then finish_step.
  /// begin_step returns false when `p` is invalid (not finite, or a coordinate beyond +-1e7 m);
  /// it has then recorded that, and the step is over. finish_step works on the progress fields
  /// that begin_step read into `s`: nothing may write env e's progress between the two calls.
  TRACK_GEN_HD bool begin_step(int e, float3 p, pending_step& s) const {
    using namespace detail;
    s.flags = progress_.flags[e] & ~progress_flags::step_events;
    if (!is_position(p)) {
      progress_.flags[e] = s.flags | progress_flags::invalid_position;
      progress_.checkpoint_passed[e] = -1;
      progress_.wrong_checkpoint[e] = -1;
      tracks_.arrays().status[e] |= status::invalid_input;
      return false;
    }
    const bool has_last = (s.flags & progress_flags::has_last) != 0u;
    if (has_last) {
      s.last_position = progress_.last_position[e];
      s.next_gate = progress_.next_gate[e];
      s.held_gate = progress_.held_gate[e];
      s.held_gate_centre = progress_.held_gate_centre[e];
      s.held_gate_normal = progress_.held_gate_normal[e];
      s.lap_progress = progress_.lap_progress[e];
    }
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
    int passed_gate = -1, wrong_gate = -1;
    if (has_last) {
      const float3 a = s.last_position;
      const float3 d = p - a;
      if (dot(d, d) > 1e-12f && dot(d, pr.tangent) < 0.0f) flags |= progress_flags::wrong_way;
      const int num_gates = tr.num_gates();
      const int first_next = s.next_gate;
      // A gate state written from outside the library (next_gate outside [0, G), or a gate count
      // out of range, read as G = 0) would index beyond the gates: no gate test this step.
      const bool gates_usable = first_next >= 0 && first_next < num_gates;
      if (!gates_usable) {
        flags |= progress_flags::invalid_state;
        tracks_.arrays().status[e] |= status::invalid_input;
      }
      int next = first_next;
      int to_lap = 0;
      int passed = 0;
      // The plane of the gate under test: the held copy when it is that gate's (one coalesced
      // load of the progress arrays), else the track's (two scattered reads of DRAM); the
      // half-width only once the plane is crossed. `loaded` is the gate in `centre`, `normal`.
      const int held = gates_usable ? s.held_gate : -1;
      float3 centre = f3(0.0f, 0.0f, 0.0f), normal = centre;
      int loaded = -1;
      const auto load = [&](int g) {
        const bool copy = g == held;
        centre = copy ? s.held_gate_centre : tr.arrays().gate_centre[g];
        normal = copy ? s.held_gate_normal : tr.arrays().gate_normal[g];
        loaded = g;
      };
      const auto crosses = [&](int g, float3 from, float3 to) {
        if (loaded != g) load(g);
        return crosses_opening(centre, normal, [&] { return tr.arrays().gate_half_width[g]; }, from, to, gate_half_height_);
      };
      // One gate (G = 1): the next gate is always gate 0, so crossing it backwards must be
      // undone before a forward crossing counts again (else wiggling over the line farms laps).
      // A backward crossing negates the countdown (pending); the next forward crossing restores
      // it and counts nothing. Tracks with more gates never read the countdown here.
      bool undone = !gates_usable;
      if (gates_usable && num_gates == 1) {
        const int pending = progress_.gates_to_lap[e];
        if (pending < 0 ? crosses(0, a, p) : crosses(0, p, a)) {
          progress_.gates_to_lap[e] = -pending;
          undone = true;
        }
      }
      // Gates count only in order: test the next gate, then its successor, at most G times. A
      // lap counts when the countdown of gates to the lap ends (after a reset: at gate 0); the
      // countdown is read and written only on steps that pass a gate.
      while (!undone && passed < num_gates && crosses(next, a, p)) {
        if (passed == 0) to_lap = progress_.gates_to_lap[e];
        flags |= progress_flags::gate_passed;
        if (to_lap <= 1) {
          flags |= progress_flags::lap_completed;
          progress_.laps[e] += 1;
          to_lap = num_gates;
        } else {
          --to_lap;
        }
        next = next + 1 == num_gates ? 0 : next + 1;
        ++passed;
      }
      if (passed > 0) passed_gate = next == 0 ? num_gates - 1 : next - 1;
      // Hold the next gate for the steps to come (the loop has usually just read it).
      if (gates_usable && held != next) {
        if (loaded != next) load(next);
        progress_.held_gate[e] = next;
        progress_.held_gate_centre[e] = centre;
        progress_.held_gate_normal[e] = normal;
      }
      if (gates_usable && num_gates > 1) wrong_gate = wrong_crossing(tr, s.lap_progress, pr, a, p, first_next, passed);
      if (passed > 0) {  // the usual step passes no gate and writes none of these
        progress_.next_gate[e] = next;
        progress_.gates_to_lap[e] = to_lap;
        progress_.gates_passed[e] += passed;
      }
    } else if (tr.num_gates() == 1 && pr.arc_length > 0.5f * tr.length() && progress_.gates_to_lap[e] > 0) {
      // The first step after a reset, one gate: the reset deems gate 0 passed, but an agent in the
      // back half of the loop has not passed it since: its first forward crossing only restores
      // that (as on tracks with more gates, where gate 0 is not the next one after a reset).
      progress_.gates_to_lap[e] = -progress_.gates_to_lap[e];
    }
    progress_.lap_progress[e] = pr.arc_length;
    progress_.lateral[e] = pr.lateral;
    progress_.hint[e] = pr.segment;
    progress_.last_position[e] = p;
    progress_.flags[e] = flags | progress_flags::has_last;
    progress_.checkpoint_passed[e] = passed_gate;
    progress_.wrong_checkpoint[e] = wrong_gate;
  }

 private:
  /// step()'s wrong_checkpoint: the first gate, along the motion from `a` to `p`, that the
  /// segment crosses either way, among the gates whose arc length lies within one sample
  /// spacing of the arc lengths swept from `a`'s projection (`from_arc`, the last step's) to
  /// `p`'s (`pr`), the shorter way round (at most G gates), skipping `first_next` (the next gate
  /// at the start of the step) and the `passed` gates after it that the step passed in order.
  /// -1 when none. G > 1.
  ///
  /// Why one sample spacing is enough: a crossing point lies on the gate's plane (normal to the
  /// tangent at the gate) within its opening, at most the half-width from the centreline, where
  /// the validated turn radius exceeds the half-width; its foot on the centreline polyline is
  /// then within a segment of the gate, and for a step that stays in the road's tube the feet
  /// of a and p bracket it.
  ///
  /// The candidates: with gate_layout::even (gate g at g L / G) by arithmetic, no memory read,
  /// so the usual step (far from a gate) reads no gate at all; with gate_layout::anchored by a
  /// binary search of the env's gate_arc_length (ascending in g, in [0, L)).
  TRACK_GEN_HD int wrong_crossing(const track_ref& tr, float from_arc, const projection& pr, float3 a, float3 p,
                                  int first_next, int passed) const {
    using namespace detail;
    const float length = tr.length(), ds = tr.sample_spacing();
    float moved = pr.arc_length - from_arc;  // the shorter way round, in [-L/2, L/2]
    if (moved > 0.5f * length) moved -= length;
    else if (moved < -0.5f * length) moved += length;
    const float lo = from_arc + (moved < 0.0f ? moved : 0.0f) - ds;
    const float hi = from_arc + (moved > 0.0f ? moved : 0.0f) + ds;
    if (layout_ == gate_layout::even) {
      const float per_metre = static_cast<float>(tr.num_gates()) / length;
      const int first = static_cast<int>(std::ceil(lo * per_metre)), last = static_cast<int>(std::floor(hi * per_metre));
      if (last < first) return -1;  // the usual step: no gate nearby, nothing read
      return detail::crossing_among(gate_list_of(tr), first, last - first + 1, moved >= 0.0f, a, p, first_next, passed);
    }
    return detail::anchored_crossing(gate_list_of(tr), lo, hi, moved >= 0.0f, a, p, first_next, passed);
  }

  TRACK_GEN_HD detail::gate_list gate_list_of(const track_ref& tr) const {
    const track_arrays& t = tr.arrays();
    return {t.gate_centre, t.gate_normal, t.gate_half_width, t.gate_arc_length, tr.num_gates(), tr.length(), gate_half_height_};
  }

  track_batch_ref tracks_;
  progress_arrays progress_;
  int window_ = 8;
  float gate_half_height_ = 1.0f;
  gate_layout layout_ = gate_layout::anchored;
};

/// The progress of one agent per env along the tracks of a batch. Owns the progress arrays;
/// reads the batch (which must outlive it, or share its memory). Move-only.
///
/// @tparam Policy backend, ownership and tuning (policy.hpp; `tuning::projection_window`,
///         `step_block_threads`). Memory space as the batch's.
template <class Policy = policy<>>
class progress_tracker {
  using ops = typename detail::backend_ops<typename Policy::backend_type>::type;
  using tuning = typename Policy::tuning;
  static constexpr bool is_anchored = std::is_same_v<typename Policy::ownership_policy, ownership::anchored>;

 public:
  using stream_type = typename Policy::backend_type::stream_type;

  /// Bytes of memory a tracker of `num_envs` envs needs.
  static std::size_t required_bytes(int num_envs) { return plan(num_envs).bytes; }

  /// Allocates the progress state of every env of `tracks`, reset to the start line of the
  /// tracks the batch holds now (asynchronous on `stream`). The reset reads each env's gate
  /// count: build the tracker after the batch's first generate, or reset() it after every
  /// generate that does not run this tracker's reset_hook(). A tracker reset over an empty
  /// batch (0 gates) counts gates and laps wrongly on the tracks generated later, and nothing
  /// flags it. A generator given reset_hook() (generator.hpp) resets each env it rebuilds, in
  /// the same kernel, as the course does.
  /// @param gate_half_height half-height of every gate's opening [m], > 0.
  /// @param gates where the batch's gates lie (gate_layout): gate_layout::even only for tracks
  ///        whose gate g sits at g L / G (stages::checkpoints), which makes the step's wrong-gate
  ///        search free of memory reads; gate_layout::anchored (the default) is right for any
  ///        ascending gate arc lengths.
  /// @throws std::invalid_argument gate_half_height <= 0. @throws capture_error `stream` is
  ///         capturing (this allocates). @throws cuda_error a CUDA call failed.
  progress_tracker(const track_batch<Policy>& tracks, float gate_half_height, gate_layout gates, stream_type stream = {})
      : progress_tracker(tracks.view(), gate_half_height, gates, nullptr, tracks.owner(), stream) {
    reset(env_mask{}, stream);
  }
  /// The tracker of gate_layout::anchored gates (see above).
  progress_tracker(const track_batch<Policy>& tracks, float gate_half_height, stream_type stream = {})
      : progress_tracker(tracks, gate_half_height, gate_layout::anchored, stream) {}

  /// For composers (course): over `memory` (required_bytes, 256-byte aligned, the backend's
  /// memory space; null: allocate), zeroed: the state is then reset by the generator's hook
  /// (reset_hook) or by reset(). `also_keep`: what else the captures of its calls must keep
  /// alive (the batch's owner; with ownership::anchored).
  progress_tracker(const track_batch_ref& tracks, float gate_half_height, gate_layout gates,
                   std::shared_ptr<unsigned char> memory, std::shared_ptr<const void> also_keep, stream_type stream)
      : layout_(plan(tracks.num_envs())) {
    if (!(gate_half_height > 0.0f))
      throw std::invalid_argument("track_gen: progress_tracker: gate_half_height = " + std::to_string(gate_half_height) +
                                  " m, expected > 0");
    typename ops::mode_guard guard(Policy::capture_mode::value);  // around the capture-unsafe calls
    if (memory == nullptr) {
      ops::require_not_capturing(stream, "progress_tracker construction");
      memory = ops::allocate_shared(layout_.bytes);
    }
    memory_ = std::move(memory);
    if constexpr (is_anchored) anchor_ = detail::keep_both(memory_, std::move(also_keep));
    ops::template prepare_progress<tuning, progress_tracker_ref>();
    ops::zero(memory_.get(), layout_.bytes, stream);
    view_ = progress_tracker_ref(tracks, progress_arrays::at(memory_.get(), layout_.arrays), tuning::projection_window,
                                 gate_half_height, gates);
    if constexpr (ops::kernels_read_resident_views) {
      ops::copy_from_host(memory_.get() + layout_.resident, &view_, sizeof(view_), stream);
      resident_ = reinterpret_cast<const progress_tracker_ref*>(memory_.get() + layout_.resident);
    }
  }

  progress_tracker(progress_tracker&&) noexcept = default;
  progress_tracker& operator=(progress_tracker&&) noexcept = default;
  progress_tracker(const progress_tracker&) = delete;
  progress_tracker& operator=(const progress_tracker&) = delete;

  /// Binds the agents' positions: `float3 [E]` [m, env-local frame], owned by the caller, read by
  /// every `step`. Device (or managed) memory for `backend::cuda`.
  /// @throws std::invalid_argument `positions` is null, or a host pointer with backend::cuda.
  void bind(const float3* positions) {
    if (positions == nullptr) throw std::invalid_argument("track_gen: bind: positions is null");
    ops::require_device_pointer(positions, "bind: positions");
    positions_ = positions;
  }

  /// Advances every env's progress to its bound position (docs/guide.md). Asynchronous; allocates
  /// and synchronises nothing; recorded into the capture when `stream` is capturing.
  /// @throws std::logic_error no positions are bound. @throws capture_error the capture was invalidated.
  void step(stream_type stream) {
    require_alive();
    if (positions_ == nullptr) throw std::logic_error("track_gen: step: no positions bound; call bind(positions) first");
    ops::begin_call(calls_, anchor_, stream);
    ops::template step<tuning>(view_, resident_, positions_, stream);
  }

  /// Resets the progress of the envs with a nonzero `mask` entry (null: every env) to the start
  /// line of their current track. Asynchronous; allocates and synchronises nothing.
  /// @param mask [E] int32 / bool / uint8 in the backend's memory, or env_mask{} for all.
  void reset(env_mask mask, stream_type stream) {
    require_alive();
    if (!mask.all()) ops::require_device_pointer(mask.data, "reset: mask");
    ops::begin_call(calls_, anchor_, stream);
    ops::reset_progress(view_, resident_, mask, stream);
  }

  /// The type of reset_hook(): a generator's `OnRebuilt` template argument.
  using reset_hook_type = detail::progress_reset_hook;
  /// What a generator calls for each env it rebuilds: that env's progress back to the start line
  /// (pass it to the generator's constructor; generator.hpp).
  reset_hook_type reset_hook() const { return {view_.arrays()}; }

  /// The view for kernels and host code. @throws std::logic_error the tracker was moved from.
  progress_tracker_ref view() const {
    require_alive();
    return view_;
  }
  /// The shared owner of the tracker's memory.
  std::shared_ptr<const void> owner() const { return memory_; }

  /// Copies every env's progress to the host. Synchronises `stream`; not for the step path.
  /// @throws capture_error `stream` is capturing.
  progress_snapshot copy(stream_type stream, int capture_mode = 0) const {
    require_alive();
    ops::require_not_capturing(stream, "copy_progress");
    const std::size_t e = static_cast<std::size_t>(view_.num_envs());
    const progress_arrays& a = view_.arrays();
    progress_snapshot s;
#define TRACK_GEN_COPY(name, type, ext, doc) \
  s.name.resize(e);                         \
  ops::copy_to_host_async(s.name.data(), a.name, e * sizeof(type), stream);
    TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_COPY)
#undef TRACK_GEN_COPY
    ops::synchronize(stream, capture_mode);
    return s;
  }

 private:
  struct layout {
    detail::progress_layout arrays;
    std::size_t resident = 0, bytes = 0;
  };
  static layout plan(int num_envs) {
    layout l;
    l.arrays = detail::progress_layout::make(detail::progress_fields, num_envs, 1, 1);
    l.resident = l.arrays.bytes;
    l.bytes = l.resident + ((sizeof(progress_tracker_ref) + 255u) & ~std::size_t{255u});
    return l;
  }
  void require_alive() const {
    if (memory_ == nullptr) throw std::logic_error("track_gen: this progress_tracker (or course) was moved from");
  }

  layout layout_;
  std::shared_ptr<unsigned char> memory_;
  std::shared_ptr<const void> anchor_;  ///< what each capture retains (ownership::anchored)
  progress_tracker_ref view_;
  const progress_tracker_ref* resident_ = nullptr;  ///< view_ in the tracker's memory (kernels read it)
  const float3* positions_ = nullptr;
  typename ops::call_state calls_{};
};

}  // namespace track_gen

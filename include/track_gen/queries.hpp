#pragma once
/// @file
/// Batch queries: the per-env runtime utilities (localizer.hpp, observations.hpp, spawn.hpp,
/// collision.hpp, sdf.hpp, gate_collision.hpp, speed_profile.hpp, props.hpp, heightfield.hpp) applied to
/// every env of a batch at once, with `[E]`-shaped inputs and outputs, for host code that does
/// not write its own kernel (the C++ user's step loop, the Python extension).
///
/// Every function:
/// - takes the batch's view (`course.view().batch()`, a `track_batch_ref`; `spawn` and
///   `collide_gate_frames` take the `course_ref` itself, whose progress they write or read) and runs env e's query with `view.track(e)`,
///   for every e in [0, E), E = view.num_envs();
/// - is templated over the backend (`backend::cuda`: one CUDA thread per env, launched on
///   `stream`; `backend::host`: a loop on the calling thread), given explicitly or defaulting to
///   `backend::default_backend` (CUDA in a translation unit compiled by nvcc);
/// - takes the stream LAST, is asynchronous on it (CUDA), allocates nothing, synchronises
///   nothing, and is recorded into the capture when `stream` is capturing (one kernel node);
/// - reads and writes pointers in the backend's memory space (device or managed memory for
///   backend::cuda, checked with cudaPointerGetAttributes on each call; host memory for
///   backend::host), as structures of arrays indexed by env (`[E]`), or env-major `[E * K]`
///   (env e's K entries at [e K, e K + K));
/// - checks its scalar arguments and required pointers on the host before launching and throws
///   std::invalid_argument naming the argument and its valid range (nothing is launched then).
///
/// Frames, units and signs are those of the device functions (docs/runtime-utilities.md): each
/// env's track frame (subtract the env's `origin` from positions in your frame when the tracks
/// were re-centred), metres, radians, z up, lateral offsets and curvature positive to the LEFT.
///
/// The CUDA kernels take the query (its view and pointers) as a kernel argument. The library's
/// own step kernel reads its view from device memory instead, because a member call on a kernel
/// argument misread parameter space inside a conditional WHILE body (detail/progress/kernels.cuh);
/// these kernels copy the argument to a local first, but have not been tested inside WHILE
/// bodies.

#include <track_gen/collision.hpp>
#include <track_gen/course_ref.hpp>
#include <track_gen/detail/config.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/ops.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/gate_collision.hpp>
#include <track_gen/heightfield.hpp>
#include <track_gen/localizer.hpp>
#include <track_gen/observations.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/props.hpp>
#include <track_gen/sdf.hpp>
#include <track_gen/spawn.hpp>
#include <track_gen/speed_profile.hpp>
#include <track_gen/track_batch.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <initializer_list>
#include <type_traits>
#include <utility>

namespace track_gen {

/// Outputs of localize(), each `[E]` in the backend's memory; any may be null (not written).
struct localize_outputs {
  float* s = nullptr;               ///< arc length of the nearest centreline point, in [0, L) [m]
  float* n = nullptr;               ///< signed lateral offset [m], POSITIVE LEFT (the seed system's is positive right)
  float* vertical = nullptr;        ///< height above the centreline at the foot [m]
  float* curvature = nullptr;       ///< signed curvature at s [1/m], positive turning left
  float* heading = nullptr;         ///< yaw of the centreline at s, in (-pi, pi] [rad]
  std::uint8_t* lost = nullptr;     ///< 1 when the windowed search failed and all N segments were searched
};

/// Outputs of collide_boxes(), each `[E]` in the backend's memory; any may be null (not written).
struct box_contact_outputs {
  std::uint32_t* flags = nullptr;  ///< contact_flags bits: out_of_bounds, lost, invalid
  float* clearance = nullptr;      ///< signed clearance [m] (+ inside the road, - deepest penetration outside)
  float3* nearest = nullptr;       ///< border point facing the critical corner [m], track frame
  float3* normal = nullptr;        ///< unit inward normal there
  int* side = nullptr;             ///< which border: 0 left, 1 right (border_side)
};

/// Outputs of collide_box_discs(), each `[E]` in the backend's memory; any may be null (not
/// written). The fields of disc_hit (collision.hpp).
struct disc_hit_outputs {
  std::uint32_t* flags = nullptr;  ///< contact_flags bits: hit (depth >= 0), invalid
  float* depth = nullptr;          ///< penetration depth of the deepest disc [m] (- the gap when none hits; -Inf when none)
  float3* point = nullptr;         ///< nearest point of the box's outline to that disc [m], track frame
  float3* normal = nullptr;        ///< unit horizontal normal from the box toward the disc
  int* disc = nullptr;             ///< that disc's index in the env's row, -1 when none (or invalid)
};

/// Outputs of collide_gate_frames(), each `[E]` in the backend's memory; any may be null (not
/// written). The fields of gate_frame_hit (gate_collision.hpp).
struct gate_frame_outputs {
  std::uint32_t* flags = nullptr;  ///< contact_flags bits: hit, invalid
  float* depth = nullptr;          ///< penetration depth [m], >= 0 (0: no hit, or invalid)
  float* distance = nullptr;       ///< signed distance of the sphere's centre to the frame [m] (- inside a member; NaN when invalid)
  float3* point = nullptr;         ///< nearest point of the frame's surface [m], track frame
  float3* normal = nullptr;        ///< unit contact normal, from the frame toward the sphere
  int* member = nullptr;           ///< gate_member: 0 left post, 1 right post, 2 top bar, 3 bottom bar; -1 invalid
  int* gate = nullptr;             ///< index of the gate hit (or nearest); -1 invalid
};

namespace detail {

/// A pointer argument and its name, for the messages.
using named_pointer = std::pair<const void*, const char*>;

/// Host-side pointer checks of a batch query `fn`: std::invalid_argument "track_gen: <fn>:
/// <name> is null" for a null `required` pointer; for every non-null pointer of both lists, its
/// memory space on `Backend` (device or managed memory for backend::cuda; nothing to check on
/// the host).
template <class Backend>
void check_pointers(const char* fn, std::initializer_list<named_pointer> required,
                    std::initializer_list<named_pointer> optional = {}) {
  using ops = typename backend_ops<Backend>::type;
  for (const named_pointer& p : required)
    if (p.first == nullptr) throw std::invalid_argument(std::string("track_gen: ") + fn + ": " + p.second + " is null");
  for (const auto* list : {&required, &optional})
    for (const named_pointer& p : *list)
      if (p.first != nullptr) ops::require_device_pointer(p.first, (std::string(fn) + ": " + p.second).c_str());
}

/// Runs `op(e)` for every e in [0, count) on `Backend` (primary: the host loop; the CUDA
/// specialisation, a kernel of one thread per env, is in detail/queries/kernels.cuh).
template <class Backend>
struct query_runner {
  static_assert(std::is_same_v<Backend, backend::host>,
                "backend::cuda needs a translation unit compiled by nvcc (a .cu file); use backend::host in plain C++.");
  template <class Op>
  static void run(int count, const Op& op, host_stream) {
    for (int e = 0; e < count; ++e) op(e);
  }
};

// ---- the per-env operations (one call per env; trivially copyable, run on either backend) ----

struct localize_op {
  track_batch_ref view;
  const float3* positions;
  int* hints;
  int window;
  localize_outputs out;
  TRACK_GEN_HD void operator()(int e) const {
    if (!detail::is_position(positions[e])) {  // NaN, Inf or beyond 1e7 m: no foot to report
      write(e, localization_of_invalid());
      return;                                  // its hint unchanged
    }
    const localization l = localize(view.track(e), positions[e], hints[e], window);
    hints[e] = l.hint;
    write(e, l);
  }
  /// What an invalid position gets: NaN everywhere, lost.
  TRACK_GEN_HD static localization localization_of_invalid() {
    localization l{};
    l.s = l.n = l.vertical = l.curvature = l.heading = NAN;
    l.lost = true;
    return l;
  }
  TRACK_GEN_HD void write(int e, const localization& l) const {
    if (out.s != nullptr) out.s[e] = l.s;
    if (out.n != nullptr) out.n[e] = l.n;
    if (out.vertical != nullptr) out.vertical[e] = l.vertical;
    if (out.curvature != nullptr) out.curvature[e] = l.curvature;
    if (out.heading != nullptr) out.heading[e] = l.heading;
    if (out.lost != nullptr) out.lost[e] = l.lost ? 1 : 0;
  }
};

#if defined(__CUDACC__)
/// Shared memory of track_ahead_op's warp form: one group of points per lane (detail::
/// track_ahead_to), staged so that the warp writes the group's outputs together.
struct track_ahead_warp_storage {
  static constexpr int floats = 3 * track_ahead_group;  ///< a lane's group: x, y, z of each point
  float v[32][floats + 1];                              ///< [lane][float]; + 1: a lane's writes hit its own bank
};

/// The sink of track_ahead_to in a warp whose 32 lanes each compute an env's points: each lane
/// stages its group in `storage`, then the warp writes the 32 groups, lane l writing float l,
/// l + 32, ... of them in output order: runs of 3 n consecutive floats per env where one lane
/// storing its own points wrote one float of 32 envs apart per instruction (each lane's
/// K float3 lie together in `out`, 12 K bytes from the next env's). `first_float` is the index,
/// in `out` as floats, of this lane's point 0 (3 K e), or -1 for a lane whose points are not
/// wanted. Every lane of the warp must run the same groups, converged at group_done.
struct warp_staged_points {
  track_ahead_warp_storage& storage;
  float* out;
  long long first_float;
  int lane;
  __device__ void point(int i, float3 v) const {
    float* row = storage.v[lane] + 3 * (i % track_ahead_group);
    row[0] = v.x;
    row[1] = v.y;
    row[2] = v.z;
  }
  __device__ void group_done(int first, int n) const {
    __syncwarp();
    if (n == track_ahead_group) {
      flush<track_ahead_warp_storage::floats>(first, track_ahead_warp_storage::floats);
    } else {
      flush<0>(first, 3 * n);
    }
    __syncwarp();  // the next group's stores wait for these reads
  }
  /// Writes the staged floats, `per_lane` of each lane (a compile-time constant when Fixed > 0:
  /// the divisions below become multiplications).
  template <int Fixed>
  __device__ void flush(int first, int per_lane) const {
    const int span = Fixed > 0 ? Fixed : per_lane;
    for (int i = lane; i < 32 * span; i += 32) {
      const int src = i / span, j = i - src * span;
      const long long base = __shfl_sync(0xffffffffu, first_float, src);
      if (base >= 0) out[base + 3LL * first + j] = storage.v[src][j];
    }
  }
};
#endif

struct track_ahead_op {
  track_batch_ref view;
  const float* s;
  const float3* positions;
  const float* yaw;
  int count;
  float spacing;
  float3* out;
  TRACK_GEN_HD void operator()(int e) const {
    track_ahead(view.track(e), s[e], positions[e], yaw[e], count, spacing, out + static_cast<std::size_t>(e) * count);
  }
#if defined(__CUDACC__)
  /// The warp form with storage (query_kernel, one env a lane: nothing to share): every lane
  /// computes (a lane without an env of its own on env 0's inputs, discarded) and the warp
  /// writes the points through warp_staged_points. The same points, bit for bit.
  using warp_storage = track_ahead_warp_storage;
  __device__ void warp(int e, bool active, warp_storage& storage) const {
    const int x = active ? e : 0;
    const warp_staged_points sink{storage, reinterpret_cast<float*>(out), active ? 3LL * count * x : -1LL,
                                  lane_index()};
    track_ahead_to(view.track(x), s[x], positions[x], yaw[x], count, spacing, sink);
  }
#endif
};

struct progress_delta_op {
  track_batch_ref view;
  const float* s_prev;
  const float* s_now;
  float* out;
  TRACK_GEN_HD void operator()(int e) const { out[e] = progress_delta(s_prev[e], s_now[e], view.track(e).length()); }
};

struct spawn_op {
  course_ref view;
  env_mask mask;
  const float* s;
  const float* lateral;
  float3* position;
  float* yaw;
  TRACK_GEN_HD void operator()(int e) const {
    if (!mask[e]) return;
    const float lat = lateral != nullptr ? lateral[e] : 0.0f;
    const track_pose pose = view.spawn(e, s[e], lat);  // the start line's where it reset the env
    if (position != nullptr) position[e] = pose.position;
    if (yaw != nullptr) yaw[e] = pose.yaw;
  }
};

/// The box_contact `c` of env e into the [E] outputs `out`.
TRACK_GEN_HD inline void write_box_contact(const box_contact_outputs& out, int e, const box_contact& c) {
  if (out.flags != nullptr) out.flags[e] = c.flags;
  if (out.clearance != nullptr) out.clearance[e] = c.clearance;
  if (out.nearest != nullptr) out.nearest[e] = c.nearest;
  if (out.normal != nullptr) out.normal[e] = c.normal;
  if (out.side != nullptr) out.side[e] = static_cast<int>(c.border);
}

/// collide_boxes' operation; on the CUDA backend query_kernel calls `warp` instead (every lane
/// of the warp, collide_box_warp: the same contacts, bit for bit, the O(N) searches shared).
struct collide_boxes_op {
  track_batch_ref view;
  const float3* centres;
  const float4* orientations;
  const float2* half_extents;
  int* hints;
  int window;
  box_contact_outputs out;
  TRACK_GEN_HD box box_of(int e) const { return box{centres[e], orientations[e], half_extents[e]}; }
  TRACK_GEN_HD void write(int e, const box_contact& c) const {
    hints[e] = c.hint;
    write_box_contact(out, e, c);
  }
  TRACK_GEN_HD void operator()(int e) const { write(e, collide_box(view.track(e), box_of(e), hints[e], window)); }
#if defined(__CUDACC__)
  /// operator()(e) by every lane of a warp (collide_box_warp, with this warp's `storage` in the
  /// second form); `active` false for a lane without an env of its own, which reads env 0's
  /// inputs instead (there is one: query_kernel runs for count > 0 only) and discards them:
  /// fewer registers than selecting empty inputs (61 against 70 on sm_90, when measured).
  static constexpr bool shares_searches = true;  // warp_form_lanes_per_env applies
  using warp_storage = collide_box_warp_storage;
  template <class... Storage>  // none, or this warp's warp_storage
  __device__ void warp(int e, bool active, Storage&... storage) const {
    const int x = active ? e : 0;
    const box_contact c = collide_box_warp(view.track(x), box_of(x), hints[x], window, 0.0f, active, storage...);
    if (active) write(e, c);
  }
#endif
};

struct collide_boxes_sdf_op {
  sdf_ref field;
  const float3* centres;
  const float4* orientations;
  const float2* half_extents;
  box_contact_outputs out;
  TRACK_GEN_HD void operator()(int e) const {
    write_box_contact(out, e, field.collide_box(e, box{centres[e], orientations[e], half_extents[e]}));
  }
};

struct box_discs_op {
  const float3* centres;
  const float4* orientations;
  const float2* half_extents;
  const float3* discs;
  int discs_per_env;
  float radius;
  disc_hit_outputs out;
  TRACK_GEN_HD void operator()(int e) const {
    const box b{centres[e], orientations[e], half_extents[e]};
    const disc_hit h = collide_discs(b, discs + static_cast<std::size_t>(e) * discs_per_env, discs_per_env, radius);
    if (out.flags != nullptr) out.flags[e] = h.flags;
    if (out.depth != nullptr) out.depth[e] = h.depth;
    if (out.point != nullptr) out.point[e] = h.point;
    if (out.normal != nullptr) out.normal[e] = h.normal;
    if (out.disc != nullptr) out.disc[e] = h.disc;
  }
};

struct gate_frames_op {
  course_ref view;
  const float3* centres;
  float radius;
  gate_frame frame;
  gate_scope scope;
  gate_frame_outputs out;
  TRACK_GEN_HD void operator()(int e) const {
    const gate_frame_hit h = collide_gate_frames(view, e, centres[e], radius, frame, scope);
    if (out.flags != nullptr) out.flags[e] = h.flags;
    if (out.depth != nullptr) out.depth[e] = h.depth;
    if (out.distance != nullptr) out.distance[e] = h.distance;
    if (out.point != nullptr) out.point[e] = h.point;
    if (out.normal != nullptr) out.normal[e] = h.normal;
    if (out.member != nullptr) out.member[e] = h.member;
    if (out.gate != nullptr) out.gate[e] = h.gate;
  }
};

struct speed_profile_op {
  track_batch_ref view;
  speed_limits limits;
  float* out;
  TRACK_GEN_HD void operator()(int e) const {
    speed_profile(view.track(e), limits, out + static_cast<std::size_t>(e) * view.num_samples());
  }
};

struct border_cones_op {
  track_batch_ref view;
  border_side side;
  float spacing;
  int capacity;
  float3* out;
  int* count;
  TRACK_GEN_HD void operator()(int e) const {
    float3* cones = out + static_cast<std::size_t>(e) * capacity;
    const int total = border_cones(view.track(e), side, spacing, cones, capacity);
    // NaN padding: collide_discs skips it, renderers can drop it.
    for (int i = total; i < capacity; ++i) cones[i] = f3(NAN, NAN, NAN);
    if (count != nullptr) count[e] = total;
  }
};

struct border_walls_op {
  track_batch_ref view;
  border_side side;
  float spacing;
  int capacity;
  float3* scratch;
  wall_piece* out;
  int* count;
  TRACK_GEN_HD void operator()(int e) const {
    wall_piece* walls = out + static_cast<std::size_t>(e) * capacity;
    const int total = border_walls(view.track(e), side, spacing, scratch + static_cast<std::size_t>(e) * (capacity + 1),
                                   walls, capacity);
    for (int i = total; i < capacity; ++i) walls[i] = wall_piece{f3(NAN, NAN, NAN), NAN, NAN};  // padding
    if (count != nullptr) count[e] = total;
  }
};

struct sample_heights_op {
  heightfield_ref field;
  const float* x;
  const float* y;
  int points_per_env;
  float* out;
  float2* gradient;
  TRACK_GEN_HD void operator()(int i) const {
    const int e = i / points_per_env;
    float2 g;
    out[i] = field.sample(e, x[i], y[i], gradient != nullptr ? &g : nullptr);
    if (gradient != nullptr) gradient[i] = g;
  }
};

/// The scalar arguments of border_cones / border_walls (`fn`): std::invalid_argument naming
/// the bad one and its range.
inline void check_prop_arguments(const char* fn, border_side side, float spacing, int capacity) {
  if (side != border_side::left && side != border_side::right)
    throw std::invalid_argument(std::string("track_gen: ") + fn + ": side = " + std::to_string(static_cast<int>(side)) +
                                ", expected border_side::left (0) or border_side::right (1)");
  if (!(std::isfinite(spacing) && spacing >= min_prop_spacing))
    throw std::invalid_argument(std::string("track_gen: ") + fn + ": spacing = " + format_number(spacing) +
                                " m, expected a finite value >= " + format_number(min_prop_spacing) + " m");
  if (capacity <= 0)
    throw std::invalid_argument(std::string("track_gen: ") + fn + ": capacity = " + std::to_string(capacity) +
                                ", expected > 0 props per env");
}

template <class Backend, class Op>
void run_query(int count, const Op& op, typename Backend::stream_type stream) {
  if (count > 0) query_runner<Backend>::run(count, op, stream);
}

}  // namespace detail
}  // namespace track_gen

#if TRACK_GEN_CUDA_COMPILER
#include <track_gen/detail/queries/kernels.cuh>
#endif

namespace track_gen {

/// Localizes every env's agent (localizer.hpp `localize`): the arc length, signed lateral offset
/// (positive LEFT), height, curvature and heading at the nearest centreline point of
/// `positions[e]`, searched around `hints[e]`.
///
/// @param view      the batch (`course.view().batch()`), E = view.num_envs() envs.
/// @param positions float3 [E] [m], each env's track frame (required). A position that is not
///                  finite within +-1e7 m gets NaN s, n, vertical, curvature and heading, lost 1
///                  and its hint unchanged, in its env only.
/// @param hints     int [E], in/out (required): the sample index to search around, replaced by
///                  the foot's segment (pass the same array next step: the warm start). Start
///                  with zeros, or any int (wrapped).
/// @param window    segments searched around the hint; <= 0 (or >= N / 2): the O(N) search.
/// @param out       [E] outputs, each optional (null: not written); see localize_outputs.
/// @param stream    CUDA stream (backend::cuda) or host_stream{}; the call is asynchronous on it.
/// Memory: every pointer in the backend's memory space. Allocates and synchronises nothing.
/// @throws std::invalid_argument `positions` or `hints` is null, or a pointer is not device
///         memory with backend::cuda. @throws cuda_error the launch failed.
template <class Backend = backend::default_backend>
void localize(const track_batch_ref& view, const float3* positions, int* hints, int window,
              const localize_outputs& out, typename Backend::stream_type stream) {
  detail::check_pointers<Backend>("localize", {{positions, "positions"}, {hints, "hints"}},
                                  {{out.s, "out.s"}, {out.n, "out.n"}, {out.vertical, "out.vertical"},
                                   {out.curvature, "out.curvature"}, {out.heading, "out.heading"}, {out.lost, "out.lost"}});
  detail::run_query<Backend>(view.num_envs(), detail::localize_op{view, positions, hints, window, out}, stream);
}

/// The centreline ahead of every agent in its own frame (observations.hpp `track_ahead`):
/// `out[e K + i]` is env e's centreline at arc length s[e] + spacing (i + 1) (wrapping around the
/// loop), in the frame of an agent at `positions[e]` with heading `yaw[e]`: x forward, y left,
/// z up [m]. For an `[E, K, 3]` float tensor.
///
/// @param s         float [E] [m]: arc lengths the points start from (e.g. localize's s; any real).
/// @param positions float3 [E] [m], track frame. @param yaw float [E] [rad], about +z from +x.
/// @param count     K > 0 points per env. @param spacing finite, non-zero arc length between
///                  points [m] (negative looks behind). @param out float3 [E * K].
/// All pointers required, in the backend's memory. Asynchronous on `stream`.
/// @throws std::invalid_argument count <= 0, spacing zero or not finite, a null or (CUDA) host pointer.
template <class Backend = backend::default_backend>
void track_ahead(const track_batch_ref& view, const float* s, const float3* positions, const float* yaw, int count,
                 float spacing, float3* out, typename Backend::stream_type stream) {
  if (count <= 0)
    throw std::invalid_argument("track_gen: track_ahead: count = " + std::to_string(count) + ", expected > 0 points");
  if (!(std::isfinite(spacing) && spacing != 0.0f))
    throw std::invalid_argument("track_gen: track_ahead: spacing = " + std::to_string(spacing) +
                                " m, expected a finite, non-zero arc length (negative looks behind)");
  detail::check_pointers<Backend>("track_ahead", {{s, "s"}, {positions, "positions"}, {yaw, "yaw"}, {out, "out"}});
  detail::run_query<Backend>(view.num_envs(), detail::track_ahead_op{view, s, positions, yaw, count, spacing, out},
                             stream);
}

/// Every env's signed progress from `s_prev[e]` to `s_now[e]` (observations.hpp
/// `progress_delta`, with the env's track length): the shortest signed arc-length difference
/// around the loop, in (-L/2, L/2] [m], wrap-aware at the start line, negative backwards.
/// @param s_prev, s_now float [E] [m]. @param out float [E] [m] (may alias s_prev or s_now).
/// All required, in the backend's memory. Asynchronous on `stream`.
/// @throws std::invalid_argument a null or (CUDA) host pointer.
template <class Backend = backend::default_backend>
void progress_delta(const track_batch_ref& view, const float* s_prev, const float* s_now, float* out,
                    typename Backend::stream_type stream) {
  detail::check_pointers<Backend>("progress_delta", {{s_prev, "s_prev"}, {s_now, "s_now"}, {out, "out"}});
  detail::run_query<Backend>(view.num_envs(), detail::progress_delta_op{view, s_prev, s_now, out}, stream);
}

/// Spawns the masked envs' agents (spawn.hpp): for each env e with mask[e] set, resets its
/// progress as if its agent stood at arc length `s[e]`, `lateral[e]` metres left of the
/// centreline (course_ref::spawn: next gate = the first gate ahead, no lap before a full circuit
/// from there; a non-finite s or lateral, or a stored gate count outside [1, G_max], resets the
/// env to the start line and sets status::invalid_input; its pose is then the start line's), and
/// writes the pose to put the agent at: `position[e]` (the
/// centreline's height: add your ride height) and `yaw[e]` (the direction of travel), both
/// spawn_pose(track, s[e], lateral[e]). Entries of unmasked envs are not written (so the
/// outputs may be your simulator's root-state buffers).
///
/// @param view     the course's view (`course.view()`): its progress is written.
/// @param mask     [E] int32 / bool / uint8 (nonzero: spawn), or env_mask{} / nullptr: every env.
/// @param s        float [E] [m] (required; any real: wrapped into [0, L)).
/// @param lateral  float [E] [m], or null: 0 (on the centreline).
/// @param position float3 [E] out, or null. @param yaw float [E] out [rad], or null.
/// Asynchronous on `stream`; run it before the next `step` on the same stream.
/// @throws std::invalid_argument `s` is null, a (CUDA) host pointer.
template <class Backend = backend::default_backend>
void spawn(const course_ref& view, env_mask mask, const float* s, const float* lateral, float3* position, float* yaw,
           typename Backend::stream_type stream) {
  detail::check_pointers<Backend>("spawn", {{s, "s"}},
                                  {{mask.data, "mask"}, {lateral, "lateral"}, {position, "position"}, {yaw, "yaw"}});
  detail::run_query<Backend>(view.num_envs(), detail::spawn_op{view, mask, s, lateral, position, yaw}, stream);
}

/// Every env's vehicle box against its road band (collision.hpp `collide_box`, exact backend):
/// box e is (centres[e], orientations[e], half_extents[e]), searched around hints[e].
///
/// @param centres      float3 [E] [m], track frame.
/// @param orientations float4 [E]: unit quaternions in (x, y, z, w) order, body to track frame
///                     (Isaac Lab's root_quat_w is (w, x, y, z): reorder it). Only the yaw counts.
/// @param half_extents float2 [E] [m]: forward (+x) and left (+y) half extents, > 0.
/// @param hints        int [E] in/out: replaced by the segment of the centre's foot (warm start).
/// @param window       segments searched around the hint (as localize).
/// @param out          [E] outputs, each optional (null: not written); see box_contact_outputs.
/// A box that fails is_valid_box (NaN/Inf, extents <= 0, quaternion norm outside [0.5, 2]) gets
/// flags = contact_flags::invalid, NaN clearance/nearest/normal, side 0 and its hint unchanged;
/// the other envs are unaffected. centres, orientations, half_extents and hints are required.
/// Asynchronous on `stream`.
/// @throws std::invalid_argument a required pointer is null, a (CUDA) host pointer.
template <class Backend = backend::default_backend>
void collide_boxes(const track_batch_ref& view, const float3* centres, const float4* orientations,
                   const float2* half_extents, int* hints, int window, const box_contact_outputs& out,
                   typename Backend::stream_type stream) {
  detail::check_pointers<Backend>(
      "collide_boxes",
      {{centres, "centres"}, {orientations, "orientations"}, {half_extents, "half_extents"}, {hints, "hints"}},
      {{out.flags, "out.flags"}, {out.clearance, "out.clearance"}, {out.nearest, "out.nearest"},
       {out.normal, "out.normal"}, {out.side, "out.side"}});
  detail::run_query<Backend>(view.num_envs(),
                             detail::collide_boxes_op{view, centres, orientations, half_extents, hints, window, out}, stream);
}

/// The SDF backend of collide_boxes (sdf.hpp `sdf_ref::collide_box`): box e against env e's
/// grid of `field`, O(1) per box (four bilinear samples), within about one cell of the exact
/// backend. The outputs as collide_boxes' (`side` always 0: the grid does not record which border
/// is nearer; never contact_flags::lost). The field must be baked for the current tracks
/// (course.attach_sdf keeps it so).
///
/// @param field        the SDF's view (E = field.num_envs() envs; an attached one: course.sdf()).
/// @param centres, orientations, half_extents  the boxes, as collide_boxes (all required).
/// @param out          [E] outputs, each optional (null: not written).
/// An invalid box gets flags = contact_flags::invalid and NaN elsewhere, in its env only.
/// Asynchronous on `stream`.
/// @throws std::invalid_argument a required pointer is null, a (CUDA) host pointer.
template <class Backend = backend::default_backend>
void collide_boxes_sdf(const sdf_ref& field, const float3* centres, const float4* orientations,
                       const float2* half_extents, const box_contact_outputs& out, typename Backend::stream_type stream) {
  detail::check_pointers<Backend>(
      "collide_boxes_sdf", {{centres, "centres"}, {orientations, "orientations"}, {half_extents, "half_extents"}},
      {{out.flags, "out.flags"}, {out.clearance, "out.clearance"}, {out.nearest, "out.nearest"},
       {out.normal, "out.normal"}, {out.side, "out.side"}});
  detail::run_query<Backend>(field.num_envs(),
                             detail::collide_boxes_sdf_op{field, centres, orientations, half_extents, out}, stream);
}

/// Every env's box against its own row of discs (cones from border_cones, gate posts: vertical
/// cylinders of one `radius`, heights ignored; collision.hpp `collide_discs`): box e against
/// `discs[e K .. e K + K)`, the deepest disc reported (NaN entries, border_cones' padding, are
/// skipped). For an `[E, K, 3]` float tensor of discs.
///
/// @param num_envs      E >= 0 boxes (one per env).
/// @param centres, orientations, half_extents  the boxes, as collide_boxes (all required).
/// @param discs         float3 [E * K] [m], each env's track frame (required).
/// @param discs_per_env K >= 1. @param radius the discs' radius [m], in [0, 1e7] (collision.hpp's
///                      valid radius).
/// @param out           [E] outputs, each optional (null: not written); see disc_hit_outputs.
/// An invalid box gives flags = contact_flags::invalid, NaN depth, point and normal, disc -1.
/// O(K) per env. Asynchronous on `stream`.
/// @throws std::invalid_argument num_envs, discs_per_env or radius out of range, a required
///         pointer null, a (CUDA) host pointer.
template <class Backend = backend::default_backend>
void collide_box_discs(int num_envs, const float3* centres, const float4* orientations, const float2* half_extents,
                       const float3* discs, int discs_per_env, float radius, const disc_hit_outputs& out,
                       typename Backend::stream_type stream) {
  detail::require(num_envs >= 0, "collide_box_discs: num_envs = " + std::to_string(num_envs) + ", expected >= 0");
  detail::require(discs_per_env >= 1,
                  "collide_box_discs: discs_per_env = " + std::to_string(discs_per_env) + ", expected >= 1");
  detail::require(detail::is_radius(radius), "collide_box_discs: radius = " + detail::format_number(radius) +
                                                 " m, expected in [0, " + detail::format_number(detail::max_position) + "]");
  detail::check_pointers<Backend>(
      "collide_box_discs",
      {{centres, "centres"}, {orientations, "orientations"}, {half_extents, "half_extents"}, {discs, "discs"}},
      {{out.flags, "out.flags"}, {out.depth, "out.depth"}, {out.point, "out.point"}, {out.normal, "out.normal"},
       {out.disc, "out.disc"}});
  detail::run_query<Backend>(
      num_envs, detail::box_discs_op{centres, orientations, half_extents, discs, discs_per_env, radius, out}, stream);
}

/// Every env's agent, a sphere, against the gate frames near its target (gate_collision.hpp
/// `collide_gate_frames`): sphere e is (`centres[e]`, `radius`); the gates tested are env e's
/// next gate and the one before it (gate_scope::adjacent), or all its gates (gate_scope::all),
/// each with the course's gate_half_height and the members of `frame`. Reads the progress
/// (next_gate): run it after the step that moved the agents, on the same stream.
///
/// @param view    the course's view (`course.view()`), E = view.num_envs() envs.
/// @param centres float3 [E] [m], each env's track frame (required). A centre that is not a valid
///                position (NaN, Inf, beyond +-1e7 m) gets flags = contact_flags::invalid, no hit,
///                depth 0, NaN distance, point and normal, member and gate -1, in its env only.
/// @param radius  the sphere's radius [m], in (0, 1e6] (gate_frame.radius, docs/parameters.md).
/// @param frame   the members' half sizes, each in [1e-4, 1e6] m (gate_frame.half_thickness,
///                gate_frame.half_depth).
/// @param scope   gate_scope::adjacent (O(1) per env) or gate_scope::all (O(G)).
/// @param out     [E] outputs, each optional (null: not written); see gate_frame_outputs.
/// @param stream  CUDA stream (backend::cuda) or host_stream{}; the call is asynchronous on it.
/// Memory: every pointer in the backend's memory space. Allocates and synchronises nothing;
/// recorded into the capture when `stream` is capturing (one kernel node).
/// @throws std::invalid_argument radius, a frame half size or scope out of range (named, with
///         its range), `centres` null, a (CUDA) host pointer. @throws cuda_error the launch failed.
template <class Backend = backend::default_backend>
void collide_gate_frames(const course_ref& view, const float3* centres, float radius, const gate_frame& frame,
                         gate_scope scope, const gate_frame_outputs& out, typename Backend::stream_type stream) {
  check_gate_frame_radius(radius);
  check_gate_frame(frame);
  if (scope != gate_scope::adjacent && scope != gate_scope::all)
    throw std::invalid_argument("track_gen: collide_gate_frames: scope = " + std::to_string(static_cast<int>(scope)) +
                                ", expected gate_scope::adjacent (0) or gate_scope::all (1)");
  detail::check_pointers<Backend>("collide_gate_frames", {{centres, "centres"}},
                                  {{out.flags, "out.flags"}, {out.depth, "out.depth"}, {out.distance, "out.distance"},
                                   {out.point, "out.point"}, {out.normal, "out.normal"}, {out.member, "out.member"},
                                   {out.gate, "out.gate"}});
  detail::run_query<Backend>(view.num_envs(), detail::gate_frames_op{view, centres, radius, frame, scope, out}, stream);
}

/// Every env's curvature-limited speed profile (speed_profile.hpp): `out[e N + k]` [m/s] at
/// sample k of env e, N = view.num_samples(). For an `[E, N]` float tensor. One thread per env,
/// O(N) each: for after a regeneration, not for every step.
/// @param limits checked with check_speed_limits (every field finite; lateral_acceleration and
///               max_speed > 0, acceleration and braking >= 0).
/// @param out    float [E * N], required, in the backend's memory. Asynchronous on `stream`.
/// @throws std::invalid_argument a limit out of range (named), `out` null or a (CUDA) host pointer.
template <class Backend = backend::default_backend>
void speed_profile(const track_batch_ref& view, const speed_limits& limits, float* out,
                   typename Backend::stream_type stream) {
  check_speed_limits(limits);
  detail::check_pointers<Backend>("speed_profile", {{out, "out"}});
  detail::run_query<Backend>(view.num_envs(), detail::speed_profile_op{view, limits, out}, stream);
}

/// Cones along one border of every env's track (props.hpp `border_cones`): env e's count_e =
/// prop_count(border length, spacing) cones at an even spacing, closing the loop; the first
/// min(count_e, capacity) go to `out[e C .. e C + C)` (C = capacity) and the rest of that row is
/// NaN (padding, skipped by collide_discs). `count[e]` = count_e: more than C means the row was
/// cut (size C by the longest border / spacing + 1). For an `[E, C, 3]` float tensor.
/// @param side     border_side::left or right. @param spacing finite > 0 [m].
/// @param capacity C > 0. @param out float3 [E * C], required. @param count int [E], or null.
/// O(N + C) per env: for after a regeneration. Asynchronous on `stream`.
/// @throws std::invalid_argument spacing or capacity out of range, side not left/right, `out`
///         null, a (CUDA) host pointer.
template <class Backend = backend::default_backend>
void border_cones(const track_batch_ref& view, border_side side, float spacing, int capacity, float3* out, int* count,
                  typename Backend::stream_type stream) {
  detail::check_prop_arguments("border_cones", side, spacing, capacity);
  detail::check_pointers<Backend>("border_cones", {{out, "out"}}, {{count, "count"}});
  detail::run_query<Backend>(view.num_envs(), detail::border_cones_op{view, side, spacing, capacity, out, count}, stream);
}

/// Wall pieces along one border of every env's track (props.hpp `border_walls`): the segments
/// between consecutive cones of border_cones (the last closing the loop), as instancing
/// transforms: env e's first min(count_e, C) pieces go to `out[e C .. e C + C)` (C = capacity),
/// the rest of that row is NaN (padding); `count[e]` = count_e as border_cones (more than C: the
/// row was cut). For an `[E, C, 5]` float tensor (x, y, z, yaw, length).
/// @param side     border_side::left or right. @param spacing finite > 0 [m]. @param capacity C > 0.
/// @param scratch  float3 [E * (C + 1)], the cones the pieces join (required; overwritten).
/// @param out      wall_piece [E * C], required. @param count int [E], or null.
/// O(N + C) per env: for after a regeneration. Asynchronous on `stream`.
/// @throws std::invalid_argument as border_cones, or `scratch` null.
template <class Backend = backend::default_backend>
void border_walls(const track_batch_ref& view, border_side side, float spacing, int capacity, float3* scratch,
                  wall_piece* out, int* count, typename Backend::stream_type stream) {
  detail::check_prop_arguments("border_walls", side, spacing, capacity);
  detail::check_pointers<Backend>("border_walls", {{scratch, "scratch"}, {out, "out"}}, {{count, "count"}});
  detail::run_query<Backend>(view.num_envs(),
                             detail::border_walls_op{view, side, spacing, capacity, scratch, out, count}, stream);
}

/// The terrain height (heightfield.hpp `heightfield_ref::sample`) at K points per env: `out[e K +
/// k]` [m] at (x[e K + k], y[e K + k]) [m, env e's track frame], bilinear, clamped to the grid
/// (NaN for a non-finite point). For `[E]` or `[E, K]` float tensors. One thread per point, O(1)
/// each. Asynchronous on `stream`.
/// @param field          the heightfield's view (E = field.num_envs() envs; an attached one:
///                       course.heights()).
/// @param points_per_env K >= 1.
/// @param x, y, out      float [E * K], required. @param gradient float2 [E * K] (dz/dx, dz/dy), or null.
/// @throws std::invalid_argument K < 1, a required pointer null, a (CUDA) host pointer.
template <class Backend = backend::default_backend>
void sample_heights(const heightfield_ref& field, const float* x, const float* y, int points_per_env, float* out,
                    float2* gradient, typename Backend::stream_type stream) {
  if (points_per_env < 1)
    throw std::invalid_argument("track_gen: sample_heights: points_per_env = " + std::to_string(points_per_env) +
                                ", expected >= 1");
  detail::check_pointers<Backend>("sample_heights", {{x, "x"}, {y, "y"}, {out, "out"}}, {{gradient, "gradient"}});
  const long long count = static_cast<long long>(field.num_envs()) * points_per_env;
  if (count > 2147483647LL)
    throw std::invalid_argument("track_gen: sample_heights: num_envs x points_per_env = " + std::to_string(count) +
                                ", expected <= 2147483647");
  detail::run_query<Backend>(static_cast<int>(count), detail::sample_heights_op{field, x, y, points_per_env, out, gradient},
                             stream);
}

}  // namespace track_gen

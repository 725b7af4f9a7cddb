#pragma once
/// @file
/// `course`: the owning object of a batch of tracks and of the agents' progress on them.

#include <track_gen/course_ref.hpp>
#include <track_gen/detail/generate/generate_track.hpp>
#include <track_gen/detail/host/backend.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/storage.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/errors.hpp>
#include <track_gen/params.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/presets.hpp>
#include <track_gen/snapshot.hpp>
#include <track_gen/stages.hpp>
#include <track_gen/user_tracks.hpp>

#if TRACK_GEN_CUDA_COMPILER
#include <track_gen/detail/cuda/backend.cuh>
#endif
#if TRACK_GEN_HAS_CUDA_RUNTIME
#include <track_gen/detail/cuda/capture.hpp>
#include <track_gen/detail/cuda/lifetime.hpp>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace track_gen {

namespace detail {
template <class Backend>
struct backend_ops {
  static_assert(std::is_same_v<Backend, backend::host>,
                "backend::cuda needs a translation unit compiled by nvcc (a .cu file); use backend::host in plain C++.");
  using type = host_ops;
};
#if TRACK_GEN_CUDA_COMPILER
template <>
struct backend_ops<backend::cuda> {
  using type = cuda_ops;
};
#endif

/// The byte plan of one course: every array of the course (course_layout), then the copies of
/// the user tracks and variants, in one allocation.
struct course_plan {
  scratch_layout scratch;
  course_layout layout;
  int max_gates = 0;
  std::size_t user_points = 0, user_offsets = 0, variants = 0, env_variant = 0, args = 0, view = 0, bytes = 0;
  /// Temporary storage of the mask compaction (backend::cuda: cub::DeviceSelect; 0 bytes on the host).
  std::size_t select_temp = 0, select_temp_bytes = 0;
  /// Grid-scope stage arrays (pipelines with one; size 0 otherwise).
  bool grid = false;
  std::size_t grid_buffer[2] = {0, 0}, grid_count = 0, grid_spacing = 0, grid_active = 0, grid_residual = 0,
              grid_moved = 0, grid_pending = 0, grid_flags = 0;
};

inline std::size_t align256(std::size_t b) { return (b + 255u) & ~std::size_t{255u}; }

/// Capacities and byte offsets for `params` with optional user tracks or variants.
inline course_plan make_plan(const track_params& params, float spacing, const sanitized_tracks* user,
                             user_tracks::kind user_kind, const std::vector<track_params>& sets, bool grid,
                             std::size_t select_temp_bytes) {
  const int m = params.polar.control_points;
  const int per = params.spline.samples_per_segment;
  int control_cap = std::max(m, fallback_control_points);
  int random_control_cap = m;  // the repulsive stage only runs on random tracks
  int dense_cap = control_cap * per;
  float length_cap = params.validate.length_max;
  for (const track_params& v : sets) {
    const int cap = std::max(v.polar.control_points, fallback_control_points);
    control_cap = std::max(control_cap, cap);
    random_control_cap = std::max(random_control_cap, v.polar.control_points);
    dense_cap = std::max(dense_cap, cap * v.spline.samples_per_segment);
    length_cap = std::max(length_cap, v.validate.length_max);
  }
  if (user != nullptr) {
    const bool spline = user_track_source(user_kind) == track_source::control_points;
    if (spline) control_cap = std::max(control_cap, user->max_count);
    dense_cap = std::max(dense_cap, spline ? user->max_count * per : user->max_count);
    // A spline through the points is rarely more than 1.5x its control polygon.
    length_cap = std::max(length_cap, 1.5f * user->max_polyline_length);
  }
  course_plan plan;
  plan.max_gates = checked_max_gates(length_cap, spacing);
  plan.scratch = scratch_layout::make(control_cap, dense_cap, params.num_samples, random_control_cap);
  plan.layout = course_layout::make(params.num_envs, params.num_samples, plan.max_gates);
  std::size_t at = plan.layout.bytes;
  plan.user_points = at;
  at = align256(at + (user != nullptr ? user->points.size() * sizeof(float3) : 0));
  plan.user_offsets = at;
  at = align256(at + (user != nullptr ? user->offsets.size() * sizeof(int) : 0));
  plan.variants = at;
  at = align256(at + sets.size() * sizeof(track_params));
  plan.env_variant = at;
  at = align256(at + (sets.empty() ? 0 : static_cast<std::size_t>(params.num_envs) * sizeof(std::int32_t)));
  if (grid) {
    const std::size_t envs = static_cast<std::size_t>(params.num_envs);
    const std::size_t samples = envs * static_cast<std::size_t>(plan.scratch.dense_capacity);
    plan.grid = true;
    for (std::size_t& b : plan.grid_buffer) {
      b = at;
      at = align256(at + samples * sizeof(float3));
    }
    for (std::size_t* per_env : {&plan.grid_count, &plan.grid_spacing, &plan.grid_active, &plan.grid_residual,
                                 &plan.grid_moved, &plan.grid_pending}) {
      *per_env = at;
      at = align256(at + envs * 4u);  // int, float or int32 per env
    }
    plan.grid_flags = at;  // any_active, windows
    at = align256(at + 2 * sizeof(int));
  }
  plan.select_temp = at;
  plan.select_temp_bytes = select_temp_bytes;
  at = align256(at + select_temp_bytes);
  plan.args = at;  // the generation arguments the kernels read (generate_kernel says why)
  at = align256(at + sizeof(generate_args));
  plan.view = at;  // the course_ref the step kernel reads (step_kernel says why)
  at = align256(at + sizeof(course_ref));
  plan.bytes = at;
  return plan;
}

}  // namespace detail

/// Caller-provided storage for `ownership::borrowed`: `bytes` >= `course::required_bytes(...)`,
/// device memory for backend::cuda (e.g. a torch uint8 tensor's data), host memory for
/// backend::host, 256-byte aligned, kept alive by the caller as long as any graph or call uses it.
struct borrowed_storage {
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// Frees now what anchored graphs released (their buffers wait in a deferred list, since CUDA
/// destroys user objects where no CUDA call is allowed). Every non-capturing call of a CUDA
/// course does this too. Host-only builds: a no-op. Not for use inside a capture.
inline void release_deferred() {
#if TRACK_GEN_HAS_CUDA_RUNTIME
  detail::deferred_frees::instance().drain();
#endif
}

/// A batch of closed race tracks (one per environment), their gates, and the progress of one
/// agent per environment along its track.
///
/// @tparam Pipeline the generation stages (default: the `track` preset's pipeline).
/// @tparam Policy   capture mode, skip and ownership policies, backend and tuning (policy.hpp).
///                  `backend::cuda` needs nvcc.
///
/// Memory space: with `backend::cuda` every pointer passed in or handed out is device memory of
/// the current device; with `backend::host`, host memory. Move-only.
///
/// Graphs: `step` and `regenerate` on a capturing stream (any capture: yours, PyTorch's, a side
/// stream forked from one, a conditional body) are recorded into it; otherwise they run
/// eagerly. With `skip::conditional`, a masked `regenerate` recorded into a capture sits under
/// an IF conditional node; such graphs cannot be cloned or used as child graphs. With
/// `ownership::anchored`, each capture holds the course's memory (a CUDA user object), so the
/// graph may be replayed after the course is destroyed. Do not replay two graphs of one course
/// concurrently (they share its state).
template <class Pipeline = presets::track_pipeline, class Policy = policy<>>
class course {
 public:
  using backend_type = typename Policy::backend_type;
  using tuning = typename Policy::tuning;
  using stream_type = typename backend_type::stream_type;
  using policy_type = Policy;
  static constexpr bool is_cuda = !std::is_same_v<backend_type, backend::host>;
  static constexpr bool is_borrowed = std::is_same_v<typename Policy::ownership_policy, ownership::borrowed>;
  static constexpr bool is_anchored = std::is_same_v<typename Policy::ownership_policy, ownership::anchored>;
  static constexpr bool is_conditional = std::is_same_v<typename Policy::skip_policy, skip::conditional>;

  /// Allocates the storage and generates every env's track (episode 0). Asynchronous on
  /// `stream` for `backend::cuda`: the tracks are ready in stream order.
  /// @param params             generation parameters (params.hpp documents each range).
  /// @param checkpoint_spacing gate spacing [m], > 0: G = floor(L / spacing) gates.
  /// @throws std::invalid_argument a parameter out of range (the message names it and the range).
  /// @throws capture_error `stream` is capturing (construction allocates).
  /// @throws cuda_error a CUDA call failed.
  course(const track_params& params, float checkpoint_spacing, stream_type stream = {})
      : course(params, checkpoint_spacing, nullptr, nullptr, borrowed_storage{}, stream) {}

  /// As above, with user tracks instead of random ones (one per env or one shared by all).
  /// Copies `tracks` to the backend's memory (synchronising `stream` once).
  /// (A template only so that `course(params, spacing, {})` means the stream overload.)
  template <class Tracks, std::enable_if_t<std::is_same_v<Tracks, user_tracks>, int> = 0>
  course(const track_params& params, float checkpoint_spacing, const Tracks& tracks, stream_type stream = {})
      : course(params, checkpoint_spacing, &tracks, nullptr, borrowed_storage{}, stream) {}

  /// As the first constructor, with per-env parameter sets (user_tracks.hpp: track_variants).
  /// Copies the variants to the backend's memory (synchronising `stream` once).
  /// @throws std::invalid_argument a variant out of range (named by its index) or a bad index.
  template <class Variants, std::enable_if_t<std::is_same_v<Variants, track_variants>, int> = 0>
  course(const track_params& params, float checkpoint_spacing, const Variants& variants, stream_type stream = {})
      : course(params, checkpoint_spacing, nullptr, &variants, borrowed_storage{}, stream) {}

  /// `ownership::borrowed`: random tracks in caller-provided storage (never allocates).
  /// @throws std::invalid_argument `storage` is null, too small (see required_bytes), misaligned,
  ///         or host memory with backend::cuda.
  template <class Storage, std::enable_if_t<std::is_same_v<Storage, borrowed_storage>, int> = 0>
  course(const track_params& params, float checkpoint_spacing, Storage storage, stream_type stream = {})
      : course(params, checkpoint_spacing, nullptr, nullptr, storage, stream) {}

  /// Bytes of storage a borrowed course with these parameters needs (random tracks).
  /// @throws std::invalid_argument a parameter out of range.
  static std::size_t required_bytes(const track_params& params, float checkpoint_spacing) {
    detail::check_params(params, checkpoint_spacing);
    return detail::make_plan(params, checkpoint_spacing, nullptr, user_tracks::kind::control_points, {}, Pipeline::has_grid,
                             ops::select_temp_bytes(params.num_envs))
        .bytes;
  }

  course(course&&) noexcept = default;
  course& operator=(course&&) noexcept = default;
  course(const course&) = delete;
  course& operator=(const course&) = delete;
  ~course() = default;

  /// Binds the agents' positions: `float3 [E]` [m, env-local frame], owned by the caller,
  /// read by every `step`. Device (or managed) memory for `backend::cuda`.
  /// @throws std::invalid_argument `positions` is null, or a host pointer with backend::cuda.
  void bind(const float3* positions) {
    if (positions == nullptr) throw std::invalid_argument("track_gen: course::bind: positions is null");
    ops::require_device_pointer(positions, "course::bind: positions");
    positions_ = positions;
  }

  /// Advances every env's progress to its bound position (DESIGN §4). Asynchronous; allocates
  /// and synchronises nothing; recorded into the capture when `stream` is capturing.
  /// @throws std::logic_error no positions are bound.
  /// @throws capture_error `stream`'s capture was invalidated.
  void step(stream_type stream) {
    require_alive();
    if (positions_ == nullptr) throw std::logic_error("track_gen: course::step: no positions bound; call bind(positions) first");
    before_call(stream);
    ops::template step<tuning>(view(), resident_view_, positions_, stream);
  }

  /// Rebuilds the tracks of the envs with `mask[e] != 0` and resets their progress; `advance`
  /// moves them to their next episode (a new track), otherwise the same track is rebuilt. Other
  /// envs are untouched, bit for bit.
  /// @param mask [E] in the backend's memory: `const std::int32_t*`, `const bool*` or
  ///             `const std::uint8_t*` (converted implicitly to env_mask, never copied);
  ///             nullptr = every env.
  /// Asynchronous; allocates and synchronises nothing; recorded into the capture when `stream` is
  /// capturing (under an IF conditional node when recording().conditional and a mask is given).
  /// @throws std::invalid_argument `mask` is a host pointer with backend::cuda, or its element
  ///         size is not 1 or 4 bytes.
  /// @throws capture_error `stream`'s capture was invalidated.
  void regenerate(env_mask mask, bool advance, stream_type stream) {
    require_alive();
    if (mask.element_bytes != 1 && mask.element_bytes != 4)
      throw std::invalid_argument("track_gen: course::regenerate: mask.element_bytes = " +
                                  std::to_string(mask.element_bytes) + ", expected 1 (bool, uint8) or 4 (int32)");
    if (!mask.all()) ops::require_device_pointer(mask.data, "course::regenerate: mask");
    detail::generate_args a = generate_args_;
    a.mask = mask;
    a.advance = advance;
    const bool capturing = before_call(stream);
#if TRACK_GEN_HAS_CUDA_RUNTIME
    if constexpr (is_cuda && !Pipeline::has_grid) {
      if (!mask.all()) {
        // Compaction, then a fixed grid over the selected envs (under an IF node when recorded
        // with conditional recording): the cost follows the number of done envs.
        ops::template generate_selected<Pipeline, tuning>(a, selection(), recording_setup(),
                                                          capturing && is_conditional && recording_.conditional, stream);
        return;
      }
    }
    if constexpr (is_cuda && is_conditional) {
      if (capturing && !mask.all() && recording_.conditional) {
        ops::template generate_if_any<Pipeline, tuning>(a, any_flag(), recording_setup(), stream);
        return;
      }
    }
#endif
    (void)capturing;
    ops::template generate<Pipeline, tuning>(a, scratch_.get(), recording_setup(), stream);
  }

  /// How this course records into captures: the Policy's choices at construction, changed with
  /// set_recording.
  recording_options recording() const { return recording_; }

  /// Changes, at run time, how later calls record into captures (and the capture mode of the
  /// guard around the capture-unsafe calls): e.g. per `torch.cuda.graph` block. Calls already
  /// recorded keep what they recorded. Host backend: validated and kept, without effect.
  /// @throws std::invalid_argument `options.conditional` with a Policy of skip::unconditional
  ///         (the course has no body streams), or `options.capture_mode` not in [0, 2].
  void set_recording(const recording_options& options) {
    if (options.conditional && !is_conditional)
      throw std::invalid_argument(
          "track_gen: course::set_recording: conditional = true needs a course whose Policy has skip::conditional; "
          "this one was built with skip::unconditional");
    if (options.capture_mode < 0 || options.capture_mode > 2)
      throw std::invalid_argument("track_gen: course::set_recording: capture_mode = " +
                                  std::to_string(options.capture_mode) +
                                  ", expected 0 (global), 1 (thread-local) or 2 (relaxed)");
    recording_ = options;
  }

  /// Trivially copyable view for kernels (and host code with `backend::host`).
  /// @throws std::logic_error the course was moved from.
  course_ref view() const {
    require_alive();
    return course_ref(plan_.layout.tracks(storage_.get()), plan_.layout.progress(storage_.get()), params_.num_envs,
                      params_.num_samples, plan_.max_gates, tuning::projection_window, params_.gate_half_height);
  }

  /// The shared owner of the course's memory (ownership::anchored; null otherwise), for
  /// `track_gen::retain(graph, course.owner())` or to keep the memory beyond the course.
  std::shared_ptr<const void> owner() const {
    if constexpr (is_anchored) return storage_;
    return nullptr;
  }

  /// How many generation launches have run (construction and every executed regeneration,
  /// eager or replayed; a skipped conditional body does not count). Synchronises `stream`.
  /// @throws capture_error `stream` is capturing.
  std::uint64_t generation_launches(stream_type stream) const {
    require_alive();
    std::vector<unsigned long long> count;
    copier c{0, 1, stream};
    c(count, reinterpret_cast<const unsigned long long*>(storage_.get() + plan_.layout.launch_count), 1);
    sync_guarded(stream);
    return count[0];
  }

  const track_params& params() const { return params_; }
  int num_envs() const { return params_.num_envs; }
  int num_samples() const { return params_.num_samples; }
  /// Capacity of gates per track, G_max = ceil(L_max / spacing).
  int max_gates() const { return plan_.max_gates; }
  float checkpoint_spacing() const { return spacing_; }

  /// Copies every track to the host. Synchronises `stream`; not for the step path.
  /// @throws capture_error `stream` is capturing.
  track_snapshot copy_tracks(stream_type stream) const { return copy_tracks(0, params_.num_envs, stream); }

  /// Copies the tracks of envs [first, first + count) to the host (the snapshot's env 0 is env
  /// `first`). Synchronises `stream`; not for the step path.
  /// @throws std::invalid_argument the range is not inside [0, num_envs()).
  /// @throws capture_error `stream` is capturing.
  track_snapshot copy_tracks(int first, int count, stream_type stream) const {
    require_alive();
    check_range(first, count);
    const track_arrays a = view().tracks();
    const std::size_t n = static_cast<std::size_t>(params_.num_samples);
    const std::size_t g = static_cast<std::size_t>(plan_.max_gates);
    track_snapshot t;
    t.num_envs = count;
    t.num_samples = params_.num_samples;
    t.max_gates = plan_.max_gates;
    copier c{first, count, stream};
    c(t.position, a.position, n);
    c(t.tangent, a.tangent, n);
    c(t.normal, a.normal, n);
    c(t.half_width, a.half_width, n);
    c(t.curvature, a.curvature, n);
    c(t.gate_centre, a.gate_centre, g);
    c(t.gate_normal, a.gate_normal, g);
    c(t.gate_half_width, a.gate_half_width, g);
    c(t.gate_arc_length, a.gate_arc_length, g);
    c(t.length, a.length, 1);
    c(t.num_gates, a.num_gates, 1);
    c(t.status, a.status, 1);
    c(t.episode, a.episode, 1);
    sync_guarded(stream);
    return t;
  }

  /// Copies every env's progress to the host ([E] each). Synchronises `stream`; not for the
  /// step path.
  /// @throws capture_error `stream` is capturing.
  progress_snapshot copy_progress(stream_type stream) const {
    require_alive();
    const progress_arrays a = view().progress_data();
    progress_snapshot p;
    copier c{0, params_.num_envs, stream};
    c(p.next_gate, a.next_gate, 1);
    c(p.laps, a.laps, 1);
    c(p.gates_passed, a.gates_passed, 1);
    c(p.hint, a.hint, 1);
    c(p.lap_progress, a.lap_progress, 1);
    c(p.lateral, a.lateral, 1);
    c(p.last_position, a.last_position, 1);
    c(p.flags, a.flags, 1);
    sync_guarded(stream);
    return p;
  }

 private:
  using ops = typename detail::backend_ops<backend_type>::type;

  course(const track_params& params, float checkpoint_spacing, const user_tracks* tracks, const track_variants* variants,
         borrowed_storage borrowed, stream_type stream)
      : params_(params), spacing_(checkpoint_spacing) {
    if constexpr (is_borrowed) {
      if (tracks != nullptr || variants != nullptr)
        throw std::invalid_argument("track_gen: ownership::borrowed supports random tracks only (no user_tracks or track_variants)");
    }
    detail::check_params(params_, spacing_);
    std::vector<track_params> sets;
    if (variants != nullptr) sets = detail::check_variants(*variants, params_, spacing_);
    detail::sanitized_tracks user;
    if (tracks != nullptr) user = detail::sanitize(*tracks, params_.num_envs);
    const user_tracks::kind kind = tracks != nullptr ? tracks->type : user_tracks::kind::control_points;
    plan_ = detail::make_plan(params_, spacing_, tracks != nullptr ? &user : nullptr, kind, sets, Pipeline::has_grid,
                              ops::select_temp_bytes(params_.num_envs));

#if TRACK_GEN_HAS_CUDA_RUNTIME
    // The host backend never names the guard (a plain C++ build must not reference cudart).
    std::optional<std::conditional_t<is_cuda, detail::capture_mode_guard, int>> guard;
    if constexpr (is_cuda) {
      ops::require_not_capturing(stream, "course construction");
      guard.emplace(capture_mode());
      detail::deferred_frees::instance().drain();
      ops::template prepare<Pipeline, tuning>(plan_.scratch.bytes);
      if constexpr (!Pipeline::has_grid) selected_blocks_ = ops::template selected_blocks<Pipeline, tuning>(plan_.scratch.bytes, params_.num_envs);
    }
#endif
    if constexpr (!is_cuda) scratch_ = ops::allocate_shared(plan_.scratch.bytes, false);
    if constexpr (is_borrowed) {
      if (borrowed.data == nullptr) throw std::invalid_argument("track_gen: borrowed_storage.data is null");
      if (borrowed.bytes < plan_.bytes)
        throw std::invalid_argument("track_gen: borrowed_storage.bytes = " + std::to_string(borrowed.bytes) +
                                    " is too small: expected at least required_bytes() = " + std::to_string(plan_.bytes));
      if (reinterpret_cast<std::uintptr_t>(borrowed.data) % 256u != 0)
        throw std::invalid_argument("track_gen: borrowed_storage.data must be 256-byte aligned");
      ops::require_device_pointer(borrowed.data, "borrowed_storage.data");
      storage_ = std::shared_ptr<unsigned char>(static_cast<unsigned char*>(borrowed.data), [](unsigned char*) {});
    } else {
      storage_ = ops::allocate_shared(plan_.bytes, is_anchored);
    }
    unsigned char* base = storage_.get();
    ops::zero(base, plan_.bytes, stream);  // episodes 0, counters 0, unused gate slots defined
#if TRACK_GEN_HAS_CUDA_RUNTIME
    // Loads the compaction's kernels now (CUDA loads kernels lazily, at their first launch).
    if constexpr (is_cuda && !Pipeline::has_grid) ops::preload_selection(selection(), any_flag(), stream);
#endif

    detail::generate_args& a = generate_args_;
    a.params = params_;
    a.checkpoint_spacing = spacing_;
    a.max_gates = plan_.max_gates;
    a.layout = plan_.scratch;
    a.tracks = plan_.layout.tracks(base);
    a.progress = plan_.layout.progress(base);
    a.mask = nullptr;
    a.advance = false;
    a.user_points = nullptr;
    a.user_offsets = nullptr;
    a.num_user_tracks = 0;
    a.user_source = detail::track_source::random;
    a.variants = nullptr;
    a.env_variant = nullptr;
    a.launch_count = reinterpret_cast<unsigned long long*>(base + plan_.layout.launch_count);
    a.grid = grid_samples{};
    a.grid_pending = nullptr;
    if (!sets.empty()) {
      const std::vector<std::int32_t> index(variants->env_variant.begin(), variants->env_variant.end());
      ops::copy_from_host(base + plan_.variants, sets.data(), sets.size() * sizeof(track_params), stream);
      ops::copy_from_host(base + plan_.env_variant, index.data(), index.size() * sizeof(std::int32_t), stream);
      a.variants = reinterpret_cast<const track_params*>(base + plan_.variants);
      a.env_variant = reinterpret_cast<const std::int32_t*>(base + plan_.env_variant);
    }
    if (tracks != nullptr) {
      ops::copy_from_host(base + plan_.user_points, user.points.data(), user.points.size() * sizeof(float3), stream);
      ops::copy_from_host(base + plan_.user_offsets, user.offsets.data(), user.offsets.size() * sizeof(int), stream);
      a.user_points = reinterpret_cast<const float3*>(base + plan_.user_points);
      a.user_offsets = reinterpret_cast<const int*>(base + plan_.user_offsets);
      a.num_user_tracks = static_cast<int>(user.offsets.size()) - 1;
      a.user_source = detail::user_track_source(kind);
    }
    if (plan_.grid) {
      grid_samples& g = a.grid;
      g.buffer[0] = reinterpret_cast<float3*>(base + plan_.grid_buffer[0]);
      g.buffer[1] = reinterpret_cast<float3*>(base + plan_.grid_buffer[1]);
      g.count = reinterpret_cast<const int*>(base + plan_.grid_count);
      g.spacing = reinterpret_cast<const float*>(base + plan_.grid_spacing);
      g.active = reinterpret_cast<std::int32_t*>(base + plan_.grid_active);
      g.residual = reinterpret_cast<float*>(base + plan_.grid_residual);
      g.moved = reinterpret_cast<std::int32_t*>(base + plan_.grid_moved);
      g.any_active = reinterpret_cast<int*>(base + plan_.grid_flags);
      g.windows = reinterpret_cast<int*>(base + plan_.grid_flags) + 1;
      g.variants = a.variants;
      g.env_variant = a.env_variant;
      g.num_envs = params_.num_envs;
      g.capacity = plan_.scratch.dense_capacity;
      a.grid_pending = reinterpret_cast<std::int32_t*>(base + plan_.grid_pending);
    }
    a.resident = nullptr;
    if constexpr (is_cuda) {
      a.resident = reinterpret_cast<const detail::generate_args*>(base + plan_.args);
      ops::copy_from_host(base + plan_.args, &a, sizeof(a), stream);
      const course_ref v = view();
      ops::copy_from_host(base + plan_.view, &v, sizeof(v), stream);
      resident_view_ = reinterpret_cast<const course_ref*>(base + plan_.view);
    }
#if TRACK_GEN_HAS_CUDA_RUNTIME
    if constexpr (is_cuda && is_conditional) {
      body_streams_.create();
    }
#endif
    ops::template generate<Pipeline, tuning>(a, scratch_.get(), recording_setup(), stream);
  }

  /// Before recording or running work on `stream`: returns whether it is capturing; anchors the
  /// storage to that capture's graph (ownership::anchored, once per capture), or, when not
  /// capturing, frees what released graphs left in the deferred list.
  bool before_call(stream_type stream) {
#if TRACK_GEN_HAS_CUDA_RUNTIME
    if constexpr (is_cuda) {
      const detail::capture_info info = detail::query_capture(stream.get());
      if (!info.active()) {
        detail::deferred_frees::instance().drain();
        return false;
      }
      if constexpr (is_anchored) {
        if (std::find(anchored_captures_.begin(), anchored_captures_.end(), info.id) == anchored_captures_.end()) {
          detail::attach_user_object(info.graph, storage_, false);
          anchored_captures_[next_anchor_slot_] = info.id;
          next_anchor_slot_ = (next_anchor_slot_ + 1) % anchored_captures_.size();
        }
      }
      return true;
    }
#endif
    (void)stream;
    return false;
  }

#if TRACK_GEN_HAS_CUDA_RUNTIME
  cudaStreamCaptureMode capture_mode() const { return static_cast<cudaStreamCaptureMode>(recording_.capture_mode); }
  int* any_flag() const { return reinterpret_cast<int*>(storage_.get() + plan_.layout.any_flag); }
  /// The buffers of the mask compaction and the grid that rebuilds the selected envs.
  detail::env_selection selection() const {
    unsigned char* base = storage_.get();
    return {reinterpret_cast<int*>(base + plan_.layout.env_list), reinterpret_cast<int*>(base + plan_.layout.env_count),
            reinterpret_cast<int*>(base + plan_.layout.env_next), base + plan_.select_temp, plan_.select_temp_bytes, selected_blocks_};
  }
#endif

  /// How the backend records launches (CUDA: conditional nodes under skip::conditional, with
  /// this course's body streams and the policy's capture mode).
  typename ops::launch_setup recording_setup() const {
    typename ops::launch_setup setup{};
#if TRACK_GEN_HAS_CUDA_RUNTIME
    if constexpr (is_cuda) {
      setup.conditional = is_conditional && recording_.conditional;
      setup.bodies = &body_streams_;
      setup.mode = capture_mode();
    }
#endif
    return setup;
  }

  void sync_guarded(stream_type stream) const {
#if TRACK_GEN_HAS_CUDA_RUNTIME
    if constexpr (is_cuda) {
      detail::capture_mode_guard guard(capture_mode());
      ops::synchronize(stream);
      return;
    }
#endif
    ops::synchronize(stream);
  }

  /// Queues the copy of envs [first, first + count) of one array (`per_env` elements each).
  struct copier {
    int first, count;
    stream_type stream;
    template <class T>
    void operator()(std::vector<T>& dst, const T* src, std::size_t per_env) {
      if constexpr (is_cuda) ops::require_not_capturing(stream, "course::copy_tracks/copy_progress/generation_launches");
      dst.resize(static_cast<std::size_t>(count) * per_env);
      ops::copy_to_host_async(dst.data(), src + static_cast<std::size_t>(first) * per_env, dst.size() * sizeof(T), stream);
    }
  };

  void check_range(int first, int count) const {
    if (first < 0 || count < 0 || first > params_.num_envs - count) {
      throw std::invalid_argument("track_gen: copy_tracks: env range [" + std::to_string(first) + ", " +
                                  std::to_string(static_cast<long long>(first) + count) + ") is not inside [0, " +
                                  std::to_string(params_.num_envs) + ")");
    }
  }

  void require_alive() const {
    if (storage_ == nullptr) throw std::logic_error("track_gen: this course was moved from; use the course it was moved to");
  }

  track_params params_;
  float spacing_;
  detail::course_plan plan_;
  detail::generate_args generate_args_{};
  std::shared_ptr<unsigned char> storage_;
  std::shared_ptr<unsigned char> scratch_;  ///< host backend only: one track's workspace
  const float3* positions_ = nullptr;
  unsigned selected_blocks_ = 1;  ///< backend::cuda: blocks of the masked regeneration's grid
  const course_ref* resident_view_ = nullptr;  ///< backend::cuda: view() in the storage
  // Present whether or not the CUDA headers are visible, so that the class has one layout in
  // every translation unit of a program.
#if TRACK_GEN_HAS_CUDA_RUNTIME
  detail::body_stream_set body_streams_;                   ///< one per conditional nesting depth
#else
  std::array<void*, 3> body_streams_{};                    ///< layout twin of body_stream_set
#endif
  recording_options recording_{is_conditional, Policy::capture_mode::value};
  std::array<unsigned long long, 8> anchored_captures_{};  ///< recent capture ids already anchored
  std::size_t next_anchor_slot_ = 0;
};

}  // namespace track_gen

#pragma once
/// @file
/// `course`: the owning object of a batch of tracks and of the agents' progress on them.

#include <track_gen/course_ref.hpp>
#include <track_gen/detail/generate/generate_track.hpp>
#include <track_gen/detail/host/backend.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/storage.hpp>
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

#include <cmath>
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

/// Move-only owner of one allocation made through a backend's operations.
template <class Ops>
class owned_bytes {
 public:
  owned_bytes() = default;
  explicit owned_bytes(std::size_t bytes) : ptr_(Ops::allocate(bytes)) {}
  owned_bytes(owned_bytes&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  owned_bytes& operator=(owned_bytes&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
    }
    return *this;
  }
  owned_bytes(const owned_bytes&) = delete;
  owned_bytes& operator=(const owned_bytes&) = delete;
  ~owned_bytes() { reset(); }
  unsigned char* get() const { return ptr_; }

 private:
  void reset() noexcept {
    if (ptr_ != nullptr) Ops::deallocate(ptr_);
    ptr_ = nullptr;
  }
  unsigned char* ptr_ = nullptr;
};
}  // namespace detail

/// A batch of closed race tracks (one per environment), their gates, and the progress of one
/// agent per environment along its track.
///
/// @tparam Pipeline the generation stages (default: the `track` preset's pipeline).
/// @tparam Policy   backend and tuning (policy.hpp). `backend::cuda` needs nvcc.
///
/// Memory space: with `backend::cuda` every pointer passed in or handed out is device memory of
/// the current device; with `backend::host`, host memory. Owning and move-only.
template <class Pipeline = presets::track_pipeline, class Policy = policy<>>
class course {
 public:
  using backend_type = typename Policy::backend_type;
  using tuning = typename Policy::tuning;
  using stream_type = typename backend_type::stream_type;

  /// Allocates the storage and generates every env's track (episode 0). Asynchronous on
  /// `stream` for `backend::cuda`: the tracks are ready in stream order.
  /// @param params             generation parameters (params.hpp documents each range).
  /// @param checkpoint_spacing gate spacing [m], > 0: G = floor(L / spacing) gates.
  /// @throws std::invalid_argument a parameter out of range (the message names it and the range).
  /// @throws capture_error `stream` is capturing (construction allocates).
  /// @throws cuda_error a CUDA call failed.
  course(const track_params& params, float checkpoint_spacing, stream_type stream = {})
      : course(params, checkpoint_spacing, nullptr, nullptr, stream) {}

  /// As above, with user tracks instead of random ones (one per env or one shared by all).
  /// Copies `tracks` to the backend's memory (synchronising `stream` once).
  /// (A template only so that `course(params, spacing, {})` means the stream overload.)
  template <class Tracks, std::enable_if_t<std::is_same_v<Tracks, user_tracks>, int> = 0>
  course(const track_params& params, float checkpoint_spacing, const Tracks& tracks, stream_type stream = {})
      : course(params, checkpoint_spacing, &tracks, nullptr, stream) {}

  /// As the first constructor, with per-env parameter sets (user_tracks.hpp: track_variants).
  /// Copies the variants to the backend's memory (synchronising `stream` once).
  /// @throws std::invalid_argument a variant out of range (named by its index) or a bad index.
  template <class Variants, std::enable_if_t<std::is_same_v<Variants, track_variants>, int> = 0>
  course(const track_params& params, float checkpoint_spacing, const Variants& variants, stream_type stream = {})
      : course(params, checkpoint_spacing, nullptr, &variants, stream) {}

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
  /// and synchronises nothing; may be recorded in a CUDA graph capture on `stream`.
  /// @throws std::logic_error no positions are bound.
  void step(stream_type stream) {
    if (positions_ == nullptr) throw std::logic_error("track_gen: course::step: no positions bound; call bind(positions) first");
    ops::template step<tuning>(view(), positions_, stream);
  }

  /// Rebuilds the tracks of the envs with `mask[e] != 0` (`mask`: int32 [E] in the backend's
  /// memory; nullptr = every env) and resets their progress; `advance` moves them to their next
  /// episode (a new track), otherwise the same track is rebuilt. Other envs are untouched, bit
  /// for bit. Asynchronous; allocates and synchronises nothing.
  /// @throws std::invalid_argument `mask` is a host pointer with backend::cuda.
  void regenerate(const std::int32_t* mask, bool advance, stream_type stream) {
    if (mask != nullptr) ops::require_device_pointer(mask, "course::regenerate: mask");
    detail::generate_args a = generate_args_;
    a.mask = mask;
    a.advance = advance;
    ops::template generate<Pipeline, tuning>(a, scratch_.get(), stream);
  }

  /// Trivially copyable view for kernels (and host code with `backend::host`).
  course_ref view() const {
    return course_ref(layout_.tracks(storage_.get()), layout_.progress(storage_.get()), params_.num_envs,
                      params_.num_samples, max_gates_, tuning::projection_window, params_.gate_half_height);
  }

  const track_params& params() const { return params_; }
  int num_envs() const { return params_.num_envs; }
  int num_samples() const { return params_.num_samples; }
  /// Capacity of gates per track, G_max = ceil(L_max / spacing).
  int max_gates() const { return max_gates_; }
  float checkpoint_spacing() const { return spacing_; }

  /// Copies every track to the host. Synchronises `stream`; not for the step path.
  /// @throws capture_error `stream` is capturing.
  track_snapshot copy_tracks(stream_type stream) const { return copy_tracks(0, params_.num_envs, stream); }

  /// Copies the tracks of envs [first, first + count) to the host (the snapshot's env 0 is env
  /// `first`). Synchronises `stream`; not for the step path.
  /// @throws std::invalid_argument the range is not inside [0, num_envs()).
  /// @throws capture_error `stream` is capturing.
  track_snapshot copy_tracks(int first, int count, stream_type stream) const {
    check_range(first, count);
    const track_arrays a = view().tracks();
    const std::size_t n = static_cast<std::size_t>(params_.num_samples);
    const std::size_t g = static_cast<std::size_t>(max_gates_);
    track_snapshot t;
    t.num_envs = count;
    t.num_samples = params_.num_samples;
    t.max_gates = max_gates_;
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
    ops::synchronize(stream);
    return t;
  }

  /// Copies every env's progress to the host ([E] each). Synchronises `stream`; not for the
  /// step path.
  /// @throws capture_error `stream` is capturing.
  progress_snapshot copy_progress(stream_type stream) const {
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
    ops::synchronize(stream);
    return p;
  }

 private:
  using ops = typename detail::backend_ops<backend_type>::type;

  course(const track_params& params, float checkpoint_spacing, const user_tracks* tracks,
         const track_variants* variants, stream_type stream)
      : params_(params), spacing_(checkpoint_spacing) {
    detail::check_params(params_, spacing_);
    std::vector<track_params> sets;
    if (variants != nullptr) sets = detail::check_variants(*variants, params_, spacing_);
    if constexpr (!std::is_same_v<backend_type, backend::host>) ops::require_not_capturing(stream, "course construction");
    detail::sanitized_tracks user;
    const bool has_user = tracks != nullptr;
    if (has_user) user = detail::sanitize(*tracks, params_.num_envs);

    // Capacities: control points and dense samples of every source this course can meet.
    const int m = params_.polar.control_points;
    const int per = params_.spline.samples_per_segment;
    int control_cap = std::max(m, detail::fallback_control_points);
    int dense_cap = control_cap * per;
    float length_cap = params_.validate.length_max;
    for (const track_params& v : sets) {
      const int cap = std::max(v.polar.control_points, detail::fallback_control_points);
      control_cap = std::max(control_cap, cap);
      dense_cap = std::max(dense_cap, cap * v.spline.samples_per_segment);
      length_cap = std::max(length_cap, v.validate.length_max);
    }
    if (has_user) {
      if (tracks->type == user_tracks::kind::control_points) control_cap = std::max(control_cap, user.max_count);
      dense_cap = std::max(dense_cap, tracks->type == user_tracks::kind::control_points ? user.max_count * per : user.max_count);
      // A spline through the points is rarely more than 1.5x its control polygon.
      length_cap = std::max(length_cap, 1.5f * user.max_polyline_length);
    }
    max_gates_ = std::max(1, static_cast<int>(std::ceil(length_cap / spacing_)));
    const detail::scratch_layout scratch = detail::scratch_layout::make(control_cap, dense_cap, params_.num_samples);
    layout_ = detail::course_layout::make(params_.num_envs, params_.num_samples, max_gates_);

    if constexpr (std::is_same_v<backend_type, backend::host>) {
      scratch_ = detail::owned_bytes<ops>(scratch.bytes);
    } else {
      ops::template prepare<Pipeline, tuning>(scratch.bytes);
    }
    storage_ = detail::owned_bytes<ops>(layout_.bytes);
    ops::zero(storage_.get(), layout_.bytes, stream);  // episodes 0, unused gate slots defined

    detail::generate_args& a = generate_args_;
    a.params = params_;
    a.checkpoint_spacing = spacing_;
    a.max_gates = max_gates_;
    a.layout = scratch;
    a.tracks = layout_.tracks(storage_.get());
    a.progress = layout_.progress(storage_.get());
    a.mask = nullptr;
    a.advance = false;
    a.user_points = nullptr;
    a.user_offsets = nullptr;
    a.num_user_tracks = 0;
    a.user_source = detail::track_source::random;
    a.variants = nullptr;
    a.env_variant = nullptr;
    if (!sets.empty()) {
      const std::size_t set_bytes = sets.size() * sizeof(track_params);
      const std::size_t index_at = (set_bytes + 255u) & ~std::size_t{255u};
      variant_storage_ = detail::owned_bytes<ops>(index_at + variants->env_variant.size() * sizeof(std::int32_t));
      const std::vector<std::int32_t> index(variants->env_variant.begin(), variants->env_variant.end());
      ops::copy_from_host(variant_storage_.get(), sets.data(), set_bytes, stream);
      ops::copy_from_host(variant_storage_.get() + index_at, index.data(), index.size() * sizeof(std::int32_t), stream);
      a.variants = reinterpret_cast<const track_params*>(variant_storage_.get());
      a.env_variant = reinterpret_cast<const std::int32_t*>(variant_storage_.get() + index_at);
    }
    if (has_user) {
      const std::size_t point_bytes = user.points.size() * sizeof(float3);
      const std::size_t offset_at = (point_bytes + 255u) & ~std::size_t{255u};
      user_storage_ = detail::owned_bytes<ops>(offset_at + user.offsets.size() * sizeof(int));
      ops::copy_from_host(user_storage_.get(), user.points.data(), point_bytes, stream);
      ops::copy_from_host(user_storage_.get() + offset_at, user.offsets.data(), user.offsets.size() * sizeof(int), stream);
      a.user_points = reinterpret_cast<const float3*>(user_storage_.get());
      a.user_offsets = reinterpret_cast<const int*>(user_storage_.get() + offset_at);
      a.num_user_tracks = static_cast<int>(user.offsets.size()) - 1;
      a.user_source = tracks->type == user_tracks::kind::centreline ? detail::track_source::centreline
                                                                    : detail::track_source::control_points;
    }
    ops::template generate<Pipeline, tuning>(a, scratch_.get(), stream);
  }

  /// Queues the copy of envs [first, first + count) of one array (`per_env` elements each).
  struct copier {
    int first, count;
    stream_type stream;
    template <class T>
    void operator()(std::vector<T>& dst, const T* src, std::size_t per_env) {
      if constexpr (!std::is_same_v<backend_type, backend::host>) ops::require_not_capturing(stream, "course::copy_tracks/copy_progress");
      dst.resize(static_cast<std::size_t>(count) * per_env);
      ops::copy_to_host_async(dst.data(), src + static_cast<std::size_t>(first) * per_env, dst.size() * sizeof(T), stream);
    }
  };

  void check_range(int first, int count) const {
    if (first < 0 || count < 0 || first > params_.num_envs - count) {
      throw std::invalid_argument("track_gen: copy_tracks: env range [" + std::to_string(first) + ", " +
                                  std::to_string(first + count) + ") is not inside [0, " + std::to_string(params_.num_envs) + ")");
    }
  }

  track_params params_;
  float spacing_;
  int max_gates_ = 0;
  detail::course_layout layout_;
  detail::generate_args generate_args_{};
  detail::owned_bytes<ops> storage_;
  detail::owned_bytes<ops> user_storage_;
  detail::owned_bytes<ops> variant_storage_;
  detail::owned_bytes<ops> scratch_;  ///< host backend only: one track's workspace
  const float3* positions_ = nullptr;
};

}  // namespace track_gen

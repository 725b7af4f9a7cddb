#pragma once
/// @file
/// `track_batch`: the tracks of E environments (structure of arrays, sized once), and
/// `track_batch_ref`, its trivially copyable view for kernels and host code. A generator writes
/// a batch; the runtime utilities (progress_tracker, ...) read it.

#include <track_gen/detail/fields.hpp>
#include <track_gen/detail/ops.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/snapshot.hpp>
#include <track_gen/track_ref.hpp>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace track_gen {

/// Trivially copyable view of a batch of tracks. Pass it by value; its members are
/// `__host__ __device__`. Valid while the batch's memory lives.
class track_batch_ref {
 public:
  track_batch_ref() = default;
  track_batch_ref(const track_arrays& arrays, int num_envs, int num_samples, int max_gates)
      : arrays_(arrays), num_envs_(num_envs), num_samples_(num_samples), max_gates_(max_gates) {}

  TRACK_GEN_HD int num_envs() const { return num_envs_; }
  TRACK_GEN_HD int num_samples() const { return num_samples_; }
  /// Gate slots per env, G_max (env e uses the first num_gates[e]).
  TRACK_GEN_HD int max_gates() const { return max_gates_; }
  /// Every array of the batch (track_arrays lists them).
  TRACK_GEN_HD const track_arrays& arrays() const { return arrays_; }
  /// The track of env e in [0, num_envs()).
  TRACK_GEN_HD track_ref track(int e) const { return track_ref(arrays_, e, num_samples_, max_gates_); }
  /// Gate g in [0, track(e).num_gates()) of env e.
  TRACK_GEN_HD track_gen::gate gate(int e, int g) const { return track(e).gate(g); }

 private:
  track_arrays arrays_;
  int num_envs_ = 0;
  int num_samples_ = 0;
  int max_gates_ = 0;
};

namespace detail {
using track_layout = soa_layout<sizeof(track_fields) / sizeof(track_fields[0])>;

/// Throws std::invalid_argument unless envs [first, first + count) lie inside [0, num_envs).
inline void check_env_range(const char* what, int first, int count, int num_envs) {
  if (first < 0 || count < 0 || first > num_envs - count) {
    throw std::invalid_argument(std::string("track_gen: ") + what + ": env range [" + std::to_string(first) + ", " +
                                std::to_string(static_cast<long long>(first) + count) + ") is not inside [0, " +
                                std::to_string(num_envs) + ")");
  }
}
}  // namespace detail

/// The snapshot of envs [first, first + count) of `v`, each array copied with
/// `copy(void* dst, const void* src, std::size_t bytes)` (dst: host memory; src: where `v`
/// lives; e.g. a cudaMemcpyAsync: then wait for it before reading the snapshot).
template <class Copy>
track_snapshot copy_snapshot(const track_batch_ref& v, int first, int count, Copy&& copy) {
  track_snapshot s;
  s.num_envs = count;
  s.num_samples = v.num_samples();
  s.max_gates = v.max_gates();
  const track_arrays& a = v.arrays();
#define TRACK_GEN_COPY(name, type, ext, doc)                                                                  \
  {                                                                                                           \
    const std::size_t per = detail::elements_per_env(detail::extent::ext, v.num_samples(), v.max_gates());  \
    s.name.resize(static_cast<std::size_t>(count) * per);                                                     \
    if (!s.name.empty()) copy(s.name.data(), a.name + static_cast<std::size_t>(first) * per, s.name.size() * sizeof(type)); \
  }
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_COPY)
#undef TRACK_GEN_COPY
  return s;
}

/// The tracks of `num_envs` environments: N samples and G_max gate slots each, every field of
/// track_arrays. Sized at construction; nothing allocates afterwards. Move-only.
///
/// @tparam Policy backend and ownership (policy.hpp). Memory space: device memory of the
///         current device for `backend::cuda` (a `.cu` translation unit), host memory for
///         `backend::host`. With `ownership::anchored` the memory is reference counted and
///         captures of the owners that compose it (generator, course) keep it alive.
template <class Policy = policy<>>
class track_batch {
  using ops = typename detail::backend_ops<typename Policy::backend_type>::type;

 public:
  using stream_type = typename Policy::backend_type::stream_type;

  /// Bytes of memory a batch of this size needs (256-byte aligned arrays).
  static std::size_t required_bytes(int num_envs, int num_samples, int max_gates) {
    return detail::track_layout::make(detail::track_fields, num_envs, num_samples, max_gates).bytes;
  }

  /// Allocates a zeroed batch (zero episodes, zero status: no track yet). Asynchronous on
  /// `stream` (the memory is zero in stream order).
  /// @throws std::invalid_argument a size < 1 (max_gates, num_samples) or num_envs < 1.
  /// @throws capture_error `stream` is capturing (this allocates). @throws cuda_error a CUDA call failed.
  track_batch(int num_envs, int num_samples, int max_gates, stream_type stream = {})
      : track_batch(num_envs, num_samples, max_gates, nullptr, stream) {}

  /// Over `memory` (at least required_bytes, 256-byte aligned, in the backend's memory space),
  /// which the batch shares (e.g. one range of a course's allocation); zeroed on `stream`.
  track_batch(int num_envs, int num_samples, int max_gates, std::shared_ptr<unsigned char> memory, stream_type stream)
      : layout_(detail::track_layout::make(detail::track_fields, num_envs, num_samples, max_gates)) {
    if (num_envs < 1 || num_samples < 1 || max_gates < 1)
      throw std::invalid_argument("track_gen: track_batch: num_envs, num_samples and max_gates must be >= 1; got " +
                                  std::to_string(num_envs) + ", " + std::to_string(num_samples) + ", " +
                                  std::to_string(max_gates));
    typename ops::mode_guard guard(Policy::capture_mode::value);  // around the capture-unsafe calls
    if (memory == nullptr) {
      ops::require_not_capturing(stream, "track_batch construction");
      memory = ops::allocate_shared(layout_.bytes);
    }
    memory_ = std::move(memory);
    view_ = track_batch_ref(track_arrays::at(memory_.get(), layout_), num_envs, num_samples, max_gates);
    ops::zero(memory_.get(), layout_.bytes, stream);
  }

  track_batch(track_batch&&) noexcept = default;
  track_batch& operator=(track_batch&&) noexcept = default;
  track_batch(const track_batch&) = delete;
  track_batch& operator=(const track_batch&) = delete;

  /// The view for kernels and host code. @throws std::logic_error the batch was moved from.
  track_batch_ref view() const {
    if (memory_ == nullptr) throw std::logic_error("track_gen: this track_batch was moved from");
    return view_;
  }
  int num_envs() const { return view_.num_envs(); }
  int num_samples() const { return view_.num_samples(); }
  int max_gates() const { return view_.max_gates(); }
  /// The shared owner of the batch's memory.
  std::shared_ptr<const void> owner() const { return memory_; }

  /// Copies the tracks of envs [first, first + count) to the host (the snapshot's env 0 is env
  /// `first`). Synchronises `stream`; not for the step path.
  /// @throws std::invalid_argument the range is not inside [0, num_envs()).
  /// @throws capture_error `stream` is capturing.
  /// `capture_mode`: this thread's capture mode while it waits (0 global, 1 thread-local, 2 relaxed).
  track_snapshot copy(int first, int count, stream_type stream, int capture_mode = 0) const {
    detail::check_env_range("copy_tracks", first, count, num_envs());
    ops::require_not_capturing(stream, "copy_tracks");
    track_snapshot s = copy_snapshot(view(), first, count, [&](void* dst, const void* src, std::size_t bytes) {
      ops::copy_to_host_async(dst, src, bytes, stream);
    });
    ops::synchronize(stream, capture_mode);
    return s;
  }

 private:
  detail::track_layout layout_;
  std::shared_ptr<unsigned char> memory_;
  track_batch_ref view_;
};

}  // namespace track_gen

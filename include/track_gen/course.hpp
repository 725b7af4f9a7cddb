#pragma once
/// @file
/// `course`: the facade a user starts with. It composes a `track_batch` (the tracks), a
/// `generator` (writes them) and the runtime utilities that read them (`progress_tracker`),
/// and calls them in order. Each part is usable on its own (generator.hpp, track_batch.hpp,
/// progress_tracker.hpp).

#include <track_gen/course_ref.hpp>
#include <track_gen/detail/course_contacts.hpp>
#include <track_gen/detail/ops.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/errors.hpp>
#include <track_gen/generator.hpp>
#include <track_gen/heightfield.hpp>
#include <track_gen/params.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/presets.hpp>
#include <track_gen/progress_tracker.hpp>
#include <track_gen/sdf.hpp>
#include <track_gen/snapshot.hpp>
#include <track_gen/track_batch.hpp>
#include <track_gen/user_tracks.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace track_gen {

/// Caller-provided storage for `ownership::borrowed`: `bytes` >= `course::required_bytes(...)`,
/// device memory for backend::cuda (e.g. a torch uint8 tensor's data), host memory for
/// backend::host, 256-byte aligned, kept alive by the caller as long as any graph or call uses it.
struct borrowed_storage {
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// A batch of closed race tracks (one per environment), their gates, and the progress of one
/// agent per environment along its track.
///
/// @tparam Pipeline the generation stages (default: the `track` preset's pipeline).
/// @tparam Policy   capture mode, skip and ownership policies, backend and tuning (policy.hpp).
///                  `backend::cuda` needs nvcc.
///
/// Memory space: with `backend::cuda` every pointer passed in or handed out is device memory of
/// the current device; with `backend::host`, host memory. One allocation holds the batch, the
/// progress state, the generator's buffers and the box contacts. Move-only.
///
/// Graphs: `step` and `regenerate` on a capturing stream (any capture: yours, PyTorch's, a side
/// stream forked from one, a conditional body) are recorded into it; otherwise they run
/// eagerly. With `skip::conditional`, a masked `regenerate` recorded into a capture sits under
/// a conditional node (SWITCH, or IF when the batch has one launch shape); such graphs cannot be
/// cloned or used as child graphs. With `ownership::anchored`, each capture holds the course's
/// memory (a CUDA user object), so the graph may be replayed after the course is destroyed. Do
/// not replay two graphs of one course concurrently (they share its state).
template <class Pipeline = presets::track_pipeline, class Policy = policy<>>
class course {
 public:
  using backend_type = typename Policy::backend_type;
  using tuning = typename Policy::tuning;
  using stream_type = typename backend_type::stream_type;
  using policy_type = Policy;
  using batch_type = track_batch<Policy>;
  using tracker_type = progress_tracker<Policy>;
  using generator_type = generator<Pipeline, Policy, detail::progress_reset_hook>;
  static constexpr bool is_cuda = !std::is_same_v<backend_type, backend::host>;
  static constexpr bool is_borrowed = std::is_same_v<typename Policy::ownership_policy, ownership::borrowed>;
  static constexpr bool is_anchored = std::is_same_v<typename Policy::ownership_policy, ownership::anchored>;
  static constexpr bool is_conditional = std::is_same_v<typename Policy::skip_policy, skip::conditional>;

  /// Allocates the storage and generates every env's track (episode 0). Asynchronous on
  /// `stream` for `backend::cuda`: the tracks are ready in stream order.
  /// @param params             generation parameters (params.hpp documents each range).
  /// @param checkpoint_spacing gate spacing [m], in [0.001, 1e6] (docs/parameters.md): G = floor(L / spacing) gates.
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
  /// @throws std::invalid_argument a parameter out of range, or a capacity past its bound
  ///         (scratch bytes per track, bytes per course, gates per track: docs/parameters.md).
  static std::size_t required_bytes(const track_params& params, float checkpoint_spacing);

  course(course&&) noexcept = default;
  course& operator=(course&&) noexcept = default;
  course(const course&) = delete;
  course& operator=(const course&) = delete;
  ~course() = default;

  /// Binds the agents' positions: `float3 [E]` [m, env-local frame], owned by the caller,
  /// read by every `step`. Device (or managed) memory for `backend::cuda`.
  /// @throws std::invalid_argument `positions` is null, or a host pointer with backend::cuda.
  void bind(const float3* positions) {
    tracker_.bind(positions);
    positions_ = positions;
    orientations_ = nullptr;
    half_extents_ = nullptr;
  }

  /// Binds the agents' positions and their boxes (collision.hpp `box`: one per env), so that
  /// every `step` also computes each env's box contact with its road band (collide_box, exact
  /// backend) into the course's contact arrays (view().contacts(), copy_contacts()). The box of
  /// env e: centre `positions[e]`, orientation `orientations[e]`, half extents
  /// `half_extents[e]`. All three are owned by the caller and read by every step (update them
  /// in place). Device (or managed) memory for `backend::cuda`.
  /// @param positions    float3 [E] [m, env-local frame], required.
  /// @param orientations float4 [E]: unit quaternions body to track frame in (x, y, z, w) order
  ///                     (Isaac Lab's root_quat_w is (w, x, y, z): reorder it); only the yaw
  ///                     counts. nullptr with `half_extents` nullptr: positions only, as
  ///                     bind(positions) (no contacts).
  /// @param half_extents float2 [E] [m]: forward (+x) and left (+y) half extents.
  /// @param stream       the stream the check below copies on (CUDA).
  /// Checks the boxes' current contents once, here (fill them before binding): every
  /// orientation finite with a norm within 1e-3 of 1, every half extent finite in (0, 1e7] m
  /// (check_box). With `backend::cuda` that copies them to the host and synchronises `stream`:
  /// bind before capturing. Later values are not checked on the host: a step whose box fails
  /// is_valid_box (or whose position is invalid) writes contact_flags::invalid and NaN for that
  /// env only (collide_box).
  /// @throws std::invalid_argument a null position, only one of orientations / half_extents
  ///         given, a host pointer with backend::cuda, or a bad box (the message names the env
  ///         and the component: "bind: env 3: half_extents.x = 0 ...").
  /// @throws capture_error `stream` is capturing (backend::cuda, boxes given).
  void bind(const float3* positions, const float4* orientations, const float2* half_extents, stream_type stream = {});

  /// Advances every env's progress to its bound position (docs/guide.md). Asynchronous; allocates
  /// and synchronises nothing; recorded into the capture when `stream` is capturing.
  /// @throws std::logic_error no positions are bound, or the course was moved from.
  /// @throws capture_error `stream`'s capture was invalidated.
  /// With boxes bound (bind(positions, orientations, half_extents)), one more launch after the
  /// progress step on the same stream (recorded into the same capture) writes every env's box
  /// contact: collide_box warm-started from the step's projection (the box centre is the
  /// position), into view().contacts() / copy_contacts().
  void step(stream_type stream);

  /// Rebuilds the tracks of the envs with `mask[e] != 0` and resets their progress (in the same
  /// kernel); `advance` moves them to their next episode (a new track), otherwise the same
  /// track is rebuilt. Other envs are untouched, bit for bit.
  /// @param mask [E] in the backend's memory: `const std::int32_t*`, `const bool*` or
  ///             `const std::uint8_t*` (converted implicitly to env_mask, never copied);
  ///             nullptr = every env.
  /// Asynchronous; allocates and synchronises nothing; recorded into the capture when `stream` is
  /// capturing (under a conditional node when recording().conditional and a mask is given:
  /// generator::generate).
  /// @throws std::invalid_argument `mask` is a host pointer with backend::cuda, or its element
  ///         size is not 1 or 4 bytes.
  /// @throws capture_error `stream`'s capture was invalidated.
  ///
  /// With an SDF attached (attach_sdf), the same call then bakes the field of those envs (one more
  /// kernel on `stream`, in the same capture when recording; not under the conditional node); with a
  /// heightfield attached (attach_heightfield), likewise one more kernel after it. Recorded
  /// masked, each such kernel is an ordinary node after the conditional node: every replay runs
  /// it, and its blocks of unmasked envs return at once (an all-zero mask bakes nothing).
  void regenerate(env_mask mask, bool advance, stream_type stream) {
    generator_.generate(mask, advance, stream);
    if (sdf_owner_ != nullptr)
      detail::field_baker<backend_type, sdf_ref>::run(batch_.view(), sdf_, detail::bake_selection_of(mask), stream);
    if (heights_owner_ != nullptr)
      detail::field_baker<backend_type, heightfield_ref>::run(batch_.view(), heights_, detail::bake_selection_of(mask), stream);
  }

  /// Attaches an SDF collision field (sdf.hpp) of num_envs() envs and the same backend: it is
  /// baked now for every env (asynchronous on `stream`), then every regenerate re-bakes only the
  /// envs it regenerates. The course keeps the field's memory alive; a graph that recorded a
  /// regenerate reads it while the course lives (the field is not anchored to captures: keep the
  /// course, or the field's owner(), alive while such graphs replay). `field` null detaches.
  /// @throws std::invalid_argument the field's num_envs differs. @throws capture_error capturing.
  template <class FieldPolicy>
  void attach_sdf(const sdf_field<FieldPolicy>* field, stream_type stream) {
    static_assert(std::is_same_v<typename FieldPolicy::backend_type, backend_type>, "the field's backend must be the course's");
    attach_field(field, sdf_, sdf_owner_, "course::attach_sdf", stream);
  }
  /// The attached field's view (a default sdf_ref when none is attached).
  sdf_ref sdf() const { return sdf_owner_ != nullptr ? sdf_ : sdf_ref{}; }

  /// Attaches a heightfield (heightfield.hpp) of num_envs() envs and the same backend, as
  /// attach_sdf: it is baked now for every env (asynchronous on `stream`), then every regenerate
  /// re-bakes only the envs it regenerates (regenerate: a kernel after the generation, and after
  /// the SDF's when both are attached, outside the conditional node). The course keeps the
  /// field's memory alive; a graph that recorded a regenerate reads it while the course lives
  /// (not anchored to captures: keep the course, or the field's owner(), alive while such graphs
  /// replay). `field` null detaches.
  /// @throws std::invalid_argument the field's num_envs differs. @throws capture_error capturing.
  template <class FieldPolicy>
  void attach_heightfield(const track_gen::heightfield<FieldPolicy>* field, stream_type stream) {
    static_assert(std::is_same_v<typename FieldPolicy::backend_type, backend_type>, "the field's backend must be the course's");
    attach_field(field, heights_, heights_owner_, "course::attach_heightfield", stream);
  }
  /// The attached heightfield's view (a default heightfield_ref when none is attached).
  heightfield_ref heights() const { return heights_owner_ != nullptr ? heights_ : heightfield_ref{}; }

  /// Builds each env's next-episode track ahead, so that a masked regenerate copies it instead
  /// of building it (generator::enable_ahead: the same tracks and progress resets, bit for bit;
  /// the slots' memory, about the batch's again; the refill policy; the errors). Call it before
  /// capturing. Asynchronous on `stream` (fills every slot now).
  void enable_ahead(const ahead_options& options, stream_type stream) { generator_.enable_ahead(options, stream); }
  /// Whether enable_ahead was called.
  bool ahead_enabled() const { return generator_.ahead_enabled(); }
  /// The refill threshold in use (0 when not enabled).
  int ahead_refill_at() const { return generator_.ahead_refill_at(); }
  /// Served, missed and refilled slots since enable_ahead. Synchronises `stream`.
  /// @throws capture_error `stream` is capturing.
  ahead_counts ahead_statistics(stream_type stream) const { return generator_.ahead_statistics(stream); }

  /// How this course records into captures: the Policy's choices at construction, changed with
  /// set_recording.
  recording_options recording() const { return generator_.recording(); }

  /// Changes, at run time, how later calls record into captures (and the capture mode of the
  /// guard around the capture-unsafe calls): e.g. per `torch.cuda.graph` block. Calls already
  /// recorded keep what they recorded. Host backend: validated and kept, without effect.
  /// @throws std::invalid_argument `options.conditional` with a Policy of skip::unconditional
  ///         (the course has no body streams), or `options.capture_mode` not in [0, 2].
  void set_recording(const recording_options& options) { generator_.set_recording(options); }

  /// Trivially copyable view for kernels (and host code with `backend::host`).
  /// @throws std::logic_error the course was moved from.
  course_ref view() const { return course_ref(tracker_.view(), contacts_); }

  /// The shared owner of the course's memory (ownership::anchored; null otherwise), for
  /// `track_gen::retain(graph, course.owner())` or to keep the memory beyond the course.
  std::shared_ptr<const void> owner() const {
    if constexpr (is_anchored) return storage_;
    return nullptr;
  }

  /// How many generation launches have run (construction and every executed regeneration,
  /// eager or replayed; a skipped conditional body does not count). Synchronises `stream`.
  /// @throws capture_error `stream` is capturing.
  std::uint64_t generation_launches(stream_type stream) const { return generator_.generation_launches(stream); }

  const track_params& params() const { return generator_.params(); }
  int num_envs() const { return params().num_envs; }
  int num_samples() const { return params().num_samples; }
  /// Capacity of gates per track, G_max = ceil(L_max / spacing).
  int max_gates() const { return batch_.max_gates(); }
  float checkpoint_spacing() const { return generator_.checkpoint_spacing(); }

  /// The parts: the tracks, their generator, the progress tracker (each usable in its own
  /// kernels and calls; the course calls them in order).
  const batch_type& batch() const { return batch_; }
  const tracker_type& tracker() const { return tracker_; }
  generator_type& tracks_generator() { return generator_; }

  /// Copies every track to the host. Synchronises `stream`; not for the step path.
  /// @throws capture_error `stream` is capturing.
  track_snapshot copy_tracks(stream_type stream) const { return copy_tracks(0, num_envs(), stream); }

  /// Copies the tracks of envs [first, first + count) to the host (the snapshot's env 0 is env
  /// `first`). Synchronises `stream`; not for the step path.
  /// @throws std::invalid_argument the range is not inside [0, num_envs()).
  /// @throws capture_error `stream` is capturing.
  track_snapshot copy_tracks(int first, int count, stream_type stream) const {
    return batch_.copy(first, count, stream, recording().capture_mode);
  }

  /// Copies every env's progress to the host ([E] each). Synchronises `stream`; not for the
  /// step path.
  /// @throws capture_error `stream` is capturing.
  progress_snapshot copy_progress(stream_type stream) const { return tracker_.copy(stream, recording().capture_mode); }

  /// Copies every env's box contact to the host ([E] each; zeros before the first step with
  /// boxes bound). Synchronises `stream`; not for the step path.
  /// @throws capture_error `stream` is capturing. @throws std::logic_error the course was moved from.
  contact_snapshot copy_contacts(stream_type stream) const;

  /// Whether boxes are bound (bind with orientations and half extents): step writes contacts.
  bool has_boxes() const { return orientations_ != nullptr; }

 private:
  /// The checked inputs and the one allocation, before the parts are built over it.
  struct parts;
  static parts plan(const track_params& params, float checkpoint_spacing, const user_tracks* tracks,
                    const track_variants* variants, borrowed_storage borrowed, stream_type stream);
  course(const track_params& params, float checkpoint_spacing, const user_tracks* tracks, const track_variants* variants,
         borrowed_storage borrowed, stream_type stream)
      : course(plan(params, checkpoint_spacing, tracks, variants, borrowed, stream), stream) {}
  course(parts p, stream_type stream);

  /// attach_sdf / attach_heightfield: `field` (null: detach) into `ref` and `owner`, baked now
  /// for every env; `fn` names the call in messages.
  template <class Field, class Ref>
  void attach_field(const Field* field, Ref& ref, std::shared_ptr<const void>& owner, const char* fn, stream_type stream) {
    if (field == nullptr) {
      owner = nullptr;
      return;
    }
    if (field->num_envs() != num_envs())
      throw std::invalid_argument(std::string("track_gen: ") + fn + ": the field's num_envs = " +
                                  std::to_string(field->num_envs()) + ", expected the course's " + std::to_string(num_envs()));
    detail::backend_ops<backend_type>::type::require_not_capturing(stream, fn);
    ref = field->view();
    owner = field->owner();
    detail::field_baker<backend_type, Ref>::run(batch_.view(), ref, detail::bake_selection_of(env_mask{}), stream);
  }

  std::shared_ptr<unsigned char> storage_;  ///< the one allocation (batch, progress, generator)
  batch_type batch_;
  tracker_type tracker_;
  generator_type generator_;
  sdf_ref sdf_;                           ///< the attached SDF's view (attach_sdf)
  std::shared_ptr<const void> sdf_owner_;  ///< its memory; null: none attached
  heightfield_ref heights_;                   ///< the attached heightfield's view (attach_heightfield)
  std::shared_ptr<const void> heights_owner_;  ///< its memory; null: none attached
  contact_arrays contacts_;  ///< in storage_, after the generator's range
  float contact_trust_margin_ = 0.0f;  ///< half the least validation clearance_margin [m] (plan)
  const float3* positions_ = nullptr;
  const float4* orientations_ = nullptr;
  const float2* half_extents_ = nullptr;
};

/// What a course of random tracks with `params` and gates every `checkpoint_spacing` costs,
/// before anything is built: worst-case operations per track, bytes of track storage per env and
/// the gate capacity (cost_estimate). Construction refuses a set whose estimate exceeds
/// `params.budget` (std::invalid_argument naming the budget); raise the budget to accept it.
/// `grid_stage`: the pipeline holds `stages::dense_repulsive` (long_track_pipeline), whose work
/// counts when the parameters turn it on; the centreline relaxation's counts whenever
/// `relaxation.max_iterations` > 0 (a pipeline without it refuses that setting anyway).
/// course::required_bytes gives a course's exact bytes.
/// @throws std::invalid_argument a parameter out of range or a capacity past its bound (not the
///         budget: compare the estimate with `params.budget` yourself, or construct).
inline cost_estimate estimate_cost(const track_params& params, float checkpoint_spacing, bool grid_stage = true) {
  detail::check_params(params, checkpoint_spacing);
  const detail::generator_plan plan = detail::make_generator_plan(
      params, checkpoint_spacing, nullptr, user_tracks::kind::control_points, {}, false,
      detail::pipeline_sizes{&detail::random_control_points, &detail::random_dense_samples,
                             params.relaxation.max_iterations > 0},
      0, 0);
  return detail::estimate_cost(params, {}, nullptr, plan, grid_stage);
}

}  // namespace track_gen

#include <track_gen/detail/course_impl.hpp>

#pragma once
/// @file
/// `generator`: builds the tracks of a `track_batch` with a compile-time pipeline of stages,
/// fused into one kernel per batch (one block per track), for every env or for the envs of a
/// mask (compaction + a SWITCH or IF conditional node when recorded under skip::conditional).

#include <track_gen/detail/generate/plan.hpp>
#include <track_gen/detail/ops.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/params.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/presets.hpp>
#include <track_gen/progress_tracker.hpp>
#include <track_gen/track_batch.hpp>
#include <track_gen/user_tracks.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace track_gen {

namespace detail {
/// Everything a generator's calls need: the kernels' arguments (the resident copy among them),
/// the target, and the compaction's buffers.
template <class Hook>
struct generate_call {
  generate_args<Hook> args{};
  track_batch_ref target_view;
  env_selection selection{};
  int* any_flag = nullptr;
};

}  // namespace detail

/// Builds the tracks of one `track_batch` (bound at construction): random tracks of
/// `Pipeline`, user tracks, or per-env parameter sets. Owns its scratch, the compaction's
/// buffers and the conditional-recording machinery. Move-only.
///
/// @tparam Pipeline  the stages (pipeline.hpp; presets.hpp has the presets' pipelines).
/// @tparam Policy    capture mode, skip, ownership, backend and tuning (policy.hpp).
/// @tparam OnRebuilt called as `hook(e, num_gates)` by the block that rebuilt env e's track,
///                   in the same kernel (a trivially copyable functor with a
///                   `TRACK_GEN_HD operator()(int, int) const`): course passes the progress
///                   tracker's reset (progress_tracker::reset_hook).
///
/// Graphs: `generate` on a capturing stream is recorded into that capture (any capture); with
/// skip::conditional and a mask, under a conditional node (SWITCH or IF; graphs holding one
/// cannot be cloned or used as child graphs). With ownership::anchored each capture holds the generator's memory.
/// Do not replay two graphs of one generator concurrently (they share its buffers).
template <class Pipeline = presets::track_pipeline, class Policy = policy<>, class OnRebuilt = detail::no_env_hook>
class generator {
  using ops = typename detail::backend_ops<typename Policy::backend_type>::type;
  using tuning = typename Policy::tuning;
  using args_type = detail::generate_args<OnRebuilt>;
  static constexpr bool is_anchored = std::is_same_v<typename Policy::ownership_policy, ownership::anchored>;
  static constexpr bool is_conditional = std::is_same_v<typename Policy::skip_policy, skip::conditional>;

 public:
  using stream_type = typename Policy::backend_type::stream_type;
  using pipeline_type = Pipeline;
  using policy_type = Policy;

  /// Gate slots per track (G_max = ceil(L_max / spacing)) a batch needs for these parameters:
  /// size the target batch with it. @throws std::invalid_argument a parameter out of range.
  static int max_gates(const track_params& params, float checkpoint_spacing) {
    return detail::generator_inputs::make(params, checkpoint_spacing, nullptr, nullptr, Pipeline::has_grid,
                                          Pipeline::family_rule, detail::sizes_of<Pipeline>(), 0).plan.max_gates;
  }
  static int max_gates(const track_params& params, float checkpoint_spacing, const user_tracks& tracks) {
    return detail::generator_inputs::make(params, checkpoint_spacing, &tracks, nullptr, Pipeline::has_grid,
                                          Pipeline::family_rule, detail::sizes_of<Pipeline>(), 0).plan.max_gates;
  }
  static int max_gates(const track_params& params, float checkpoint_spacing, const track_variants& variants) {
    return detail::generator_inputs::make(params, checkpoint_spacing, nullptr, &variants, Pipeline::has_grid,
                                          Pipeline::family_rule, detail::sizes_of<Pipeline>(), 0).plan.max_gates;
  }

  /// A generator of random tracks into `target` (num_envs and num_samples as `params`, at
  /// least max_gates(params, spacing) gate slots). Writes nothing yet: call generate().
  /// Only for the default OnRebuilt (no hook): a generator with a hook is given it (below).
  /// @param checkpoint_spacing gate spacing [m], in [0.001, 1e6] (docs/parameters.md): G = floor(L / spacing) gates.
  /// @throws std::invalid_argument a parameter out of range (the message names it and the range),
  ///         or a target of another shape. @throws capture_error `stream` is capturing
  ///         (construction allocates). @throws cuda_error a CUDA call failed.
  generator(const track_params& params, float checkpoint_spacing, const track_batch<Policy>& target, stream_type stream = {})
      : generator(params, checkpoint_spacing, target, no_hook(), stream) {}
  /// As above, calling `on_rebuilt(e, num_gates)` for each env it rebuilds, in the same kernel:
  /// e.g. a progress_tracker's reset_hook(), so that a regeneration also resets the rebuilt envs'
  /// progress, as the course does. The hook's arrays must outlive the generator's calls (and
  /// their captures).
  generator(const track_params& params, float checkpoint_spacing, const track_batch<Policy>& target, OnRebuilt on_rebuilt,
            stream_type stream)
      : generator(detail::generator_inputs::make(params, checkpoint_spacing, nullptr, nullptr, Pipeline::has_grid,
                                                 Pipeline::family_rule, detail::sizes_of<Pipeline>(),
                                                 select_temp_bytes(params.num_envs, stream), sizeof(args_type)),
                  target.view(), on_rebuilt, nullptr, target.owner(), stream) {}
  /// As above, with user tracks (one per env, or one shared by every env), copied now
  /// (synchronising `stream` once).
  generator(const track_params& params, float checkpoint_spacing, const user_tracks& tracks,
            const track_batch<Policy>& target, stream_type stream = {})
      : generator(params, checkpoint_spacing, tracks, target, no_hook(), stream) {}
  /// User tracks, with a hook.
  generator(const track_params& params, float checkpoint_spacing, const user_tracks& tracks,
            const track_batch<Policy>& target, OnRebuilt on_rebuilt, stream_type stream)
      : generator(detail::generator_inputs::make(params, checkpoint_spacing, &tracks, nullptr, Pipeline::has_grid,
                                                 Pipeline::family_rule, detail::sizes_of<Pipeline>(),
                                                 select_temp_bytes(params.num_envs, stream), sizeof(args_type)),
                  target.view(), on_rebuilt, nullptr, target.owner(), stream) {}
  /// As above, with per-env parameter sets, copied now (synchronising `stream` once).
  generator(const track_params& params, float checkpoint_spacing, const track_variants& variants,
            const track_batch<Policy>& target, stream_type stream = {})
      : generator(params, checkpoint_spacing, variants, target, no_hook(), stream) {}
  /// Per-env parameter sets, with a hook.
  generator(const track_params& params, float checkpoint_spacing, const track_variants& variants,
            const track_batch<Policy>& target, OnRebuilt on_rebuilt, stream_type stream)
      : generator(detail::generator_inputs::make(params, checkpoint_spacing, nullptr, &variants, Pipeline::has_grid,
                                                 Pipeline::family_rule, detail::sizes_of<Pipeline>(),
                                                 select_temp_bytes(params.num_envs, stream), sizeof(args_type)),
                  target.view(), on_rebuilt, nullptr, target.owner(), stream) {}

  /// For composers (course): checked `inputs` (generator_inputs::make with
  /// sizeof(detail::generate_args<OnRebuilt>)), the hook, `memory` of at least inputs.plan.bytes
  /// (null: allocate), and what else the captures of its calls must keep alive (the target's
  /// owner; with ownership::anchored).
  generator(detail::generator_inputs inputs, const track_batch_ref& target, OnRebuilt hook,
            std::shared_ptr<unsigned char> memory, std::shared_ptr<const void> also_keep, stream_type stream);

  generator(generator&&) noexcept = default;
  generator& operator=(generator&&) noexcept = default;
  generator(const generator&) = delete;
  generator& operator=(const generator&) = delete;

  /// Builds the tracks of the envs with `mask[e] != 0` (env_mask{}: every env); `advance`
  /// moves them to their next episode (a new track), otherwise the same track is rebuilt. Other
  /// envs are untouched, bit for bit. Calls the hook for each rebuilt env.
  /// @param mask [E] in the backend's memory: `const std::int32_t*`, `const bool*` or
  ///             `const std::uint8_t*` (converted implicitly to env_mask, never copied).
  /// Asynchronous; allocates and synchronises nothing; recorded into the capture when `stream`
  /// is capturing (under a conditional node when recording().conditional and a mask is given).
  /// A masked call on the CUDA backend lists the selected envs on the device, then builds them
  /// with 256-thread blocks (Tuning::latency_block_threads) when they are at most as many as
  /// such blocks fit on the GPU at once, else with 64-thread ones: the same tracks either way.
  /// @throws std::invalid_argument `mask` is a host pointer with backend::cuda, or its element
  ///         size is not 1 or 4 bytes. @throws capture_error the capture was invalidated.
  void generate(env_mask mask, bool advance, stream_type stream);

  /// Builds every env's next-episode track ahead, into a slot of its own, and from then on
  /// serves masked regenerations from the slots: a regenerated env whose slot holds the episode
  /// it is built at (its next one with `advance`) gets a copy of it, the same bytes as a build,
  /// and its slot turns stale; stale slots are refilled in the launch of a later masked
  /// regeneration (ahead_options::refill_at), beside the envs it serves. A whole-batch generate
  /// fills every slot again. The tracks, progress resets and statuses are those of the same calls
  /// without slots, bit for bit (every sample, the track's gates and the per-env fields; the
  /// gate entries past num_gates are unused and hold leftovers either way); what changes is
  /// when the building happens.
  ///
  /// Recording: a masked generate then records two plain nodes (the listing, which also chooses
  /// the refills, and one kernel whose blocks return at once when there is no work), whatever
  /// the skip policy, and every masked call counts one generation launch.
  ///
  /// Memory: one more batch of tracks (track_batch::required_bytes(E, N, max_gates())) plus
  /// 8 E + 64 bytes, allocated now. Call it before capturing the calls that should use the
  /// slots (a graph holds the generator's arguments as they were when it was recorded). Fills
  /// every slot now, asynchronously on `stream` (about one whole-batch generation).
  /// @throws std::invalid_argument options.refill_at not in [0, num_envs]; a pipeline with a
  ///         grid-scope stage (its tracks are finished by a later launch).
  /// @throws std::logic_error already enabled, or ownership::borrowed (the slots need memory
  ///         the library allocates). @throws capture_error `stream` is capturing.
  /// @throws cuda_error a CUDA call failed.
  void enable_ahead(const ahead_options& options, stream_type stream);
  /// Whether enable_ahead was called.
  bool ahead_enabled() const { return ahead_memory_ != nullptr; }
  /// The refill threshold in use (ahead_options::refill_at resolved); 0 when not enabled.
  int ahead_refill_at() const { return ahead_enabled() ? args_.args.ahead.refill_at : 0; }
  /// Served, missed and refilled slots since enable_ahead (zeros when not enabled). Synchronises
  /// `stream`. @throws capture_error `stream` is capturing.
  ahead_counts ahead_statistics(stream_type stream) const;

  /// How this generator records into captures (the Policy's choices, changed by set_recording).
  recording_options recording() const { return recording_; }
  /// Changes how later calls record into captures (and the capture mode of the guard around
  /// the capture-unsafe calls). Host backend: validated and kept, without effect.
  /// @throws std::invalid_argument `conditional` with skip::unconditional, or capture_mode
  ///         not in [0, 2].
  void set_recording(const recording_options& options);

  /// How many generation launches have run (every executed generate, eager or replayed; a
  /// skipped conditional body does not count). Synchronises `stream`.
  /// @throws capture_error `stream` is capturing.
  std::uint64_t generation_launches(stream_type stream) const;

  const track_params& params() const { return inputs_.params; }
  float checkpoint_spacing() const { return inputs_.spacing; }
  /// Gate slots per track these parameters need (<= the target's max_gates()).
  int max_gates() const { return inputs_.plan.max_gates; }
  /// The batch this generator writes.
  const track_batch_ref& target() const { return args_.target_view; }
  /// The shared owner of the generator's memory.
  std::shared_ptr<const void> owner() const { return memory_; }

 private:
  /// The hook of the constructors without one: only the default OnRebuilt may be left out (a
  /// hook's state, such as a tracker's arrays, cannot be default-built).
  static OnRebuilt no_hook() {
    static_assert(std::is_same_v<OnRebuilt, detail::no_env_hook>,
                  "A generator with an OnRebuilt hook must be given the hook: pass it after the target batch "
                  "(and then the stream), e.g. generator(params, spacing, batch, tracker.reset_hook(), stream).");
    return OnRebuilt{};
  }
  /// The compaction's temporary storage, once `stream` is known not to be capturing (the size
  /// query is a CUDA call that a global-mode capture refuses).
  static std::size_t select_temp_bytes(int num_envs, stream_type stream) {
    ops::require_not_capturing(stream, "generator construction");
    typename ops::mode_guard guard(Policy::capture_mode::value);
    return ops::select_temp_bytes(num_envs);
  }
  void require_alive() const {
    if (memory_ == nullptr) throw std::logic_error("track_gen: this generator (or course) was moved from");
  }

  detail::generator_inputs inputs_;
  detail::generate_call<OnRebuilt> args_;
  std::shared_ptr<unsigned char> memory_;
  std::shared_ptr<const void> anchor_;      ///< what each capture retains (ownership::anchored)
  std::shared_ptr<unsigned char> scratch_;  ///< backend::host: one track's workspace
  std::shared_ptr<unsigned char> ahead_memory_;  ///< the tracks built ahead (enable_ahead)
  // The launches of the tracks built ahead, set by enable_ahead (so that only generators that
  // enable them instantiate their kernel).
  using ahead_masked_fn = void (*)(const args_type&, unsigned char*, const detail::env_selection&, unsigned,
                                   const typename ops::launch_setup&, bool, stream_type);
  using ahead_fill_fn = void (*)(const args_type&, unsigned char*, unsigned, stream_type);
  ahead_masked_fn ahead_masked_ = nullptr;
  ahead_fill_fn ahead_fill_ = nullptr;
  unsigned ahead_blocks_ = 0;
  typename ops::recorder recorder_{};       ///< conditional bodies' streams (backend::cuda)
  typename ops::call_state calls_{};
  recording_options recording_{is_conditional, Policy::capture_mode::value};
};

}  // namespace track_gen

#include <track_gen/detail/generate/generator_impl.hpp>

#pragma once
/// @file
/// Definitions of `generator`'s members (generator.hpp holds the API and its documentation).

#include <track_gen/generator.hpp>

namespace track_gen {

template <class Pipeline, class Policy, class OnRebuilt>
generator<Pipeline, Policy, OnRebuilt>::generator(detail::generator_inputs inputs, const track_batch_ref& target,
                                                  OnRebuilt hook, std::shared_ptr<unsigned char> memory,
                                                  std::shared_ptr<const void> also_keep, stream_type stream)
    : inputs_(std::move(inputs)) {
  const track_params& params = inputs_.params;
  const detail::generator_plan& plan = inputs_.plan;
  if (target.num_envs() != params.num_envs || target.num_samples() != params.num_samples ||
      target.max_gates() < plan.max_gates) {
    throw std::invalid_argument(
        "track_gen: generator: the target batch has " + std::to_string(target.num_envs()) + " envs, " +
        std::to_string(target.num_samples()) + " samples and " + std::to_string(target.max_gates()) +
        " gate slots; these parameters need " + std::to_string(params.num_envs) + " envs, " +
        std::to_string(params.num_samples) + " samples and at least " + std::to_string(plan.max_gates) +
        " gate slots (generator::max_gates)");
  }
  if (ops::kernels_read_resident_views && plan.bytes - plan.args < sizeof(args_type))
    throw std::logic_error("track_gen: generator: the plan has no room for the generation arguments");
  if constexpr (std::is_same_v<typename Policy::ownership_policy, ownership::borrowed>) {
    if (inputs_.has_user || !inputs_.sets.empty())
      throw std::invalid_argument("track_gen: ownership::borrowed supports random tracks only (no user_tracks or track_variants)");
  }
  ops::require_not_capturing(stream, "generator construction");
  typename ops::mode_guard guard(Policy::capture_mode::value);
  ops::drain_deferred();
  ops::template prepare<Pipeline, tuning, OnRebuilt>(plan.scratch.bytes);
  const unsigned selected_blocks =
      Pipeline::has_grid ? 1u : ops::template selected_blocks<Pipeline, tuning, OnRebuilt>(plan.scratch.bytes, params.num_envs);
  const unsigned latency_blocks =
      Pipeline::has_grid ? 0u : ops::template latency_blocks<Pipeline, tuning, OnRebuilt>(plan.scratch.bytes, params.num_envs);
  scratch_ = ops::scratch(plan.scratch.bytes);
  if (memory == nullptr) memory = ops::allocate_shared(plan.bytes);
  memory_ = std::move(memory);
  if constexpr (is_anchored) anchor_ = detail::keep_both(memory_, std::move(also_keep));
  unsigned char* base = memory_.get();
  ops::zero(base, plan.bytes, stream);  // counters 0, flags 0

  args_.target_view = target;
  args_.any_flag = reinterpret_cast<int*>(base + plan.any_flag);
  args_.selection = {reinterpret_cast<int*>(base + plan.env_list), reinterpret_cast<int*>(base + plan.env_count),
                     reinterpret_cast<int*>(base + plan.env_next), base + plan.select_temp, plan.select_temp_bytes,
                     selected_blocks, latency_blocks};
  // Loads the compaction's kernels now (CUDA loads kernels lazily, at their first launch).
  ops::preload_selection(args_.selection, args_.any_flag, stream);

  args_type& a = args_.args;
  a.params = params;
  a.checkpoint_spacing = inputs_.spacing;
  a.max_gates = target.max_gates();
  a.layout = plan.scratch;
  a.tracks = target.arrays();
  a.on_rebuilt = hook;
  a.mask = nullptr;
  a.advance = false;
  a.user_points = nullptr;
  a.user_offsets = nullptr;
  a.user_frames = nullptr;
  a.num_user_tracks = 0;
  a.user_source = detail::track_source::random;
  a.variants = nullptr;
  a.env_variant = nullptr;
  a.launch_count = reinterpret_cast<unsigned long long*>(base + plan.launch_count);
  a.grid = grid_samples{};
  a.grid_pending = nullptr;
  if (!inputs_.sets.empty()) {
    ops::copy_from_host(base + plan.variants, inputs_.sets.data(), inputs_.sets.size() * sizeof(track_params), stream);
    ops::copy_from_host(base + plan.env_variant, inputs_.env_variant.data(),
                        inputs_.env_variant.size() * sizeof(std::int32_t), stream);
    a.variants = reinterpret_cast<const track_params*>(base + plan.variants);
    a.env_variant = reinterpret_cast<const std::int32_t*>(base + plan.env_variant);
  }
  if (inputs_.has_user) {
    const detail::sanitized_tracks& user = inputs_.user;
    ops::copy_from_host(base + plan.user_points, user.points.data(), user.points.size() * sizeof(float3), stream);
    ops::copy_from_host(base + plan.user_offsets, user.offsets.data(), user.offsets.size() * sizeof(int), stream);
    ops::copy_from_host(base + plan.user_frames, user.frames.data(), user.frames.size() * sizeof(detail::user_frame),
                        stream);
    a.user_points = reinterpret_cast<const float3*>(base + plan.user_points);
    a.user_offsets = reinterpret_cast<const int*>(base + plan.user_offsets);
    a.user_frames = reinterpret_cast<const detail::user_frame*>(base + plan.user_frames);
    a.num_user_tracks = static_cast<int>(user.offsets.size()) - 1;
    a.user_source = detail::user_track_source(inputs_.user_kind);
  }
  if (plan.grid) {
    grid_samples& g = a.grid;
    g.buffer[0] = reinterpret_cast<float3*>(base + plan.grid_buffer[0]);
    g.buffer[1] = reinterpret_cast<float3*>(base + plan.grid_buffer[1]);
    g.count = reinterpret_cast<const int*>(base + plan.grid_count);
    g.spacing = reinterpret_cast<const float*>(base + plan.grid_spacing);
    g.active = reinterpret_cast<std::int32_t*>(base + plan.grid_active);
    g.residual = reinterpret_cast<float*>(base + plan.grid_residual);
    g.moved = reinterpret_cast<std::int32_t*>(base + plan.grid_moved);
    g.any_active = reinterpret_cast<int*>(base + plan.grid_flags);
    g.windows = reinterpret_cast<int*>(base + plan.grid_flags) + 1;
    g.variants = a.variants;
    g.env_variant = a.env_variant;
    g.num_envs = params.num_envs;
    g.capacity = plan.scratch.dense_capacity;
    a.grid_pending = reinterpret_cast<std::int32_t*>(base + plan.grid_pending);
  }
  a.resident = nullptr;
  if constexpr (ops::kernels_read_resident_views) {
    a.resident = reinterpret_cast<const args_type*>(base + plan.args);
    ops::copy_from_host(base + plan.args, &a, sizeof(a), stream);
  }
  if constexpr (is_conditional) recorder_.create();
}

template <class Pipeline, class Policy, class OnRebuilt>
void generator<Pipeline, Policy, OnRebuilt>::generate(env_mask mask, bool advance, stream_type stream) {
  require_alive();
  if (mask.element_bytes != 1 && mask.element_bytes != 4)
    throw std::invalid_argument("track_gen: regenerate: mask.element_bytes = " + std::to_string(mask.element_bytes) +
                                ", expected 1 (bool, uint8) or 4 (int32)");
  if (!mask.all()) ops::require_device_pointer(mask.data, "regenerate: mask");
  args_type a = args_.args;
  a.mask = mask;
  a.advance = advance;
  const bool capturing = ops::begin_call(calls_, anchor_, stream);
  const auto setup = ops::setup(recorder_, is_conditional && recording_.conditional, recording_.capture_mode);
  if (mask.all()) {
    ops::template generate<Pipeline, tuning>(a, scratch_.get(), setup, stream);
    if (ahead_fill_ != nullptr) ahead_fill_(a, scratch_.get(), ahead_blocks_, stream);
  } else if (ahead_masked_ != nullptr) {
    ahead_masked_(a, scratch_.get(), args_.selection, ahead_blocks_, setup, capturing, stream);
  } else {
    ops::template generate_masked<Pipeline, tuning>(a, scratch_.get(), args_.selection, args_.any_flag, setup, capturing,
                                                    stream);
  }
}

template <class Pipeline, class Policy, class OnRebuilt>
void generator<Pipeline, Policy, OnRebuilt>::enable_ahead(const ahead_options& options, stream_type stream) {
  require_alive();
  const int num_envs = inputs_.params.num_envs;
  if (ahead_enabled()) throw std::logic_error("track_gen: enable_ahead: the tracks built ahead are already enabled");
  if (Pipeline::has_grid)
    throw std::invalid_argument(
        "track_gen: enable_ahead: this pipeline has a grid-scope stage, whose tracks a later launch finishes (even "
        "when its parameters turn the stage off); tracks built ahead need a pipeline without one, e.g. "
        "presets::track_pipeline");
  if (std::is_same_v<typename Policy::ownership_policy, ownership::borrowed>)
    throw std::logic_error("track_gen: enable_ahead: ownership::borrowed; the tracks built ahead need memory that the "
                           "library allocates (use ownership::owning or anchored)");
  if (options.refill_at < 0 || options.refill_at > num_envs)
    throw std::invalid_argument("track_gen: enable_ahead: ahead_options.refill_at = " + std::to_string(options.refill_at) +
                                ", expected 0 (automatic) or a count in [1, num_envs = " + std::to_string(num_envs) + "]");
  ops::require_not_capturing(stream, "enable_ahead");
  typename ops::mode_guard guard(recording_.capture_mode);
  if constexpr (!Pipeline::has_grid) {  // refused above; the kernels exist for the others only
    // Everything that may throw comes before the generator changes.
    const unsigned blocks = ops::template prepare_ahead<Pipeline, tuning, OnRebuilt>(inputs_.plan.scratch.bytes, num_envs);
    const track_batch_ref& target = args_.target_view;
    const detail::track_layout layout =
        detail::track_layout::make(detail::track_fields, num_envs, target.num_samples(), target.max_gates());
    const std::size_t stale_at = (layout.bytes + 255u) & ~std::size_t{255u};
    const std::size_t counters_at = stale_at + 2u * static_cast<std::size_t>(num_envs) * sizeof(int);
    const std::size_t tallies_at = (counters_at + detail::ahead_counters * sizeof(int) + 7u) & ~std::size_t{7u};
    const std::size_t bytes = tallies_at + detail::ahead_tallies * sizeof(unsigned long long);
    std::shared_ptr<unsigned char> memory = ops::allocate_shared(bytes);
    unsigned char* base = memory.get();

    detail::ahead_state ahead;
    ahead.tracks = track_arrays::at(base, layout);
    // The kernels reach the slots as the live arrays plus one offset: both have this layout.
    ahead.offset = reinterpret_cast<unsigned char*>(ahead.tracks.position) -
                   reinterpret_cast<unsigned char*>(target.arrays().position);
    const track_arrays shifted = detail::shift_arrays(target.arrays(), ahead.offset);
#define TRACK_GEN_SAME_OFFSET(name, type, ext, doc)                                                       \
  if (shifted.name != ahead.tracks.name)                                                                  \
    throw std::logic_error("track_gen: enable_ahead: the target batch's arrays are not laid out as a "   \
                           "track_batch's (field " #name ")");
    TRACK_GEN_TRACK_FIELDS(TRACK_GEN_SAME_OFFSET)
#undef TRACK_GEN_SAME_OFFSET
    ahead.stale = reinterpret_cast<int*>(base + stale_at);
    ahead.counters = reinterpret_cast<int*>(base + counters_at);
    ahead.tallies = reinterpret_cast<unsigned long long*>(base + tallies_at);
    // Default: as many slots as one round of the kernel's blocks refills, at most E / 8.
    ahead.refill_at = options.refill_at != 0 ? options.refill_at
                                             : std::max(1, std::min(num_envs / 8, static_cast<int>(blocks)));
    ahead.num_envs = num_envs;
    ops::zero(base, bytes, stream);
    const int fill_count = num_envs;
    ops::copy_from_host(ahead.counters + detail::ahead_fill_count, &fill_count, sizeof(int), stream);

    args_.args.ahead = ahead;
    ahead_memory_ = std::move(memory);
    if constexpr (is_anchored) anchor_ = detail::keep_both(anchor_, ahead_memory_);
    if constexpr (ops::kernels_read_resident_views)
      ops::copy_from_host(memory_.get() + inputs_.plan.args, &args_.args, sizeof(args_type), stream);
    ahead_blocks_ = blocks;
    ahead_masked_ = &ops::template generate_masked_ahead<Pipeline, tuning, OnRebuilt>;
    ahead_fill_ = &ops::template fill_ahead<Pipeline, tuning, OnRebuilt>;
    ahead_fill_(args_.args, scratch_.get(), ahead_blocks_, stream);
  }
}

template <class Pipeline, class Policy, class OnRebuilt>
ahead_counts generator<Pipeline, Policy, OnRebuilt>::ahead_statistics(stream_type stream) const {
  require_alive();
  ahead_counts out;
  if (!ahead_enabled()) return out;
  ops::require_not_capturing(stream, "ahead_statistics");
  unsigned long long t[detail::ahead_tallies] = {};
  ops::copy_to_host_async(t, args_.args.ahead.tallies, sizeof(t), stream);
  ops::synchronize(stream, recording_.capture_mode);
  out.served = t[detail::ahead_served];
  out.missed = t[detail::ahead_missed];
  out.refilled = t[detail::ahead_refilled];
  return out;
}

template <class Pipeline, class Policy, class OnRebuilt>
void generator<Pipeline, Policy, OnRebuilt>::set_recording(const recording_options& options) {
  if (options.conditional && !is_conditional)
    throw std::invalid_argument(
        "track_gen: set_recording: conditional = true needs a Policy with skip::conditional; this one was built with "
        "skip::unconditional");
  if (options.capture_mode < 0 || options.capture_mode > 2)
    throw std::invalid_argument("track_gen: set_recording: capture_mode = " + std::to_string(options.capture_mode) +
                                ", expected 0 (global), 1 (thread-local) or 2 (relaxed)");
  recording_ = options;
}

template <class Pipeline, class Policy, class OnRebuilt>
std::uint64_t generator<Pipeline, Policy, OnRebuilt>::generation_launches(stream_type stream) const {
  require_alive();
  ops::require_not_capturing(stream, "generation_launches");
  unsigned long long count = 0;
  ops::copy_to_host_async(&count, args_.args.launch_count, sizeof(count), stream);
  ops::synchronize(stream, recording_.capture_mode);
  return count;
}

}  // namespace track_gen

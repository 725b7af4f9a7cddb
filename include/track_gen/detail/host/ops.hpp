#pragma once
/// @file
/// Host backend operations: memory, generation and step loops over the environments. The same
/// interface as cuda_ops (detail/cuda/ops.cuh), so that owners never branch on the backend.

#include <track_gen/detail/generate/generate_track.hpp>
#include <track_gen/detail/select/env_selection.hpp>
#include <track_gen/detail/grid/host_context.hpp>
#include <track_gen/detail/host/block_context.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/policy.hpp>

#include <cstring>
#include <memory>

namespace track_gen::detail {

struct host_ops {
  using stream_type = host_stream;
  /// Kernels read views from the owner's memory (false: there are no kernels).
  static constexpr bool kernels_read_resident_views = false;

  // Memory.
  static std::shared_ptr<unsigned char> allocate_shared(std::size_t bytes) {
    return std::shared_ptr<unsigned char>(new unsigned char[bytes == 0 ? 1 : bytes], [](unsigned char* q) { delete[] q; });
  }
  static void copy_to_host_async(void* dst, const void* src, std::size_t bytes, stream_type) {
    if (bytes != 0) std::memcpy(dst, src, bytes);
  }
  static void synchronize(stream_type, int = 0) {}
  static void copy_from_host(void* dst, const void* src, std::size_t bytes, stream_type) {
    if (bytes != 0) std::memcpy(dst, src, bytes);
  }
  static void zero(void* dst, std::size_t bytes, stream_type) { std::memset(dst, 0, bytes); }
  static void require_device_pointer(const void*, const char*) {}
  static void require_not_capturing(stream_type, const char*) {}

  // Calls and captures: the host backend has none.
  struct call_state {};
  static bool begin_call(call_state&, const std::shared_ptr<const void>&, stream_type) { return false; }
  /// Sets a thread's capture mode on the CUDA backend; nothing here.
  struct mode_guard {
    explicit mode_guard(int) {}
  };
  struct recorder {
    void create() {}
  };
  struct launch_setup {};
  static launch_setup setup(const recorder&, bool, int) { return {}; }
  static void drain_deferred() {}

  // Generation.
  /// The host backend reads the mask directly: no compaction, no temporary storage.
  static std::size_t select_temp_bytes(int) { return 0; }
  template <class Pipeline, class Tuning, class Hook>
  static void prepare(std::size_t) {}
  template <class Pipeline, class Tuning, class Hook>
  static unsigned selected_blocks(std::size_t, int) { return 1; }
  template <class Pipeline, class Tuning, class Hook>
  static unsigned latency_blocks(std::size_t, int) { return 0; }
  static void preload_selection(const env_selection&, const int*, stream_type) {}
  static std::shared_ptr<unsigned char> scratch(std::size_t bytes) { return allocate_shared(bytes); }

  /// Generates every env (or every env with a nonzero mask entry), one after the other; then,
  /// with a grid-scope stage, runs it and finishes the envs it took.
  template <class Pipeline, class Tuning, class Hook>
  static void generate(const generate_args<Hook>& a, unsigned char* scratch, const launch_setup&, stream_type) {
    const host_block_context ctx;
    ++*a.launch_count;
    for (int e = 0; e < a.params.num_envs; ++e) {
      if (!a.mask[e]) continue;
      workspace ws;
      ws.bind_scratch(scratch, a.layout);
      generate_env<Pipeline>(ctx, ws, a, e);
    }
    if constexpr (Pipeline::has_grid) {
      if (!Pipeline::grid_stage::runs(a.params)) return;
      host_grid_context grid_ctx;
      Pipeline::grid_stage::run(grid_ctx, a.grid, a.params);
      for (int e = 0; e < a.params.num_envs; ++e) {
        if (a.grid_pending[e] == 0) continue;
        workspace ws;
        ws.bind_scratch(scratch, a.layout);
        finish_grid_env<Pipeline>(ctx, ws, a, e);
      }
    }
  }

  /// Tracks built ahead (generator::enable_ahead): nothing to prepare; one "block".
  template <class Pipeline, class Tuning, class Hook>
  static unsigned prepare_ahead(std::size_t, int) { return 1; }

  /// Fills every env's slot of the tracks built ahead and empties the stale lists.
  template <class Pipeline, class Tuning, class Hook>
  static void fill_ahead(const generate_args<Hook>& a, unsigned char* scratch, unsigned, stream_type) {
    const host_block_context ctx;
    for (int e = 0; e < a.params.num_envs; ++e) {
      workspace ws;
      ws.bind_scratch(scratch, a.layout);
      generate_env<Pipeline, true>(ctx, ws, a, e, true);
    }
    for (int k = 0; k < ahead_fill_count; ++k) a.ahead.counters[k] = 0;
  }

  /// A masked generation: the host loop reads the mask itself.
  template <class Pipeline, class Tuning, class Hook>
  static void generate_masked(const generate_args<Hook>& a, unsigned char* scratch, const env_selection&, int*,
                              const launch_setup& setup, bool, stream_type s) {
    generate<Pipeline, Tuning>(a, scratch, setup, s);
  }

  /// A masked generation with tracks built ahead: the work of the CUDA backend's
  /// generate_ahead_kernel, in order: the stale slots that the listing chose refilled (first,
  /// so that the mask is read before any serve resets progress that it may alias), then the
  /// selected envs served from their slots.
  template <class Pipeline, class Tuning, class Hook>
  static void generate_masked_ahead(const generate_args<Hook>& a, unsigned char* scratch, const env_selection&,
                                    unsigned, const launch_setup&, bool, stream_type) {
    const host_block_context ctx;
    ++*a.launch_count;
    bool listed_stale = false;
    for (int e = 0; e < a.params.num_envs; ++e) listed_stale = listed_stale || (a.mask[e] && ahead_stale(a.ahead, a.tracks, e));
    const int refills = ahead_choose_refill(a.ahead.counters, a.ahead.refill_at, listed_stale);
    const int* refill = a.ahead.refilling(a.ahead.counters[ahead_side]);
    const auto work = [&](int e, env_work w, bool selected) {
      workspace ws;
      ws.bind_scratch(scratch, a.layout);
      work_on_env<Pipeline>(ctx, ws, a, e, w, selected);
    };
    for (int i = 0; i < refills; ++i) work(refill[i], env_work::refill, a.mask[refill[i]]);
    for (int e = 0; e < a.params.num_envs; ++e)
      if (a.mask[e]) work(e, env_work::serve, false);
  }

  // Progress.
  template <class Tuning, class Ref>
  static void prepare_progress() {}
  template <class Tuning, class Ref>
  static void step(const Ref& ref, const Ref*, const float3* positions, stream_type) {
    for (int e = 0; e < ref.num_envs(); ++e) ref.step(e, positions[e]);
  }
  template <class Ref>
  static void reset_progress(const Ref& ref, const Ref*, env_mask mask, stream_type) {
    for (int e = 0; e < ref.num_envs(); ++e)
      if (mask[e]) ref.reset(e);
  }
};

}  // namespace track_gen::detail

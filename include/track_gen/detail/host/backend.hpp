#pragma once
/// @file
/// Host backend operations: memory, generation and step loops over the environments.

#include <track_gen/course_ref.hpp>
#include <track_gen/detail/generate/generate_track.hpp>
#include <track_gen/detail/grid/host_context.hpp>
#include <track_gen/detail/host/block_context.hpp>
#include <track_gen/policy.hpp>

#include <cstring>
#include <memory>

namespace track_gen::detail {

struct host_ops {
  static unsigned char* allocate(std::size_t bytes) { return new unsigned char[bytes == 0 ? 1 : bytes]; }
  static void deallocate(unsigned char* p) noexcept { delete[] p; }
  static void copy_to_host(void* dst, const void* src, std::size_t bytes, host_stream) { std::memcpy(dst, src, bytes); }
  static void copy_to_host_async(void* dst, const void* src, std::size_t bytes, host_stream) {
    if (bytes != 0) std::memcpy(dst, src, bytes);
  }
  static void synchronize(host_stream) {}
  static void copy_from_host(void* dst, const void* src, std::size_t bytes, host_stream) { std::memcpy(dst, src, bytes); }
  static void zero(void* dst, std::size_t bytes, host_stream) { std::memset(dst, 0, bytes); }

  static void require_device_pointer(const void*, const char*) {}
  static std::shared_ptr<unsigned char> allocate_shared(std::size_t bytes, bool) {
    return std::shared_ptr<unsigned char>(allocate(bytes), [](unsigned char* q) { deallocate(q); });
  }

  /// The host backend reads the mask directly: no compaction, no temporary storage.
  static std::size_t select_temp_bytes(int) { return 0; }

  /// The host backend has no captures: nothing to set up.
  struct launch_setup {};

  /// Generates every env (or every env with a nonzero mask entry), one after the other; then,
  /// with a grid-scope stage, runs it and finishes the envs it took.
  template <class Pipeline, class Tuning>
  static void generate(const generate_args& a, unsigned char* scratch, const launch_setup&, host_stream) {
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

  template <class Tuning>
  static void step(const course_ref& ref, const course_ref*, const float3* positions, host_stream) {
    for (int e = 0; e < ref.num_envs(); ++e) ref.step(e, positions[e]);
  }
};

}  // namespace track_gen::detail

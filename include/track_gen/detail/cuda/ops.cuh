#pragma once
/// @file
/// CUDA backend operations: memory, kernel preparation and asynchronous launches. The same
/// interface as host_ops (detail/host/ops.hpp), so that owners never branch on the backend.

#include <track_gen/detail/capture/query.hpp>
#include <track_gen/detail/capture/conditional.cuh>
#include <track_gen/detail/cuda/error.hpp>
#include <track_gen/detail/cuda/grid_context.cuh>
#include <track_gen/detail/lifetime/lifetime.hpp>
#include <track_gen/detail/generate/kernels.cuh>
#include <track_gen/detail/progress/kernels.cuh>
#include <track_gen/detail/select/select.cuh>
#include <track_gen/env_mask.hpp>


#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace track_gen::detail {

struct cuda_ops {
  using stream_type = ::cuda::stream_ref;
  using launch_setup = cuda_launch_setup;
  /// The library's kernels read their views from the owner's memory (progress/kernels.cuh says why).
  static constexpr bool kernels_read_resident_views = true;

  // Memory.
  /// Device memory owned through a shared_ptr. The last owner frees it at once (relaxed
  /// capture mode, see deferred_frees::drain), or queues it when that owner is a CUDA user
  /// object being destroyed (no CUDA call allowed there) or the free is refused.
  static std::shared_ptr<unsigned char> allocate_shared(std::size_t bytes) {
    void* p = nullptr;
    throw_on_cuda_error(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc of the library's storage");
    return std::shared_ptr<unsigned char>(static_cast<unsigned char*>(p), [](unsigned char* q) {
      if (in_user_object_destructor()) {
        deferred_frees::instance().push(q);
        return;
      }
      capture_mode_guard relaxed(cudaStreamCaptureModeRelaxed);
      if (cudaFree(q) != cudaSuccess) {
        (void)cudaGetLastError();
        deferred_frees::instance().push(q);
      }
    });
  }
  /// Asynchronous device -> host copy on `stream`; call `synchronize` before reading `dst`.
  static void copy_to_host_async(void* dst, const void* src, std::size_t bytes, stream_type s) {
    if (bytes == 0) return;
    throw_on_cuda_error(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s.get()), "cudaMemcpyAsync (device to host)");
  }
  /// Waits for `s` with this thread in capture mode `capture_mode` (0 global, 1 thread-local, 2 relaxed).
  static void synchronize(stream_type s, int capture_mode = 0) {
    capture_mode_guard guard(static_cast<cudaStreamCaptureMode>(capture_mode));
    throw_on_cuda_error(cudaStreamSynchronize(s.get()), "cudaStreamSynchronize after copies to the host");
  }
  static void zero(void* dst, std::size_t bytes, stream_type s) {
    throw_on_cuda_error(cudaMemsetAsync(dst, 0, bytes, s.get()), "cudaMemsetAsync of the library's storage");
  }
  /// Copy host -> device on `stream`, waiting for it so the host buffer may go away.
  static void copy_from_host(void* dst, const void* src, std::size_t bytes, stream_type s) {
    if (bytes == 0) return;
    throw_on_cuda_error(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s.get()), "cudaMemcpyAsync (host to device)");
    throw_on_cuda_error(cudaStreamSynchronize(s.get()), "cudaStreamSynchronize after a copy from the host");
  }

  // Calls and captures.
  /// The captures an owner has recently anchored its memory to (their ids).
  struct call_state {
    std::array<unsigned long long, 8> ids{};
    std::size_t next = 0;
  };
  /// Before recording or running work on `s`: returns whether it is capturing; anchors `anchor`
  /// (when not null) to that capture's graph, once per capture; when not capturing, frees what
  /// released graphs left in the deferred list.
  static bool begin_call(call_state& state, const std::shared_ptr<const void>& anchor, stream_type s) {
    const capture_info info = query_capture(s.get());
    if (!info.active()) {
      deferred_frees::instance().drain();
      return false;
    }
    if (anchor != nullptr && std::find(state.ids.begin(), state.ids.end(), info.id) == state.ids.end()) {
      attach_user_object(info.graph, anchor, false);
      state.ids[state.next] = info.id;
      state.next = (state.next + 1) % state.ids.size();
    }
    return true;
  }
  /// This thread's capture mode (0 global, 1 thread-local, 2 relaxed) for the guard's lifetime,
  /// around calls that are not capture-safe.
  struct mode_guard : capture_mode_guard {
    explicit mode_guard(int mode) : capture_mode_guard(static_cast<cudaStreamCaptureMode>(mode)) {}
  };
  /// The streams a generator captures conditional bodies on (one per nesting depth).
  struct recorder {
    body_stream_set bodies;
    void create() { bodies.create(); }
  };
  static launch_setup setup(const recorder& r, bool conditional, int capture_mode) {
    launch_setup s{};
    s.conditional = conditional;
    s.bodies = &r.bodies;
    s.mode = static_cast<cudaStreamCaptureMode>(capture_mode);
    return s;
  }
  static void drain_deferred() { deferred_frees::instance().drain(); }
  /// The host backend's per-track scratch; none here (shared memory).
  static std::shared_ptr<unsigned char> scratch(std::size_t) { return nullptr; }

  /// Throws capture_error when `stream` is capturing: `what` allocates or synchronises.
  static void require_not_capturing(stream_type s, const char* what) {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    throw_on_cuda_error(cudaStreamIsCapturing(s.get(), &st), "cudaStreamIsCapturing");
    if (st != cudaStreamCaptureStatusNone) {
      throw capture_error(std::string("track_gen: ") + what +
                          " allocates device memory or synchronises, which is not allowed while the stream is "
                          "capturing a CUDA graph; do it before cudaStreamBeginCapture / torch.cuda.graph and "
                          "record only step() and regenerate() in the capture.");
    }
  }

  /// Throws std::invalid_argument unless `p` is device (or managed) memory: a host pointer
  /// handed to a kernel would fault and poison the whole context. No synchronisation.
  static void require_device_pointer(const void* p, const char* what) {
    cudaPointerAttributes attr{};
    const cudaError_t code = cudaPointerGetAttributes(&attr, p);
    if (code != cudaSuccess) {
      (void)cudaGetLastError();  // clear the non-sticky error this query may leave behind
      throw std::invalid_argument(std::string("track_gen: ") + what + " is not a CUDA pointer (" + cudaGetErrorName(code) + ")");
    }
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) {
      throw std::invalid_argument(std::string("track_gen: ") + what +
                                  " must point to device or managed memory (backend::cuda); got a host pointer");
    }
  }

  /// Loads the kernels now (CUDA's lazy loading would otherwise load them at their first launch,
  /// possibly inside a capture) and raises the dynamic shared memory limit when needed.
  template <class Pipeline, class Tuning, class Hook>
  static void prepare(std::size_t scratch_bytes) {
    constexpr int threads = generate_threads<Pipeline, Tuning>;
    cudaFuncAttributes other{};
    throw_on_cuda_error(cudaFuncGetAttributes(&other, any_of_mask_kernel<reduction_threads>), "loading the any-of-mask kernel");
    throw_on_cuda_error(cudaFuncGetAttributes(&other, set_condition_kernel<>), "loading the set-condition kernel");
    if constexpr (Pipeline::has_grid) {
      prepare_generation(generate_resident_kernel<Pipeline, threads, false, Hook>, scratch_bytes);
      prepare_generation(generate_resident_kernel<Pipeline, threads, true, Hook>, scratch_bytes);
      // The stage's own kernels load at construction, which runs the grid stage eagerly.
      throw_on_cuda_error(cudaFuncGetAttributes(&other, grid_update_active_kernel<reduction_threads>), "loading the active-flag kernel");
      throw_on_cuda_error(cudaFuncGetAttributes(&other, grid_loop_start_kernel<>), "loading the WHILE start kernel");
      throw_on_cuda_error(cudaFuncGetAttributes(&other, grid_loop_next_kernel<>), "loading the WHILE condition kernel");
      throw_on_cuda_error(cudaFuncGetAttributes(&other, grid_set_if_kernel<>), "loading the IF condition kernel");
    } else {
      prepare_generation(generate_kernel<Pipeline, threads, Hook>, scratch_bytes);
      prepare_generation(generate_list_kernel<Pipeline, threads, Hook>, scratch_bytes);
      // The wide list kernel: latency_blocks (it may not fit beside a large scratch).
    }
  }

  /// Blocks of generate_list_kernel with `Threads` threads: as many as fit on the GPU at once
  /// (occupancy with this course's shared memory), at most one per env; 0 when not one block of
  /// it fits.
  template <class Pipeline, int Threads, class Hook, int ScanThreads = Threads>
  static unsigned resident_list_blocks(std::size_t scratch_bytes, int num_envs) {
    return resident_blocks(generate_list_kernel<Pipeline, Threads, Hook, ScanThreads>, Threads, scratch_bytes, num_envs);
  }
  /// Blocks of `kernel` (`threads` a block, `scratch_bytes` of dynamic shared memory) that fit on
  /// the GPU at once, at most `num_envs`; 0 when not one block fits.
  template <class Kernel>
  static unsigned resident_blocks(Kernel kernel, int threads, std::size_t scratch_bytes, int num_envs) {
    int device = 0, sms = 0, per_sm = 0;
    throw_on_cuda_error(cudaGetDevice(&device), "cudaGetDevice");
    throw_on_cuda_error(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                        "cudaDeviceGetAttribute(MultiProcessorCount)");
    throw_on_cuda_error(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, scratch_bytes),
                        "cudaOccupancyMaxActiveBlocksPerMultiprocessor (generation kernel)");
    if (per_sm <= 0) return 0u;
    const long long blocks = static_cast<long long>(per_sm) * std::max(sms, 1);
    return static_cast<unsigned>(std::max(1LL, std::min<long long>(blocks, num_envs)));
  }
  /// Blocks of the narrow list kernel (generate_block_threads; prepare checked that one fits).
  template <class Pipeline, class Tuning, class Hook>
  static unsigned selected_blocks(std::size_t scratch_bytes, int num_envs) {
    return std::max(1u, resident_list_blocks<Pipeline, generate_threads<Pipeline, Tuning>, Hook>(scratch_bytes, num_envs));
  }
  /// Blocks of the wide list kernel (latency_block_threads), all resident at once: a masked
  /// regeneration that lists at most this many envs builds each with one wide block. 0 when the
  /// tuning has one launch shape only, or when a wide block does not fit beside the scratch.
  template <class Pipeline, class Tuning, class Hook>
  static unsigned latency_blocks(std::size_t scratch_bytes, int num_envs) {
    if constexpr (!has_wide_shape<Pipeline, Tuning>) {
      return 0u;
    } else {
      constexpr int wide = latency_threads<Tuning>::value;
      constexpr int narrow = generate_threads<Pipeline, Tuning>;
      if (!prepare_generation(generate_list_kernel<Pipeline, wide, Hook, narrow>, scratch_bytes, false)) return 0u;
      return resident_list_blocks<Pipeline, wide, Hook, narrow>(scratch_bytes, num_envs);
    }
  }

  /// Loads CUB's compaction kernels now (select.cuh).
  static void preload_selection(const env_selection& sel, const int* zero_flag, ::cuda::stream_ref stream) {
    detail::preload_selection(sel, zero_flag, stream.get());
  }
  static std::size_t select_temp_bytes(int num_envs) { return detail::select_temp_bytes(num_envs); }

  /// Masked regeneration of a pipeline without a grid-scope stage: the mask is compacted into a
  /// list of envs, counted on the device (select.cuh: list_envs), then generate_list_kernel
  /// rebuilds them on a fixed grid, in one of two launch shapes chosen from the count: wide
  /// blocks (latency_block_threads) for at most sel.wide_blocks envs, narrow ones above. With
  /// `conditional_node` (recording under skip::conditional) the shapes are the branches of a
  /// SWITCH node (an IF node with one shape) and nothing runs when no env was selected;
  /// otherwise both launch and each returns unless the count is its own.
  template <class Pipeline, class Tuning, class Hook>
  static void generate_selected(const generate_args<Hook>& a, const env_selection& sel, const launch_setup& setup,
                                bool conditional_node, ::cuda::stream_ref stream) {
    constexpr int threads = generate_threads<Pipeline, Tuning>;
    constexpr int wide_threads = latency_threads<Tuning>::value;
    const bool two_shapes = has_wide_shape<Pipeline, Tuning> && sel.wide_blocks > 0;
    const int wide_limit = two_shapes ? static_cast<int>(sel.wide_blocks) : 0;
    const auto launch_narrow = [&](cudaStream_t s) {
      generate_list_kernel<Pipeline, threads, Hook>
          <<<sel.blocks, threads, a.layout.bytes, s>>>(a, sel.ids, sel.count, sel.next, list_share{wide_limit, false});
      throw_on_cuda_error(cudaGetLastError(), "launching the generation kernel");
    };
    const auto launch_wide = [&](cudaStream_t s) {
      if constexpr (has_wide_shape<Pipeline, Tuning>) {
        if (!two_shapes) return;
        generate_list_kernel<Pipeline, wide_threads, Hook, threads>
            <<<sel.wide_blocks, wide_threads, a.layout.bytes, s>>>(a, sel.ids, sel.count, sel.next, list_share{wide_limit, true});
        throw_on_cuda_error(cudaGetLastError(), "launching the generation kernel (wide blocks)");
      }
    };
    if (!conditional_node) {
      list_envs(sel, a.mask, a.params.num_envs, list_condition{{}, wide_limit, list_node::none}, stream.get());
      launch_wide(stream.get());
      launch_narrow(stream.get());
      return;
    }
    record_conditional_branches(
        stream.get(), two_shapes ? cudaGraphCondTypeSwitch : cudaGraphCondTypeIf, two_shapes ? 2 : 1, *setup.bodies,
        setup.mode,
        [&](cudaGraphConditionalHandle handle, cudaStream_t st) {
          list_envs(sel, a.mask, a.params.num_envs, list_condition{handle, wide_limit, two_shapes ? list_node::switch_node : list_node::if_node}, st);
        },
        [&](cudaStream_t body, cudaGraphConditionalHandle, int branch) {
          if (two_shapes && branch == 0) {
            launch_wide(body);
          } else {
            launch_narrow(body);
          }
        });
  }

  /// Loads one generation kernel, checks that a block's shared memory fits the GPU, and raises
  /// the kernel's dynamic shared memory limit to `scratch_bytes` when it is lower. Returns
  /// whether it fits; when it does not, throws if `required` (an optional launch shape, such as
  /// the wide list kernel whose larger static storage may not fit beside a large scratch, is
  /// then left out instead).
  template <class Kernel>
  static bool prepare_generation(Kernel kernel, std::size_t scratch_bytes, bool required = true) {
    cudaFuncAttributes attr{};
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, kernel), "loading a generation kernel");
    int device = 0, optin = 0;
    throw_on_cuda_error(cudaGetDevice(&device), "cudaGetDevice");
    throw_on_cuda_error(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                        "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
    const std::size_t total = scratch_bytes + attr.sharedSizeBytes;
    if (total > static_cast<std::size_t>(optin)) {
      if (!required) return false;
      throw std::invalid_argument("track_gen: one track needs " + std::to_string(total) +
                                  " bytes of shared memory but this GPU allows " + std::to_string(optin) +
                                  " per block: lower track_params.num_samples, polar.control_points, "
                                  "spline.samples_per_segment or the size of user tracks");
    }
    // The limit belongs to the kernel on the current device and is shared by every course that
    // launches it there: only raise it.
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes (generation kernel)");
    if (static_cast<std::size_t>(attr.maxDynamicSharedSizeBytes) < scratch_bytes) {
      throw_on_cuda_error(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(scratch_bytes)),
                          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    }
    return true;
  }

  // Tracks built ahead (generator::enable_ahead): generate_ahead_kernel, instantiated only by
  // the generators that enable them. Wide blocks (latency_block_threads) where the tuning has
  // them: they serve a copy or a miss with the latency of a few done envs' regeneration.
  template <class Pipeline, class Tuning>
  static constexpr int ahead_threads = has_wide_shape<Pipeline, Tuning> ? latency_threads<Tuning>::value
                                                                         : generate_threads<Pipeline, Tuning>;

  /// Loads generate_ahead_kernel and returns its grid: as many blocks as fit on the GPU at once,
  /// at most one per env. @throws std::invalid_argument a block does not fit beside the scratch.
  template <class Pipeline, class Tuning, class Hook>
  static unsigned prepare_ahead(std::size_t scratch_bytes, int num_envs) {
    constexpr int threads = ahead_threads<Pipeline, Tuning>;
    const auto kernel = generate_ahead_kernel<Pipeline, threads, Hook, generate_threads<Pipeline, Tuning>>;
    if (!prepare_generation(kernel, scratch_bytes, false))
      throw std::invalid_argument("track_gen: enable_ahead: a " + std::to_string(threads) +
                                  "-thread block does not fit beside one track's scratch (" + std::to_string(scratch_bytes) +
                                  " bytes of shared memory): lower track_params.num_samples or the control points");
    return std::max(1u, resident_blocks(kernel, threads, scratch_bytes, num_envs));
  }

  /// Fills every env's slot of the tracks built ahead with its next episode's track and empties
  /// the stale lists (generator::enable_ahead, and after each whole-batch generation).
  template <class Pipeline, class Tuning, class Hook>
  static void fill_ahead(const generate_args<Hook>& a, unsigned char*, unsigned blocks, ::cuda::stream_ref stream) {
    constexpr int threads = ahead_threads<Pipeline, Tuning>;
    throw_on_cuda_error(cudaMemsetAsync(a.ahead.counters, 0, ahead_fill_count * sizeof(int), stream.get()),
                        "cudaMemsetAsync (stale lists of the tracks built ahead)");
    generate_ahead_kernel<Pipeline, threads, Hook, generate_threads<Pipeline, Tuning>>
        <<<blocks, threads, a.layout.bytes, stream.get()>>>(a, nullptr, a.ahead.counters + ahead_fill_count,
                                                           a.ahead.counters + ahead_fill_next);
    throw_on_cuda_error(cudaGetLastError(), "launching the generation kernel (filling the tracks built ahead)");
  }

  /// A masked regeneration with tracks built ahead: the listing (select.cuh, which also chooses
  /// the refills on the device), then generate_ahead_kernel, whose blocks return at once when
  /// there is no work. Recorded as two plain nodes whatever the skip policy: on the H200 an IF
  /// node around the kernel cost 2 us more than the idle launch when nothing was done, and 8 us
  /// more when its body ran (graph_replay_bench, E = 4,096; docs/performance-log.md entry 27).
  template <class Pipeline, class Tuning, class Hook>
  static void generate_masked_ahead(const generate_args<Hook>& a, unsigned char*, const env_selection& sel,
                                    unsigned blocks, const launch_setup& setup, bool capturing, ::cuda::stream_ref stream) {
    constexpr int threads = ahead_threads<Pipeline, Tuning>;
    list_condition c{{}, 0, list_node::none};
    c.ahead_counters = a.ahead.counters;
    c.ahead_refill_at = a.ahead.refill_at;
    c.live_episode = a.tracks.episode;
    c.slot_episode = a.ahead.tracks.episode;
    (void)setup;
    (void)capturing;
    list_envs(sel, a.mask, a.params.num_envs, c, stream.get());
    generate_ahead_kernel<Pipeline, threads, Hook, generate_threads<Pipeline, Tuning>>
        <<<blocks, threads, a.layout.bytes, stream.get()>>>(a, sel.ids, sel.count, sel.next);
    throw_on_cuda_error(cudaGetLastError(), "launching the generation kernel (tracks built ahead)");
  }

  /// Records (or runs) one generation call on `stream`: the fused kernel, then, with a
  /// grid-scope stage, its windows and the finish kernel; with tracks built ahead, their refill.
  template <class Pipeline, class Tuning, class Hook>
  static void generate(const generate_args<Hook>& a, unsigned char*, const launch_setup& setup, ::cuda::stream_ref stream) {
    constexpr int threads = generate_threads<Pipeline, Tuning>;
    const unsigned blocks = static_cast<unsigned>(a.params.num_envs);
    if constexpr (Pipeline::has_grid) {
      generate_resident_kernel<Pipeline, threads, false, Hook><<<blocks, threads, a.layout.bytes, stream.get()>>>(
          a.resident, a.mask, a.advance ? 1 : 0);
    } else {
      generate_kernel<Pipeline, threads, Hook><<<blocks, threads, a.layout.bytes, stream.get()>>>(a);
    }
    throw_on_cuda_error(cudaGetLastError(), "launching the generation kernel");
    if constexpr (Pipeline::has_grid) {
      if (Pipeline::grid_stage::runs(a.params)) {
        cuda_grid_context<threads> ctx(stream.get(), setup);
        Pipeline::grid_stage::run(ctx, a.grid, a.params);
        generate_resident_kernel<Pipeline, threads, true, Hook><<<blocks, threads, a.layout.bytes, stream.get()>>>(a.resident,
                                                                                                          nullptr, 0);
        throw_on_cuda_error(cudaGetLastError(), "launching the grid finish kernel");
      }
    }
  }

  /// Records, into the capture `stream` belongs to, the masked regeneration under an IF
  /// conditional node (docs/cuda-graphs.md): an any-of-mask kernel, a one-thread kernel setting the
  /// condition (and clearing the flag for the next replay), the node on the capture's current
  /// dependencies (the enclosing capture is not ended, so its id stays), and `generate` captured
  /// into the node's body on the next body stream in the setup's capture mode.
  template <class Pipeline, class Tuning, class Hook>
  static void generate_if_any(const generate_args<Hook>& a, int* flag, const launch_setup& setup, ::cuda::stream_ref stream) {
    launch_any_of(a.mask, a.params.num_envs, flag, stream.get());
    record_conditional(
        stream.get(), cudaGraphCondTypeIf, *setup.bodies, setup.mode,
        [&](cudaGraphConditionalHandle handle, cudaStream_t st) { set_condition_kernel<><<<1, 1, 0, st>>>(handle, flag); },
        [&](cudaStream_t body, cudaGraphConditionalHandle) { generate<Pipeline, Tuning>(a, nullptr, setup, body); });
  }

  /// A masked generation: with a grid-scope stage, the fused kernel over every env (each block
  /// reads its mask entry), under an IF node on the any-of-mask flag when recorded with
  /// conditional recording; without one, the compaction and the list kernel (generate_selected).
  template <class Pipeline, class Tuning, class Hook>
  static void generate_masked(const generate_args<Hook>& a, unsigned char* scratch, const env_selection& sel,
                              int* any_flag, const launch_setup& setup, bool capturing, ::cuda::stream_ref stream) {
    const bool conditional_node = capturing && setup.conditional;
    if constexpr (!Pipeline::has_grid) {
      (void)scratch;
      (void)any_flag;
      generate_selected<Pipeline, Tuning>(a, sel, setup, conditional_node, stream);
    } else {
      if (conditional_node) {
        generate_if_any<Pipeline, Tuning>(a, any_flag, setup, stream);
        return;
      }
      generate<Pipeline, Tuning>(a, scratch, setup, stream);
    }
  }

  // Progress.
  /// Loads the progress kernels now (never lazily inside a capture).
  template <class Tuning, class Ref>
  static void prepare_progress() {
    cudaFuncAttributes attr{};
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, step_kernel<Ref, Tuning::step_block_threads, Tuning::step_min_blocks_per_sm>),
                        "loading the step kernel");
    throw_on_cuda_error(cudaFuncGetAttributes(&attr, reset_kernel<Ref>), "loading the progress reset kernel");
  }
  template <class Tuning, class Ref>
  static void step(const Ref& ref, const Ref* resident, const float3* positions, ::cuda::stream_ref stream) {
    constexpr int threads = Tuning::step_block_threads;
    const unsigned blocks = static_cast<unsigned>((ref.num_envs() + threads - 1) / threads);
    step_kernel<Ref, threads, Tuning::step_min_blocks_per_sm><<<blocks, threads, 0, stream.get()>>>(resident, positions);
    throw_on_cuda_error(cudaGetLastError(), "launching the step kernel");
  }
  /// Resets the progress of the masked envs (reset_kernel).
  template <class Ref>
  static void reset_progress(const Ref& ref, const Ref* resident, env_mask mask, ::cuda::stream_ref stream) {
    constexpr int threads = 256;
    const unsigned blocks = static_cast<unsigned>((ref.num_envs() + threads - 1) / threads);
    reset_kernel<Ref><<<blocks, threads, 0, stream.get()>>>(resident, mask);
    throw_on_cuda_error(cudaGetLastError(), "launching the progress reset kernel");
  }
};

}  // namespace track_gen::detail

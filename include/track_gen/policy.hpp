#pragma once
/// @file
/// Compile-time policies and their defaults, all in one place: the backend tag and the numeric
/// knobs (launch shapes and capacities).

#include <track_gen/detail/backends.hpp>
#include <track_gen/detail/config.hpp>
#include <track_gen/detail/launch_protocol.hpp>

#include <type_traits>

namespace track_gen {


/// Numeric knobs of the kernels. Derive from it (or write your own struct with the same
/// members) and pass it as the Tuning parameter of `policy`.
struct default_tuning {
  /// Threads per block of the fused generation kernel (one block builds one track). 64 is the
  /// fastest on the H200 for the `track` preset (track_gen_bench --block-threads, median of 20,
  /// regenerating E = 1M tracks): N = 128: 12.3 ms (64), 14.6 (128), 19.8 (256); N = 256: 18.4,
  /// 20.3, 23.8 and 41.9 ms (512); N = 512: 27.3, 29.6, 32.2 ms. Fewer threads per track leave
  /// fewer warps waiting at the barriers after the stages with a few work items (M control
  /// points, G gates). Pipelines with a grid-scope stage use grid_pipeline_block_threads.
  static constexpr int generate_block_threads = 64;
  /// Threads per block of a masked regeneration that lists few envs: when the mask selects no
  /// more envs than blocks of this size fit on the GPU at once, each is built by one such block
  /// instead of one of generate_block_threads (chosen on the device, from the count: a SWITCH
  /// conditional node, or two launches that each return unless the count is theirs). Latency,
  /// not throughput: one track at N = 256 takes 21.0 us with 64 threads, 15.0 with 128, 13.1
  /// with 256 and 13.2 with 512 (H200, track_gen_bench --envs 1 --block-threads, launch
  /// included). The wide blocks build the narrow blocks' tracks bit for bit (launch_protocol.hpp,
  /// scan_tile). Used when generate_block_threads is 64, by pipelines without a grid-scope stage.
  static constexpr int latency_block_threads = 256;
  /// Threads per block of the generation kernels (fused, finish, and the grid-scope stage's
  /// context) of pipelines with a grid-scope stage, such as presets::long_track_pipeline (2048
  /// samples: 8 per thread and stage). On the H200, long_track without its grid stage regenerates
  /// 64 envs in 0.0564 ms with 256 threads against 0.154 ms with 64 (same stages). And with 64 threads,
  /// compute-sanitizer racecheck crashed (a host SIGSEGV, no hazard reported) on the replayed
  /// long_track test, where 256 passes: not understood yet (docs/gpu-report.md), so 256 it is.
  static constexpr int grid_pipeline_block_threads = 256;
  /// Threads per block of the step kernel (one thread per environment).
  static constexpr int step_block_threads = 256;
  /// Blocks of the step kernel that must fit on one SM at once (`__launch_bounds__`' second
  /// argument; it caps the registers per thread). The step kernel waits on gathered loads:
  /// Nsight Compute on the H200 (E = 1M, 74 registers, 3 blocks per SM) found it latency bound
  /// at 34 % occupancy (85 % of cycles with no eligible warp); 4 blocks caps it at 64 registers.
  static constexpr int step_min_blocks_per_sm = 4;
  /// How far, in segments, the local nearest-point search of `step` may walk from the last
  /// projection before it gives way to the full O(N) search (track_ref::project).
  static constexpr int projection_window = 8;
};

/// The mode of the captures the library begins itself (conditional bodies) and of the guard
/// (cudaThreadExchangeStreamCaptureMode) around its capture-unsafe calls: the allocation at
/// construction and the synchronising host copies. (Deferred frees always run in relaxed mode:
/// in global mode a refused cudaFree invalidates another thread's global capture.) `value` is
/// the matching `cudaStreamCaptureMode` (Global = 0, ThreadLocal = 1, Relaxed = 2).
namespace capture {
struct global {
  static constexpr int value = 0;
};
struct thread_local_ {
  static constexpr int value = 1;
};
struct relaxed {
  static constexpr int value = 2;
};
}  // namespace capture

/// How masked work is recorded into a capture.
namespace skip {
/// Device-side CUDA conditional nodes around masked regeneration (a SWITCH node between its two
/// launch shapes, an IF node with one shape or a grid-scope stage), so nothing of it but the
/// compaction runs on a replay where no env is done. (backend::host: the same as unconditional.)
struct conditional {};
/// Every launch is recorded; kernels exit early (exact no-ops, full launch cost): both launch
/// shapes of a masked regeneration run, and each returns unless the count is its own.
struct unconditional {};
}  // namespace skip

/// Who owns the device memory of a course.
namespace ownership {
/// Reference counted; every capture that records course work holds a reference through a CUDA
/// user object, so a graph replayed after the course is gone still reads live memory. (With
/// backend::host there are no graphs: the memory goes with the last of the course and the
/// handles `course::owner()` gave out. `host_policy` uses ownership::owning: no handle, null.)
struct anchored {};
/// Freed with the course (eager use, or graphs that never outlive the course).
struct owning {};
/// The caller provides the storage (course::required_bytes) and keeps it alive.
struct borrowed {};
}  // namespace ownership

namespace detail {
/// Tuning::grid_pipeline_block_threads when the tuning declares it, else generate_block_threads
/// (a tuning written from scratch needs only the members it had before).
template <class Tuning, class = void>
struct grid_pipeline_threads {
  static constexpr int value = Tuning::generate_block_threads;
};
template <class Tuning>
struct grid_pipeline_threads<Tuning, std::void_t<decltype(Tuning::grid_pipeline_block_threads)>> {
  static constexpr int value = Tuning::grid_pipeline_block_threads;
};
/// Tuning::latency_block_threads when the tuning declares it, else generate_block_threads (no
/// second launch shape).
template <class Tuning, class = void>
struct latency_threads {
  static constexpr int value = Tuning::generate_block_threads;
};
template <class Tuning>
struct latency_threads<Tuning, std::void_t<decltype(Tuning::latency_block_threads)>> {
  static constexpr int value = Tuning::latency_block_threads;
};
/// Threads per block of the generation kernels of `Pipeline` under `Tuning`.
template <class Pipeline, class Tuning>
inline constexpr int generate_threads =
    Pipeline::has_grid ? grid_pipeline_threads<Tuning>::value : Tuning::generate_block_threads;
/// Whether a masked regeneration of `Pipeline` under `Tuning` has the wide launch shape: a
/// pipeline without a grid-scope stage, latency_block_threads other than generate_block_threads,
/// and 64-thread narrow blocks (the scan order the wide blocks reproduce: launch_protocol.hpp).
template <class Pipeline, class Tuning>
inline constexpr bool has_wide_shape = !Pipeline::has_grid && latency_threads<Tuning>::value != Tuning::generate_block_threads &&
                                       Tuning::generate_block_threads == scan_tile;
}  // namespace detail

/// The compile-time configuration of a `course`.
template <class Capture = capture::global, class Skip = skip::conditional, class Ownership = ownership::anchored,
          class Backend = backend::default_backend, class Tuning = default_tuning>
struct policy {
  using capture_mode = Capture;
  using skip_policy = Skip;
  using ownership_policy = Ownership;
  using backend_type = Backend;
  using tuning = Tuning;
  static_assert(Capture::value >= 0 && Capture::value <= 2,
                "Capture must be capture::global, capture::thread_local_ or capture::relaxed.");
  static_assert(std::is_same_v<Skip, skip::conditional> || std::is_same_v<Skip, skip::unconditional>,
                "Skip must be skip::conditional or skip::unconditional.");
  static_assert(std::is_same_v<Ownership, ownership::anchored> || std::is_same_v<Ownership, ownership::owning> ||
                    std::is_same_v<Ownership, ownership::borrowed>,
                "Ownership must be ownership::anchored, ownership::owning or ownership::borrowed.");
  static_assert(Tuning::generate_block_threads % 32 == 0 && Tuning::generate_block_threads >= 32 &&
                    Tuning::generate_block_threads <= 1024,
                "generate_block_threads must be a multiple of 32 in [32, 1024].");
  static_assert(detail::grid_pipeline_threads<Tuning>::value % 32 == 0 && detail::grid_pipeline_threads<Tuning>::value >= 32 &&
                    detail::grid_pipeline_threads<Tuning>::value <= 1024,
                "grid_pipeline_block_threads must be a multiple of 32 in [32, 1024].");
  static_assert(detail::latency_threads<Tuning>::value % 32 == 0 && detail::latency_threads<Tuning>::value >= 32 &&
                    detail::latency_threads<Tuning>::value <= 1024,
                "latency_block_threads must be a multiple of 32 in [32, 1024].");
  static_assert(Tuning::step_block_threads % 32 == 0 && Tuning::step_block_threads >= 32 &&
                    Tuning::step_block_threads <= 1024,
                "step_block_threads must be a multiple of 32 in [32, 1024].");
  static_assert(Tuning::step_min_blocks_per_sm >= 1 && Tuning::step_min_blocks_per_sm * Tuning::step_block_threads <= 2048,
                "step_min_blocks_per_sm must be at least 1, and that many blocks of step_block_threads must fit in "
                "2048 threads (one SM).");
  static_assert(Tuning::projection_window >= 1, "projection_window must be at least 1 sample.");
};

/// Run-time choices of how a course records into captures (`course::set_recording`), within what
/// its Policy allows. A course starts with its Policy's choices: `conditional` is true under
/// skip::conditional, `capture_mode` is `Policy::capture_mode::value`. Bindings that learn the
/// capture's mode only at run time (PyTorch's `torch.cuda.graph(capture_error_mode=...)`) set
/// them per call.
struct recording_options {
  /// Record a masked `regenerate` (and grid-scope bounded loops) under conditional nodes when the
  /// stream is capturing. Needs a Policy with skip::conditional (the course then owns the body
  /// streams); false records every launch, as skip::unconditional does (same results, bit for bit).
  bool conditional = true;
  /// The `cudaStreamCaptureMode` value (0 global, 1 thread-local, 2 relaxed) of the captures the
  /// library begins itself (conditional bodies) and of the guard around its capture-unsafe calls;
  /// what `capture::global`, `capture::thread_local_`, `capture::relaxed` fix at compile time.
  int capture_mode = 0;
};

/// The tracks a generator builds ahead (generator::enable_ahead, course::enable_ahead): each
/// env's next-episode track waits in a slot, so that a masked regeneration copies it.
struct ahead_options {
  /// Refill the stale slots (those a regeneration took) once at least this many are stale, all
  /// in the launch of a masked regeneration, beside the envs it serves; a regenerated env that
  /// finds its slot stale (it ended again before the refill) is built as without slots and makes
  /// the same launch refill the others. In [1, num_envs], or 0: min(num_envs / 8, the 256-thread
  /// blocks that fit on the GPU at once), at least 1 (the host backend: 1).
  int refill_at = 0;
};

/// What the tracks built ahead did since they were enabled (generator::ahead_counts).
struct ahead_counts {
  unsigned long long served = 0;    ///< regenerated envs whose track was copied from their slot
  /// regenerated envs built as without slots: their slot did not hold the episode wanted (stale:
  /// the env ended again before its refill; or a rebuild with advance = false of an env whose
  /// slot holds its next episode, which leaves the slot ready)
  unsigned long long missed = 0;
  unsigned long long refilled = 0;  ///< slots refilled by masked regenerations
};

/// The CPU reference backend with default tuning.
using host_policy = policy<capture::global, skip::unconditional, ownership::owning, backend::host>;
/// The GPU backend with the default policies (global capture mode, conditional skipping,
/// anchored ownership) and default tuning (a `.cu` translation unit).
using cuda_policy = policy<capture::global, skip::conditional, ownership::anchored, backend::cuda>;

}  // namespace track_gen

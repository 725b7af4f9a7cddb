#pragma once
/// @file
/// Compile-time policies and their defaults, all in one place: the backend tag and the numeric
/// knobs (launch shapes and capacities).

#include <track_gen/detail/config.hpp>

namespace track_gen {

/// Stream argument of the host backend: accepts (and ignores) anything, so code written for
/// either backend passes the same stream expression.
struct host_stream {
  host_stream() = default;
  template <class S>
  host_stream(const S&) {}
};

/// Discrete choice of where a course lives and runs.
namespace backend {
/// Sequential CPU reference: the same stage functors through a host block context.
/// Pointers given to and returned by a host course are host pointers.
struct host {
  using stream_type = host_stream;
};
#if TRACK_GEN_HAS_CUDA_RUNTIME
/// The GPU: one CUDA block per track, CUB block collectives, asynchronous calls ordered on the
/// stream they are given. Needs a translation unit compiled by nvcc.
struct cuda {
  using stream_type = ::cuda::stream_ref;
};
using default_backend = cuda;
#else
using default_backend = host;
#endif
}  // namespace backend

/// Numeric knobs of the kernels. Derive from it (or write your own struct with the same
/// members) and pass it as `policy<Backend, YourTuning>`.
struct default_tuning {
  /// Threads per block of the fused generation kernel (one block builds one track).
  static constexpr int generate_block_threads = 256;
  /// Threads per block of the step kernel (one thread per environment).
  static constexpr int step_block_threads = 256;
  /// Capacity of control points per track (random_polar_params::control_points <= this).
  static constexpr int max_control_points = 64;
  /// Half-width, in samples, of the local nearest-point search of `step`.
  static constexpr int projection_window = 8;
};

/// The compile-time configuration of a `course`.
template <class Backend = backend::default_backend, class Tuning = default_tuning>
struct policy {
  using backend_type = Backend;
  using tuning = Tuning;
  static_assert(Tuning::generate_block_threads % 32 == 0 && Tuning::generate_block_threads >= 32 &&
                    Tuning::generate_block_threads <= 1024,
                "generate_block_threads must be a multiple of 32 in [32, 1024].");
  static_assert(Tuning::step_block_threads % 32 == 0 && Tuning::step_block_threads >= 32 &&
                    Tuning::step_block_threads <= 1024,
                "step_block_threads must be a multiple of 32 in [32, 1024].");
  static_assert(Tuning::max_control_points >= 4, "max_control_points must be at least 4.");
  static_assert(Tuning::projection_window >= 1, "projection_window must be at least 1 sample.");
};

/// The CPU reference backend with default tuning.
using host_policy = policy<backend::host>;
#if TRACK_GEN_HAS_CUDA_RUNTIME
/// The GPU backend with default tuning.
using cuda_policy = policy<backend::cuda>;
#endif

}  // namespace track_gen

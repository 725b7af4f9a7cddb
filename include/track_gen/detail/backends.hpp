#pragma once
/// @file
/// The backend tags and their stream types (policy.hpp re-exports them); the one place that
/// branches on the CUDA runtime's headers for them.

#include <track_gen/detail/config.hpp>

namespace track_gen {

namespace detail {
#if TRACK_GEN_HAS_CUDA_RUNTIME
using cuda_stream = ::cuda::stream_ref;
#else
/// Without the CUDA toolkit's headers: incomplete, so that backend::cuda cannot be used.
struct cuda_stream;
#endif
}  // namespace detail

/// Stream argument of the host backend (ignored): default-constructible, and constructible from
/// a CUDA stream when the CUDA headers are visible, so code written for both backends passes the
/// same stream expression. Nothing else converts to it (a misplaced argument does not compile).
struct host_stream {
  host_stream() = default;
#if TRACK_GEN_HAS_CUDA_RUNTIME
  host_stream(cudaStream_t) {}
  host_stream(::cuda::stream_ref) {}
#endif
};

/// Discrete choice of where a course lives and runs.
namespace backend {
/// Sequential CPU reference: the same stage functors through a host block context.
/// Pointers given to and returned by a host course are host pointers.
struct host {
  using stream_type = host_stream;
};
/// The GPU: one CUDA block per track, CUB block collectives, asynchronous calls ordered on the
/// stream they are given. Needs a translation unit compiled by nvcc (without the toolkit's
/// headers its stream type is incomplete, and using it does not compile).
struct cuda {
  using stream_type = detail::cuda_stream;
};
/// backend::cuda where the CUDA runtime's headers are visible, backend::host otherwise.
#if TRACK_GEN_HAS_CUDA_RUNTIME
using default_backend = cuda;
#else
using default_backend = host;
#endif
}  // namespace backend

}  // namespace track_gen

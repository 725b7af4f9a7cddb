#pragma once
/// @file
/// The backend operations an owner uses, chosen by its backend tag: host_ops, or cuda_ops in a
/// translation unit compiled by nvcc. The only place that branches on the toolkit for them.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/host/ops.hpp>
#include <track_gen/policy.hpp>

#include <memory>
#include <type_traits>
#include <utility>

#if TRACK_GEN_CUDA_COMPILER
#include <track_gen/detail/cuda/ops.cuh>
#endif
#if TRACK_GEN_HAS_CUDA_RUNTIME
#include <track_gen/detail/lifetime/lifetime.hpp>
#endif

namespace track_gen::detail {

template <class Backend>
struct backend_ops {
  static_assert(std::is_same_v<Backend, backend::host>,
                "backend::cuda needs a translation unit compiled by nvcc (a .cu file); use backend::host in plain C++.");
  using type = host_ops;
};
#if TRACK_GEN_CUDA_COMPILER
template <>
struct backend_ops<backend::cuda> {
  using type = cuda_ops;
};
#endif

/// One reference that keeps `memory` and `also` alive together (what an owner's captures
/// retain: its memory and the batch it reads or writes). Allocates once, at construction.
inline std::shared_ptr<const void> keep_both(std::shared_ptr<const void> memory, std::shared_ptr<const void> also) {
  if (also == nullptr || also == memory) return memory;
  auto both = std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(memory, std::move(also));
  return std::shared_ptr<const void>(both, memory.get());
}

}  // namespace track_gen::detail

namespace track_gen {
/// Frees now what anchored graphs released (their buffers wait in a deferred list, since CUDA
/// destroys user objects where no CUDA call is allowed). Every non-capturing call of a CUDA
/// owner does this too. Host-only builds: a no-op. Not for use inside a capture.
inline void release_deferred() {
#if TRACK_GEN_HAS_CUDA_RUNTIME
  detail::deferred_frees::instance().drain();
#endif
}
}  // namespace track_gen

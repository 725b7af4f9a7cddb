// A host translation unit compiled by the plain C++ compiler (see compile_check.cmake): it must
// build with or without the CUDA toolkit on the include path, and the host backend must run.
#include <track_gen/track_gen.hpp>

#include <cmath>
#include <cstdio>
#include <type_traits>

#ifndef TRACK_GEN_EXPECT_CUDA_RUNTIME
#error "compile with -DTRACK_GEN_EXPECT_CUDA_RUNTIME=0 or 1"
#endif

namespace tg = track_gen;

static_assert(TRACK_GEN_CUDA_COMPILER == 0, "this TU is for the plain C++ compiler, not nvcc");
static_assert(TRACK_GEN_HAS_CUDA_RUNTIME == TRACK_GEN_EXPECT_CUDA_RUNTIME,
              "config.hpp's view of the CUDA runtime differs from the include paths given");

#if TRACK_GEN_EXPECT_CUDA_RUNTIME
// With the toolkit visible, CUDA is the default backend and its stream type is cuda::stream_ref;
// a host course must still accept such a stream (it ignores it).
static_assert(std::is_same_v<tg::backend::default_backend, tg::backend::cuda>, "cuda is the default backend");
static_assert(std::is_same_v<tg::cuda_policy::backend_type::stream_type, ::cuda::stream_ref>, "cuda streams are stream_refs");
#else
// Without it, the host backend is the only one and the default, and no CUDA header was pulled in.
static_assert(std::is_same_v<tg::backend::default_backend, tg::backend::host>, "host is the default backend");
#if defined(__CUDA_RUNTIME_API_H__) || defined(_CUDA_STREAM_REF) || defined(CUDART_VERSION)
#error "a CUDA header was included although the toolkit is not on the include path"
#endif
#endif

int main() {
  tg::track_params params = tg::presets::track(4);
  params.seed = 3;
#if TRACK_GEN_EXPECT_CUDA_RUNTIME
  const ::cuda::stream_ref stream{cudaStream_t{}};
#else
  const tg::host_stream stream{};
#endif
  tg::course<tg::presets::track_pipeline, tg::host_policy> course(params, 0.6f, stream);
  const tg::track_snapshot t = course.copy_tracks(stream);
  int bad = 0;
  for (int e = 0; e < params.num_envs; ++e) {
    // Every track is valid and its gate count follows G = floor(L / spacing).
    if ((t.status[e] & tg::status::valid) == 0) ++bad;
    if (t.num_gates[e] != static_cast<int>(std::floor(t.length[e] / 0.6f))) ++bad;
  }
  std::printf("host TU (CUDA runtime visible: %d): %d envs, %d bad\n", TRACK_GEN_HAS_CUDA_RUNTIME, params.num_envs, bad);
  return bad == 0 ? 0 : 1;
}

#if defined(TRACK_GEN_MISUSE_DEFAULT_POLICY)
// Negative check: with the toolkit visible the default policy is the CUDA backend, which plain
// C++ cannot run; the library must refuse it at compile time with a message that says why.
template class tg::course<>;
#endif

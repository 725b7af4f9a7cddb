// The batch track_ahead (queries.hpp) on the CUDA backend against track_ahead (observations.hpp)
// called by one thread per env, bit for bit (CUDA only: the batch writes its points through a
// warp form that stages them in shared memory and stores them together). The reference is the
// per-env function that observations_cases.hpp checks against closed forms and a double
// evaluation; here the batch must place every point of every env where that function puts it:
// - batches of 1, 33, 1,000 and 40,000 envs (a single partial warp, a partial last warp, and
//   hundreds of blocks);
// - K = 1, 3, 8, 10 and 17 points (a partial group, one full group, full and partial groups);
// - spacings forwards and backwards, arc lengths anywhere (past the loop, negative, NaN);
// - a canary after the last point, which must stay untouched.
#include "progress_harness.hpp"

#include <track_gen/observations.hpp>
#include <track_gen/queries.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace progress_test;

/// Thread e: track_ahead of env e into out[e K ..), one thread per env (the reference).
__global__ void one_thread_kernel(const tg::track_batch_ref batch, const float* s, const float3* positions,
                                  const float* yaw, int count, float spacing, float3* out) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= batch.num_envs()) return;
  tg::track_ahead(batch.track(e), s[e], positions[e], yaw[e], count, spacing, out + static_cast<std::size_t>(e) * count);
}

using cuda_rig = rig<tg::cuda_policy>;
template <class T>
using buffer = cuda_rig::buffer<T>;

/// The float bits of a point, for a comparison that tells NaN payloads and signed zeros apart.
bool same_point(float3 a, float3 b) { return same_bits(a.x, b.x) && same_bits(a.y, b.y) && same_bits(a.z, b.z); }

}  // namespace

TEST_CASE("the batch track_ahead writes the points of track_ahead bit for bit") {
  const float canary = -12345.0f;
  for (const int envs : {1, 33, 1000, 40000}) {
    CAPTURE(envs);
    tg::track_params params = tg::presets::track(envs);
    params.seed = 23;
    cuda_rig r(params, 0.6f);
    const tg::track_snapshot t = r.tracks();
    std::mt19937 rng(static_cast<unsigned>(envs));
    std::vector<float> s(envs), yaw(envs);
    std::vector<float3> positions(envs);
    for (int e = 0; e < envs; ++e) {
      const float length = t.length[static_cast<std::size_t>(e)];
      const int kind = static_cast<int>(rng() % 8);
      // Mostly on the loop; some past it, negative, or NaN (what a lost localize gives).
      s[e] = kind == 0 ? -0.3f * length : kind == 1 ? 2.6f * length : kind == 2 && e % 5 == 0 ? NAN
                                                                           : std::uniform_real_distribution<float>(0.0f, length)(rng);
      yaw[e] = std::uniform_real_distribution<float>(-3.2f, 3.2f)(rng);
      positions[e] = t.position[static_cast<std::size_t>(e) * t.num_samples + rng() % t.num_samples];
    }
    buffer<float> s_d(envs), yaw_d(envs);
    buffer<float3> pos_d(envs);
    s_d.upload(s, r.stream());
    yaw_d.upload(yaw, r.stream());
    pos_d.upload(positions, r.stream());
    for (const int count : {1, 3, 8, 10, 17}) {
      for (const float spacing : {1.0f, -0.7f}) {
        CAPTURE(count);
        CAPTURE(spacing);
        const std::size_t n = static_cast<std::size_t>(envs) * count;
        buffer<float3> got(n + 1), want(n + 1);
        const std::vector<float3> canaries(n + 1, tg::detail::f3(canary, canary, canary));
        got.upload(canaries, r.stream());
        want.upload(canaries, r.stream());
        const tg::track_batch_ref batch = r.course().view().batch();
        one_thread_kernel<<<(envs + 127) / 128, 128, 0, r.stream().raw()>>>(batch, s_d.data(), pos_d.data(), yaw_d.data(),
                                                                             count, spacing, want.data());
        check_cuda(cudaGetLastError(), "launching one_thread_kernel");
        tg::track_ahead<tg::backend::cuda>(batch, s_d.data(), pos_d.data(), yaw_d.data(), count, spacing, got.data(),
                                           r.stream().get());
        const std::vector<float3> g = got.download(r.stream()), w = want.download(r.stream());
        int differ = 0, written = 0;
        for (std::size_t i = 0; i < n; ++i) {
          written += g[i].x != canary ? 1 : 0;
          if (!same_point(g[i], w[i]) && differ++ == 0)  // the first difference, in full
            FAIL_CHECK("env " << i / count << " point " << i % count << ": batch (" << g[i].x << ", " << g[i].y << ", "
                              << g[i].z << ") vs one thread (" << w[i].x << ", " << w[i].y << ", " << w[i].z << ")");
        }
        CHECK(differ == 0);
        CHECK(written == static_cast<int>(n));  // no point was left unwritten (or written as the canary)
        CHECK(same_point(g[n], tg::detail::f3(canary, canary, canary)));  // nothing past the last point
      }
    }
  }
}

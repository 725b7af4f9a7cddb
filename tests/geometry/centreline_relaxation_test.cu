// CUDA instantiation of centreline_relaxation_tests.hpp; the CUDA block context against the
// host context on the stage's sweeps (bit for bit: every product is rounded on its own and every
// sum runs in one order); and the CUDA backend against the host on relaxed batches
// (backend_comparison.hpp: the stages before the relaxation contract products into FMAs on the
// device, so its input may differ in the last bits: tracks that were not relaxed agree within
// 1e-4 L, relaxed ones within backend_comparison.hpp's relaxed_tolerance).
#include "backend_comparison.hpp"
#include "centreline_relaxation_tests.hpp"
#include <track_gen/detail/cuda/block_context.cuh>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(relaxation_tracks, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(relaxation_refused, std::tuple<track_gen::cuda_policy>);

/// One block relaxes the beads in `position` (N of them, `dense` the second buffer) with the
/// CUDA block context; `which` receives 0 when the result is in `position`, 1 in `dense`.
__global__ void relax_beads(track_gen::track_params p, float length, float3* position, float3* dense, int* which) {
  using context = track_gen::detail::cuda_block_context<64>;
  using stage = track_gen::stages::centreline_relaxation;
  __shared__ context::TempStorage temp;
  context ctx(temp);
  track_gen::detail::workspace ws{};
  ws.position = position;
  ws.dense = dense;
  ws.num_samples = p.num_samples;
  ws.length = length;
  const float3* x = stage::smooth(ctx, ws, p, stage::sweep(ctx, ws, p));
  if (threadIdx.x == 0) *which = x == position ? 0 : 1;
}

TEST_CASE("centreline_relaxation: the CUDA block context relaxes the host's beads, bit for bit") {
  namespace tg = track_gen;
  using stage = tg::stages::centreline_relaxation;
  for (const double gap : {0.05, 0.1, 0.2, 0.3}) {
    CAPTURE(gap);
    tg::track_params p = tg::presets::track(1);
    p.relaxation.max_iterations = 50;
    sampled_track s(dumbbell(gap), p);
    const int n = p.num_samples;
    const std::vector<float3> start = s.position;
    const float3* host = stage::smooth(s.ctx, s.ws, p, stage::sweep(s.ctx, s.ws, p));
    float3 *position = nullptr, *dense = nullptr;
    int* which = nullptr;
    REQUIRE(cudaMalloc(&position, sizeof(float3) * n) == cudaSuccess);
    REQUIRE(cudaMalloc(&dense, sizeof(float3) * n) == cudaSuccess);
    REQUIRE(cudaMalloc(&which, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemcpy(position, start.data(), sizeof(float3) * n, cudaMemcpyHostToDevice) == cudaSuccess);
    relax_beads<<<1, 64>>>(p, s.ws.length, position, dense, which);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    int where = -1;
    std::vector<float3> device(static_cast<std::size_t>(n));
    REQUIRE(cudaMemcpy(&where, which, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(cudaMemcpy(device.data(), where == 0 ? position : dense, sizeof(float3) * n, cudaMemcpyDeviceToHost) ==
            cudaSuccess);
    cudaFree(position);
    cudaFree(dense);
    cudaFree(which);
    CHECK(where == (host == s.ws.position ? 0 : 1));
    double apart = 0;
    for (int i = 0; i < n; ++i) apart = std::max(apart, normd(to_d(host[i]) - to_d(device[static_cast<std::size_t>(i)])));
    CHECK_MESSAGE(std::memcmp(host, device.data(), sizeof(float3) * n) == 0, "the beads differ, up to " << apart << " m");
  }
}

TEST_CASE("centreline relaxation: CUDA and host relax the same tracks") {
  namespace tg = track_gen;
  backend<tg::cuda_policy>::stream_holder stream;
  for (const tg::generator_family family : {tg::generator_family::bezier, tg::generator_family::voronoi}) {
    const tg::track_params p = relaxation_params_for(scaled(2048, 16, 64), family, 50, 19);
    const float spacing = 0.6f;
    tg::course<relaxing_pipeline, tg::host_policy> h(p, spacing);
    tg::course<relaxing_pipeline, tg::cuda_policy> c(p, spacing, stream.get());
    const tg::track_snapshot sh = h.copy_tracks({}), sc = c.copy_tracks(stream.get());
    const comparison r = compare(sh, sc, p, spacing, h.max_gates(), true);
    report(family == tg::generator_family::bezier ? "bezier, relaxed" : "voronoi, relaxed", r);
    CHECK(r.failures == 0);
    CHECK(r.same_status >= r.envs * 99 / 100);
    int relaxed = 0;
    for (int e = 0; e < sh.num_envs; ++e) relaxed += (sh.status[static_cast<std::size_t>(e)] & tg::status::relaxed) != 0u;
    CHECK(relaxed > 0);
  }
}
}  // namespace tg_test

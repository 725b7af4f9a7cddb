// CUDA instantiation of repulsive_growth_tests.hpp, and the CUDA backend against the host.
//
// The flow is chaotic (a fold is a buckling: a last-bit difference in its points grows into
// another track), so the stage rounds every product on its own (detail::mul_rn) and sums in one
// order on both backends; only the cosines it takes in double (start circle, wall, discs,
// preconditioner) could round differently. Its control points are then the host's, and the
// tracks differ only as every family's do after the shared stages (the spline and the resampling
// contract products into FMAs on the device: cuda_vs_host_test.cu), far below 1e-4 L. A flow that
// diverged would leave another track, metres away.
#include "backend_comparison.hpp"
#include "repulsive_growth_tests.hpp"
#include <track_gen/detail/cuda/block_context.cuh>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(growth_sweeps, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(growth_replays, std::tuple<track_gen::cuda_policy>);

TEST_CASE("repulsive family: CUDA and host grow the same tracks") {
  namespace tg = track_gen;
  backend<tg::cuda_policy>::stream_holder stream;
  const tg::track_params p = growth_params(scaled(48, 8, 8), 21);
  tg::course<tg::presets::repulsive_pipeline, tg::host_policy> h(p, 0.6f);
  tg::course<tg::presets::repulsive_pipeline, tg::cuda_policy> c(p, 0.6f, stream.get());
  const tg::track_snapshot sh = h.copy_tracks({}), sc = c.copy_tracks(stream.get());
  REQUIRE(sh.num_envs == sc.num_envs);
  int same = 0;
  double worst = 0;
  for (int e = 0; e < sh.num_envs; ++e) {
    const std::size_t u = static_cast<std::size_t>(e);
    const double L = sh.length[u];
    double dx = 0;
    for (int i = 0; i < sh.num_samples; ++i) {
      const std::size_t k = sh.sample_index(e, i);
      dx = std::max(dx, normd(to_d(sh.position[k]) - to_d(sc.position[k])));
    }
    if (sh.status[u] == sc.status[u] && dx <= 1e-4 * L) {
      ++same;
      worst = std::max(worst, dx / L);
    } else {
      MESSAGE("env " << e << ": status " << sh.status[u] << " (host) / " << sc.status[u] << " (cuda), positions up to "
                     << dx << " m apart");
    }
  }
  MESSAGE(sh.num_envs << " envs, " << same << " with the same status and positions within 1e-4 L (worst " << worst << " L)");
  CHECK(same >= sh.num_envs - 1);
}
}  // namespace tg_test

namespace tg_test {
/// Block e grows env e's curve with the CUDA block context, its scratch in global memory.
__global__ void grow_curves(track_gen::track_params p, float3* dense, std::size_t dense_stride, float3* control, int* count) {
  using context = track_gen::detail::cuda_block_context<64>;
  __shared__ context::TempStorage temp;
  context ctx(temp);
  track_gen::detail::workspace ws{};
  ws.dense = dense + blockIdx.x * dense_stride;
  ws.control = control + static_cast<std::size_t>(blockIdx.x) * static_cast<std::size_t>(p.repulsive_growth.points);
  ws.seed = p.seed;
  ws.global_env = blockIdx.x;
  track_gen::stages::repulsive_growth::run(ctx, ws, p);
  if (threadIdx.x == 0) count[blockIdx.x] = ws.num_control;
}

TEST_CASE("repulsive_growth: the CUDA block context grows the host's curves, bit for bit") {
  namespace tg = track_gen;
  using stage = tg::stages::repulsive_growth;
  tg::track_params p = tg::presets::track(1);
  p.seed = 13;
  p.generator.family = tg::generator_family::repulsive;
  const int envs = scaled(24, 4, 4), points = p.repulsive_growth.points;
  const std::size_t stride = static_cast<std::size_t>(stage::max_dense_samples(p));
  float3 *dense = nullptr, *control = nullptr;
  int* count = nullptr;
  REQUIRE(cudaMalloc(&dense, sizeof(float3) * stride * envs) == cudaSuccess);
  REQUIRE(cudaMalloc(&control, sizeof(float3) * points * envs) == cudaSuccess);
  REQUIRE(cudaMalloc(&count, sizeof(int) * envs) == cudaSuccess);
  grow_curves<<<envs, 64>>>(p, dense, stride, control, count);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<float3> device(static_cast<std::size_t>(points) * envs);
  std::vector<int> counts(static_cast<std::size_t>(envs));
  REQUIRE(cudaMemcpy(device.data(), control, sizeof(float3) * device.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaMemcpy(counts.data(), count, sizeof(int) * counts.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  cudaFree(dense);
  cudaFree(control);
  cudaFree(count);
  int identical = 0;
  for (int e = 0; e < envs; ++e) {
    const std::vector<float3> host_control = grow_on_host(p, static_cast<std::uint32_t>(e)).control;
    CHECK(counts[static_cast<std::size_t>(e)] == static_cast<int>(host_control.size()));
    REQUIRE(static_cast<int>(host_control.size()) == points);
    const bool same = std::memcmp(host_control.data(), &device[static_cast<std::size_t>(e) * points], sizeof(float3) * points) == 0;
    if (same) ++identical;
    else {
      double apart = 0;
      for (int i = 0; i < points; ++i) apart = std::max(apart, normd(to_d(host_control[i]) - to_d(device[static_cast<std::size_t>(e) * points + i])));
      MESSAGE("env " << e << ": the curves differ, up to " << apart << " m");
    }
  }
  MESSAGE(envs << " curves, " << identical << " bit for bit the same on both backends");
  CHECK(identical == envs);
}
}  // namespace tg_test

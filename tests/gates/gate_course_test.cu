// CUDA instantiation of gate_course_tests.hpp, and gate courses on CUDA against host.
#include "gate_course_tests.hpp"
#include "geometry/backend_comparison.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(gate_course_sweep, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_determinism, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_progress, std::tuple<track_gen::cuda_policy>);

/// Each gate's quaternion and posts, computed in a kernel from the course's device batch.
__global__ void gate_poses(track_gen::track_batch_ref batch, track_gen::gate_quaternion* q, float3* posts) {
  const int e = blockIdx.x;
  const track_gen::track_ref t = batch.track(e);
  for (int g = threadIdx.x; g < t.num_gates(); g += blockDim.x) {
    const std::size_t i = static_cast<std::size_t>(e) * batch.max_gates() + g;
    q[i] = track_gen::gate_orientation(t.gate(g));
    const track_gen::gate_posts_t p = track_gen::gate_posts(t.gate(g));
    posts[2 * i] = p.left;
    posts[2 * i + 1] = p.right;
  }
}

// gate_orientation and gate_posts in device code give the host's values (within 1e-6: the
// device's sqrt and division round the same, fused multiply-adds may differ in the last bit).
TEST_CASE("gate_orientation and gate_posts in a kernel match the host") {
  namespace tg = track_gen;
  using B = backend<tg::cuda_policy>;
  B::stream_holder stream;
  auto p = tg::presets::gate_course(256);
  p.gates.align = static_cast<int>(tg::gate_align::full_tangent);
  tg::course<tg::presets::gate_course_pipeline, tg::cuda_policy> course(p, tg::presets::gate_course_spacing(p), stream.get());
  const tg::track_snapshot s = course.copy_tracks(stream.get());
  const std::size_t slots = static_cast<std::size_t>(s.num_envs) * s.max_gates;
  B::buffer<tg::gate_quaternion> q(std::vector<tg::gate_quaternion>(slots, tg::gate_quaternion{0, 0, 0, 0}));
  B::buffer<float3> posts(std::vector<float3>(2 * slots, float3{0, 0, 0}));
  stream.sync();
  gate_poses<<<s.num_envs, 64>>>(course.batch().view(), q.get(), posts.get());
  REQUIRE(cudaGetLastError() == cudaSuccess);
  const std::vector<tg::gate_quaternion> dq = B::download(q.get(), slots);
  const std::vector<float3> dp = B::download(posts.get(), 2 * slots);
  double worst = 0;
  for (int e = 0; e < s.num_envs; ++e)
    for (int g = 0; g < s.num_gates[e]; ++g) {
      const std::size_t i = s.gate_index(e, g);
      const tg::gate gate{s.gate_centre[i], s.gate_normal[i], s.gate_half_width[i], s.gate_arc_length[i]};
      const tg::gate_quaternion hq = tg::gate_orientation(gate);
      const tg::gate_posts_t hp = tg::gate_posts(gate);
      worst = std::max({worst, std::fabs(double(hq.x) - dq[i].x), std::fabs(double(hq.y) - dq[i].y),
                        std::fabs(double(hq.z) - dq[i].z), std::fabs(double(hq.w) - dq[i].w),
                        normd(to_d(hp.left) - to_d(dp[2 * i])) / 20.0, normd(to_d(hp.right) - to_d(dp[2 * i + 1])) / 20.0});
    }
  MESSAGE("largest quaternion / post (per 20 m) difference " << worst);
  CHECK(worst <= 1e-6);
}

// backend_comparison.hpp's rules (docs/generators.md, "Measured": same status, positions and gates within 1e-4 L,
// status differences only for candidates near a track threshold), and the gate normals within
// 1e-4 where the status is the same. Candidates at the spacing, grade or bar tests can differ
// by a rounding (fused multiply-adds on the device): at most 1% of the envs.
TEST_CASE("CUDA and host backends build the same gate courses") {
  namespace tg = track_gen;
  typename backend<tg::cuda_policy>::stream_holder stream;
  for (const gate_case& gc : gate_cases()) {
    CAPTURE(gc.name);
    const float spacing = tg::presets::gate_course_spacing(gc.params);
    tg::course<tg::presets::gate_course_pipeline, tg::host_policy> h(gc.params, spacing);
    tg::course<tg::presets::gate_course_pipeline, tg::cuda_policy> d(gc.params, spacing, stream.get());
    REQUIRE(h.max_gates() == d.max_gates());
    const tg::track_snapshot sh = h.copy_tracks({}), sd = d.copy_tracks(stream.get());
    const comparison r = compare(sh, sd, gc.params, spacing, h.max_gates(), true);
    report(gc.name.c_str(), r);
    CHECK(r.failures <= r.envs / 100);
    CHECK(r.same_status >= r.envs * 99 / 100);
    double worst_normal = 0;
    for (int e = 0; e < sh.num_envs; ++e) {
      if (sh.status[e] != sd.status[e] || sh.num_gates[e] != sd.num_gates[e]) continue;
      for (int g = 0; g < sh.num_gates[e]; ++g)
        worst_normal = std::max(worst_normal, normd(to_d(sh.gate_normal[sh.gate_index(e, g)]) - to_d(sd.gate_normal[sd.gate_index(e, g)])));
    }
    MESSAGE("largest gate-normal difference " << worst_normal);
    CHECK(worst_normal <= 1e-4);
  }
}
}  // namespace tg_test

// CUDA instantiation of gate_course_tests.hpp, and gate courses on CUDA against host.
#include "gate_course_tests.hpp"
#include "geometry/backend_comparison.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(gate_course_sweep, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_determinism, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_progress, std::tuple<track_gen::cuda_policy>);

// backend_comparison.hpp's rules (DESIGN §6: same status, positions and gates within 1e-4 L,
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

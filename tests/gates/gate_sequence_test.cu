// CUDA instantiation of gate_sequence_tests.hpp, and gate sequences on CUDA against host.
#include "gate_sequence_tests.hpp"

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(gate_sequence_checks, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_sequence_vs_pipeline, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_sequence_masks, std::tuple<track_gen::cuda_policy>);

// The device's fused multiply-adds may round the last bit differently from the host: the same
// status on at least 99 % of the envs, and where the status and count agree, centres within
// 1e-4 m and forwards within 1e-4.
/// Cases for the backend comparison: sequence_cases (E <= 2^18: the group kernel, 8 lanes per
/// env) and the preset at E = 2^18 + 96 (one thread per env).
std::vector<gate_case> comparison_cases() {
  std::vector<gate_case> c = sequence_cases();
  auto p = track_gen::presets::gate_course(track_gen::detail::gate_sequence_group_envs + 96);
  p.seed = 12;
  p.generator.family = track_gen::generator_family::bezier;
  p.bezier.extent = 25.0f;
  c.push_back({"bezier, E = 2^18 + 96 (one thread per env)", p, 0});
  return c;
}

TEST_CASE("CUDA and host backends build the same gate sequences") {
  namespace tg = track_gen;
  typename backend<tg::cuda_policy>::stream_holder stream;
  for (const gate_case& gc : comparison_cases()) {
    CAPTURE(gc.name);
    tg::gate_sequences<tg::host_policy> h(gc.params);
    tg::gate_sequences<tg::cuda_policy> d(gc.params, stream.get());
    h.generate();
    d.generate(stream.get());
    stream.sync();
    const sequence_snapshot sh = snapshot_of(h), sd = snapshot_of(d);
    int same = 0;
    double worst_centre = 0, worst_forward = 0;
    for (int e = 0; e < sh.num_envs; ++e) {
      if (sh.status[e] != sd.status[e] || sh.count[e] != sd.count[e]) continue;
      ++same;
      for (int g = 0; g < sh.count[e]; ++g) {
        worst_centre = std::max(worst_centre, normd(to_d(sh.centre[sh.at(e, g)]) - to_d(sd.centre[sd.at(e, g)])));
        worst_forward = std::max(worst_forward, normd(to_d(sh.forward[sh.at(e, g)]) - to_d(sd.forward[sd.at(e, g)])));
      }
    }
    MESSAGE(gc.name << ": same status on " << same << " of " << sh.num_envs << ", largest differences " << worst_centre
                    << " m, " << worst_forward);
    CHECK(same >= sh.num_envs * 99 / 100);
    CHECK(worst_centre <= 1e-4);
    CHECK(worst_forward <= 1e-4);
  }
}
}  // namespace tg_test

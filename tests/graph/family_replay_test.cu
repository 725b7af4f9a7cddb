// The generation kernels whose stages read the launch's arguments in place (__grid_constant__:
// the family, any-family and gate-course pipelines, docs/performance-log.md entry 38), recorded
// under skip::conditional (the masked regeneration in IF / SWITCH nodes) and replayed, build the
// tracks an eager twin builds, bit for bit. Run under compute-sanitizer memcheck by
// scripts/gpu-check: docs/kernel-argument.md found memcheck flagging reads of a kernel argument
// through its generic address inside WHILE bodies, while plain runs were correct.
#include "graph_support.hpp"

namespace graph_test {

namespace {
template <class Pipeline>
void replayed_matches_eager(tg::track_params params, float spacing) {
  using policy = tg::policy<tg::capture::global, tg::skip::conditional>;
  using course_type = tg::course<Pipeline, policy>;
  const int num_envs = params.num_envs;
  stream_holder s;
  const ::cuda::stream_ref sref(s.get());
  course_type replayed(params, spacing, sref), eager(params, spacing, sref);
  device_buffer<std::int32_t> mask(static_cast<std::size_t>(num_envs));
  tg::graph masked_graph, all_graph;
  {
    tg::scoped_capture cap(sref, capture_mode_of<policy>());
    replayed.regenerate(mask.get(), true, sref);
    masked_graph = cap.end();
  }
  {
    tg::scoped_capture cap(sref, capture_mode_of<policy>());
    replayed.regenerate(nullptr, true, sref);
    all_graph = cap.end();
  }
  const tg::graph_exec masked = masked_graph.instantiate(), all = all_graph.instantiate();
  std::vector<std::int32_t> host(static_cast<std::size_t>(num_envs), 0);
  // One env (the wide launch shape), a few, every third (the narrow shape), none, then all.
  const std::vector<std::vector<int>> selections = {{5}, {0, 3, 17, num_envs - 1}, {}, {-3}, {}};
  for (std::size_t round = 0; round < selections.size(); ++round) {
    CAPTURE(round);
    std::fill(host.begin(), host.end(), 0);
    for (int e : selections[round]) {
      if (e >= 0) host[static_cast<std::size_t>(e)] = 1;
      else
        for (int i = 0; i < num_envs; i += -e) host[static_cast<std::size_t>(i)] = 1;
    }
    GT_CUDA(cudaMemcpyAsync(mask.get(), host.data(), host.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, s.get()));
    for (int r = 0; r < 2; ++r) {
      masked.launch(sref);
      eager.regenerate(mask.get(), true, sref);
    }
    GT_CUDA(cudaStreamSynchronize(s.get()));
    check_same(replayed.copy_tracks(sref), eager.copy_tracks(sref));
  }
  all.launch(sref);
  eager.regenerate(nullptr, true, sref);
  GT_CUDA(cudaStreamSynchronize(s.get()));
  const tg::track_snapshot a = replayed.copy_tracks(sref), b = eager.copy_tracks(sref);
  check_same(a, b);
  int valid = 0;
  for (int e = 0; e < num_envs; ++e) valid += (a.status[static_cast<std::size_t>(e)] & tg::status::valid) != 0u ? 1 : 0;
  CHECK(valid >= num_envs * 9 / 10);  // real tracks, not a shared failure
}
}  // namespace

TEST_CASE("family, any-family and gate-course kernels replayed from a conditional graph build the eager twin's tracks") {
  preload_test_kernels();
  const int num_envs = track_gen_test::scaled(700, 100);
  SUBCASE("family_pipeline, a mix of its five families") {
    tg::track_params p = tg::presets::track(num_envs);
    p.seed = 61;
    for (float& w : p.generator.weights) w = 1.0f;
    p.generator.weights[static_cast<int>(tg::generator_family::repulsive)] = 0.0f;
    replayed_matches_eager<tg::presets::family_pipeline>(p, 0.6f);
  }
  SUBCASE("relaxed_family_pipeline, bezier relaxed") {
    tg::track_params p = tg::presets::track(num_envs);
    p.seed = 62;
    p.generator.family = tg::generator_family::bezier;
    p.relaxation.max_iterations = 50;
    replayed_matches_eager<tg::presets::relaxed_family_pipeline>(p, 0.6f);
  }
  SUBCASE("gate_course_pipeline, the gate_course preset") {
    tg::track_params p = tg::presets::gate_course(num_envs);
    p.seed = 63;
    replayed_matches_eager<tg::presets::gate_course_pipeline>(p, tg::presets::gate_course_spacing(p));
  }
}

}  // namespace graph_test

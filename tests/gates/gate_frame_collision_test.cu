// Gate-frame collision on the CUDA backend: the device functions in the library's query kernel,
// the batch query, and the batch query recorded into a CUDA graph (test bodies:
// gate_frame_collision_cases.hpp).
#include "gate_frame_collision_cases.hpp"

TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_single, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_closed_forms, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_invalid, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_batch, std::tuple<track_gen::cuda_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_frame_test::gate_frame_arguments, std::tuple<track_gen::cuda_policy>);

namespace gate_frame_test {

// The batch query recorded into a CUDA graph (one kernel node): a replay after the centres change
// in place writes what an eager call with the new centres writes, bit for bit, and what the host
// backend computes on the host's course (the same courses up to the backends' rounding).
TEST_CASE("batch collide_gate_frames recorded into a CUDA graph replays with the current centres") {
  using B = backend<tg::cuda_policy>;
  B::stream_holder stream;
  auto p = tg::presets::gate_course(64);
  p.seed = 21;
  tg::course<tg::presets::gate_course_pipeline, tg::cuda_policy> course(p, tg::presets::gate_course_spacing(p),
                                                                       stream.get());
  tg::course<tg::presets::gate_course_pipeline, tg::host_policy> host(p, tg::presets::gate_course_spacing(p));
  const tg::track_snapshot s = course.copy_tracks(stream.get());
  const int num_envs = p.num_envs;
  const std::size_t n = static_cast<std::size_t>(num_envs);
  // Two sets of centres: on each env's next gate's left post (a hit), then 2 m behind it (mostly none).
  std::vector<float3> first(n), second(n);
  const tg::gate_frame fr{0.05f, 0.05f};
  for (int e = 0; e < num_envs; ++e) {
    const std::size_t i = s.gate_index(e, 1);  // after construction every env's next gate is 1
    const ref_gate rg({s.gate_centre[i], s.gate_normal[i], s.gate_half_width[i], 0.0f}, p.gate_half_height, fr);
    first[static_cast<std::size_t>(e)] = f3d(rg.world({0.0, rg.w + rg.t, 0.1 * (e % 5)}));
    second[static_cast<std::size_t>(e)] = f3d(rg.world({-2.0, 0.3, 0.0}));
  }
  B::buffer<float3> centres(first);
  B::buffer<std::uint32_t> flags(std::vector<std::uint32_t>(n, 0u));
  B::buffer<float> distance(std::vector<float>(n, 0.0f));
  B::buffer<int> gate(std::vector<int>(n, 0));
  tg::gate_frame_outputs out;
  out.flags = flags.get();
  out.distance = distance.get();
  out.gate = gate.get();
  // Load the kernel outside the capture (as the Python layer's first eager call does).
  tg::collide_gate_frames<tg::backend::cuda>(course.view(), centres.get(), 0.2f, fr, tg::gate_scope::adjacent, out,
                                             stream.get());
  stream.sync();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaStreamBeginCapture(stream.get().get(), cudaStreamCaptureModeGlobal) == cudaSuccess);
  tg::collide_gate_frames<tg::backend::cuda>(course.view(), centres.get(), 0.2f, fr, tg::gate_scope::adjacent, out,
                                             stream.get());
  REQUIRE(cudaStreamEndCapture(stream.get().get(), &graph) == cudaSuccess);
  std::size_t nodes = 0;
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess);
  CHECK(nodes == 1);
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  for (const std::vector<float3>* c : {&first, &second}) {
    centres.upload(*c);
    REQUIRE(cudaGraphLaunch(exec, stream.get().get()) == cudaSuccess);
    stream.sync();
    const std::vector<std::uint32_t> replay_flags = B::download(flags.get(), n);
    const std::vector<float> replay_distance = B::download(distance.get(), n);
    const std::vector<int> replay_gate = B::download(gate.get(), n);
    tg::collide_gate_frames<tg::backend::cuda>(course.view(), centres.get(), 0.2f, fr, tg::gate_scope::adjacent, out,
                                               stream.get());
    stream.sync();
    CHECK(replay_flags == B::download(flags.get(), n));
    CHECK(tg_test::same_bytes(replay_distance, B::download(distance.get(), n)));
    CHECK(replay_gate == B::download(gate.get(), n));
    // The host backend on the host course (the same tracks within the backends' rounding).
    std::vector<std::uint32_t> host_flags(n);
    std::vector<float> host_distance(n);
    tg::gate_frame_outputs host_out;
    host_out.flags = host_flags.data();
    host_out.distance = host_distance.data();
    tg::collide_gate_frames<tg::backend::host>(host.view(), c->data(), 0.2f, fr, tg::gate_scope::adjacent, host_out,
                                               tg::host_stream{});
    int hits = 0, differ = 0;
    for (std::size_t e = 0; e < n; ++e) {
      hits += (replay_flags[e] & tg::contact_flags::hit) != 0u ? 1 : 0;
      differ += std::fabs(double(replay_distance[e]) - host_distance[e]) > 1e-2 ? 1 : 0;
    }
    // The backends' gates agree within 1e-4 L (docs/generators.md, "Measured"; L ~ 70 m), and a few envs may differ in
    // status: 1 cm, in at most 2 % of the envs.
    MESSAGE(hits << " hits of " << n << "; " << differ << " envs differ from the host by more than 1 cm");
    CHECK(differ <= num_envs / 50);
    if (c == &first) CHECK(hits == num_envs);
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
}

}  // namespace gate_frame_test

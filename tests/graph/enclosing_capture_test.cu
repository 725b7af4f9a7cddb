// The library records into whatever capture encloses its stream, without ending or restarting
// it: the capture id is the same before and after every call; a side stream forked from the
// user's capture with an event (and joined back) records correctly; and a regeneration called
// inside the body of a conditional node that the test itself built (docs/cuda-graphs.md recipe) nests
// its own conditional node there and replays correctly with the condition on and off.
#include "graph_support.hpp"

#include <algorithm>

namespace graph_test {

namespace {

/// Adds, to the capture on `s`, a one-thread kernel setting a fresh condition handle from
/// `*flag` and an IF node depending on it (the capture then continues after the node), and
/// begins capturing `body_stream` into the node's body graph in `mode`. docs/cuda-graphs.md recipe:
/// cudaStreamGetCaptureInfo -> cudaGraphConditionalHandleCreate -> set-condition kernel ->
/// cudaGraphAddNode (conditional) -> cudaStreamUpdateCaptureDependencies -> cudaStreamBeginCaptureToGraph.
/// Returns the body graph (owned by the node).
cudaGraph_t begin_if_body(cudaStream_t s, cudaStream_t body_stream, const int* flag, cudaStreamCaptureMode mode) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t outer = nullptr;
  GT_CUDA(cudaStreamGetCaptureInfo(s, &status, nullptr, &outer, nullptr, nullptr, nullptr));
  REQUIRE(status == cudaStreamCaptureStatusActive);
  cudaGraphConditionalHandle handle{};
  GT_CUDA(cudaGraphConditionalHandleCreate(&handle, outer, 0u, 0u));
  set_condition_from_flag<<<1, 1, 0, s>>>(handle, flag);
  GT_CUDA(cudaGetLastError());

  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;  // asked for, else cudaErrorLossyQuery
  std::size_t num_deps = 0;
  GT_CUDA(cudaStreamGetCaptureInfo(s, &status, nullptr, &outer, &deps, &edges, &num_deps));
  REQUIRE(num_deps >= 1);
  cudaGraphNodeParams node_params{};
  node_params.type = cudaGraphNodeTypeConditional;
  node_params.conditional.handle = handle;
  node_params.conditional.type = cudaGraphCondTypeIf;
  node_params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  GT_CUDA(cudaGraphAddNode(&node, outer, deps, edges, num_deps, &node_params));
  GT_CUDA(cudaStreamUpdateCaptureDependencies(s, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  cudaGraph_t body = node_params.conditional.phGraph_out[0];
  REQUIRE(body != nullptr);
  GT_CUDA(cudaStreamBeginCaptureToGraph(body_stream, body, nullptr, nullptr, 0, mode));
  return body;
}

/// Uploads `value` to the device int `flag` on `s` (pinned source kept alive by the caller).
void upload_flag(int* flag, const int* pinned_value, cudaStream_t s) {
  GT_CUDA(cudaMemcpyAsync(flag, pinned_value, sizeof(int), cudaMemcpyHostToDevice, s));
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("every library call leaves the enclosing capture active with the same id", Policy, same_capture_id) {
  INFO("policy: " << policy_name<Policy>());
  preload_test_kernels();
  const int num_envs = 256;
  const int replays = track_gen_test::scaled(40, 10);
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 314;
  stream_holder s_graph, s_eager;
  course_box<Policy> a = make_course<Policy>(params, 0.6f, s_graph);
  course_box<Policy> b = make_course<Policy>(params, 0.6f, s_eager);
  agents agents_a(num_envs), agents_b(num_envs);
  a->bind(agents_a.positions());
  b->bind(agents_b.positions());
  device_buffer<std::int32_t> mask_a(num_envs), mask_b(num_envs);

  // Every kind of call the step path has, in one sequence.
  auto sequence = [&](auto& course, const agents& ag, const std::int32_t* mask, cudaStream_t s, bool captured) {
    const ::cuda::stream_ref ref(s);
    std::vector<capture_state> states;
    states.push_back(query_capture(s));
    ag.move(course.view(), s);
    course.step(ref);
    states.push_back(query_capture(s));
    course.regenerate(mask, true, ref);
    states.push_back(query_capture(s));
    course.step(ref);
    states.push_back(query_capture(s));
    course.regenerate(mask, false, ref);  // rebuild the same tracks of the masked envs
    states.push_back(query_capture(s));
    course.regenerate(nullptr, false, ref);  // every env
    states.push_back(query_capture(s));
    ag.move(course.view(), s);
    course.step(ref);
    states.push_back(query_capture(s));
    for (std::size_t i = 0; i < states.size(); ++i) {
      INFO("after call group " << i);
      CHECK(states[i].status == (captured ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone));
      CHECK(states[i].id == states[0].id);
    }
  };

  tg::graph g;
  {
    user_capture cap(s_graph, capture_mode_of<Policy>());
    sequence(*a, agents_a, mask_a.get(), s_graph, true);
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();

  const pinned_buffer<std::int32_t> masks = pinned_masks(replays, num_envs, 7u);
  replay_against_eager(exec, masks, replays, num_envs, mask_a.get(), s_graph, mask_b.get(), s_eager, [&] {
    sequence(*b, agents_b, mask_b.get(), s_eager, false);
  });
  check_same_state(*a, s_graph, *b, s_eager);
  check_same_bytes(a->copy_tracks(::cuda::stream_ref(s_graph.get())).episode,
                   expected_episodes(masks.get(), replays, num_envs), "episodes vs the masks");
}

TEST_CASE_TEMPLATE_DEFINE("calls on a side stream forked from the user's capture are recorded into it", Policy, forked_side_stream) {
  INFO("policy: " << policy_name<Policy>());
  preload_test_kernels();
  const int num_envs = 256;
  const int replays = track_gen_test::scaled(200, 30);
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 2718;
  stream_holder s_main, s_side, s_eager;
  event_holder fork_event, join_event;
  course_box<Policy> a = make_course<Policy>(params, 0.6f, s_main);
  course_box<Policy> b = make_course<Policy>(params, 0.6f, s_eager);
  agents agents_a(num_envs), agents_b(num_envs);
  a->bind(agents_a.positions());
  b->bind(agents_b.positions());
  device_buffer<std::int32_t> mask_a(num_envs), mask_b(num_envs);
  GT_CUDA(cudaStreamSynchronize(s_main));

  tg::graph g;
  {
    user_capture cap(s_main, capture_mode_of<Policy>());
    const capture_state main_state = query_capture(s_main);
    REQUIRE(main_state.status == cudaStreamCaptureStatusActive);
    agents_a.move(a->view(), s_main);
    GT_CUDA(cudaEventRecord(fork_event.get(), s_main));
    GT_CUDA(cudaStreamWaitEvent(s_side, fork_event.get(), 0));
    const capture_state side_state = query_capture(s_side);
    REQUIRE(side_state.status == cudaStreamCaptureStatusActive);
    CHECK(side_state.id == main_state.id);

    a->step(::cuda::stream_ref(s_side.get()));
    CHECK(query_capture(s_side).id == main_state.id);
    a->regenerate(mask_a.get(), true, ::cuda::stream_ref(s_side.get()));
    CHECK(query_capture(s_side).id == main_state.id);
    CHECK(query_capture(s_side).status == cudaStreamCaptureStatusActive);
    CHECK(query_capture(s_main).id == main_state.id);

    GT_CUDA(cudaEventRecord(join_event.get(), s_side));
    GT_CUDA(cudaStreamWaitEvent(s_main, join_event.get(), 0));
    g = cap.end();  // fails with cudaErrorStreamCaptureUnjoined if anything was left unjoined
  }
  CHECK(query_capture(s_side).status == cudaStreamCaptureStatusNone);
  tg::graph_exec exec = g.instantiate();

  const pinned_buffer<std::int32_t> masks = pinned_masks(replays, num_envs, 11u);
  replay_against_eager(exec, masks, replays, num_envs, mask_a.get(), s_main, mask_b.get(), s_eager, [&] {
    iteration(*b, agents_b, mask_b.get(), s_eager);
  });
  check_same_state(*a, s_main, *b, s_eager);
  check_same_bytes(a->copy_tracks(::cuda::stream_ref(s_main.get())).episode,
                   expected_episodes(masks.get(), replays, num_envs), "episodes vs the masks");
}

TEST_CASE_TEMPLATE_DEFINE("a regeneration inside the body of the user's own conditional node nests and replays correctly",
                          Policy, nested_conditional) {
  INFO("policy: " << policy_name<Policy>());
  preload_test_kernels();
  const int num_envs = 256;
  const int replays = track_gen_test::scaled(30, 12);
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 1618;
  stream_holder s_main, s_body, s_eager;
  course_box<Policy> a = make_course<Policy>(params, 0.6f, s_main);
  course_box<Policy> b = make_course<Policy>(params, 0.6f, s_eager);
  agents agents_a(num_envs), agents_b(num_envs);
  a->bind(agents_a.positions());
  b->bind(agents_b.positions());
  device_buffer<std::int32_t> mask_a(num_envs), mask_b(num_envs);
  device_buffer<int> flag(1);
  GT_CUDA(cudaStreamSynchronize(s_main));

  tg::graph g;
  {
    user_capture cap(s_main, capture_mode_of<Policy>());
    const capture_state outer = query_capture(s_main);
    agents_a.move(a->view(), s_main);
    a->step(::cuda::stream_ref(s_main.get()));
    cudaGraph_t body = begin_if_body(s_main, s_body, flag.get(), capture_mode_of<Policy>());
    const capture_state body_state = query_capture(s_body);
    REQUIRE(body_state.status == cudaStreamCaptureStatusActive);
    a->regenerate(mask_a.get(), true, ::cuda::stream_ref(s_body.get()));
    const capture_state body_after = query_capture(s_body);
    CHECK(body_after.status == cudaStreamCaptureStatusActive);
    CHECK(body_after.id == body_state.id);
    cudaGraph_t body_out = nullptr;
    GT_CUDA(cudaStreamEndCapture(s_body, &body_out));
    CHECK(body_out == body);
    std::size_t body_nodes = 0;
    GT_CUDA(cudaGraphGetNodes(body, nullptr, &body_nodes));
    CHECK(body_nodes >= 1);  // a conditional body must not be empty
    CHECK(query_capture(s_main).id == outer.id);
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();

  const std::vector<std::int32_t> mask_rows = make_masks(replays, num_envs, 13u);
  pinned_buffer<std::int32_t> masks(mask_rows.size());
  std::memcpy(masks.get(), mask_rows.data(), mask_rows.size() * sizeof(std::int32_t));
  pinned_buffer<int> flags(static_cast<std::size_t>(replays));
  std::vector<std::int32_t> applied(mask_rows.size(), 0);  // the masks the IF let through
  const std::size_t row_bytes = static_cast<std::size_t>(num_envs) * sizeof(std::int32_t);
  for (int r = 0; r < replays; ++r) {
    // Off on every third replay, with an all-one mask (the strongest thing to skip); on
    // otherwise, with all-zero (replays 0, 7, 21, ...), all-one (replay 1) and sparse masks.
    flags[static_cast<std::size_t>(r)] = (r % 3 == 2) ? 0 : 1;
    const bool on = flags[static_cast<std::size_t>(r)] != 0;
    std::int32_t* row = masks.get() + static_cast<std::size_t>(r) * num_envs;
    if (!on) std::fill(row, row + num_envs, 1);
    if (on) std::memcpy(applied.data() + static_cast<std::size_t>(r) * num_envs, row, row_bytes);
    upload_flag(flag.get(), flags.get() + r, s_main);
    GT_CUDA(cudaMemcpyAsync(mask_a.get(), row, row_bytes, cudaMemcpyHostToDevice, s_main));
    exec.launch(::cuda::stream_ref(s_main.get()));

    agents_b.move(b->view(), s_eager);
    b->step(::cuda::stream_ref(s_eager.get()));
    if (on) {
      GT_CUDA(cudaMemcpyAsync(mask_b.get(), row, row_bytes, cudaMemcpyHostToDevice, s_eager));
      b->regenerate(mask_b.get(), true, ::cuda::stream_ref(s_eager.get()));
    }
    GT_CUDA(cudaStreamSynchronize(s_main));
    GT_CUDA(cudaStreamSynchronize(s_eager));
    INFO("after replay " << r << " (condition " << (on ? "on" : "off") << ")");
    check_same_state(*a, s_main, *b, s_eager);
  }
  check_same_bytes(a->copy_tracks(::cuda::stream_ref(s_main.get())).episode,
                   expected_episodes(applied.data(), replays, num_envs), "episodes vs the masks let through");
}

TEST_CASE_TEMPLATE_APPLY(same_capture_id, capture_skip_policies);
TEST_CASE_TEMPLATE_APPLY(forked_side_stream, capture_skip_policies);
TEST_CASE_TEMPLATE_APPLY(nested_conditional, all_policies);

}  // namespace graph_test

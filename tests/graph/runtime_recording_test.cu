// course::set_recording changes, at run time, what a course of skip::conditional records: with
// conditional = false a masked regenerate is recorded unconditionally (no conditional node, one
// generation launch per replay), with conditional = true under an IF node (no launch when the
// mask is all zero), in each capture mode given at run time, with int32 and 1-byte masks alike,
// and the enclosing capture keeps its id either way.
#include "graph_support.hpp"

namespace graph_test {

namespace {
/// Conditional nodes of `g` (top level).
int conditional_nodes(cudaGraph_t g) {
  std::size_t n = 0;
  GT_CUDA(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  GT_CUDA(cudaGraphGetNodes(g, nodes.data(), &n));
  int count = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    GT_CUDA(cudaGraphNodeGetType(node, &type));
    count += type == cudaGraphNodeTypeConditional ? 1 : 0;
  }
  return count;
}

/// Records `regenerate(mask, advance=true)` into a capture of `s` in `mode`, with `options`;
/// checks that the capture id does not change, and returns the graph.
tg::graph record(course_t<tg::policy<>>& c, tg::env_mask mask, const tg::recording_options& options,
                 cudaStreamCaptureMode mode, cudaStream_t s) {
  c.set_recording(options);
  user_capture cap(s, mode);
  const capture_state before = query_capture(s);
  c.regenerate(mask, true, ::cuda::stream_ref(s));
  const capture_state after = query_capture(s);
  CHECK(after.status == cudaStreamCaptureStatusActive);
  CHECK(after.id == before.id);
  return cap.end();
}
}  // namespace

TEST_CASE("set_recording chooses conditional or unconditional recording and the body capture mode at run time") {
  const int num_envs = track_gen_test::scaled(1029, 133);
  const int replays = 20;
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 31;
  stream_holder s;
  course_t<tg::policy<>> c(params, 0.6f, ::cuda::stream_ref(s.get()));
  device_buffer<std::int32_t> wide(static_cast<std::size_t>(num_envs));
  device_buffer<unsigned char> narrow(static_cast<std::size_t>(num_envs));  // a torch bool/uint8 tensor's bytes

  for (cudaStreamCaptureMode mode :
       {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed}) {
    for (bool conditional : {false, true}) {
      for (bool one_byte : {false, true}) {
        INFO("mode " << static_cast<int>(mode) << ", conditional " << conditional << ", 1-byte mask " << one_byte);
        const tg::env_mask mask = one_byte ? tg::env_mask(narrow.get()) : tg::env_mask(wide.get());
        const tg::graph g = record(c, mask, {conditional, static_cast<int>(mode)}, mode, s);
        CHECK(conditional_nodes(g.get()) == (conditional ? 1 : 0));
        const tg::graph_exec exec = g.instantiate();
        // The options were read when recording: changing them now changes nothing of `g`.
        c.set_recording({!conditional, 0});

        GT_CUDA(cudaMemsetAsync(wide.get(), 0, wide.bytes(), s));
        GT_CUDA(cudaMemsetAsync(narrow.get(), 0, narrow.bytes(), s));
        const tg::track_snapshot before = c.copy_tracks(::cuda::stream_ref(s.get()));
        const std::uint64_t launches_0 = c.generation_launches(::cuda::stream_ref(s.get()));
        for (int r = 0; r < replays; ++r) exec.launch(::cuda::stream_ref(s.get()));
        const std::uint64_t launches_1 = c.generation_launches(::cuda::stream_ref(s.get()));
        CHECK(launches_1 - launches_0 == (conditional ? 0u : static_cast<std::uint64_t>(replays)));
        check_same(c.copy_tracks(::cuda::stream_ref(s.get())), before);

        // The last env alone (the any-of reduction reads the last element of either width).
        const std::int32_t one = 1;
        const unsigned char byte = 2;
        if (one_byte) {
          GT_CUDA(cudaMemcpyAsync(narrow.get() + num_envs - 1, &byte, 1, cudaMemcpyHostToDevice, s));
        } else {
          GT_CUDA(cudaMemcpyAsync(wide.get() + num_envs - 1, &one, sizeof(one), cudaMemcpyHostToDevice, s));
        }
        for (int r = 0; r < replays; ++r) exec.launch(::cuda::stream_ref(s.get()));
        const std::uint64_t launches_2 = c.generation_launches(::cuda::stream_ref(s.get()));
        CHECK(launches_2 - launches_1 == static_cast<std::uint64_t>(replays));
        const tg::track_snapshot after = c.copy_tracks(::cuda::stream_ref(s.get()));
        for (int e = 0; e < num_envs; ++e) {
          const std::size_t i = static_cast<std::size_t>(e);
          const std::uint32_t expected = before.episode[i] + (e == num_envs - 1 ? static_cast<std::uint32_t>(replays) : 0u);
          if (after.episode[i] != expected) {
            FAIL_CHECK("env " << e << ": episode " << after.episode[i] << ", expected " << expected);
            break;
          }
        }
      }
    }
  }
}

TEST_CASE("set_recording refuses conditional recording for a course of skip::unconditional") {
  stream_holder s;
  course_t<tg::policy<tg::capture::global, tg::skip::unconditional>> c(tg::presets::track(8), 0.6f,
                                                                          ::cuda::stream_ref(s.get()));
  CHECK_FALSE(c.recording().conditional);
  CHECK_THROWS_AS(c.set_recording({true, 0}), std::invalid_argument);
  CHECK_NOTHROW(c.set_recording({false, 2}));
}

}  // namespace graph_test

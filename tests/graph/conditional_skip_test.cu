// skip::conditional really skips: a captured regenerate(mask, true) whose mask is all zero
// runs no generation kernel at all on replay (the device launch counter does not move), and
// runs exactly one per replay as soon as one entry is nonzero. skip::unconditional launches the
// generation kernel on every replay, whatever the mask. Both leave envs with a zero mask
// untouched and advance the others by one episode per replay.
#include "graph_support.hpp"

namespace graph_test {

namespace {
/// Uploads `mask` (host, [E]) to `dst` on `s` and replays `exec` `times` times on `s`.
void replay_with(const tg::graph_exec& exec, std::int32_t* dst, const std::vector<std::int32_t>& mask, int times,
                 cudaStream_t s) {
  GT_CUDA(cudaMemcpyAsync(dst, mask.data(), mask.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, s));
  GT_CUDA(cudaStreamSynchronize(s));  // `mask` is pageable and may go away
  for (int r = 0; r < times; ++r) exec.launch(::cuda::stream_ref(s));
  GT_CUDA(cudaStreamSynchronize(s));
}
}  // namespace

TEST_CASE_TEMPLATE_DEFINE("a masked regeneration recorded in a graph launches its generation kernel only when the skip policy says so",
                          Policy, conditional_skip) {
  INFO("policy: " << policy_name<Policy>());
  preload_test_kernels();
  // Not a multiple of any block size, and several blocks: the any-of-mask reduction must see
  // every env, the last one included.
  const int num_envs = track_gen_test::scaled(4099, 1027);
  const int replays = 100;
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 5;
  stream_holder s;
  course_box<Policy> c = make_course<Policy>(params, 0.6f, s);
  device_buffer<std::int32_t> mask(num_envs);

  tg::graph g;
  {
    tg::scoped_capture cap(::cuda::stream_ref(s.get()), capture_mode_of<Policy>());
    c->regenerate(mask.get(), true, ::cuda::stream_ref(s.get()));
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();
  const tg::track_snapshot initial = c->copy_tracks(::cuda::stream_ref(s.get()));
  const std::uint64_t launches_0 = c->generation_launches(::cuda::stream_ref(s.get()));

  // All zero: nothing of the body runs under skip::conditional; one launch per replay otherwise.
  std::vector<std::int32_t> host(static_cast<std::size_t>(num_envs), 0);
  replay_with(exec, mask.get(), host, replays, s);
  const std::uint64_t launches_1 = c->generation_launches(::cuda::stream_ref(s.get()));
  if (is_conditional<Policy>) {
    CHECK(launches_1 == launches_0);
  } else {
    CHECK(launches_1 == launches_0 + static_cast<std::uint64_t>(replays));
  }
  check_same(c->copy_tracks(::cuda::stream_ref(s.get())), initial);

  // One nonzero entry (env 37, value -3: any nonzero counts): exactly one launch per replay,
  // for either policy, and only env 37 moves on, one episode per replay.
  host[37] = -3;
  replay_with(exec, mask.get(), host, replays, s);
  const std::uint64_t launches_2 = c->generation_launches(::cuda::stream_ref(s.get()));
  CHECK(launches_2 == launches_1 + static_cast<std::uint64_t>(replays));
  const tg::track_snapshot after = c->copy_tracks(::cuda::stream_ref(s.get()));
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    CHECK(after.episode[static_cast<std::size_t>(e)] == (e == 37 ? static_cast<std::uint32_t>(replays) : 0u));
  }

  // Back to all zero: the skip resumes (the condition is set anew on every replay).
  host[37] = 0;
  replay_with(exec, mask.get(), host, replays, s);
  const std::uint64_t launches_3 = c->generation_launches(::cuda::stream_ref(s.get()));
  if (is_conditional<Policy>) {
    CHECK(launches_3 == launches_2);
  } else {
    CHECK(launches_3 == launches_2 + static_cast<std::uint64_t>(replays));
  }
  check_same(c->copy_tracks(::cuda::stream_ref(s.get())), after);

  // The last env alone (the any-of-mask reduction reaches the end of the array).
  host[static_cast<std::size_t>(num_envs - 1)] = 1;
  replay_with(exec, mask.get(), host, 3, s);
  CHECK(c->generation_launches(::cuda::stream_ref(s.get())) == launches_3 + 3u);
  CHECK(c->copy_tracks(::cuda::stream_ref(s.get())).episode[static_cast<std::size_t>(num_envs - 1)] == 3u);

  // Every even env: more than the wide blocks take on any GPU (the narrow launch shape, the
  // SWITCH node's other branch): one launch per replay, each selected env one episode further.
  for (int e = 0; e < num_envs; ++e) host[static_cast<std::size_t>(e)] = e % 2 == 0 ? 1 : 0;
  replay_with(exec, mask.get(), host, 2, s);
  CHECK(c->generation_launches(::cuda::stream_ref(s.get())) == launches_3 + 5u);
  const tg::track_snapshot many = c->copy_tracks(::cuda::stream_ref(s.get()));
  int wrong = 0;
  for (int e = 0; e < num_envs; ++e) {
    const std::uint32_t before = e == 37 ? static_cast<std::uint32_t>(replays) : (e == num_envs - 1 ? 3u : 0u);
    wrong += many.episode[static_cast<std::size_t>(e)] == before + (e % 2 == 0 ? 2u : 0u) ? 0 : 1;
  }
  CHECK(wrong == 0);
}

TEST_CASE_TEMPLATE_APPLY(conditional_skip, capture_skip_policies);

}  // namespace graph_test

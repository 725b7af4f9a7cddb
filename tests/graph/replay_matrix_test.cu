// One simulation iteration (stand-in physics + course.step + course.regenerate(mask, true))
// captured once by the user, in the policy's capture mode, and replayed >= 1000 times with a
// new mask uploaded before each replay, gives bit for bit the state that the same calls made
// eagerly give on a second course built from the same params. Over every capture mode x skip
// policy x ownership policy.
#include "graph_support.hpp"

namespace graph_test {

TEST_CASE_TEMPLATE_DEFINE("a captured iteration replayed many times equals the same calls made eagerly, bit for bit",
                          Policy, replay_matrix) {
  INFO("policy: " << policy_name<Policy>());
  preload_test_kernels();
  const int num_envs = 256;
  const int replays = track_gen_test::scaled(1000, 50);
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 2024;
  const float spacing = 0.6f;

  stream_holder s_graph, s_eager;
  course_box<Policy> a = make_course<Policy>(params, spacing, s_graph);
  course_box<Policy> b = make_course<Policy>(params, spacing, s_eager);
  agents agents_a(num_envs), agents_b(num_envs);
  a->bind(agents_a.positions());
  b->bind(agents_b.positions());
  device_buffer<std::int32_t> mask_a(num_envs), mask_b(num_envs);

  const pinned_buffer<std::int32_t> masks = pinned_masks(replays, num_envs, 99u);
  GT_CUDA(cudaStreamSynchronize(s_graph));
  GT_CUDA(cudaStreamSynchronize(s_eager));

  // Construction gives the same bits on both courses (the baseline of the comparison).
  check_same_state(*a, s_graph, *b, s_eager);

  tg::graph g;
  {
    user_capture cap(s_graph, capture_mode_of<Policy>());
    iteration(*a, agents_a, mask_a.get(), s_graph);
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();

  replay_against_eager(exec, masks, replays, num_envs, mask_a.get(), s_graph, mask_b.get(), s_eager, [&] {
    iteration(*b, agents_b, mask_b.get(), s_eager);
  });

  check_same_state(*a, s_graph, *b, s_eager);

  // Independent of the library: every nonzero mask entry advanced that env by one episode,
  // in the replayed graph as eagerly.
  const std::vector<std::uint32_t> episodes = expected_episodes(masks.get(), replays, num_envs);
  const tg::track_snapshot ta = a->copy_tracks(::cuda::stream_ref(s_graph.get()));
  check_same_bytes(ta.episode, episodes, "episodes of the replayed course vs the masks");
  // The run did something worth comparing: agents passed gates (and, at full scale, laps).
  const tg::progress_snapshot pa = a->copy_progress(::cuda::stream_ref(s_graph.get()));
  long gates = 0, laps = 0;
  for (int e = 0; e < num_envs; ++e) {
    gates += pa.gates_passed[static_cast<std::size_t>(e)];
    laps += pa.laps[static_cast<std::size_t>(e)];
  }
  CHECK(gates > 0);
  if (!track_gen_test::small_scale()) CHECK(laps > 0);
}

TEST_CASE_TEMPLATE_APPLY(replay_matrix, all_policies);

}  // namespace graph_test

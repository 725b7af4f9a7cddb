// While this thread holds a global-mode capture, library calls made from another std::thread
// on a stream that is not capturing (a second course: step + regenerate, which also drain the
// deferred frees) run eagerly and do not invalidate that capture: cudaStreamEndCapture
// succeeds and the graph replays like the same calls made eagerly.
#include "graph_support.hpp"

#include <exception>

namespace graph_test {

TEST_CASE_TEMPLATE_DEFINE("a non-capturing library call from another thread leaves this thread's global capture valid",
                          Policy, other_thread_call) {
  INFO("policy of the other thread's course: " << policy_name<Policy>());
  using main_policy = tg::cuda_policy;  // capture::global
  preload_test_kernels();
  const int num_envs = 256;
  const int replays = track_gen_test::scaled(50, 10);
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 9001;
  tg::track_params params_b = tg::presets::track(128);
  params_b.seed = 4;
  stream_holder s_a, s_b, s_ref, s_tmp;

  course_t<main_policy> a(params, 0.6f, ::cuda::stream_ref(s_a.get()));
  course_t<main_policy> ref(params, 0.6f, ::cuda::stream_ref(s_ref.get()));
  course_box<Policy> b = make_course<Policy>(params_b, 0.6f, s_b);
  agents agents_a(num_envs), agents_ref(num_envs), agents_b(128);
  a.bind(agents_a.positions());
  ref.bind(agents_ref.positions());
  b->bind(agents_b.positions());
  device_buffer<std::int32_t> mask_a(num_envs), mask_ref(num_envs);
  GT_CUDA(cudaDeviceSynchronize());

  // Something for the other thread's calls to free: the storage of an anchored course whose
  // only graph is gone (released to the deferred list by CUDA's own thread).
  {
    auto tmp = std::make_unique<course_t<main_policy>>(tg::presets::track(32), 0.6f, ::cuda::stream_ref(s_tmp.get()));
    tg::scoped_capture cap(::cuda::stream_ref(s_tmp.get()));
    tmp->regenerate(nullptr, true, ::cuda::stream_ref(s_tmp.get()));
    tg::graph g = cap.end();
    tmp.reset();
  }
  const bool pending = eventually([] { return pending_deferred_frees() > 0; }, 5.0);
  WARN_MESSAGE(pending, "no deferred free was pending: the other thread's drain is not exercised");

  tg::graph g;
  std::string thread_error;
  {
    user_capture cap(s_a, cudaStreamCaptureModeGlobal);
    const capture_state before = query_capture(s_a);
    iteration(a, agents_a, mask_a.get(), s_a);
    std::thread other([&] {
      try {
        b->step(::cuda::stream_ref(s_b.get()));
        b->regenerate(nullptr, true, ::cuda::stream_ref(s_b.get()));
      } catch (const std::exception& e) {
        thread_error = e.what();
      } catch (...) {
        thread_error = "unknown exception";
      }
    });
    other.join();
    CHECK_MESSAGE(thread_error.empty(), "the other thread's calls threw: " << thread_error);
    const capture_state after = query_capture(s_a);
    CHECK(after.status == cudaStreamCaptureStatusActive);
    CHECK(after.id == before.id);
    // Recording goes on after the other thread's calls.
    a.step(::cuda::stream_ref(s_a.get()));
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();

  // The other thread's calls ran eagerly: every env of b is on episode 1.
  GT_CUDA(cudaStreamSynchronize(s_b));
  const tg::track_snapshot tb = b->copy_tracks(::cuda::stream_ref(s_b.get()));
  for (std::size_t e = 0; e < tb.episode.size(); ++e) CHECK(tb.episode[e] == 1u);
  tg::release_deferred();
  CHECK(pending_deferred_frees() == 0);

  const pinned_buffer<std::int32_t> masks = pinned_masks(replays, num_envs, 17u);
  replay_against_eager(exec, masks, replays, num_envs, mask_a.get(), s_a, mask_ref.get(), s_ref, [&] {
    iteration(ref, agents_ref, mask_ref.get(), s_ref);
    ref.step(::cuda::stream_ref(s_ref.get()));
  });
  check_same_state(a, s_a, ref, s_ref);
}

TEST_CASE_TEMPLATE_APPLY(other_thread_call,
                         std::tuple<tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::anchored>,
                                    tg::policy<tg::capture::thread_local_, tg::skip::conditional, tg::ownership::anchored>,
                                    tg::policy<tg::capture::relaxed, tg::skip::conditional, tg::ownership::anchored>,
                                    tg::policy<tg::capture::global, tg::skip::unconditional, tg::ownership::owning>,
                                    tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::borrowed>>);

}  // namespace graph_test

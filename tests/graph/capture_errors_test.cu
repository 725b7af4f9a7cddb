// capture_error: constructing a course on a capturing stream throws it (and leaves the user's
// capture valid and empty); so do the synchronising copies; and so does every call on a stream
// whose capture was invalidated, which must not launch anything or corrupt the course.
#include "graph_support.hpp"

namespace graph_test {

TEST_CASE_TEMPLATE_DEFINE("constructing a course on a capturing stream throws capture_error and leaves the capture intact",
                          Policy, construct_while_capturing) {
  INFO("policy: " << policy_name<Policy>());
  const tg::track_params params = tg::presets::track(32);
  const float spacing = 0.6f;
  stream_holder s;
  // Borrowed storage is the user's, allocated before the capture (cudaMalloc is not capturable).
  std::unique_ptr<device_buffer<unsigned char>> storage;
  std::size_t bytes = 0;
  if constexpr (is_borrowed<Policy>) {
    bytes = course_t<Policy>::required_bytes(params, spacing);
    storage = std::make_unique<device_buffer<unsigned char>>(bytes);
  }
  GT_CUDA(cudaDeviceSynchronize());

  user_capture cap(s, capture_mode_of<Policy>());
  if constexpr (is_borrowed<Policy>) {
    CHECK_THROWS_AS(course_t<Policy>(params, spacing, tg::borrowed_storage{storage->get(), bytes}, ::cuda::stream_ref(s.get())),
                    tg::capture_error);
  } else {
    CHECK_THROWS_AS(course_t<Policy>(params, spacing, ::cuda::stream_ref(s.get())), tg::capture_error);
  }
  CHECK(query_capture(s).status == cudaStreamCaptureStatusActive);
  tg::graph g = cap.end();
  std::size_t nodes = 0;
  GT_CUDA(cudaGraphGetNodes(g.get(), nullptr, &nodes));
  CHECK(nodes == 0);  // nothing was recorded before the throw
}

TEST_CASE_TEMPLATE_DEFINE("copies to the host on a capturing stream throw capture_error and leave the capture intact",
                          Policy, copy_while_capturing) {
  INFO("policy: " << policy_name<Policy>());
  stream_holder s;
  course_box<Policy> c = make_course<Policy>(tg::presets::track(32), 0.6f, s);
  GT_CUDA(cudaStreamSynchronize(s));
  user_capture cap(s, capture_mode_of<Policy>());
  CHECK_THROWS_AS(c->copy_tracks(::cuda::stream_ref(s.get())), tg::capture_error);
  CHECK_THROWS_AS(c->copy_progress(::cuda::stream_ref(s.get())), tg::capture_error);
  CHECK(query_capture(s).status == cudaStreamCaptureStatusActive);
  (void)cap.end();
}

TEST_CASE_TEMPLATE_DEFINE("every call on a stream whose capture was invalidated throws capture_error and changes nothing",
                          Policy, invalidated_capture) {
  INFO("policy: " << policy_name<Policy>());
  preload_test_kernels();
  const int num_envs = 64;
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 123;
  stream_holder s, s_ref;
  course_box<Policy> a = make_course<Policy>(params, 0.6f, s);
  course_box<Policy> ref = make_course<Policy>(params, 0.6f, s_ref);
  agents agents_a(num_envs), agents_ref(num_envs);
  a->bind(agents_a.positions());
  ref->bind(agents_ref.positions());
  device_buffer<std::int32_t> mask(num_envs), mask_ref(num_envs);
  const std::vector<std::int32_t> ones(static_cast<std::size_t>(num_envs), 1);
  GT_CUDA(cudaMemcpy(mask.get(), ones.data(), ones.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  GT_CUDA(cudaMemcpy(mask_ref.get(), ones.data(), ones.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  GT_CUDA(cudaDeviceSynchronize());

  GT_CUDA(cudaStreamBeginCapture(s, capture_mode_of<Policy>()));
  iteration(*a, agents_a, mask.get(), s);  // recorded, never run
  // Synchronising a capturing stream is illegal and invalidates its capture.
  const cudaError_t sync = cudaStreamSynchronize(s);
  (void)cudaGetLastError();
  CHECK(sync != cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GT_CUDA(cudaStreamIsCapturing(s, &status));
  REQUIRE(status == cudaStreamCaptureStatusInvalidated);

  CHECK_THROWS_AS(a->step(::cuda::stream_ref(s.get())), tg::capture_error);
  CHECK_THROWS_AS(a->regenerate(mask.get(), true, ::cuda::stream_ref(s.get())), tg::capture_error);
  CHECK_THROWS_AS(a->regenerate(nullptr, false, ::cuda::stream_ref(s.get())), tg::capture_error);

  cudaGraph_t g = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &g);
  CHECK(end == cudaErrorStreamCaptureInvalidated);
  CHECK(g == nullptr);
  if (g != nullptr) (void)cudaGraphDestroy(g);
  (void)cudaGetLastError();
  GT_CUDA(cudaStreamIsCapturing(s, &status));
  REQUIRE(status == cudaStreamCaptureStatusNone);

  // Nothing ran and nothing broke: the course still equals an untouched one, and both go on
  // eagerly in step.
  GT_CUDA(cudaStreamSynchronize(s));
  check_same_state(*a, s, *ref, s_ref);
  for (int r = 0; r < 5; ++r) {
    iteration(*a, agents_a, mask.get(), s);
    iteration(*ref, agents_ref, mask_ref.get(), s_ref);
  }
  GT_CUDA(cudaStreamSynchronize(s));
  GT_CUDA(cudaStreamSynchronize(s_ref));
  check_same_state(*a, s, *ref, s_ref);
}

TEST_CASE_TEMPLATE_APPLY(construct_while_capturing, all_policies);
TEST_CASE_TEMPLATE_APPLY(copy_while_capturing, capture_skip_policies);
TEST_CASE_TEMPLATE_APPLY(invalidated_capture, all_policies);

}  // namespace graph_test

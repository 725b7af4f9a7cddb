// ownership::anchored: a graph recorded from a course keeps the course's storage alive after
// the course is destroyed (replays still read and write live, correct memory), and the memory
// goes back to the device once the graph and its executable graph are destroyed and the
// deferred frees are released. `retain` ties shared owners to a graph once per owner and
// ignores null owners.
#include "graph_support.hpp"

#include <atomic>

namespace graph_test {

namespace {
constexpr long long mib = 1024 * 1024;

/// Logs of env 0 written by log_env, one entry per replay.
struct env_log {
  explicit env_log(int capacity)
      : lap(static_cast<std::size_t>(capacity)), gates(static_cast<std::size_t>(capacity)), length(static_cast<std::size_t>(capacity)), count(1),
        capacity(static_cast<unsigned>(capacity)) {}
  device_buffer<float> lap;
  device_buffer<int> gates;
  device_buffer<float> length;
  device_buffer<unsigned> count;
  unsigned capacity;
  void record(const tg::course_ref& view, cudaStream_t s) const {
    log_env<<<1, 1, 0, s>>>(view, 0, lap.get(), gates.get(), length.get(), count.get(), capacity);
    GT_CUDA(cudaGetLastError());
  }
  template <class T>
  static std::vector<T> download(const device_buffer<T>& b, cudaStream_t s) {
    std::vector<T> h(b.size());
    GT_CUDA(cudaMemcpyAsync(h.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost, s));
    GT_CUDA(cudaStreamSynchronize(s));
    return h;
  }
};

/// Free device memory minus `baseline`, signed [bytes].
long long held_since(std::size_t baseline) {
  return static_cast<long long>(baseline) - static_cast<long long>(free_device_memory());
}
}  // namespace

TEST_CASE("an anchored course's graph replays after the course is gone, and frees its memory after the graph") {
  using policy = tg::cuda_policy;
  static_assert(is_anchored<policy>, "the default policy anchors");
  preload_test_kernels();
  const int num_envs = track_gen_test::scaled(65536, 4096);
  const int replays = 100;
  tg::track_params params = tg::presets::track(num_envs);
  params.seed = 77;
  const float spacing = 0.6f;
  stream_holder s, s_ref;

  // Warm-up of the whole cycle at a small size: CUDA allocates some of its own device memory
  // lazily (module loads, graph launch resources), which must not count as a leak below.
  {
    tg::track_params small = tg::presets::track(64);
    agents ag(64);
    device_buffer<std::int32_t> mask(64);
    auto c = std::make_unique<course_t<policy>>(small, spacing, ::cuda::stream_ref(s.get()));
    c->bind(ag.positions());
    tg::scoped_capture cap(::cuda::stream_ref(s.get()));
    iteration(*c, ag, mask.get(), s);
    tg::graph g = cap.end();
    tg::graph_exec x = g.instantiate();
    x.launch(::cuda::stream_ref(s.get()));
    GT_CUDA(cudaStreamSynchronize(s));
    const std::weak_ptr<const void> weak = c->owner();
    c.reset();
    x.reset();
    g.reset();
    CHECK(eventually([&] {
      tg::release_deferred();
      return weak.expired();
    }));
  }

  // Everything the test itself needs is allocated before the baseline.
  agents ag(num_envs);
  device_buffer<std::int32_t> mask(static_cast<std::size_t>(num_envs));
  env_log log(replays);
  // Reference: env 0 alone, never regenerated, stepped eagerly with the same physics. Env 0 of
  // the big course is never masked below, so its bits must follow this one's (same seed, same
  // global env id, same episode).
  tg::track_params one = params;
  one.num_envs = 1;
  course_t<policy> ref(one, spacing, ::cuda::stream_ref(s_ref.get()));
  agents ag_ref(1);
  ref.bind(ag_ref.positions());
  env_log ref_log(replays);
  std::vector<std::int32_t> mask_rows = make_masks(replays, num_envs, 4242u);
  for (int r = 0; r < replays; ++r) mask_rows[static_cast<std::size_t>(r) * num_envs] = 0;  // env 0 never
  pinned_buffer<std::int32_t> masks(mask_rows.size());
  std::memcpy(masks.get(), mask_rows.data(), mask_rows.size() * sizeof(std::int32_t));
  GT_CUDA(cudaDeviceSynchronize());
  tg::release_deferred();
  const std::size_t baseline = free_device_memory();

  // At least the centreline positions of every env: what a leak of the storage would keep.
  const long long storage_lower_bound = static_cast<long long>(num_envs) * params.num_samples * static_cast<long long>(sizeof(float3));
  REQUIRE(storage_lower_bound > 2 * mib);

  auto c = std::make_unique<course_t<policy>>(params, spacing, ::cuda::stream_ref(s.get()));
  c->bind(ag.positions());
  const float length_0 = c->copy_tracks(0, 1, ::cuda::stream_ref(s.get())).length[0];
  CHECK(held_since(baseline) >= storage_lower_bound);
  tg::graph g;
  {
    tg::scoped_capture cap(::cuda::stream_ref(s.get()));
    iteration(*c, ag, mask.get(), s);
    log.record(c->view(), s);
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();
  const std::weak_ptr<const void> weak = c->owner();
  REQUIRE(!weak.expired());

  // The course goes; the graph keeps its storage.
  c.reset();
  GT_CUDA(cudaDeviceSynchronize());
  tg::release_deferred();
  CHECK(!weak.expired());
  CHECK(held_since(baseline) >= storage_lower_bound);

  const std::size_t row_bytes = static_cast<std::size_t>(num_envs) * sizeof(std::int32_t);
  for (int r = 0; r < replays; ++r) {
    GT_CUDA(cudaMemcpyAsync(mask.get(), masks.get() + static_cast<std::size_t>(r) * num_envs, row_bytes,
                            cudaMemcpyHostToDevice, s));
    exec.launch(::cuda::stream_ref(s.get()));
    ag_ref.move(ref.view(), s_ref);
    ref.step(::cuda::stream_ref(s_ref.get()));
    ref_log.record(ref.view(), s_ref);
  }
  GT_CUDA(cudaStreamSynchronize(s));
  GT_CUDA(cudaStreamSynchronize(s_ref));
  CHECK(!weak.expired());

  // What the graph computed after its course was destroyed equals the eager reference, and
  // is sane on its own: env 0's track kept its length, its lap progress lies on the track and
  // moves, its gate count never drops and grows.
  CHECK(env_log::download(log.count, s)[0] == static_cast<unsigned>(replays));
  const std::vector<float> lap = env_log::download(log.lap, s), length = env_log::download(log.length, s);
  const std::vector<int> gates = env_log::download(log.gates, s);
  check_same_bytes(lap, env_log::download(ref_log.lap, s_ref), "lap progress of env 0 vs the reference");
  check_same_bytes(gates, env_log::download(ref_log.gates, s_ref), "gates passed by env 0 vs the reference");
  check_same_bytes(length, env_log::download(ref_log.length, s_ref), "track length of env 0 vs the reference");
  int distinct = 0;
  for (int r = 0; r < replays; ++r) {
    const std::size_t i = static_cast<std::size_t>(r);
    INFO("replay " << r);
    CHECK(std::memcmp(&length[i], &length_0, sizeof(float)) == 0);
    CHECK(lap[i] >= 0.0f);
    CHECK(lap[i] < length_0);
    if (r > 0) {
      CHECK(gates[i] >= gates[i - 1]);
      if (lap[i] != lap[i - 1]) ++distinct;
    }
  }
  CHECK(distinct >= replays / 2);
  CHECK(gates.back() > gates.front());

  // Graph and exec go: the storage is released (CUDA drops the user object on its own thread,
  // whenever it gets to it), then freed by the next library call made outside any capture.
  exec.reset();
  g.reset();
  const bool freed = eventually([&] {
    tg::release_deferred();
    return weak.expired() && held_since(baseline) <= 2 * mib;
  });
  INFO("device memory still held after the graph went: " << held_since(baseline) << " bytes");
  CHECK(weak.expired());
  CHECK(freed);
}

TEST_CASE("retain ties shared owners to a graph and its executable graphs, once per owner, ignoring null owners") {
  preload_test_kernels();
  cudaGraph_t raw = nullptr;
  GT_CUDA(cudaGraphCreate(&raw, 0));
  tg::graph g(raw);
  cudaGraphNode_t empty = nullptr;
  GT_CUDA(cudaGraphAddEmptyNode(&empty, g.get(), nullptr, 0));
  cudaGraph_t raw2 = nullptr;
  GT_CUDA(cudaGraphCreate(&raw2, 0));
  tg::graph g2(raw2);

  std::atomic<bool> deleted{false};
  std::shared_ptr<int> sentinel(new int(5), [&deleted](int* p) {
    delete p;
    deleted = true;
  });
  const std::weak_ptr<int> weak = sentinel;
  std::shared_ptr<const void> as_void = sentinel;  // the same owner, typed differently
  REQUIRE(sentinel.use_count() == 2);

  tg::retain(g.get(), sentinel);
  CHECK(sentinel.use_count() == 3);
  tg::retain(g.get(), sentinel);            // idempotent per (graph, owner)
  tg::retain(g.get(), as_void, sentinel);   // the same owner again, under another type
  CHECK(sentinel.use_count() == 3);
  CHECK_NOTHROW(tg::retain(g.get(), std::shared_ptr<const void>{}));  // null owners are ignored
  CHECK_NOTHROW(tg::retain(g.get(), std::shared_ptr<int>{}, sentinel));
  CHECK(sentinel.use_count() == 3);
  tg::retain(g2.get(), sentinel);  // another graph takes its own reference
  CHECK(sentinel.use_count() == 4);

  // A course's owner is one like any other.
  stream_holder s;
  tg::track_params params = tg::presets::track(64);
  course_t<tg::cuda_policy> c(params, 0.6f, ::cuda::stream_ref(s.get()));
  const std::shared_ptr<const void> owner = c.owner();
  REQUIRE(owner != nullptr);
  const long owner_uses = owner.use_count();
  tg::retain(g.get(), owner, std::shared_ptr<const void>{});
  CHECK(owner.use_count() == owner_uses + 1);
  tg::retain(g.get(), owner);
  tg::retain(g.get(), c.owner());
  CHECK(owner.use_count() == owner_uses + 1);

  tg::graph_exec x = g.instantiate();  // the executable graph holds g's owners too
  sentinel.reset();
  as_void.reset();  // the last reference the test held
  CHECK(weak.use_count() == 2);  // g (with x) and g2
  g2.reset();
  CHECK(eventually([&] { return weak.use_count() == 1; }));
  g.reset();
  x.launch(::cuda::stream_ref(s.get()));  // the exec still runs, and still holds the owners
  GT_CUDA(cudaStreamSynchronize(s));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(weak.use_count() == 1);
  CHECK(!deleted.load());
  CHECK(owner.use_count() == owner_uses + 1);
  x.reset();
  CHECK(eventually([&] { return deleted.load(); }));
  CHECK(eventually([&] { return owner.use_count() == owner_uses; }));
}

TEST_CASE_TEMPLATE("owner() is the storage's shared owner under ownership::anchored only", Policy,
                   tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::anchored>,
                   tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::owning>,
                   tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::borrowed>) {
  INFO("policy: " << policy_name<Policy>());
  stream_holder s;
  course_box<Policy> c = make_course<Policy>(tg::presets::track(16), 0.6f, s);
  const std::shared_ptr<const void> owner = c->owner();
  CHECK((owner != nullptr) == is_anchored<Policy>);
  // Moving a course keeps its owner: graphs captured before the move anchor the same storage.
  course_t<Policy> moved = std::move(*c.course);
  CHECK(moved.owner() == owner);
}

}  // namespace graph_test

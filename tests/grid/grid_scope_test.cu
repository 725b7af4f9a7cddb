// Grid scope on the GPU: stages::dense_repulsive through the CUDA grid launch context, eager,
// captured under skip::unconditional (max_windows windows recorded) and under
// skip::conditional (one WHILE node, windows counted on the device), against the host
// backend's windows; skip_unless's IF node; and presets::long_track through courses: CUDA vs
// host, and masked regeneration replayed from graphs under both skip policies, bit for bit
// the same as eager calls.
#include "graph/graph_support.hpp"
#include "grid/grid_cases.hpp"

#include <track_gen/detail/cuda/grid_context.cuh>

#include <cmath>

namespace grid_test {
namespace {

using graph_test::device_buffer;
using graph_test::stream_holder;
using graph_test::user_capture;

/// One thread: counts a window that really ran.
__global__ void count_window(int* counter) { ++*counter; }

/// A stadium_set's arrays in device memory, with a grid_samples on them.
struct device_stadiums {
  explicit device_stadiums(const stadium_set& h)
      : total(h.buffer0.size()), buffer0(total), buffer1(total), count(h.count.size()), spacing(h.spacing.size()),
        residual(h.residual.size()), active(h.active.size()), moved(h.moved.size()), flags(2), windows_run(1) {
    upload(h);
  }
  void upload(const stadium_set& h) {
    GT_CUDA(cudaMemcpy(buffer0.get(), h.buffer0.data(), buffer0.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(buffer1.get(), h.buffer1.data(), buffer1.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(count.get(), h.count.data(), count.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(spacing.get(), h.spacing.data(), spacing.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(residual.get(), h.residual.data(), residual.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(active.get(), h.active.data(), active.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(moved.get(), h.moved.data(), moved.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemset(flags.get(), 0, flags.bytes()));
    GT_CUDA(cudaMemset(windows_run.get(), 0, windows_run.bytes()));
    GT_CUDA(cudaDeviceSynchronize());
  }
  tg::grid_samples view(int envs, int capacity) const {
    tg::grid_samples s{};
    s.buffer[0] = buffer0.get();
    s.buffer[1] = buffer1.get();
    s.count = count.get();
    s.spacing = spacing.get();
    s.active = active.get();
    s.residual = residual.get();
    s.moved = moved.get();
    s.any_active = flags.get();
    s.windows = flags.get() + 1;
    s.variants = nullptr;
    s.env_variant = nullptr;
    s.num_envs = envs;
    s.capacity = capacity;
    return s;
  }
  std::vector<float3> samples() const {
    std::vector<float3> out(total);
    GT_CUDA(cudaMemcpy(out.data(), buffer0.get(), buffer0.bytes(), cudaMemcpyDeviceToHost));
    return out;
  }
  template <class T>
  static std::vector<T> get(const device_buffer<T>& b) {
    std::vector<T> out(b.size());
    GT_CUDA(cudaMemcpy(out.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
    return out;
  }
  std::size_t total;
  device_buffer<float3> buffer0, buffer1;
  device_buffer<int> count;
  device_buffer<float> spacing, residual;
  device_buffer<std::int32_t> active, moved;
  device_buffer<int> flags, windows_run;
};

enum class mode { eager, unconditional_graph, conditional_graph };
const char* name(mode m) {
  return m == mode::eager ? "eager" : (m == mode::unconditional_graph ? "graph, skip::unconditional" : "graph, skip::conditional");
}

/// Runs the stage on `d` as `m` says; a window also counts itself in d.windows_run.
void run_on_device(device_stadiums& d, const stadium_set& h, const tg::track_params& p, mode m, cudaStream_t s,
                   const tg::detail::body_stream_set& bodies) {
  const tg::grid_samples view = d.view(h.num_envs, h.capacity);
  tg::detail::cuda_launch_setup setup;
  setup.conditional = m == mode::conditional_graph;
  setup.bodies = &bodies;
  setup.mode = cudaStreamCaptureModeGlobal;
  auto record = [&] {
    tg::detail::cuda_grid_context<256> ctx(s, setup);
    const int per_window = p.dense_repulsive.iterations_per_window;
    int* windows_run = d.windows_run.get();
    ctx.bounded_loop(p.dense_repulsive.max_windows, view, p.dense_repulsive.tolerance, [&](auto& window) {
      count_window<<<1, 1, 0, window.stream()>>>(windows_run);
      for (int k = 0; k < per_window; ++k)
        window.for_each_sample(view, tg::stages::dense_repulsive::iteration{view, p.dense_repulsive, k % 2, k + 1 == per_window});
    });
  };
  if (m == mode::eager) {
    record();
  } else {
    GT_CUDA(cudaDeviceSynchronize());  // see the WHILE-body test: NVIDIA/warp#1406
    user_capture cap(s, cudaStreamCaptureModeGlobal);
    record();
    tg::graph g = cap.end();
    tg::graph_exec exec = g.instantiate();
    exec.launch(::cuda::stream_ref(s));
  }
  GT_CUDA(cudaStreamSynchronize(s));
}

}  // namespace

TEST_CASE("a grid-scope bounded loop runs the windows its active flags call for, eager, unconditional or as a WHILE node") {
  graph_test::preload_test_kernels();
  const int n = track_gen_test::scaled(1024, 256);
  stream_holder s;
  tg::detail::body_stream_set bodies;
  bodies.create();
  for (const int max_windows : {200, 3}) {
    INFO("max_windows " << max_windows);
    const stadium_set start = make_stadiums({60.0f, 30.0f, 10.0f, 20.0f, 10.0f}, n, /*idle=*/4);
    const tg::track_params p = stadium_params(max_windows);
    stadium_set host = start;
    {
      tg::detail::host_grid_context ctx;
      tg::stages::dense_repulsive::run(ctx, host.view(), p);
    }
    const int host_windows = host.flags[1];
    CHECK(host_windows >= 2);
    CHECK(host_windows <= max_windows);
    std::vector<std::vector<float3>> results;
    for (const mode m : {mode::eager, mode::unconditional_graph, mode::conditional_graph}) {
      INFO(name(m));
      device_stadiums d(start);
      run_on_device(d, start, p, m, s, bodies);
      const int ran = device_stadiums::get(d.windows_run)[0];
      if (m == mode::conditional_graph) {
        CHECK(ran == host_windows);  // the WHILE node stopped where the flags say
        CHECK(device_stadiums::get(d.flags)[1] == host_windows);  // the device counter agrees
      } else {
        CHECK(ran == max_windows);  // every recorded window launches; inactive envs exit at once
      }
      CHECK(device_stadiums::get(d.active) == host.active);
      CHECK(device_stadiums::get(d.moved) == host.moved);
      results.push_back(d.samples());
      // Against the host backend: close, idle env 4 and clear env 0 exact. nvcc contracts a * b + c
      // into FMAs, the host compiler does not; over the 1600 iterations of the 256-sample runs
      // (which never converge) the difference grew to 0.022 m on the H200.
      const std::vector<float3>& got = results.back();
      double worst = 0.0;
      for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::fmax(worst, std::fabs(double(got[i].x) - host.buffer0[i].x) + std::fabs(double(got[i].y) - host.buffer0[i].y));
      INFO("largest |CUDA - host| " << worst << " m");
      CHECK(worst < 0.05);  // 1/800 of the 40 m clearance
      for (const int e : {0, 4}) {
        const std::size_t at = static_cast<std::size_t>(e) * start.capacity;
        CHECK(std::memcmp(&got[at], &start.buffer0[at], sizeof(float3) * n) == 0);
      }
    }
    // The three ways of recording give the same bits.
    CHECK(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float3)) == 0);
    CHECK(std::memcmp(results[0].data(), results[2].data(), results[0].size() * sizeof(float3)) == 0);
  }
}

TEST_CASE("skip_unless at grid scope records an IF node that runs its body only when the flag is set") {
  graph_test::preload_test_kernels();
  stream_holder s;
  tg::detail::body_stream_set bodies;
  bodies.create();
  device_buffer<int> flag(1), counter(1);
  tg::detail::cuda_launch_setup setup;
  setup.conditional = true;
  setup.bodies = &bodies;
  user_capture cap(s, cudaStreamCaptureModeGlobal);
  const unsigned long long id_before = graph_test::query_capture(s).id;
  {
    tg::detail::cuda_grid_context<256> ctx(s, setup);
    int* c = counter.get();
    ctx.skip_unless(flag.get(), [&](auto& inner) { count_window<<<1, 1, 0, inner.stream()>>>(c); });
  }
  CHECK(graph_test::query_capture(s).id == id_before);  // the enclosing capture went on
  tg::graph g = cap.end();
  tg::graph_exec exec = g.instantiate();
  for (int r = 0; r < 10; ++r) exec.launch(::cuda::stream_ref(s.get()));
  GT_CUDA(cudaStreamSynchronize(s));
  CHECK(device_stadiums::get(counter)[0] == 0);
  const int one = 1;
  GT_CUDA(cudaMemcpy(flag.get(), &one, sizeof(int), cudaMemcpyHostToDevice));
  GT_CUDA(cudaDeviceSynchronize());  // a pageable copy may still be in flight when cudaMemcpy returns
  for (int r = 0; r < 10; ++r) exec.launch(::cuda::stream_ref(s.get()));
  GT_CUDA(cudaStreamSynchronize(s));
  CHECK(device_stadiums::get(counter)[0] == 10);
}

namespace {
/// One thread: the WHILE condition of a loop of exactly `rounds` iterations (the counter is
/// reset before the node).
__global__ void loop_rounds(cudaGraphConditionalHandle handle, int* counter, int rounds) {
  const int done = *counter + 1;
  *counter = done;
  cudaGraphSetConditional(handle, done < rounds ? 1u : 0u);
}
__global__ void start_rounds(cudaGraphConditionalHandle handle, int* counter) {
  *counter = 0;
  cudaGraphSetConditional(handle, 1u);
}
/// graph_test::move_agents with the view read from device memory and copied: a member call on
/// a view passed as a kernel argument addresses parameter space, which read out of bounds in a
/// WHILE body under memcheck (H200, CUDA 13.0, several sanitized processes at once).
__global__ void move_agents_resident(const tg::course_ref* resident, float3* positions, unsigned* steps, int stride) {
  const tg::course_ref view = *resident;
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e < view.num_envs()) graph_test::move_agent(view, e, positions, steps, stride);
}
/// Agents of one course for the WHILE-body test: positions, step counters, the view on the device.
struct resident_agents {
  explicit resident_agents(const tg::course_ref& v) : positions(v.num_envs()), steps(v.num_envs()), view(1) {
    GT_CUDA(cudaMemcpy(view.get(), &v, sizeof(v), cudaMemcpyHostToDevice));
    GT_CUDA(cudaDeviceSynchronize());
  }
  void move(int num_envs, cudaStream_t s) const {
    move_agents_resident<<<(num_envs + 127) / 128, 128, 0, s>>>(view.get(), positions.get(), steps.get(), 3);
    GT_CUDA(cudaGetLastError());
  }
  device_buffer<float3> positions;
  device_buffer<unsigned> steps;
  device_buffer<tg::course_ref> view;
};
}  // namespace

TEST_CASE("step and physics recorded inside a user's WHILE body (sub-stepping) give the eager steps' progress bit for bit") {
  graph_test::preload_test_kernels();
  cudaFuncAttributes attr{};
  GT_CUDA(cudaFuncGetAttributes(&attr, loop_rounds));
  GT_CUDA(cudaFuncGetAttributes(&attr, start_rounds));
  GT_CUDA(cudaFuncGetAttributes(&attr, move_agents_resident));
  const int num_envs = track_gen_test::scaled(4096, 256);
  const int rounds = 5, replays = 4;
  tg::track_params p = tg::presets::track(num_envs);
  p.seed = 12;
  stream_holder s;
  const ::cuda::stream_ref sr(s.get());
  using course_type = tg::course<tg::presets::track_pipeline, tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::owning>>;
  course_type looped(p, 0.6f, sr), eager(p, 0.6f, sr);
  resident_agents ag_looped(looped.view()), ag_eager(eager.view());
  looped.bind(ag_looped.positions.get());
  eager.bind(ag_eager.positions.get());
  device_buffer<int> counter(1);
  tg::detail::body_stream_set bodies;
  bodies.create();
  tg::graph g;
  {
    // Every allocation done before the capture (NVIDIA/warp#1406: memcheck flags reads of
    // recently allocated memory by kernels in WHILE bodies unless the device synchronises).
    GT_CUDA(cudaDeviceSynchronize());
    user_capture cap(s, cudaStreamCaptureModeGlobal);
    tg::detail::record_conditional(
        s, cudaGraphCondTypeWhile, bodies, cudaStreamCaptureModeGlobal,
        [&](cudaGraphConditionalHandle h, cudaStream_t st) { start_rounds<<<1, 1, 0, st>>>(h, counter.get()); },
        [&](cudaStream_t body, cudaGraphConditionalHandle h) {
          ag_looped.move(num_envs, body);
          looped.step(::cuda::stream_ref(body));
          loop_rounds<<<1, 1, 0, body>>>(h, counter.get(), rounds);
        });
    g = cap.end();
  }
  tg::graph_exec exec = g.instantiate();
  for (int r = 0; r < replays; ++r) {
    exec.launch(sr);
    for (int k = 0; k < rounds; ++k) {
      ag_eager.move(num_envs, s);
      eager.step(sr);
    }
  }
  GT_CUDA(cudaStreamSynchronize(s));
  const tg::progress_snapshot a = looped.copy_progress(sr), b = eager.copy_progress(sr);
  graph_test::check_same(a, b);
  int gates = 0;
  for (const int gp : a.gates_passed) gates += gp;
  CHECK(gates > 0);  // the agents moved through gates: the comparison is not of untouched state
}

namespace {
template <class Policy>
using long_course = tg::course<tg::presets::long_track_pipeline, Policy>;
using host_long_course = tg::course<tg::presets::long_track_pipeline, tg::host_policy>;

/// presets::long_track; under the sanitizers (TRACK_GEN_TEST_SCALE=small) with 512 samples
/// (dense and resampled) instead of 2048, so that the O(N^2) stages finish in time there.
tg::track_params small_long_track(int num_envs) {
  tg::track_params p = tg::presets::long_track(num_envs);
  if (track_gen_test::scaled(0, 1) == 1) {
    p.num_samples = 512;
    p.spline.samples_per_segment = 16;
  }
  return p;
}
}  // namespace

TEST_CASE("presets::long_track on the GPU matches the host backend") {
  const int num_envs = track_gen_test::scaled(16, 4);
  tg::track_params p = small_long_track(num_envs);
  p.seed = 7;
  stream_holder s;
  long_course<tg::cuda_policy> gpu(p, 50.0f, ::cuda::stream_ref(s.get()));
  host_long_course cpu(p, 50.0f);
  const tg::track_snapshot a = gpu.copy_tracks(::cuda::stream_ref(s.get()));
  const tg::track_snapshot b = cpu.copy_tracks({});
  int relaxed = 0;
  double worst = 0.0;
  const std::size_t n = static_cast<std::size_t>(p.num_samples);
  for (int e = 0; e < num_envs; ++e) {
    INFO("env " << e);
    CHECK(a.status[static_cast<std::size_t>(e)] == b.status[static_cast<std::size_t>(e)]);
    relaxed += (a.status[static_cast<std::size_t>(e)] & tg::status::relaxed) != 0;
    for (std::size_t k = 0; k < n; ++k) {
      const float3 u = a.position[e * n + k], v = b.position[e * n + k];
      worst = std::fmax(worst, std::fabs(double(u.x) - v.x) + std::fabs(double(u.y) - v.y) + std::fabs(double(u.z) - v.z));
    }
  }
  MESSAGE("long_track CUDA vs host: " << relaxed << " of " << num_envs << " relaxed; largest position difference " << worst << " m");
  CHECK(relaxed >= 1);
  CHECK(worst < 1e-3 * p.validate.length_max);
}

TEST_CASE_TEMPLATE("long_track regenerations replayed from a graph give the eager calls' tracks bit for bit", Policy,
                   tg::policy<tg::capture::global, tg::skip::conditional>,
                   tg::policy<tg::capture::relaxed, tg::skip::unconditional>) {
  graph_test::preload_test_kernels();
  const int num_envs = track_gen_test::scaled(12, 4);
  const int replays = track_gen_test::scaled(12, 4);
  tg::track_params p = small_long_track(num_envs);
  p.seed = 7;  // a seed with relaxed tracks in episode 0 at both scales (checked on the host)
  stream_holder s;
  const ::cuda::stream_ref sr(s.get());
  std::weak_ptr<const void> owner;
  int relaxed = 0;
  {
    long_course<Policy> replayed(p, 50.0f, sr);
    long_course<tg::policy<tg::capture::global, tg::skip::unconditional, tg::ownership::owning>> eager(p, 50.0f, sr);
    device_buffer<std::int32_t> mask(num_envs);
    tg::graph g;
    {
      tg::scoped_capture cap(sr, graph_test::capture_mode_of<Policy>());
      replayed.regenerate(mask.get(), true, sr);
      g = cap.end();
    }
    tg::graph_exec exec = g.instantiate();
    std::mt19937 rng(4);
    for (int r = 0; r < replays; ++r) {
      std::vector<std::int32_t> m(static_cast<std::size_t>(num_envs));
      for (auto& v : m) v = r == 0 ? 0 : (r == 1 ? 1 : static_cast<std::int32_t>(rng() % 3 == 0));
      GT_CUDA(cudaMemcpyAsync(mask.get(), m.data(), m.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, s));
      exec.launch(sr);
      eager.regenerate(mask.get(), true, sr);
      GT_CUDA(cudaStreamSynchronize(s));
      const tg::track_snapshot a = replayed.copy_tracks(sr), b = eager.copy_tracks(sr);
      graph_test::check_same(a, b);
      for (const std::uint32_t st : a.status) relaxed += (st & tg::status::relaxed) != 0;
    }
    owner = replayed.owner();
  }
  // The graph's user object lets go of the anchored storage on a CUDA thread; free it here so
  // that the sanitizer's leak check sees it back.
  CHECK(graph_test::eventually([&] { return owner.expired(); }));
  tg::release_deferred();
  CHECK(relaxed >= 1);
}

}  // namespace grid_test

/// @file
/// GPU throughput of track_gen, and the floors it is compared with, for scripts/bench-all:
///
/// - `generate`: course::regenerate(all envs, advance = true) (a new track for every env each
///   call) of the `track` preset, for every E of --envs and every N of --samples;
/// - `step`: course::step (progress of one agent per env), preset `track` (N = 256), for every E
///   of --step-envs; before each timed step an untimed kernel moves every agent a little along
///   its track with a small lateral swing, so that the projection does its usual local search;
/// - `step_with_boxes`: the same step with one box per env bound (a 0.4 x 0.2 m footprint): the
///   progress step, then the exact box contacts (collision.hpp) of every env;
/// - `step_after_reset`: the same, but the untimed kernel also resets every env's progress
///   (course_ref::reset_progress), as a regeneration does: each projection is the O(N) search
///   (no last position), the cost of the first step after every env was regenerated;
/// - `copy`: the copy-bandwidth floor measured in the same run: cudaMemcpyAsync device to device
///   of a --copy-mib buffer, and a copy kernel (one 16-byte load and store per thread), in GB/s
///   counting the bytes read plus the bytes written;
/// - `long`: presets::long_track (2048 samples, the grid-scope stage dense_repulsive) for E = 64
///   and 1024: regenerating every env with the grid stage and without it (max_windows = 0);
/// - `sdf`: the SDF collision backend (sdf.hpp) for every E of --step-envs and R of
///   --sdf-resolutions: `sdf_bake` (every env), `sdf_bake_masked` (one env in 16, as after a
///   masked regeneration; us_per_baked_env counts only those) and `sdf_query` (collide_box of one
///   box per env); the whole-batch bake only for E <= --bake-max-envs, and no row of a field over
///   --max-field-gib (default 16: E = 1M at R = 64 takes 16.02 GiB);
/// - `gate_frames`: gate-frame collision (gate_collision.hpp) through the batch query
///   collide_gate_frames, for every E of --step-envs, on gate courses (presets::gate_course): one
///   sphere (0.15 m) per env beside its next gate's left post, every output written;
///   `gate_frames` tests the next and previous gates (gate_scope::adjacent), `gate_frames_all`
///   every gate of the env (gate_scope::all, 6-12 gates).
/// - `heightfield`: the heightfield (heightfield.hpp) of elevated tracks
///   (presets::elevated_drone_track) for every E of --step-envs and R of
///   --heightfield-resolutions: `heightfield_bake` (every env), `heightfield_bake_masked` (one env
///   in 16; us_per_baked_env counts only those) and `heightfield_sample` (sample_heights of 16
///   points per env over its grid, one thread each).
/// - `utilities`: the per-step utilities through the batch queries (queries.hpp) on the `track`
///   preset, for every E of --step-envs, agents moved before each call as in the step rows:
///   `localize` (warm, window W = projection_window), `utilities` (localize + track_ahead with
///   K = 10 points 1 m apart + progress_delta: localizer, observations and rewards, three
///   launches; compared with `step` by scripts/perf-report) and `collide_boxes` (the exact box
///   contacts alone, one 0.4 x 0.2 m box per env, bench_util.hpp's car_boxes).
///
/// Method: CUDA events around each call on a dedicated non-blocking stream, --warmup untimed
/// calls, then the median, p10, p90 (linear interpolation between ranks), minimum and maximum of
/// --repeats (>= 20) timed calls. --row-cap-s S lowers a row's repeats (never below 20) so that
/// warm-up plus repeats take about S seconds at the warm-up's pace; each row records its count.
/// Prints markdown tables and, with --json PATH, every row as the suite's JSON ("peer":
/// "track_gen"; scripts/perf-report reads it). The FP32 peak and the memory bandwidth implied
/// by the device's clocks are recorded too (device_info), for reference.

#include <track_gen/track_gen.hpp>

#include "bench_util.hpp"

#include <Random123/philox.h>
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace tg = track_gen;
using track_gen_bench::device_buffer;
using track_gen_bench::json;
using track_gen_bench::number;
using track_gen_bench::summarise;
using track_gen_bench::summary;

/// Moves agent e to arc length (u_e * L + repeat * advance) on its track, offset sideways by
/// half the half-width times sin(0.7 * repeat + e): on the track, a little further each repeat.
__global__ void place_agents(const tg::course_ref view, float3* positions, int repeat, float advance) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= view.num_envs()) return;
  const tg::track_ref tr = view.track(e);
  // A fixed random start per env: Random123 Philox-4x32-10 keyed by a constant.
  r123::Philox4x32 gen;
  const r123::Philox4x32::ctr_type ctr = {{static_cast<std::uint32_t>(e), 0u, 0u, 0u}};
  const r123::Philox4x32::key_type key = {{0x62656e63u, 0x68u}};
  const float u = static_cast<float>(gen(ctr, key)[0] >> 8) * (1.0f / 16777216.0f);
  const float length = tr.length();
  float s = std::fmod(u * length + static_cast<float>(repeat) * advance, length);
  const int n = tr.num_samples();
  const float x = s / tr.sample_spacing();
  int k = static_cast<int>(x);
  k = k >= n ? n - 1 : k;
  const int k1 = k + 1 == n ? 0 : k + 1;
  const float f = x - static_cast<float>(k);
  const float3 a = tr.position(k), b = tr.position(k1);
  const float3 na = tr.normal(k);
  const float lateral = 0.5f * tr.half_width(k) * std::sin(0.7f * static_cast<float>(repeat) + static_cast<float>(e));
  positions[e] = make_float3(a.x + (b.x - a.x) * f + na.x * lateral, a.y + (b.y - a.y) * f + na.y * lateral,
                             a.z + (b.z - a.z) * f);
}

/// dst[i] = src[i] for i < n: the "simple read + write" copy of the bandwidth floor.
__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

/// One box per env at its track's first sample, for the sdf_query rows (sdf.hpp).
__global__ void sdf_boxes_kernel(const tg::course_ref view, tg::box* boxes) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= view.num_envs()) return;
  const tg::track_ref t = view.track(e);
  const float3 tangent = t.tangent(0);
  // The yaw of the tangent as a quaternion about +z: (0, 0, sin(yaw / 2), cos(yaw / 2)) is
  // proportional to (0, 0, ty, 1 + tx) for a unit horizontal tangent; facing -x, (0, 0, 1, 0).
  const float norm = sqrtf(tangent.y * tangent.y + (1.0f + tangent.x) * (1.0f + tangent.x));
  const float4 q = norm > 1e-3f ? float4{0.0f, 0.0f, tangent.y / norm, (1.0f + tangent.x) / norm} : float4{0.0f, 0.0f, 1.0f, 0.0f};
  boxes[e] = tg::box{t.position(0), q, float2{1.0f, 0.5f}};
}

/// Thread e: the field's contact of box e, its flags and clearance written out.
__global__ void sdf_query_kernel(const tg::sdf_ref field, const tg::box* boxes, std::uint32_t* flags, float* clearance) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= field.num_envs()) return;
  const tg::box_contact c = field.collide_box(e, boxes[e]);
  flags[e] = c.flags;
  clearance[e] = c.clearance;
}

/// Thread e: env e's drone 0.1 m inside the opening beside its next gate's left post, at the
/// gate's centre height (the sphere of the gate_frames rows overlaps the post).
__global__ void gate_frame_drones_kernel(const tg::course_ref view, float3* centres) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= view.num_envs()) return;
  const tg::gate g = view.gate(e, view.progress_data().next_gate[e]);
  const tg::gate_axes_t a = tg::gate_axes(g.normal);
  const float side = g.half_width - 0.1f;
  centres[e] = float3{g.centre.x + a.left.x * side, g.centre.y + a.left.y * side, g.centre.z + a.left.z * side};
}

/// Bytes that one env's step must read and write on the usual path (the agent is still on the
/// segment of its last projection, no gate or lap event), each byte counted once
/// (course_ref::step and track_ref::project):
///   read : position 12 | progress: flags 4, hint 4, last position 12, next gate 4, lap progress 4
///          | the held next gate: index 4, centre 12, normal 12 | track: length 4, gate count 4
///          | the local search: segments hint - 1, hint, hint + 1 (the downhill walk stops at
///          once), i.e. 4 samples of 12, which are also the neighbours that the two frames around
///          the nearest point are computed from | half-widths of the segment's 2 samples, 2 x 8
///          (the gate's half-width is read only when its plane is crossed)
///   write: lap progress 4, lateral 4, hint 4, last position 12, flags 4, the gate events
///          checkpoint_passed 4, wrong_checkpoint 4 (next gate, gates passed and the held gate
///          change only when a gate is passed; the wrong-checkpoint scan tests no gate on this
///          path: none lies within a segment of the agent)
/// = 140 + 36 = 176 bytes; each segment the agent moved since its last step adds one sample (12).
/// The track's status word, the gates' arrays and the lap count are not needed on this path.
std::size_t step_bytes_per_env() {
  const std::size_t per_env_arrays = 12 + 28 + 28 + 8 + 36;  // coalesced [E] arrays: position, progress, held gate, header, writes
  const std::size_t gathered = 4 * 12 + 2 * 8;
  return per_env_arrays + gathered;
}

/// The number of gathered runs of contiguous bytes in step_bytes_per_env: the search samples and
/// the half-width pair.
constexpr std::size_t step_gathered_runs = 2;

/// The same traffic in whole 32-byte DRAM sectors, an estimate: the [E] arrays are read and
/// written coalesced (their bytes as they are), while each gathered run of b contiguous bytes
/// starts at a 4-byte-aligned offset uniform within a sector and so touches (b + 28) / 32
/// sectors on average: 28 bytes more per run. No reuse between steps is assumed (at E = 1M the
/// tracks take about 12 GB, far beyond the 50 MB L2).
std::size_t step_sector_bytes_per_env() { return step_bytes_per_env() + step_gathered_runs * 28; }

/// Bytes one regenerated track writes: samples (position, tangent, normal 12 each, half-width
/// and curvature 4 each) 44 N, gates (centre, normal 12 each, half-width, arc length 4 each)
/// 32 G, length, gate count, status, episode 16, the progress reset 40 (and 4 read: the episode).
double generate_bytes_per_track(int n, double gates) { return 44.0 * n + 32.0 * gates + 16 + 40 + 4; }

struct options : track_gen_bench::common_options {
  std::vector<long> envs = {4096L, 65536L, 1048576L};
  std::vector<int> samples = {256};
  std::vector<long> step_envs;  // empty: the same as envs
  long max_envs = LONG_MAX;
  int repeats = 30;
  int warmup = 3;
  double row_cap_s = 0;  // 0: no cap
  long copy_mib = 2048;
  bool generate = true, step = true, long_rows = true, copy = true, sdf = true, gate_frames = true, heightfield = true,
       utilities = true;
  std::vector<int> sdf_resolutions = {32, 64, 128};  // sdf rows: texels per side R
  std::vector<int> heightfield_resolutions = {32, 64, 128};  // heightfield rows: texels per side R
  long bake_max_envs = LONG_MAX;  // whole-batch bake rows (sdf_bake, heightfield_bake) only up to this E
  double max_field_gib = 16;      // sdf / heightfield rows of a field larger than this are skipped
  std::vector<int> block_threads;  // extra generate_block rows: the fused kernel at other block sizes
  std::vector<std::string> generators;  // extra generate_family rows: these families ("mix": equal weights)
};

/// Repeats of a row whose calls take about `call_ms`: --repeats, lowered by --row-cap-s (never below 20).
int row_repeats(double call_ms, const options& o) {
  if (o.row_cap_s <= 0 || call_ms <= 0) return o.repeats;
  const double fit = o.row_cap_s * 1e3 / call_ms - o.warmup;
  return std::max(20, std::min(o.repeats, static_cast<int>(fit)));
}

/// Times `repeats` calls of call(r), each between its own pair of events on `stream`, with
/// pre(r) (untimed) before each; returns the times [ms].
std::vector<float> time_calls(int repeats, cudaStream_t stream, const std::function<void(int)>& pre,
                              const std::function<void(int)>& call) {
  std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(repeats), nullptr);
  std::vector<float> ms(static_cast<std::size_t>(repeats));
  try {
    for (cudaEvent_t& e : ev) BENCH_CUDA(cudaEventCreate(&e));
    for (int r = 0; r < repeats; ++r) {
      if (pre) pre(r);
      BENCH_CUDA(cudaEventRecord(ev[2 * r], stream));
      call(r);
      BENCH_CUDA(cudaEventRecord(ev[2 * r + 1], stream));
    }
    BENCH_CUDA(cudaStreamSynchronize(stream));
    for (int r = 0; r < repeats; ++r) BENCH_CUDA(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
  } catch (...) {
    for (cudaEvent_t e : ev)
      if (e != nullptr) (void)cudaEventDestroy(e);
    throw;
  }
  for (cudaEvent_t e : ev) (void)cudaEventDestroy(e);
  return ms;
}

/// Wall time [ms] of `warmup` calls of call(w) (at least one), synchronised: the pace for row_repeats.
double warm_up(int warmup, cudaStream_t stream, const std::function<void(int)>& call) {
  double last = 0;
  for (int w = 0; w < std::max(1, warmup); ++w) {
    const auto t0 = std::chrono::steady_clock::now();
    call(w);
    BENCH_CUDA(cudaStreamSynchronize(stream));
    last = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return last;
}

/// What the suite's JSON and tables need of one measured row.
struct row {
  std::string scenario;  // generate, step, copy_memcpy, copy_kernel, long_track
  long envs = 0;
  int samples = 0;
  int repeats = 0;
  summary ms{};
  double rate = 0;  // tracks/s, env-steps/s or GB/s (read + write)
  json extra = json::object();  // the row's further JSON members
  int block_threads = 0;  // generate_block rows: threads per block of the fused kernel
};

/// Statistics of the tracks of a course: copies the [E] length, gate count and status arrays.
track_gen_bench::track_stats track_stats_of(const tg::course_ref& view, long envs) {
  const std::size_t n = static_cast<std::size_t>(envs);
  std::vector<float> length(n);
  std::vector<int> gates(n);
  std::vector<std::uint32_t> status(n);
  BENCH_CUDA(cudaMemcpy(length.data(), view.tracks().length, n * sizeof(float), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(gates.data(), view.tracks().num_gates, n * sizeof(int), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(status.data(), view.tracks().status, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  return track_gen_bench::stats_of(n, length.data(), gates.data(), status.data());
}

/// The default tuning with another block size of the fused generation kernel.
template <int Threads>
struct block_tuning : tg::default_tuning {
  static constexpr int generate_block_threads = Threads;
};

/// Sets `p`'s generator family to `name` (tg::generator_family_names), or equal weights on every
/// family but repulsive for "mix" (presets::family_pipeline's families), on all six for "mix_all".
void set_generator(tg::track_params& p, const std::string& name) {
  for (int f = 0; f < tg::num_generator_families; ++f) {
    if (name == "mix_all" || (name == "mix" && f != static_cast<int>(tg::generator_family::repulsive)))
      p.generator.weights[f] = 1.0f;
    if (name == tg::generator_family_names[f]) p.generator.family = static_cast<tg::generator_family>(f);
  }
}

/// A generate row (`family` empty: the `track` preset's pipeline; else a generate_<family> row,
/// through presets::family_pipeline; "gate_course": the gate_course preset through
/// presets::gate_course_pipeline, its gate storage sized by gate_course_spacing;
/// "gate_course_own": the same through presets::polar_gate_course_pipeline).
template <int Threads = tg::default_tuning::generate_block_threads, class Pipeline = tg::presets::track_pipeline>
row run_generate(long envs, int n, const options& o, cudaStream_t stream, const std::string& family = {}) {
  const bool gates = family == "gate_course" || family == "gate_course_own";
  tg::track_params params = gates ? tg::presets::gate_course(static_cast<int>(envs)) : tg::presets::track(static_cast<int>(envs));
  params.num_samples = n;
  params.seed = o.seed;
  // "<family>_own": that family through presets::one_family_pipeline (the generator selects it too).
  // "<family>_relaxed": that family through presets::relaxed_family_pipeline with the centreline
  // relaxation on (50 sweeps, the seed system's relax_iters).
  auto ends_with = [&family](const std::string& tail) {
    return family.size() > tail.size() && family.compare(family.size() - tail.size(), tail.size(), tail) == 0;
  };
  const std::string own = "_own", relaxed = "_relaxed";
  const bool own_pipeline = ends_with(own), relaxing = ends_with(relaxed);
  if (relaxing) params.relaxation.max_iterations = 50;
  if (!family.empty() && !gates)
    set_generator(params, own_pipeline ? family.substr(0, family.size() - own.size())
                          : relaxing   ? family.substr(0, family.size() - relaxed.size())
                                       : family);
  const float spacing = gates ? tg::presets::gate_course_spacing(params) : o.spacing;
  const ::cuda::stream_ref sref(stream);
  using policy = tg::policy<tg::capture::global, tg::skip::conditional, tg::ownership::anchored,
                            tg::backend::default_backend, block_tuning<Threads>>;
  tg::course<Pipeline, policy> course(params, spacing, sref);
  const auto call = [&](int) { course.regenerate(nullptr, true, sref); };
  row r;
  r.scenario = "generate";
  r.envs = envs;
  r.samples = n;
  r.repeats = row_repeats(warm_up(o.warmup, stream, call), o);
  r.ms = summarise(time_calls(r.repeats, stream, nullptr, call));
  r.rate = static_cast<double>(envs) / (r.ms.median * 1e-3);
  const track_gen_bench::track_stats stats = track_stats_of(course.view(), envs);
  r.extra["tracks_per_s"] = number(r.rate, "%.6e");
  r.extra["bytes_written_per_track"] = number(generate_bytes_per_track(n, stats.mean_gates), "%.1f");
  r.extra["stats"] = track_gen_bench::stats_json(stats);
  if (!family.empty()) {
    r.scenario = "generate_" + family;
    r.extra["generator"] = family;
  }
  return r;
}

/// A generate_gate_sequence row: the gate_course preset's gates alone (gate_sequence.hpp: one
/// thread per env, no course line), a new episode for every env at each call, as the seed
/// library's GateGenerator.generate() draws new sequences. `bezier`: the generate_gate_sequence_bezier
/// row, bezier corners (6-12 in a 50 m square) as the seed library's gate config in
/// bench/peers/trackgen_peer.py (GATE_CONFIG: bezier, 6-12 points, scale 25).
row run_gate_sequence(long envs, const options& o, cudaStream_t stream, bool bezier) {
  tg::track_params params = tg::presets::gate_course(static_cast<int>(envs));
  params.seed = o.seed;
  if (bezier) {
    params.generator.family = tg::generator_family::bezier;
    params.bezier.corners_min = 6;
    params.bezier.corners_max = 12;
    params.bezier.extent = 25.0f;
  }
  const ::cuda::stream_ref sref(stream);
  tg::gate_sequences<tg::cuda_policy> seq(params, sref);
  const auto call = [&](int) { seq.generate(nullptr, true, sref); };
  row r;
  r.scenario = bezier ? "generate_gate_sequence_bezier" : "generate_gate_sequence";
  r.envs = envs;
  r.samples = 0;
  r.repeats = row_repeats(warm_up(o.warmup, stream, call), o);
  r.ms = summarise(time_calls(r.repeats, stream, nullptr, call));
  r.rate = static_cast<double>(envs) / (r.ms.median * 1e-3);
  const tg::detail::gate_sequence_out arrays = seq.view().arrays();
  std::vector<int> count(static_cast<std::size_t>(envs));
  std::vector<std::uint32_t> status(static_cast<std::size_t>(envs));
  BENCH_CUDA(cudaStreamSynchronize(stream));
  BENCH_CUDA(cudaMemcpy(count.data(), arrays.count, count.size() * sizeof(int), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(status.data(), arrays.status, status.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  double valid = 0, gates = 0, attempts = 0;
  for (long e = 0; e < envs; ++e) {
    valid += (status[static_cast<std::size_t>(e)] & tg::status::valid) != 0u ? 1 : 0;
    gates += count[static_cast<std::size_t>(e)];
    attempts += tg::status::attempts(status[static_cast<std::size_t>(e)]);
  }
  r.extra["generator"] = bezier ? "gate_sequence_bezier" : "gate_sequence";
  r.extra["tracks_per_s"] = number(r.rate, "%.6e");
  r.extra["bytes_written_per_track"] = number(24.0 * params.gates.max_gates + 8.0, "%.1f");
  const double n_envs = static_cast<double>(envs);
  r.extra["stats"] = track_gen_bench::json{{"mean_gates", number(gates / n_envs, "%.4f")},
                                           {"valid_fraction", number(valid / n_envs, "%.6f")},
                                           {"mean_attempts", number(attempts / n_envs, "%.4f")}};
  return r;
}

/// A generate_block row: run_generate with `threads` threads per block (64, 128, 256 or 512).
row run_generate_block(int threads, long envs, int n, const options& o, cudaStream_t stream) {
  row r;
  switch (threads) {
    case 64: r = run_generate<64>(envs, n, o, stream); break;
    case 128: r = run_generate<128>(envs, n, o, stream); break;
    case 256: r = run_generate<256>(envs, n, o, stream); break;
    case 512: r = run_generate<512>(envs, n, o, stream); break;
    default: throw std::invalid_argument("--block-threads: each value must be 64, 128, 256 or 512");
  }
  r.scenario = "generate_block";
  r.block_threads = threads;
  r.extra["block_threads"] = threads;
  return r;
}

/// Resets every env's progress to the start line (no last position): the next step's projection
/// is the O(N) search.
__global__ void reset_progress_kernel(const tg::course_ref view) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e < view.num_envs()) view.reset_progress(e);
}

/// What a step row times: the usual step, the step after every env's reset, or the step with one
/// box per env bound (course::bind with orientations and half extents: the progress step, then
/// the exact box contacts, collision.hpp).
enum class step_kind { usual, after_reset, with_boxes };

/// Times course.step after moving the agents (run_step's rows).
row time_step(tg::course<>& course, device_buffer<float3>& positions, long envs, const options& o, cudaStream_t stream,
              step_kind kind, int num_samples) {
  const bool after_reset = kind == step_kind::after_reset;
  const ::cuda::stream_ref sref(stream);
  const unsigned threads = 256, blocks = static_cast<unsigned>((envs + 255) / 256);
  const tg::course_ref view = course.view();
  // Agents 0.15 m further along their tracks each call (about one sample spacing).
  int moves = 0;
  const auto move = [&](int) {
    place_agents<<<blocks, threads, 0, stream>>>(view, positions.get(), moves++, 0.15f);
    if (after_reset) reset_progress_kernel<<<blocks, threads, 0, stream>>>(view);
    BENCH_CUDA(cudaGetLastError());
  };
  const auto call = [&](int) { course.step(sref); };
  const double pace = warm_up(o.warmup, stream, [&](int w) {
    move(w);
    call(w);
  });
  row r;
  r.scenario = after_reset ? "step_after_reset" : kind == step_kind::with_boxes ? "step_with_boxes" : "step";
  r.envs = envs;
  r.samples = num_samples;
  r.repeats = row_repeats(pace, o);
  r.ms = summarise(time_calls(r.repeats, stream, move, call));
  r.rate = static_cast<double>(envs) / (r.ms.median * 1e-3);

  // The agents should stay on their tracks, and the local search should do: count the flags.
  std::vector<std::uint32_t> flags(static_cast<std::size_t>(envs));
  BENCH_CUDA(cudaMemcpy(flags.data(), view.progress_data().flags, flags.size() * sizeof(std::uint32_t),
                        cudaMemcpyDeviceToHost));
  double off = 0, full = 0;
  for (std::uint32_t f : flags) {
    off += (f & tg::progress_flags::off_track) != 0u;
    full += (f & tg::progress_flags::full_search) != 0u;
  }
  if (off != 0) std::fprintf(stderr, "warning: %.0f of %ld agents off track in the step benchmark\n", off, envs);
  r.extra["env_steps_per_s"] = number(r.rate, "%.6e");
  r.extra["window"] = tg::default_tuning::projection_window;
  if (kind == step_kind::with_boxes) {
    // The byte model is the progress step's alone; count the boxes off the road instead.
    std::vector<std::uint32_t> contact(static_cast<std::size_t>(envs));
    BENCH_CUDA(cudaMemcpy(contact.data(), view.contacts().contact_flags, contact.size() * sizeof(std::uint32_t),
                          cudaMemcpyDeviceToHost));
    double out = 0;
    for (std::uint32_t f : contact) out += (f & tg::contact_flags::out_of_bounds) != 0u;
    r.extra["boxes_out_of_bounds_fraction"] = number(out / static_cast<double>(envs), "%.6f");
    r.extra["off_track_fraction"] = number(off / static_cast<double>(envs), "%.6f");
  } else if (after_reset) {
    // The byte model and the full_search flag are those of the usual step: a step after a reset
    // reads every sample of the track and sets no flag (no last position), so neither is reported.
    r.extra["off_track_fraction"] = number(off / static_cast<double>(envs), "%.6f");
  } else {
    const std::size_t bytes = step_bytes_per_env();
    r.extra["bytes_per_env"] = bytes;
    r.extra["sector_bytes_per_env"] = step_sector_bytes_per_env();
    r.extra["gb_per_s"] = number(r.rate * static_cast<double>(bytes) * 1e-9, "%.3f");
    r.extra["off_track_fraction"] = number(off / static_cast<double>(envs), "%.6f");
    r.extra["full_search_fraction"] = number(full / static_cast<double>(envs), "%.6f");
  }
  return r;
}

/// A `step`, `step_after_reset` or `step_with_boxes` row.
row run_step(long envs, const options& o, cudaStream_t stream, step_kind kind) {
  tg::track_params params = tg::presets::track(static_cast<int>(envs));
  params.seed = o.seed;
  const ::cuda::stream_ref sref(stream);
  tg::course<> course(params, o.spacing, sref);
  device_buffer<float3> positions(static_cast<std::size_t>(envs));
  if (kind == step_kind::with_boxes) {
    const track_gen_bench::car_boxes boxes(static_cast<std::size_t>(envs));  // a car's 0.4 x 0.2 m footprint
    course.bind(positions.get(), boxes.orientations.get(), boxes.half_extents.get(), sref);
    row r = time_step(course, positions, envs, o, stream, kind, params.num_samples);
    r.extra.update(track_gen_bench::car_boxes::describe());
    return r;
  }
  course.bind(positions.get());
  return time_step(course, positions, envs, o, stream, kind, params.num_samples);
}

/// The copy floor: cudaMemcpyAsync device to device, then the copy kernel, of `bytes` bytes.
std::vector<row> run_copy(const options& o, cudaStream_t stream) {
  const std::size_t bytes = static_cast<std::size_t>(o.copy_mib) << 20;
  const std::size_t n4 = bytes / sizeof(float4);
  device_buffer<float4> src(n4), dst(n4);
  BENCH_CUDA(cudaMemsetAsync(src.get(), 1, bytes, stream));
  std::vector<row> rows;
  for (const bool kernel : {false, true}) {
    const auto call = [&](int) {
      if (kernel) {
        copy_kernel<<<static_cast<unsigned>((n4 + 255) / 256), 256, 0, stream>>>(src.get(), dst.get(), n4);
        BENCH_CUDA(cudaGetLastError());
      } else {
        BENCH_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
      }
    };
    row r;
    r.scenario = kernel ? "copy_kernel" : "copy_memcpy";
    r.repeats = row_repeats(warm_up(o.warmup, stream, call), o);
    r.ms = summarise(time_calls(r.repeats, stream, nullptr, call));
    r.rate = 2.0 * static_cast<double>(bytes) / (r.ms.median * 1e-3) * 1e-9;  // read + write
    r.extra = {{"bytes", bytes}, {"gb_per_s", number(r.rate, "%.3f")}, {"counted", "read + write"}};
    rows.push_back(r);
  }
  return rows;
}

/// presets::long_track (2048 samples, stages::dense_repulsive at grid scope): regenerate every
/// env, with the grid stage and with it switched off (max_windows = 0), and how many tracks the
/// stage relaxed in the last timed batch.
std::vector<row> run_long(int envs, const options& o, cudaStream_t stream) {
  using course_type = tg::course<tg::presets::long_track_pipeline>;  // grid_pipeline_block_threads (256)
  const ::cuda::stream_ref sref(stream);
  std::vector<row> rows;
  for (const bool stage : {true, false}) {
    tg::track_params params = tg::presets::long_track(envs);
    params.seed = o.seed;
    if (!stage) params.dense_repulsive.max_windows = 0;
    course_type course(params, 50.0f, sref);
    const auto call = [&](int) { course.regenerate(nullptr, true, sref); };
    row r;
    r.scenario = "long_track";
    r.envs = envs;
    r.samples = params.num_samples;
    r.repeats = row_repeats(warm_up(o.warmup, stream, call), o);
    r.ms = summarise(time_calls(r.repeats, stream, nullptr, call));
    r.rate = envs / (r.ms.median * 1e-3);
    int relaxed = 0;
    if (stage) {
      const tg::track_snapshot t = course.copy_tracks(sref);
      for (const std::uint32_t st : t.status) relaxed += (st & tg::status::relaxed) != 0u;
    }
    r.extra = {{"tracks_per_s", number(r.rate, "%.6e")}, {"grid_stage", stage}, {"relaxed", relaxed}};
    rows.push_back(r);
  }
  return rows;
}

/// A row `scenario` of `call` timed as every row is (--warmup calls, then row_repeats calls), for
/// E = envs and N = samples; the caller sets its rate and extra fields.
row timed_row(const std::string& scenario, long envs, int samples, const std::function<void(int)>& call, const options& o,
              cudaStream_t stream) {
  row r;
  r.scenario = scenario;
  r.envs = envs;
  r.samples = samples;
  r.repeats = row_repeats(warm_up(o.warmup, stream, call), o);
  r.ms = summarise(time_calls(r.repeats, stream, nullptr, call));
  return r;
}

/// The two bake rows of a per-env grid (sdf.hpp, heightfield.hpp) at resolution R, named
/// `<prefix>_bake` (every env, one launch) and `<prefix>_bake_masked` (the envs of a mask with one
/// env in 16 set, as after a masked regeneration: the rate counts only those). `bake(mask)`
/// bakes the masked envs (null: every env). Above --bake-max-envs only the masked row is timed.
template <class Bake>
std::vector<row> run_bake_rows(const std::string& prefix, long envs, int samples, int resolution, std::size_t field_bytes,
                               const Bake& bake, const options& o, cudaStream_t stream) {
  std::vector<row> rows;
  std::vector<std::int32_t> mask_host(static_cast<std::size_t>(envs), 0);
  for (std::size_t i = 0; i < mask_host.size(); i += 16) mask_host[i] = 1;
  const long masked = static_cast<long>((mask_host.size() + 15) / 16);
  device_buffer<std::int32_t> mask(static_cast<std::size_t>(envs));
  BENCH_CUDA(cudaMemcpy(mask.get(), mask_host.data(), mask_host.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaDeviceSynchronize());  // the pageable copy's DMA lands before `stream` reads the mask
  for (const bool subset : {false, true}) {
    if (!subset && envs > o.bake_max_envs) continue;
    row r = timed_row(prefix + (subset ? "_bake_masked" : "_bake"), envs, samples,
                      [&](int) { bake(subset ? mask.get() : nullptr); }, o, stream);
    const long baked = subset ? masked : envs;
    r.rate = baked / (r.ms.median * 1e-3);
    r.extra = {{"resolution", resolution},
               {"baked_envs", baked},
               {"us_per_baked_env", number(r.ms.median * 1e3 / static_cast<double>(baked), "%.4f")},
               {"field_bytes", field_bytes}};
    rows.push_back(r);
  }
  return rows;
}

/// sdf.hpp at resolution R: sdf_bake and sdf_bake_masked (run_bake_rows), and sdf_query
/// (collide_box of one box per env, one thread each). Skipped where the field would exceed
/// --max-field-gib.
std::vector<row> run_sdf(long envs, int resolution, const options& o, cudaStream_t stream) {
  std::vector<row> rows;
  const int e = static_cast<int>(envs);
  if (static_cast<double>(tg::sdf_field<>::required_bytes(e, resolution)) > o.max_field_gib * 1073741824.0) return rows;
  const ::cuda::stream_ref sref(stream);
  tg::track_params params = tg::presets::track(e);
  params.seed = o.seed;
  tg::course<tg::presets::track_pipeline> course(params, o.spacing, sref);
  tg::sdf_field<> field(e, resolution, sref);
  const tg::track_batch_ref batch = course.view().batch();
  rows = run_bake_rows(
      "sdf", envs, params.num_samples, resolution, tg::sdf_field<>::required_bytes(e, resolution),
      [&](const std::int32_t* mask) { field.bake(batch, tg::env_mask(mask), sref); },
      o, stream);
  device_buffer<tg::box> boxes(static_cast<std::size_t>(envs));
  device_buffer<std::uint32_t> flags(static_cast<std::size_t>(envs));
  device_buffer<float> clearance(static_cast<std::size_t>(envs));
  const unsigned blocks = static_cast<unsigned>((envs + 127) / 128);
  sdf_boxes_kernel<<<blocks, 128, 0, stream>>>(course.view(), boxes.get());
  BENCH_CUDA(cudaGetLastError());
  const auto query = [&](int) {
    sdf_query_kernel<<<blocks, 128, 0, stream>>>(field.view(), boxes.get(), flags.get(), clearance.get());
    BENCH_CUDA(cudaGetLastError());
  };
  row q = timed_row("sdf_query", envs, params.num_samples, query, o, stream);
  q.rate = envs / (q.ms.median * 1e-3);
  q.extra = {{"resolution", resolution}, {"boxes_per_env", 1}};
  rows.push_back(q);
  return rows;
}

/// gate_collision.hpp's batch query on gate courses of `envs` envs: gate_frames (the next and
/// previous gates) and gate_frames_all (every gate), one sphere per env, every output written.
std::vector<row> run_gate_frames(long envs, const options& o, cudaStream_t stream) {
  std::vector<row> rows;
  const ::cuda::stream_ref sref(stream);
  tg::track_params params = tg::presets::gate_course(static_cast<int>(envs));
  params.seed = o.seed;
  tg::course<tg::presets::gate_course_pipeline> course(params, tg::presets::gate_course_spacing(params), sref);
  const std::size_t n = static_cast<std::size_t>(envs);
  device_buffer<float3> centres(n), point(n), normal(n);
  device_buffer<std::uint32_t> flags(n);
  device_buffer<float> depth(n), distance(n);
  device_buffer<int> member(n), gate(n);
  gate_frame_drones_kernel<<<static_cast<unsigned>((envs + 127) / 128), 128, 0, stream>>>(course.view(), centres.get());
  BENCH_CUDA(cudaGetLastError());
  const tg::gate_frame_outputs out{flags.get(), depth.get(), distance.get(), point.get(), normal.get(), member.get(),
                                   gate.get()};
  for (const tg::gate_scope scope : {tg::gate_scope::adjacent, tg::gate_scope::all}) {
    const auto call = [&](int) {
      tg::collide_gate_frames<tg::backend::cuda>(course.view(), centres.get(), 0.15f, tg::gate_frame{0.05f, 0.05f},
                                                 scope, out, sref);
    };
    row r;
    r.scenario = scope == tg::gate_scope::adjacent ? "gate_frames" : "gate_frames_all";
    r.envs = envs;
    r.samples = params.num_samples;
    r.repeats = row_repeats(warm_up(o.warmup, stream, call), o);
    r.ms = summarise(time_calls(r.repeats, stream, nullptr, call));
    r.rate = envs / (r.ms.median * 1e-3);
    std::vector<std::uint32_t> host_flags(n);
    BENCH_CUDA(cudaStreamSynchronize(stream));
    BENCH_CUDA(cudaMemcpy(host_flags.data(), flags.get(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    long hits = 0;
    for (const std::uint32_t f : host_flags) hits += (f & tg::contact_flags::hit) != 0u ? 1 : 0;
    r.extra = {{"radius_m", 0.15}, {"frame_half_thickness_m", 0.05}, {"frame_half_depth_m", 0.05}, {"hits", hits}};
    rows.push_back(r);
  }
  return rows;
}

/// Points per env of the heightfield_sample rows.
constexpr int heightfield_points_per_env = 16;

/// Thread i: point i of env i / K, spread over its grid's square (a fixed pattern, 16 per env).
__global__ void heightfield_points_kernel(const tg::heightfield_ref field, float* x, float* y) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long>(field.num_envs()) * heightfield_points_per_env) return;
  const int e = static_cast<int>(i / heightfield_points_per_env), k = static_cast<int>(i % heightfield_points_per_env);
  const tg::heightfield_header h = field.header(e);
  const float span = h.cell * static_cast<float>(field.resolution());
  x[i] = h.x0 + span * (0.1f + 0.8f * static_cast<float>(k % 4) / 3.0f);
  y[i] = h.y0 + span * (0.1f + 0.8f * static_cast<float>(k / 4) / 3.0f);
}

/// heightfield.hpp at resolution R, on elevated tracks (elevated_drone_track): heightfield_bake
/// and heightfield_bake_masked (run_bake_rows), and heightfield_sample (sample_heights of 16
/// points per env, one thread each; the rate counts points). Skipped where the field would
/// exceed --max-field-gib.
std::vector<row> run_heightfield(long envs, int resolution, const options& o, cudaStream_t stream) {
  std::vector<row> rows;
  const int e = static_cast<int>(envs);
  if (static_cast<double>(tg::heightfield<>::required_bytes(e, resolution)) > o.max_field_gib * 1073741824.0)
    return rows;
  const ::cuda::stream_ref sref(stream);
  tg::track_params params = tg::presets::elevated_drone_track(e);
  params.seed = o.seed;
  tg::course<tg::presets::elevated_track_pipeline> course(params, o.spacing, sref);
  tg::heightfield<> field(e, resolution, 1.0f, sref);
  const tg::track_batch_ref batch = course.view().batch();
  rows = run_bake_rows(
      "heightfield", envs, params.num_samples, resolution, tg::heightfield<>::required_bytes(e, resolution),
      [&](const std::int32_t* mask) { field.bake(batch, tg::env_mask(mask), sref); },
      o, stream);
  const std::size_t points = static_cast<std::size_t>(envs) * heightfield_points_per_env;
  device_buffer<float> x(points), y(points), out(points);
  field.bake(batch, sref);
  heightfield_points_kernel<<<static_cast<unsigned>((points + 127) / 128), 128, 0, stream>>>(field.view(), x.get(), y.get());
  BENCH_CUDA(cudaGetLastError());
  const auto sample = [&](int) {
    tg::sample_heights<tg::backend::cuda>(field.view(), x.get(), y.get(), heightfield_points_per_env, out.get(), nullptr, sref);
  };
  row q = timed_row("heightfield_sample", envs, params.num_samples, sample, o, stream);
  q.rate = static_cast<double>(points) / (q.ms.median * 1e-3);
  q.extra = {{"resolution", resolution}, {"points_per_env", heightfield_points_per_env}};
  rows.push_back(q);
  return rows;
}

/// Points and their arc-length spacing [m] of the track_ahead observation in the utilities rows
/// (issue 14: K = 10 centreline samples ahead of the agent).
constexpr int ahead_points = 10;
constexpr float ahead_spacing_m = 1.0f;

/// The per-step utilities of an RL step (issue 14) through the batch queries (queries.hpp), one
/// thread per env each, on the `track` preset's course; before each timed call an untimed kernel
/// moves the agents as in the step rows (place_agents, 0.15 m a call):
/// - `localize`: localize, warm (its own hints, window W = projection_window, as the step's
///   projection), writing s, n, curvature, heading and lost;
/// - `utilities`: that localize, then track_ahead (K = 10 points 1 m apart in the agent's frame,
///   its yaw taken as the centreline heading localize returned) and progress_delta (the signed
///   arc length since the previous call: the progress reward): three launches, the localizer +
///   observations + rewards that issue 14 compares with `step`;
/// - `collide_boxes`: the exact box contacts alone (collide_boxes of one car_boxes box per env at
///   the agent, warm-started from its own hints, window W; without the course step's trust
///   margin, so a corner off the road costs an O(N) search).
std::vector<row> run_utilities(long envs, const options& o, cudaStream_t stream) {
  tg::track_params params = tg::presets::track(static_cast<int>(envs));
  params.seed = o.seed;
  const ::cuda::stream_ref sref(stream);
  tg::course<> course(params, o.spacing, sref);
  const std::size_t n = static_cast<std::size_t>(envs);
  device_buffer<float3> positions(n), ahead(n * ahead_points);
  device_buffer<float> s_a(n), s_b(n), lateral(n), curvature(n), heading(n), delta(n), clearance(n);
  device_buffer<int> hints(n), box_hints(n);
  device_buffer<std::uint8_t> lost(n);
  device_buffer<std::uint32_t> flags(n);
  for (void* p : {static_cast<void*>(hints.get()), static_cast<void*>(box_hints.get()), static_cast<void*>(s_a.get()),
                  static_cast<void*>(s_b.get())})
    BENCH_CUDA(cudaMemsetAsync(p, 0, n * 4, stream));  // int and float [E]: 4 bytes each
  const track_gen_bench::car_boxes boxes(n);
  const tg::course_ref view = course.view();
  const tg::track_batch_ref batch = view.batch();
  const int window = tg::default_tuning::projection_window;
  const unsigned blocks = static_cast<unsigned>((envs + 255) / 256);
  int moves = 0;
  const auto move = [&](int) {
    place_agents<<<blocks, 256, 0, stream>>>(view, positions.get(), moves++, 0.15f);
    BENCH_CUDA(cudaGetLastError());
  };
  // Call c localizes into s_now = (c even ? s_a : s_b); progress_delta reads the other (the last call's).
  int calls = 0;
  const auto localize = [&](float* s_now) {
    tg::localize_outputs out;
    out.s = s_now;
    out.n = lateral.get();
    out.curvature = curvature.get();
    out.heading = heading.get();
    out.lost = lost.get();
    tg::localize<tg::backend::cuda>(batch, positions.get(), hints.get(), window, out, sref);
  };
  const auto localize_only = [&](int) { localize(calls++ % 2 == 0 ? s_a.get() : s_b.get()); };
  const auto utilities = [&](int) {
    const bool even = calls++ % 2 == 0;
    float* s_now = even ? s_a.get() : s_b.get();
    const float* s_prev = even ? s_b.get() : s_a.get();
    localize(s_now);
    tg::track_ahead<tg::backend::cuda>(batch, s_now, positions.get(), heading.get(), ahead_points, ahead_spacing_m,
                                       ahead.get(), sref);
    tg::progress_delta<tg::backend::cuda>(batch, s_prev, s_now, delta.get(), sref);
  };
  const auto collide = [&](int) {
    tg::box_contact_outputs out;
    out.flags = flags.get();
    out.clearance = clearance.get();
    tg::collide_boxes<tg::backend::cuda>(batch, positions.get(), boxes.orientations.get(), boxes.half_extents.get(),
                                         box_hints.get(), window, out, sref);
  };
  // The mean over the envs of an [E] array copied to the host (after the stream's work).
  const auto host_mean = [&](const auto* device, const auto& value) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(device)>>;
    std::vector<T> h(n);
    BENCH_CUDA(cudaStreamSynchronize(stream));
    BENCH_CUDA(cudaMemcpy(h.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (const T& x : h) sum += value(x);
    return sum / static_cast<double>(n);
  };
  const auto time_row = [&](const char* scenario, const std::function<void(int)>& call) {
    row r;
    r.scenario = scenario;
    r.envs = envs;
    r.samples = params.num_samples;
    r.repeats = row_repeats(warm_up(o.warmup, stream, [&](int w) {
                              move(w);
                              call(w);
                            }),
                            o);
    r.ms = summarise(time_calls(r.repeats, stream, move, call));
    r.rate = static_cast<double>(envs) / (r.ms.median * 1e-3);
    r.extra["env_steps_per_s"] = number(r.rate, "%.6e");
    r.extra["window"] = window;
    return r;
  };
  const auto lost_fraction = [&] {
    return number(host_mean(lost.get(), [](std::uint8_t x) { return x != 0 ? 1.0 : 0.0; }), "%.6f");
  };
  std::vector<row> rows;
  row loc = time_row("localize", localize_only);
  loc.extra["lost_fraction"] = lost_fraction();
  loc.extra["launches"] = 1;
  rows.push_back(loc);
  row util = time_row("utilities", utilities);
  util.extra["lost_fraction"] = lost_fraction();
  util.extra["ahead_points"] = ahead_points;
  util.extra["ahead_spacing_m"] = number(ahead_spacing_m, "%g");
  // The agents moved 0.15 m along the track between the last two calls: the mean reward shows it.
  util.extra["mean_progress_delta_m"] = number(host_mean(delta.get(), [](float x) { return static_cast<double>(x); }), "%.5f");
  util.extra["launches"] = 3;
  rows.push_back(util);
  row box = time_row("collide_boxes", collide);
  box.extra["boxes_out_of_bounds_fraction"] = number(
      host_mean(flags.get(), [](std::uint32_t f) { return (f & tg::contact_flags::out_of_bounds) != 0u ? 1.0 : 0.0; }), "%.6f");
  box.extra["lost_fraction"] = number(
      host_mean(flags.get(), [](std::uint32_t f) { return (f & tg::contact_flags::lost) != 0u ? 1.0 : 0.0; }), "%.6f");
  box.extra["launches"] = 1;
  box.extra.update(track_gen_bench::car_boxes::describe());
  rows.push_back(box);
  return rows;
}

/// The options of the command line in `o`: -1 to go on, else the exit status.
int parse(int argc, char** argv, options& o) {
  using namespace track_gen_bench;
  CLI::App app("track_gen_bench: GPU throughput of track_gen (generate, step, step_after_reset, long_track, sdf, "
               "gate_frames, heightfield, utilities) and the copy-bandwidth floor, timed with CUDA events.");
  add_common_options(app, o);
  app.add_option("--envs", o.envs, "envs E of the generate rows")->delimiter(',')->check(in_range(1L, long{INT_MAX}));
  app.add_option("--samples", o.samples, "samples N per track of the generate rows")
      ->delimiter(',')
      ->check(in_range(8, 4096));
  app.add_option("--step-envs", o.step_envs,
                 "envs E of the step, step_after_reset, step_with_boxes, sdf, gate_frames, heightfield and utilities rows")
      ->delimiter(',')
      ->check(in_range(1L, long{INT_MAX}))
      ->default_str("as --envs");
  app.add_option("--gate-spacing", o.spacing, "checkpoint spacing of the track courses [m] (the step's gate density)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-envs", o.max_envs, "skip the generate and step rows of more envs than this")
      ->check(at_least(1L))
      ->default_str("no limit");
  app.add_option("--repeats", o.repeats, "timed calls per row")->check(at_least(20));
  app.add_option("--warmup", o.warmup, "untimed calls before them")->check(at_least(1));
  app.add_option("--row-cap-s", o.row_cap_s,
                 "seconds a row may take at the warm-up's pace: fewer repeats (never below 20); 0: no cap [s]")
      ->check(at_least(0.0));
  app.add_option("--copy-mib", o.copy_mib, "buffer of the copy rows [MiB]")->check(at_least(1L));
  app.add_option("--sdf-resolutions", o.sdf_resolutions, "texels per side R of the sdf rows (sdf.hpp)")
      ->delimiter(',')
      ->check(in_range(8, 512));
  app.add_option("--heightfield-resolutions", o.heightfield_resolutions,
                 "texels per side R of the heightfield rows (heightfield.hpp)")
      ->delimiter(',')
      ->check(in_range(2, 512));
  app.add_option("--bake-max-envs", o.bake_max_envs,
                 "whole-batch bake rows (sdf_bake, heightfield_bake) only for E up to this; the masked bake and the "
                 "query rows at every E")
      ->check(at_least(1L))
      ->default_str("no limit");
  app.add_option("--max-field-gib", o.max_field_gib,
                 "skip the sdf and heightfield rows whose field (E (R^2 4 + 16) bytes) exceeds this [GiB]")
      ->check(positive<double>());
  std::vector<std::string> only;
  app.add_option("--only", only, "only these scenarios")
      ->delimiter(',')
      ->check(CLI::IsMember({"generate", "step", "copy", "long", "sdf", "gate_frames", "heightfield", "utilities"}))
      ->default_str("all of them");
  bool no_long = false, quick = false;
  app.add_flag("--no-long", no_long, "no long_track rows");
  app.add_flag("--quick", quick,
               "smaller defaults: --envs 4096,65536 --samples 256 --repeats 20 --copy-mib 512, no long_track rows "
               "(the options given win)");
  app.add_option("--block-threads", o.block_threads,
                 "extra generate_block rows: the fused generation kernel at these threads per block")
      ->delimiter(',')
      ->check(CLI::IsMember({64, 128, 256, 512}));
  std::vector<std::string> families = {"mix", "mix_all", "gate_course", "gate_course_own", "gate_sequence",
                                       "gate_sequence_bezier"};
  for (const char* f : tg::generator_family_names) families.push_back(f);
  for (const char* f : {"bezier_own", "hull_own", "voronoi_own", "checkpoint_own", "repulsive_own", "polar_relaxed",
                        "bezier_relaxed", "hull_relaxed", "voronoi_relaxed", "checkpoint_relaxed", "mix_relaxed"})
    families.push_back(f);
  app.add_option("--generators", o.generators,
                 "extra generate rows (scenario generate_<name>) through presets::family_pipeline with these "
                 "generator families (polar: the family pipeline's cost on the default tracks; repulsive: through "
                 "presets::any_family_pipeline); mix: equal weights on every family but repulsive; mix_all: on all six "
                 "(presets::any_family_pipeline); gate_course: drone gate courses (presets::gate_course_pipeline); gate_course_own: "
                 "the same through presets::polar_gate_course_pipeline (its anchors are polar); gate_sequence: the "
                 "gate_course preset's gates alone (gate_sequence.hpp, no course line); gate_sequence_bezier: the same "
                 "from bezier corners, as the seed library's gate config; <family>_own: that family through "
                 "presets::one_family_pipeline; <family>_relaxed (and mix_relaxed): through "
                 "presets::relaxed_family_pipeline with the centreline relaxation on (50 sweeps)")
      ->delimiter(',')
      ->check(CLI::IsMember(families));
  if (const int status = track_gen_bench::parse(app, argc, argv); status >= 0) return status;
  if (quick) {
    if (app.count("--envs") == 0) o.envs = {4096L, 65536L};
    if (app.count("--samples") == 0) o.samples = {256};
    if (app.count("--repeats") == 0) o.repeats = 20;
    if (app.count("--copy-mib") == 0) o.copy_mib = 512;
    if (only.empty()) o.long_rows = false;
  }
  if (!only.empty()) {
    const auto has = [&](const char* s) { return std::find(only.begin(), only.end(), s) != only.end(); };
    o.generate = has("generate");
    o.step = has("step");
    o.copy = has("copy");
    o.long_rows = has("long");
    o.sdf = has("sdf");
    o.gate_frames = has("gate_frames");
    o.heightfield = has("heightfield");
    o.utilities = has("utilities");
  }
  if (no_long) o.long_rows = false;
  if (o.step_envs.empty()) o.step_envs = o.envs;
  return -1;
}

/// Runs `body`, appending its rows; a failure is recorded in `errors` and the run goes on.
void attempt(const std::string& what, std::vector<std::string>& errors, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "track_gen_bench: %s: %s\n", what.c_str(), e.what());
    errors.push_back(what + ": " + e.what());
    (void)cudaGetLastError();  // clear a non-sticky error (e.g. an allocation that failed)
  }
}

void print_tables(const std::vector<row>& rows) {
  std::printf("| scenario | E | N | repeats | median ms | p10 ms | p90 ms | min ms | max ms | rate |\n");
  std::printf("|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const row& r : rows) {
    const bool per_env_step = r.scenario.rfind("step", 0) == 0 || r.scenario == "localize" ||
                              r.scenario == "utilities" || r.scenario == "collide_boxes";
    const char* unit = per_env_step                        ? "env-steps/s"
                       : r.scenario.rfind("copy", 0) == 0 ? "GB/s (r+w)"
                       : r.scenario == "sdf_query"        ? "boxes/s"
                       : r.scenario.rfind("gate_frames", 0) == 0 ? "spheres/s"
                       : r.scenario == "heightfield_sample" ? "points/s"
                       : r.scenario.rfind("sdf", 0) == 0 || r.scenario.rfind("heightfield", 0) == 0 ? "envs baked/s"
                                                          : "tracks/s";
    const std::string name = r.block_threads > 0 ? r.scenario + " (" + std::to_string(r.block_threads) + " threads)" : r.scenario;
    std::printf("| %s | %ld | %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4g %s |\n", name.c_str(), r.envs,
                r.samples, r.repeats, r.ms.median, r.ms.p10, r.ms.p90, r.ms.min, r.ms.max, r.rate, unit);
  }
  bool families = false;
  for (const row& r : rows) families = families || r.extra.contains("generator");
  if (!families) return;
  std::printf("\n| generator | E | N | valid | fallback | mean attempts | mean length m |\n|:---|---:|---:|---:|---:|---:|---:|\n");
  for (const row& r : rows) {
    if (!r.extra.contains("generator")) continue;
    const json& st = r.extra["stats"];
    // Gate sequences have neither a fallback nor a length: "-".
    const auto cell = [&](const char* key, const char* format) {
      char text[32] = "-";
      if (st.contains(key)) std::snprintf(text, sizeof text, format, st[key].get<double>());
      return std::string(text);
    };
    std::printf("| %s | %ld | %d | %s | %s | %s | %s |\n", r.extra["generator"].get<std::string>().c_str(), r.envs, r.samples,
                cell("valid_fraction", "%.6f").c_str(), cell("fallback_fraction", "%.6f").c_str(),
                cell("mean_attempts", "%.4f").c_str(), cell("mean_length_m", "%.3f").c_str());
  }
}

/// The suite's JSON document of the run ("peer": "track_gen").
json document(const std::vector<row>& rows, const std::vector<std::string>& errors, const options& o,
              const std::string& device, const std::string& command, const json& device_info) {
  json doc = track_gen_bench::document("track_gen", device, command);
  doc["repeats"] = o.repeats;
  doc["warmup"] = o.warmup;
  doc["row_cap_s"] = number(o.row_cap_s, "%g");
  doc["gate_spacing_m"] = number(o.spacing, "%g");
  doc["seed"] = o.seed;
  doc["device_info"] = device_info;
  json& out = doc["rows"] = json::array();
  for (const row& r : rows) {
    json j = {{"scenario", r.scenario}, {"E", r.envs}, {"N", r.samples}, {"repeats", r.repeats}};
    j.update(track_gen_bench::summary_json(r.ms, "_ms"));
    j.update(r.extra);
    out.push_back(std::move(j));
  }
  doc["errors"] = errors;
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  const std::string command = track_gen_bench::command_line(argc, argv);
  if (const int skipped = track_gen_bench::require_cuda_device("track_gen_bench")) return skipped;
  std::vector<row> rows;
  std::vector<std::string> errors;
  cudaStream_t stream = nullptr;
  try {
    BENCH_CUDA(cudaSetDevice(0));
    cudaDeviceProp prop{};
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    int sm_khz = 0, mem_khz = 0, bus_bits = 0;
    BENCH_CUDA(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0));
    BENCH_CUDA(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
    BENCH_CUDA(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
    // 128 FP32 lanes per SM on sm_80 / sm_90 (NVIDIA's Hopper and Ampere tuning guides); an FMA counts 2.
    const int lanes = 128;
    const double fp32_tflops = prop.multiProcessorCount * lanes * 2.0 * sm_khz * 1e3 * 1e-12;
    const double mem_gb_s = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) * 1e-9;  // double data rate
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::printf("track_gen bench: %s (sm_%d%d, %d SMs, SM clock %d MHz, memory %d MHz x %d bits)\ncommand: %s\n"
                "%d repeats (row cap %g s) after %d warm-up, CUDA events; gate spacing %.2f m, seed %llu\n\n",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount, sm_khz / 1000, mem_khz / 1000, bus_bits,
                command.c_str(), o.repeats, o.row_cap_s, o.warmup, static_cast<double>(o.spacing),
                static_cast<unsigned long long>(o.seed));
    std::fflush(stdout);

    if (o.copy) attempt("copy", errors, [&] { for (const row& r : run_copy(o, stream)) rows.push_back(r); });
    if (o.generate) {
      for (int n : o.samples) {
        for (long e : o.envs) {
          if (e > o.max_envs) continue;
          attempt("generate E=" + std::to_string(e) + " N=" + std::to_string(n), errors,
                  [&] { rows.push_back(run_generate(e, n, o, stream)); });
          for (int t : o.block_threads)
            attempt("generate E=" + std::to_string(e) + " N=" + std::to_string(n) + " threads=" + std::to_string(t),
                    errors, [&] { rows.push_back(run_generate_block(t, e, n, o, stream)); });
          for (const std::string& f : o.generators)
            attempt("generate E=" + std::to_string(e) + " N=" + std::to_string(n) + " generator=" + f, errors,
                    [&] {
                      constexpr int threads = tg::default_tuning::generate_block_threads;
                      if (f == "gate_sequence" || f == "gate_sequence_bezier")
                        rows.push_back(run_gate_sequence(e, o, stream, f == "gate_sequence_bezier"));
                      else if (f == "bezier_own")
                        rows.push_back(run_generate<threads, tg::presets::bezier_pipeline>(e, n, o, stream, f));
                      else if (f == "hull_own")
                        rows.push_back(run_generate<threads, tg::presets::hull_pipeline>(e, n, o, stream, f));
                      else if (f == "voronoi_own")
                        rows.push_back(run_generate<threads, tg::presets::voronoi_pipeline>(e, n, o, stream, f));
                      else if (f == "checkpoint_own")
                        rows.push_back(run_generate<threads, tg::presets::checkpoint_pipeline>(e, n, o, stream, f));
                      else if (f == "gate_course_own")
                        rows.push_back(run_generate<threads, tg::presets::polar_gate_course_pipeline>(e, n, o, stream, f));
                      else if (f == "repulsive_own")
                        rows.push_back(run_generate<threads, tg::presets::repulsive_pipeline>(e, n, o, stream, f));
                      else if (f.find("_relaxed") != std::string::npos)
                        rows.push_back(run_generate<threads, tg::presets::relaxed_family_pipeline>(e, n, o, stream, f));
                      else if (f == "repulsive" || f == "mix_all")  // family_pipeline leaves repulsive out
                        rows.push_back(run_generate<threads, tg::presets::any_family_pipeline>(e, n, o, stream, f));
                      else rows.push_back(f == "gate_course"
                                         ? run_generate<threads, tg::presets::gate_course_pipeline>(e, n, o, stream, f)
                                         : run_generate<threads, tg::presets::family_pipeline>(e, n, o, stream, f));
                    });
        }
      }
    }
    if (o.step) {
      for (long e : o.step_envs) {
        if (e > o.max_envs) continue;
        attempt("step E=" + std::to_string(e), errors, [&] { rows.push_back(run_step(e, o, stream, step_kind::usual)); });
        attempt("step_after_reset E=" + std::to_string(e), errors,
                [&] { rows.push_back(run_step(e, o, stream, step_kind::after_reset)); });
        attempt("step_with_boxes E=" + std::to_string(e), errors,
                [&] { rows.push_back(run_step(e, o, stream, step_kind::with_boxes)); });
      }
    }
    if (o.sdf) {
      for (long e : o.step_envs) {
        if (e > o.max_envs) continue;
        for (int res : o.sdf_resolutions)
          attempt("sdf E=" + std::to_string(e) + " R=" + std::to_string(res), errors,
                  [&] { for (const row& r : run_sdf(e, res, o, stream)) rows.push_back(r); });
      }
    }
    if (o.gate_frames) {
      for (long e : o.step_envs) {
        if (e > o.max_envs) continue;
        attempt("gate_frames E=" + std::to_string(e), errors,
                [&] { for (const row& r : run_gate_frames(e, o, stream)) rows.push_back(r); });
      }
    }
    if (o.heightfield) {
      for (long e : o.step_envs) {
        if (e > o.max_envs) continue;
        for (int res : o.heightfield_resolutions)
          attempt("heightfield E=" + std::to_string(e) + " R=" + std::to_string(res), errors,
                  [&] { for (const row& r : run_heightfield(e, res, o, stream)) rows.push_back(r); });
      }
    }
    if (o.utilities) {
      for (long e : o.step_envs) {
        if (e > o.max_envs) continue;
        attempt("utilities E=" + std::to_string(e), errors,
                [&] { for (const row& r : run_utilities(e, o, stream)) rows.push_back(r); });
      }
    }
    if (o.long_rows) {
      for (int e : {64, 1024})
        attempt("long_track E=" + std::to_string(e), errors, [&] { for (const row& r : run_long(e, o, stream)) rows.push_back(r); });
    }
    print_tables(rows);

    if (!o.json.empty()) {
      const json device_info = {{"sm_count", prop.multiProcessorCount},
                                {"sm_clock_mhz", number(sm_khz / 1e3, "%.1f")},
                                {"fp32_lanes_per_sm", lanes},
                                {"fp32_peak_tflops_from_clock", number(fp32_tflops, "%.3f")},
                                {"memory_clock_mhz", number(mem_khz / 1e3, "%.1f")},
                                {"memory_bus_bits", bus_bits},
                                {"memory_peak_gb_s_from_clock", number(mem_gb_s, "%.1f")},
                                {"l2_bytes", prop.l2CacheSize}};
      track_gen_bench::write_json(o.json, document(rows, errors, o, prop.name, command, device_info));
    }
    BENCH_CUDA(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
    std::fprintf(stderr, "track_gen_bench: %s\n", e.what());
    return 1;
  }
  return errors.empty() ? 0 : 1;
}

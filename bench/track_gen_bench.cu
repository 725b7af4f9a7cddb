/// @file
/// Throughput of course::regenerate (all envs, a new track each) and course::step (progress
/// of one agent per env) on the GPU for E = 4096, 65536 and 1,048,576 environments.
///
/// Method: CUDA events around each call on a dedicated stream, a few untimed warm-up calls,
/// then the median, minimum and maximum of `--repeats` (>= 20) timed calls. Before each timed
/// step a kernel (untimed) moves every agent a little along its track with a small lateral
/// swing, so that the projection does its normal local search. Prints a markdown table and,
/// with --json PATH, the same numbers as JSON. Then presets::long_track (2048 samples, the
/// grid-scope stage dense_repulsive) for E = 64 and 1024: regenerating every env with the grid
/// stage and without it, same method (table only).

#include <track_gen/track_gen.hpp>

#include <Random123/philox.h>
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;

void check_cuda(cudaError_t code, const char* what, int line) {
  if (code != cudaSuccess) {
    throw std::runtime_error(std::string("track_gen_bench.cu:") + std::to_string(line) + ": " + what +
                             " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
  }
}
#define BENCH_CUDA(call) check_cuda((call), #call, __LINE__)

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

struct stats {
  double median_ms, min_ms, max_ms;
};

stats summarise(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  const double median = n % 2 == 1 ? ms[n / 2] : 0.5 * (static_cast<double>(ms[n / 2 - 1]) + ms[n / 2]);
  return {median, ms.front(), ms.back()};
}

/// Bytes that one env's step reads and writes on the usual path (local search, no gate or
/// lap event), each counted once; sector granularity and caching are ignored, so this is an
/// estimate of the useful traffic, not of DRAM traffic. Breakdown (course_ref::step):
///   position 12 | progress read: flags 4, hint 4, last position 12, next gate 4, gates passed 4
///   | progress written: those 28 plus lap progress 4 and lateral 4 | track header: length 4,
///   gate count 4, status 4 | window: 2W+1 segments = 2W+2 samples of 12 | projection: tangent,
///   normal (2 x 12 each) and half-width (2 x 4) around the nearest point | next gate: 32.
std::size_t step_bytes_per_env(int window) {
  const std::size_t position = 12, progress_read = 28, progress_written = 36, header = 12;
  const std::size_t samples = static_cast<std::size_t>(2 * window + 2) * 12;
  const std::size_t frame = 2 * 12 + 2 * 12 + 2 * 4, gate = 32;
  return position + progress_read + progress_written + header + samples + frame + gate;
}

struct options {
  long max_envs = 1L << 20;
  int repeats = 30;
  int warmup = 3;
  float spacing = 1.0f;
  std::uint64_t seed = 1;
  std::string json;
};

struct row {
  int envs;
  stats regenerate, step;
  std::size_t bytes_per_env;
};

/// presets::long_track (2048 samples, stages::dense_repulsive at grid scope): regenerate every
/// env, with the grid stage and with it switched off (max_windows = 0), and how many tracks
/// the stage relaxed in the last timed batch.
struct long_row {
  int envs;
  stats with_stage, without_stage;
  int relaxed;
};

long_row run_long(int envs, const options& o, cudaStream_t stream) {
  using course_type = tg::course<tg::presets::long_track_pipeline>;
  const ::cuda::stream_ref sref(stream);
  long_row out{};
  out.envs = envs;
  std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(o.repeats));
  for (cudaEvent_t& e : ev) BENCH_CUDA(cudaEventCreate(&e));
  for (const bool stage : {true, false}) {
    tg::track_params params = tg::presets::long_track(envs);
    params.seed = o.seed;
    if (!stage) params.dense_repulsive.max_windows = 0;
    course_type course(params, 50.0f, sref);
    for (int w = 0; w < o.warmup; ++w) course.regenerate(nullptr, true, sref);
    for (int r = 0; r < o.repeats; ++r) {
      BENCH_CUDA(cudaEventRecord(ev[2 * r], stream));
      course.regenerate(nullptr, true, sref);
      BENCH_CUDA(cudaEventRecord(ev[2 * r + 1], stream));
    }
    BENCH_CUDA(cudaStreamSynchronize(stream));
    std::vector<float> ms(static_cast<std::size_t>(o.repeats));
    for (int r = 0; r < o.repeats; ++r) BENCH_CUDA(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
    (stage ? out.with_stage : out.without_stage) = summarise(ms);
    if (stage) {
      const tg::track_snapshot t = course.copy_tracks(sref);
      for (const std::uint32_t st : t.status) out.relaxed += (st & tg::status::relaxed) != 0u;
    }
  }
  for (cudaEvent_t& e : ev) BENCH_CUDA(cudaEventDestroy(e));
  return out;
}

row run_size(int envs, const options& o, cudaStream_t stream) {
  using course_type = tg::course<>;  // the track preset on the CUDA backend
  tg::track_params params = tg::presets::track(envs);
  params.seed = o.seed;
  const ::cuda::stream_ref sref(stream);
  course_type course(params, o.spacing, sref);
  float3* positions = nullptr;
  BENCH_CUDA(cudaMalloc(&positions, sizeof(float3) * static_cast<std::size_t>(envs)));
  course.bind(positions);
  std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(o.repeats));
  for (cudaEvent_t& e : ev) BENCH_CUDA(cudaEventCreate(&e));
  auto elapsed = [&]() {
    BENCH_CUDA(cudaStreamSynchronize(stream));
    std::vector<float> ms(static_cast<std::size_t>(o.repeats));
    for (int r = 0; r < o.repeats; ++r) BENCH_CUDA(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
    return summarise(ms);
  };

  row out{};
  out.envs = envs;
  // regenerate(all, advance): a new track for every env each call.
  for (int w = 0; w < o.warmup; ++w) course.regenerate(nullptr, true, sref);
  for (int r = 0; r < o.repeats; ++r) {
    BENCH_CUDA(cudaEventRecord(ev[2 * r], stream));
    course.regenerate(nullptr, true, sref);
    BENCH_CUDA(cudaEventRecord(ev[2 * r + 1], stream));
  }
  out.regenerate = elapsed();

  // step: agents 0.15 m further along their tracks each repeat (about one sample spacing).
  const unsigned threads = 256, blocks = static_cast<unsigned>((envs + 255) / 256);
  const tg::course_ref view = course.view();
  for (int w = 0; w < o.warmup; ++w) {
    place_agents<<<blocks, threads, 0, stream>>>(view, positions, w, 0.15f);
    BENCH_CUDA(cudaGetLastError());
    course.step(sref);
  }
  for (int r = 0; r < o.repeats; ++r) {
    place_agents<<<blocks, threads, 0, stream>>>(view, positions, o.warmup + r, 0.15f);
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaEventRecord(ev[2 * r], stream));
    course.step(sref);
    BENCH_CUDA(cudaEventRecord(ev[2 * r + 1], stream));
  }
  out.step = elapsed();
  out.bytes_per_env = step_bytes_per_env(tg::default_tuning::projection_window);

  // The agents should have stayed on their tracks: a sanity check of the placement.
  const tg::progress_snapshot p = course.copy_progress(sref);
  int off = 0;
  for (int e = 0; e < envs; ++e) off += (p.flags[e] & tg::progress_flags::off_track) != 0u;
  if (off != 0) std::fprintf(stderr, "warning: %d of %d agents off track in the step benchmark\n", off, envs);

  for (cudaEvent_t e : ev) BENCH_CUDA(cudaEventDestroy(e));
  BENCH_CUDA(cudaFree(positions));
  return out;
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    char* end = nullptr;
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: %s [--max-envs N] [--repeats R>=20] [--warmup W] [--spacing M] [--seed S] [--json PATH]\n",
          argv[0]);
      std::exit(0);
    } else if (a == "--max-envs" && v) {
      o.max_envs = std::strtol(v, &end, 10);
    } else if (a == "--repeats" && v) {
      o.repeats = static_cast<int>(std::strtol(v, &end, 10));
    } else if (a == "--warmup" && v) {
      o.warmup = static_cast<int>(std::strtol(v, &end, 10));
    } else if (a == "--spacing" && v) {
      o.spacing = std::strtof(v, &end);
    } else if (a == "--seed" && v) {
      o.seed = std::strtoull(v, &end, 10);
    } else if (a == "--json" && v && *v != '\0') {
      o.json = v;
      ++i;
      continue;
    } else {
      std::fprintf(stderr, "unknown option or missing value: %s\n", a.c_str());
      return false;
    }
    if (end == v || *end != '\0') {
      std::fprintf(stderr, "bad value for %s: %s\n", a.c_str(), v);
      return false;
    }
    ++i;
  }
  if (o.repeats < 20 || o.warmup < 1 || o.max_envs < 1 || !(o.spacing > 0.0f)) {
    std::fprintf(stderr, "need --repeats >= 20, --warmup >= 1, --max-envs >= 1, --spacing > 0\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::fprintf(stderr, "track_gen_bench: no CUDA device (%s); nothing to measure\n",
                 err != cudaSuccess ? cudaGetErrorName(err) : "0 devices");
    return 77;  // "skipped", as the CUDA tests report it
  }
  try {
    BENCH_CUDA(cudaSetDevice(0));
    cudaDeviceProp prop{};
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t stream = nullptr;
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    std::vector<row> rows;
    for (long envs : {4096L, 65536L, 1048576L}) {
      if (envs > o.max_envs) continue;
      rows.push_back(run_size(static_cast<int>(envs), o, stream));
    }

    std::vector<long_row> long_rows;
    for (int envs : {64, 1024}) long_rows.push_back(run_long(envs, o, stream));

    std::printf("track_gen bench: %s (sm_%d%d, %d SMs), preset track (N = 256 samples), gate spacing %.2f m, "
                "%d repeats after %d warm-up, CUDA events\n\n",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount, static_cast<double>(o.spacing),
                o.repeats, o.warmup);
    std::printf("| E | regenerate median ms (min-max) | tracks/s | step median ms (min-max) | env-steps/s | "
                "bytes/env of step (est.) | step GB/s (est.) |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const row& r : rows) {
      const double tracks_s = r.envs / (r.regenerate.median_ms * 1e-3);
      const double steps_s = r.envs / (r.step.median_ms * 1e-3);
      std::printf("| %d | %.3f (%.3f-%.3f) | %.3e | %.4f (%.4f-%.4f) | %.3e | %zu | %.0f |\n", r.envs,
                  r.regenerate.median_ms, r.regenerate.min_ms, r.regenerate.max_ms, tracks_s, r.step.median_ms,
                  r.step.min_ms, r.step.max_ms, steps_s, r.bytes_per_env, steps_s * r.bytes_per_env * 1e-9);
    }

    std::printf("\npresets::long_track (N = 2048, gate spacing 50 m), regenerate every env: with the grid-scope "
                "stage dense_repulsive (eager: 8 windows of 8 iterations recorded, finished envs exit at once) and "
                "without it (max_windows = 0)\n\n");
    std::printf("| E | with grid stage median ms (min-max) | without median ms (min-max) | relaxed tracks |\n");
    std::printf("|---:|---:|---:|---:|\n");
    for (const long_row& r : long_rows) {
      std::printf("| %d | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %d of %d |\n", r.envs, r.with_stage.median_ms,
                  r.with_stage.min_ms, r.with_stage.max_ms, r.without_stage.median_ms, r.without_stage.min_ms,
                  r.without_stage.max_ms, r.relaxed, r.envs);
    }

    if (!o.json.empty()) {
      std::FILE* f = std::fopen(o.json.c_str(), "w");
      if (f == nullptr) throw std::runtime_error("cannot write " + o.json);
      std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"repeats\": %d,\n  \"warmup\": %d,\n  \"gate_spacing_m\": %g,\n"
                   "  \"results\": [\n", prop.name, o.repeats, o.warmup, static_cast<double>(o.spacing));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const row& r = rows[i];
        std::fprintf(f,
                     "    {\"envs\": %d, \"regenerate_ms\": {\"median\": %.6f, \"min\": %.6f, \"max\": %.6f}, "
                     "\"tracks_per_s\": %.6e, \"step_ms\": {\"median\": %.6f, \"min\": %.6f, \"max\": %.6f}, "
                     "\"env_steps_per_s\": %.6e, \"step_bytes_per_env\": %zu}%s\n",
                     r.envs, r.regenerate.median_ms, r.regenerate.min_ms, r.regenerate.max_ms,
                     r.envs / (r.regenerate.median_ms * 1e-3), r.step.median_ms, r.step.min_ms, r.step.max_ms,
                     r.envs / (r.step.median_ms * 1e-3), r.bytes_per_env, i + 1 < rows.size() ? "," : "");
      }
      std::fprintf(f, "  ]\n}\n");
      if (std::fclose(f) != 0) throw std::runtime_error("cannot write " + o.json);
      std::printf("\njson: %s\n", o.json.c_str());
    }
    BENCH_CUDA(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "track_gen_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

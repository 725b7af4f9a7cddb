/// @file
/// Replay time of a whole simulation step recorded as one CUDA graph, per configuration: E
/// environments (--envs, default 4096 and 1,048,576), the skip policy of the course
/// (skip::conditional, skip::unconditional; capture::global, default ownership), and the
/// fraction of envs whose episode ended (--fractions, default 0, 0.001, 0.01, 1), or their
/// number (--done-counts, e.g. 1,4: the operating point of an RL run, a few episodes ending per
/// step; a count above E is left out at that E).
///
/// Method: for each (E, skip policy) one course (preset track) is constructed on a dedicated
/// non-blocking stream, and the graphs of that course are captured and instantiated before any
/// timing. A graph holds a stand-in physics kernel (every agent moves 0.15 m along its track
/// with a small lateral swing, written to the float3 [E] positions bound with course.bind),
/// course.step, and course.regenerate(mask, advance = true) with an int32 [E] mask in which
/// exactly round(fraction * E) envs, spread evenly over the batch, are set; the mask is filled
/// before the capture and never changes. The masked envs get a new track on every replay (the
/// realistic workload). For each E a baseline graph (physics + step, no regenerate) is captured
/// too, with the first skip policy's course. Each graph gets --warmup untimed replays, then
/// --replays (>= 1000) replays, each timed on its own: event, cudaGraphLaunch, event, wait for
/// the second event. Graphs in which every env is done (fraction 1) regenerate all E tracks per
/// replay (about 63 ms at E = 1M on an H200): --all-done-replays R (>= 20) gives them R replays
/// after at most 3 warm-up replays instead (each row records its replay count). The course is destroyed (and its memory released) before the next one is
/// built, so that only one course of E = 1M lives at a time.
///
/// A row: one graph of one (E, skip policy, done fraction). Median, p10, p90, min and max are
/// taken over the individually timed replays (percentiles interpolated linearly between the
/// closest ranks), in ms; the ratio is the row's median over the baseline median of that E, and
/// "over baseline" the difference of the two medians in microseconds (what regenerate(mask) adds
/// to the physics + step graph). --label names the run in the JSON (scripts/perf-report puts the
/// "operating_point" run in its own section).
///
/// --boxes binds one box per env besides the positions (bench_util.hpp's car_boxes: a 0.4 x 0.2 m
/// footprint at a fixed yaw, as track_gen_bench's step_with_boxes rows), so that every captured
/// course.step also runs the exact box contacts (collision.hpp): the graphs are physics + step +
/// collision (+ regenerate(mask)), the baseline physics + step + collision. It also captures a
/// physics-only graph (the stand-in physics kernel alone: skip policy "physics_only"), the floor
/// the utilities are added to. Each row records boxes_per_env (0 or 1); scripts/perf-report puts
/// the run labelled "operating_point_boxes" beside the "operating_point" run (issue 14: physics +
/// step + collision + masked regeneration at E = 4,096 beside the physics-only graph).
/// Prints a markdown table and, with --json PATH, the same rows as JSON.

#include <track_gen/graph.hpp>
#include <track_gen/track_gen.hpp>

#include "bench_util.hpp"

#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

namespace tg = track_gen;

constexpr int block_threads = 256;
constexpr float advance_m = 0.15f;  // about one sample spacing of the track preset per replay

unsigned grid_for(int envs) { return static_cast<unsigned>((envs + block_threads - 1) / block_threads); }

/// The two events of one timed replay.
class event_pair {
 public:
  event_pair() {
    BENCH_CUDA(cudaEventCreate(&start_));
    try {
      BENCH_CUDA(cudaEventCreate(&stop_));
    } catch (...) {
      (void)cudaEventDestroy(start_);
      throw;
    }
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
  ~event_pair() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// Spreads the agents over their tracks: a golden-ratio sequence of start fractions, so that
/// neighbouring envs do not all sit on the start line.
__global__ void start_agents(const tg::course_ref view, float* arc) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= view.num_envs()) return;
  const float u = std::fmod(0.6180339887f * static_cast<float>(e), 1.0f);
  arc[e] = u * view.track(e).length();
}

/// Stand-in physics: agent e moves `advance` metres further along its track (its arc length is
/// kept in `arc`, the only state across replays) and swings sideways by up to half the
/// half-width, so that step's projection does its usual local search. The arc length wraps with
/// the current track's length, so an env whose track was regenerated stays on its new track.
__global__ void drive_agents(const tg::course_ref view, float* arc, float3* positions, float advance) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= view.num_envs()) return;
  const tg::track_ref tr = view.track(e);
  const float length = tr.length();
  const float s = std::fmod(arc[e] + advance, length);
  arc[e] = s;
  const int n = tr.num_samples();
  const float at = s / tr.sample_spacing();
  const int k = static_cast<int>(at) < n ? static_cast<int>(at) : n - 1;  // s == length after rounding
  const int next = k + 1 < n ? k + 1 : 0;
  const float t = at - static_cast<float>(k);
  const float3 p = tr.position(k), q = tr.position(next), side = tr.normal(k);
  const float offset = 0.5f * tr.half_width(k) * std::sin(1.3f * s + static_cast<float>(e));
  positions[e] = make_float3(p.x + t * (q.x - p.x) + offset * side.x, p.y + t * (q.y - p.y) + offset * side.y,
                             p.z + t * (q.z - p.z));
}

/// --rotate: the done envs of a replay are those of make_mask(E, count) shifted by the replay's
/// tick (env e is done when (e - tick) mod E is one of them), so every env ends an episode
/// every E / count replays, as in an RL run, instead of the same envs on every replay.
__global__ void rotate_done(std::int32_t* mask, int envs, int count, const unsigned* tick) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= envs) return;
  if (count <= 0) {
    mask[e] = 0;
    return;
  }
  const long long shifted = ((static_cast<long long>(e) - static_cast<long long>(*tick % static_cast<unsigned>(envs))) + envs) % envs;
  const long long i = (shifted * count + envs - 1) / envs;  // the first i with floor(i * E / count) >= shifted
  mask[e] = i < count && i * envs / count == shifted ? 1 : 0;
}

/// --rotate: the next replay's tick (its own node, after every reader of this replay's).
__global__ void advance_tick(unsigned* tick) { ++*tick; }

using stats = track_gen_bench::summary;
using track_gen_bench::device_buffer;
using track_gen_bench::json;
using track_gen_bench::number;
using track_gen_bench::summarise;

struct options : track_gen_bench::common_options {
  std::vector<long> envs = {4096L, 1048576L};
  std::vector<double> fractions = {0.0, 0.001, 0.01, 1.0};
  std::vector<long> done_counts;  // absolute numbers of done envs, after the fractions
  std::string label = "replay";
  int replays = 1000;
  int all_done_replays = 0;  // replays of the fraction-1 graphs; 0: `replays`
  int warmup = 20;
  bool boxes = false;  // --boxes: one box per env bound, and the physics-only graph
  bool rotate = false;  // --rotate: the done envs move on every replay (rotate_done)
  int ahead = -1;       // --ahead R: the regenerating graphs again on a course with enable_ahead({R})
};

struct row {
  int envs = 0;
  std::string skip;      // "conditional", "unconditional" (+ "+ahead"), "baseline" or "physics_only"
  bool ahead = false;    // the course served its regenerations from tracks built ahead
  double mean_ms = 0;    // mean of the timed replays
  tg::ahead_counts counts{};  // over this row's replays (warm-up included), with ahead
  double fraction = -1;  // < 0: baseline or physics_only (no regenerate)
  long done = 0;         // envs set in the mask
  int replays = 0;       // timed replays of this row
  stats ms{};
  double ratio = 0;
  double over_baseline_us = 0;
};

/// Captures the physics kernel, course.step (unless `physics_only`) and, unless `mask` is null,
/// course.regenerate(mask, advance) on `stream`, then instantiates and uploads the graph. (A null
/// mask means "every env" to the library, so here it means "no regenerate" instead of being
/// passed on.)
/// --rotate: where a graph writes its done envs, how many, and the replay counter.
struct rotation {
  std::int32_t* mask = nullptr;  ///< null: no rotation
  int count = 0;
  unsigned* tick = nullptr;
};

template <class Course>
tg::graph_exec capture_replay(Course& course, float* arc, float3* positions, const std::int32_t* mask,
                              cudaStream_t stream, bool physics_only = false, rotation rotate = {}) {
  const ::cuda::stream_ref sref(stream);
  tg::scoped_capture capture(sref);
  if (rotate.mask != nullptr) {
    rotate_done<<<grid_for(course.num_envs()), block_threads, 0, stream>>>(rotate.mask, course.num_envs(), rotate.count,
                                                                          rotate.tick);
    BENCH_CUDA(cudaGetLastError());
  }
  drive_agents<<<grid_for(course.num_envs()), block_threads, 0, stream>>>(course.view(), arc, positions, advance_m);
  BENCH_CUDA(cudaGetLastError());
  if (!physics_only) course.step(sref);
  if (mask != nullptr) course.regenerate(mask, /*advance=*/true, sref);
  if (rotate.mask != nullptr) {
    advance_tick<<<1, 1, 0, stream>>>(rotate.tick);
    BENCH_CUDA(cudaGetLastError());
  }
  const tg::graph g = capture.end();
  tg::graph_exec exec = g.instantiate();
  // Uploading now keeps the first launch's setup out of the replays (the warm-up would too).
  BENCH_CUDA(cudaGraphUpload(exec.get(), stream));
  return exec;
}

/// `warmup` untimed replays, then `replays` replays of `exec`, each between its own pair of events.
stats time_replays(const tg::graph_exec& exec, int warmup, int replays, cudaStream_t stream, const event_pair& ev,
                   double* mean_ms = nullptr) {
  for (int w = 0; w < warmup; ++w) BENCH_CUDA(cudaGraphLaunch(exec.get(), stream));
  BENCH_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> ms(static_cast<std::size_t>(replays));
  for (float& m : ms) {
    BENCH_CUDA(cudaEventRecord(ev.start(), stream));
    BENCH_CUDA(cudaGraphLaunch(exec.get(), stream));
    BENCH_CUDA(cudaEventRecord(ev.stop(), stream));
    BENCH_CUDA(cudaEventSynchronize(ev.stop()));
    BENCH_CUDA(cudaEventElapsedTime(&m, ev.start(), ev.stop()));
  }
  if (mean_ms != nullptr) {
    double sum = 0;
    for (float m : ms) sum += m;
    *mean_ms = sum / static_cast<double>(ms.size());
  }
  return summarise(std::move(ms));
}

/// Exactly `count` ones, at envs floor(i * envs / count): evenly spread, distinct.
std::vector<std::int32_t> make_mask(int envs, long count) {
  std::vector<std::int32_t> mask(static_cast<std::size_t>(envs), 0);
  for (long i = 0; i < count; ++i) mask[static_cast<std::size_t>(i * static_cast<long long>(envs) / count)] = 1;
  return mask;
}

template <class Skip>
const char* skip_name() {
  return std::is_same_v<Skip, tg::skip::conditional> ? "conditional" : "unconditional";
}

/// One course of `envs` envs with skip policy Skip: the baseline graph (if asked for) and one
/// graph per done fraction, all captured before the first timed replay. Appends the rows.
template <class Skip>
void run_course(int envs, bool with_baseline, bool ahead, const options& o, cudaStream_t stream, const event_pair& ev,
                std::vector<row>& rows) {
  using course_type = tg::course<tg::presets::track_pipeline, tg::policy<tg::capture::global, Skip>>;
  const ::cuda::stream_ref sref(stream);
  std::weak_ptr<const void> memory;
  {
    tg::track_params params = tg::presets::track(envs);
    params.seed = o.seed;
    course_type course(params, o.spacing, sref);
    memory = course.owner();
    if (ahead) course.enable_ahead(tg::ahead_options{o.ahead}, sref);

    const std::size_t n = static_cast<std::size_t>(envs);
    device_buffer<float3> positions(n);
    device_buffer<float> arc(n);
    // --boxes: the boxes outlive every graph (declared before them), as the positions do.
    std::unique_ptr<track_gen_bench::car_boxes> boxes;
    if (o.boxes) {
      boxes = std::make_unique<track_gen_bench::car_boxes>(n);
      course.bind(positions.get(), boxes->orientations.get(), boxes->half_extents.get(), sref);
    } else {
      course.bind(positions.get());
    }
    start_agents<<<grid_for(envs), block_threads, 0, stream>>>(course.view(), arc.get());
    BENCH_CUDA(cudaGetLastError());

    // The done counts: round(fraction * E) for each fraction, then each --done-counts entry <= E.
    // A row's fraction is the one asked for (--fractions) or count / E (--done-counts).
    std::vector<long> done;
    std::vector<double> fraction;
    for (double f : o.fractions) {
      done.push_back(std::lround(f * static_cast<double>(envs)));
      fraction.push_back(f);
    }
    for (long c : o.done_counts) {
      if (c > envs) continue;
      done.push_back(c);
      fraction.push_back(static_cast<double>(c) / envs);
    }
    std::vector<device_buffer<std::int32_t>> masks;
    device_buffer<unsigned> tick(1);
    device_buffer<std::int32_t> no_mask(n);  // --rotate: what the graphs without regenerate write
    BENCH_CUDA(cudaMemsetAsync(tick.get(), 0, sizeof(unsigned), stream));
    for (std::size_t i = 0; i < done.size(); ++i) {
      const std::vector<std::int32_t> host = make_mask(envs, done[i]);
      masks.emplace_back(n);
      BENCH_CUDA(cudaMemcpyAsync(masks.back().get(), host.data(), n * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                                 stream));
      BENCH_CUDA(cudaStreamSynchronize(stream));  // `host` dies at the end of this iteration
    }

    // Everything built before the first timed replay: the tracks, the agents, every graph.
    const auto rotate = [&](std::int32_t* m, long count) {
      return o.rotate ? rotation{m, static_cast<int>(count), tick.get()} : rotation{};
    };
    tg::graph_exec baseline, physics;
    if (with_baseline)
      baseline = capture_replay(course, arc.get(), positions.get(), nullptr, stream, false, rotate(no_mask.get(), 0));
    if (with_baseline && o.boxes)
      physics = capture_replay(course, arc.get(), positions.get(), nullptr, stream, true, rotate(no_mask.get(), 0));
    std::vector<tg::graph_exec> graphs;
    for (std::size_t i = 0; i < masks.size(); ++i)
      graphs.push_back(capture_replay(course, arc.get(), positions.get(), masks[i].get(), stream, false,
                                      rotate(masks[i].get(), done[i])));
    BENCH_CUDA(cudaStreamSynchronize(stream));

    // The row of a graph without regenerate: the baseline, or the physics-only graph (--boxes).
    const auto plain_row = [&](const char* skip, const tg::graph_exec& exec) {
      row r;
      r.envs = envs;
      r.skip = skip;
      r.replays = o.replays;
      r.ms = time_replays(exec, o.warmup, o.replays, stream, ev, &r.mean_ms);
      return r;
    };
    if (with_baseline) {
      rows.push_back(plain_row("baseline", baseline));
      // The stand-in physics should keep every agent on its track.
      const tg::progress_snapshot p = course.copy_progress(sref);
      long off = 0;
      for (std::uint32_t f : p.flags) off += (f & tg::progress_flags::off_track) != 0u;
      if (off != 0)
        std::fprintf(stderr, "warning: E = %d: %ld agents off track after the baseline replays\n", envs, off);
      if (o.boxes) rows.push_back(plain_row("physics_only", physics));
    }
    for (std::size_t i = 0; i < graphs.size(); ++i) {
      row r;
      r.envs = envs;
      r.skip = std::string(skip_name<Skip>()) + (ahead ? "+ahead" : "");
      r.ahead = ahead;
      r.fraction = fraction[i];
      r.done = done[i];
      const bool all_done = done[i] == envs && o.all_done_replays > 0;
      r.replays = all_done ? o.all_done_replays : o.replays;
      const tg::ahead_counts before = course.ahead_statistics(sref);
      r.ms = time_replays(graphs[i], all_done ? std::min(o.warmup, 3) : o.warmup, r.replays, stream, ev, &r.mean_ms);
      const tg::ahead_counts after = course.ahead_statistics(sref);
      r.counts = {after.served - before.served, after.missed - before.missed, after.refilled - before.refilled};
      rows.push_back(r);
    }
    BENCH_CUDA(cudaStreamSynchronize(stream));
    BENCH_CUDA(cudaGetLastError());
  }  // graphs, then buffers, then the course are destroyed here (reverse order of declaration)

  // ownership::anchored: the executable graphs held the course's memory through CUDA user
  // objects, which CUDA releases on its own thread some time after the graphs are destroyed;
  // wait for that, then free the memory before the next course is built.
  for (int tries = 0; !memory.expired() && tries < 2000; ++tries) {
    BENCH_CUDA(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!memory.expired()) std::fprintf(stderr, "warning: E = %d: the course's memory is still referenced\n", envs);
  tg::release_deferred();
}

/// The options of the command line in `o`: -1 to go on, else the exit status.
int parse(int argc, char** argv, options& o) {
  using namespace track_gen_bench;
  CLI::App app("graph_replay_bench: replay time of a whole simulation step (physics, course.step, masked "
               "course.regenerate) recorded as one CUDA graph, per E, skip policy and done fraction.");
  add_common_options(app, o);
  app.add_option("--envs", o.envs, "envs E, one course per E and skip policy")
      ->delimiter(',')
      ->check(in_range(1L, long{INT_MAX}));
  app.add_option("--fractions", o.fractions, "fractions of the envs done (regenerated) in each replay, one graph each")
      ->delimiter(',')
      ->check(in_range(0.0, 1.0));
  app.add_option("--done-counts", o.done_counts,
                 "numbers of done envs, one graph each after the fractions' (a count above E is left out at that E)")
      ->delimiter(',')
      ->check(in_range(0L, long{INT_MAX}));
  app.add_option("--label", o.label, "name of the run in the JSON document")->check(CLI::Validator(
      [](std::string& l) { return l.empty() ? std::string("empty label") : std::string(); }, ""));
  app.add_option("--replays", o.replays, "timed replays per graph")->check(at_least(1000));
  app.add_option("--all-done-replays", o.all_done_replays,
                 "timed replays of the graphs in which every env is done, after at most 3 warm-up replays")
      ->check(number_check<int>([](int r) { return r == 0 || r >= 20; }, ">= 20, or 0: --replays"));
  app.add_option("--warmup", o.warmup, "untimed replays per graph before them")->check(at_least(0));
  app.add_flag("--rotate", o.rotate,
               "the done envs move on every replay (a kernel in every graph, the baseline's included, writes the "
               "mask from a replay counter): each env ends an episode every E / count replays");
  app.add_option("--ahead", o.ahead,
                 "also run each regenerating graph on a course with course.enable_ahead(refill_at = R) (0: its "
                 "default); rows 'conditional+ahead', 'unconditional+ahead'")
      ->check(at_least(0));
  app.add_flag("--boxes", o.boxes,
               "bind one box per env (0.4 x 0.2 m): every step runs the exact box contacts; adds the physics-only "
               "graph's row");
  return track_gen_bench::parse(app, argc, argv);
}

void print_table(const std::vector<row>& rows) {
  std::printf("| E | skip policy | done fraction | done envs | replays | median ms | p10 ms | p90 ms | min ms | "
              "max ms | mean ms | median / baseline | over baseline us | served | missed | refilled |\n");
  std::printf("|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const row& r : rows) {
    const std::string fraction = r.fraction < 0 ? std::string("- (no regenerate)") : [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", r.fraction);
      return std::string(buf);
    }();
    std::printf("| %d | %s | %s | %ld | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.2f | %.1f | %llu | %llu | %llu |\n",
                r.envs, r.skip.c_str(), fraction.c_str(), r.done, r.replays, r.ms.median, r.ms.p10, r.ms.p90,
                r.ms.min, r.ms.max, r.mean_ms, r.ratio, r.over_baseline_us, r.counts.served, r.counts.missed,
                r.counts.refilled);
  }
}

json document(const std::vector<row>& rows, const std::string& device, const std::string& command,
              const options& o) {
  json doc = track_gen_bench::document(nullptr, device, command);
  doc["label"] = o.label;
  doc["replays"] = o.replays;
  doc["warmup"] = o.warmup;
  doc["all_done_replays"] = o.all_done_replays > 0 ? o.all_done_replays : o.replays;
  doc["gate_spacing_m"] = number(o.spacing, "%g");
  doc["seed"] = o.seed;
  doc["boxes_per_env"] = o.boxes ? 1 : 0;
  doc["rotate"] = o.rotate;
  doc["ahead_refill_at"] = o.ahead;
  if (o.boxes) doc.update(track_gen_bench::car_boxes::describe());
  json& out = doc["rows"] = json::array();
  for (const row& r : rows) {
    const bool baseline = r.fraction < 0;
    out.push_back({{"envs", r.envs},
                   {"boxes_per_env", o.boxes ? 1 : 0},
                   {"skip_policy", r.skip},
                   {"regenerate", !baseline},
                   {"done_fraction", baseline ? json(nullptr) : number(r.fraction, "%.15g")},
                   {"done_envs", r.done},
                   {"replays", r.replays},
                   {"ms", track_gen_bench::summary_json(r.ms, "")},
                   {"mean_ms", number(r.mean_ms, "%.6g")},
                   {"median_over_baseline", number(r.ratio, "%.6f")},
                   {"over_baseline_us", number(r.over_baseline_us, "%.4f")},
                   {"ahead", r.ahead},
                   {"ahead_served", r.counts.served},
                   {"ahead_missed", r.counts.missed},
                   {"ahead_refilled", r.counts.refilled}});
  }
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  const std::string command = track_gen_bench::command_line(argc, argv);

  if (const int skipped = track_gen_bench::require_cuda_device("graph_replay_bench")) return skipped;
  cudaStream_t stream = nullptr;
  try {
    BENCH_CUDA(cudaSetDevice(0));
    cudaDeviceProp prop{};
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::printf("graph_replay_bench: %s (sm_%d%d, %d SMs)\ncommand: %s\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, command.c_str());
    std::printf("preset track, gate spacing %.2f m, seed %llu; per graph %d untimed warm-up replays, then %d replays "
                "timed one by one with CUDA events\n",
                static_cast<double>(o.spacing), static_cast<unsigned long long>(o.seed), o.warmup, o.replays);
    if (o.boxes)
      std::printf("--boxes: one %g x %g m box per env bound, every step runs the box contacts; physics-only graph too\n",
                  2.0 * track_gen_bench::car_boxes::half_length_m, 2.0 * track_gen_bench::car_boxes::half_width_m);
    if (o.all_done_replays > 0)
      std::printf("graphs in which every env is done: %d replays after %d warm-up (--all-done-replays)\n",
                  o.all_done_replays, std::min(o.warmup, 3));
    std::printf("\n");
    std::fflush(stdout);

    // Load the kernels now: CUDA's lazy loading would otherwise do it inside the first capture.
    cudaFuncAttributes attr{};
    BENCH_CUDA(cudaFuncGetAttributes(&attr, start_agents));
    BENCH_CUDA(cudaFuncGetAttributes(&attr, drive_agents));
    BENCH_CUDA(cudaFuncGetAttributes(&attr, rotate_done));
    BENCH_CUDA(cudaFuncGetAttributes(&attr, advance_tick));
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    std::vector<row> rows;
    {
      const event_pair ev;
      for (long e : o.envs) {
        const int envs = static_cast<int>(e);
        const std::size_t first = rows.size();
        run_course<tg::skip::conditional>(envs, /*with_baseline=*/true, false, o, stream, ev, rows);
        run_course<tg::skip::unconditional>(envs, /*with_baseline=*/false, false, o, stream, ev, rows);
        if (o.ahead >= 0) {
          run_course<tg::skip::conditional>(envs, false, true, o, stream, ev, rows);
          run_course<tg::skip::unconditional>(envs, false, true, o, stream, ev, rows);
        }
        const double base = rows[first].ms.median;  // the baseline row comes first
        for (std::size_t i = first; i < rows.size(); ++i) {
          rows[i].ratio = rows[i].ms.median / base;
          rows[i].over_baseline_us = (rows[i].ms.median - base) * 1e3;
        }
      }
    }

    print_table(rows);
    if (!o.json.empty()) track_gen_bench::write_json(o.json, document(rows, prop.name, command, o));
    BENCH_CUDA(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
    std::fprintf(stderr, "graph_replay_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

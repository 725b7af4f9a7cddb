/// @file
/// Single-thread throughput of the host backend (backend::host, track_gen::host_policy):
/// course::regenerate(all envs, advance = true) of a host course, in tracks per second per core,
/// for the `track` preset at each requested sample count N (default: N = 256, the preset's own);
/// with `--family NAME`, the same preset through presets::family_pipeline with that generator
/// family (docs/generators.md).
/// The CPU counterpart of the Gymnasium and EnvPool CarRacing track creation in
/// bench/peers/cpu_peers.py; scripts/perf-report compares them.
///
/// Method: one course of E envs per N (construction generates episode 0, untimed), `--warmup`
/// untimed regenerations, then `--repeats` regenerations each timed with std::chrono::steady_clock
/// (wall time) and, as a check that one core did the work, the process CPU time (std::clock).
/// Median, p10, p90 (linear interpolation between ranks), min and max over the repeats.
/// Tracks per second per core = E / median CPU time (the same rule as bench/peers/cpu_peers.py:
/// core-seconds per track, so time spent descheduled on a shared machine is not charged).
///
/// `--profile` also measures, with an instrumented block context on the same stages and random
/// streams, what each generated track cost in stage work: attempts, polygon separation iterations and the
/// point-segment pairs they pushed, the validation tests reached, gates. From these and the
/// per-operation counts of `flop_model` below it writes the arithmetic (FLOPs) per track per
/// stage, for every attempt made (work done) and for the accepted attempt alone (the useful
/// work); scripts/perf-report divides the GPU's generation rate by these to get FLOP/s.
///
/// Output: a markdown table on stdout and, with --json PATH, the peer JSON of the benchmark suite
/// ({"peer": "track_gen_host", ..., "rows": [{"scenario": "generate", ...}]}).

#include <track_gen/track_gen.hpp>

#include "bench_util.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace tg = track_gen;
using track_gen_bench::json;
using track_gen_bench::number;
using track_gen_bench::summarise;
using track_gen_bench::summary;
using host_course = tg::course<tg::presets::track_pipeline, tg::host_policy>;
using host_family_course = tg::course<tg::presets::family_pipeline, tg::host_policy>;
using host_any_family_course = tg::course<tg::presets::any_family_pipeline, tg::host_policy>;

// ---- FLOP model ---------------------------------------------------------------------------
/// Floating-point operations per unit of work of each stage, counted from the stage code
/// (include/track_gen/detail/stages/*.hpp, detail/math.hpp) with these rules: one FLOP per
/// float add, subtract, multiply, divide, square root, sine or cosine; comparisons, min/max,
/// clamps, negations, integer work (Philox, indices, the binary search's compares) and
/// int-to-float conversions count 0; a subexpression that appears twice in one function counts
/// once; constants fold (t0 = 0 in the spline). Helpers: dot 5, length 6 (dot + sqrt), float3
/// add/sub/scale 3, lerp(float3) 9, lerp(float) 3, normalize_or 10 (length, reciprocal, 3
/// multiplies), cross 9, closest_parameter 17 (b - a, dot, p - a, dot, divide).
struct flop_model {
  /// random_polar: per control point: uniform4 (4 multiplies by 2^-24), angle (5), radius and
  /// elevation lerps (3 + 3), r * cos, r * sin (2 + cos + sin = 4).
  static constexpr double polar_per_point = 4 + 5 + 3 + 3 + 4;
  /// random_polar, once: 2 pi / M (1) and the phase draw (4 + 1).
  static constexpr double polar_fixed = 6;
  /// repulsive, per (point, non-adjacent segment) test: the bounding-box test
  /// (detail::within_segment_box: 6 min/max, 6 offsets by the reach).
  static constexpr double repulsive_per_test = 6 + 6;
  /// repulsive, per test that passes the box test (a projection): closest_parameter 17, lerp 9,
  /// p - q 3, length 6.
  static constexpr double repulsive_per_projection = 17 + 9 + 3 + 6;
  /// repulsive, per pair closer than the clearance: side normal (normalize_or 10), direction
  /// (normalize_or 10), 0.5 * (clearance - d) (2), scale (3), accumulate (3).
  static constexpr double repulsive_per_push = 10 + 10 + 2 + 3 + 3;
  /// repulsive, per pushed point: midpoint of the neighbours (6), pull (3 + 3), accumulate (3).
  static constexpr double repulsive_per_pushed_point = 15;
  /// repulsive, per point per iteration: detail::separation_reach (6), control_next = p + push (3).
  static constexpr double repulsive_per_point = 6 + 3;
  /// catmull_rom_segment (power form of one segment): 3 centripetal knots (7 each: length +
  /// sqrt), the chord (p2 - p1) / d12 (3 + 1 + 3), each tangent (two knot-sum reciprocals or
  /// reciprocals, three differences, three scales, two adds, the scale by d12: 24), c2 (12) and
  /// c3 (9) = 97.
  static constexpr double spline_segment = 21 + 7 + 24 + 24 + 12 + 9;
  /// catmull_rom stage, once: 1 / samples_per_segment (1).
  static constexpr double catmull_rom_fixed = 1;
  /// A point of a segment's power form: Horner, three multiply-adds per coordinate = 18.
  static constexpr double spline_point = 18;
  /// catmull_rom stage, per dense sample: the local parameter (1 multiply) + spline_point.
  static constexpr double catmull_rom_per_dense = 1 + spline_point;
  /// resample, per dense sample: chord (sub 3 + length 6) and the scan's add (1).
  static constexpr double resample_per_dense = 9 + 1;
  /// resample, per output sample: s (2), span and fraction (3), local parameter (2), spline_point.
  static constexpr double resample_per_sample = 2 + 3 + 2 + spline_point;
  /// frames, per sample: tangent (sub 3 + normalize_or 10), left normal (10), the three side
  /// lengths (2 subs 6, 3 lengths 18, 2 multiplies), curvature (cross 9, length 6, 2), cusp dot 5.
  static constexpr double frames_per_sample = 13 + 10 + 26 + 17 + 5;
  /// checkpoints: G = floor(L / spacing) (1); per gate: fraction (1), centre lerp 9, normal
  /// lerp + normalize_or 19, half-width lerp 3, arc length (2).
  static constexpr double checkpoints_fixed = 1;
  static constexpr double checkpoints_per_gate = 1 + 9 + 19 + 3 + 2;
  /// validate, spacing test per sample: chord (sub 3 + length 6), 0.95 ds and 1.05 ds (2).
  static constexpr double spacing_per_sample = 11;
  /// validate, clearance test per evaluated pair: sub 3, dot 5, then the skip bound sqrt 1,
  /// sub 1, mul 1.
  static constexpr double clearance_per_pair = 11;
  /// validate, scalars: bounds, radius, 1 / radius, ds, window (about 10).
  static constexpr double validate_fixed = 10;
};

/// Pairs that the clearance test of stages::validate evaluates on the samples in `ws` (its loop
/// replayed: each sample i with partners i + o, o in (w, N/2], skipping the partners the chord
/// bound proves clear, and stopping at sample i's first pair closer than the clearance).
double clearance_pairs(const tg::detail::workspace& ws, const tg::track_params& p) {
  const int n = ws.num_samples;
  const int w = tg::stages::validate::window_samples(p, ws.length, n);
  const float c = 2.0f * p.half_width + p.validate.clearance_margin;
  const float inv_chord = 0.999f / (1.05f * (ws.length / static_cast<float>(n)));
  const int half = n / 2;
  double pairs = 0;
  for (int i = 0; i < n; ++i) {
    const int last = (n % 2 == 0) && i >= half ? half - 1 : half;
    for (int o = w + 1; o <= last;) {
      const int j = i + o < n ? i + o : i + o - n;
      const float3 d = tg::detail::f3(ws.position[j].x - ws.position[i].x, ws.position[j].y - ws.position[i].y,
                                      ws.position[j].z - ws.position[i].z);
      const float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
      pairs += 1;
      if (d2 < c * c) break;
      const float skip = (std::sqrt(d2) - c) * inv_chord;
      o += 1 + (skip < static_cast<float>(n) ? static_cast<int>(skip) : n);
    }
  }
  return pairs;
}

/// What one attempt (random or fallback) of one track did.
struct attempt_record {
  bool random = true;
  int control = 0, dense = 0;
  int iterations = 0;     ///< polygon separation iterations (overlap evaluations)
  double pushes = 0;      ///< (point, segment) pairs closer than the clearance, all iterations
  double projections = 0; ///< (point, segment) pairs within the box test's reach, all iterations
  double pushed_points = 0;
  float length = 0;
  int gates = 0;
  bool spacing = false, clearance = false, accepted = false;
  double clearance_pairs = 0;  ///< pairs the clearance test evaluated
};

/// FLOPs of one attempt per stage: polar, repulsive, spline, resample, frames, checkpoints, validate.
struct stage_flops {
  double v[7] = {0, 0, 0, 0, 0, 0, 0};
  double total() const {
    double t = 0;
    for (double x : v) t += x;
    return t;
  }
  void add(const stage_flops& o, double w = 1) {
    for (int i = 0; i < 7; ++i) v[i] += w * o.v[i];
  }
};
const char* const stage_names[7] = {"random_polar", "repulsive", "catmull_rom", "resample",
                                    "frames",       "checkpoints", "validate"};

stage_flops flops_of(const attempt_record& a, int n, const tg::track_params& p) {
  using m = flop_model;
  stage_flops f;
  if (a.random) {
    f.v[0] = m::polar_fixed + m::polar_per_point * a.control;
    const double tests = static_cast<double>(a.control) * (a.control - 4);
    f.v[1] = a.iterations * (tests * m::repulsive_per_test + a.control * m::repulsive_per_point) +
             a.projections * m::repulsive_per_projection + a.pushes * m::repulsive_per_push +
             a.pushed_points * m::repulsive_per_pushed_point;
  }
  f.v[2] = a.dense * m::catmull_rom_per_dense + a.control * m::spline_segment + m::catmull_rom_fixed;
  f.v[3] = a.dense * m::resample_per_dense + n * m::resample_per_sample;
  f.v[4] = n * m::frames_per_sample;
  f.v[5] = m::checkpoints_fixed + a.gates * m::checkpoints_per_gate;
  f.v[6] = m::validate_fixed;
  if (a.spacing) f.v[6] += n * m::spacing_per_sample;
  if (a.clearance) f.v[6] += a.clearance_pairs * m::clearance_per_pair;
  (void)p;
  return f;
}

/// The host block context, instrumented: the stages call reduce_max once per repulsive
/// iteration and once in frames, inclusive_sum once per attempt (resample), and all() once in
/// frames, once for the spacing test and once for the clearance test of validate. Those calls
/// mark where each attempt is; at each repulsive iteration the control points (not yet moved)
/// are inspected to count the pairs closer than the clearance.
struct counting_context : tg::detail::host_block_context {
  tg::detail::workspace* ws = nullptr;
  const tg::track_params* params = nullptr;
  float spacing = 1.0f;
  int max_gates = 1;
  mutable std::vector<attempt_record> attempts;
  mutable attempt_record current;
  mutable bool expect_frames = false;
  mutable int all_calls = 0;

  float reduce_max(float v) const {
    if (expect_frames) {  // frames: the attempt's length is known now
      expect_frames = false;
      current.length = ws->length;
      const float count = std::isfinite(ws->length) ? std::floor(ws->length / spacing) : 1.0f;
      current.gates = count < 1.0f ? 1 : (count > static_cast<float>(max_gates) ? max_gates : static_cast<int>(count));
    } else {  // a repulsive iteration, before the control points move
      ++current.iterations;
      count_pushes();
    }
    return v;
  }
  void inclusive_sum(float* data, int n) const {
    current.random = ws->source == tg::detail::track_source::random;
    current.control = ws->num_control;
    current.dense = ws->num_dense;
    expect_frames = true;
    all_calls = 0;
    host_block_context::inclusive_sum(data, n);
  }
  bool all(bool v) const {
    ++all_calls;
    if (all_calls == 2) current.spacing = true;
    if (all_calls == 3) {
      current.clearance = true;
      current.clearance_pairs = clearance_pairs(*ws, *params);
    }
    return v;
  }
  /// Called after each attempt's validate.
  void end_attempt() const {
    current.accepted = ws->valid;
    attempts.push_back(current);
    current = attempt_record{};
  }

 private:
  void count_pushes() const {
    using namespace tg::detail;
    const int m = ws->num_control;
    const float clearance = params->polygon_separation.clearance;
    for (int i = 0; i < m; ++i) {
      bool pushed = false;
      for (int j = 0; j < m; ++j) {
        const int rel = wrap(j - i, m);
        if (rel == 0 || rel == 1 || rel == m - 1 || rel == m - 2) continue;
        const float3 a = ws->control[j], b = ws->control[wrap(j + 1, m)];
        if (!within_segment_box(ws->control[i], a, b, separation_reach(clearance, ws->control[i]))) continue;
        current.projections += 1;
        const float d = length(ws->control[i] - lerp(a, b, closest_parameter(ws->control[i], a, b)));
        if (d < clearance) {
          current.pushes += 1;
          pushed = true;
        }
      }
      current.pushed_points += pushed ? 1 : 0;
    }
  }
};

/// stages::validate followed by the end of the attempt's record (the pipeline's last stage).
struct recording_validate {
  static constexpr tg::detail::stage_role role = tg::detail::stage_role::validate;
  static constexpr std::uint32_t stage_id = tg::stages::validate::stage_id;
  template <class Ctx>
  static void run(Ctx& ctx, tg::detail::workspace& ws, const tg::track_params& p) {
    tg::stages::validate::run(ctx, ws, p);
    ctx.end_attempt();
  }
};
using profiled_pipeline = tg::pipeline<tg::stages::random_polar, tg::stages::polygon_separation, tg::stages::catmull_rom,
                                       tg::stages::resample, tg::stages::frames, tg::stages::checkpoints,
                                       recording_validate>;

struct profile_result {
  int envs = 0;
  double random_attempts = 0;       ///< mean random attempts per track (the status count)
  double fallback_fraction = 0;     ///< tracks that ended with the fallback ellipse
  double iterations_per_random_attempt = 0, pushes_per_iteration = 0;
  double clearance_reached_fraction = 0;  ///< of all attempts (fallback included), those whose clearance test ran
  stage_flops all_attempts, accepted;     ///< mean per track
  double mean_gates = 0;
};

/// Generates `envs` tracks of episode 1 (as the first regenerate(advance) would) with the
/// instrumented context and averages the records per track.
profile_result run_profile(int envs, int n, float spacing, std::uint64_t seed) {
  using namespace tg::detail;
  tg::track_params p = tg::presets::track(1);
  p.num_samples = n;
  p.seed = seed;
  // Buffers for one env; env e's random streams come from env_offset = e.
  const int max_gates = static_cast<int>(std::ceil(p.validate.length_max / spacing));
  const int control_cap = std::max(p.polar.control_points, fallback_control_points);
  const scratch_layout layout = scratch_layout::make(control_cap, control_cap * p.spline.samples_per_segment, n);
  std::vector<unsigned char> scratch(layout.bytes);
  // One env's track arrays (the batch's field table); env e's random streams come from env_offset = e.
  tg::track_batch<tg::host_policy> batch(1, n, max_gates);
  const tg::track_arrays out = batch.view().arrays();

  profile_result r;
  r.envs = envs;
  double random_attempts = 0, fallbacks = 0, iterations = 0, pushes = 0, clearance = 0, attempts_total = 0;
  for (int e = 0; e < envs; ++e) {
    generate_args<no_env_hook> a{};
    a.params = p;
    a.params.env_offset = static_cast<std::uint32_t>(e);
    a.checkpoint_spacing = spacing;
    a.max_gates = max_gates;
    a.layout = layout;
    a.tracks = out;
    a.advance = true;
    out.episode[0] = 0;
    workspace ws;
    ws.bind_scratch(scratch.data(), layout);
    counting_context ctx;
    ctx.ws = &ws;
    ctx.params = &a.params;
    ctx.spacing = spacing;
    ctx.max_gates = max_gates;
    generate_env<profiled_pipeline>(ctx, ws, a, 0);
    for (const attempt_record& rec : ctx.attempts) {
      const stage_flops f = flops_of(rec, n, a.params);
      r.all_attempts.add(f);
      if (rec.accepted) r.accepted.add(f);
      attempts_total += 1;
      fallbacks += rec.random ? 0 : 1;
      if (rec.random) {
        random_attempts += 1;
        iterations += rec.iterations;
        pushes += rec.pushes;
      }
      clearance += rec.clearance ? 1 : 0;
    }
    r.mean_gates += out.num_gates[0];
  }
  const double inv = 1.0 / envs;
  r.all_attempts = [&] { stage_flops s; s.add(r.all_attempts, inv); return s; }();
  r.accepted = [&] { stage_flops s; s.add(r.accepted, inv); return s; }();
  r.random_attempts = random_attempts * inv;
  r.fallback_fraction = fallbacks * inv;
  r.iterations_per_random_attempt = random_attempts > 0 ? iterations / random_attempts : 0;
  r.pushes_per_iteration = iterations > 0 ? pushes / iterations : 0;
  r.clearance_reached_fraction = attempts_total > 0 ? clearance / attempts_total : 0;
  r.mean_gates *= inv;
  return r;
}

// ---- timing --------------------------------------------------------------------------------
struct options : track_gen_bench::common_options {
  int envs = 256;
  std::vector<int> samples = {256};
  int repeats = 20, warmup = 2;
  bool profile = false;
  int profile_envs = 1024;
  std::string family;  ///< empty: the track preset's own pipeline; else a generator family name
};

struct row {
  int samples = 0;
  summary wall{};
  double cpu_ms_median = 0;
  track_gen_bench::track_stats stats;
  bool profiled = false;
  profile_result profile;
};

/// The generator family named `name` (generator_family_names).
tg::generator_family family_named(const std::string& name) {
  for (int f = 0; f < tg::num_generator_families; ++f)
    if (name == tg::generator_family_names[f]) return static_cast<tg::generator_family>(f);
  throw std::invalid_argument("--family " + name + ": not a generator family");
}

template <class Course>
row run_samples_of(int n, const options& o) {
  tg::track_params params = tg::presets::track(o.envs);
  params.num_samples = n;
  params.seed = o.seed;
  if (!o.family.empty()) params.generator.family = family_named(o.family);
  Course course(params, o.spacing);
  for (int w = 0; w < o.warmup; ++w) course.regenerate(nullptr, true, {});
  std::vector<double> wall, cpu;
  for (int r = 0; r < o.repeats; ++r) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    course.regenerate(nullptr, true, {});
    const auto t1 = std::chrono::steady_clock::now();
    const std::clock_t c1 = std::clock();
    wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    cpu.push_back(1e3 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
  }
  row out;
  out.samples = n;
  out.wall = summarise(wall);
  out.cpu_ms_median = summarise(cpu).median;
  const tg::track_snapshot t = course.copy_tracks({});
  out.stats = track_gen_bench::stats_of(t.length.size(), t.length.data(), t.num_gates.data(), t.status.data());
  if (o.profile) {
    out.profiled = true;
    out.profile = run_profile(o.profile_envs, n, o.spacing, o.seed);
  }
  return out;
}

/// One row: the track preset's pipeline, or with --family the family pipeline with that family.
row run_samples(int n, const options& o) {
  if (o.family.empty()) return run_samples_of<host_course>(n, o);
  // presets::family_pipeline leaves the repulsive family out.
  return o.family == "repulsive" ? run_samples_of<host_any_family_course>(n, o) : run_samples_of<host_family_course>(n, o);
}

/// The options of the command line in `o`: -1 to go on, else the exit status.
int parse(int argc, char** argv, options& o) {
  using namespace track_gen_bench;
  CLI::App app("host_bench: single-thread generation rate of the host backend (preset track), in tracks per "
               "second per core; with --profile also the FLOPs per track per stage.");
  add_common_options(app, o);
  app.add_option("--envs", o.envs, "envs E regenerated per timed call")->check(at_least(1));
  app.add_option("--samples", o.samples, "samples N per track, one row each")
      ->delimiter(',')
      ->check(in_range(8, 4096));
  app.add_option("--repeats", o.repeats, "timed calls per row")->check(at_least(20));
  app.add_option("--warmup", o.warmup, "untimed calls before them")->check(at_least(0));
  app.add_flag("--profile", o.profile, "also count each stage's work and FLOPs per track (instrumented run)");
  app.add_option("--profile-envs", o.profile_envs, "tracks of episode 1 that --profile averages over")
      ->check(at_least(1));
  std::vector<std::string> families(tg::generator_family_names, tg::generator_family_names + tg::num_generator_families);
  app.add_option("--family", o.family,
                 "generate with this family through presets::family_pipeline (repulsive: any_family_pipeline; default: "
                 "the track preset's own pipeline)")
      ->check(CLI::IsMember(families))
      ->excludes("--profile");
  return track_gen_bench::parse(app, argc, argv);
}

/// The CPU's model name from /proc/cpuinfo ("unknown CPU" elsewhere).
std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

json flops_json(const stage_flops& f) {
  json j = json::object();
  for (int i = 0; i < 7; ++i) j[stage_names[i]] = number(f.v[i], "%.1f");
  j["total"] = number(f.total(), "%.1f");
  return j;
}

json profile_json(const profile_result& p) {
  return {{"envs", p.envs},
          {"episode", 1},
          {"random_attempts", number(p.random_attempts, "%.4f")},
          {"fallback_fraction", number(p.fallback_fraction, "%.6f")},
          {"repulsive_iterations_per_attempt", number(p.iterations_per_random_attempt, "%.4f")},
          {"pushes_per_iteration", number(p.pushes_per_iteration, "%.4f")},
          {"clearance_reached_fraction", number(p.clearance_reached_fraction, "%.4f")},
          {"mean_gates", number(p.mean_gates, "%.4f")},
          {"flops_per_track_all_attempts", flops_json(p.all_attempts)},
          {"flops_per_track_accepted_attempt", flops_json(p.accepted)}};
}

json flop_model_json() {
  using m = flop_model;
  const std::pair<const char*, double> counts[] = {
      {"polar_per_point", m::polar_per_point},
      {"polar_fixed", m::polar_fixed},
      {"repulsive_per_test", m::repulsive_per_test},
      {"repulsive_per_projection", m::repulsive_per_projection},
      {"repulsive_per_push", m::repulsive_per_push},
      {"repulsive_per_pushed_point", m::repulsive_per_pushed_point},
      {"repulsive_per_point", m::repulsive_per_point},
      {"spline_segment", m::spline_segment},
      {"catmull_rom_fixed", m::catmull_rom_fixed},
      {"spline_point", m::spline_point},
      {"catmull_rom_per_dense", m::catmull_rom_per_dense},
      {"resample_per_dense", m::resample_per_dense},
      {"resample_per_sample", m::resample_per_sample},
      {"frames_per_sample", m::frames_per_sample},
      {"checkpoints_fixed", m::checkpoints_fixed},
      {"checkpoints_per_gate", m::checkpoints_per_gate},
      {"spacing_per_sample", m::spacing_per_sample},
      {"clearance_per_pair", m::clearance_per_pair},
      {"validate_fixed", m::validate_fixed}};
  json j = json::object();
  for (const auto& [name, count] : counts) j[name] = number(count, "%g");
  return j;
}

json document(const std::vector<row>& rows, const options& o, const std::string& command) {
  json doc = track_gen_bench::document("track_gen_host", cpu_name() + " (1 thread)", command);
  doc["threads"] = 1;
  doc["gate_spacing_m"] = number(o.spacing, "%g");
  doc["seed"] = o.seed;
  doc["flop_model"] = flop_model_json();
  json& out = doc["rows"] = json::array();
  for (const row& r : rows) {
    json j = {{"scenario", "generate"}, {"E", o.envs}, {"N", r.samples}, {"repeats", o.repeats}};
    if (!o.family.empty()) j["family"] = o.family;
    j.update(track_gen_bench::summary_json(r.wall, "_ms"));
    j["cpu_median_ms"] = number(r.cpu_ms_median, "%.6f");
    j["tracks_per_s"] = number(o.envs / (r.wall.median * 1e-3), "%.6e");
    j["tracks_per_s_per_core"] = number(o.envs / (r.cpu_ms_median * 1e-3), "%.6e");
    j["stats"] = track_gen_bench::stats_json(r.stats);
    if (r.profiled) j["profile"] = profile_json(r.profile);
    out.push_back(std::move(j));
  }
  doc["errors"] = json::array();
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  const std::string command = track_gen_bench::command_line(argc, argv);
  try {
    std::printf("host_bench: %s, one thread; preset track%s%s, gate spacing %.2f m, seed %llu, E = %d envs per "
                "regenerate(all, advance), %d warm-up + %d timed calls (steady_clock)\ncommand: %s\n\n",
                cpu_name().c_str(), o.family.empty() ? "" : ", family_pipeline with family ", o.family.c_str(),
                static_cast<double>(o.spacing), static_cast<unsigned long long>(o.seed), o.envs,
                o.warmup, o.repeats, command.c_str());
    std::fflush(stdout);
    std::vector<row> rows;
    for (int n : o.samples) rows.push_back(run_samples(n, o));
    std::printf("| N | median ms per call (p10-p90) | CPU ms (median) | tracks/s/core (CPU time) | mean length m | mean gates | "
                "mean attempts | fallback |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const row& r : rows) {
      std::printf("| %d | %.3f (%.3f-%.3f) | %.3f | %.1f | %.2f | %.1f | %.3f | %.4f |\n", r.samples, r.wall.median,
                  r.wall.p10, r.wall.p90, r.cpu_ms_median, o.envs / (r.cpu_ms_median * 1e-3), r.stats.mean_length,
                  r.stats.mean_gates, r.stats.attempts, r.stats.fallback);
    }
    if (o.profile) {
      std::printf("\nFLOPs per track (flop_model, %d envs of episode 1 each): all attempts / accepted attempt\n\n",
                  o.profile_envs);
      std::printf("| N | random attempts | polygon separation iterations per attempt | clearance tests per attempt |");
      for (const char* s : stage_names) std::printf(" %s |", s);
      std::printf(" total |\n|---:|---:|---:|---:|");
      for (int i = 0; i < 8; ++i) std::printf("---:|");
      std::printf("\n");
      for (const row& r : rows) {
        const profile_result& p = r.profile;
        std::printf("| %d | %.3f | %.2f | %.3f |", r.samples, p.random_attempts, p.iterations_per_random_attempt,
                    p.clearance_reached_fraction);
        for (int i = 0; i < 7; ++i) std::printf(" %.0f / %.0f |", p.all_attempts.v[i], p.accepted.v[i]);
        std::printf(" %.0f / %.0f |\n", p.all_attempts.total(), p.accepted.total());
      }
    }
    if (!o.json.empty()) track_gen_bench::write_json(o.json, document(rows, o, command));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "host_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

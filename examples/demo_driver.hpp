#pragma once
/// @file
/// The track_gen demo, written once for both backends: E agents, each a car with a box
/// footprint driven by a pure-pursuit controller with noise along its own track, a kinematic
/// bicycle model, progress tracking by the library, off-road detection by the footprint's
/// collision with the road band (collision.hpp), spawns at random points along the track
/// (spawn.hpp), and regeneration of the tracks of the environments whose episode ended. The
/// picture shows the road borders, cones along them (props.hpp) and the centreline coloured by
/// its speed profile (speed_profile.hpp).
///
/// The per-env logic (`demo_env_step`) is a `TRACK_GEN_HD` function: one CUDA thread per env
/// runs it on the GPU (examples/cuda_executor.cuh), a plain loop runs it on the host
/// (`host_executor` below). `run_demo` is templated on the executor, which supplies memory,
/// the per-env launch, synchronisation and the timing of the regenerate calls.
///
/// One simulation step, in stream order:
///   1. `demo_env_step` for every env: read the progress left by the previous `course.step`;
///      if the env was just (re)generated, spawn the agent at a random arc length facing the
///      direction of travel (`course_ref::spawn` resets its progress as if it stood there: no
///      lap counts before a full circuit from that point); otherwise test the car's footprint
///      against the road band at the position the last step saw (`collide_box`, warm-started
///      from the progress hint); if its episode is over (target laps, a corner off the road, or
///      the time limit), set `done[e]` and leave the agent where it is; otherwise run the
///      controller and the vehicle model and write the new position.
///   2. `course.step(stream)`: progress, gates, laps, off-track (the bound positions).
///   3. `course.regenerate(done, /*advance=*/true, stream)`: new tracks for the finished envs,
///      whose progress is reset (has_last cleared), which step 1 of the next iteration sees.

#include "svg.hpp"

#include <track_gen/track_gen.hpp>
#include <track_gen/detail/math.hpp>

#include <Random123/philox.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace track_gen_examples {

namespace tg = track_gen;

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/// Command-line options of the demo.
struct demo_options {
  int envs = 4096;            ///< E
  int steps = 2000;           ///< T simulation steps
  int warmup = 50;            ///< first steps left out of the timings
  int laps = 2;               ///< laps that end an episode successfully
  int max_episode_steps = 2000;  ///< time limit of an episode (truncation)
  float dt = 0.05f;           ///< step [s]
  float noise = 1.0f;         ///< scale of the steering and speed noise
  std::uint64_t seed = 7;     ///< seed of the tracks and of the noise
  std::string svg = "track_gen_demo.svg";
  bool force_host = false;    ///< run the host backend even when a GPU is present
};

inline void print_usage(const char* argv0) {
  std::printf(
      "usage: %s [options]\n"
      "  --envs N        environments (default 4096)\n"
      "  --steps T       simulation steps (default 2000)\n"
      "  --warmup W      steps left out of the timings (default 50)\n"
      "  --laps K        laps that end an episode (default 2)\n"
      "  --max-episode-steps S  time limit of an episode (default 2000)\n"
      "  --dt S          time step in seconds (default 0.05)\n"
      "  --noise X       scale of the controller noise (default 1, 0 = none)\n"
      "  --seed S        seed of tracks and noise (default 7)\n"
      "  --svg PATH      picture of the first tracks (default track_gen_demo.svg, '' = none)\n"
      "  --host          use the CPU backend even when a GPU is present\n",
      argv0);
}

/// Parses argv into `o`; false (after printing why) on a bad or unknown option.
inline bool parse_options(int argc, char** argv, demo_options& o) {
  auto need = [&](int& i) -> const char* {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", argv[i]);
      return nullptr;
    }
    return argv[++i];
  };
  std::string expected;  // the valid values of the option being parsed, for the error message
  auto to_long = [&expected](const char* s, long lo, long hi, long& out) {
    expected = "a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return false;
    out = v;
    return true;
  };
  auto to_float = [&expected](const char* s, float lo, float hi, float& out) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "a number in [%g, %g]", static_cast<double>(lo), static_cast<double>(hi));
    expected = buf;
    char* end = nullptr;
    const float v = std::strtof(s, &end);
    if (end == s || *end != '\0' || !(v >= lo && v <= hi)) return false;
    out = v;
    return true;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    long v = 0;
    const char* s = nullptr;
    bool ok = true;
    if (a == "--help" || a == "-h") {
      print_usage(argv[0]);
      std::exit(0);
    } else if (a == "--host") {
      o.force_host = true;
    } else if (a == "--envs") {
      ok = (s = need(i)) && to_long(s, 1, 1L << 26, v);
      o.envs = static_cast<int>(v);
    } else if (a == "--steps") {
      ok = (s = need(i)) && to_long(s, 1, 1L << 30, v);
      o.steps = static_cast<int>(v);
    } else if (a == "--warmup") {
      ok = (s = need(i)) && to_long(s, 0, 1L << 30, v);
      o.warmup = static_cast<int>(v);
    } else if (a == "--laps") {
      ok = (s = need(i)) && to_long(s, 1, 1000, v);
      o.laps = static_cast<int>(v);
    } else if (a == "--max-episode-steps") {
      ok = (s = need(i)) && to_long(s, 1, 1L << 24, v);
      o.max_episode_steps = static_cast<int>(v);
    } else if (a == "--seed") {
      ok = (s = need(i)) && to_long(s, 0, 0x7fffffffL, v);
      o.seed = static_cast<std::uint64_t>(v);
    } else if (a == "--dt") {
      ok = (s = need(i)) && to_float(s, 1e-4f, 1.0f, o.dt);
    } else if (a == "--noise") {
      ok = (s = need(i)) && to_float(s, 0.0f, 100.0f, o.noise);
    } else if (a == "--svg") {
      ok = (s = need(i)) != nullptr;
      if (ok) o.svg = s;
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      print_usage(argv[0]);
      return false;
    }
    if (!ok) {
      if (s != nullptr) std::fprintf(stderr, "bad value for %s: %s (expected %s)\n", a.c_str(), s, expected.c_str());
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Per-env state and logic (host and device)
// ---------------------------------------------------------------------------------------------

/// Constants of the agents, their controller and their noise (by value into the kernel).
struct agent_config {
  std::uint64_t seed;
  int target_laps;
  int max_episode_steps;
  float dt;             ///< [s]
  float wheelbase;      ///< [m]: a 1:10 RC car
  float max_steer;      ///< [rad]
  float speed_min, speed_max;  ///< range of the per-episode cruise speed [m/s]
  float lateral_accel;  ///< curvature speed limit v <= sqrt(a / kappa) [m/s^2]
  float accel, brake;   ///< longitudinal limits [m/s^2]
  float lookahead_time; ///< pure-pursuit look-ahead distance = time * speed, clamped:
  float lookahead_min, lookahead_max;  ///< [m]
  float half_length, half_width;  ///< the car's footprint: half extents [m] (collision box)
  float steer_noise;    ///< std. dev. of the steering noise [rad]
  float speed_noise;    ///< std. dev. of the relative speed-command noise
  int trail_envs;       ///< envs whose path is recorded for the picture
  int trail_capacity;   ///< points per recorded path
};

/// One agent: the rear-axle reference point of a kinematic bicycle.
struct agent_state {
  float x, y, yaw, speed;  ///< [m], [m], [rad], [m/s]
  float cruise_speed;      ///< this episode's target speed [m/s]
  int episode_steps;       ///< steps since the respawn
  int trail_length;        ///< recorded points of this episode (trail envs only)
  float spawn_s;           ///< arc length of this episode's spawn point [m]
  float clearance;         ///< the footprint's signed clearance at the last test [m] (collision.hpp)
  std::uint32_t episode;   ///< track episode the agent was spawned on
};

/// Per-env counters, summed on the host at the end (no atomics needed: one writer per env).
struct env_stats {
  int ended_laps;       ///< episodes ended by completing the target laps
  int ended_off_track;  ///< episodes ended by a corner of the footprint off the road
  int ended_timeout;    ///< episodes ended by the time limit
  int laps;             ///< laps completed in ended episodes
  int tracks;           ///< tracks driven on (one per spawn)
  int tracks_valid;     ///< of which status::valid
  int tracks_fallback;  ///< of which status::fallback
};

/// Four uniform floats in [0, 1) for (env, step, purpose): Random123's Philox-4x32-10
/// (Salmon et al., SC'11). Counter = (global env, step, purpose, "demo"), key = the seed, so
/// the noise is the same on both backends and independent of the launch shape; the constant
/// fourth word keeps these counters apart from the generator's (whose fourth word is a small
/// draw index).
TRACK_GEN_HD inline void demo_uniform4(std::uint64_t seed, std::uint32_t env, std::uint32_t step,
                                       std::uint32_t purpose, float out[4]) {
  r123::Philox4x32 gen;
  const r123::Philox4x32::ctr_type ctr = {{env, step, purpose, 0x64656d6fu}};
  const r123::Philox4x32::key_type key = {{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  const r123::Philox4x32::ctr_type r = gen(ctr, key);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<float>(r[i] >> 8) * (1.0f / 16777216.0f);
}

/// Standard normal deviate from two uniforms in [0, 1) (Box & Muller, 1958).
TRACK_GEN_HD inline float demo_gaussian(float u0, float u1) {
  const float r = std::sqrt(-2.0f * std::log(1.0f - u0));  // 1 - u0 in (0, 1]
  return r * std::cos(2.0f * tg::detail::pi * u1);
}

/// Centreline point of `tr` at arc length `s` [m] (any real s: wrapped to [0, L)).
TRACK_GEN_HD inline float3 point_at(const tg::track_ref& tr, float s) {
  const int n = tr.num_samples();
  const float u = s / tr.sample_spacing();
  const float fl = std::floor(u);
  int k = static_cast<int>(fl) % n;
  if (k < 0) k += n;
  const int k1 = k + 1 == n ? 0 : k + 1;
  return tg::detail::lerp(tr.position(k), tr.position(k1), u - fl);
}

/// The car's collision box: its footprint centred half a wheelbase ahead of the rear axle (the
/// bicycle's reference point), turned by the yaw (a unit quaternion about +z, x y z w).
TRACK_GEN_HD inline tg::box car_box(const agent_state& a, const agent_config& c) {
  const float cy = std::cos(a.yaw), sy = std::sin(a.yaw);
  const float ahead = 0.5f * c.wheelbase;
  return {tg::detail::f3(a.x + ahead * cy, a.y + ahead * sy, 0.0f),
          {0.0f, 0.0f, std::sin(0.5f * a.yaw), std::cos(0.5f * a.yaw)},
          {c.half_length, c.half_width}};
}

/// Purposes of the noise draws (third counter word).
enum : std::uint32_t { noise_spawn = 1, noise_drive = 2 };

/// One step of env e (see the file comment). Called once per env per step, by one thread.
TRACK_GEN_HD inline void demo_env_step(const tg::course_ref& view, int e, int step, const agent_config& c,
                                       agent_state* agents, float3* positions, std::int32_t* done,
                                       env_stats* stats, float3* trail) {
  using namespace tg::detail;
  const tg::progress_state pr = view.progress(e);
  const tg::track_ref tr = view.track(e);
  agent_state a = agents[e];
  env_stats st = stats[e];
  float rnd[4];

  if ((pr.flags & tg::progress_flags::has_last) == 0u) {
    // A fresh track (construction or regenerate): spawn at a random arc length on the
    // centreline, facing the direction of travel. course_ref::spawn resets the env's progress
    // as if the agent stood there (its next gate, a lap after a full circuit from s), with the
    // spawn pose as its last position, so the next course.step sees no motion.
    demo_uniform4(c.seed, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(step), noise_spawn, rnd);
    const float spawn_s = rnd[1] * tr.length();
    const tg::track_pose pose = tg::spawn_pose(tr, spawn_s);
    view.spawn(e, spawn_s);
    a.x = pose.position.x;
    a.y = pose.position.y;
    a.yaw = pose.yaw;
    a.cruise_speed = lerp(c.speed_min, c.speed_max, rnd[0]);
    a.speed = 0.5f * a.cruise_speed;
    a.episode_steps = 0;
    a.trail_length = 0;
    a.spawn_s = pose.s;
    a.clearance = tg::collide_box(tr, car_box(a, c), pose.hint, 8).clearance;
    a.episode = view.tracks().episode[e];
    const std::uint32_t s = tr.status();
    st.tracks += 1;
    st.tracks_valid += (s & tg::status::valid) != 0u ? 1 : 0;
    st.tracks_fallback += (s & tg::status::fallback) != 0u ? 1 : 0;
    done[e] = 0;
  } else {
    const bool finished = pr.laps >= c.target_laps;
    // The footprint where course.step last saw the agent, warm-started from its hint.
    const tg::box_contact contact = tg::collide_box(tr, car_box(a, c), pr.hint, 8);
    a.clearance = contact.clearance;
    const bool off = (contact.flags & tg::contact_flags::out_of_bounds) != 0u;
    const bool timeout = a.episode_steps >= c.max_episode_steps;
    if (finished || off || timeout) {
      // Episode over: regenerate() of this iteration gives the env a new track; the agent
      // stays put meanwhile (course.step sees no motion).
      st.ended_laps += finished ? 1 : 0;
      st.ended_off_track += (!finished && off) ? 1 : 0;
      st.ended_timeout += (!finished && !off) ? 1 : 0;
      st.laps += pr.laps;
      done[e] = 1;
      agents[e] = a;
      stats[e] = st;
      return;
    }
    done[e] = 0;
    demo_uniform4(c.seed, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(step), noise_drive, rnd);

    // Speed command: the episode's cruise speed, limited by the sharpest curvature within the
    // braking distance ahead (v <= sqrt(a_lat / kappa)), with multiplicative noise.
    const float s0 = pr.lap_progress;  // arc length of the current position, from course.step
    const float ds = tr.sample_spacing();
    const float preview = c.lookahead_max + a.speed * a.speed / (2.0f * c.brake);
    const int n = tr.num_samples();
    const int k0 = static_cast<int>(s0 / ds);
    int span = static_cast<int>(std::ceil(preview / ds));
    span = span < 1 ? 1 : (span > n ? n : span);
    float kappa = 0.0f;
    for (int i = 0; i <= span; ++i) kappa = max_f(kappa, std::fabs(tr.curvature(wrap(k0 + i, n))));
    float v_cmd = min_f(a.cruise_speed, std::sqrt(c.lateral_accel / max_f(kappa, 1e-3f)));
    v_cmd *= max_f(0.0f, 1.0f + c.speed_noise * demo_gaussian(rnd[2], rnd[3]));
    a.speed += clamp_f(v_cmd - a.speed, -c.brake * c.dt, c.accel * c.dt);

    // Pure pursuit (R. C. Coulter, CMU-RI-TR-92-01, 1992): the goal point lies one look-ahead
    // distance further along the path; the arc through the vehicle and the goal, tangent to the
    // heading, has curvature gamma = 2 y / l^2 (y: the goal's offset across the heading, l: its
    // distance). A bicycle follows curvature gamma with steering angle atan(wheelbase * gamma).
    const float ld = clamp_f(c.lookahead_time * a.speed, c.lookahead_min, c.lookahead_max);
    const float3 goal = point_at(tr, s0 + ld);
    const float dx = goal.x - a.x, dy = goal.y - a.y;
    const float cy = std::cos(a.yaw), sy = std::sin(a.yaw);
    const float y_local = -sy * dx + cy * dy;
    const float l2 = max_f(dx * dx + dy * dy, 1e-6f);
    const float gamma = 2.0f * y_local / l2;
    float steer = std::atan(c.wheelbase * gamma) + c.steer_noise * demo_gaussian(rnd[0], rnd[1]);
    steer = clamp_f(steer, -c.max_steer, c.max_steer);

    // Kinematic bicycle, rear-axle reference, explicit Euler.
    a.x += a.speed * cy * c.dt;
    a.y += a.speed * sy * c.dt;
    a.yaw += a.speed / c.wheelbase * std::tan(steer) * c.dt;
    a.episode_steps += 1;
  }

  const float3 p = f3(a.x, a.y, 0.0f);
  positions[e] = p;
  if (e < c.trail_envs && a.trail_length < c.trail_capacity) {
    trail[static_cast<std::size_t>(e) * c.trail_capacity + a.trail_length] = p;
    a.trail_length += 1;
  }
  agents[e] = a;
  stats[e] = st;
}

/// The per-env launch body: a functor so that a CUDA kernel and a host loop can both call it.
struct demo_step_fn {
  tg::course_ref view;
  agent_config config;
  agent_state* agents;
  float3* positions;
  std::int32_t* done;
  env_stats* stats;
  float3* trail;
  int step;
  TRACK_GEN_HD void operator()(int e) const { demo_env_step(view, e, step, config, agents, positions, done, stats, trail); }
};

// ---------------------------------------------------------------------------------------------
// Host executor
// ---------------------------------------------------------------------------------------------

/// Runs the demo on the CPU with the host backend: memory is host memory, the per-env launch
/// is a loop, regenerate calls are timed with the steady clock.
class host_executor {
 public:
  using policy_type = tg::host_policy;
  explicit host_executor(std::string why) : why_(std::move(why)) {}

  tg::host_stream stream() const { return {}; }
  std::string describe() const { return "host (CPU reference backend, one thread; " + why_ + ")"; }

  template <class T>
  T* allocate(std::size_t n) {
    T* p = static_cast<T*>(std::calloc(n == 0 ? 1 : n, sizeof(T)));
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  template <class T>
  void deallocate(T* p) { std::free(p); }
  template <class T>
  void download(T* dst, const T* src, std::size_t n) { std::memcpy(dst, src, n * sizeof(T)); }
  template <class F>
  void for_each_env(int n, const F& f) {
    for (int e = 0; e < n; ++e) f(e);
  }
  void synchronize() {}

  void reset_regenerate_timer() { regen_seconds_ = 0.0; }
  void begin_regenerate() { regen_start_ = std::chrono::steady_clock::now(); }
  void end_regenerate() {
    regen_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - regen_start_).count();
  }
  /// Seconds spent in the timed regenerate calls (after synchronize()).
  double regenerate_seconds() { return regen_seconds_; }

 private:
  std::string why_;
  std::chrono::steady_clock::time_point regen_start_{};
  double regen_seconds_ = 0.0;
};

/// Memory of one executor, released with the object.
template <class T, class Exec>
class exec_array {
 public:
  exec_array(Exec& ex, std::size_t n) : ex_(ex), n_(n), p_(ex.template allocate<T>(n)) {}
  exec_array(const exec_array&) = delete;
  exec_array& operator=(const exec_array&) = delete;
  ~exec_array() { ex_.deallocate(p_); }
  T* get() const { return p_; }
  std::vector<T> to_host() const {
    std::vector<T> h(n_);
    ex_.download(h.data(), p_, n_);
    return h;
  }

 private:
  Exec& ex_;
  std::size_t n_;
  T* p_;
};

// ---------------------------------------------------------------------------------------------
// Picture
// ---------------------------------------------------------------------------------------------

/// A view of a host snapshot's arrays, so that the library's device functions (speed_profile,
/// border_cones) run on the host copy.
inline tg::track_batch_ref snapshot_view(tg::track_snapshot& t) {
  tg::track_arrays a;
#define DEMO_SNAPSHOT_POINTER(name, type, ext, doc) a.name = t.name.data();
  TRACK_GEN_TRACK_FIELDS(DEMO_SNAPSHOT_POINTER)
#undef DEMO_SNAPSHOT_POINTER
  return tg::track_batch_ref(a, t.num_envs, t.num_samples, t.max_gates);
}

/// Colour of speed v in [v_min, v_max] on a blue-green-yellow-red ramp (slow corners blue).
inline std::string speed_colour(float v, float v_min, float v_max) {
  static const float stops[4][3] = {{49, 54, 149}, {26, 152, 80}, {254, 224, 62}, {215, 48, 39}};
  const float u = std::min(std::max((v - v_min) / std::max(v_max - v_min, 1e-6f), 0.0f), 1.0f) * 3.0f;
  const int i = std::min(static_cast<int>(u), 2);
  const float f = u - static_cast<float>(i);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
  return buf;
}

/// Draws the first `count` tracks (3 per row): track surface, borders (the left and right edge
/// samples), cones along both borders every `cone_spacing` metres (border_cones), the
/// centreline coloured by its speed profile under `limits` (speed_profile), gates across the
/// track (gate 0 in red), the agent's path on that track since its spawn (a diamond where it
/// spawned) and its footprint where it is now; a legend strip under the panels names each mark.
inline bool write_svg(const std::string& path, tg::track_snapshot& t, const tg::progress_snapshot& p,
                      const std::vector<agent_state>& agents, const std::vector<float3>& trail, const agent_config& cfg,
                      const tg::speed_limits& limits, float cone_spacing, int count) {
  const int cols = 3, cell = 420, caption = 34, legend = 30;
  const int trail_capacity = cfg.trail_capacity;
  const tg::track_batch_ref batch = snapshot_view(t);
  // Every panel's speed profile first, so that the colour ramp spans the slowest corner drawn.
  const std::size_t n_samples = static_cast<std::size_t>(t.num_samples);
  std::vector<float> speeds(static_cast<std::size_t>(count) * n_samples);
  for (int i = 0; i < count; ++i) tg::speed_profile(batch.track(i), limits, speeds.data() + i * n_samples);
  const float v_min = std::floor(2.0f * *std::min_element(speeds.begin(), speeds.end())) / 2.0f;
  std::vector<float3> cones;
  const int rows = (count + cols - 1) / cols;
  svg_document doc(cols * cell, rows * (cell + caption) + legend);
  for (int i = 0; i < count; ++i) {
    const int n = t.num_samples;
    std::vector<pt2> left(n), right(n), centre(n);
    pt2 lo{1e30f, 1e30f}, hi{-1e30f, -1e30f};
    for (int k = 0; k < n; ++k) {
      const std::size_t j = t.sample_index(i, k);
      const float3 c = t.position[j], l = t.border_left[j], r = t.border_right[j];
      centre[k] = {c.x, c.y};
      left[k] = {l.x, l.y};
      right[k] = {r.x, r.y};
      for (const pt2 q : {left[k], right[k]}) {
        lo = {std::min(lo.x, q.x), std::min(lo.y, q.y)};
        hi = {std::max(hi.x, q.x), std::max(hi.y, q.y)};
      }
    }
    const float ox = static_cast<float>((i % cols) * cell), oy = static_cast<float>((i / cols) * (cell + caption));
    const panel_map m = panel_map::fit(ox, oy + caption, cell, cell, lo, hi, 12.0f);
    auto map_all = [&](const std::vector<pt2>& v) {
      std::vector<pt2> r(v.size());
      for (std::size_t k = 0; k < v.size(); ++k) r[k] = m(v[k]);
      return r;
    };
    doc.rect(ox + 2, oy + 2, cell - 4, cell + caption - 4, "none", "#ccc");
    doc.ring(map_all(left), map_all(right), "#e4e4e4");
    doc.polyline(map_all(left), true, "#333", 1.2f);
    doc.polyline(map_all(right), true, "#333", 1.2f);
    const tg::track_ref tr = batch.track(i);
    const float* speed = speeds.data() + i * n_samples;
    for (int k = 0; k < n; ++k)
      doc.line(m(centre[k]), m(centre[k + 1 == n ? 0 : k + 1]), speed_colour(speed[k], v_min, limits.max_speed).c_str(),
               2.0f, "stroke-linecap=\"round\"");
    for (const tg::border_side side : {tg::border_side::left, tg::border_side::right}) {
      cones.resize(static_cast<std::size_t>(tg::prop_count(tg::border_length(tr, side), cone_spacing)));
      const int made = tg::border_cones(tr, side, cone_spacing, cones.data(), static_cast<int>(cones.size()));
      for (int c = 0; c < made; ++c) doc.circle(m({cones[c].x, cones[c].y}), 2.2f, "#f28e2b");
    }
    for (int g = 0; g < t.num_gates[i]; ++g) {
      const std::size_t j = t.gate_index(i, g);
      const float3 c = t.gate_centre[j], nrm = t.gate_normal[j];
      const float hw = t.gate_half_width[j];
      const pt2 l{-nrm.y, nrm.x};  // horizontal left axis of the gate
      const pt2 a{c.x + hw * l.x, c.y + hw * l.y}, b{c.x - hw * l.x, c.y - hw * l.y};
      doc.line(m(a), m(b), g == 0 ? "#d62728" : "#2ca02c", g == 0 ? 3.0f : 1.0f);
    }
    // The agent's path, if it belongs to the track in the snapshot (an env regenerated by the
    // last iteration has a new track and no path on it yet).
    const agent_state& a = agents[i];
    if (a.episode == t.episode[i] && a.trail_length > 0) {
      std::vector<pt2> driven(a.trail_length);
      for (int k = 0; k < a.trail_length; ++k) {
        const float3 q = trail[static_cast<std::size_t>(i) * trail_capacity + k];
        driven[k] = m({q.x, q.y});
      }
      doc.polyline(driven, false, "#7b3294", 1.0f);
      const pt2 d0 = driven.front();
      doc.polyline({{d0.x, d0.y - 5}, {d0.x + 5, d0.y}, {d0.x, d0.y + 5}, {d0.x - 5, d0.y}}, true, "#7b3294", 1.4f);
      // The footprint now: collide_box's corners (box_footprint), drawn as a closed outline.
      const tg::box_footprint fp = tg::footprint(car_box(a, cfg));
      std::vector<pt2> outline(4);
      for (int c = 0; c < 4; ++c) outline[c] = m({fp.corner[c].x, fp.corner[c].y});
      doc.polyline(outline, true, a.clearance < 0.0f ? "#d62728" : "#111", 1.6f);
    }
    char line[256];
    const std::uint32_t s = t.status[i];
    std::snprintf(line, sizeof line, "env %d  episode %u  L = %.1f m  %d gates  %s%s  attempts %d", i, t.episode[i],
                  static_cast<double>(t.length[i]), t.num_gates[i], (s & tg::status::valid) ? "valid" : "INVALID",
                  (s & tg::status::fallback) ? " (fallback)" : "", tg::status::attempts(s));
    doc.text({ox + 10, oy + 16}, 12.0f, line);
    std::snprintf(line, sizeof line, "spawn s %.1f m  laps %d  gates %d  next %d  clearance %+.2f m",
                  static_cast<double>(a.spawn_s), p.laps[i], p.gates_passed[i], p.next_gate[i],
                  static_cast<double>(a.clearance));
    doc.text({ox + 10, oy + 30}, 11.0f, line, "#555");
  }
  // Legend strip under the panels: one sample of each mark drawn above, in the same style.
  const float ly = static_cast<float>(rows * (cell + caption)) + legend * 0.5f;
  float lx = 12.0f;
  auto label = [&](const char* what, float width) {
    doc.text({lx + 26, ly + 4}, 11.0f, what, "#333");
    lx += 26 + width;
  };
  doc.rect(lx, ly - 6, 20, 12, "#e4e4e4", "none");
  label("road surface", 90);
  doc.line({lx, ly}, {lx + 20, ly}, "#333", 1.2f);
  label("road borders", 90);
  for (int k = 0; k < 20; ++k)
    doc.line({lx + k, ly}, {lx + k + 1, ly},
             speed_colour(v_min + (limits.max_speed - v_min) * k / 19.0f, v_min, limits.max_speed).c_str(), 2.2f);
  char ramp[96];
  std::snprintf(ramp, sizeof ramp, "speed profile %.1f-%.1f m/s", static_cast<double>(v_min),
                static_cast<double>(limits.max_speed));
  label(ramp, 150);
  doc.circle({lx + 10, ly}, 2.2f, "#f28e2b");
  label("cones", 50);
  doc.line({lx + 10, ly - 7}, {lx + 10, ly + 7}, "#d62728", 3.0f);
  label("gate 0 (start)", 95);
  doc.line({lx + 10, ly - 7}, {lx + 10, ly + 7}, "#2ca02c", 1.0f);
  label("gates", 45);
  doc.line({lx, ly}, {lx + 20, ly}, "#7b3294", 1.0f);
  label("path since the spawn (diamond)", 190);
  doc.rect(lx + 4, ly - 4, 12, 8, "none", "#111");
  label("footprint (red: off the road)", 180);
  return doc.save(path);
}

// ---------------------------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------------------------

/// The tracks of envs [0, count) only, as a snapshot of `count` envs (env-major storage: they
/// are the first elements of every array), downloaded through the executor.
template <class Exec>
tg::track_snapshot head_tracks(Exec& ex, const tg::course_ref& view, int count) {
  return tg::copy_snapshot(view.batch(), 0, count, [&](void* dst, const void* src, std::size_t bytes) {
    ex.download(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), bytes);
  });
}

/// The progress of envs [0, count) only (the fields the picture shows).
template <class Exec>
tg::progress_snapshot head_progress(Exec& ex, const tg::course_ref& view, int count) {
  const tg::progress_arrays& a = view.progress_data();
  tg::progress_snapshot p;
  const std::size_t n = static_cast<std::size_t>(count);
  auto get = [&](auto& dst, const auto* src) {
    dst.resize(n);
    ex.download(dst.data(), src, n);
  };
  get(p.next_gate, a.next_gate);
  get(p.laps, a.laps);
  get(p.gates_passed, a.gates_passed);
  get(p.lateral, a.lateral);
  return p;
}

inline env_stats sum_stats(const std::vector<env_stats>& v) {
  env_stats s{};
  for (const env_stats& x : v) {
    s.ended_laps += x.ended_laps;
    s.ended_off_track += x.ended_off_track;
    s.ended_timeout += x.ended_timeout;
    s.laps += x.laps;
    s.tracks += x.tracks;
    s.tracks_valid += x.tracks_valid;
    s.tracks_fallback += x.tracks_fallback;
  }
  return s;
}

inline long long ended(const env_stats& s) {
  return static_cast<long long>(s.ended_laps) + s.ended_off_track + s.ended_timeout;
}

/// Runs the demo with executor `ex` and prints the summary. Returns the process exit code.
template <class Exec>
int run_demo(const demo_options& o, Exec& ex) {
  using course_type = tg::course<tg::presets::track_pipeline, typename Exec::policy_type>;
  const int E = o.envs;

  tg::track_params params = tg::presets::track(E);
  params.seed = o.seed;
  const float gate_spacing = 2.0f;  // [m]: about 18-28 gates on the preset's 36-56 m tracks

  agent_config cfg{};
  cfg.seed = o.seed;
  cfg.target_laps = o.laps;
  cfg.max_episode_steps = o.max_episode_steps;
  cfg.dt = o.dt;
  cfg.wheelbase = 0.26f;
  cfg.max_steer = 0.6f;  // turn radius 0.26 / tan(0.6) = 0.38 m: just under the preset's 0.4 m
  cfg.speed_min = 2.0f;
  cfg.speed_max = 4.0f;
  cfg.lateral_accel = 6.0f;
  cfg.accel = 4.0f;
  cfg.brake = 8.0f;
  cfg.lookahead_time = 0.25f;
  cfg.lookahead_min = 0.35f;
  cfg.lookahead_max = 1.0f;
  cfg.half_length = 0.20f;  // a 1:10 RC car: 0.40 m x 0.19 m, on a road 0.6 m wide
  cfg.half_width = 0.095f;
  // About one episode in ten ends with a corner off the road (host, 1,024 envs x 1,000 steps:
  // 116 of 1,181 episodes; noise x0.5: 25 of 1,118, x0.7: 347 of 1,336).
  cfg.steer_noise = 0.10f * o.noise;
  cfg.speed_noise = 0.09f * o.noise;
  cfg.trail_envs = std::min(E, 6);
  cfg.trail_capacity = o.max_episode_steps + 2;

  const auto t_setup = std::chrono::steady_clock::now();
  course_type course(params, gate_spacing, ex.stream());
  exec_array<float3, Exec> positions(ex, E);
  exec_array<std::int32_t, Exec> done(ex, E);
  exec_array<agent_state, Exec> agents(ex, E);
  exec_array<env_stats, Exec> stats(ex, E);
  exec_array<float3, Exec> trail(ex, static_cast<std::size_t>(cfg.trail_envs) * cfg.trail_capacity);
  course.bind(positions.get());
  ex.synchronize();
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_setup).count();

  demo_step_fn fn{course.view(), cfg, agents.get(), positions.get(), done.get(), stats.get(), trail.get(), 0};
  const int warm = std::min(o.warmup, o.steps);
  long long ended_at_warm = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < o.steps; ++t) {
    if (t == warm) {
      ex.synchronize();
      ended_at_warm = ended(sum_stats(stats.to_host()));
      ex.reset_regenerate_timer();
      t0 = std::chrono::steady_clock::now();
    }
    fn.step = t;
    ex.for_each_env(E, fn);
    course.step(ex.stream());
    const bool timed = t >= warm;
    if (timed) ex.begin_regenerate();
    course.regenerate(done.get(), /*advance=*/true, ex.stream());
    if (timed) ex.end_regenerate();
  }
  ex.synchronize();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double regen_s = ex.regenerate_seconds();

  const env_stats total = sum_stats(stats.to_host());
  const tg::course_ref view = course.view();
  // Final track status: copy_tracks copies the whole course (about 15 kB per env), which is
  // fine up to a few 100k envs; beyond, only the status words are downloaded.
  const bool full_copy = E <= (1 << 18);
  std::vector<std::uint32_t> status(E);
  if (full_copy) {
    status = course.copy_tracks(ex.stream()).status;
  } else {
    ex.download(status.data(), view.tracks().status, static_cast<std::size_t>(E));
  }
  std::vector<int> final_laps(E);
  ex.download(final_laps.data(), view.progress_data().laps, static_cast<std::size_t>(E));
  long long laps = total.laps;
  for (int e = 0; e < E; ++e) laps += final_laps[e];
  int final_valid = 0, final_fallback = 0;
  long long attempts = 0;
  for (int e = 0; e < E; ++e) {
    final_valid += (status[e] & tg::status::valid) != 0u;
    final_fallback += (status[e] & tg::status::fallback) != 0u;
    attempts += tg::status::attempts(status[e]);
  }
  const int timed_steps = o.steps - warm;
  const long long timed_tracks = ended(total) - ended_at_warm;

  std::printf("track_gen demo\n");
  std::printf("  backend           %s\n", ex.describe().c_str());
  std::printf("  envs x steps      %d x %d (dt %.3f s, %.1f s simulated), target %d laps, seed %llu\n", E, o.steps,
              static_cast<double>(o.dt), o.steps * static_cast<double>(o.dt), o.laps,
              static_cast<unsigned long long>(o.seed));
  std::printf("  setup             %.3f s (allocation + %d initial tracks)\n", setup_s, E);
  if (timed_steps > 0 && wall > 0.0) {
    std::printf("  env-steps/s       %.3e (%d timed steps after %d warm-up, %.3f s wall, synchronised)\n",
                static_cast<double>(E) * timed_steps / wall, timed_steps, warm, wall);
    if (timed_tracks > 0 && regen_s > 0.0)
      std::printf("  tracks/s          %.3e (%lld tracks regenerated in %.3f s of masked regenerate calls)\n",
                  static_cast<double>(timed_tracks) / regen_s, timed_tracks, regen_s);
    else
      std::printf("  tracks/s          n/a (no track regenerated in the timed steps; %.3f s of regenerate calls)\n", regen_s);
  } else {
    std::printf("  env-steps/s       n/a (no timed steps: raise --steps above --warmup)\n");
  }
  std::printf("  laps completed    %lld\n", laps);
  std::printf("  episodes ended    %lld (laps %d, off the road %d, time limit %d)\n", ended(total), total.ended_laps,
              total.ended_off_track, total.ended_timeout);
  std::printf("  tracks driven     %d, valid %.2f %%, fallback %d (status at each spawn)\n", total.tracks,
              total.tracks > 0 ? 100.0 * total.tracks_valid / total.tracks : 0.0, total.tracks_fallback);
  std::printf("  final tracks      %d, valid %.2f %%, fallback %d, mean attempts %.2f (%s)\n", E,
              100.0 * final_valid / E, final_fallback, static_cast<double>(attempts) / E,
              full_copy ? "copy_tracks" : "status words");

  if (!o.svg.empty()) {
    const int count = cfg.trail_envs;
    tg::track_snapshot head = head_tracks(ex, view, count);
    const tg::progress_snapshot head_p = head_progress(ex, view, count);
    const std::vector<agent_state> a = agents.to_host();
    const std::vector<float3> tr = trail.to_host();
    // The speed profile drawn is the one the agents' controller aims at (agent_config).
    const tg::speed_limits limits{cfg.lateral_accel, cfg.accel, cfg.brake, cfg.speed_max};
    if (write_svg(o.svg, head, head_p, a, tr, cfg, limits, /*cone_spacing=*/1.0f, count)) {
      std::printf("  svg               %s (first %d tracks)\n", o.svg.c_str(), count);
    } else {
      std::fprintf(stderr, "cannot write %s\n", o.svg.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace track_gen_examples

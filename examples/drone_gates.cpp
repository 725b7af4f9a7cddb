/// @file
/// Drones flying gate courses (issue 15 item 7), on the host backend: E point-mass drones, each
/// on its own gate course (presets::gate_course through presets::gate_course_pipeline), steered
/// by a pursuit controller along the course line; the library's progress tracker counts the
/// gates each drone flies through (the swept test in each gate's own frame, within its
/// rectangular opening) and the laps; finished episodes get a new course through the masked
/// regeneration. Each step also tests every drone, a sphere, against the frames of its next and
/// previous gates (gate_collision.hpp) and counts the contacts. Writes an oblique 3D picture of the
/// first courses, their gates and the drones' trails.
///
///   build/examples/drone_gates [--envs E] [--steps T] [--seed S] [--svg PATH]
///
/// The drone: a point mass whose commanded acceleration is limited to `max_accel` (a racing quad
/// tilts its thrust; gravity is taken as compensated by the thrust), integrated with semi-implicit
/// Euler. The controller: pure pursuit in 3D (the goal is the course-line point `lookahead` metres
/// ahead of the drone's arc length, found by the progress tracker every step), a desired velocity
/// of `cruise` m/s towards it, and a first-order velocity loop (time constant `tau`).

#include "svg.hpp"

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;
namespace ex = track_gen_examples;
using course_type = tg::course<tg::presets::gate_course_pipeline, tg::host_policy>;

struct options {
  int envs = 256;
  int steps = 3000;         ///< of dt = 0.02 s: 60 s of flight
  std::uint64_t seed = 3;
  std::string svg = "drone_gates.svg";
};

struct drone_config {
  float dt = 0.02f;         ///< [s]
  float cruise = 7.0f;      ///< [m/s]: about 25 km/h, a gate every 1-2 s on these courses
  float max_accel = 20.0f;  ///< [m/s^2]: about 2 g of horizontal thrust
  float tau = 0.25f;        ///< velocity loop time constant [s]
  float lookahead = 2.5f;   ///< pursuit goal ahead of the drone on the course line [m]
  float radius = 0.15f;     ///< the drone as a sphere, against the gate frames [m]
  tg::gate_frame frame{0.05f, 0.05f};  ///< posts and bars 10 cm across and deep
  int target_laps = 2;
  int max_episode_steps = 4000;
};

struct drone {
  float3 p, v;
  int steps;
};

struct totals {
  long long episodes = 0, laps = 0, gates = 0, timeouts = 0;
  long long contact_steps = 0;  ///< drone-steps in contact with a gate frame
  double deepest = 0.0;         ///< the largest penetration depth [m]
  double closest = 1e30;        ///< the least gap between a drone and a frame [m] (distance - radius)
  double lap_seconds = 0.0;
};

constexpr const char* usage = "usage: drone_gates [--envs E] [--steps T] [--seed S] [--svg PATH ('' = none)]\n";

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", a.c_str());
      return false;
    }
    const char* v = argv[++i];
    char* end = nullptr;
    if (a == "--svg") {
      o.svg = v;
      continue;
    }
    const long n = std::strtol(v, &end, 10);
    const long lo = a == "--seed" ? 0 : 1;  // seeds start at 0, counts at 1
    if (end == v || *end != '\0' || n < lo || n > (1L << 24)) {
      std::fprintf(stderr, "bad value for %s: %s (a whole number in [%ld, 16777216])\n", a.c_str(), v, lo);
      return false;
    }
    if (a == "--envs") o.envs = static_cast<int>(n);
    else if (a == "--steps") o.steps = static_cast<int>(n);
    else if (a == "--seed") o.seed = static_cast<std::uint64_t>(n);
    else {
      std::fprintf(stderr, "unknown option %s\n%s", a.c_str(), usage);
      return false;
    }
  }
  return true;
}

float3 add(float3 a, float3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
float3 sub(float3 a, float3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
float3 mul(float3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
float norm(float3 a) { return std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z); }

/// One control and integration step of drone `d` on track `tr`, from arc length `s` [m].
void fly(drone& d, const tg::track_ref& tr, float s, const drone_config& c) {
  const float3 goal = tg::centreline_at(tr, s + c.lookahead).position;
  const float3 to_goal = sub(goal, d.p);
  const float dist = std::max(norm(to_goal), 1e-3f);
  const float3 v_des = mul(to_goal, c.cruise / dist);
  float3 a = mul(sub(v_des, d.v), 1.0f / c.tau);
  const float a_norm = norm(a);
  if (a_norm > c.max_accel) a = mul(a, c.max_accel / a_norm);
  d.v = add(d.v, mul(a, c.dt));  // semi-implicit Euler: the new velocity moves the drone
  d.p = add(d.p, mul(d.v, c.dt));
  d.steps += 1;
}

/// Oblique view: azimuth 35 degrees, elevation 30 degrees, orthographic. Returns (u, v) with v up.
ex::pt2 project(float3 p) {
  const float az = 0.61f, el = 0.52f;
  const float u = p.x * std::cos(az) + p.y * std::sin(az);
  const float depth = -p.x * std::sin(az) + p.y * std::cos(az);
  return {u, p.z * std::cos(el) + depth * std::sin(el)};
}

void draw(const std::string& path, const tg::course_ref& view, const std::vector<std::vector<float3>>& trails,
          const std::vector<int>& trail_episode, float half_height, int count) {
  const int cols = 2, cell = 560, caption = 22, legend = 28;
  const int rows = (count + cols - 1) / cols;
  ex::svg_document doc(cols * cell, rows * (cell + caption) + legend);
  for (int i = 0; i < count; ++i) {
    const tg::track_ref tr = view.track(i);
    const int n = tr.num_samples();
    std::vector<ex::pt2> line(n), shadow(n);
    ex::pt2 lo{1e30f, 1e30f}, hi{-1e30f, -1e30f};
    for (int k = 0; k < n; ++k) {
      const float3 p = tr.position(k);
      line[k] = project(p);
      shadow[k] = project({p.x, p.y, 0.0f});
      for (const ex::pt2 q : {line[k], shadow[k]}) {
        lo = {std::min(lo.x, q.x), std::min(lo.y, q.y)};
        hi = {std::max(hi.x, q.x), std::max(hi.y, q.y + 2.0f * half_height)};
      }
    }
    const float ox = static_cast<float>((i % cols) * cell), oy = static_cast<float>((i / cols) * (cell + caption));
    const ex::panel_map m = ex::panel_map::fit(ox, oy + caption, cell, cell, lo, hi, 16.0f);
    auto mapped = [&](const std::vector<ex::pt2>& v) {
      std::vector<ex::pt2> r(v.size());
      for (std::size_t k = 0; k < v.size(); ++k) r[k] = m(v[k]);
      return r;
    };
    doc.rect(ox + 2, oy + 2, cell - 4, cell + caption - 4, "none", "#ccc");
    doc.polyline(mapped(shadow), true, "#d9d9d9", 1.5f);
    doc.polyline(mapped(line), true, "#4c78a8", 1.2f, "stroke-dasharray=\"5 3\"");
    for (int g = 0; g < tr.num_gates(); ++g) {
      const tg::gate gate = tr.gate(g);
      const tg::gate_axes_t axes = tg::gate_axes(gate.normal);
      const float3 l = mul(axes.left, gate.half_width), u = mul(axes.up, half_height);
      const float3 corners[4] = {add(add(gate.centre, l), u), add(sub(gate.centre, l), u), sub(sub(gate.centre, l), u),
                                 sub(add(gate.centre, l), u)};
      std::vector<ex::pt2> frame(4);
      for (int c = 0; c < 4; ++c) frame[c] = m(project(corners[c]));
      for (const float3 post : {sub(add(gate.centre, l), u), sub(sub(gate.centre, l), u)})
        doc.line(m(project(post)), m(project({post.x, post.y, 0.0f})), "#999", 1.0f);
      doc.polyline(frame, true, g == 0 ? "#d62728" : "#f28e2b", 2.4f);
    }
    if (trail_episode[i] == static_cast<int>(view.tracks().episode[i]) && trails[i].size() > 1) {
      std::vector<ex::pt2> t(trails[i].size());
      for (std::size_t k = 0; k < t.size(); ++k) t[k] = m(project(trails[i][k]));
      doc.polyline(t, false, "#7b3294", 1.1f);
      doc.circle(t.back(), 4.0f, "#7b3294");
    }
    const tg::progress_state pr = view.progress(i);
    char text[200];
    std::snprintf(text, sizeof text, "env %d  %d gates  course line %.0f m  laps %d  gates passed %d", i,
                  tr.num_gates(), static_cast<double>(tr.length()), pr.laps, pr.gates_passed);
    doc.text({ox + 10, oy + 16}, 12.0f, text);
  }
  const float ly = static_cast<float>(rows * (cell + caption)) + legend * 0.5f;
  float lx = 12.0f;
  auto label = [&](const char* what, float width) {
    doc.text({lx + 26, ly + 4}, 11.0f, what, "#333");
    lx += 26 + width;
  };
  doc.line({lx, ly}, {lx + 20, ly}, "#4c78a8", 1.2f, "stroke-dasharray=\"5 3\"");
  label("course line", 80);
  doc.line({lx, ly}, {lx + 20, ly}, "#d9d9d9", 1.5f);
  label("its shadow on the ground", 160);
  doc.rect(lx + 4, ly - 6, 12, 12, "none", "#f28e2b");
  label("gates (gate 0 red), posts to the ground", 240);
  doc.line({lx, ly}, {lx + 20, ly}, "#7b3294", 1.1f);
  label("drone's path this episode, dot = now", 220);
  if (!doc.save(path)) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  try {
    const drone_config c;
    tg::track_params p = tg::presets::gate_course(o.envs);
    p.seed = o.seed;
    course_type course(p, tg::presets::gate_course_spacing(p), tg::host_stream{});
    const int E = o.envs;
    std::vector<float3> positions(E);
    std::vector<drone> drones(E);
    std::vector<std::int32_t> done(E, 0);
    std::vector<std::uint32_t> spawned_episode(E, ~0u);
    const int shown = std::min(E, 4);
    std::vector<std::vector<float3>> trails(shown);
    std::vector<int> trail_episode(shown, -1);
    totals t;
    course.bind(positions.data());
    const tg::course_ref view = course.view();
    for (int step = 0; step < o.steps; ++step) {
      for (int e = 0; e < E; ++e) {
        const tg::progress_state pr = view.progress(e);
        const tg::track_ref tr = view.track(e);
        drone& d = drones[e];
        done[e] = 0;
        if ((pr.flags & tg::progress_flags::has_last) == 0u) {
          // A new course: spawn at rest on the course line 1 m before gate 0 (the start gate);
          // course_ref::spawn resets the progress as if the drone stood there.
          const tg::track_pose pose = tg::spawn_pose(tr, tr.length() - 1.0f);
          d = {pose.position, {0.0f, 0.0f, 0.0f}, 0};
          view.spawn(e, pose.s);
          positions[e] = d.p;
          if (e < shown) {
            trails[e].assign(1, d.p);
            trail_episode[e] = static_cast<int>(view.tracks().episode[e]);
          }
          continue;
        }
        if (pr.laps >= c.target_laps || d.steps >= c.max_episode_steps) {
          t.episodes += 1;
          t.laps += pr.laps;
          t.gates += pr.gates_passed;
          t.timeouts += pr.laps >= c.target_laps ? 0 : 1;
          if (pr.laps >= c.target_laps) t.lap_seconds += d.steps * c.dt / pr.laps;
          done[e] = 1;
          continue;
        }
        fly(d, tr, pr.lap_progress, c);
        positions[e] = d.p;
        if (e < shown) trails[e].push_back(d.p);
      }
      course.step(tg::host_stream{});
      // Gate-frame contacts of the drones in flight (after the step: it reads the next gate).
      for (int e = 0; e < E; ++e) {
        if (done[e] != 0) continue;
        const tg::gate_frame_hit h = tg::collide_gate_frames(view, e, positions[e], c.radius, c.frame);
        t.closest = std::min(t.closest, static_cast<double>(h.distance - c.radius));
        if ((h.flags & tg::contact_flags::hit) == 0u) continue;
        t.contact_steps += 1;
        t.deepest = std::max(t.deepest, static_cast<double>(h.depth));
      }
      course.regenerate(done.data(), /*advance=*/true, tg::host_stream{});
    }
    long long valid = 0;
    for (int e = 0; e < E; ++e) valid += (view.tracks().status[e] & tg::status::valid) != 0u;
    std::printf("drone_gates (host backend)\n");
    std::printf("  drones x steps   %d x %d (dt %.2f s, %.0f s of flight), seed %llu\n", E, o.steps,
                static_cast<double>(c.dt), o.steps * static_cast<double>(c.dt), static_cast<unsigned long long>(o.seed));
    std::printf("  episodes ended   %lld (%lld after %d laps, %lld by the time limit)\n", t.episodes,
                t.episodes - t.timeouts, c.target_laps, t.timeouts);
    std::printf("  gates flown      %lld in ended episodes, laps %lld, mean lap %.2f s\n", t.gates, t.laps,
                t.episodes > t.timeouts ? t.lap_seconds / static_cast<double>(t.episodes - t.timeouts) : 0.0);
    std::printf("  frame contacts   %lld drone-steps (sphere %.2f m, frame %.2f x %.2f m), deepest %.3f m, "
                "closest gap %.3f m\n",
                t.contact_steps, static_cast<double>(c.radius), 2.0 * c.frame.half_thickness,
                2.0 * c.frame.half_depth, t.deepest, t.closest);
    std::printf("  final courses    %d, valid %lld\n", E, valid);
    if (!o.svg.empty()) {
      draw(o.svg, view, trails, trail_episode, p.gate_half_height, shown);
      std::printf("  svg              %s (first %d courses)\n", o.svg.c_str(), shown);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "drone_gates: %s\n", e.what());
    return 1;
  }
}

#pragma once
/// @file
/// Shared fixtures of the progress tests, written once for every backend:
/// - `rig<Policy>`: a course built from user tracks plus the agents' positions (a host staging
///   vector uploaded to the backend's buffer before every step), a stream, and helpers that run
///   projections, gate crossings and a user-fused "physics" step on the backend itself;
/// - tracks of known geometry (a circle, a stadium) with their exact analytic arc length,
///   lateral offset and nearest point, so expected values never come from the library;
/// - `arc_gate_model`: an independent model of the gate rules of docs/guide.md for agents whose
///   motion is described in (unwrapped arc length, lateral offset) coordinates;
/// - `brute_nearest`: the nearest point of a sampled polygon by brute force in double, and the
///   tolerances of projections against curves (`sagitta`, `arc_tolerance`);
/// - `map_on_backend`: a device function of the course's view applied to each of a list of
///   inputs, on the backend (a host loop, or a CUDA kernel as a user would write it);
/// - the test scale (TRACK_GEN_TEST_SCALE=small under compute-sanitizer).
///
/// The test bodies are doctest templates over the policy (TEST_CASE_TEMPLATE_DEFINE in the
/// *_cases.hpp headers), applied to `host_policy` in *_test.cpp and `cuda_policy` in *_test.cu.

#include <track_gen/track_gen.hpp>

#include "support/test_scale.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__CUDACC__)
#include <cuda_runtime_api.h>
#endif

namespace progress_test {

namespace tg = track_gen;

constexpr double pi = 3.14159265358979323846;

// TRACK_GEN_TEST_SCALE=small (compute-sanitizer runs): loops that only add coverage shrink.
using track_gen_test::scaled;
using track_gen_test::small_scale;

/// float3 from doubles (works with CUDA's float3 and with the library's stand-in).
inline float3 v3(double x, double y, double z = 0.0) {
  float3 r;
  r.x = static_cast<float>(x);
  r.y = static_cast<float>(y);
  r.z = static_cast<float>(z);
  return r;
}

inline float4 q4(double x, double y, double z, double w) {
  float4 q;
  q.x = static_cast<float>(x);
  q.y = static_cast<float>(y);
  q.z = static_cast<float>(z);
  q.w = static_cast<float>(w);
  return q;
}

inline float2 f2d(double x, double y) {
  float2 r;
  r.x = static_cast<float>(x);
  r.y = static_cast<float>(y);
  return r;
}

/// The unit quaternion (x, y, z, w) of z-y-x Euler angles: Rz(yaw) Ry(pitch) Rx(roll), in double.
inline float4 euler_quaternion(double yaw, double pitch = 0.0, double roll = 0.0) {
  const double cy = std::cos(yaw / 2), sy = std::sin(yaw / 2), cp = std::cos(pitch / 2), sp = std::sin(pitch / 2);
  const double cr = std::cos(roll / 2), sr = std::sin(roll / 2);
  return q4(sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy);
}

inline bool has(std::uint32_t word, std::uint32_t bit) { return (word & bit) != 0u; }

/// Distance between two arc lengths on a closed curve of length `length`.
inline double arc_distance(double a, double b, double length) {
  double d = std::fmod(std::fabs(a - b), length);
  return std::min(d, length - d);
}

/// `x` wrapped into [0, length).
inline double wrap_arc(double x, double length) {
  double r = std::fmod(x, length);
  return r < 0.0 ? r + length : r;
}

// ---------------------------------------------------------------------------------------------
// Tracks of known geometry.

/// Where a point sits relative to a reference curve: arc length of its nearest point, signed
/// lateral offset (positive left of the direction of travel), the nearest point itself.
struct curve_point {
  double arc;
  double lateral;
  double x, y;
};

/// Circle of radius `r` around the origin, run counter-clockwise from (r, 0): the left normal
/// points to the centre, so a point at radius r - d has lateral offset +d.
struct circle {
  double r = 50.0;

  double length() const { return 2.0 * pi * r; }
  /// Point at (unwrapped) arc length s, `left` metres left of the centreline, at height z.
  float3 at(double s, double left = 0.0, double z = 0.0) const {
    const double a = s / r;
    const double rad = r - left;
    return v3(rad * std::cos(a), rad * std::sin(a), z);
  }
  /// Closed polyline of `points` vertices, counter-clockwise, starting at (r, 0, 0).
  std::vector<float3> polyline(int points) const {
    std::vector<float3> p;
    for (int i = 0; i < points; ++i) p.push_back(at(length() * i / points));
    return p;
  }
  /// Exact nearest point of the circle to (x, y).
  curve_point nearest(double x, double y) const {
    const double d = std::hypot(x, y);
    const double a = wrap_arc(std::atan2(y, x), 2.0 * pi);
    return {a * r, r - d, r * std::cos(a), r * std::sin(a)};
  }
};

/// Stadium (two straights joined by two semicircles), counter-clockwise, starting at the
/// beginning of the lower straight (-a, -r) and running along +x.
struct stadium {
  double a = 75.0;  ///< half-length of each straight [m]
  double r = 10.0;  ///< radius of the semicircles [m]

  double length() const { return 4.0 * a + 2.0 * pi * r; }
  /// Point of the centreline at arc length s (wrapped), and the unit tangent there.
  void centre(double s, double& x, double& y, double& tx, double& ty) const {
    s = wrap_arc(s, length());
    const double straight = 2.0 * a, half_turn = pi * r;
    if (s < straight) {
      x = -a + s, y = -r, tx = 1.0, ty = 0.0;
    } else if (s < straight + half_turn) {
      const double phi = -pi / 2 + (s - straight) / r;  // around (a, 0)
      x = a + r * std::cos(phi), y = r * std::sin(phi), tx = -std::sin(phi), ty = std::cos(phi);
    } else if (s < 2.0 * straight + half_turn) {
      x = a - (s - straight - half_turn), y = r, tx = -1.0, ty = 0.0;
    } else {
      const double phi = pi / 2 + (s - 2.0 * straight - half_turn) / r;  // around (-a, 0)
      x = -a + r * std::cos(phi), y = r * std::sin(phi), tx = -std::sin(phi), ty = std::cos(phi);
    }
  }
  /// Point at arc length s, `left` metres left of the centreline (left of (tx, ty) is (-ty, tx)).
  float3 at(double s, double left = 0.0, double z = 0.0) const {
    double x, y, tx, ty;
    centre(s, x, y, tx, ty);
    return v3(x - ty * left, y + tx * left, z);
  }
  /// Closed polyline of `points` vertices at uniform arc length (straight vertices lie exactly
  /// on the straights, turn vertices on the semicircles).
  std::vector<float3> polyline(int points) const {
    std::vector<float3> p;
    for (int i = 0; i < points; ++i) p.push_back(at(length() * i / points));
    return p;
  }
  /// Exact nearest point of the stadium to (x, y), for points within r of the centreline.
  curve_point nearest(double x, double y) const {
    const double straight = 2.0 * a, half_turn = pi * r;
    if (x > a) {
      const double d = std::hypot(x - a, y);
      const double phi = std::atan2(y, x - a);  // in (-pi/2, pi/2)
      return {straight + r * (phi + pi / 2), r - d, a + r * std::cos(phi), r * std::sin(phi)};
    }
    if (x < -a) {
      const double d = std::hypot(x + a, y);
      const double phi = wrap_arc(std::atan2(y, x + a), 2.0 * pi);  // in (pi/2, 3pi/2)
      return {2.0 * straight + half_turn + r * (phi - pi / 2), r - d, -a + r * std::cos(phi), r * std::sin(phi)};
    }
    if (y < 0.0) return {x + a, y + r, x, -r};
    return {straight + half_turn + (a - x), r - y, x, r};
  }
};

// ---------------------------------------------------------------------------------------------
// Brute-force references and tolerances for projections on sampled polygons.

/// Largest gap [m] between the sampled polygon and a curve of radius `r` sampled every `ds`
/// metres: the sagitta ds^2 / (8 r).
inline double sagitta(double ds, double r) { return ds * ds / (8.0 * r); }

/// Tolerance [m] on the arc length of a projection, for points up to `left` metres off a
/// centreline of length L sampled N times with turns of radius >= r: L's float32 error (~3e-5
/// relative) + 1 mm, plus the chord effect: on a turn, the foot of a point offset by `left` on
/// a chord lies left / r * (half a chord) away from the foot of the exact normal.
inline double arc_tolerance(double length, int n, double r, double left) {
  return 3e-5 * length + 1e-3 + left / r * 0.5 * length / n;
}

/// Small deterministic generator (64-bit LCG, constants of Knuth's MMIX), uniform in [0, 1).
struct lcg {
  std::uint64_t state;
  double next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);
  }
};

/// Brute-force nearest point of the closed polygon `pts` to p, in double precision.
struct brute_result {
  int segment;
  double t, distance;
  double x, y, z;
};
inline brute_result brute_nearest(const std::vector<float3>& pts, std::size_t first, int n, float3 p) {
  brute_result best{-1, 0.0, 1e300, 0, 0, 0};
  for (int k = 0; k < n; ++k) {
    const float3 a = pts[first + static_cast<std::size_t>(k)];
    const float3 b = pts[first + static_cast<std::size_t>((k + 1) % n)];
    const double abx = double(b.x) - a.x, aby = double(b.y) - a.y, abz = double(b.z) - a.z;
    const double apx = double(p.x) - a.x, apy = double(p.y) - a.y, apz = double(p.z) - a.z;
    const double den = abx * abx + aby * aby + abz * abz;
    double t = den > 0.0 ? (apx * abx + apy * aby + apz * abz) / den : 0.0;
    t = std::min(1.0, std::max(0.0, t));
    const double qx = a.x + t * abx, qy = a.y + t * aby, qz = a.z + t * abz;
    const double d = std::sqrt((p.x - qx) * (p.x - qx) + (p.y - qy) * (p.y - qy) + (p.z - qz) * (p.z - qz));
    if (d < best.distance) best = {k, t, d, qx, qy, qz};
  }
  return best;
}

inline double dist3(float3 a, double x, double y, double z) {
  return std::sqrt((a.x - x) * (a.x - x) + (a.y - y) * (a.y - y) + (a.z - z) * (a.z - z));
}

/// Env e's centreline polygon (its samples, L / N apart) at arc length u (any real: wrapped
/// with the track's L), in double: segment k = floor(u N / L) at fraction f, the point, and the
/// samples' unit left normals and tangents interpolated there and renormalised.
struct polygon_point {
  int segment;
  double f;
  double x, y, z;
  double nx, ny, nz;
  double tx, ty, tz;
};
inline polygon_point polygon_at(const tg::track_snapshot& t, int e, double u) {
  const int n = t.num_samples;
  const double length = t.length[static_cast<std::size_t>(e)];
  const double w = wrap_arc(u, length) * n / length;
  const int k = std::min(n - 1, std::max(0, static_cast<int>(std::floor(w))));
  const double f = w - k;
  const std::size_t i0 = t.sample_index(e, k), i1 = t.sample_index(e, (k + 1) % n);
  auto mix = [f](float a, float b) { return a + f * (static_cast<double>(b) - a); };
  polygon_point q{k, f, mix(t.position[i0].x, t.position[i1].x), mix(t.position[i0].y, t.position[i1].y),
                  mix(t.position[i0].z, t.position[i1].z), mix(t.normal[i0].x, t.normal[i1].x),
                  mix(t.normal[i0].y, t.normal[i1].y), mix(t.normal[i0].z, t.normal[i1].z),
                  mix(t.tangent[i0].x, t.tangent[i1].x), mix(t.tangent[i0].y, t.tangent[i1].y),
                  mix(t.tangent[i0].z, t.tangent[i1].z)};
  const double nn = std::sqrt(q.nx * q.nx + q.ny * q.ny + q.nz * q.nz);
  const double tn = std::sqrt(q.tx * q.tx + q.ty * q.ty + q.tz * q.tz);
  q.nx /= nn, q.ny /= nn, q.nz /= nn, q.tx /= tn, q.ty /= tn, q.tz /= tn;
  return q;
}

/// The arrays of a host snapshot (for track_refs used on the host, whatever the backend).
inline tg::track_arrays host_arrays(tg::track_snapshot& t) {
  tg::track_arrays a;
#define TRACK_GEN_HOST(name, type, ext, doc) a.name = t.name.data();
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_HOST)
#undef TRACK_GEN_HOST
  return a;
}

/// `d` [rad] wrapped into (-pi, pi], in double.
inline double wrap_angle(double d) {
  d = std::remainder(d, 2.0 * pi);
  return d <= -pi ? d + 2.0 * pi : d;
}

/// Params for the user tracks of these tests: 512 samples and a length range that accepts
/// circuits of 300-400 m; everything else from the `track` preset.
inline tg::track_params user_track_params(int num_envs, int num_samples = 512) {
  tg::track_params p = tg::presets::track(num_envs);
  p.num_samples = num_samples;
  p.validate.length_max = 400.0f;
  return p;
}

/// One centreline shared by every env (or one per env when several are given).
inline tg::user_tracks centreline(std::vector<std::vector<float3>> tracks) {
  tg::user_tracks t;
  t.type = tg::user_tracks::kind::centreline;
  t.tracks = std::move(tracks);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Independent model of the gate rules (docs/guide.md) in arc-length coordinates.

/// Expected progress of one agent on a track whose G gates sit at arc lengths g * L / G, for
/// motions that keep the gate crossings well defined in (arc, lateral) coordinates: each move
/// either follows the track (the lateral offset at a crossing is interpolated linearly in arc
/// length between the endpoints) or is radial (no arc change, so no crossing). A gate counts
/// when its (unwrapped) arc position lies in (s_prev, s] with |lateral| <= half_width there;
/// gates count only in order, starting with gate 1 after a reset; gate 0 completes a lap.
struct arc_gate_model {
  double length;       ///< L [m]
  int gates;           ///< G
  double half_width;   ///< gate half-width [m]
  double margin = 5e-3;  ///< the smallest distance [m] of a gate from a step endpoint that keeps the expected outcome unambiguous

  int next_gate = 1, laps = 0, gates_passed = 0;
  bool has_last = false;
  double last_s = 0.0, last_lateral = 0.0;

  struct events {
    int passed = 0;          ///< gates counted on this step
    bool lap = false;        ///< gate 0 counted on this step
    bool wrong_way = false;  ///< moved against the track direction
    bool ambiguous = false;  ///< a gate lies within `margin` of the new endpoint: the test geometry is too tight
  };

  arc_gate_model(double l, int g, double hw) : length(l), gates(g), half_width(hw) {}

  double gate_arc(int g) const { return length * g / gates; }

  /// Moves the agent to arc length s (unwrapped) at lateral offset `lateral`.
  events step(double s, double lateral) {
    events ev;
    if (has_last) {
      for (int g = 0; g < gates; ++g)
        if (arc_distance(s, gate_arc(g), length) < margin && std::fabs(s - last_s) > 0.0) ev.ambiguous = true;
      ev.wrong_way = s < last_s;
      if (s > last_s) {
        // Each successive gate in order must lie beyond the previous crossing.
        double from = last_s;
        while (ev.passed < gates) {
          const double g0 = gate_arc(next_gate);
          const double k = std::floor((from - g0) / length) + 1.0;  // first instance > from
          const double sg = g0 + k * length;
          if (!(sg <= s)) break;
          const double f = (sg - last_s) / (s - last_s);
          const double lat = last_lateral + (lateral - last_lateral) * f;
          if (std::fabs(lat) > half_width) break;
          if (next_gate == 0) {
            ev.lap = true;
            ++laps;
          }
          ++ev.passed;
          next_gate = (next_gate + 1) % gates;
          from = sg;
        }
        gates_passed += ev.passed;
      }
    }
    has_last = true;
    last_s = s;
    last_lateral = lateral;
    return ev;
  }
};

// ---------------------------------------------------------------------------------------------
// Progress snapshot entries.

/// One env's entry of a progress_snapshot, by value.
struct progress_entry {
  int next_gate, laps, gates_passed, hint;
  float lap_progress, lateral;
  float3 last_position;
  std::uint32_t flags;
};

inline progress_entry entry(const tg::progress_snapshot& s, int e) {
  const auto i = static_cast<std::size_t>(e);
  return {s.next_gate[i], s.laps[i], s.gates_passed[i], s.hint[i], s.lap_progress[i], s.lateral[i], s.last_position[i],
          s.flags[i]};
}

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

/// Bit-for-bit equality of two entries (floats compared by their bits: -0 != +0, NaN == NaN).
inline bool same_bits(const progress_entry& a, const progress_entry& b) {
  return a.next_gate == b.next_gate && a.laps == b.laps && a.gates_passed == b.gates_passed && a.hint == b.hint &&
         same_bits(a.lap_progress, b.lap_progress) && same_bits(a.lateral, b.lateral) &&
         same_bits(a.last_position.x, b.last_position.x) && same_bits(a.last_position.y, b.last_position.y) &&
         same_bits(a.last_position.z, b.last_position.z) && a.flags == b.flags;
}

/// "0x..." of a status or flag word.
inline std::string hex(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}

inline std::string describe(const progress_entry& p) {
  return "{next_gate " + std::to_string(p.next_gate) + ", laps " + std::to_string(p.laps) + ", gates_passed " +
         std::to_string(p.gates_passed) + ", hint " + std::to_string(p.hint) + ", lap_progress " +
         std::to_string(p.lap_progress) + ", lateral " + std::to_string(p.lateral) + ", last (" +
         std::to_string(p.last_position.x) + ", " + std::to_string(p.last_position.y) + ", " +
         std::to_string(p.last_position.z) + "), flags " + hex(p.flags) + "}";
}

// ---------------------------------------------------------------------------------------------
// Deterministic "physics" shared by the fused-kernel test's host and device paths.

/// Position of env e at step i of the fused-step test, on the circle of radius 50 m: each env
/// has its own speed (some drive backwards), a lateral weave (leaving the track for one env in 3),
/// a jump half a lap ahead every 37 steps and a NaN every 11 steps for some envs, so that the
/// comparison covers every branch of `course_ref::step`.
TRACK_GEN_HD inline float3 physics_position(int e, int i) {
  const float r = 50.0f;
  const float speed = 0.25f + 0.9f * static_cast<float>(e % 9) - (e % 7 == 3 ? 8.0f : 0.0f);
  float s = 0.5f * static_cast<float>(e % 5) + speed * static_cast<float>(i);
  if (e % 4 == 1 && i >= 37) s += 157.0f * static_cast<float>(i / 37);
  const float left = (e % 3 == 0 ? 0.45f : 0.1f) * std::sin(0.21f * static_cast<float>(i) + static_cast<float>(e));
  const float angle = s / r;
  float3 p;
  p.x = (r - left) * std::cos(angle);
  p.y = (r - left) * std::sin(angle);
  p.z = 0.2f * std::sin(0.5f * static_cast<float>(i + e));
  if (e % 13 == 5 && i % 11 == 3) p.y = NAN;
  return p;
}

/// A gate crossing query for `crosses_gate`, evaluated on the backend.
struct crossing_query {
  tg::gate g;
  float3 a, b;
  float half_height;
};

// ---------------------------------------------------------------------------------------------
// Backend support: buffers, streams, and the kernels a user would write.

template <class Backend>
struct backend_support;

/// The host backend: buffers are vectors, there is no stream, "kernels" are loops.
template <>
struct backend_support<tg::backend::host> {
  struct stream {
    tg::host_stream get() const { return {}; }
    void synchronize() const {}
  };

  template <class T>
  class buffer {
   public:
    explicit buffer(std::size_t n) : v_(n) {}
    T* data() { return v_.data(); }
    const T* data() const { return v_.data(); }
    void upload(const std::vector<T>& h, const stream&) { std::copy(h.begin(), h.end(), v_.begin()); }
    std::vector<T> download(const stream&) const { return v_; }

   private:
    std::vector<T> v_;
  };

  static void project(const tg::course_ref& view, int e, const float3* points, const int* hints, int window,
                      tg::projection* out, int n, const stream&) {
    const tg::track_ref tr = view.track(e);
    for (int i = 0; i < n; ++i) out[i] = tr.project(points[i], hints[i], window);
  }

  static void crosses(const crossing_query* q, int* out, int n, const stream&) {
    for (int i = 0; i < n; ++i) out[i] = tg::crosses_gate(q[i].g, q[i].a, q[i].b, q[i].half_height) ? 1 : 0;
  }

  /// The user's fused physics step: write each env's new position, then advance its progress
  /// through the view (what a physics kernel would do in-line).
  static void fused_physics(tg::course_ref view, float3* positions, int step, const stream&) {
    for (int e = 0; e < view.num_envs(); ++e) {
      const float3 p = physics_position(e, step);
      positions[e] = p;
      view.step(e, p);
    }
  }
};

#if defined(__CUDACC__)
inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

__global__ void project_kernel(const tg::course_ref view, int e, const float3* points, const int* hints, int window,
                               tg::projection* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = view.track(e).project(points[i], hints[i], window);
}

__global__ void crosses_kernel(const crossing_query* q, int* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = tg::crosses_gate(q[i].g, q[i].a, q[i].b, q[i].half_height) ? 1 : 0;
}

/// A user's physics kernel with progress tracking fused in: it receives the course's view by
/// value and calls `view.step(e, p)` itself.
__global__ void fused_physics_kernel(const tg::course_ref view, float3* positions, int step) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= view.num_envs()) return;
  const float3 p = physics_position(e, step);
  positions[e] = p;
  view.step(e, p);
}

/// The CUDA backend: cudaMalloc'd buffers, a dedicated stream, the kernels above.
template <>
struct backend_support<tg::backend::cuda> {
  class stream {
   public:
    stream() { check_cuda(cudaStreamCreate(&s_), "cudaStreamCreate"); }
    ~stream() { (void)cudaStreamDestroy(s_); }
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;
    ::cuda::stream_ref get() const { return ::cuda::stream_ref(s_); }
    cudaStream_t raw() const { return s_; }
    void synchronize() const { check_cuda(cudaStreamSynchronize(s_), "cudaStreamSynchronize"); }

   private:
    cudaStream_t s_ = nullptr;
  };

  template <class T>
  class buffer {
   public:
    explicit buffer(std::size_t n) : n_(n) { check_cuda(cudaMalloc(&p_, sizeof(T) * (n == 0 ? 1 : n)), "cudaMalloc"); }
    ~buffer() { (void)cudaFree(p_); }
    buffer(buffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    T* data() { return p_; }
    const T* data() const { return p_; }
    /// Waits for the stream's earlier work (a step may still read the buffer), then copies.
    void upload(const std::vector<T>& h, const stream& s) {
      s.synchronize();
      check_cuda(cudaMemcpy(p_, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
    }
    std::vector<T> download(const stream& s) const {
      s.synchronize();
      std::vector<T> h(n_);
      check_cuda(cudaMemcpy(h.data(), p_, sizeof(T) * n_, cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
      return h;
    }

   private:
    T* p_ = nullptr;
    std::size_t n_;
  };

  static unsigned blocks(int n) { return static_cast<unsigned>((n + 127) / 128); }

  static void project(const tg::course_ref& view, int e, const float3* points, const int* hints, int window,
                      tg::projection* out, int n, const stream& s) {
    project_kernel<<<blocks(n), 128, 0, s.raw()>>>(view, e, points, hints, window, out, n);
    check_cuda(cudaGetLastError(), "launching project_kernel");
  }

  static void crosses(const crossing_query* q, int* out, int n, const stream& s) {
    crosses_kernel<<<blocks(n), 128, 0, s.raw()>>>(q, out, n);
    check_cuda(cudaGetLastError(), "launching crosses_kernel");
  }

  static void fused_physics(tg::course_ref view, float3* positions, int step, const stream& s) {
    fused_physics_kernel<<<blocks(view.num_envs()), 128, 0, s.raw()>>>(view, positions, step);
    check_cuda(cudaGetLastError(), "launching fused_physics_kernel");
  }
};
#endif

// ---------------------------------------------------------------------------------------------
// The rig.

/// A course of user tracks (or of `Pipeline`'s random tracks) on `Policy`'s backend, with the
/// agents' positions: set `positions[e]` on the host, then `step()` uploads them and advances
/// the course (and its twin tracker, when add_twin made one).
template <class Policy, class Pipeline = tg::presets::track_pipeline>
class rig {
 public:
  using support = backend_support<typename Policy::backend_type>;
  using course_type = tg::course<Pipeline, Policy>;
  template <class T>
  using buffer = typename support::template buffer<T>;

  rig(const tg::track_params& params, float spacing, const tg::user_tracks& tracks) : rig(params, spacing, &tracks) {}
  /// As above, with generated (random) tracks instead of user tracks.
  rig(const tg::track_params& params, float spacing) : rig(params, spacing, nullptr) {}

  /// Host staging of the agents' positions [E]; `step()` uploads it.
  std::vector<float3> positions;

  course_type& course() { return course_; }
  const typename support::stream& stream() const { return stream_; }
  float3* device_positions() { return device_positions_.data(); }
  int num_envs() const { return course_.num_envs(); }

  /// Uploads `positions` and advances every env.
  void step() {
    device_positions_.upload(positions, stream_);
    course_.step(stream_.get());
    if (twin_ != nullptr) twin_->step(stream_.get());
  }
  tg::progress_snapshot progress() const { return course_.copy_progress(stream_.get()); }

  /// A second, standalone progress tracker over the course's tracks with gate layout `gates`,
  /// reset to the start line and bound to the same positions: stepped with the course from now
  /// on (not regenerated with it: compare the two only on paths without regenerate).
  void add_twin(tg::gate_layout gates, float gate_half_height) {
    twin_ = std::make_unique<tg::progress_tracker<Policy>>(course_.batch(), gate_half_height, gates, stream_.get());
    twin_->bind(device_positions_.data());
  }
  /// The twin tracker's progress (add_twin).
  tg::progress_snapshot twin_progress() const { return twin_->copy(stream_.get()); }
  tg::track_snapshot tracks() const { return course_.copy_tracks(stream_.get()); }

  /// Regenerates the envs with a nonzero mask entry (the mask goes to the backend's memory).
  void regenerate(const std::vector<std::int32_t>& mask, bool advance) {
    mask_.upload(mask, stream_);
    course_.regenerate(mask_.data(), advance, stream_.get());
    stream_.synchronize();
  }

  /// `track_ref::project` of env e's track for every point, run on the backend.
  std::vector<tg::projection> project(int e, const std::vector<float3>& points, const std::vector<int>& hints,
                                      int window) {
    const int n = static_cast<int>(points.size());
    buffer<float3> p(points.size());
    buffer<int> h(hints.size());
    buffer<tg::projection> out(points.size());
    p.upload(points, stream_);
    h.upload(hints, stream_);
    support::project(course_.view(), e, p.data(), h.data(), window, out.data(), n, stream_);
    return out.download(stream_);
  }

  /// `crosses_gate` for every query, run on the backend.
  std::vector<int> crosses(const std::vector<crossing_query>& queries) {
    buffer<crossing_query> q(queries.size());
    buffer<int> out(queries.size());
    q.upload(queries, stream_);
    support::crosses(q.data(), out.data(), static_cast<int>(queries.size()), stream_);
    return out.download(stream_);
  }

  /// The user's fused physics step (see `physics_position`) on this rig's positions buffer.
  void fused_physics(int step) { support::fused_physics(course_.view(), device_positions_.data(), step, stream_); }

 private:
  /// `tracks`: user tracks, or null for generated ones.
  rig(const tg::track_params& params, float spacing, const tg::user_tracks* tracks)
      : positions(static_cast<std::size_t>(params.num_envs), v3(0, 0, 0)),
        course_(tracks != nullptr ? course_type(params, spacing, *tracks, stream_.get())
                                  : course_type(params, spacing, stream_.get())),
        device_positions_(static_cast<std::size_t>(params.num_envs)),
        mask_(static_cast<std::size_t>(params.num_envs)) {
    course_.bind(device_positions_.data());
  }

  typename support::stream stream_;  // before course_: the constructor uses it
  course_type course_;
  buffer<float3> device_positions_;
  buffer<std::int32_t> mask_;
  std::unique_ptr<tg::progress_tracker<Policy>> twin_;
};

#if defined(__CUDACC__)
template <class F, class In, class Out>
__global__ void map_kernel(F f, const tg::course_ref view, const In* in, Out* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = f(view, in[i]);
}
#endif

/// `f(view, in[i])` for every i, run on the rig's backend (a host loop, or one CUDA thread per
/// element): `f` is a functor with a `TRACK_GEN_HD` call operator taking the course's view and
/// one input, returning a trivially copyable value. The device functions under test run where
/// the user's kernels would run them.
template <class Policy, class Pipeline, class F, class In>
auto map_on_backend(rig<Policy, Pipeline>& r, F f, const std::vector<In>& in) {
  using out_type = decltype(f(std::declval<const tg::course_ref&>(), std::declval<const In&>()));
  const int n = static_cast<int>(in.size());
  typename rig<Policy, Pipeline>::template buffer<In> input(in.size());
  typename rig<Policy, Pipeline>::template buffer<out_type> output(in.size());
  input.upload(in, r.stream());
  const tg::course_ref view = r.course().view();
  if constexpr (std::is_same_v<typename Policy::backend_type, tg::backend::host>) {
    for (int i = 0; i < n; ++i) output.data()[i] = f(view, input.data()[i]);
  } else {
#if defined(__CUDACC__)
    if (n > 0) map_kernel<<<static_cast<unsigned>((n + 127) / 128), 128, 0, r.stream().raw()>>>(f, view, input.data(), output.data(), n);
    check_cuda(cudaGetLastError(), "launching map_kernel");
#endif
  }
  return output.download(r.stream());
}

/// A localize() call for map_on_backend: env, point [m], hint and window (localizer.hpp).
struct localize_query {
  int env;
  float3 p;
  int hint, window;
};
struct localize_fn {
  TRACK_GEN_HD tg::localization operator()(const tg::course_ref& v, const localize_query& q) const {
    return tg::localize(v.track(q.env), q.p, q.hint, q.window);
  }
};

/// Requires that every env of a freshly built rig holds a valid user track (the test
/// geometry's precondition, not a result under test).
inline void require_valid_user_tracks(const tg::track_snapshot& t) {
  for (int e = 0; e < t.num_envs; ++e) {
    INFO("env " << e << " status " << hex(t.status[static_cast<std::size_t>(e)]));
    REQUIRE(has(t.status[static_cast<std::size_t>(e)], tg::status::valid));
    REQUIRE(has(t.status[static_cast<std::size_t>(e)], tg::status::user_track));
  }
}

}  // namespace progress_test

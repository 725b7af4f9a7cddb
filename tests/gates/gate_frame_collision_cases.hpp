#pragma once
/// @file
/// Gate-frame collision (gate_collision.hpp, issue 15 item 3) against an independent reference in
/// double precision. The reference knows the frame only as a solid (the ring |x| <= d,
/// |y| <= w + 2t, |z| <= h + 2t minus the opening |y| < w, |z| < h, in a gate frame it builds
/// itself from the gate normal) and its boundary as 16 rectangles (the front and back faces as 4
/// strips each, the 4 outer and 4 inner side faces); the signed distance is the distance to the
/// nearest rectangle (exact point-rectangle distance), negative inside the solid. The library
/// instead takes the least distance to four member boxes outside and a closed form inside, so the
/// two share no code and no decomposition.
/// - single gates: gates of generated gate courses (yawed, and pitched with gates.align =
///   full_tangent) and hand-made ones (axis-aligned, pitched 40 degrees, vertical normal), three
///   frames and three radii, spheres drawn around the frame and inside each member: distance,
///   hit, depth, point (on the surface, |point - centre| = |distance|), unit normal along
///   (centre - point) / distance, member (its box holds the point, or the centre when inside);
/// - closed forms on an axis-aligned gate: just inside and just outside the opening, a centre
///   inside a post (the depth counts the nearest face a sphere can leave by, not the face a post
///   shares with a bar), beyond an outer corner, in front of a post, through the centre;
/// - invalid input: NaN, Inf and beyond-1e7 centres, a radius or frame out of range on the
///   device: the invalid flag, no hit, depth 0;
/// - the batch query over a course (queries.hpp collide_gate_frames): after spawns at random arc
///   lengths, spheres near the next gate, the previous gate, another gate, or anywhere: the
///   adjacent scope tests exactly {next, previous}, the all scope every gate (against the
///   reference's argmin over those sets); a NaN centre flags its own env only; optional outputs;
/// - host argument checks at the exact bounds of param_ranges.hpp.
/// Templated over the backend policy; applied in gate_frame_collision_test.cpp (host) and .cu
/// (CUDA, plus a CUDA graph replay).

#include "geometry/backend_support.hpp"
#include "geometry/reference_checker.hpp"

#include <doctest/doctest.h>

#include <track_gen/gate_collision.hpp>
#include <track_gen/queries.hpp>
#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace gate_frame_test {

namespace tg = track_gen;
using tg_test::backend;
using tg_test::dvec;
using tg_test::crossd;
using tg_test::dotd;
using tg_test::normd;
using tg_test::scaled;
using tg_test::to_d;

static_assert(std::is_trivially_copyable_v<tg::gate_frame>, "passed to kernels by value");
static_assert(std::is_trivially_copyable_v<tg::gate_frame_hit>, "returned from device code");
static_assert(std::is_trivially_copyable_v<tg::gate_frame_outputs>, "passed to kernels by value");
static_assert(std::is_trivially_copyable_v<tg::detail::gate_frames_op>, "the batch query's kernel argument");
static_assert(std::is_trivially_copyable_v<tg::course_ref>, "the view the per-env function reads");

// ---- the reference ----------------------------------------------------------------------------

inline dvec unit(dvec v) { return v * (1.0 / normd(v)); }

/// A gate's frame and opening in double, rebuilt from the gate's normal as docs/drones.md
/// defines it: forward = the normal, left = the level unit vector 90 degrees counter-clockwise
/// of its plan-view direction ((0, 1, 0) for a vertical normal), up = forward x left.
struct ref_gate {
  dvec c, f, l, u;
  double w, h, t, d;

  ref_gate(const tg::gate& g, double half_height, const tg::gate_frame& fr)
      : c(to_d(g.centre)), w(g.half_width), h(half_height), t(fr.half_thickness), d(fr.half_depth) {
    f = unit(to_d(g.normal));
    const double plan = std::hypot(f.x, f.y);
    l = plan > 1e-12 ? dvec{-f.y / plan, f.x / plan, 0.0} : dvec{0.0, 1.0, 0.0};
    u = crossd(f, l);
  }
  dvec local(dvec p) const {
    const dvec r = p - c;
    return {dotd(r, f), dotd(r, l), dotd(r, u)};
  }
  dvec world(dvec q) const { return c + f * q.x + l * q.y + u * q.z; }
  double outer_y() const { return w + 2 * t; }
  double outer_z() const { return h + 2 * t; }
  /// In the solid frame (boundary included), local coordinates.
  bool solid(dvec q) const {
    const bool in_outer = std::fabs(q.x) <= d && std::fabs(q.y) <= outer_y() && std::fabs(q.z) <= outer_z();
    const bool in_opening = std::fabs(q.y) < w && std::fabs(q.z) < h;
    return in_outer && !in_opening;
  }
  /// Signed distance of local point q to the frame: the nearest of the 16 boundary rectangles.
  double signed_distance(dvec q) const {
    struct rect {
      dvec centre, a, b;  // half-axis vectors (orthogonal)
    };
    const double oy = outer_y(), oz = outer_z();
    std::vector<rect> r;
    for (const double sx : {-1.0, 1.0}) {  // front and back faces, four strips each
      r.push_back({{sx * d, (w + oy) / 2, 0}, {0, t, 0}, {0, 0, oz}});
      r.push_back({{sx * d, -(w + oy) / 2, 0}, {0, t, 0}, {0, 0, oz}});
      r.push_back({{sx * d, 0, (h + oz) / 2}, {0, w, 0}, {0, 0, t}});
      r.push_back({{sx * d, 0, -(h + oz) / 2}, {0, w, 0}, {0, 0, t}});
    }
    for (const double s : {-1.0, 1.0}) {
      r.push_back({{0, s * oy, 0}, {d, 0, 0}, {0, 0, oz}});  // outer sides
      r.push_back({{0, 0, s * oz}, {d, 0, 0}, {0, oy, 0}});
      r.push_back({{0, s * w, 0}, {d, 0, 0}, {0, 0, h}});    // inner sides (the opening's)
      r.push_back({{0, 0, s * h}, {d, 0, 0}, {0, w, 0}});
    }
    double best = 1e300;
    for (const rect& k : r) {
      const dvec v = q - k.centre;
      const double aa = dotd(k.a, k.a), bb = dotd(k.b, k.b);
      const double ca = std::clamp(dotd(v, k.a) / aa, -1.0, 1.0), cb = std::clamp(dotd(v, k.b) / bb, -1.0, 1.0);
      best = std::min(best, normd(q - (k.centre + k.a * ca + k.b * cb)));
    }
    return solid(q) ? -best : best;
  }
  /// Whether local point q lies in member m's box (gate_member order), within `tol`.
  bool in_member(int m, dvec q, double tol) const {
    const double cy[4] = {w + t, -(w + t), 0, 0}, cz[4] = {0, 0, h + t, -(h + t)};
    const double ey[4] = {t, t, w, w}, ez[4] = {outer_z(), outer_z(), t, t};
    if (m < 0 || m > 3) return false;
    return std::fabs(q.x) <= d + tol && std::fabs(q.y - cy[m]) <= ey[m] + tol && std::fabs(q.z - cz[m]) <= ez[m] + tol;
  }
};

inline float3 f3d(dvec v) {
  float3 r;
  r.x = static_cast<float>(v.x);
  r.y = static_cast<float>(v.y);
  r.z = static_cast<float>(v.z);
  return r;
}

// ---- running the device function on the backend -------------------------------------------------

/// One call of collide_gate_frame.
struct frame_query {
  tg::gate g;
  float half_height;
  tg::gate_frame frame;
  float3 centre;
  float radius;
};

/// collide_gate_frame for query i, through the library's query runner (a host loop, or one CUDA
/// thread per query: queries.hpp's kernel).
struct single_op {
  const frame_query* in;
  tg::gate_frame_hit* out;
  TRACK_GEN_HD void operator()(int i) const {
    const frame_query q = in[i];
    out[i] = tg::collide_gate_frame(q.g, q.half_height, q.frame, q.centre, q.radius);
  }
};

template <class Policy>
std::vector<tg::gate_frame_hit> run_single(const std::vector<frame_query>& queries) {
  using B = backend<Policy>;
  typename B::stream_holder stream;
  typename B::template buffer<frame_query> in(queries);
  typename B::template buffer<tg::gate_frame_hit> out(std::vector<tg::gate_frame_hit>(queries.size()));
  tg::detail::run_query<typename Policy::backend_type>(static_cast<int>(queries.size()), single_op{in.get(), out.get()},
                                                       stream.get());
  stream.sync();
  return B::download(out.get(), queries.size());
}

/// Checks one hit against the reference; returns false (and reports) on a mismatch.
struct hit_checker {
  int failures = 0, hits = 0, misses = 0, inside = 0;
  double worst = 0.0;

  void check(const tg::gate_frame_hit& got, const ref_gate& rg, float3 centre, double radius, const std::string& what) {
    const dvec p = to_d(centre), q = rg.local(p);
    const double ref = rg.signed_distance(q);
    const double tol = 2e-5 + 1e-6 * normd(rg.c) + 1e-6 * std::fabs(ref);
    auto fail = [&](const char* why) {
      if (++failures <= 12)
        FAIL_CHECK(what << ": " << why << "; local (" << q.x << ", " << q.y << ", " << q.z << "), radius " << radius
                        << ", reference distance " << ref << ", got distance " << got.distance << " depth "
                        << got.depth << " flags " << got.flags << " member " << got.member);
    };
    if ((got.flags & tg::contact_flags::invalid) != 0u) return fail("flagged invalid");
    worst = std::max(worst, std::fabs(double(got.distance) - ref));
    if (!(std::fabs(double(got.distance) - ref) <= tol)) return fail("distance");
    const bool hit = (got.flags & tg::contact_flags::hit) != 0u;
    if (std::fabs(ref - radius) > tol && hit != (ref <= radius)) return fail("hit flag");
    hits += hit ? 1 : 0;
    misses += hit ? 0 : 1;
    inside += ref < 0 ? 1 : 0;
    if (got.depth != (hit ? static_cast<float>(radius) - got.distance : 0.0f)) return fail("depth != radius - distance");
    if (got.depth < 0.0f) return fail("negative depth");
    const dvec n = to_d(got.normal), pt = to_d(got.point);
    if (!(std::fabs(normd(n) - 1.0) <= 1e-5)) return fail("normal not unit");
    if (!(std::fabs(normd(pt - p) - std::fabs(ref)) <= 2 * tol)) return fail("|point - centre| != |distance|");
    if (!(std::fabs(rg.signed_distance(rg.local(pt))) <= 2 * tol)) return fail("point off the frame's surface");
    if (std::fabs(ref) > 1e-3) {
      const dvec expected = (p - pt) * (1.0 / double(got.distance));
      if (!(normd(n - expected) <= 1e-3)) return fail("normal not along (centre - point) / distance");
    }
    if (!rg.in_member(got.member, rg.local(pt), 2 * tol)) return fail("point not on the reported member");
    if (ref < -tol && !rg.in_member(got.member, q, tol)) return fail("an inside centre not in the reported member");
    CHECK(got.gate == -1);
  }
};

/// Gates to test: a generated gate course's (yaw only, or pitched: full tangent) and hand-made
/// ones (axis-aligned, yawed, pitched 40 degrees, a vertical normal).
inline std::vector<tg::gate> test_gates(float& half_height) {
  std::vector<tg::gate> gates;
  for (const int align : {0, 1}) {
    auto p = tg::presets::gate_course(8);
    p.seed = 11 + align;
    p.gates.align = align;
    half_height = p.gate_half_height;
    tg::course<tg::presets::gate_course_pipeline, tg::host_policy> course(p, tg::presets::gate_course_spacing(p));
    const tg::track_snapshot s = course.copy_tracks({});
    for (int e = 0; e < s.num_envs; ++e)
      for (int g = 0; g < s.num_gates[static_cast<std::size_t>(e)]; ++g) {
        const std::size_t i = s.gate_index(e, g);
        gates.push_back({s.gate_centre[i], s.gate_normal[i], s.gate_half_width[i], s.gate_arc_length[i]});
      }
  }
  const double c40 = std::cos(0.698), s40 = std::sin(0.698), c30 = std::cos(0.5236), s30 = std::sin(0.5236);
  gates.push_back({f3d({3, -2, 1.5}), f3d({1, 0, 0}), 0.75f, 0.0f});
  gates.push_back({f3d({-20, 14, 3}), f3d({c30, s30, 0}), 0.6f, 0.0f});
  gates.push_back({f3d({35, -8, 6}), f3d({c40 * c30, c40 * s30, s40}), 0.75f, 0.0f});
  gates.push_back({f3d({1, 1, 9}), f3d({0, 0, 1}), 0.5f, 0.0f});
  return gates;
}

// ---------------------------------------------------------------------------------------------

TEST_CASE_TEMPLATE_DEFINE("collide_gate_frame against the double-precision surface reference on tilted and yawed gates",
                          Policy, gate_frame_single) {
  float half_height = 0.75f;
  const std::vector<tg::gate> gates = test_gates(half_height);
  REQUIRE(gates.size() > 40);
  const tg::gate_frame frames[3] = {{0.02f, 0.02f}, {0.05f, 0.1f}, {0.1f, 0.3f}};
  const float radii[3] = {0.05f, 0.15f, 0.4f};
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<frame_query> queries;
  std::vector<ref_gate> refs;
  const int per_gate = scaled(60, 6, 12);
  for (std::size_t gi = 0; gi < gates.size(); ++gi) {
    const tg::gate& g = gates[gi];
    for (int k = 0; k < per_gate; ++k) {
      const tg::gate_frame fr = frames[(gi + static_cast<std::size_t>(k)) % 3];
      const float radius = radii[static_cast<std::size_t>(k) % 3];
      const ref_gate rg(g, half_height, fr);
      dvec q;
      if (k % 2 == 0) {  // anywhere around the frame, the opening included
        const double m = radius + 0.2;
        q = {(rg.d + m) * uni(gen), (rg.outer_y() + m) * uni(gen), (rg.outer_z() + m) * uni(gen)};
      } else {  // in or around one member's box, grown by the radius
        const int m = (k / 2) % 4;
        const double cy[4] = {rg.w + rg.t, -(rg.w + rg.t), 0, 0}, cz[4] = {0, 0, rg.h + rg.t, -(rg.h + rg.t)};
        const double ey[4] = {rg.t, rg.t, rg.w, rg.w}, ez[4] = {rg.outer_z(), rg.outer_z(), rg.t, rg.t};
        const double grow = (k / 8) % 2 == 0 ? 0.0 : radius + 0.05;  // half of them inside the box
        q = {(rg.d + grow) * uni(gen), cy[m] + (ey[m] + grow) * uni(gen), cz[m] + (ez[m] + grow) * uni(gen)};
      }
      queries.push_back({g, half_height, fr, f3d(rg.world(q)), radius});
      refs.push_back(rg);
    }
  }
  const std::vector<tg::gate_frame_hit> got = run_single<Policy>(queries);
  hit_checker c;
  for (std::size_t i = 0; i < queries.size(); ++i)
    c.check(got[i], refs[i], queries[i].centre, queries[i].radius, "query " + std::to_string(i));
  MESSAGE(queries.size() << " spheres on " << gates.size() << " gates: " << c.hits << " hits (" << c.inside
                         << " centres inside a member), " << c.misses << " misses; largest distance error "
                         << c.worst << " m");
  CHECK(c.failures == 0);
  CHECK(c.hits > static_cast<int>(queries.size()) / 5);  // every kind of outcome is tested
  CHECK(c.misses > static_cast<int>(queries.size()) / 10);
  CHECK(c.inside > static_cast<int>(queries.size()) / 10);
}

TEST_CASE_TEMPLATE_DEFINE("collide_gate_frame closed forms on an axis-aligned gate", Policy, gate_frame_closed_forms) {
  // Gate at (10, -5, 2) facing +x: left = +y, up = +z. Opening 1.5 m x 1.2 m, members 0.1 m
  // across (t = 0.05) and 0.2 m deep (d = 0.1), a sphere of radius 0.2.
  const float w = 0.75f, h = 0.6f, t = 0.05f, d = 0.1f, r = 0.2f;
  const tg::gate g{f3d({10, -5, 2}), f3d({1, 0, 0}), w, 0.0f};
  const tg::gate_frame fr{t, d};
  struct expect {
    const char* name;
    dvec local;
    bool hit;
    double distance;
    int member;
    dvec normal;
  };
  const double W = w + 2.0 * t, H = h + 2.0 * t;
  const std::vector<expect> cases = {
      {"just clear of the left post, inside the opening", {0, w - r - 1e-3, 0}, false, r + 1e-3, 0, {0, -1, 0}},
      {"1 mm into the left post from the opening", {0, w - r + 1e-3, 0}, true, r - 1e-3, 0, {0, -1, 0}},
      {"1 mm into the top bar from the opening", {0, 0, h - r + 1e-3}, true, r - 1e-3, 2, {0, 0, -1}},
      {"1 mm into the bottom bar from the opening", {0, 0.2, -(h - r + 1e-3)}, true, r - 1e-3, 3, {0, 0, 1}},
      {"1 mm into the right post from outside", {0, -(W + r - 1e-3), 0}, true, r - 1e-3, 1, {0, -1, 0}},
      {"just clear of the right post outside", {0, -(W + r + 1e-3), 0}, false, r + 1e-3, 1, {0, -1, 0}},
      // Inside the left post, nearer its inner face (0.7 t) than its outer one (1.3 t).
      {"centre inside the left post", {0, w + 0.7 * t, 0}, true, -0.7 * t, 0, {0, -1, 0}},
      // Inside the top bar 1 cm from where it meets the post: that shared face is not a way out;
      // the nearest faces are the bar's outer and inner faces, t away (outer first).
      {"centre inside the top bar next to the post", {0, w - 0.01, h + t}, true, -t, 2, {0, 0, 1}},
      {"centre inside the post's top corner", {0, w + 0.5 * t, h + 1.5 * t}, true, -0.5 * t, 0, {0, 0, 1}},
      {"centre inside the post, near its front face", {0.08, w + t, 0}, true, -0.02, 0, {1, 0, 0}},
      {"in front of the left post", {d + 0.15, w + t, 0}, true, 0.15, 0, {1, 0, 0}},
      {"beyond the outer top-left corner", {0, W + 0.1, H + 0.1}, true, std::sqrt(0.02), 0,
       {0, 1 / std::sqrt(2.0), 1 / std::sqrt(2.0)}},
      {"through the centre of the opening", {0, 0, 0}, false, h, 2, {0, 0, -1}},
      {"5 m ahead of the gate", {5, 0, 0}, false, std::sqrt((5 - d) * (5 - d) + h * h), 2,
       unit({5 - d, 0, -h})},
  };
  std::vector<frame_query> queries;
  const ref_gate rg(g, h, fr);
  for (const expect& c : cases) queries.push_back({g, h, fr, f3d(rg.world(c.local)), r});
  const std::vector<tg::gate_frame_hit> got = run_single<Policy>(queries);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const expect& c = cases[i];
    const tg::gate_frame_hit& x = got[i];
    CAPTURE(c.name);
    CHECK(((x.flags & tg::contact_flags::hit) != 0u) == c.hit);
    CHECK((x.flags & tg::contact_flags::invalid) == 0u);
    CHECK(std::fabs(double(x.distance) - c.distance) <= 2e-5);
    CHECK(std::fabs(double(x.depth) - (c.hit ? r - c.distance : 0.0)) <= 2e-5);
    CHECK(x.member == c.member);
    CHECK(normd(to_d(x.normal) - c.normal) <= 1e-5);
    CHECK(normd(to_d(x.point) - (to_d(queries[i].centre) - c.normal * c.distance)) <= 3e-5);
  }
}

TEST_CASE_TEMPLATE_DEFINE("collide_gate_frame: invalid input gives the invalid flag and no hit", Policy,
                          gate_frame_invalid) {
  const tg::gate g{f3d({0, 0, 2}), f3d({1, 0, 0}), 0.75f, 0.0f};
  const tg::gate_frame good{0.05f, 0.05f};
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<frame_query> queries = {
      {g, 0.75f, good, f3d({nan, 0, 0}), 0.2f},       {g, 0.75f, good, f3d({0, inf, 0}), 0.2f},
      {g, 0.75f, good, f3d({0, 0, -inf}), 0.2f},      {g, 0.75f, good, f3d({2e7, 0, 0}), 0.2f},
      {g, 0.75f, good, f3d({0, 0.8, 2}), 0.0f},       {g, 0.75f, good, f3d({0, 0.8, 2}), nan},
      {g, 0.75f, good, f3d({0, 0.8, 2}), -0.1f},      {g, 0.75f, {-0.05f, 0.05f}, f3d({0, 0.8, 2}), 0.2f},
      {g, 0.75f, {0.05f, nan}, f3d({0, 0.8, 2}), 0.2f}, {g, 0.0f, good, f3d({0, 0.8, 2}), 0.2f},
      {g, 0.75f, good, f3d({0, 0.8, 2}), 0.2f},  // valid, a hit: the others are invalid for their input only
  };
  const std::vector<tg::gate_frame_hit> got = run_single<Policy>(queries);
  for (std::size_t i = 0; i + 1 < queries.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].flags == tg::contact_flags::invalid);
    CHECK(got[i].depth == 0.0f);
    CHECK(std::isnan(got[i].distance));
    CHECK(std::isnan(got[i].point.x));
    CHECK(std::isnan(got[i].normal.x));
    CHECK(got[i].member == -1);
    CHECK(got[i].gate == -1);
  }
  CHECK(got.back().flags == tg::contact_flags::hit);
  CHECK(got.back().member == 0);
}

/// The batch query's reference for env e: the least reference distance over `candidates`.
struct env_reference {
  double distance = 1e300, second = 1e300;
  int gate = -1;
};

inline env_reference reference_over(const tg::track_snapshot& s, int e, const std::vector<int>& candidates,
                                    float half_height, const tg::gate_frame& fr, float3 centre) {
  env_reference r;
  for (const int g : candidates) {
    const std::size_t i = s.gate_index(e, g);
    const ref_gate rg({s.gate_centre[i], s.gate_normal[i], s.gate_half_width[i], 0.0f}, half_height, fr);
    const double sd = rg.signed_distance(rg.local(to_d(centre)));
    if (sd < r.distance) {
      r.second = r.distance;
      r.distance = sd;
      r.gate = g;
    } else {
      r.second = std::min(r.second, sd);
    }
  }
  return r;
}

TEST_CASE_TEMPLATE_DEFINE("batch collide_gate_frames: the next and previous gates (or all) of each env after spawns",
                          Policy, gate_frame_batch) {
  using B = backend<Policy>;
  using Backend = typename Policy::backend_type;
  typename B::stream_holder stream;
  auto p = tg::presets::gate_course(scaled(256, 8, 32));
  p.seed = 5;
  p.gates.align = 1;  // pitched gates
  const int num_envs = p.num_envs;
  tg::course<tg::presets::gate_course_pipeline, Policy> course(p, tg::presets::gate_course_spacing(p), stream.get());
  const tg::track_snapshot s = course.copy_tracks(stream.get());
  // Spawn every env at a random arc length: next gates all over the courses.
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<float> spawn_s(static_cast<std::size_t>(num_envs));
  for (int e = 0; e < num_envs; ++e)
    spawn_s[static_cast<std::size_t>(e)] = static_cast<float>((0.5 + 0.5 * uni(gen)) * s.length[static_cast<std::size_t>(e)]);
  typename B::template buffer<float> s_buffer(spawn_s);
  tg::spawn<Backend>(course.view(), tg::env_mask{}, s_buffer.get(), nullptr, nullptr, nullptr, stream.get());
  const tg::progress_snapshot pr = course.copy_progress(stream.get());
  const tg::gate_frame fr{0.04f, 0.08f};
  const float radius = 0.25f, half_height = p.gate_half_height;
  // Each env's sphere: near the frame of its next gate (e % 4 == 0), its previous gate (1), a
  // gate two ahead (2: found by the all scope only), or anywhere within 3 m of a gate (3).
  std::vector<float3> centres(static_cast<std::size_t>(num_envs));
  for (int e = 0; e < num_envs; ++e) {
    const int num_gates = s.num_gates[static_cast<std::size_t>(e)], next = pr.next_gate[static_cast<std::size_t>(e)];
    REQUIRE(num_gates >= 3);
    const int kind = e % 4;
    const int g = kind == 0 ? next : (kind == 1 ? (next + num_gates - 1) % num_gates : (next + 2) % num_gates);
    const std::size_t i = s.gate_index(e, g);
    const ref_gate rg({s.gate_centre[i], s.gate_normal[i], s.gate_half_width[i], 0.0f}, half_height, fr);
    const double spread = kind == 3 ? 3.0 : 0.0;
    const dvec q{(rg.d + 0.3 + spread) * uni(gen), (rg.outer_y() + 0.3 + spread) * uni(gen),
                 (rg.outer_z() + 0.3 + spread) * uni(gen)};
    centres[static_cast<std::size_t>(e)] = f3d(rg.world(q));
  }
  const int poisoned = num_envs / 2 + 1;
  centres[static_cast<std::size_t>(poisoned)].y = std::numeric_limits<float>::quiet_NaN();
  typename B::template buffer<float3> centre_buffer(centres);
  const std::size_t n = static_cast<std::size_t>(num_envs);
  struct out_buffers {
    typename B::template buffer<std::uint32_t> flags;
    typename B::template buffer<float> depth, distance;
    typename B::template buffer<float3> point, normal;
    typename B::template buffer<int> member, gate;
    explicit out_buffers(std::size_t n)
        : flags(std::vector<std::uint32_t>(n, 99u)), depth(std::vector<float>(n, -1.0f)), distance(std::vector<float>(n, -1.0f)),
          point(std::vector<float3>(n)), normal(std::vector<float3>(n)), member(std::vector<int>(n, -7)),
          gate(std::vector<int>(n, -7)) {}
    tg::gate_frame_outputs outputs() {
      return {flags.get(), depth.get(), distance.get(), point.get(), normal.get(), member.get(), gate.get()};
    }
  };
  int adjacent_hits = 0, all_hits = 0, other_gate_hits = 0;
  for (const tg::gate_scope scope : {tg::gate_scope::adjacent, tg::gate_scope::all}) {
    CAPTURE(static_cast<int>(scope));
    out_buffers o(n);
    tg::collide_gate_frames<Backend>(course.view(), centre_buffer.get(), radius, fr, scope, o.outputs(), stream.get());
    stream.sync();
    const auto flags = B::download(o.flags.get(), n);
    const auto depth = B::download(o.depth.get(), n);
    const auto distance = B::download(o.distance.get(), n);
    const auto point = B::download(o.point.get(), n);
    const auto normal = B::download(o.normal.get(), n);
    const auto member = B::download(o.member.get(), n);
    const auto gate = B::download(o.gate.get(), n);
    int failures = 0;
    for (int e = 0; e < num_envs; ++e) {
      const std::size_t u = static_cast<std::size_t>(e);
      CAPTURE(e);
      if (e == poisoned) {
        CHECK(flags[u] == tg::contact_flags::invalid);
        CHECK(depth[u] == 0.0f);
        CHECK(gate[u] == -1);
        CHECK(member[u] == -1);
        continue;
      }
      const int num_gates = s.num_gates[u], next = pr.next_gate[u];
      std::vector<int> candidates;
      if (scope == tg::gate_scope::adjacent) {
        candidates = {next, (next + num_gates - 1) % num_gates};
      } else {
        for (int g = 0; g < num_gates; ++g) candidates.push_back(g);
      }
      const env_reference ref = reference_over(s, e, candidates, half_height, fr, centres[u]);
      const double tol = 3e-5 + 1e-6 * normd(to_d(centres[u]));
      const bool hit = (flags[u] & tg::contact_flags::hit) != 0u;
      bool ok = (flags[u] & tg::contact_flags::invalid) == 0u && std::fabs(double(distance[u]) - ref.distance) <= tol &&
                (std::fabs(ref.distance - radius) <= tol || hit == (ref.distance <= radius)) &&
                depth[u] == (hit ? radius - distance[u] : 0.0f) && member[u] >= 0 && member[u] <= 3 &&
                std::fabs(normd(to_d(normal[u])) - 1.0) <= 1e-5 &&
                std::fabs(normd(to_d(point[u]) - to_d(centres[u])) - std::fabs(ref.distance)) <= 2 * tol &&
                std::find(candidates.begin(), candidates.end(), gate[u]) != candidates.end();
      if (ref.second - ref.distance > 2 * tol) ok = ok && gate[u] == ref.gate;  // no near tie between gates
      if (!ok && ++failures <= 10)
        FAIL_CHECK("env " << e << " kind " << e % 4 << ": flags " << flags[u] << " distance " << distance[u]
                          << " (reference " << ref.distance << ") gate " << gate[u] << " (reference " << ref.gate
                          << ", next " << next << ") member " << member[u] << " depth " << depth[u]);
      if (scope == tg::gate_scope::adjacent) adjacent_hits += hit ? 1 : 0;
      if (scope == tg::gate_scope::all) {
        all_hits += hit ? 1 : 0;
        other_gate_hits += hit && gate[u] != next && gate[u] != (next + num_gates - 1) % num_gates ? 1 : 0;
      }
    }
    CHECK(failures == 0);
  }
  MESSAGE(num_envs << " envs: " << adjacent_hits << " hits near the target, " << all_hits << " over all gates ("
                   << other_gate_hits << " on other gates)");
  CHECK(adjacent_hits > num_envs / 8);
  CHECK(other_gate_hits > 0);  // the scopes differ: a gate two ahead is found only by `all`
  CHECK(all_hits > adjacent_hits);  // a superset of gates: every adjacent hit stays a hit, and more hit
  // Optional outputs: only flags and gate written; the same values.
  out_buffers o(n);
  tg::gate_frame_outputs some;
  some.flags = o.flags.get();
  some.gate = o.gate.get();
  tg::collide_gate_frames<Backend>(course.view(), centre_buffer.get(), radius, fr, tg::gate_scope::adjacent, some,
                                   stream.get());
  out_buffers full(n);
  tg::collide_gate_frames<Backend>(course.view(), centre_buffer.get(), radius, fr, tg::gate_scope::adjacent,
                                   full.outputs(), stream.get());
  stream.sync();
  CHECK(B::download(o.flags.get(), n) == B::download(full.flags.get(), n));
  CHECK(B::download(o.gate.get(), n) == B::download(full.gate.get(), n));
  CHECK(B::download(o.depth.get(), n) == std::vector<float>(n, -1.0f));  // not written
}

TEST_CASE_TEMPLATE_DEFINE("batch collide_gate_frames checks its arguments on the host, at the table's exact bounds",
                          Policy, gate_frame_arguments) {
  using B = backend<Policy>;
  using Backend = typename Policy::backend_type;
  typename B::stream_holder stream;
  auto p = tg::presets::gate_course(4);
  tg::course<tg::presets::gate_course_pipeline, Policy> course(p, tg::presets::gate_course_spacing(p), stream.get());
  typename B::template buffer<float3> centres(std::vector<float3>(4, f3d({0, 0, 0})));
  typename B::template buffer<std::uint32_t> flags(std::vector<std::uint32_t>(4, 0u));
  tg::gate_frame_outputs out;
  out.flags = flags.get();
  const tg::gate_frame good{0.05f, 0.05f};
  auto call = [&](float radius, tg::gate_frame fr, tg::gate_scope scope = tg::gate_scope::adjacent,
                  const float3* c = nullptr) {
    tg::collide_gate_frames<Backend>(course.view(), c != nullptr ? c : centres.get(), radius, fr, scope, out,
                                     stream.get());
  };
  const float lo = 1e-4f, hi = 1e6f, inf = std::numeric_limits<float>::infinity();
  // At the bounds: accepted.
  CHECK_NOTHROW(call(hi, good));
  CHECK_NOTHROW(call(std::nextafter(0.0f, 1.0f), good));
  CHECK_NOTHROW(call(0.2f, {lo, lo}));
  CHECK_NOTHROW(call(0.2f, {hi, hi}));
  // Just outside, NaN and Inf: refused with the parameter's name and range.
  for (const float bad : {0.0f, -0.1f, std::nextafter(hi, inf), std::numeric_limits<float>::quiet_NaN(), inf}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(call(bad, good), doctest::Contains("gate_frame.radius [m]"), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(call(0.0f, good), doctest::Contains("expected (0, 1e6]"), std::invalid_argument);
  for (const float bad : {std::nextafter(lo, 0.0f), std::nextafter(hi, inf), 0.0f, std::numeric_limits<float>::quiet_NaN()}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(call(0.2f, {bad, 0.05f}), doctest::Contains("gate_frame.half_thickness [m]"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(call(0.2f, {0.05f, bad}), doctest::Contains("gate_frame.half_depth [m]"), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(call(0.2f, {std::nextafter(lo, 0.0f), 0.05f}), doctest::Contains("expected [0.0001, 1e6]"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(call(0.2f, good, static_cast<tg::gate_scope>(2)), doctest::Contains("scope = 2"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tg::collide_gate_frames<Backend>(course.view(), nullptr, 0.2f, good, tg::gate_scope::adjacent,
                                                        out, stream.get()),
                       doctest::Contains("centres is null"), std::invalid_argument);
  if constexpr (!std::is_same_v<Backend, tg::backend::host>) {
    const std::vector<float3> host(4, f3d({0, 0, 0}));
    CHECK_THROWS_AS(call(0.2f, good, tg::gate_scope::adjacent, host.data()), std::invalid_argument);
  }
}

}  // namespace gate_frame_test

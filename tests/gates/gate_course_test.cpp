// Host instantiation of gate_course_tests.hpp, and the gate-course parameters' checks.
#include "gate_course_tests.hpp"
#include "geometry/elevation_tests.hpp"

#include <random>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(gate_course_sweep, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_determinism, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(gate_course_progress, std::tuple<track_gen::host_policy>);

TEST_CASE("the gate test's bar crossing agrees with the double-precision segment test") {
  namespace tg = track_gen;
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  int crossing = 0, disagree = 0;
  for (int i = 0; i < 20000; ++i) {
    auto draw = [&] {
      const float yaw = 3.14159265f * unit(gen), pitch = 0.5f * unit(gen);
      return tg::gate{{2.0f * unit(gen), 2.0f * unit(gen), 0.5f * unit(gen)},
                      {std::cos(pitch) * std::cos(yaw), std::cos(pitch) * std::sin(yaw), std::sin(pitch)},
                      0.5f + 0.5f * (unit(gen) + 1.0f), 0.0f};
    };
    const tg::gate a = draw(), b = draw();
    const float half_height = 0.4f;
    auto bar = [](const tg::gate& g, dvec& l0, dvec& l1) {
      const dvec n = to_d(g.normal);
      const dvec left = dvec{-n.y, n.x, 0} * (g.half_width / std::hypot(n.x, n.y));
      l0 = to_d(g.centre) - left;
      l1 = to_d(g.centre) + left;
    };
    dvec a0, a1, b0, b1;
    bar(a, a0, a1);
    bar(b, b0, b1);
    const bool expected = std::fabs(a0.z - b0.z) < 2.0 * half_height && plan_cross(a0, a1, b0, b1);
    crossing += expected ? 1 : 0;
    disagree += tg::detail::gate_bars_cross(a, b, half_height) != expected ? 1 : 0;
  }
  MESSAGE(crossing << " of 20000 random gate pairs cross, " << disagree << " verdicts differ");
  CHECK(crossing > 1000);
  CHECK(disagree <= 2);  // only pairs whose crossing point sits at a bar's end within float rounding
}

namespace {
/// A workspace over `scratch` holding `points` as control points (host stage runs).
track_gen::detail::workspace make_workspace(std::vector<unsigned char>& scratch, const track_gen::detail::scratch_layout& layout,
                                   const std::vector<float3>& points, const track_gen::track_params& p) {
  track_gen::detail::workspace ws{};
  ws.bind_scratch(scratch.data(), layout);
  ws.seed = p.seed;
  ws.global_env = 3;
  ws.source = track_gen::detail::track_source::random;
  ws.num_samples = p.num_samples;
  for (std::size_t i = 0; i < points.size(); ++i) ws.control[i] = points[i];
  ws.num_control = static_cast<int>(points.size());
  return ws;
}
}  // namespace

TEST_CASE("gate_anchors: angle-sorted order and the even thinning, against a sort in double") {
  namespace tg = track_gen;
  auto p = tg::presets::gate_course(1);
  p.gates.ordering = static_cast<int>(tg::gate_ordering::angle_sorted);
  const auto layout = tg::detail::scratch_layout::make(64, 64 * 64, p.num_samples);
  std::vector<unsigned char> scratch(layout.bytes);
  std::mt19937 gen(77);
  std::uniform_real_distribution<float> unit(-10.0f, 10.0f);
  for (int set = 0; set < 200; ++set) {
    const int m = 5 + set % 40;
    std::vector<float3> pts(static_cast<std::size_t>(m));
    for (float3& q : pts) q = {unit(gen), unit(gen), 0.1f * unit(gen)};
    p.gates.min_gates = p.gates.max_gates = 3 + set % (m - 2);  // G in [3, m]
    tg::detail::workspace ws = make_workspace(scratch, layout, pts, p);
    const tg::detail::host_block_context ctx;
    tg::stages::gate_anchors::run(ctx, ws, p);
    // Reference: indices sorted by angle about the centroid (double), then every floor(j m / G)-th.
    double cx = 0, cy = 0;
    for (const float3& q : pts) cx += q.x / m, cy += q.y / m;
    std::vector<int> order(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) order[static_cast<std::size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return std::atan2(pts[a].y - cy, pts[a].x - cx) < std::atan2(pts[b].y - cy, pts[b].x - cx);
    });
    const int g_n = p.gates.max_gates;
    REQUIRE(ws.num_control == g_n);
    int wrong = 0;
    for (int j = 0; j < g_n; ++j) {
      const float3 want = pts[static_cast<std::size_t>(order[static_cast<std::size_t>(static_cast<long long>(j) * m / g_n)])];
      const float3 got = ws.control[j];
      wrong += (got.x != want.x || got.y != want.y || got.z != want.z) ? 1 : 0;
    }
    CAPTURE(set);
    CHECK(wrong == 0);
  }
}

TEST_CASE("gate_spacing: clusters and coincident anchors end at least min_spacing apart (brute force)") {
  namespace tg = track_gen;
  auto p = tg::presets::gate_course(1);
  p.elevation.profile = tg::elevation_kind::flat;
  p.spline.samples_per_segment = 8;
  p.gates.min_spacing = 3.0f;
  p.gates.spacing_iterations = 256;
  const auto layout = tg::detail::scratch_layout::make(64, 64 * 8, p.num_samples);
  std::vector<unsigned char> scratch(layout.bytes);
  std::mt19937 gen(91);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  double closest = 1e30;
  for (int set = 0; set < 100; ++set) {
    const int m = 6 + set % 7;
    // A ring of radius 12 m with a cluster: a few anchors within 0.5 m, two of them coincident.
    std::vector<float3> pts(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) {
      const float a = 6.2831853f * static_cast<float>(i) / static_cast<float>(m);
      pts[static_cast<std::size_t>(i)] = {12.0f * std::cos(a), 12.0f * std::sin(a), 2.0f};
    }
    for (int i = 1; i <= 3; ++i)
      pts[static_cast<std::size_t>(i)] = {pts[0].x + 0.5f * unit(gen), pts[0].y + 0.5f * unit(gen), 2.0f + 0.2f * unit(gen)};
    pts[2] = pts[1];
    tg::detail::workspace ws = make_workspace(scratch, layout, pts, p);
    const tg::detail::host_block_context ctx;
    tg::stages::catmull_rom::run(ctx, ws, p);  // gate_spacing lifts z from the spline
    tg::stages::gate_spacing::run(ctx, ws, p);
    for (int i = 0; i < m; ++i)
      for (int j = i + 1; j < m; ++j) closest = std::min(closest, normd(to_d(ws.control[i]) - to_d(ws.control[j])));
    CHECK(ws.num_dense == m * p.spline.samples_per_segment);  // the course line through the moved gates
  }
  MESSAGE("closest pair after the solve: " << closest << " m (min_spacing 3 m)");
  CHECK(closest >= 3.0);
}

TEST_CASE("polar_gate_course_pipeline builds gate_course_pipeline's polar courses, bit for bit (host)") {
  namespace tg = track_gen;
  for (int variant = 0; variant < 3; ++variant) {
    auto p = tg::presets::gate_course(scaled(256, 8, 16));
    p.seed = 41 + variant;
    if (variant == 1) p.elevation.profile = tg::elevation_kind::flat;
    if (variant == 2) p.gates.align = static_cast<int>(tg::gate_align::full_tangent);  // frames along the 3D tangent
    CAPTURE(variant);
    same_tracks<tg::presets::polar_gate_course_pipeline, tg::presets::gate_course_pipeline, tg::host_policy>(
        p, tg::presets::gate_course_spacing(p));
  }
  auto p = tg::presets::gate_course(4);
  p.generator.family = tg::generator_family::bezier;
  CHECK_THROWS_AS((tg::course<tg::presets::polar_gate_course_pipeline, tg::host_policy>(p, tg::presets::gate_course_spacing(p))),
                  std::invalid_argument);
}

TEST_CASE("gate-course parameters out of range are refused with their name and range") {
  namespace tg = track_gen;
  auto p = tg::presets::gate_course(4);
  p.gates.min_gates = 2;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::gate_course_pipeline, tg::host_policy>(p, 10.0f)),
                       doctest::Contains("track_params.gates.min_gates = 2 is out of range: expected [3, 256]"),
                       std::invalid_argument);
  p = tg::presets::gate_course(4);
  p.gates.max_gates = 5;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::gate_course_pipeline, tg::host_policy>(p, 10.0f)),
                       doctest::Contains("track_params.gates.max_gates = 5 is out of range"), std::invalid_argument);
}

TEST_CASE("a gate storage smaller than the gate count fails the gate test instead of writing past it") {
  namespace tg = track_gen;
  auto p = tg::presets::gate_course(32);
  p.gates.min_gates = p.gates.max_gates = 12;
  p.validate.max_attempts = 2;
  // 150 m / 20 m: 8 gate slots for 12 gates.
  tg::course<tg::presets::gate_course_pipeline, tg::host_policy> course(p, 20.0f);
  REQUIRE(course.max_gates() == 8);
  const tg::track_snapshot s = course.copy_tracks({});
  for (int e = 0; e < s.num_envs; ++e) {
    CAPTURE(e);
    CHECK((s.status[e] & tg::status::fallback) != 0u);
    CHECK((s.status[e] & tg::status::fail_gates) != 0u);
    CHECK(s.num_gates[e] <= 8);
  }
}
}  // namespace tg_test

// Host instantiation of families_bezier_hull_tests.hpp, plus direct checks of the two stages'
// own invariants on the host context: the bezier control points against a double-precision
// re-implementation of the construction from its corners, the hull's midpoints and Chaikin
// passes, the corner helpers (minimum distance, angle order, convex hull, sharp-corner pruning).
#include "families_bezier_hull_tests.hpp"

#include <cstdint>
#include <random>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(bezier_family_sweep, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(hull_family_sweep, std::tuple<track_gen::host_policy>);
}  // namespace tg_test

namespace {

namespace tg = track_gen;
using tg_test::dvec;
using tg_test::normd;
using tg_test::to_d;

/// A host workspace with room for any family output, and the stage's control points.
struct stage_run {
  std::vector<float3> control = std::vector<float3>(4096), next = std::vector<float3>(4096),
                      dense = std::vector<float3>(16384);
  std::vector<float> dense_s = std::vector<float>(16385);
  tg::detail::workspace ws{};

  template <class Stage>
  std::vector<float3> run(const tg::track_params& p, std::uint32_t env, std::uint32_t attempt = 0) {
    ws.control = control.data();
    ws.control_next = next.data();
    ws.dense = dense.data();
    ws.dense_s = dense_s.data();
    ws.seed = p.seed;
    ws.global_env = env;
    ws.episode = 0;
    ws.attempt = attempt;
    tg::detail::host_block_context ctx;
    Stage::run(ctx, ws, p);
    return {control.begin(), control.begin() + ws.num_control};
  }
};

double cross2(dvec a, dvec b) { return a.x * b.y - a.y * b.x; }

/// Corners drawn by family_draw_corners are >= min_distance apart, inside the layout's region,
/// and (after family_sort_by_angle) in strictly increasing angle about their centroid.
/// `sorted`: corners that pruning (max_turn) or the convex hull may have thinned are sorted
/// about the centroid of all drawn corners, not of the kept ones: then only the turn is checked.
void check_corners(const std::vector<dvec>& c, float extent, int layout, float min_distance, bool sorted = true) {
  const int n = static_cast<int>(c.size());
  dvec centre;
  for (const dvec& q : c) centre = centre + q * (1.0 / n);
  int descents = 0;
  for (int i = 0; i < n; ++i) {
    const dvec q = c[static_cast<std::size_t>(i)];
    if (layout == 0) {
      CHECK(std::fabs(q.x) <= extent * (1 + 1e-6));
      CHECK(std::fabs(q.y) <= extent * (1 + 1e-6));
    } else {
      CHECK(std::hypot(q.x, q.y) <= extent * (1 + 1e-6));
    }
    for (int j = i + 1; j < n; ++j) CHECK(normd(q - c[static_cast<std::size_t>(j)]) >= min_distance * (1 - 1e-6));
    const dvec r = c[static_cast<std::size_t>((i + 1) % n)];
    descents += std::atan2(r.y - centre.y, r.x - centre.x) < std::atan2(q.y - centre.y, q.x - centre.x) ? 1 : 0;
  }
  if (sorted) CHECK(descents == 1);  // the angles increase once around the circle
}

/// n points uniform in [-5, 5]^2 m, sorted by angle about their centroid.
std::vector<float3> sorted_random_points(std::mt19937& gen, int n) {
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  std::vector<float3> pts(static_cast<std::size_t>(n));
  for (float3& q : pts) q = float3{u(gen), u(gen), 0.0f};
  tg::detail::family_sort_by_angle(pts.data(), n);
  return pts;
}

}  // namespace

TEST_CASE("bezier_corners: control points are the documented Bezier curve through sorted, spaced corners") {
  for (const int layout : {0, 1}) {
    CAPTURE(layout);
    tg::track_params p = tg::presets::track(1);
    p.seed = 42;
    p.bezier.layout = layout;
    p.bezier.min_corner_distance = 2.5f;  // the grid's cells (>= 2.6 m) keep every corner
    p.bezier.edgy = 0.3f;
    p.bezier.rad = 0.45f;  // above handle_clamp on the short side of a corner: the clamp matters
    const tg::bezier_params& b = p.bezier;
    const int k = b.samples_per_piece;
    stage_run s;
    int largest = 0;
    for (std::uint32_t env = 0; env < 300; ++env) {
      CAPTURE(env);
      const std::vector<float3> out = s.run<tg::stages::bezier_corners>(p, env);
      const int m = static_cast<int>(out.size());
      REQUIRE(m % k == 0);
      const int n = m / k;
      largest = std::max(largest, m);
      // The disc layout drops a corner after 8 rejected candidates (never below 3).
      CHECK(n >= (layout == 0 ? b.corners_min : 3));
      CHECK(n <= b.corners_max);
      // Piece i starts at corner i (t = 0).
      std::vector<dvec> c;
      for (int i = 0; i < n; ++i) c.push_back(to_d(out[static_cast<std::size_t>(i * k)]));
      check_corners(c, b.extent, layout, b.min_corner_distance);
      // The construction in double: tangents, clamped handles, cubic Bernstein form.
      std::vector<dvec> tangent(static_cast<std::size_t>(n));
      std::vector<double> h_in(static_cast<std::size_t>(n)), h_out(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) {
        const dvec a = c[static_cast<std::size_t>((i + n - 1) % n)], q = c[static_cast<std::size_t>(i)],
                   z = c[static_cast<std::size_t>((i + 1) % n)];
        const double d_in = normd(q - a), d_out = normd(z - q);
        const dvec in = (q - a) * (1 / d_in), outd = (z - q) * (1 / d_out);
        dvec bis = in + outd;
        bis = bis * (1 / normd(bis));
        dvec t = bis + (in - bis) * b.edgy;
        tangent[static_cast<std::size_t>(i)] = t * (1 / normd(t));
        const double cap = b.handle_clamp * std::min(d_in, d_out);
        h_in[static_cast<std::size_t>(i)] = std::min(b.rad * d_in, cap);
        h_out[static_cast<std::size_t>(i)] = std::min(b.rad * d_out, cap);
        // The two handles of edge (i, i+1) never overlap along it.
        CHECK(h_out[static_cast<std::size_t>(i)] <= 0.5 * d_out + 1e-9);
      }
      double worst = 0;
      for (int w = 0; w < m; ++w) {
        const int i = w / k, i1 = (i + 1) % n;
        const double t = static_cast<double>(w % k) / k, u = 1 - t;
        const dvec p0 = c[static_cast<std::size_t>(i)], p3 = c[static_cast<std::size_t>(i1)];
        const dvec p1 = p0 + tangent[static_cast<std::size_t>(i)] * h_out[static_cast<std::size_t>(i)];
        const dvec p2 = p3 - tangent[static_cast<std::size_t>(i1)] * h_in[static_cast<std::size_t>(i1)];
        const dvec ref = p0 * (u * u * u) + p1 * (3 * u * u * t) + p2 * (3 * u * t * t) + p3 * (t * t * t);
        worst = std::max(worst, normd(ref - to_d(out[static_cast<std::size_t>(w)])));
        CHECK(out[static_cast<std::size_t>(w)].z == 0.0f);
      }
      CHECK(worst <= 1e-4);  // float rounding of coordinates of a few metres
    }
    // max_control_points bounds every count, and the largest appears.
    CHECK(largest == tg::stages::bezier_corners::max_control_points(p));
  }
}

TEST_CASE("bezier_corners: a new attempt draws new corners; the same attempt the same ones") {
  tg::track_params p = tg::presets::track(1);
  stage_run s;
  const std::vector<float3> a = s.run<tg::stages::bezier_corners>(p, 5, 0);
  const std::vector<float3> again = s.run<tg::stages::bezier_corners>(p, 5, 0);
  const std::vector<float3> b = s.run<tg::stages::bezier_corners>(p, 5, 1);
  REQUIRE(a.size() == again.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK((a[i].x == again[i].x && a[i].y == again[i].y));
  CHECK((a.size() != b.size() || a[0].x != b[0].x || a[0].y != b[0].y));
}

TEST_CASE("hull_corners: midpoints move along the edge normal within displacement; Chaikin passes cut corners") {
  for (const int convex : {0, 1}) {
    CAPTURE(convex);
    tg::track_params p = tg::presets::track(1);
    p.seed = 9;
    p.hull.convex = convex;
    p.hull.layout = convex;  // the disc layout with the convex hull
    const tg::hull_params& h = p.hull;
    stage_run s;
    for (std::uint32_t env = 0; env < 300; ++env) {
      CAPTURE(env);
      p.hull.chaikin_passes = 0;
      const std::vector<float3> raw = s.run<tg::stages::hull_corners>(p, env);
      const int n = static_cast<int>(raw.size()) / 2;
      REQUIRE(static_cast<int>(raw.size()) == 2 * n);
      CHECK(n >= 3);
      CHECK(n <= h.corners_max);
      std::vector<dvec> c;
      for (int i = 0; i < n; ++i) c.push_back(to_d(raw[static_cast<std::size_t>(2 * i)]));
      // Pruning and the hull drop corners but keep the spacing.
      check_corners(c, h.extent, h.layout, h.min_corner_distance, false);
      for (int i = 0; i < n; ++i) {
        const dvec a = c[static_cast<std::size_t>(i)], z = c[static_cast<std::size_t>((i + 1) % n)];
        const dvec prev = c[static_cast<std::size_t>((i + n - 1) % n)];
        const dvec e = z - a;
        const dvec off = to_d(raw[static_cast<std::size_t>(2 * i + 1)]) - (a + z) * 0.5;
        CHECK(std::fabs(dotd(off, e)) <= 1e-5 * dotd(e, e) + 1e-6);  // perpendicular to the edge
        CHECK(normd(off) <= h.displacement * normd(e) * (1 + 1e-5) + 1e-6);
        const double turn = std::atan2(cross2(a - prev, e), dotd(a - prev, e));
        if (n > 3) CHECK(std::fabs(turn) <= h.max_turn + 1e-5);
        if (convex == 1) CHECK(turn > 0);  // the hull turns left at every corner
      }
      // One and two Chaikin passes: (3/4, 1/4) cuts of the previous polygon, same draws.
      std::vector<float3> prev = raw;
      for (int passes = 1; passes <= 2; ++passes) {
        p.hull.chaikin_passes = passes;
        const std::vector<float3> cut = s.run<tg::stages::hull_corners>(p, env);
        const int m = static_cast<int>(prev.size());
        REQUIRE(static_cast<int>(cut.size()) == 2 * m);
        CHECK(static_cast<int>(cut.size()) <= tg::stages::hull_corners::max_control_points(p));
        for (int i = 0; i < m; ++i) {
          const float3 a = prev[static_cast<std::size_t>(i)], z = prev[static_cast<std::size_t>((i + 1) % m)];
          const float3 q0 = cut[static_cast<std::size_t>(2 * i)], q1 = cut[static_cast<std::size_t>(2 * i + 1)];
          CHECK(std::fabs(q0.x - (0.75 * a.x + 0.25 * z.x)) <= 1e-5);
          CHECK(std::fabs(q0.y - (0.75 * a.y + 0.25 * z.y)) <= 1e-5);
          CHECK(std::fabs(q1.x - (0.25 * a.x + 0.75 * z.x)) <= 1e-5);
          CHECK(std::fabs(q1.y - (0.25 * a.y + 0.75 * z.y)) <= 1e-5);
        }
        prev = cut;
      }
    }
  }
}

TEST_CASE("family_convex_hull keeps exactly the corners of the convex hull, in order") {
  std::mt19937 gen(3);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 3 + trial % 40;
    std::vector<float3> pts = sorted_random_points(gen, n);
    const std::vector<float3> all = pts;
    const int h = tg::detail::family_convex_hull(pts.data(), n);
    REQUIRE(h >= 3);
    // Every point is on the left of (or on) every hull edge: the hull contains them all.
    for (int i = 0; i < h; ++i) {
      const dvec a = to_d(pts[static_cast<std::size_t>(i)]), b = to_d(pts[static_cast<std::size_t>((i + 1) % h)]);
      for (const float3& q : all) CHECK(cross2(b - a, to_d(q) - a) >= -1e-9);
    }
    // Every dropped point lies strictly inside or on an edge: it is no hull corner. A kept one
    // turns strictly left (a corner).
    for (int i = 0; i < h; ++i) {
      const dvec a = to_d(pts[static_cast<std::size_t>((i + h - 1) % h)]), b = to_d(pts[static_cast<std::size_t>(i)]),
                 c = to_d(pts[static_cast<std::size_t>((i + 1) % h)]);
      CHECK(cross2(b - a, c - b) > 0);
    }
    // The same count of corners as an independent algorithm: Andrew's monotone chain
    // (A. M. Andrew, "Another efficient algorithm for convex hulls in two dimensions", 1979).
    std::vector<dvec> s;
    for (const float3& q : all) s.push_back(to_d(q));
    std::sort(s.begin(), s.end(), [](dvec a, dvec b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
    std::vector<dvec> chain(2 * s.size());
    std::size_t k = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      while (k >= 2 && cross2(chain[k - 1] - chain[k - 2], s[i] - chain[k - 2]) <= 0) --k;
      chain[k++] = s[i];
    }
    for (std::size_t i = s.size() - 1, t = k + 1; i > 0; --i) {
      while (k >= t && cross2(chain[k - 1] - chain[k - 2], s[i - 1] - chain[k - 2]) <= 0) --k;
      chain[k++] = s[i - 1];
    }
    CHECK(static_cast<int>(k) - 1 == h);
  }
}

TEST_CASE("family_prune_sharp drops the sharpest corners until none turns by more than max_turn") {
  std::mt19937 gen(4);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 3 + trial % 30;
    std::vector<float3> pts = sorted_random_points(gen, n);
    const float max_turn = 1.0f + 0.002f * static_cast<float>(trial);
    const int kept = tg::detail::family_prune_sharp(pts.data(), n, max_turn);
    CHECK(kept >= 3);
    CHECK(kept <= n);
    if (kept == 3) continue;
    for (int i = 0; i < kept; ++i) {
      const dvec a = to_d(pts[static_cast<std::size_t>((i + kept - 1) % kept)]), b = to_d(pts[static_cast<std::size_t>(i)]),
                 c = to_d(pts[static_cast<std::size_t>((i + 1) % kept)]);
      CHECK(std::fabs(std::atan2(cross2(b - a, c - b), dotd(b - a, c - b))) <= max_turn + 1e-5);
    }
  }
}

TEST_CASE("family_far_from gives the answers of length(q - p) >= min_distance, near the threshold and for tiny distances") {
  // Points at distances within a few ulps of min_distance (the squared test's margins are
  // 2^-20), far inside and outside, and minimum distances whose square is subnormal or zero.
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  int near_threshold = 0;
  for (float md : {0.0f, 1e-25f, 1e-20f, 2.7e-20f, 1e-19f, 1.1e-19f, 1e-3f, 0.37f, 3.0f, 6.5f, 1e6f}) {
    for (int k = 0; k < 20000; ++k) {
      const float3 p{unit(gen), unit(gen), 0.0f};
      const float angle = 3.14159265f * unit(gen);
      // A distance scaled from md by up to 2^-18 either way, or a random one.
      const float scale = k % 2 == 0 ? 1.0f + std::ldexp(unit(gen), -18) : 4.0f * (unit(gen) + 1.0f);
      const float r = md * scale;
      const float3 q{p.x + r * std::cos(angle), p.y + r * std::sin(angle), 0.0f};
      const float3 d{q.x - p.x, q.y - p.y, q.z - p.z};
      const bool expected = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z) >= md;
      CAPTURE(md);
      CAPTURE(k);
      REQUIRE(tg::detail::family_far_from(q, &p, 1, md) == expected);
      near_threshold += std::fabs(std::sqrt(d.x * d.x + d.y * d.y) - md) <= 4e-7f * md ? 1 : 0;
    }
    // Two identical points: too close for any positive minimum distance.
    const float3 p{0.25f, -0.5f, 0.0f};
    CHECK(tg::detail::family_far_from(p, &p, 1, md) == (0.0f >= md));
  }
  CHECK(near_threshold > 1000);
}

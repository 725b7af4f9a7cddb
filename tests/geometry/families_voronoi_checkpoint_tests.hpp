#pragma once
/// @file
/// The `voronoi` and `checkpoint` generator families (issue 13, item 1: stages::voronoi_sites,
/// stages::checkpoint_walk), each as the generate stage of the `track` preset's pipeline:
/// - a sweep of 10,240 tracks per family (1/50 at the small scale) through the independent
///   double-precision checker (reference_checker.hpp): every valid track meets the thresholds;
///   the yield without the fallback ellipse is >= 99.9 %; the median compactness 4 pi A / P^2 of
///   the accepted tracks, computed here in double (shoelace area, polygon perimeter over the N
///   samples), is below 0.85;
/// - direct checks of each stage's own invariants on one workspace (host context): the voronoi
///   control points are sites of the field, the nearest ones to their targets by a brute-force
///   search over 9 x 9 cells, with strictly increasing polar angles, and one Chaikin round is the
///   3/4-1/4 combination of the polygon without it; the checkpoint walk's control points are at
///   most control_spacing apart, turn at most its turn bound, and the winner is the candidate of
///   the smallest key.
/// Templated over the backend policy; instantiated in families_voronoi_checkpoint_test.cpp (host)
/// and .cu (CUDA).

#include "random_geometry_tests.hpp"

#include <track_gen/detail/host/block_context.hpp>
#include <track_gen/detail/stages/families/checkpoint.hpp>
#include <track_gen/detail/stages/families/voronoi.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tg_test {

/// The `track` preset's pipeline with `Family` as its generate stage (presets::one_family_pipeline).
template <class Family>
using family_pipeline = track_gen::presets::one_family_pipeline<Family>;

/// The `track` preset with `seed`, selecting `Family`'s family (the one its pipeline draws; the
/// generator sizes the control-point scratch from Family::max_control_points).
template <class Family>
track_gen::track_params family_params(int envs, std::uint64_t seed) {
  track_gen::track_params p = track_gen::presets::track(envs);
  p.seed = seed;
  p.generator.family = Family::family;
  return p;
}

/// 4 pi A / P^2 of env e's centreline (xy), in double: shoelace area, polygon perimeter.
inline double compactness_of(const track_gen::track_snapshot& s, int e) {
  const int n = s.num_samples;
  double area2 = 0, perimeter = 0;
  for (int i = 0; i < n; ++i) {
    const float3 a = s.position[static_cast<std::size_t>(e) * n + i];
    const float3 b = s.position[static_cast<std::size_t>(e) * n + (i + 1) % n];
    area2 += static_cast<double>(a.x) * b.y - static_cast<double>(b.x) * a.y;
    perimeter += std::hypot(static_cast<double>(b.x) - a.x, static_cast<double>(b.y) - a.y);
  }
  return 2.0 * pi_d * std::fabs(area2) / (perimeter * perimeter);
}

/// The sweep of one family: checker, yield, median compactness.
template <class Family, class Policy>
void family_sweep(const char* name) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const float spacing = 0.6f;
  int tracks = 0, accepted = 0;
  std::vector<double> compactness;
  for (std::uint64_t seed : {0u, 1u}) {
    const tg::track_params p = family_params<Family>(scaled(5120, 50, 16), seed);
    tg::course<family_pipeline<Family>, Policy> c(p, spacing, stream.get());
    const tg::track_snapshot s = c.copy_tracks(stream.get());
    REQUIRE(s.num_envs == p.num_envs);
    const sweep_result r = check_snapshot(s, p, spacing, c.max_gates(), true);
    CHECK(r.bad == 0);
    CHECK(r.valid == r.tracks);  // the fallback ellipse is valid too
    for (int e = 0; e < s.num_envs; ++e) {
      const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
      if ((st & tg::status::valid) == 0u || (st & tg::status::fallback) != 0u) continue;
      ++accepted;
      compactness.push_back(compactness_of(s, e));
    }
    tracks += r.tracks;
  }
  REQUIRE(!compactness.empty());
  std::sort(compactness.begin(), compactness.end());
  const double median = compactness[compactness.size() / 2];
  const double yield = static_cast<double>(accepted) / tracks;
  MESSAGE(B::name() << ": " << std::string(name) << ": " << tracks << " tracks, yield without fallback " << yield
                    << ", median compactness " << median);
  CHECK(yield >= 0.999);
  CHECK(median < 0.85);
  if (!small_scale()) CHECK(tracks >= 10000);
}

TEST_CASE_TEMPLATE_DEFINE("voronoi and checkpoint families: checker sweep, yield, compactness", Policy, family_sweeps) {
  family_sweep<track_gen::stages::voronoi_sites, Policy>("voronoi");
  family_sweep<track_gen::stages::checkpoint_walk, Policy>("checkpoint");
}

/// One workspace on the host, for running a generate stage directly.
struct stage_bench {
  std::vector<unsigned char> memory;
  track_gen::detail::workspace ws{};
  track_gen::detail::host_block_context ctx;

  stage_bench(int control_capacity, const track_gen::track_params& p, std::uint32_t env, std::uint32_t attempt) {
    const auto layout = track_gen::detail::scratch_layout::make(
        static_cast<std::size_t>(control_capacity),
        static_cast<std::size_t>(control_capacity) * static_cast<std::size_t>(p.spline.samples_per_segment),
        static_cast<std::size_t>(p.num_samples));
    memory.assign(layout.bytes + 16, 0);
    ws.bind_scratch(memory.data(), layout);
    ws.seed = p.seed;
    ws.global_env = env;
    ws.episode = 0;
    ws.attempt = attempt;
  }
  std::vector<float3> control() const { return {ws.control, ws.control + ws.num_control}; }
};

/// Polar angle in double.
inline double polar_angle(float3 p) { return std::atan2(static_cast<double>(p.y), static_cast<double>(p.x)); }

TEST_CASE("voronoi_sites: control points are the targets' nearest sites, star-shaped, then Chaikin") {
  namespace tg = track_gen;
  using stage = tg::stages::voronoi_sites;
  tg::track_params p = tg::presets::track(1);
  p.seed = 7;
  int snapped_total = 0;
  for (std::uint32_t env = 0; env < 200; ++env) {
    CAPTURE(env);
    tg::track_params p0 = p;
    p0.voronoi.chaikin_rounds = 0;
    stage_bench b0(stage::max_control_points(p), p0, env, 0);
    stage::run(b0.ctx, b0.ws, p0);
    const std::vector<float3> sites = b0.control();
    const int k = p.voronoi.control_points;
    REQUIRE(sites.size() >= 4u);
    REQUIRE(static_cast<int>(sites.size()) <= k);
    const tg::philox_stream rng = b0.ws.rng(stage::stage_id);
    // The nearest site of each target by brute force over 9 x 9 cells (the stage searches 5 x 5).
    const double h = p.voronoi.site_spacing;
    std::vector<float3> nearest;
    for (int i = 0; i < k; ++i) {
      const float3 t = stage::target(rng, i, p.voronoi);
      const int cx = static_cast<int>(std::floor(t.x / h)), cy = static_cast<int>(std::floor(t.y / h));
      double best = 1e300;
      float3 best_site{};
      for (int dy = -4; dy <= 4; ++dy)
        for (int dx = -4; dx <= 4; ++dx) {
          std::uint32_t id = 0;
          const float3 s = stage::site(rng, cx + dx, cy + dy, p.voronoi, id);
          // Inside its own cell (site_jitter <= 1).
          CHECK(s.x >= (cx + dx) * h - 1e-4);
          CHECK(s.x <= (cx + dx + 1) * h + 1e-4);
          const double d = std::hypot(static_cast<double>(s.x) - t.x, static_cast<double>(s.y) - t.y);
          if (d < best) {
            best = d;
            best_site = s;
          }
        }
      nearest.push_back(best_site);
    }
    // Every control point is one of the targets' nearest sites (or, below 4 distinct sites, a
    // target itself; not at these parameters).
    for (const float3& c : sites) {
      const bool found = std::any_of(nearest.begin(), nearest.end(),
                                     [&](float3 s) { return s.x == c.x && s.y == c.y && s.z == c.z; });
      CHECK(found);
      CHECK(c.z == 0.0f);
    }
    snapped_total += static_cast<int>(sites.size());
    // Strictly increasing polar angles, consecutive ones at least min_angle_gap of a step apart.
    const double min_gap = p.voronoi.min_angle_gap * 2.0 * pi_d / k;
    for (std::size_t i = 1; i < sites.size(); ++i)
      CHECK(polar_angle(sites[i]) - polar_angle(sites[i - 1]) >= min_gap * (1.0 - 1e-5));
    CHECK(polar_angle(sites.front()) + 2.0 * pi_d - polar_angle(sites.back()) >= min_gap * (1.0 - 1e-5));
    // Chaikin rounds: 1 round is the 3/4-1/4 combination of each edge (computed here in double),
    // and the count doubles per round.
    for (int rounds = 1; rounds <= 2; ++rounds) {
      tg::track_params pr = p;
      pr.voronoi.chaikin_rounds = rounds;
      stage_bench br(stage::max_control_points(pr), pr, env, 0);
      stage::run(br.ctx, br.ws, pr);
      CHECK(br.ws.num_control == static_cast<int>(sites.size()) << rounds);
      CHECK(br.ws.num_control <= stage::max_control_points(pr));
      if (rounds != 1) continue;
      const std::vector<float3> cut = br.control();
      for (std::size_t i = 0; i < sites.size(); ++i) {
        const dvec a = to_d(sites[i]), c = to_d(sites[(i + 1) % sites.size()]);
        CHECK(normd(to_d(cut[2 * i]) - (a * 0.75 + c * 0.25)) <= 1e-5 * (1.0 + normd(a)));
        CHECK(normd(to_d(cut[2 * i + 1]) - (a * 0.25 + c * 0.75)) <= 1e-5 * (1.0 + normd(a)));
      }
    }
    // Deterministic, and another attempt draws another track.
    stage_bench again(stage::max_control_points(p), p0, env, 0), other(stage::max_control_points(p), p0, env, 1);
    stage::run(again.ctx, again.ws, p0);
    stage::run(other.ctx, other.ws, p0);
    CHECK(again.control().size() == sites.size());
    for (std::size_t i = 0; i < sites.size() && i < again.control().size(); ++i) CHECK(again.control()[i].x == sites[i].x);
    CHECK((other.control().size() != sites.size() || other.control()[0].x != sites[0].x));
  }
  // Snapping merges some targets (a site field coarser than the targets' spacing), not most.
  CHECK(snapped_total < 200 * p.voronoi.control_points);
  CHECK(snapped_total > 200 * 4);
}

TEST_CASE("checkpoint_walk: control points follow a turn-bounded walk; the winner has the smallest key") {
  namespace tg = track_gen;
  using stage = tg::stages::checkpoint_walk;
  tg::track_params p = tg::presets::track(1);
  p.seed = 3;
  const tg::checkpoint_params& c = p.checkpoint;
  const int every = stage::record_every(c);
  CHECK(every == static_cast<int>(std::lround(c.control_spacing / c.step_length)));
  const double chord_max = every * static_cast<double>(c.step_length);
  int closed = 0;
  for (std::uint32_t env = 0; env < 200; ++env) {
    CAPTURE(env);
    stage_bench b(stage::max_control_points(p), p, env, 0);
    stage::run(b.ctx, b.ws, p);
    const std::vector<float3> pts = b.control();
    const int n = static_cast<int>(pts.size());
    REQUIRE(n >= 4);
    REQUIRE(n <= stage::max_control_points(p));
    // The recorded lap before its ramped last quarter: chords of `every` steps are at most that
    // long, and consecutive chords turn by at most the heading change of 2 x every steps.
    const int plain = n - n / 4;
    for (int i = 0; i + 1 < plain; ++i) {
      const dvec a = to_d(pts[i]), m = to_d(pts[i + 1]);
      CHECK(normd(m - a) <= chord_max * (1 + 1e-4));
      if (i + 2 < plain && i * 2 < n) {  // the first half: before the last leg's closure ramp
        const dvec d1 = m - a, d2 = to_d(pts[i + 2]) - m;
        CHECK(angle_between(d1, d2) <= 2.0 * every * c.max_turn_rate * c.step_length + 1e-4);
      }
    }
    // The loop closes: the closing edge is no longer than about one spacing (plus the tolerance).
    const double closing = normd(to_d(pts[0]) - to_d(pts[n - 1]));
    closed += closing <= 2.0 * c.control_spacing;
    // The winner: the candidate of the smallest key (ties to the lower index), recomputed here
    // from each candidate's walk, and its points are the control points.
    const tg::philox_stream rng = b.ws.rng(stage::stage_id);
    const int capacity = stage::walk_capacity(p);
    std::vector<float3> out(static_cast<std::size_t>(capacity)), table(static_cast<std::size_t>(c.checkpoints));
    int best = -1;
    double best_key = 0;
    std::vector<float3> best_points;
    for (int k = 0; k < c.candidates; ++k) {
      stage::fill_checkpoints(rng, k, c, table.data());
      const stage::walk_result r = stage::walk(table.data(), c, out.data(), capacity);
      // Its compactness, again in double.
      double area2 = 0, perimeter = 0;
      for (int i = 0; i < r.count; ++i) {
        const dvec a = to_d(out[i]), m = to_d(out[(i + 1) % r.count]);
        area2 += a.x * m.y - m.x * a.y;
        perimeter += normd(m - a);
      }
      if (r.count >= 4) CHECK(r.compactness == doctest::Approx(2 * pi_d * std::fabs(area2) / (perimeter * perimeter)).epsilon(1e-4));
      // Its self-crossings, counted serially pair by pair (the stage asks the whole block at once).
      const bool crossed = r.count >= 4 && stage::count_crossings(out.data(), r.count) > 0;
      const double key = r.count < 4 ? 8.0 : (r.closed ? 0 : 4) + (crossed ? 2 : 0) + r.compactness;
      if (best < 0 || key < best_key) {
        best = k;
        best_key = key;
        best_points.assign(out.begin(), out.begin() + r.count);
      }
    }
    REQUIRE(best_points.size() == pts.size());
    for (int i = 0; i < n; ++i) CHECK((best_points[i].x == pts[i].x && best_points[i].y == pts[i].y));
  }
  CHECK(closed >= 190);
}

TEST_CASE("checkpoint_walk's angle and turn: within float rounding of double-precision atan2, cos and sin") {
  using stage = track_gen::stages::checkpoint_walk;
  // Angles from -pi to pi through both branches of angle_between (|cross| <= dot / 8 takes the
  // series: up to atan(1/8) = 0.124 rad), turns through both of turn_cos_sin's (|a| <= 1/2).
  double worst_angle = 0, worst_turn = 0;
  for (int i = -20000; i <= 20000; ++i) {
    const double a = pi_d * i / 20000.0;
    for (double r : {1e-3, 0.7, 13.0}) {
      const float cross = static_cast<float>(r * std::sin(a)), dot = static_cast<float>(r * std::cos(a));
      const double want = std::atan2(static_cast<double>(cross), static_cast<double>(dot));
      const double got = stage::angle_between(cross, dot);
      // atan2 of the float inputs, within a few ulps of the angle (pi at a = +-pi: either sign)
      const double err = std::fabs(std::fabs(want) > 3.14159 ? std::fabs(got) - std::fabs(want) : got - want);
      worst_angle = std::max(worst_angle, err / std::max(std::fabs(want), 1e-3));
    }
    const float turn = static_cast<float>(0.6 * i / 20000.0);
    const float2 cs = stage::turn_cos_sin(turn);
    worst_turn = std::max({worst_turn, std::fabs(cs.x - std::cos(static_cast<double>(turn))),
                           std::fabs(cs.y - std::sin(static_cast<double>(turn)))});
  }
  CAPTURE(worst_angle);
  CAPTURE(worst_turn);
  CHECK(worst_angle < 4e-7);  // relative: a few float ulps
  CHECK(worst_turn < 2e-7);   // absolute, |cos|, |sin| <= 1: a few float ulps
}

TEST_CASE("the families but polar spend a dense budget; the plan holds every track's samples") {
  namespace tg = track_gen;
  // The rule, against its definition in double: min(per, max(4, ceil(budget / m))), per without a budget.
  for (int per : {4, 7, 32, 64, 256})
    for (int budget : {0, 100, 512, 1024})
      for (int m = 1; m <= 400; ++m) {
        const double share = std::ceil(static_cast<double>(budget) / m);
        const int expected = budget == 0 ? per : static_cast<int>(std::min<double>(per, std::max(4.0, share)));
        CHECK(tg::detail::budgeted_samples_per_segment(per, budget, m) == expected);
      }
  // The most over m, against a plain loop in double.
  for (int per : {4, 32, 64})
    for (int max_m : {1, 16, 17, 97, 200}) {
      double most = 0.0;
      for (int m = 1; m <= max_m; ++m)
        most = std::max(most, m * std::min<double>(per, std::max(4.0, std::ceil(24.0 * per / m))));
      CHECK(tg::detail::budgeted_max_dense_samples(per, tg::detail::family_dense_budget(per), max_m) == static_cast<int>(most));
    }
  tg::track_params base = tg::presets::track(1);
  base.seed = 5;
  const int budget = tg::detail::family_dense_budget(base.spline.samples_per_segment);
  CHECK(budget == 24 * base.spline.samples_per_segment);
  for (tg::generator_family f : {tg::generator_family::polar, tg::generator_family::bezier, tg::generator_family::hull,
                                 tg::generator_family::voronoi, tg::generator_family::checkpoint}) {
    CAPTURE(static_cast<int>(f));
    tg::track_params p = base;
    p.generator.family = f;
    const bool budgeted = f != tg::generator_family::polar;
    const tg::detail::generator_inputs in = tg::detail::generator_inputs::make(
        p, 1.0f, nullptr, nullptr, false, tg::detail::any_family, tg::detail::sizes_of<tg::presets::family_pipeline>(), 0);
    const int capacity = in.plan.scratch.dense_capacity;
    // The plan's dense capacity at the defaults, worked out by hand: polar 16 (the fallback
    // ellipse) x 32; bezier max over m <= 48 of m x min(32, max(4, ceil(768 / m))) = 45 x 18;
    // hull and voronoi m <= 56: 51 x 16; checkpoint m <= 97: 95 x 9 (above its 4 walks of 97).
    const int expected_capacity[] = {512, 810, 816, 816, 855};
    CHECK(capacity == expected_capacity[static_cast<int>(f)]);
    if (f == tg::generator_family::checkpoint)  // the walks' scratch: K candidates of walk_capacity points and C checkpoints
      CHECK(capacity >= p.checkpoint.candidates * (tg::stages::checkpoint_walk::walk_capacity(p) + p.checkpoint.checkpoints));
    const int max_m = tg::stages::random_family::max_control_points(p);
    // Polar keeps M x samples_per_segment (its tracks are the track preset's).
    if (!budgeted) CHECK(tg::stages::random_family::max_dense_samples(p) == max_m * p.spline.samples_per_segment);
    // The relaxation's neighbour band each family leaves behind (random_family copies it back
    // from the family's out-of-line run): a Bezier piece's samples, voronoi's 2^rounds Chaikin
    // points, 2 otherwise.
    const int expected_band[] = {2, std::max(p.bezier.samples_per_piece, 2), 2, std::max(1 << p.voronoi.chaikin_rounds, 2), 2};
    int most = 0;
    for (std::uint32_t env = 0; env < 100; ++env) {
      CAPTURE(env);
      stage_bench b(max_m, p, env, 0);
      b.ws.dense_budget = 0;
      b.ws.relax_neighbours = 2;
      tg::stages::random_family::run(b.ctx, b.ws, p);
      CHECK(b.ws.dense_budget == (budgeted ? budget : 0));
      CHECK(b.ws.relax_neighbours == expected_band[static_cast<int>(f)]);
      tg::stages::catmull_rom::run(b.ctx, b.ws, p);
      const int m = b.ws.num_control;
      const int per = budgeted ? std::min(p.spline.samples_per_segment, std::max(4, (budget + m - 1) / m))
                               : p.spline.samples_per_segment;
      CHECK(b.ws.num_dense == m * per);
      CHECK(b.ws.num_dense <= capacity);
      // The samples are the spline's: segment i's first sample is control point i.
      for (int i = 0; i < m; ++i)
        CHECK((b.ws.dense[i * per].x == b.ws.control[i].x && b.ws.dense[i * per].y == b.ws.control[i].y));
      most = std::max(most, b.ws.num_dense);
    }
    // About 24 segments' worth (768 at the defaults) plus at most one sample of rounding per control point.
    if (budgeted) CHECK(most <= budget + max_m);
  }
  tg::track_params mix = base;
  for (float& w : mix.generator.weights) w = 1.0f;
  mix.generator.weights[static_cast<int>(tg::generator_family::repulsive)] = 0.0f;  // its 256 points: checked below
  tg::track_params alone = base;
  alone.generator.family = tg::generator_family::checkpoint;
  const tg::detail::generator_inputs single = tg::detail::generator_inputs::make(
      alone, 1.0f, nullptr, nullptr, false, tg::detail::any_family, tg::detail::sizes_of<tg::presets::family_pipeline>(), 0);
  const tg::detail::generator_inputs mixed = tg::detail::generator_inputs::make(
      mix, 1.0f, nullptr, nullptr, false, tg::detail::any_family, tg::detail::sizes_of<tg::presets::family_pipeline>(), 0);
  CHECK(mixed.plan.scratch.dense_capacity >= single.plan.scratch.dense_capacity);
  // The largest family at the defaults is the checkpoint walk (97 points against bezier 48, hull 56, voronoi 56).
  CHECK(mixed.plan.scratch.control_capacity == tg::stages::checkpoint_walk::walk_capacity(mix));
  // With the repulsive family in the mix (presets::any_family_pipeline), its curve's points are the largest.
  mix.generator.weights[static_cast<int>(tg::generator_family::repulsive)] = 1.0f;
  const tg::detail::generator_inputs all = tg::detail::generator_inputs::make(
      mix, 1.0f, nullptr, nullptr, false, tg::detail::any_family, tg::detail::sizes_of<tg::presets::any_family_pipeline>(), 0);
  CHECK(all.plan.scratch.control_capacity == mix.repulsive_growth.points);
  CHECK(all.plan.scratch.dense_capacity >= tg::stages::repulsive_growth::max_dense_samples(mix));
}

TEST_CASE("checkpoint_walk: a walk keeps at most walk_capacity points; a longer one ranks last") {
  namespace tg = track_gen;
  using stage = tg::stages::checkpoint_walk;
  tg::track_params p = tg::presets::track(1);
  const tg::checkpoint_params& c = p.checkpoint;
  // The bound: 2 x length_max / (record_every x step_length) + 1, within [C, walk_points].
  const double spacing = stage::record_every(c) * static_cast<double>(c.step_length);
  CHECK(stage::walk_capacity(p) == static_cast<int>(std::ceil(2.0 * p.validate.length_max / spacing)) + 1);
  CHECK(stage::walk_capacity(p) < stage::walk_points(c));
  tg::track_params huge = p;
  huge.validate.length_max = 1e6f;
  CHECK(stage::walk_capacity(huge) == stage::walk_points(c));
  // A capacity below the walks' lengths: walks of fewer points are the uncapped walks bit for bit,
  // longer ones stop with count 0 (key 8: last).
  const int small = 30;
  const int full = stage::walk_points(c);
  std::vector<float3> a(static_cast<std::size_t>(full)), b(static_cast<std::size_t>(full)),
      table(static_cast<std::size_t>(c.checkpoints));
  int kept = 0, cut = 0;
  for (std::uint32_t env = 0; env < 100; ++env) {
    const tg::philox_stream rng(p.seed, env, 0, 0, stage::stage_id);
    for (int k = 0; k < c.candidates; ++k) {
      CAPTURE(env);
      CAPTURE(k);
      stage::fill_checkpoints(rng, k, c, table.data());
      const stage::walk_result r = stage::walk(table.data(), c, a.data(), full);
      const stage::walk_result q = stage::walk(table.data(), c, b.data(), small);
      if (r.count < small) {
        ++kept;
        REQUIRE(q.count == r.count);
        CHECK(q.closed == r.closed);
        CHECK(stage::count_crossings(b.data(), q.count) == stage::count_crossings(a.data(), r.count));
        CHECK(q.compactness == r.compactness);
        for (int i = 0; i < r.count; ++i) CHECK((a[i].x == b[i].x && a[i].y == b[i].y));
      } else if (r.count > small) {
        ++cut;
        CHECK(q.count == 0);
      }
    }
  }
  CHECK(kept > 0);
  CHECK(cut > 0);
}

}  // namespace tg_test

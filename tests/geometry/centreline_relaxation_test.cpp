// Host instantiation of centreline_relaxation_tests.hpp, and the stage alone on the host
// context: its Jacobi targets and accelerated sweeps against a double-precision re-derivation
// from the documented scheme; a pinched dumbbell and a tight peanut (failing validation on
// clearance and on curvature) mended so that validation passes; a track that passes left as it is.
#include "centreline_relaxation_tests.hpp"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(relaxation_tracks, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(relaxation_refused, std::tuple<track_gen::host_policy>);
}  // namespace tg_test

namespace {

namespace tg = track_gen;
using stage = tg::stages::centreline_relaxation;
using tg_test::dumbbell;
using tg_test::peanut;
using tg_test::sampled_track;
using tg_test::dvec;
using tg_test::normd;
using tg_test::to_d;

/// Closest distance, in double, between samples more than `window` apart along the loop.
double closest_far_apart(const std::vector<float3>& x, int window) {
  const int n = static_cast<int>(x.size());
  double best = 1e300;
  for (int i = 0; i < n; ++i)
    for (int j = i + window + 1; j < n; ++j)
      if (n - (j - i) > window) best = std::min(best, normd(to_d(x[i]) - to_d(x[j])));
  return best;
}

/// The track's length, in double, as the closed polyline through its samples.
double polyline_length(const std::vector<float3>& x) {
  double l = 0;
  for (std::size_t i = 0; i < x.size(); ++i) l += normd(to_d(x[(i + 1) % x.size()]) - to_d(x[i]));
  return l;
}

/// One plain Jacobi sweep of the documented scheme in double (no chord bound: every pair).
std::vector<dvec> jacobi_reference(const std::vector<dvec>& x, const tg::track_params& p, double length) {
  const int n = static_cast<int>(x.size());
  const tg::relaxation_params& r = p.relaxation;
  const double c = 2.0 * p.half_width + p.validate.clearance_margin;
  const double t = c * (1.0 + r.margin);
  const double radius_min = std::max<double>(p.validate.turn_radius_min, p.half_width + 0.5 * p.validate.clearance_margin) *
                            (1.0 + r.margin);
  const double rest = length / n;
  const int w = static_cast<int>(std::floor(tg_test::pi_d * std::max<double>(p.validate.turn_radius_min, 0.5 * c) / rest));
  std::vector<dvec> out(x.size());
  for (int i = 0; i < n; ++i) {
    dvec push{0, 0, 0};
    int count = 0;
    for (int j = 0; j < n; ++j) {
      const int apart = std::min(std::abs(i - j), n - std::abs(i - j));
      if (apart <= w) continue;
      const dvec d = x[i] - x[j];
      const double dist = normd(d);
      if (dist < t) {
        push = push + d * (0.5 * (t - dist) / dist);
        ++count;
      }
    }
    dvec step = count > 0 ? push * (r.separation_weight / count) : push;
    const dvec before = x[(i + n - 1) % n], after = x[(i + 1) % n];
    const dvec ahead = after - x[i], behind = x[i] - before;
    const double la = normd(ahead), lb = normd(behind);
    step = step + (ahead * ((la - rest) / la) - behind * ((lb - rest) / lb)) * (0.25 * r.spacing_weight);
    const double menger = 2.0 * normd(tg_test::crossd(behind, ahead)) / (la * lb * normd(after - before));
    const double radius = tg_test::dotd(behind, ahead) < 0 ? 0.0 : 1.0 / menger;
    if (radius < radius_min) {
      const double pull = std::min(r.bending_weight * (radius_min - radius) / radius_min, 1.0);
      step = step + ((before + after) * 0.5 - x[i]) * pull;
    }
    out[static_cast<std::size_t>(i)] = x[i] + step;
  }
  return out;
}

std::vector<dvec> to_d(const std::vector<float3>& x) {
  std::vector<dvec> out;
  for (const float3& p : x) out.push_back(to_d(p));
  return out;
}

double largest_gap(const std::vector<dvec>& a, const float3* b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, normd(a[i] - to_d(b[i])));
  return worst;
}

TEST_CASE("centreline_relaxation: Jacobi targets and accelerated sweeps match the scheme in double") {
  tg::track_params p = tg::presets::track(1);
  p.num_samples = 128;
  p.relaxation.max_iterations = 1;
  sampled_track s(dumbbell(0.15), p);
  // Perturb the samples a little so that every term is at work on an uneven polyline.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> jitter(-0.02f, 0.02f);
  for (float3& q : s.position) q = {q.x + jitter(rng), q.y + jitter(rng), 0.0f};
  const std::vector<float3> start = s.position;
  const std::vector<dvec> reference = jacobi_reference(to_d(start), p, s.ws.length);
  const stage::targets t = stage::targets_for(p, s.ws.length, p.num_samples);
  float longest = 0;
  for (int i = 0; i < p.num_samples; ++i)
    longest = std::max(longest, static_cast<float>(normd(to_d(start[(i + 1) % start.size()]) - to_d(start[i]))));
  int pushed = 0, bent = 0;
  double worst = 0;
  for (int i = 0; i < p.num_samples; ++i) {
    float miss = 0;
    const float3 x = stage::jacobi_target(start.data(), p.num_samples, i, t, 0.999f / longest, p.relaxation, miss);
    worst = std::max(worst, normd(reference[static_cast<std::size_t>(i)] - to_d(x)));
    pushed += miss > 0;
    // Which terms acted, from the reference's own view: a bead far from the neck only spaces.
    bent += std::fabs(start[i].x) > 10.5f;
  }
  MESSAGE(pushed << " of " << p.num_samples << " beads miss a target; largest difference " << worst << " m");
  CHECK(pushed > 8);
  CHECK(bent > 8);
  CHECK(worst < 2e-5);

  // Eight sweeps: four plain, then four accelerated (w_1 = 1, w_2 = 2 / (2 - rho^2),
  // w_{k+1} = 4 / (4 - rho^2 w_k)), against the same recurrence in double.
  p.relaxation.max_iterations = 8;
  p.relaxation.chebyshev_start = 4;
  s.position = start;
  s.ws.position = s.position.data();
  const float3* result = stage::sweep(s.ctx, s.ws, p);
  std::vector<dvec> prev = to_d(start), x = to_d(start);
  const double rho2 = double(p.relaxation.chebyshev_rho) * p.relaxation.chebyshev_rho, gamma = p.relaxation.chebyshev_gamma;
  double omega = 1;
  for (int k = 0; k < 8; ++k) {
    const std::vector<dvec> target = jacobi_reference(x, p, s.ws.length);
    std::vector<dvec> next = target;
    const int accelerated = k - 4;
    if (accelerated == 1) omega = 2 / (2 - rho2);
    if (accelerated >= 2) omega = 4 / (4 - rho2 * omega);
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (accelerated == 0) next[i] = x[i] + (target[i] - x[i]) * gamma;
      if (accelerated > 0) next[i] = prev[i] + ((target[i] - x[i]) * gamma + (x[i] - prev[i])) * omega;
    }
    prev = x;
    x = next;
  }
  const double gap = largest_gap(x, result);
  MESSAGE("after 8 sweeps (4 accelerated): largest difference " << gap << " m");
  CHECK(gap < 1e-4);
}

TEST_CASE("centreline_relaxation: a pinched neck and a tight waist are mended; a passing track is left alone") {
  tg::track_params p = tg::presets::track(1);
  p.relaxation.max_iterations = 50;
  const double c = 2.0 * p.half_width + p.validate.clearance_margin;
  {
    sampled_track s(dumbbell(0.1), p);  // the sides 0.2 m apart at the neck, c = 0.7 m
    const double length_before = s.ws.length;
    const int w = tg::stages::validate::window_samples(p, s.ws.length, p.num_samples);
    REQUIRE(closest_far_apart(s.position, w) < 0.25);
    REQUIRE(tg::stages::validate::fails_on_shape(s.ctx, s.ws, p));
    stage::run(s.ctx, s.ws, p);
    CHECK(s.ws.relaxed);
    CHECK_FALSE(tg::stages::validate::fails_on_shape(s.ctx, s.ws, p));
    tg::stages::validate::run(s.ctx, s.ws, p);
    CHECK(s.ws.valid);
    const int w_after = tg::stages::validate::window_samples(p, s.ws.length, p.num_samples);
    CHECK(closest_far_apart(s.position, w_after) >= c);
    CHECK(std::fabs(polyline_length(s.position) - length_before) < 0.02 * length_before);
    CHECK(std::fabs(s.ws.length - polyline_length(s.position)) < 1e-3 * s.ws.length);
  }
  {
    sampled_track s(peanut(0.85), p);  // its waist turns tighter than 0.4 m
    REQUIRE_FALSE(s.ws.max_curvature <= 1.0f / tg::stages::validate::min_turn_radius(p));
    stage::run(s.ctx, s.ws, p);
    CHECK(s.ws.relaxed);
    tg::stages::validate::run(s.ctx, s.ws, p);
    CHECK(s.ws.valid);
  }
  {
    sampled_track s(dumbbell(1.0), p);  // passes as it is
    const std::vector<float3> before = s.position;
    REQUIRE_FALSE(tg::stages::validate::fails_on_shape(s.ctx, s.ws, p));
    stage::run(s.ctx, s.ws, p);
    CHECK_FALSE(s.ws.relaxed);
    CHECK(std::memcmp(before.data(), s.position.data(), sizeof(float3) * before.size()) == 0);
  }
  {
    sampled_track s(dumbbell(0.1), p);  // not a random attempt: never moved
    s.ws.source = tg::detail::track_source::centreline;
    const std::vector<float3> before = s.position;
    stage::run(s.ctx, s.ws, p);
    CHECK_FALSE(s.ws.relaxed);
    CHECK(std::memcmp(before.data(), s.position.data(), sizeof(float3) * before.size()) == 0);
  }
}

}  // namespace

namespace {
TEST_CASE("gate courses and gate sequences refuse the relaxation (they build no road to relax)") {
  tg::track_params p = tg::presets::gate_course(4);
  p.relaxation.max_iterations = 10;
  using gates = tg::course<tg::presets::gate_course_pipeline, tg::host_policy>;
  CHECK_THROWS_WITH_AS(gates(p, tg::presets::gate_course_spacing(p)),
                       doctest::Contains("track_params.relaxation.max_iterations = 10"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(tg::detail::check_gate_sequence_params(p),
                       doctest::Contains("track_params.relaxation.max_iterations = 10"), std::invalid_argument);
  p.relaxation.max_iterations = 0;
  CHECK_NOTHROW(gates(p, tg::presets::gate_course_spacing(p)));
}
}  // namespace

namespace {
TEST_CASE("the cost estimate counts the relaxation's sweeps when it is on") {
  tg::track_params p = tg::presets::track(4);
  const double off = tg::estimate_cost(p, 0.6f).operations_per_track;
  p.relaxation.max_iterations = 50;
  const double on = tg::estimate_cost(p, 0.6f).operations_per_track;
  const double n = p.num_samples;
  // Every attempt: 50 sweeps of N^2 bead pairs at worst; and the scratch grows to 4 N dense samples.
  CHECK(on - off >= p.validate.max_attempts * 50.0 * n * n);
  CHECK(on - off < p.validate.max_attempts * 50.0 * n * n + 0.01 * off + 1e6);
  // A pipeline with the stage refuses what the budget does not cover, naming the relaxation.
  p.budget.operations_per_track = static_cast<float>(0.5 * (on + off));
  using relaxed_course = tg::course<tg::presets::relaxed_family_pipeline, tg::host_policy>;
  CHECK_THROWS_WITH_AS(relaxed_course(p, 0.6f), doctest::Contains("centreline relaxation"), std::invalid_argument);
}
}  // namespace

namespace {
TEST_CASE("the relaxation's scratch (4 N dense samples) is named when it does not fit") {
  tg::track_params p = tg::presets::track(1);
  p.num_samples = 4096;
  p.relaxation.max_iterations = 50;
  using relaxed_course = tg::course<tg::presets::relaxed_family_pipeline, tg::host_policy>;
  CHECK_THROWS_WITH_AS(relaxed_course(p, 0.6f), doctest::Contains("relaxation.max_iterations = 50 turns the centreline"),
                       std::invalid_argument);
  p.relaxation.max_iterations = 0;  // without it, 4096 samples fit
  CHECK_NOTHROW(relaxed_course(p, 0.6f));
}
}  // namespace

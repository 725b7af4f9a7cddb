#pragma once
/// @file
/// Elevation profiles (stages::elevation_profile, stages::validate_grade,
/// presets::elevated_track_pipeline), against independent double-precision references: a
/// Fritsch-Carlson interpolant written here from the paper (slopes per interval, Bezier
/// evaluation), every profile's band and grade cap on every sample of every accepted track of a
/// sweep, the uniform profile's z recomputed from its Philox draws, the 3D geometry contract
/// (reference_checker.hpp), and the flat profile bit for bit against track_pipeline.
/// Templated over the backend policy; instantiated in elevation_test.cpp (host) and
/// elevation_test.cu (CUDA, plus CUDA against host).

#include "backend_support.hpp"
#include "random_geometry_tests.hpp"
#include "reference_checker.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace tg_test {

/// Periodic monotone cubic through knots z at spacing h, in double, as F. N. Fritsch and
/// R. E. Carlson, "Monotone Piecewise Cubic Interpolation", SIAM J. Numer. Anal. 17(2), 1980:
/// step 1, three-point slopes (the mean of the two secants); steps 2-3, a zero secant zeroes
/// both end slopes of its interval, and a knot between secants of opposite signs gets slope 0;
/// steps 4-5 with their square sufficient region: alpha = m_k / delta_k and beta = m_{k+1} /
/// delta_k limited to 3, interval by interval. Evaluated in Bezier form (control values z_k,
/// z_k + h m_k / 3, z_{k+1} - h m_{k+1} / 3, z_{k+1}).
struct reference_pchip {
  std::vector<double> z, m;
  double h = 1;

  reference_pchip(std::vector<double> knots, double spacing) : z(std::move(knots)), h(spacing) {
    const int k_n = static_cast<int>(z.size());
    std::vector<double> delta(z.size());
    for (int k = 0; k < k_n; ++k) delta[k] = (z[(k + 1) % k_n] - z[k]) / h;
    m.assign(z.size(), 0.0);
    for (int k = 0; k < k_n; ++k) {
      const double before = delta[(k + k_n - 1) % k_n], after = delta[k];
      m[k] = (before > 0) == (after > 0) && before != 0 && after != 0 ? 0.5 * (before + after) : 0.0;
    }
    for (int k = 0; k < k_n; ++k) {
      const int k1 = (k + 1) % k_n;
      if (delta[k] == 0) {
        m[k] = m[k1] = 0;
        continue;
      }
      if (m[k] / delta[k] > 3) m[k] = 3 * delta[k];
      if (m[k1] / delta[k] > 3) m[k1] = 3 * delta[k];
    }
  }

  int knots() const { return static_cast<int>(z.size()); }

  /// Value at abscissa s in [0, K h).
  double operator()(double s) const {
    int k = static_cast<int>(std::floor(s / h));
    k = std::min(std::max(k, 0), knots() - 1);
    const double t = s / h - k;
    const double b0 = z[k], b1 = z[k] + h * m[k] / 3, b3 = z[(k + 1) % knots()], b2 = b3 - h * m[(k + 1) % knots()] / 3;
    const double u = 1 - t;
    return u * u * u * b0 + 3 * u * u * t * b1 + 3 * u * t * t * b2 + t * t * t * b3;
  }

  /// Derivative at s (the Bezier derivative: a quadratic in the control differences).
  double slope(double s) const {
    int k = static_cast<int>(std::floor(s / h));
    k = std::min(std::max(k, 0), knots() - 1);
    const double t = s / h - k;
    const double b0 = z[k], b1 = z[k] + h * m[k] / 3, b3 = z[(k + 1) % knots()], b2 = b3 - h * m[(k + 1) % knots()] / 3;
    const double u = 1 - t;
    return 3 * (u * u * (b1 - b0) + 2 * u * t * (b2 - b1) + t * t * (b3 - b2)) / h;
  }
};

/// Every track field of two snapshots, byte for byte; returns the name of the first that differs.
inline std::string first_difference(const track_gen::track_snapshot& a, const track_gen::track_snapshot& b) {
#define TG_ELEVATION_SAME(name, type, ext, doc)                                                               \
  if (a.name.size() != b.name.size() ||                                                                       \
      (!a.name.empty() && std::memcmp(a.name.data(), b.name.data(), a.name.size() * sizeof(type)) != 0))      \
    return #name;
  TRACK_GEN_TRACK_FIELDS(TG_ELEVATION_SAME)
#undef TG_ELEVATION_SAME
  return {};
}

/// Largest |dz| / plan-view distance over env e's consecutive samples, the closing pair (the
/// seam) included, in double.
inline double steepest_grade(const track_gen::track_snapshot& s, int e) {
  double worst = 0;
  for (int k = 0; k < s.num_samples; ++k) {
    const dvec a = to_d(s.position[s.sample_index(e, k)]), b = to_d(s.position[s.sample_index(e, (k + 1) % s.num_samples)]);
    const double run = std::hypot(b.x - a.x, b.y - a.y), rise = std::fabs(b.z - a.z);
    worst = std::max(worst, run > 0 ? rise / run : (rise > 0 ? 1e30 : 0.0));
  }
  return worst;
}

/// One profile of the sweep.
struct elevation_case {
  std::string name;
  track_gen::track_params params;
  bool steep = false;  ///< a cap most draws break: the grade test must reject (status::fail_grade)
};

/// 2,048 envs per profile (1/50 at the small scale), the elevated drone preset's band
/// [0.5, 2.5] m; the uniform and harmonic profiles draw their knots without a grade in mind, so
/// they get the cap 0.6 (their steeper tracks are drawn again).
inline std::vector<elevation_case> elevation_cases() {
  namespace tg = track_gen;
  std::vector<elevation_case> c;
  auto base = [](std::uint64_t seed) {
    auto p = tg::presets::elevated_drone_track(scaled(2048, 50, 16));
    p.seed = seed;
    p.env_offset = 777;
    return p;
  };
  {
    auto p = base(21);
    c.push_back({"random walk, grade 0.3, 10 knots", p});
  }
  {
    auto p = base(22);
    p.elevation.knots = 24;
    p.elevation.max_grade = 0.15f;
    c.push_back({"random walk, grade 0.15, 24 knots", p});
  }
  {
    auto p = base(23);
    p.elevation.profile = tg::elevation_kind::uniform;
    p.elevation.knots = 6;
    p.elevation.max_grade = 0.6f;
    c.push_back({"uniform, 6 knots, grade 0.6", p});
  }
  {
    auto p = base(24);
    p.elevation.profile = tg::elevation_kind::harmonics;
    p.elevation.knots = 16;
    p.elevation.harmonics = 3;
    p.elevation.max_grade = 0.6f;
    c.push_back({"harmonics 3, 16 knots, grade 0.6", p});
  }
  {
    auto p = base(25);
    p.num_envs = scaled(512, 16, 16);
    p.elevation.profile = tg::elevation_kind::uniform;
    p.elevation.knots = 12;
    p.elevation.max_grade = 0.45f;
    c.push_back({"uniform, 12 knots, grade 0.45 (steep: many draws rejected)", p, true});
  }
  return c;
}

/// Largest |z_uniform(k) - reference| over the accepted random tracks of a uniform-profile batch:
/// the knots recomputed from the stage's Philox draws (stage 14, draw j, the accepted attempt),
/// the plan-view arc length fraction of each sample from the samples themselves.
inline double uniform_profile_error(const track_gen::track_snapshot& s, const track_gen::track_params& p) {
  namespace tg = track_gen;
  double worst = 0;
  for (int e = 0; e < s.num_envs; ++e) {
    const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
    if ((st & tg::status::valid) == 0u || (st & tg::status::fallback) != 0u) continue;
    const tg::philox_stream rng(p.seed, p.env_offset + static_cast<std::uint32_t>(e), 0u,
                                static_cast<std::uint32_t>(tg::status::attempts(st) - 1),
                                tg::stages::elevation_profile::stage_id);
    const int n = s.num_samples;
    std::vector<double> s_xy(static_cast<std::size_t>(n) + 1, 0.0);
    for (int k = 0; k < n; ++k) {
      const dvec d = to_d(s.position[s.sample_index(e, (k + 1) % n)]) - to_d(s.position[s.sample_index(e, k)]);
      s_xy[static_cast<std::size_t>(k) + 1] = s_xy[static_cast<std::size_t>(k)] + std::hypot(d.x, d.y);
    }
    const double l_xy = s_xy[static_cast<std::size_t>(n)];
    std::vector<double> knots;
    for (int j = 0; j < p.elevation.knots; ++j)
      knots.push_back(p.elevation.z_min +
                      (static_cast<double>(p.elevation.z_max) - p.elevation.z_min) * rng.uniform(static_cast<std::uint32_t>(j)).v[0]);
    const reference_pchip ref(knots, l_xy / p.elevation.knots);
    for (int k = 0; k < n; ++k)
      worst = std::max(worst, std::fabs(s.position[s.sample_index(e, k)].z - ref(s_xy[static_cast<std::size_t>(k)])));
  }
  return worst;
}

TEST_CASE_TEMPLATE_DEFINE("elevation profiles keep their band and grade cap on every sample of every accepted track",
                          Policy, elevation_sweep) {
  namespace tg = track_gen;
  using B = backend<Policy>;
  typename B::stream_holder stream;
  const float spacing = 1.0f;
  for (const elevation_case& c : elevation_cases()) {
    CAPTURE(c.name);
    const tg::track_params& p = c.params;
    tg::course<tg::presets::elevated_track_pipeline, Policy> course(p, spacing, stream.get());
    const tg::track_snapshot s = course.copy_tracks(stream.get());
    // The 3D geometry contract of the independent checker (lengths, spacing, curvature, gates).
    const sweep_result r = check_snapshot(s, p, spacing, course.max_gates(), true);
    CHECK(r.bad == 0);
    CHECK(r.valid == r.tracks);
    const double band = static_cast<double>(p.elevation.z_max) - p.elevation.z_min;
    const double z_tol = 1e-5 * (std::fabs(static_cast<double>(p.elevation.z_max)) + band);
    int accepted = 0, lifted = 0, out_of_band = 0, too_steep = 0, grade_fallbacks = 0;
    double worst_grade = 0, attempts = 0, lowest = 1e30, highest = -1e30;
    const int n = s.num_samples;
    for (int e = 0; e < s.num_envs; ++e) {
      const std::uint32_t st = s.status[static_cast<std::size_t>(e)];
      attempts += tg::status::attempts(st);
      grade_fallbacks += (st & tg::status::fallback) != 0u && (st & tg::status::fail_grade) != 0u;
      if ((st & tg::status::valid) == 0u || (st & tg::status::fallback) != 0u) continue;
      ++accepted;
      double z_lo = 1e30, z_hi = -1e30, l_xy = 0;
      for (int k = 0; k < n; ++k) {
        const dvec a = to_d(s.position[s.sample_index(e, k)]), b = to_d(s.position[s.sample_index(e, (k + 1) % n)]);
        l_xy += std::hypot(b.x - a.x, b.y - a.y);
        z_lo = std::min(z_lo, a.z);
        z_hi = std::max(z_hi, a.z);
      }
      const double grade = steepest_grade(s, e);
      worst_grade = std::max(worst_grade, grade);
      if (!(grade <= p.elevation.max_grade * (1 + 1e-5))) ++too_steep;
      if (!(z_lo >= p.elevation.z_min - z_tol && z_hi <= p.elevation.z_max + z_tol)) ++out_of_band;
      lowest = std::min(lowest, z_lo);
      highest = std::max(highest, z_hi);
      // Lifted: the stored length is the 3D one (the checker confirmed it), longer than the plan view.
      if (z_hi - z_lo > 0.1 && s.length[static_cast<std::size_t>(e)] > l_xy * (1 + 1e-6)) ++lifted;
    }
    // The same batch with the flat profile: the attempts the grade test added.
    tg::track_params flat_params = p;
    flat_params.elevation.profile = tg::elevation_kind::flat;
    tg::course<tg::presets::elevated_track_pipeline, Policy> flat(flat_params, spacing, stream.get());
    const tg::track_snapshot f = flat.copy_tracks(stream.get());
    double flat_attempts = 0;
    for (int e = 0; e < f.num_envs; ++e) flat_attempts += tg::status::attempts(f.status[static_cast<std::size_t>(e)]);
    MESSAGE(B::name() << ": " << c.name << ": " << r.tracks << " tracks, " << accepted
                      << " accepted without fallback, mean attempts " << attempts / r.tracks << " (flat: "
                      << flat_attempts / r.tracks << "), z in [" << lowest
                      << ", " << highest << "], worst grade " << worst_grade << ", " << lifted << " lifted, "
                      << grade_fallbacks << " fallbacks after a grade failure");
    CHECK(out_of_band == 0);
    CHECK(too_steep == 0);
    CHECK(lifted >= accepted * 9 / 10);
    if (p.elevation.profile == tg::elevation_kind::uniform) {
      const double err = uniform_profile_error(s, p);
      MESSAGE(c.name << ": largest |z - reference| " << err << " m");
      // The reference takes each sample's arc length fraction from the samples' polyline, the
      // stage from the dense one (a few 1e-5 of L_xy apart); a wrong knot would be metres off.
      CHECK(err < 0.01);
    }
    if (c.steep) {
      CHECK(grade_fallbacks > 0);
      CHECK(accepted > 0);
      // The rejections were right: without the cap, an env whose attempt was accepted earlier
      // than under it accepted a candidate steeper than the cap (same streams, same candidates).
      tg::track_params lax_params = p;
      lax_params.elevation.max_grade = 1e6f;
      tg::course<tg::presets::elevated_track_pipeline, Policy> lax(lax_params, spacing, stream.get());
      const tg::track_snapshot l = lax.copy_tracks(stream.get());
      int earlier = 0, wrongly_rejected = 0;
      for (int e = 0; e < l.num_envs; ++e) {
        const std::uint32_t st = l.status[static_cast<std::size_t>(e)];
        if ((st & tg::status::valid) == 0u || (st & tg::status::fallback) != 0u) continue;
        if (tg::status::attempts(st) >= tg::status::attempts(s.status[static_cast<std::size_t>(e)])) continue;
        ++earlier;
        wrongly_rejected += !(steepest_grade(l, e) > p.elevation.max_grade * (1 - 1e-5));
      }
      MESSAGE(c.name << ": " << earlier << " envs accepted earlier without the cap, " << wrongly_rejected
                     << " of them within it");
      CHECK(earlier > 0);
      CHECK(wrongly_rejected == 0);
    } else {
      CHECK(accepted >= r.tracks * 9 / 10);
      CHECK(grade_fallbacks == 0);
    }
  }
}

/// Two episodes of pipelines A and B on the same parameters, every track field byte for byte.
template <class A, class B_, class Policy>
void same_tracks(const track_gen::track_params& p, float spacing) {
  typename backend<Policy>::stream_holder stream;
  track_gen::course<A, Policy> a(p, spacing, stream.get());
  track_gen::course<B_, Policy> b(p, spacing, stream.get());
  for (int episode = 0; episode < 2; ++episode) {
    CAPTURE(episode);
    const std::string diff = first_difference(a.copy_tracks(stream.get()), b.copy_tracks(stream.get()));
    CHECK_MESSAGE(diff.empty(), "field " << diff << " differs");
    a.regenerate(nullptr, true, stream.get());
    b.regenerate(nullptr, true, stream.get());
  }
}

TEST_CASE_TEMPLATE_DEFINE("the flat profile leaves every track of track_pipeline unchanged, bit for bit", Policy,
                          elevation_flat) {
  namespace tg = track_gen;
  for (int preset = 0; preset < 3; ++preset) {
    auto p = preset == 1 ? tg::presets::drone_track(scaled(512, 16, 16)) : tg::presets::track(scaled(512, 16, 16));
    p.seed = 31 + preset;
    p.elevation.z_min = -3.0f;  // read only by the other profiles
    p.elevation.z_max = 9.0f;
    p.elevation.max_grade = 0.0f;
    CAPTURE(preset);
    if (preset < 2) {
      same_tracks<tg::presets::track_pipeline, tg::presets::elevated_track_pipeline, Policy>(p, 0.6f);
    } else {  // the Python course's pipeline, with a mix of every family it draws (all but repulsive)
      for (float& w : p.generator.weights) w = 1.0f;
      p.generator.weights[static_cast<int>(tg::generator_family::repulsive)] = 0.0f;
      same_tracks<tg::presets::family_pipeline, tg::presets::elevated_family_pipeline, Policy>(p, 0.6f);
    }
  }
  // The Python course's pipeline when a batch can draw the repulsive family: a mix of all six
  // (fewer envs: a repulsive track takes about 0.07 s on the host).
  auto p = tg::presets::track(scaled(64, 16, 16));
  p.seed = 34;
  p.elevation.z_min = -3.0f;
  p.elevation.z_max = 9.0f;
  p.elevation.max_grade = 0.0f;
  for (float& w : p.generator.weights) w = 1.0f;
  same_tracks<tg::presets::any_family_pipeline, tg::presets::elevated_any_family_pipeline, Policy>(p, 0.6f);
}

#if TRACK_GEN_CUDA_COMPILER
}  // namespace tg_test
#include "backend_comparison.hpp"
namespace tg_test {
/// CUDA against host for every profile of the sweep (backend_comparison.hpp's rules), but the
/// steep case: its accepted candidates sit at the grade cap (a float ulp of difference in z may
/// accept a candidate on one backend only), and compare() knows only the length, curvature and
/// clearance thresholds.
inline void elevation_cuda_vs_host() {
  namespace tg = track_gen;
  typename backend<tg::cuda_policy>::stream_holder stream;
  const float spacing = 1.0f;
  for (const elevation_case& c : elevation_cases()) {
    if (c.steep) continue;
    CAPTURE(c.name);
    tg::course<tg::presets::elevated_track_pipeline, tg::host_policy> h(c.params, spacing);
    tg::course<tg::presets::elevated_track_pipeline, tg::cuda_policy> d(c.params, spacing, stream.get());
    REQUIRE(h.max_gates() == d.max_gates());
    const comparison r = compare(h.copy_tracks({}), d.copy_tracks(stream.get()), c.params, spacing, h.max_gates(), true);
    report(c.name.c_str(), r);
    CHECK(r.failures == 0);
    CHECK(r.same_status >= r.envs * 99 / 100);
  }
}
#endif

}  // namespace tg_test

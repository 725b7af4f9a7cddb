#pragma once
/// @file
/// CUDA against host for one batch of tracks (docs/generators.md, "Measured"), shared by cuda_vs_host_test.cu and the
/// generator-family tests: per env the same status (validity, fallback, attempts), the same
/// gate count, positions and gates within 1e-4 L (1e-3 L for relaxed tracks, below); the
/// documented exceptions (a candidate within 1e-3 of a validation threshold, a gate count at a
/// near-integer L / spacing) are counted and shown with the independent checker.
/// cuda_vs_host_test.cu says why they exist.

#include "reference_checker.hpp"

#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tg_test {

/// What a comparison found (counts over the envs).
struct comparison {
  int envs = 0, same_status = 0, near_threshold = 0, near_integer_gates = 0, failures = 0;
  int relaxed_status = 0;      // status differences whose accepted candidate was relaxed (below)
  double worst_position = 0;  // max |x_cuda - x_host| / L over envs of equal status, not relaxed
  int relaxed = 0;             // envs of equal status with status::relaxed
  double worst_relaxed = 0;    // the same maximum over those envs
};

/// Relative tolerance of positions, lengths and gates for tracks whose status carries
/// status::relaxed. The relaxation computes the same bits from the same beads on both backends
/// (centreline_relaxation_test.cu), but its beads arrive with the spline's rounding differences
/// (1e-6 L and below), and its discrete decisions (which bead pairs are within reach, the sweep
/// at which every target is met) turn those into up to 5.0e-4 L (H200, 2,048 relaxed-pipeline
/// bezier and voronoi envs). Twice that is allowed. For the same reason the two backends can
/// judge a relaxed candidate differently: a status difference whose accepted candidate carries
/// status::relaxed is counted (comparison::relaxed_status), not failed; the caller's bound on
/// same_status bounds it (H200: 2 of 2,048 voronoi envs, 2.6e-3 and 3.2e-3 relative from a
/// threshold).
inline constexpr double relaxed_tolerance = 1e-3;
/// The same tolerance for every other track.
inline constexpr double unrelaxed_tolerance = 1e-4;

/// Largest |a - b| over env e's samples (or gates), in double.
inline double max_distance(const std::vector<float3>& a, const std::vector<float3>& b, std::size_t begin, std::size_t count) {
  double worst = 0;
  for (std::size_t i = begin; i < begin + count; ++i) worst = std::max(worst, normd(to_d(a[i]) - to_d(b[i])));
  return worst;
}

inline comparison compare(const track_gen::track_snapshot& h, const track_gen::track_snapshot& c, const track_gen::track_params& p, float spacing,
                   int max_gates, bool random) {
  comparison r;
  const track_limits lim = track_limits::from(p, spacing, max_gates);
  REQUIRE(h.num_envs == c.num_envs);
  REQUIRE(h.max_gates == c.max_gates);
  auto fail = [&r](const std::string& line) {
    if (r.failures < 10) MESSAGE(line);
    ++r.failures;
  };
  for (int e = 0; e < h.num_envs; ++e) {
    const std::size_t u = static_cast<std::size_t>(e);
    ++r.envs;
    const std::uint32_t sh = h.status[u], sc = c.status[u];
    if (sh != sc) {
      // Which backend accepted a candidate first? Its track is that candidate.
      const int ah = track_gen::status::attempts(sh), ac = track_gen::status::attempts(sc);
      const bool fh = (sh & track_gen::status::fallback) != 0u, fc = (sc & track_gen::status::fallback) != 0u;
      const track_gen::track_snapshot* accepted = nullptr;
      if (random && (ah < ac || (ah == ac && fc && !fh))) accepted = &h;
      if (random && (ac < ah || (ah == ac && fh && !fc))) accepted = &c;
      // A user track has one candidate; the backend that found it valid holds it.
      if (!random && (sh & track_gen::status::valid) != 0u) accepted = &h;
      if (!random && (sc & track_gen::status::valid) != 0u) accepted = &c;
      if (accepted == nullptr || (accepted->status[u] & track_gen::status::valid) == 0u) {
        fail("env " + std::to_string(e) + ": status " + std::to_string(sh) + " (host) vs " + std::to_string(sc) +
             " (cuda), no accepted candidate to explain it");
        continue;
      }
      const track_measure m = measure(*accepted, e, lim);
      const threshold_margins g = margins(lim, m);
      if (g.smallest() <= 1e-3) {
        ++r.near_threshold;
        MESSAGE("env " << e << ": status host " << sh << " / cuda " << sc << ", near a threshold: margins L-low "
                       << g.length_low << ", L-high " << g.length_high << ", curvature " << g.curvature << ", clearance "
                       << g.clearance << ", window " << g.window_edge);
      } else if ((accepted->status[u] & track_gen::status::relaxed) != 0u) {
        ++r.relaxed_status;
        MESSAGE("env " << e << ": status host " << sh << " / cuda " << sc << ", the accepted candidate relaxed, "
                       << g.smallest() << " (relative) from every threshold");
      } else {
        fail("env " + std::to_string(e) + ": status " + std::to_string(sh) + " (host) vs " + std::to_string(sc) +
             " (cuda), but the accepted candidate is " + std::to_string(g.smallest()) + " (relative) from every threshold");
      }
      continue;
    }
    ++r.same_status;
    const double L = h.length[u];
    const bool relaxed = (sh & track_gen::status::relaxed) != 0u;
    const double tolerance = relaxed ? relaxed_tolerance : unrelaxed_tolerance;
    const double scale = tolerance * L;
    const double dx = max_distance(h.position, c.position, h.sample_index(e, 0), static_cast<std::size_t>(h.num_samples));
    double& worst = relaxed ? r.worst_relaxed : r.worst_position;
    worst = std::max(worst, dx / L);
    r.relaxed += relaxed ? 1 : 0;
    if (!(dx <= scale)) {
      char bound[16];
      std::snprintf(bound, sizeof bound, "%g", tolerance);
      fail("env " + std::to_string(e) + ": positions differ by " + std::to_string(dx) + " m (> " + bound + " L)");
    }
    if (!(std::fabs(static_cast<double>(c.length[u]) - L) <= scale))
      fail("env " + std::to_string(e) + ": L " + std::to_string(L) + " (host) vs " + std::to_string(c.length[u]) + " (cuda)");
    if (h.num_gates[u] != c.num_gates[u]) {
      const double ratio = L / spacing;
      if (std::fabs(ratio - std::round(ratio)) <= tolerance * ratio && std::abs(h.num_gates[u] - c.num_gates[u]) == 1) {
        ++r.near_integer_gates;
        MESSAGE("env " << e << ": gate count " << h.num_gates[u] << " (host) vs " << c.num_gates[u] << " (cuda), L / spacing = " << ratio);
      } else {
        fail("env " + std::to_string(e) + ": gate count " + std::to_string(h.num_gates[u]) + " (host) vs " +
             std::to_string(c.num_gates[u]) + " (cuda)");
      }
    } else {
      const double dg = max_distance(h.gate_centre, c.gate_centre, h.gate_index(e, 0), static_cast<std::size_t>(h.num_gates[u]));
      if (!(dg <= scale)) fail("env " + std::to_string(e) + ": gate centres differ by " + std::to_string(dg) + " m");
    }
    if (h.episode[u] != c.episode[u]) fail("env " + std::to_string(e) + ": episodes differ");
  }
  return r;
}

inline void report(const char* what, const comparison& r) {
  MESSAGE(std::string(what) << ": " << r.envs << " envs, " << r.same_status << " with identical status, " << r.near_threshold
               << " near-threshold status differences, " << r.near_integer_gates
               << " near-integer gate-count differences, worst position difference " << r.worst_position << " L"
               << (r.relaxed_status > 0 ? ", " + std::to_string(r.relaxed_status) + " status differences on relaxed candidates"
                                        : std::string())
               << (r.relaxed > 0 ? ", " + std::to_string(r.relaxed) + " relaxed envs (worst " + std::to_string(r.worst_relaxed) + " L)"
                                 : std::string()));
}


}  // namespace tg_test

/// @file
/// shape_metrics_report: what the generators' tracks look like (issue 13), measured with
/// track_gen::measure_shape (shape_metrics.hpp) on the host backend, one row per preset:
/// `track` and `drone_track` with --envs envs, `long_track` with --long-envs (its generation is
/// slower on one core: the grid-scope relaxation costs O(D^2) per iteration). Then the generator
/// families of issue 13 (bezier, hull, voronoi, checkpoint: docs/generators.md), each as the
/// generate stage of the `track` preset's pipeline at its other defaults, with --envs envs, once
/// with stages::polygon_separation and once without (max_iterations 0); then every family but
/// repulsive with stages::centreline_relaxation on (--relaxation-iterations sweeps; the
/// "relaxed" rows). The last column is the host's generation time per env (one core, the
/// course's construction: every attempt, the relaxation included).
///
/// Method: one course per preset (host_policy, construction generates episode 0 of every env
/// with the seed given), then measure_shape of each env's track with the preset's own limits
/// (shape_metric_limits_for: the defaults, and the thickness window of the preset's validate
/// stage). Yield: the share of envs whose track is valid without the fallback ellipse; mean
/// attempts: status::attempts over every env. The shape columns are over those accepted
/// tracks only (the generator's own shapes, not the fallback ellipse). The minimum thickness by
/// validate's rule is bounded by the chord of the window on the tightest turn (docs/shapes.md);
/// the "neck" column measures the thickness again with a window of a quarter of each track's
/// length: how close parts of the track a quarter lap or more apart come. Quantiles interpolate
/// linearly between ranks (bench_util.hpp).
///
/// Output: a markdown table on stdout (docs/shapes.md shows one with its command) and, with
/// --json PATH, every number of the table plus each preset's mean |curvature| histogram.
///
///   shape_metrics_report [--envs E] [--long-envs E] [--relaxation-iterations I] [--seed S] [--spacing M]
///                        [--json PATH]

#include <track_gen/detail/stages/families/checkpoint.hpp>
#include <track_gen/detail/stages/families/voronoi.hpp>
#include <track_gen/detail/stages/families/bezier.hpp>
#include <track_gen/detail/stages/families/hull.hpp>
#include <track_gen/shape_metrics.hpp>
#include <track_gen/track_gen.hpp>

#include "bench_util.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;
using track_gen_bench::json;
using track_gen_bench::number;
using track_gen_bench::summarise;
using track_gen_bench::summary;

struct options : track_gen_bench::common_options {
  int envs = 512;
  int long_envs = 16;
  int relaxation_iterations = 50;
};

/// One preset's row.
struct row {
  std::string preset;
  int envs = 0, accepted = 0, samples = 0;
  double yield = 0, fallback = 0, mean_attempts = 0, seconds = 0;
  double generate_seconds = 0;  ///< the course's construction alone (generation of every env)
  summary compactness{}, straight{}, thickness{}, neck{}, max_curvature{}, length{};
  double turning_one = 0, mean_hairpins = 0, mean_chicanes = 0, mean_compactness = 0;
  double thickness_window = 0;
  std::vector<double> histogram;  ///< mean share of the samples per bin
  tg::shape_metric_limits limits;
};

/// The `track` preset with generator family `f` (presets::family_pipeline: stages::random_family
/// runs it as the generate stage); `repulsive`: false turns stages::polygon_separation off (max_iterations 0).
tg::track_params family_params(int envs, tg::generator_family f, bool repulsive) {
  tg::track_params p = tg::presets::track(envs);
  p.generator.family = f;
  if (!repulsive) p.polygon_separation.max_iterations = 0;
  return p;
}

template <class Pipeline>
row measure(const std::string& name, tg::track_params params, const options& o) {
  params.seed = o.seed;
  row r;
  r.preset = name;
  r.envs = params.num_envs;
  r.samples = params.num_samples;
  r.limits = tg::shape_metric_limits_for(params);
  r.thickness_window = r.limits.thickness_window;
  const auto t0 = std::chrono::steady_clock::now();
  tg::course<Pipeline, tg::host_policy> course(params, o.spacing);
  r.generate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const tg::course_ref view = course.view();
  std::vector<double> compactness, straight, thickness, neck, curvature, length;
  std::vector<int> bins(static_cast<std::size_t>(r.limits.histogram_bins));
  r.histogram.assign(bins.size(), 0.0);
  double attempts = 0, fallback = 0, turning_one = 0, hairpins = 0, chicanes = 0;
  for (int e = 0; e < r.envs; ++e) {
    const tg::track_ref track = view.track(e);
    const std::uint32_t st = track.status();
    attempts += tg::status::attempts(st);
    fallback += (st & tg::status::fallback) != 0u ? 1 : 0;
    if ((st & tg::status::valid) == 0u || (st & tg::status::fallback) != 0u) continue;
    const tg::shape_metrics m = tg::measure_shape(track, r.limits, bins.data());
    ++r.accepted;
    compactness.push_back(m.compactness);
    straight.push_back(m.straight_fraction);
    thickness.push_back(m.min_thickness);
    tg::shape_metric_limits quarter = r.limits;  // the closest approach of parts a quarter lap apart
    quarter.thickness_window = 0.25f * track.length();
    neck.push_back(tg::measure_shape(track, quarter).min_thickness);
    curvature.push_back(m.max_curvature);
    length.push_back(m.length);
    turning_one += m.turning_number == 1 || m.turning_number == -1 ? 1 : 0;
    hairpins += m.hairpins;
    chicanes += m.chicanes;
    for (std::size_t b = 0; b < bins.size(); ++b) r.histogram[b] += static_cast<double>(bins[b]) / track.num_samples();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.yield = static_cast<double>(r.accepted) / r.envs;
  r.fallback = fallback / r.envs;
  r.mean_attempts = attempts / r.envs;
  if (r.accepted > 0) {
    const double a = r.accepted;
    r.compactness = summarise(compactness);
    r.straight = summarise(straight);
    r.thickness = summarise(thickness);
    r.neck = summarise(neck);
    r.max_curvature = summarise(curvature);
    r.length = summarise(length);
    for (double c : compactness) r.mean_compactness += c / a;
    r.turning_one = turning_one / a;
    r.mean_hairpins = hairpins / a;
    r.mean_chicanes = chicanes / a;
    for (double& h : r.histogram) h /= a;
  }
  return r;
}

int parse(int argc, char** argv, options& o) {
  using namespace track_gen_bench;
  CLI::App app("shape_metrics_report: shape metrics (shape_metrics.hpp) of the presets' tracks on the host "
               "backend: compactness, turning number, straight fraction, hairpins, chicanes, thickness, "
               "yield and attempts.");
  add_common_options(app, o);
  app.add_option("--envs", o.envs, "envs E of the track and drone_track presets")->check(at_least(1));
  app.add_option("--long-envs", o.long_envs, "envs of the long_track preset (0: no long_track row)")
      ->check(at_least(0));
  app.add_option("--relaxation-iterations", o.relaxation_iterations,
                 "relaxation.max_iterations of the families' relaxed rows (0: no relaxed rows)")
      ->check(at_least(0));
  return track_gen_bench::parse(app, argc, argv);
}

json limits_json(const tg::shape_metric_limits& l) {
  return {{"straight_curvature_per_kappa0", number(l.straight_curvature, "%g")},
          {"hairpin_curvature_per_kappa0", number(l.hairpin_curvature, "%g")},
          {"hairpin_angle_rad", number(l.hairpin_angle, "%g")},
          {"chicane_angle_rad", number(l.chicane_angle, "%g")},
          {"chicane_gap_per_length", number(l.chicane_gap, "%g")},
          {"thickness_window_m", number(l.thickness_window, "%g")},
          {"histogram_bins", l.histogram_bins},
          {"histogram_max_per_kappa0", number(l.histogram_max, "%g")}};
}

json summary3(const summary& s, const char* format) {
  return {{"median", number(s.median, format)}, {"p10", number(s.p10, format)}, {"p90", number(s.p90, format)}};
}

json document(const std::vector<row>& rows, const options& o, const std::string& command) {
  json doc = track_gen_bench::document("track_gen_host", "host backend (1 thread)", command);
  doc["seed"] = o.seed;
  doc["gate_spacing_m"] = number(o.spacing, "%g");
  json& out = doc["rows"] = json::array();
  for (const row& r : rows) {
    json hist = json::array();
    for (double h : r.histogram) hist.push_back(number(h, "%.6f"));
    out.push_back({{"preset", r.preset},
                   {"E", r.envs},
                   {"N", r.samples},
                   {"accepted", r.accepted},
                   {"yield", number(r.yield, "%.6f")},
                   {"fallback_fraction", number(r.fallback, "%.6f")},
                   {"mean_attempts", number(r.mean_attempts, "%.4f")},
                   {"compactness", summary3(r.compactness, "%.4f")},
                   {"mean_compactness", number(r.mean_compactness, "%.4f")},
                   {"turning_number_pm1_fraction", number(r.turning_one, "%.6f")},
                   {"straight_fraction", summary3(r.straight, "%.4f")},
                   {"mean_hairpins", number(r.mean_hairpins, "%.4f")},
                   {"mean_chicanes", number(r.mean_chicanes, "%.4f")},
                   {"min_thickness_m", summary3(r.thickness, "%.4f")},
                   {"neck_quarter_lap_m", summary3(r.neck, "%.4f")},
                   {"max_curvature_per_m", summary3(r.max_curvature, "%.4f")},
                   {"length_m", summary3(r.length, "%.3f")},
                   {"curvature_histogram_mean_share", hist},
                   {"limits", limits_json(r.limits)},
                   {"seconds", number(r.seconds, "%.2f")},
                   {"generate_seconds", number(r.generate_seconds, "%.3f")}});
  }
  doc["errors"] = json::array();
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  const std::string command = track_gen_bench::command_line(argc, argv);
  try {
    std::printf("shape_metrics_report: host backend, seed %llu, episode 0 of each env; shape columns over the "
                "accepted tracks (valid, no fallback)\ncommand: %s\n\n",
                static_cast<unsigned long long>(o.seed), command.c_str());
    std::fflush(stdout);
    std::vector<row> rows;
    rows.push_back(measure<tg::presets::track_pipeline>("track", tg::presets::track(o.envs), o));
    rows.push_back(measure<tg::presets::track_pipeline>("drone_track", tg::presets::drone_track(o.envs), o));
    // Every family through presets::any_family_pipeline (stages::random_any_family: the same
    // tracks as family_pipeline's, and the repulsive family too), with and without stages::polygon_separation.
    for (int f = 1; f < tg::num_generator_families; ++f) {
      const std::string name = tg::generator_family_names[f];
      const auto family = static_cast<tg::generator_family>(f);
      rows.push_back(measure<tg::presets::any_family_pipeline>(name, family_params(o.envs, family, true), o));
      rows.push_back(measure<tg::presets::any_family_pipeline>(name + ", no polygon separation", family_params(o.envs, family, false), o));
    }
    // The centreline relaxation (stages::centreline_relaxation) on, at the seed system's 50 sweeps:
    // the attempts that would fail on their shape are mended instead of drawn again.
    for (int f = 0; f < tg::num_generator_families && o.relaxation_iterations > 0; ++f) {
      if (f == static_cast<int>(tg::generator_family::repulsive)) continue;  // its growth keeps itself apart
      tg::track_params relaxed = family_params(o.envs, static_cast<tg::generator_family>(f), true);
      relaxed.relaxation.max_iterations = o.relaxation_iterations;
      rows.push_back(measure<tg::presets::relaxed_family_pipeline>(std::string(tg::generator_family_names[f]) + ", relaxed",
                                                               relaxed, o));
    }
    if (o.long_envs > 0)
      rows.push_back(measure<tg::presets::long_track_pipeline>("long_track", tg::presets::long_track(o.long_envs), o));
    std::printf("| preset | E | yield | mean attempts | compactness p50 (p10-p90) | turning number +-1 | "
                "straight fraction p50 | hairpins (mean) | chicanes (mean) | min thickness p50 m (window m) | "
                "neck p50 m (window L/4) | max curvature p50 1/m | length p50 m | host ms per env |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const row& r : rows) {
      std::printf("| %s | %d | %.4f | %.3f | %.3f (%.3f-%.3f) | %.4f | %.3f | %.3f | %.3f | %.3f (%.2f) | %.2f | %.3f | %.2f | %.3f |\n",
                  r.preset.c_str(), r.envs, r.yield, r.mean_attempts, r.compactness.median, r.compactness.p10,
                  r.compactness.p90, r.turning_one, r.straight.median, r.mean_hairpins, r.mean_chicanes,
                  r.thickness.median, r.thickness_window, r.neck.median, r.max_curvature.median, r.length.median,
                  1e3 * r.generate_seconds / r.envs);
    }
    std::printf("\nmean share of the samples per |curvature| bin (width %g kappa_0 = 2 pi / L; the last bin holds "
                "everything above):\n\n| preset |",
                static_cast<double>(rows[0].limits.histogram_max / rows[0].limits.histogram_bins));
    for (int b = 0; b < rows[0].limits.histogram_bins; ++b) std::printf(" %d |", b);
    std::printf("\n|---|");
    for (int b = 0; b < rows[0].limits.histogram_bins; ++b) std::printf("---:|");
    std::printf("\n");
    for (const row& r : rows) {
      std::printf("| %s |", r.preset.c_str());
      for (double h : r.histogram) std::printf(" %.3f |", h);
      std::printf("\n");
    }
    if (!o.json.empty()) track_gen_bench::write_json(o.json, document(rows, o, command));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shape_metrics_report: %s\n", e.what());
    return 1;
  }
  return 0;
}

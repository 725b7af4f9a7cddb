/// @file
/// One picture per generator family, for its page of the docs (docs/generators/<family>.svg):
/// the first tracks of a `track` preset course whose generate stage draws from that family (or,
/// for `mix`, from every family with equal weights), on the host backend. Each panel shows the
/// road (the band between the border points), the centreline, the gates, the start line (red)
/// and the track's length, gate count and compactness 4 pi A / P^2 (shape_metrics.hpp).
///
///   build/examples/generator_pictures [--out DIR] [--tracks K] [--seed S] [--spacing M]
///
/// Defaults: --out docs/generators, 6 tracks, seed 0, a gate every 2 m (sparser than the
/// preset's 0.6 m, so that the gates stay apart at this scale). Also `relaxation.svg`: attempts
/// before and after stages::centreline_relaxation (draw_relaxation).

#include "svg.hpp"

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace tg = track_gen;
namespace ex = track_gen_examples;
using course_type = tg::course<tg::presets::any_family_pipeline, tg::host_policy>;

struct options {
  std::string out = "docs/generators";
  int tracks = 6;
  unsigned seed = 0;
  float spacing = 2.0f;
};

/// Parses argv into `o`; false (after a message) on an unknown option or a value out of range.
bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--out" && has_value) {
      o.out = argv[++i];
    } else if (a == "--tracks" && has_value) {
      o.tracks = std::atoi(argv[++i]);
      if (o.tracks < 1 || o.tracks > 12) {
        std::fprintf(stderr, "generator_pictures: --tracks must be in [1, 12]\n");
        return false;
      }
    } else if (a == "--seed" && has_value) {
      o.seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (a == "--spacing" && has_value) {
      o.spacing = std::strtof(argv[++i], nullptr);
      if (!(o.spacing >= 0.1f && o.spacing <= 100.0f)) {
        std::fprintf(stderr, "generator_pictures: --spacing must be in [0.1, 100] m\n");
        return false;
      }
    } else {
      std::fprintf(stderr, "usage: generator_pictures [--out DIR] [--tracks K in 1..12] [--seed S] [--spacing M]\n");
      return false;
    }
  }
  return true;
}

ex::pt2 xy(float3 p) { return {p.x, p.y}; }

/// Draws env e's track into the panel at (ox, oy) of size w x h [px].
/// `road_half_width` > 0 draws the road at that half-width around the centreline instead of the
/// track's own borders.
void draw_track(ex::svg_document& svg, const tg::track_ref& track, const tg::shape_metric_limits& limits, float ox,
                float oy, float w, float h, int e, int family, float road_half_width = 0.0f) {
  const int n = track.num_samples();
  std::vector<ex::pt2> left(static_cast<std::size_t>(n)), right(left.size()), centre(left.size());
  ex::pt2 lo{1e30f, 1e30f}, hi{-1e30f, -1e30f};
  for (int k = 0; k < n; ++k) {
    left[k] = xy(track.border_left(k));
    right[k] = xy(track.border_right(k));
    if (road_half_width > 0.0f) {
      const float3 c = track.position(k), nl = track.normal(k);
      left[k] = {c.x + nl.x * road_half_width, c.y + nl.y * road_half_width};
      right[k] = {c.x - nl.x * road_half_width, c.y - nl.y * road_half_width};
    }
    centre[k] = xy(track.position(k));
    for (const ex::pt2 p : {left[k], right[k]}) {
      lo = {std::min(lo.x, p.x), std::min(lo.y, p.y)};
      hi = {std::max(hi.x, p.x), std::max(hi.y, p.y)};
    }
  }
  const ex::panel_map map = ex::panel_map::fit(ox, oy + 18.0f, w, h - 18.0f, lo, hi, 8.0f);
  const auto to_px = [&](std::vector<ex::pt2> pts) {
    for (ex::pt2& p : pts) p = map(p);
    return pts;
  };
  svg.ring(to_px(left), to_px(right), "#d9d9d9");
  svg.polyline(to_px(left), true, "#555", 0.8f);
  svg.polyline(to_px(right), true, "#555", 0.8f);
  svg.polyline(to_px(centre), true, "#888", 0.6f, "stroke-dasharray=\"3,3\"");
  for (int g = 0; g < track.num_gates(); ++g) {
    const tg::gate gate = track.gate(g);
    const ex::pt2 c = xy(gate.centre);
    const ex::pt2 across{-gate.normal.y * gate.half_width, gate.normal.x * gate.half_width};  // left of the tangent
    const ex::pt2 a = map({c.x + across.x, c.y + across.y});
    const ex::pt2 b = map({c.x - across.x, c.y - across.y});
    svg.line(a, b, g == 0 ? "#d62728" : "#1f77b4", g == 0 ? 2.0f : 0.9f);
  }
  const tg::shape_metrics m = tg::measure_shape(track, limits);
  char title[160];
  std::snprintf(title, sizeof title, "env %d (%s): %.1f m, %d gates, compactness %.2f%s", e,
                family >= 0 && family < tg::num_generator_families ? tg::generator_family_names[family] : "?",
                static_cast<double>(track.length()), track.num_gates(), static_cast<double>(m.compactness),
                (track.status() & tg::status::fallback) != 0u ? " (fallback)" : "");
  svg.text({ox + 6.0f, oy + 14.0f}, 12.0f, title);
}

/// Writes `<out>/<name>.svg`: the first o.tracks envs of a course of `params`.
bool draw_family(const std::string& name, const tg::track_params& params, const options& o) {
  course_type course(params, o.spacing);
  const tg::course_ref view = course.view();
  const tg::shape_metric_limits limits = tg::shape_metric_limits_for(params);
  const std::vector<int> family = course.copy_tracks({}).family;
  const int columns = std::min(o.tracks, 3);
  const int rows = (o.tracks + columns - 1) / columns;
  const float panel = 300.0f;
  ex::svg_document svg(static_cast<int>(columns * panel), static_cast<int>(rows * panel + 24.0f));
  svg.text({6.0f, 17.0f}, 15.0f, name + " (track preset, seed " + std::to_string(o.seed) +
                                      "): road, centreline, gates, start line in red");
  for (int e = 0; e < o.tracks; ++e)
    draw_track(svg, view.track(e), limits, static_cast<float>(e % columns) * panel,
               24.0f + static_cast<float>(e / columns) * panel, panel, panel, e, family[static_cast<std::size_t>(e)]);
  const std::string path = o.out + "/" + name + ".svg";
  if (!svg.save(path)) {
    std::fprintf(stderr, "generator_pictures: cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("%s\n", path.c_str());
  return true;
}

/// Writes `<out>/relaxation.svg`: for up to 4 of 256 bezier envs whose first attempt
/// stages::centreline_relaxation mended (those whose road overlapped itself most), that attempt as drawn (left: the road, at the preset's
/// half-width, overlapping itself or turning too tight) and as relaxed and accepted (right).
/// The attempt as drawn comes from a second course with the relaxation off whose validation
/// accepts nearly anything (half-width 1 mm, turn radius 0.1 mm): the same random streams give the
/// same control points, and its first attempt is the one the relaxation saw.
bool draw_relaxation(const options& o) {
  tg::track_params p = tg::presets::track(256);
  p.seed = o.seed;
  p.generator.family = tg::generator_family::bezier;
  p.relaxation.max_iterations = 50;
  tg::track_params raw = p;
  raw.relaxation.max_iterations = 0;
  raw.half_width = 1e-3f;
  raw.validate.turn_radius_min = 1e-4f;
  raw.validate.clearance_margin = 0.0f;
  raw.validate.max_attempts = 1;
  tg::course<tg::presets::relaxed_family_pipeline, tg::host_policy> relaxed(p, o.spacing);
  course_type drawn(raw, o.spacing);
  const tg::track_snapshot s = relaxed.copy_tracks({}), d = drawn.copy_tracks({});
  // The mended attempts whose road overlapped itself most (the smallest clearance between parts
  // of the attempt far apart along it, shape_metrics' min_thickness against c = 2 hw + margin).
  const tg::course_ref after = relaxed.view(), before = drawn.view();
  const tg::shape_metric_limits limits = tg::shape_metric_limits_for(p);
  std::vector<std::pair<float, int>> overlapping;
  for (int e = 0; e < p.num_envs; ++e) {
    const std::uint32_t st = s.status[static_cast<std::size_t>(e)], dt = d.status[static_cast<std::size_t>(e)];
    if ((st & tg::status::relaxed) == 0u || tg::status::attempts(st) != 1 || (dt & tg::status::valid) == 0u ||
        (dt & tg::status::fallback) != 0u)
      continue;
    overlapping.emplace_back(tg::measure_shape(before.track(e), limits).min_thickness, e);
  }
  std::sort(overlapping.begin(), overlapping.end());
  std::vector<int> picked;
  for (std::size_t k = 0; k < overlapping.size() && static_cast<int>(k) < std::min(o.tracks, 4); ++k)
    picked.push_back(overlapping[k].second);
  const float panel = 300.0f;
  const int rows = static_cast<int>(picked.size());
  ex::svg_document svg(static_cast<int>(2 * panel), static_cast<int>(rows * panel + 24.0f));
  svg.text({6.0f, 17.0f}, 15.0f, "centreline relaxation (bezier, seed " + std::to_string(o.seed) +
                                      "): the first attempt as drawn (left) and as relaxed (right)");
  for (int r = 0; r < rows; ++r) {
    const int e = picked[static_cast<std::size_t>(r)];
    const float oy = 24.0f + static_cast<float>(r) * panel;
    draw_track(svg, before.track(e), limits, 0.0f, oy, panel, panel, e, 1, p.half_width);
    draw_track(svg, after.track(e), limits, panel, oy, panel, panel, e, 1);
  }
  const std::string path = o.out + "/relaxation.svg";
  if (!svg.save(path)) {
    std::fprintf(stderr, "generator_pictures: cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("%s (envs", path.c_str());
  for (int e : picked) std::printf(" %d", e);
  std::printf(")\n");
  return !picked.empty();
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  try {
    bool ok = true;
    for (int f = 0; f < tg::num_generator_families; ++f) {
      tg::track_params p = tg::presets::track(o.tracks);
      p.seed = o.seed;
      p.generator.family = static_cast<tg::generator_family>(f);
      ok = draw_family(tg::generator_family_names[f], p, o) && ok;
    }
    tg::track_params mix = tg::presets::track(o.tracks);
    mix.seed = o.seed;
    for (int f = 0; f < tg::num_generator_families; ++f) mix.generator.weights[f] = 1.0f;
    ok = draw_family("mix", mix, o) && ok;
    ok = draw_relaxation(o) && ok;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "generator_pictures: %s\n", e.what());
    return 1;
  }
}

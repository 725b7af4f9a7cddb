// One source of truth for the parameter ranges (issue 17, item 8): the table of
// include/track_gen/detail/param_ranges.hpp is what the construction checks enforce (every
// bound, exactly: the value at a closed bound passes, the next representable value outside fails
// with a message that names the parameter and prints a value distinguishable from the bound; an
// open bound fails and the next value inside passes), what
// docs/parameters.md says (rendered here; TRACK_GEN_WRITE_DOCS=1 rewrites the file) and what
// the comments of include/track_gen/params.hpp say.
#include <doctest/doctest.h>

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef TRACK_GEN_SOURCE_DIR
#error "tests/CMakeLists.txt defines TRACK_GEN_SOURCE_DIR (the repository root)"
#endif

namespace {

namespace tg = track_gen;
using tg::detail::param;
using tg::detail::param_range;

std::string source_path(const char* relative) { return std::string(TRACK_GEN_SOURCE_DIR) + "/" + relative; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// docs/parameters.md, rendered from the table.
std::string render_parameters_md() {
  std::string out;
  out += "# Parameter ranges\n\n";
  out += "<!-- Generated from include/track_gen/detail/param_ranges.hpp by tests/core/param_ranges_test.cpp; "
         "do not edit: change the table and run `TRACK_GEN_WRITE_DOCS=1 build/tests/core_param_ranges_test`. -->\n\n";
  out += "Every range below is checked when a course is constructed (and by `course::required_bytes`), by the "
         "same table this page is generated from (`include/track_gen/detail/param_ranges.hpp`); "
         "`include/track_gen/params.hpp` states each range in its field's comment. A value outside its range throws "
         "`std::invalid_argument` (Python: `ValueError`) naming the parameter, its value (with enough digits to "
         "differ from the bound it breaks) and the range. `[a, b]` includes both bounds, `(a, b)` neither; a "
         "field name as a bound means that field's value. Lengths are in metres, angles in radians.\n\n";
  out += "| parameter | unit | range | why |\n|---|---|---|---|\n";
  for (const param_range& r : tg::detail::param_ranges) {
    out += std::string("| `") + r.name + "` | " + (r.unit[0] != '\0' ? r.unit : "") + " | " + tg::detail::range_text(r) +
           (r.min_from != nullptr ? std::string(" (at least ") + tg::detail::bound_text(r, r.min) + ")" : "") + " | " +
           r.reason + " |\n";
  }
  out += "\n## Other rules\n\n| parameter | rule | why |\n|---|---|---|\n";
  for (const tg::detail::param_rule& r : tg::detail::param_rules)
    out += std::string("| `") + r.name + "` | " + r.rule + " | " + r.reason + " |\n";
  return out;
}

/// Sets one parameter of (params, checkpoint spacing); `fix` also moves the fields whose lower
/// bound is this one (radius_max above radius_min, ...), so that only this field is tested.
struct setter {
  std::function<void(tg::track_params&, float&, double)> set;
};

std::map<param, setter> setters() {
  std::map<param, setter> m;
  auto f = [](float tg::track_params::*field) {
    return setter{[field](tg::track_params& p, float&, double v) { p.*field = static_cast<float>(v); }};
  };
  auto i = [](int tg::track_params::*field) {
    return setter{[field](tg::track_params& p, float&, double v) { p.*field = static_cast<int>(v); }};
  };
  m[param::num_envs] = i(&tg::track_params::num_envs);
  m[param::num_samples] = i(&tg::track_params::num_samples);
  m[param::half_width] = f(&tg::track_params::half_width);
  m[param::gate_half_height] = f(&tg::track_params::gate_half_height);
  m[param::checkpoint_spacing] = {[](tg::track_params&, float& s, double v) { s = static_cast<float>(v); }};
  m[param::generator_family] = {[](tg::track_params& p, float&, double v) {
    p.generator.family = static_cast<tg::generator_family>(static_cast<int>(v));
  }};
  m[param::generator_weights] = {[](tg::track_params& p, float&, double v) {
    for (float& w : p.generator.weights) w = static_cast<float>(v);
  }};
  m[param::polar_control_points] = {[](tg::track_params& p, float&, double v) { p.polar.control_points = static_cast<int>(v); }};
  m[param::polar_radius_min] = {[](tg::track_params& p, float&, double v) {
    p.polar.radius_min = static_cast<float>(v);
    p.polar.radius_max = std::fmax(p.polar.radius_max, p.polar.radius_min);
  }};
  m[param::polar_radius_max] = {[](tg::track_params& p, float&, double v) { p.polar.radius_max = static_cast<float>(v); }};
  m[param::polar_angle_jitter] = {[](tg::track_params& p, float&, double v) { p.polar.angle_jitter = static_cast<float>(v); }};
  m[param::polar_lobe_amplitude_min] = {[](tg::track_params& p, float&, double v) {
    p.polar.lobe_amplitude_min = static_cast<float>(v);
    p.polar.lobe_amplitude_max = std::fmax(p.polar.lobe_amplitude_max, p.polar.lobe_amplitude_min);
  }};
  m[param::polar_lobe_amplitude_max] = {[](tg::track_params& p, float&, double v) { p.polar.lobe_amplitude_max = static_cast<float>(v); }};
  m[param::polar_elevation_min] = {[](tg::track_params& p, float&, double v) {
    p.polar.elevation_min = static_cast<float>(v);
    p.polar.elevation_max = std::fmax(p.polar.elevation_max, p.polar.elevation_min);
  }};
  m[param::polar_elevation_max] = {[](tg::track_params& p, float&, double v) { p.polar.elevation_max = static_cast<float>(v); }};
  m[param::polygon_separation_clearance] = {[](tg::track_params& p, float&, double v) { p.polygon_separation.clearance = static_cast<float>(v); }};
  m[param::polygon_separation_smoothing] = {[](tg::track_params& p, float&, double v) { p.polygon_separation.smoothing = static_cast<float>(v); }};
  m[param::polygon_separation_max_iterations] = {[](tg::track_params& p, float&, double v) { p.polygon_separation.max_iterations = static_cast<int>(v); }};
  m[param::polygon_separation_tolerance] = {[](tg::track_params& p, float&, double v) { p.polygon_separation.tolerance = static_cast<float>(v); }};
  m[param::spline_samples_per_segment] = {[](tg::track_params& p, float&, double v) { p.spline.samples_per_segment = static_cast<int>(v); }};
  m[param::validate_length_min] = {[](tg::track_params& p, float&, double v) {
    p.validate.length_min = static_cast<float>(v);
    p.validate.length_max = std::fmax(p.validate.length_max, p.validate.length_min);
  }};
  m[param::validate_length_max] = {[](tg::track_params& p, float&, double v) { p.validate.length_max = static_cast<float>(v); }};
  m[param::validate_turn_radius_min] = {[](tg::track_params& p, float&, double v) { p.validate.turn_radius_min = static_cast<float>(v); }};
  m[param::validate_clearance_margin] = {[](tg::track_params& p, float&, double v) { p.validate.clearance_margin = static_cast<float>(v); }};
  m[param::validate_max_attempts] = {[](tg::track_params& p, float&, double v) { p.validate.max_attempts = static_cast<int>(v); }};
  m[param::dense_repulsive_clearance] = {[](tg::track_params& p, float&, double v) { p.dense_repulsive.clearance = static_cast<float>(v); }};
  m[param::dense_repulsive_step] = {[](tg::track_params& p, float&, double v) { p.dense_repulsive.step = static_cast<float>(v); }};
  m[param::dense_repulsive_smoothing] = {[](tg::track_params& p, float&, double v) { p.dense_repulsive.smoothing = static_cast<float>(v); }};
  m[param::dense_repulsive_iterations_per_window] = {[](tg::track_params& p, float&, double v) {
    p.dense_repulsive.iterations_per_window = static_cast<int>(v);
  }};
  m[param::dense_repulsive_max_windows] = {[](tg::track_params& p, float&, double v) { p.dense_repulsive.max_windows = static_cast<int>(v); }};
  m[param::dense_repulsive_tolerance] = {[](tg::track_params& p, float&, double v) { p.dense_repulsive.tolerance = static_cast<float>(v); }};
  m[param::budget_operations_per_track] = {[](tg::track_params& p, float&, double v) { p.budget.operations_per_track = static_cast<float>(v); }};
  m[param::budget_bytes_per_env] = {[](tg::track_params& p, float&, double v) { p.budget.bytes_per_env = static_cast<float>(v); }};
  // Generator families (issue 13): a field setter, and the bands' lower ends moving their upper ends.
#define TG_FAMILY_FIELD(id, T, path) \
  m[param::id] = {[](tg::track_params& p, float&, double v) { p.path = static_cast<T>(v); }};
  TG_FAMILY_FIELD(voronoi_control_points, int, voronoi.control_points)
  m[param::voronoi_radius_min] = {[](tg::track_params& p, float&, double v) {
    p.voronoi.radius_min = static_cast<float>(v);
    p.voronoi.radius_max = std::fmax(p.voronoi.radius_max, p.voronoi.radius_min);
  }};
  TG_FAMILY_FIELD(voronoi_radius_max, float, voronoi.radius_max)
  TG_FAMILY_FIELD(voronoi_angle_jitter, float, voronoi.angle_jitter)
  TG_FAMILY_FIELD(voronoi_site_spacing, float, voronoi.site_spacing)
  TG_FAMILY_FIELD(voronoi_site_jitter, float, voronoi.site_jitter)
  TG_FAMILY_FIELD(voronoi_min_angle_gap, float, voronoi.min_angle_gap)
  TG_FAMILY_FIELD(voronoi_chaikin_rounds, int, voronoi.chaikin_rounds)
  TG_FAMILY_FIELD(checkpoint_checkpoints, int, checkpoint.checkpoints)
  m[param::checkpoint_radius_min] = {[](tg::track_params& p, float&, double v) {
    p.checkpoint.radius_min = static_cast<float>(v);
    p.checkpoint.radius_max = std::fmax(p.checkpoint.radius_max, p.checkpoint.radius_min);
  }};
  TG_FAMILY_FIELD(checkpoint_radius_max, float, checkpoint.radius_max)
  TG_FAMILY_FIELD(checkpoint_angle_jitter, float, checkpoint.angle_jitter)
  TG_FAMILY_FIELD(checkpoint_step_length, float, checkpoint.step_length)
  TG_FAMILY_FIELD(checkpoint_max_turn_rate, float, checkpoint.max_turn_rate)
  TG_FAMILY_FIELD(checkpoint_steer_gain, float, checkpoint.steer_gain)
  TG_FAMILY_FIELD(checkpoint_closure_boost, float, checkpoint.closure_boost)
  TG_FAMILY_FIELD(checkpoint_control_spacing, float, checkpoint.control_spacing)
  TG_FAMILY_FIELD(checkpoint_max_steps, int, checkpoint.max_steps)
  TG_FAMILY_FIELD(checkpoint_candidates, int, checkpoint.candidates)
  TG_FAMILY_FIELD(checkpoint_closure_tolerance, float, checkpoint.closure_tolerance)
#undef TG_FAMILY_FIELD
  // The generator families (bezier, hull): corners_max sits above corners_min.
  m[param::bezier_corners_min] = {[](tg::track_params& p, float&, double v) {
    p.bezier.corners_min = static_cast<int>(v);
    p.bezier.corners_max = std::max(p.bezier.corners_max, p.bezier.corners_min);
  }};
  m[param::hull_corners_min] = {[](tg::track_params& p, float&, double v) {
    p.hull.corners_min = static_cast<int>(v);
    p.hull.corners_max = std::max(p.hull.corners_max, p.hull.corners_min);
  }};
#define TG_FAMILY_SETTER(fam, field, T) \
  m[param::fam##_##field] = {[](tg::track_params& p, float&, double v) { p.fam.field = static_cast<T>(v); }}
  TG_FAMILY_SETTER(bezier, corners_max, int);
  TG_FAMILY_SETTER(bezier, extent, float);
  TG_FAMILY_SETTER(bezier, layout, int);
  TG_FAMILY_SETTER(bezier, min_corner_distance, float);
  TG_FAMILY_SETTER(bezier, max_turn, float);
  TG_FAMILY_SETTER(bezier, rad, float);
  TG_FAMILY_SETTER(bezier, edgy, float);
  TG_FAMILY_SETTER(bezier, handle_clamp, float);
  TG_FAMILY_SETTER(bezier, samples_per_piece, int);
  TG_FAMILY_SETTER(hull, corners_max, int);
  TG_FAMILY_SETTER(hull, extent, float);
  TG_FAMILY_SETTER(hull, layout, int);
  TG_FAMILY_SETTER(hull, min_corner_distance, float);
  TG_FAMILY_SETTER(hull, max_turn, float);
  TG_FAMILY_SETTER(hull, displacement, float);
  TG_FAMILY_SETTER(hull, convex, int);
  TG_FAMILY_SETTER(hull, chaikin_passes, int);
  TG_FAMILY_SETTER(repulsive_growth, domain_radius, float);
  TG_FAMILY_SETTER(repulsive_growth, init_ratio, float);
  TG_FAMILY_SETTER(repulsive_growth, grow_mult_max, float);
  TG_FAMILY_SETTER(repulsive_growth, obstacles_max, int);
  TG_FAMILY_SETTER(repulsive_growth, obstacle_radius_max, float);
  TG_FAMILY_SETTER(repulsive_growth, ratchet_rate, float);
  TG_FAMILY_SETTER(repulsive_growth, tau, float);
  TG_FAMILY_SETTER(repulsive_growth, length_weight, float);
  TG_FAMILY_SETTER(repulsive_growth, levels, int);
  TG_FAMILY_SETTER(repulsive_growth, settle_iterations, int);
  TG_FAMILY_SETTER(repulsive_growth, resample_every, int);
  TG_FAMILY_SETTER(repulsive_growth, stall_window, int);
  TG_FAMILY_SETTER(repulsive_growth, stall_area_tolerance, float);
  TG_FAMILY_SETTER(repulsive_growth, deactivate_obstacles, int);
  TG_FAMILY_SETTER(relaxation, max_iterations, int);
  TG_FAMILY_SETTER(relaxation, margin, float);
  TG_FAMILY_SETTER(relaxation, separation_weight, float);
  TG_FAMILY_SETTER(relaxation, spacing_weight, float);
  TG_FAMILY_SETTER(relaxation, bending_weight, float);
  TG_FAMILY_SETTER(relaxation, chebyshev_rho, float);
  TG_FAMILY_SETTER(relaxation, chebyshev_gamma, float);
  TG_FAMILY_SETTER(relaxation, chebyshev_start, int);
  TG_FAMILY_SETTER(relaxation, smoothing_passes, int);
  TG_FAMILY_SETTER(elevation, knots, int);
  TG_FAMILY_SETTER(elevation, z_max, float);
  TG_FAMILY_SETTER(elevation, max_grade, float);
  TG_FAMILY_SETTER(elevation, harmonics, int);
#undef TG_FAMILY_SETTER
  // The repulsive family: the lower ends move their upper ends; alpha and beta move each other
  // into beta's range (alpha + 1, 2 alpha + 1], and points lowers levels until every level holds
  // a whole number of points, 8 at least (host_checks' rules), so that only the field set is tested.
  m[param::repulsive_growth_grow_mult_min] = {[](tg::track_params& p, float&, double v) {
    p.repulsive_growth.grow_mult_min = static_cast<float>(v);
    p.repulsive_growth.grow_mult_max = std::fmax(p.repulsive_growth.grow_mult_max, p.repulsive_growth.grow_mult_min);
  }};
  m[param::repulsive_growth_obstacles_min] = {[](tg::track_params& p, float&, double v) {
    p.repulsive_growth.obstacles_min = static_cast<int>(v);
    p.repulsive_growth.obstacles_max = std::max(p.repulsive_growth.obstacles_max, p.repulsive_growth.obstacles_min);
  }};
  m[param::repulsive_growth_obstacle_radius_min] = {[](tg::track_params& p, float&, double v) {
    p.repulsive_growth.obstacle_radius_min = static_cast<float>(v);
    p.repulsive_growth.obstacle_radius_max =
        std::fmax(p.repulsive_growth.obstacle_radius_max, p.repulsive_growth.obstacle_radius_min);
  }};
  m[param::repulsive_growth_alpha] = {[](tg::track_params& p, float&, double v) {
    p.repulsive_growth.alpha = static_cast<float>(v);
    p.repulsive_growth.beta = std::fmin(2.0f * p.repulsive_growth.alpha + 1.0f, 17.0f);
  }};
  m[param::repulsive_growth_beta] = {[](tg::track_params& p, float&, double v) {
    p.repulsive_growth.beta = static_cast<float>(v);
    p.repulsive_growth.alpha = std::fmin(std::fmax((p.repulsive_growth.beta - 1.0f) / 2.0f, 1.0f), 8.0f);
  }};
  m[param::repulsive_growth_points] = {[](tg::track_params& p, float&, double v) {
    tg::repulsive_growth_params& g = p.repulsive_growth;
    g.points = static_cast<int>(v);
    while (g.levels > 1 && (g.points % (1 << (g.levels - 1)) != 0 || g.points / (1 << (g.levels - 1)) < 8)) --g.levels;
  }};
  m[param::elevation_profile] = {[](tg::track_params& p, float&, double v) {
    p.elevation.profile = static_cast<tg::elevation_kind>(static_cast<int>(v));
  }};
  m[param::elevation_z_min] = {[](tg::track_params& p, float&, double v) {
    p.elevation.z_min = static_cast<float>(v);
    p.elevation.z_max = std::fmax(p.elevation.z_max, p.elevation.z_min);
  }};
  // Gate courses: min_gates moves max_gates above it.
  m[param::gates_min_gates] = {[](tg::track_params& p, float&, double v) {
    p.gates.min_gates = static_cast<int>(v);
    p.gates.max_gates = std::max(p.gates.max_gates, p.gates.min_gates);
  }};
  m[param::gates_ordering] = {[](tg::track_params& p, float&, double v) { p.gates.ordering = static_cast<int>(v); }};
  m[param::gates_max_gates] = {[](tg::track_params& p, float&, double v) { p.gates.max_gates = static_cast<int>(v); }};
  m[param::gates_min_spacing] = {[](tg::track_params& p, float&, double v) { p.gates.min_spacing = static_cast<float>(v); }};
  m[param::gates_spacing_iterations] = {[](tg::track_params& p, float&, double v) { p.gates.spacing_iterations = static_cast<int>(v); }};
  m[param::gates_align] = {[](tg::track_params& p, float&, double v) { p.gates.align = static_cast<int>(v); }};
  return m;
}

/// The rows that bound a capacity derived from the parameters, or an input that is not a
/// parameter: gates per track (tested below), the user-track, scratch and course sizes
/// (tests/core/capacity_test.cpp), step positions (tests/progress/invalid_input_cases.hpp), the
/// SDF and heightfield grids' sizes (tests/collision/sdf_cases.hpp, heightfield_cases.hpp), the
/// gate frame and sphere radius (tests/gates/gate_frame_collision_cases.hpp).
std::set<param> capacity_rows() {
  return {param::gates_per_track, param::user_track_points, param::scratch_bytes_per_track, param::course_bytes,
          param::position, param::sdf_resolution, param::heightfield_resolution, param::heightfield_margin,
          param::gate_frame_half_thickness, param::gate_frame_half_depth, param::gate_frame_radius};
}

/// The current value of the field a `min_from` names (the dynamic lower bound).
double field_value(const tg::track_params& p, const std::string& name) {
  if (name == "track_params.polar.radius_min") return p.polar.radius_min;
  if (name == "track_params.polar.elevation_min") return p.polar.elevation_min;
  if (name == "track_params.polar.lobe_amplitude_min") return p.polar.lobe_amplitude_min;
  if (name == "track_params.validate.length_min") return p.validate.length_min;
  if (name == "track_params.voronoi.radius_min") return p.voronoi.radius_min;
  if (name == "track_params.checkpoint.radius_min") return p.checkpoint.radius_min;
  if (name == "track_params.bezier.corners_min") return p.bezier.corners_min;
  if (name == "track_params.hull.corners_min") return p.hull.corners_min;
  if (name == "track_params.repulsive_growth.grow_mult_min") return p.repulsive_growth.grow_mult_min;
  if (name == "track_params.repulsive_growth.obstacles_min") return p.repulsive_growth.obstacles_min;
  if (name == "track_params.repulsive_growth.obstacle_radius_min") return p.repulsive_growth.obstacle_radius_min;
  if (name == "track_params.elevation.z_min") return p.elevation.z_min;
  if (name == "track_params.gates.min_gates") return p.gates.min_gates;
  FAIL("no test accessor for " << name);
  return 0;
}

/// check_params' verdict: empty when accepted, else the message.
std::string verdict(const tg::track_params& p, float spacing) {
  try {
    tg::detail::check_params(p, spacing);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

/// The next representable value of the parameter's type past `v`, toward `direction`.
double outside(const param_range& r, double v, double direction) {
  if (r.integer) return v + (direction > 0 ? 1 : -1);
  return std::nextafter(static_cast<float>(v), direction > 0 ? std::numeric_limits<float>::infinity()
                                                              : -std::numeric_limits<float>::infinity());
}

std::string value_text(const param_range& r, double v) {
  return r.integer ? tg::detail::format_number(static_cast<int>(v)) : tg::detail::format_number(static_cast<float>(v));
}

}  // namespace

TEST_CASE("docs/parameters.md is the table of param_ranges.hpp") {
  const std::string rendered = render_parameters_md();
  const std::string path = source_path("docs/parameters.md");
  const char* write = std::getenv("TRACK_GEN_WRITE_DOCS");
  if (write != nullptr && std::string(write) == "1") {
    std::ofstream(path, std::ios::binary) << rendered;
    MESSAGE("wrote " << path);
  }
  const std::string on_disk = read_file(path);
  CHECK_MESSAGE(on_disk == rendered, "docs/parameters.md differs from the table: run TRACK_GEN_WRITE_DOCS=1 "
                                     "build/tests/core_param_ranges_test and commit the file");
}

TEST_CASE("params.hpp states each range as the table does") {
  const std::string text = read_file(source_path("include/track_gen/params.hpp"));
  REQUIRE(!text.empty());
  // The struct that holds each middle name of "track_params.<group>.<field>".
  const std::map<std::string, std::string> structs = {{"", "track_params"},
                                                      {"generator", "generator_params"},
                                                      {"polar", "random_polar_params"},
                                                      {"polygon_separation", "polygon_separation_params"},
                                                      {"spline", "spline_params"},
                                                      {"validate", "validate_params"},
                                                      {"dense_repulsive", "dense_repulsive_params"},
                                                      {"budget", "budget_params"},
                                                      {"voronoi", "voronoi_params"},
                                                      {"checkpoint", "checkpoint_params"},
                                                      {"bezier", "bezier_params"},
                                                      {"hull", "hull_params"},
                                                      {"repulsive_growth", "repulsive_growth_params"},
                                                      {"relaxation", "relaxation_params"},
                                                      {"elevation", "elevation_params"},
                                                      {"gates", "gate_course_params"}};
  int checked = 0;
  for (const param_range& r : tg::detail::param_ranges) {
    const std::string name = r.name;
    if (name.rfind("track_params.", 0) != 0) continue;  // not a track_params field
    CAPTURE(name);
    const std::string rest = name.substr(std::string("track_params.").size());
    const std::size_t dot = rest.find('.');
    const std::string group = dot == std::string::npos ? "" : rest.substr(0, dot);
    const std::string field = dot == std::string::npos ? rest : rest.substr(dot + 1);
    REQUIRE(structs.count(group) == 1);
    const std::size_t begin = text.find("struct " + structs.at(group) + " {");
    REQUIRE(begin != std::string::npos);
    const std::size_t end = text.find("\n};", begin);
    REQUIRE(end != std::string::npos);
    const std::string body = text.substr(begin, end - begin);
    // The declaration "<type> field = ...;" and the /// lines right above it.
    std::istringstream lines(body);
    std::vector<std::string> comment;
    std::string line, found;
    bool declared = false;
    while (std::getline(lines, line)) {
      const std::size_t first = line.find_first_not_of(' ');
      const std::string t = first == std::string::npos ? "" : line.substr(first);
      if (t.rfind("///", 0) == 0) {
        comment.push_back(t);
        continue;
      }
      // "<type> field = ..." or, for an array, "<type> field[extent] = ...".
      if (t.find(" " + field + " = ") != std::string::npos || t.find(" " + field + "[") != std::string::npos) {
        for (const std::string& c : comment) found += c + "\n";
        declared = true;
        break;
      }
      comment.clear();
    }
    REQUIRE_MESSAGE(declared, field << " not found in struct " << structs.at(group));
    const std::string expected = "in " + tg::detail::range_text(r);
    CAPTURE(found);
    CHECK_MESSAGE(found.find(expected) != std::string::npos, "the comment must say \"" << expected << "\"");
    if (r.unit[0] != '\0') CHECK(found.find(std::string("[") + r.unit + "]") != std::string::npos);
    ++checked;
  }
  // All but the rows that are not track_params fields: checkpoint_spacing and the capacities.
  CHECK(checked == static_cast<int>(tg::detail::param_count) - static_cast<int>(capacity_rows().size()) - 1);
}

TEST_CASE("every bound of the table is enforced exactly, with a message that tells the value from the bound") {
  const std::map<param, setter> set = setters();
  for (const param_range& r : tg::detail::param_ranges) {
    if (capacity_rows().count(r.id) == 1) continue;  // derived capacities: below and tests/core/capacity_test.cpp
    CAPTURE(std::string(r.name));
    REQUIRE_MESSAGE(set.count(r.id) == 1, "no setter for this parameter in the test");
    const setter& s = set.at(r.id);
    auto with = [&](double v) {
      tg::track_params p = tg::presets::track(4);
      float spacing = 0.6f;
      s.set(p, spacing, v);
      return std::make_pair(p, spacing);
    };
    const tg::track_params defaults = tg::presets::track(4);
    const double lo = r.min_from != nullptr ? field_value(defaults, r.min_from) : r.min;
    for (const auto& [bound_value, direction] : {std::make_pair(lo, -1.0), std::make_pair(r.max, 1.0)}) {
      // A closed bound is accepted and the next value outside refused; an open bound is refused
      // and the next value inside accepted.
      const bool open = (direction < 0 ? r.min_bound : r.max_bound) == tg::detail::bound::open;
      const double at = open ? outside(r, bound_value, -direction) : bound_value;
      CAPTURE(at);
      const auto [p_at, s_at] = with(at);
      CHECK_MESSAGE(verdict(p_at, s_at).empty(), "the last value inside is refused: " << verdict(p_at, s_at));
      const double out = open ? bound_value : outside(r, at, direction);
      CAPTURE(out);
      const auto [p_out, s_out] = with(out);
      const std::string message = verdict(p_out, s_out);
      CAPTURE(message);
      REQUIRE_FALSE(message.empty());
      CHECK(message.find(r.name) != std::string::npos);
      const std::string shown = value_text(r, out), inside_shown = value_text(r, at);
      CHECK(message.find("= " + shown + " is out of range") != std::string::npos);
      CHECK(shown != inside_shown);  // the value reads differently from the last value inside
    }
    if (!r.integer) {
      const auto [p_nan, s_nan] = with(std::nan(""));
      CHECK(verdict(p_nan, s_nan).find(r.name) != std::string::npos);
    }
  }
  // Gates per track: G_max = ceil(L_cap / spacing) up to the table's bound.
  const param_range& g = tg::detail::range_of(param::gates_per_track);
  CHECK(tg::detail::checked_max_gates(1e6f, 0.1f) == static_cast<int>(g.max));
  CHECK_THROWS_WITH_AS(tg::detail::checked_max_gates(1e6f, std::nextafter(0.1f, 0.0f)),
                       doctest::Contains("10000001 gates"), std::invalid_argument);
  CHECK(tg::detail::checked_max_gates(1.0f, 10.0f) == 1);  // at least one gate
}

TEST_CASE("the repulsive family's rules: beta within (alpha + 1, 2 alpha + 1], points by levels") {
  tg::track_params p = tg::presets::track(4);
  CHECK(verdict(p, 0.6f).empty());
  // beta's bounds move with alpha (3 here: (4, 7]).
  p.repulsive_growth.alpha = 3.0f;
  p.repulsive_growth.beta = 7.0f;
  CHECK(verdict(p, 0.6f).empty());
  p.repulsive_growth.beta = std::nextafter(4.0f, 5.0f);
  CHECK(verdict(p, 0.6f).empty());
  for (const float beta : {4.0f, std::nextafter(7.0f, 8.0f), 16.0f}) {
    p.repulsive_growth.beta = beta;
    const std::string message = verdict(p, 0.6f);
    CAPTURE(message);
    CHECK(message.find("track_params.repulsive_growth.beta = " + tg::detail::format_number(beta) +
                       " is out of range: expected (4, 7]") != std::string::npos);
    CHECK(message.find("track_params.repulsive_growth.alpha = 3") != std::string::npos);
  }
  // points: a multiple of 2^(levels - 1), at least 8 x 2^(levels - 1).
  p = tg::presets::track(4);
  p.repulsive_growth.levels = 4;
  for (const int points : {64, 72, 512}) {
    p.repulsive_growth.points = points;
    CHECK(verdict(p, 0.6f).empty());
  }
  for (const int points : {56, 60, 100}) {
    p.repulsive_growth.points = points;
    const std::string message = verdict(p, 0.6f);
    CAPTURE(message);
    CHECK(message.find("track_params.repulsive_growth.points = " + std::to_string(points) + " must be") !=
          std::string::npos);
    CHECK(message.find("levels = 4: a multiple of 8, at least 64") != std::string::npos);
  }
  p.repulsive_growth.levels = 1;
  p.repulsive_growth.points = 17;  // one level: any count in the table's range
  CHECK(verdict(p, 0.6f).empty());
}

TEST_CASE("format_number prints the fewest digits that read back as the same value") {
  using tg::detail::format_number;
  CHECK(format_number(0.999f) == "0.999");
  CHECK(format_number(std::nextafter(0.999f, 1.0f)) == "0.9990001");
  CHECK(format_number(1e6f) == "1e6");
  CHECK(format_number(1e-6f) == "1e-6");
  CHECK(format_number(1e-4f) == "0.0001");
  CHECK(format_number(10.0f) == "10");
  CHECK(format_number(4096.0f) == "4096");
  CHECK(format_number(-1e6f) == "-1e6");
  CHECK(format_number(0.0f) == "0");
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(std::nextafter(0.1, 1.0)) == "0.10000000000000002");
  CHECK(format_number(1073741824) == "1073741824");
  for (float v : {0.3f, 1.0f / 3.0f, 123456.78f, 1e-9f, 3.4e38f, std::nextafter(1e-3f, 0.0f)})
    CHECK(std::strtof(format_number(v).c_str(), nullptr) == v);
}

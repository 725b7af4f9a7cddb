#pragma once
/// @file
/// An independent, brute-force checker of generated tracks, in double precision. It uses none
/// of the library's geometry code: it re-derives every quantity (lengths, spacing, Menger
/// curvature, clearance between far-apart samples, gate placement) from the stored samples and
/// judges them against the documented contract (docs/generators.md, params.hpp).
///
/// Tolerances (why they exist): the library computes in float, the checker in double. A
/// threshold test of the library (length range, 1 / turn_radius_min, clearance c) may pass a
/// float value that the double recomputation puts a few ulps on the wrong side, so thresholds
/// are relaxed by `check_tolerances::threshold` (relative, default 1e-3, far above float
/// rounding at the scales of a track and far below any real violation). Quantities the library
/// stores as float (gate arc lengths, gate centres) are compared at a few float ulps of the
/// track's scale.

#include <track_gen/track_gen.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace tg_test {

/// pi in double precision.
inline constexpr double pi_d = 3.14159265358979323846;

/// A point or vector in double precision.
struct dvec {
  double x = 0, y = 0, z = 0;
};
inline dvec to_d(float3 p) { return {p.x, p.y, p.z}; }
inline dvec operator-(dvec a, dvec b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline dvec operator+(dvec a, dvec b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline dvec operator*(dvec a, double s) { return {a.x * s, a.y * s, a.z * s}; }
inline double dotd(dvec a, dvec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline dvec crossd(dvec a, dvec b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
inline double normd(dvec a) { return std::sqrt(dotd(a, a)); }
inline bool finite3(float3 p) { return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z); }

/// Menger curvature of three points, 1 / circumradius = 4 * area / (product of the sides)
/// (K. Menger, "Untersuchungen über allgemeine Metrik", Math. Ann. 103, 1930); the doubled area
/// is the norm of the cross product of two sides. 0 for coincident points.
inline double menger_curvature(dvec a, dvec b, dvec c) {
  const double ab = normd(b - a), bc = normd(c - b), ca = normd(a - c);
  const double den = ab * bc * ca;
  return den > 0 ? 2.0 * normd(crossd(b - a, c - b)) / den : 0.0;
}

/// Angle in [0, pi] between two vectors (atan2 of |cross| and dot: accurate at small angles).
inline double angle_between(dvec a, dvec b) { return std::atan2(normd(crossd(a, b)), dotd(a, b)); }

/// The thresholds a track is judged against, taken from the params it was generated with.
struct track_limits {
  int num_samples = 0;
  double half_width = 0, length_min = 0, length_max = 0, turn_radius_min = 0, clearance_margin = 0;
  double checkpoint_spacing = 0;
  int max_gates = 0;

  static track_limits from(const track_gen::track_params& p, float spacing, int max_gates) {
    track_limits l;
    l.num_samples = p.num_samples;
    l.half_width = p.half_width;
    l.length_min = p.validate.length_min;
    l.length_max = p.validate.length_max;
    l.turn_radius_min = p.validate.turn_radius_min;
    l.clearance_margin = p.validate.clearance_margin;
    l.checkpoint_spacing = spacing;
    l.max_gates = max_gates;
    return l;
  }
  /// c = 2 * half_width + clearance_margin: the least distance between far-apart samples.
  double clearance() const { return 2.0 * half_width + clearance_margin; }
  /// w = pi * max(turn_radius_min, c / 2): arc length beyond which samples count as far apart.
  double window() const { return pi_d * std::max(turn_radius_min, 0.5 * clearance()); }
};

/// What the checker measured on one env's track.
struct track_measure {
  bool finite = true;
  double length = 0;           ///< the L the library stored
  double polyline_length = 0;  ///< closed polyline through the N samples (incl. N-1 -> 0)
  double chord_deficit_bound = 0;  ///< sum over intervals of kappa^2 chord^3 / 24 (arc minus chord)
  double max_spacing_error = 0;    ///< max over k of |arc_k - L/N| / (L/N)
  int worst_spacing_k = -1;
  double max_curvature = 0;        ///< largest Menger curvature of three consecutive samples
  int worst_curvature_k = -1;
  double min_far_distance = 1e300; ///< least distance between samples farther apart than the window
  int far_i = -1, far_j = -1;
  /// Least distance between segments (sample k to k + 1) whose nearest endpoints are farther
  /// apart than the window: the polyline's exact clearance (0 where it crosses itself).
  double min_far_segment_distance = 1e300;
  int far_segment_i = -1, far_segment_j = -1;
  double window_over_ds = 0;       ///< w / (L / N): the window in samples (not rounded)
};

/// Distance between the segments [p1, q1] and [p2, q2], in double: the minimum over the
/// segments' closest-point conditions written out independently of the library (the four
/// endpoint-to-segment distances, and the interior critical point of the two lines when both of
/// its parameters fall inside the segments).
inline double segment_distance(dvec p1, dvec q1, dvec p2, dvec q2) {
  auto point_segment = [](dvec p, dvec a, dvec b) {
    const dvec ab = b - a;
    const double den = dotd(ab, ab);
    const double t = den > 0 ? std::clamp(dotd(p - a, ab) / den, 0.0, 1.0) : 0.0;
    return normd(p - (a + ab * t));
  };
  double best = std::min({point_segment(p1, p2, q2), point_segment(q1, p2, q2), point_segment(p2, p1, q1),
                          point_segment(q2, p1, q1)});
  const dvec d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = dotd(d1, d1), b = dotd(d1, d2), e = dotd(d2, d2), c = dotd(d1, r), f = dotd(d2, r);
  const double den = a * e - b * b;
  if (den > 1e-12 * a * e) {
    const double s = (b * f - c * e) / den, t = (a * f - b * c) / den;
    if (s >= 0 && s <= 1 && t >= 0 && t <= 1) best = std::min(best, normd((p1 + d1 * s) - (p2 + d2 * t)));
  }
  return best;
}

/// Measures env `e` of a snapshot. `window_factor` scales the window of the clearance test
/// (1 + tolerance to give the float library the benefit of the doubt on the window edge).
inline track_measure measure(const track_gen::track_snapshot& s, int e, const track_limits& lim,
                             double window_factor = 1.0) {
  track_measure m;
  const int n = s.num_samples;
  std::vector<dvec> p(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const float3 q = s.position[s.sample_index(e, k)];
    m.finite = m.finite && finite3(q);
    p[static_cast<std::size_t>(k)] = to_d(q);
  }
  m.length = s.length[static_cast<std::size_t>(e)];
  m.finite = m.finite && std::isfinite(m.length);
  if (!m.finite) return m;
  auto at = [&](int k) { return p[static_cast<std::size_t>(((k % n) + n) % n)]; };

  std::vector<double> kappa(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    kappa[static_cast<std::size_t>(k)] = menger_curvature(at(k - 1), at(k), at(k + 1));
    if (kappa[static_cast<std::size_t>(k)] > m.max_curvature) {
      m.max_curvature = kappa[static_cast<std::size_t>(k)];
      m.worst_curvature_k = k;
    }
  }
  // Arc length of each interval k -> k+1: the arc of the circle of mean local curvature through
  // the two samples, 2 asin(kappa c / 2) / kappa, a second-order estimate of the curve's arc
  // (the chord alone is short by about kappa^2 c^3 / 24). Against a reference spline sampled
  // 4000 times per segment, this estimate was within 0.2% of L/N on the track preset (256
  // samples, an interval turning by <= 0.6 rad); it degrades to ~2% when an interval turns by
  // ~1.2 rad (128 samples at turn radius 0.4 m), which the sweeps avoid.
  const double ds = m.length / n;
  for (int k = 0; k < n; ++k) {
    const double chord = normd(at(k + 1) - at(k));
    m.polyline_length += chord;
    const double kap = 0.5 * (kappa[static_cast<std::size_t>(k)] + kappa[static_cast<std::size_t>((k + 1) % n)]);
    m.chord_deficit_bound += kap * kap * chord * chord * chord / 24.0;
    const double x = 0.5 * kap * chord;
    const double arc = x > 1e-9 ? (x < 1.0 ? 2.0 * std::asin(x) / kap : pi_d / kap) : chord;
    const double err = std::fabs(arc - ds) / ds;
    if (err > m.max_spacing_error) {
      m.max_spacing_error = err;
      m.worst_spacing_k = k;
    }
  }
  // Clearance, brute force over every pair: samples i, j are d = |i - j| (cyclically) spacings
  // of L / N apart along the track (the spacing test checks that); far apart when d L / N > w.
  const double w = lim.window() * window_factor;
  m.window_over_ds = lim.window() / ds;
  int d_min = std::max(1, static_cast<int>(std::floor(w / ds)));
  while (!(d_min * ds > w)) ++d_min;
  while (d_min > 1 && (d_min - 1) * ds > w) --d_min;
  double best2 = 1e300;
  for (int i = 0; i < n; ++i) {
    const dvec a = p[static_cast<std::size_t>(i)];
    const int j_end = std::min(n - 1, i + n - d_min);  // cyclic distance n - (j - i) >= d_min too
    for (int j = i + d_min; j <= j_end; ++j) {
      const dvec d = p[static_cast<std::size_t>(j)] - a;
      const double d2 = dotd(d, d);
      if (d2 < best2) {
        best2 = d2;
        m.far_i = i;
        m.far_j = j;
      }
    }
  }
  if (m.far_i >= 0) m.min_far_distance = std::sqrt(best2);
  // The same for segments: i -> i+1 and j -> j+1 are far apart when both gaps between them,
  // j - (i + 1) and i + n - (j + 1) samples, are at least d_min. A pair whose first samples are
  // D apart is at least D - |segment i| - |segment j| apart: measured only when that can beat
  // the best so far.
  std::vector<double> seg(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) seg[static_cast<std::size_t>(k)] = normd(at(k + 1) - at(k));
  double best_seg = 1e300;
  for (int i = 0; i < n; ++i) {
    const dvec a0 = at(i), a1 = at(i + 1);
    const int j_end = i + n - 1 - d_min;  // gap i + n - (j + 1) >= d_min
    for (int j = i + d_min + 1; j <= std::min(j_end, n - 1); ++j) {
      const dvec b0 = p[static_cast<std::size_t>(j)];
      if (normd(b0 - a0) - seg[static_cast<std::size_t>(i)] - seg[static_cast<std::size_t>(j)] >= best_seg) continue;
      const double d = segment_distance(a0, a1, b0, at(j + 1));
      if (d < best_seg) {
        best_seg = d;
        m.far_segment_i = i;
        m.far_segment_j = j;
      }
    }
  }
  if (m.far_segment_i >= 0) m.min_far_segment_distance = best_seg;
  return m;
}

/// Collects failures of one env as readable lines.
class problem_list {
 public:
  explicit problem_list(int env) : env_(env) {}
  template <class... Args>
  void add(const Args&... args) {
    std::ostringstream os;
    os.precision(9);
    os << "env " << env_ << ": ";
    (os << ... << args);
    lines_.push_back(os.str());
  }
  const std::vector<std::string>& lines() const { return lines_; }
  bool empty() const { return lines_.empty(); }

 private:
  int env_;
  std::vector<std::string> lines_;
};

/// Tolerances of the checks, all documented at their use.
struct check_tolerances {
  double spacing = 0.01;             ///< arc-length spacing within this fraction of L / N
  double threshold = 1e-3;           ///< relative slack on validation thresholds (float vs double)
  double gate_position = 2e-6;       ///< gate centres and arc lengths, relative to L (float ulps)
  /// When > 0: the track is this polyline (a user centreline, length computed in double), and L
  /// must equal it within 1e-5 (float sums of a few hundred segments); otherwise the track is
  /// a smooth curve and L is checked against the samples' polyline and its curvature.
  double reference_length = 0;
};

/// Geometry every track must have, valid or not (the contract of docs/generators.md): finite; uniform
/// arc-length spacing (including N-1 -> 0); L equal to the closed polyline length up to the
/// chords' deficit on a curved track; G = floor(L / spacing) in [1, G_max]; gates at arc
/// lengths g L / G, on the centreline, gate 0 at sample 0, unit gate normals along the local
/// tangent; unit tangents and horizontal unit left normals.
inline void check_geometry(const track_gen::track_snapshot& s, int e, const track_limits& lim,
                           const track_measure& m, const check_tolerances& tol, problem_list& out) {
  const int n = s.num_samples;
  if (!m.finite) {
    out.add("non-finite sample or length");
    return;
  }
  const double L = m.length;
  if (!(L > 0)) {
    out.add("length ", L, " is not positive");
    return;
  }
  if (m.max_spacing_error > tol.spacing)
    out.add("arc-length spacing of interval ", m.worst_spacing_k, " is ", m.max_spacing_error * 100,
            "% away from L/N (allowed ", tol.spacing * 100, "%)");
  // L is the length of the library's dense centreline; the N-sample polyline cuts corners by at
  // most the chord deficit (plus float rounding of a sum of N chords). The deficit is estimated
  // from the samples' curvature, so it gets a factor 2 of slack: after an elevation stage the
  // samples interpolate the dense polyline (dense_is_spline false), whose vertices on a lobed
  // polar track's tightest turns (0.4 m at 0.11 m dense spacing) cut 1.6 times the estimate (one
  // track of 512 in elevation_test's steep uniform case; 1.5 had sufficed before the lobes).
  const double rounding = 1e-5 * L;
  if (tol.reference_length > 0) {
    // Samples on a polyline: their own polyline is never longer, and L is the polyline's length.
    if (std::fabs(L - tol.reference_length) > 1e-5 * tol.reference_length)
      out.add("L = ", L, " but the user's polyline is ", tol.reference_length, " long");
    if (m.polyline_length > L + rounding)
      out.add("the samples' polyline (", m.polyline_length, ") is longer than L = ", L);
  } else if (m.polyline_length > L + rounding || m.polyline_length < L - m.chord_deficit_bound * 2.0 - rounding) {
    out.add("L = ", L, " but the closed polyline through the samples is ", m.polyline_length,
            " long (allowed: L minus up to ", m.chord_deficit_bound * 2.0, " of chord deficit)");
  }

  for (int k = 0; k < n; ++k) {
    const std::size_t i = s.sample_index(e, k);
    const dvec t = to_d(s.tangent[i]), nl = to_d(s.normal[i]);
    if (std::fabs(normd(t) - 1) > 1e-5 || std::fabs(normd(nl) - 1) > 1e-5 || std::fabs(nl.z) > 1e-6 ||
        std::fabs(nl.x * t.x + nl.y * t.y) > 1e-5 * std::max(1e-3, std::hypot(t.x, t.y))) {
      out.add("sample ", k, ": tangent or normal not unit, or normal not horizontal and perpendicular");
      break;
    }
    if (s.half_widths[i].x != static_cast<float>(lim.half_width) ||
        s.half_widths[i].y != static_cast<float>(lim.half_width)) {
      out.add("sample ", k, ": half widths ", s.half_widths[i].x, " / ", s.half_widths[i].y, " instead of ",
              lim.half_width);
      break;
    }
  }

  // Stored curvature: the Menger curvature around each sample, computed by the library in
  // float. Float rounding of coordinates of size R moves a cross product of sides ~ds by about
  // eps R ds, so kappa by about eps R / ds^2: allow 32 times that, plus 1e-4 relative.
  {
    double radius = 0;
    for (int k = 0; k < n; ++k) radius = std::max(radius, normd(to_d(s.position[s.sample_index(e, k)])));
    const double ds = L / n;
    const double slack = 32 * 6e-8 * std::max(radius, 1.0) / (ds * ds);
    for (int k = 0; k < n; ++k) {
      auto pos = [&](int j) { return to_d(s.position[s.sample_index(e, ((j % n) + n) % n)]); };
      // Signed: positive where the track turns left (the z of (b - a) x (c - b) is positive).
      const dvec a = pos(k - 1), b = pos(k), c = pos(k + 1);
      const double turn_z = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x);
      const double unsigned_mine = menger_curvature(a, b, c);
      const double mine = turn_z < 0 ? -unsigned_mine : unsigned_mine;
      const double stored = s.curvature[s.sample_index(e, k)];
      // A lifted track bends in z where its plan view runs straight: there turn_z is rounding
      // (below the same eps R ds bound) and either sign is the library's to pick.
      const bool sign_is_rounding = std::fabs(turn_z) <= 32 * 6e-8 * std::max(radius, 1.0) * ds;
      const double wanted = sign_is_rounding && stored * mine < 0 ? -mine : mine;
      if (!(std::fabs(stored - wanted) <= slack + 1e-4 * unsigned_mine)) {
        out.add("sample ", k, ": stored curvature ", stored, " but the samples' signed Menger curvature is ", mine);
        break;
      }
    }
  }

  // Arc length of each sample (k L / N) and the road edges (position +- half-width x left normal).
  for (int k = 0; k < n; ++k) {
    const std::size_t i = s.sample_index(e, k);
    const double expected_s = static_cast<double>(k) * L / n;
    if (!(std::fabs(s.arc_length[i] - expected_s) <= 1e-6 * L + 1e-6)) {
      out.add("sample ", k, ": arc_length ", s.arc_length[i], " instead of k L / N = ", expected_s);
      break;
    }
    const dvec p = to_d(s.position[i]), nl = to_d(s.normal[i]);
    const double hl = s.half_widths[i].x, hr = s.half_widths[i].y;
    const dvec l = to_d(s.border_left[i]), r = to_d(s.border_right[i]);
    const double tol = 1e-6 * (1 + normd(p));
    if (!(normd(dvec{l.x - (p.x + hl * nl.x), l.y - (p.y + hl * nl.y), l.z - (p.z + hl * nl.z)}) <= tol &&
          normd(dvec{r.x - (p.x - hr * nl.x), r.y - (p.y - hr * nl.y), r.z - (p.z - hr * nl.z)}) <= tol)) {
      out.add("sample ", k, ": border points are not position +- half-width x left normal");
      break;
    }
  }

  // Gates.
  const int g_count = s.num_gates[static_cast<std::size_t>(e)];
  const double ratio = L / lim.checkpoint_spacing;
  const int expected = static_cast<int>(std::min<double>(lim.max_gates, std::max(1.0, std::floor(ratio))));
  if (g_count != expected) {
    // Only a float rounding of L / spacing across an integer may differ.
    const bool near_integer = std::fabs(ratio - std::round(ratio)) <= 1e-5 * std::max(1.0, ratio);
    if (!(near_integer && std::abs(g_count - expected) == 1 && g_count >= 1 && g_count <= lim.max_gates))
      out.add("num_gates = ", g_count, " but floor(L / spacing) clamped to [1, ", lim.max_gates, "] is ", expected);
  }
  if (g_count < 1 || g_count > lim.max_gates) return;
  const double gate_tol = tol.gate_position * L;
  for (int g = 0; g < g_count; ++g) {
    const std::size_t gi = s.gate_index(e, g);
    const double want_s = g * L / g_count;
    if (std::fabs(s.gate_arc_length[gi] - want_s) > gate_tol) {
      out.add("gate ", g, " arc length ", s.gate_arc_length[gi], " instead of g L / G = ", want_s);
      return;
    }
    // Nearest point of the closed sample polyline to the gate centre: the nearest sample by a
    // full scan, then the segments around it (a miss can only report a failure, not hide one).
    const dvec c = to_d(s.gate_centre[gi]);
    int near = 0;
    double near2 = 1e300;
    for (int k = 0; k < n; ++k) {
      const dvec d = to_d(s.position[s.sample_index(e, k)]) - c;
      if (dotd(d, d) < near2) {
        near2 = dotd(d, d);
        near = k;
      }
    }
    double best = 1e300, best_coord = 0;
    int best_k = 0;
    for (int o = -2; o <= 1; ++o) {
      const int k = ((near + o) % n + n) % n;
      const dvec a = to_d(s.position[s.sample_index(e, k)]);
      const dvec b = to_d(s.position[s.sample_index(e, (k + 1) % n)]);
      const dvec ab = b - a;
      const double den = dotd(ab, ab);
      const double t = den > 0 ? std::min(1.0, std::max(0.0, dotd(c - a, ab) / den)) : 0.0;
      const double d = normd(c - (a + ab * t));
      if (d < best) {
        best = d;
        best_coord = k + t;
        best_k = k;
      }
    }
    if (best > gate_tol) {
      out.add("gate ", g, " centre is ", best, " m off the centreline");
      return;
    }
    // Uniform spacing in arc length: the gate sits at sample coordinate g N / G (samples are
    // L / N apart), within 1% of a sample spacing.
    const double want_coord = static_cast<double>(g) * n / g_count;
    double off = std::fabs(best_coord - want_coord);
    off = std::min(off, n - off);
    if (off > 0.01) {
      out.add("gate ", g, " lies at sample coordinate ", best_coord, " instead of g N / G = ", want_coord);
      return;
    }
    if (g == 0 && normd(c - to_d(s.position[s.sample_index(e, 0)])) > gate_tol) {
      out.add("gate 0 is not at sample 0");
      return;
    }
    // The normal: unit, and within the turning angles at the ends of its segment of the
    // segment's chord (a tangent between two chords' directions is no farther from either).
    const dvec nrm = to_d(s.gate_normal[gi]);
    if (std::fabs(normd(nrm) - 1) > 1e-5) {
      out.add("gate ", g, " normal has norm ", normd(nrm));
      return;
    }
    const int k = best_k;
    auto pos = [&](int j) { return to_d(s.position[s.sample_index(e, ((j % n) + n) % n)]); };
    const dvec chord = pos(k + 1) - pos(k);
    const double turn = std::max(angle_between(pos(k) - pos(k - 1), chord), angle_between(chord, pos(k + 2) - pos(k + 1)));
    if (angle_between(nrm, chord) > turn + 1e-3) {
      out.add("gate ", g, " normal is ", angle_between(nrm, chord), " rad from the local chord (turning angle ", turn, ")");
      return;
    }
    if (s.gate_half_width[gi] != static_cast<float>(lim.half_width)) {
      out.add("gate ", g, " half-width ", s.gate_half_width[gi], " instead of ", lim.half_width);
      return;
    }
  }
}

/// The acceptance contract of a track the library marked valid: L in [length_min, length_max],
/// max Menger curvature <= 1 / turn_radius_min, and every two samples, and every two segments
/// between consecutive samples, farther apart along the track than the window w at least c
/// apart in space. Each threshold is relaxed by
/// `tol.threshold` (relative): float-vs-double rounding only. `m` must come from `measure`
/// with window_factor = 1 + tol.threshold.
inline void check_valid_track(const track_limits& lim, const track_measure& m, const check_tolerances& tol,
                              problem_list& out) {
  const double t = tol.threshold;
  if (m.length < lim.length_min * (1 - t) || m.length > lim.length_max * (1 + t))
    out.add("valid but L = ", m.length, " is outside [", lim.length_min, ", ", lim.length_max, "]");
  if (m.max_curvature > (1 + t) / lim.turn_radius_min)
    out.add("valid but curvature ", m.max_curvature, " at sample ", m.worst_curvature_k, " exceeds 1 / turn_radius_min = ",
            1 / lim.turn_radius_min);
  if (m.min_far_distance < lim.clearance() * (1 - t))
    out.add("valid but samples ", m.far_i, " and ", m.far_j, " are ", m.min_far_distance, " m apart in space (< c = ",
            lim.clearance(), ") while farther apart than w = ", lim.window(), " along the track");
  if (m.min_far_segment_distance < lim.clearance() * (1 - t))
    out.add("valid but segments ", m.far_segment_i, " and ", m.far_segment_j, " (sample k to k + 1) are ",
            m.min_far_segment_distance, " m apart in space (< c = ", lim.clearance(), ") while farther apart than w = ",
            lim.window(), " along the track");
}

/// How close a track is to one of the validation thresholds, as the smallest relative margin
/// (0 = on a threshold, negative = violates it). Used to explain backend disagreements.
struct threshold_margins {
  double length_low, length_high, curvature, clearance, window_edge;
  double smallest() const { return std::min({std::fabs(length_low), std::fabs(length_high), std::fabs(curvature),
                                            std::fabs(clearance), window_edge}); }
};

/// Relative margins of a measured track to each threshold. `window_edge` is the distance of
/// w / (L / N) from an integer, relative: where it is tiny, float rounding may move the
/// library's clearance window (counted in whole samples) by one sample.
inline threshold_margins margins(const track_limits& lim, const track_measure& m) {
  threshold_margins r;
  r.length_low = (m.length - lim.length_min) / lim.length_min;
  r.length_high = (lim.length_max - m.length) / lim.length_max;
  r.curvature = (1 / lim.turn_radius_min - m.max_curvature) * lim.turn_radius_min;
  r.clearance = (std::min(m.min_far_distance, m.min_far_segment_distance) - lim.clearance()) / lim.clearance();
  r.window_edge = std::fabs(m.window_over_ds - std::round(m.window_over_ds)) / std::max(1.0, m.window_over_ds);
  return r;
}

}  // namespace tg_test

#pragma once
/// @file
/// Shape metrics of one track, to tell a varied circuit from a blob (issue 13): compactness,
/// turning number, straight fraction, hairpins, chicanes, minimum thickness, the largest
/// curvature and a histogram of |curvature|. A device function over one env's `track_ref` (one
/// thread per env, in your kernel or on the host): O(N) for everything but the thickness, which
/// is O(N^2) and computed only when asked for (shape_metric_limits::thickness_window >= 0).
/// Deterministic, synchronous, allocates nothing. docs/shapes.md has the definitions, what they
/// mean on the test shapes, and the metrics of the presets.
///
/// What is measured: the closed polygon through the track's N samples (the centreline as the
/// library stores it), and the stored signed curvature of each sample (frames stage: Menger
/// curvature of three consecutive samples in 3D, signed by the turn seen from above).
/// Compactness, areas, perimeters and turning angles are planar (the xy projection, as the seed
/// system measures them); curvature and thickness are 3D as the library stores and validates
/// them (on a flat track the two agree).
///
/// Scale: every threshold except the thickness window is relative to the track's own length L,
/// so that the metrics of a shape do not depend on its size (a 37 m circuit
/// and `long_track`'s 1.9 km ones are measured with the same limits): curvatures are in units
/// of kappa_0 = 2 pi / L, the curvature of a circle of the same length (which is also the mean
/// |curvature| of every convex closed curve: its total turning 2 pi over its length L), and
/// distances along the track in units of L.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/shape_stages.hpp>
#include <track_gen/params.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace track_gen {

/// The thresholds of measure_shape. The defaults are ours (no standard definition of a hairpin
/// or a chicane exists that we know of: motorsport calls a hairpin a turn of about 180 degrees
/// and a chicane a quick pair of opposite turns); each default's reason is next to it.
/// check_shape_metric_limits says what is valid.
struct shape_metric_limits {
  /// A sample is straight when |curvature| < straight_curvature * kappa_0 (kappa_0 = 2 pi / L).
  /// 0.5: a radius more than twice that of the circle of the same length. On a convex track
  /// kappa_0 is the mean |curvature|, so this is then the rule of the seed system's benchmark
  /// scripts (TrackGen: a vertex is straight when its turn rate is below half the track's mean
  /// one), but fixed instead of relative to each track's mean, so that a track with more turning
  /// does not move its own threshold. A circle has no straight sample; a stadium's straights are
  /// straight.
  float straight_curvature = 0.5f;
  /// Hairpin: a maximal run of consecutive samples, all with |curvature| >= hairpin_curvature *
  /// kappa_0 and the same sign, that turns (sum of the samples' exterior angles, xy) by at least
  /// hairpin_angle. 4: a radius at most L / (8 pi), so that a half turn at the threshold radius
  /// is at most L / 8 long, and such a run turns its hairpin_angle within at most
  /// hairpin_angle / (4 kappa_0) = 5 L / 48 of the lap (at 150 degrees): tight and short. A circle
  /// (|curvature| = kappa_0) has none.
  float hairpin_curvature = 4.0f;
  /// Least turning of a hairpin [rad]: 150 degrees (a U-turn of 180, less the part of the turn
  /// where the curvature ramps up and down below the threshold).
  float hairpin_angle = 2.61799388f;
  /// Chicane: two consecutive turns (turn: a maximal run of samples of one sign that are not
  /// straight) that each turn by at least chicane_angle, of opposite signs, with at most
  /// chicane_gap * L of straight samples between them. Consecutive among the turns that reach
  /// chicane_angle (a smaller wiggle between the two does not break the chicane; its samples
  /// count in the gap). Each such adjacent pair counts once, around the loop: left-right-left is
  /// two chicanes. 30 degrees [rad]: a deliberate direction change, not the waviness of a blob.
  float chicane_angle = 0.52359878f;
  /// Most straight arc length between the two turns of a chicane, as a fraction of L. 0.05: 1.9 m
  /// on a 37 m circuit (about 3 road widths), 95 m on long_track's 1.9 km.
  float chicane_gap = 0.05f;
  /// Minimum thickness: the smallest distance between two centreline segments that are farther
  /// apart along the track than this arc length [m], by the validate stage's rule (segments i
  /// and i + o are farther apart when their nearest endpoints are more than
  /// floor(window / (L / N)) samples apart both ways round). Use clearance_window(params) for
  /// the window validate uses. Negative (the default): the thickness is not computed (the
  /// O(N^2) part; min_thickness is NaN).
  float thickness_window = -1.0f;
  /// Bins of the |curvature| histogram: `histogram_bins` bins of equal width over
  /// [0, histogram_max * kappa_0); larger curvatures count in the last bin. 20 bins up to 10
  /// kappa_0 (width 0.5: bin 0 is exactly the straight samples at the default
  /// straight_curvature). The `track` preset's tightest legal turn (0.4 m, on a 37 m track) is
  /// at 14.7 kappa_0, in the last bin.
  int histogram_bins = 20;
  float histogram_max = 10.0f;
};

/// The shape metrics of one track (measure_shape).
struct shape_metrics {
  float length;             ///< L, the track's length field [m] (the unit of the thresholds)
  float perimeter;          ///< perimeter of the xy polygon of the samples [m]
  float area;               ///< signed area of that polygon (shoelace) [m^2]: positive counter-clockwise
  float compactness;        ///< 4 pi |area| / perimeter^2 (isoperimetric quotient): 1 for a circle, smaller for anything else
  float total_turning;      ///< sum of the signed exterior angles of the xy polygon [rad]: 2 pi times turning_number up to rounding
  int turning_number;       ///< total_turning / 2 pi rounded: +1 a simple counter-clockwise loop, -1 clockwise, 0 a figure eight (and 0 when total_turning is not finite)
  float straight_fraction;  ///< share of the samples (of the arc length: they are L / N apart) that are straight
  int hairpins;             ///< number of hairpins (shape_metric_limits::hairpin_curvature)
  int chicanes;             ///< number of chicanes (shape_metric_limits::chicane_angle)
  float max_curvature;      ///< largest |curvature| of the samples [1/m] (the field validate bounds)
  float min_thickness;      ///< smallest distance between far-apart segments [m]; +inf: no pair far enough apart; NaN: not computed
  int thinnest_segment;     ///< segment i (samples i, i + 1) of the first pair at min_thickness; -1 when none
  int thinnest_partner;     ///< the other segment of that pair; -1 when none
};

/// The arc length [m] within which stages::validate does not test clearance, for `p`:
/// pi * max(turn_radius_min, c / 2) with c = 2 * half_width + clearance_margin (the half turn of
/// the tightest legal radius). Pass it as shape_metric_limits::thickness_window to measure the
/// thickness validate bounds (a valid track has min_thickness >= c).
TRACK_GEN_HD inline float clearance_window(const track_params& p) {
  const float c = 2.0f * p.half_width + p.validate.clearance_margin;
  return detail::pi * detail::max_f(p.validate.turn_radius_min, 0.5f * c);
}

/// The default limits with the thickness window of `p`'s validate stage (clearance_window).
inline shape_metric_limits shape_metric_limits_for(const track_params& p) {
  shape_metric_limits l;
  l.thickness_window = clearance_window(p);
  return l;
}

/// Throws std::invalid_argument naming the first field that is not finite or out of range
/// (straight_curvature > 0, hairpin_curvature > 0, hairpin_angle > 0, chicane_angle > 0,
/// chicane_gap >= 0, thickness_window finite (negative: no thickness), histogram_bins >= 1,
/// histogram_max > 0). Host only.
inline void check_shape_metric_limits(const shape_metric_limits& l) {
  auto bad = [](const char* name, double v, const char* range) {
    throw std::invalid_argument(std::string("track_gen: shape_metric_limits.") + name + " = " + std::to_string(v) +
                                ", expected a finite value " + range);
  };
  auto positive = [&](const char* name, float v, const char* unit) {
    if (!(std::isfinite(v) && v > 0.0f)) bad(name, v, unit);
  };
  positive("straight_curvature", l.straight_curvature, "> 0 [2 pi / L]");
  positive("hairpin_curvature", l.hairpin_curvature, "> 0 [2 pi / L]");
  positive("hairpin_angle", l.hairpin_angle, "> 0 [rad]");
  positive("chicane_angle", l.chicane_angle, "> 0 [rad]");
  if (!(std::isfinite(l.chicane_gap) && l.chicane_gap >= 0.0f)) bad("chicane_gap", l.chicane_gap, ">= 0 [L]");
  if (!std::isfinite(l.thickness_window)) bad("thickness_window", l.thickness_window, "[m] (negative: no thickness)");
  if (l.histogram_bins < 1)
    throw std::invalid_argument("track_gen: shape_metric_limits.histogram_bins = " + std::to_string(l.histogram_bins) +
                                ", expected an int >= 1");
  positive("histogram_max", l.histogram_max, "> 0 [2 pi / L]");
}

namespace detail {

/// Signed exterior angle of the xy polygon of `t` at sample k [rad], in [-pi, pi]: the turn
/// from the edge (k - 1, k) to the edge (k, k + 1), positive to the left. 0 when an edge has
/// no length in xy.
TRACK_GEN_HD inline float exterior_angle(const track_ref& t, int k) {
  const int n = t.num_samples();
  const float3 a = t.position(k == 0 ? n - 1 : k - 1), b = t.position(k), c = t.position(k + 1 == n ? 0 : k + 1);
  const float ux = b.x - a.x, uy = b.y - a.y, vx = c.x - b.x, vy = c.y - b.y;
  return std::atan2(ux * vy - uy * vx, ux * vx + uy * vy);
}

/// -1, 0 or +1: the class of a sample of curvature `kappa` against `threshold` (0 below it,
/// else the sign of the turn).
TRACK_GEN_HD inline int turn_class(float kappa, float threshold) {
  return std::fabs(kappa) >= threshold ? (kappa < 0.0f ? -1 : 1) : 0;
}

/// A maximal run of samples of one nonzero class: samples (start + first) .. (start + last)
/// mod N, where `start` is the scan's first sample; `turning` is the sum of their exterior angles.
struct turn_run {
  int sign;
  int first;
  int last;
  float turning;
};

/// Calls `visit(run)` for each maximal run of samples of one nonzero class (turn_class against
/// `threshold`), in track order around the loop, starting at the first sample k whose class
/// differs from sample k - 1's (so no run is cut by the start line). When every sample has the
/// same class the whole loop is one run (visited if its class is nonzero). O(N).
template <class Visit>
TRACK_GEN_HD void for_each_turn_run(const track_ref& t, float threshold, Visit&& visit) {
  const int n = t.num_samples();
  int start = -1;
  int before = turn_class(t.curvature(n - 1), threshold);
  for (int k = 0; k < n && start < 0; ++k) {
    const int c = turn_class(t.curvature(k), threshold);
    if (c != before) start = k;
    before = c;
  }
  if (start < 0) {  // one class all round
    if (before != 0) {
      float turning = 0.0f;
      for (int k = 0; k < n; ++k) turning += exterior_angle(t, k);
      visit(turn_run{before, 0, n - 1, turning});
    }
    return;
  }
  turn_run run{turn_class(t.curvature(start), threshold), 0, 0, 0.0f};
  for (int i = 0; i < n; ++i) {
    const int k = start + i < n ? start + i : start + i - n;
    const int c = turn_class(t.curvature(k), threshold);
    if (c != run.sign) {
      if (run.sign != 0) visit(run);
      run = turn_run{c, i, i, 0.0f};
    }
    run.last = i;
    if (c != 0) run.turning += exterior_angle(t, k);
  }
  if (run.sign != 0) visit(run);  // ends at sample start - 1: the next sample starts a new class
}

}  // namespace detail

/// The shape metrics of `track` (shape_metrics documents each one; shape_metric_limits and the
/// file comment give the definitions). `histogram`: int [limits.histogram_bins] in the caller's
/// memory space (a thread's local array or device memory in a kernel), overwritten with the
/// number of samples whose |curvature| falls in each bin (samples with a NaN curvature in
/// none); null: no histogram. `limits` must pass check_shape_metric_limits (not checked here:
/// device code). O(N) with thickness_window < 0, else O(N^2) (N^2 / 2 segment distances at
/// most). A track whose length is not > 0 gives meaningless values.
TRACK_GEN_HD inline shape_metrics measure_shape(const track_ref& track, const shape_metric_limits& limits,
                                                int* histogram = nullptr) {
  using namespace detail;
  const int n = track.num_samples();
  const float length = track.length();
  const float unit = 2.0f * pi / length;  // kappa_0 [1/m]
  shape_metrics m;
  m.length = length;

  // Pass 1: the polygon (perimeter, shoelace area about sample 0, turning) and the curvatures.
  const float straight = limits.straight_curvature * unit;
  const int bins = limits.histogram_bins;
  const float to_bin = static_cast<float>(bins) / (limits.histogram_max * unit);
  if (histogram != nullptr)
    for (int b = 0; b < bins; ++b) histogram[b] = 0;
  const float3 origin = track.position(0);
  float perimeter = 0.0f, twice_area = 0.0f, turning = 0.0f, worst = 0.0f;
  int straight_samples = 0;
  for (int k = 0; k < n; ++k) {
    const float3 a = track.position(k) - origin, b = track.position(k + 1 == n ? 0 : k + 1) - origin;
    perimeter += std::sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y));
    twice_area += a.x * b.y - b.x * a.y;
    turning += exterior_angle(track, k);
    const float kappa = std::fabs(track.curvature(k));
    worst = max_f(worst, kappa);
    if (kappa < straight) ++straight_samples;
    if (histogram != nullptr && kappa >= 0.0f) {  // NaN in no bin
      const float x = kappa * to_bin;
      histogram[x < static_cast<float>(bins - 1) ? static_cast<int>(x) : bins - 1] += 1;
    }
  }
  m.perimeter = perimeter;
  m.area = 0.5f * twice_area;
  m.compactness = perimeter > 0.0f ? 4.0f * pi * std::fabs(m.area) / (perimeter * perimeter) : 0.0f;
  m.total_turning = turning;
  const float winding = turning / (2.0f * pi);
  m.turning_number = std::fabs(winding) < 1.0e6f ? static_cast<int>(std::floor(winding + 0.5f)) : 0;  // NaN: 0
  m.straight_fraction = static_cast<float>(straight_samples) / static_cast<float>(n);
  m.max_curvature = worst;

  // Hairpins: runs at high curvature that turn far enough.
  int hairpins = 0;
  for_each_turn_run(track, limits.hairpin_curvature * unit, [&](const turn_run& r) {
    if (std::fabs(r.turning) >= limits.hairpin_angle) ++hairpins;
  });
  m.hairpins = hairpins;

  // Chicanes: consecutive turns (runs of non-straight samples) of opposite signs, each turning
  // at least chicane_angle, at most chicane_gap * N samples apart (the samples between them).
  const float max_gap = limits.chicane_gap * static_cast<float>(n);
  int chicanes = 0, turns = 0;
  turn_run first{0, 0, 0, 0.0f}, previous{0, 0, 0, 0.0f};
  for_each_turn_run(track, straight, [&](const turn_run& r) {
    if (!(std::fabs(r.turning) >= limits.chicane_angle)) return;
    if (turns == 0) first = r;
    else if (r.sign != previous.sign && static_cast<float>(r.first - previous.last - 1) <= max_gap) ++chicanes;
    previous = r;
    ++turns;
  });
  if (turns >= 2 && first.sign != previous.sign && static_cast<float>(first.first + n - previous.last - 1) <= max_gap)
    ++chicanes;  // the last turn and the first, across the scan's start
  m.chicanes = chicanes;

  // Thickness: validate's pairs of segments (stages::validate::run), every one of them.
  m.min_thickness = NAN;
  m.thinnest_segment = -1;
  m.thinnest_partner = -1;
  if (limits.thickness_window >= 0.0f) {  // -0 computes it too: "negative" means < 0
    const float ds = track.sample_spacing();
    const float ratio = ds > 0.0f ? std::floor(limits.thickness_window / ds) : static_cast<float>(n);
    const int w = ratio < static_cast<float>(n) ? static_cast<int>(ratio) : n;  // window in samples
    // Segment i joins samples i and i + 1; segments i and i + o are farther apart than the
    // window when o - 1 > w and N - o - 1 > w: o in [w + 2, N - w - 2], each unordered pair once
    // as o in [w + 2, N / 2] (o = N / 2, N even: only i < N / 2).
    const int half = n / 2;
    const bool even = (n & 1) == 0;
    float best = INFINITY;
    for (int i = 0; i < n; ++i) {
      const float3 a0 = track.position(i), a1 = track.position(i + 1 == n ? 0 : i + 1);
      const int last = even && i >= half ? half - 1 : half;
      for (int o = w + 2; o <= last; ++o) {
        const int j = i + o < n ? i + o : i + o - n;
        const float d2 = stages::validate::segment_distance2(a0, a1, track.position(j), track.position(j + 1 == n ? 0 : j + 1));
        if (d2 < best) {
          best = d2;
          m.thinnest_segment = i;
          m.thinnest_partner = j;
        }
      }
    }
    m.min_thickness = std::sqrt(best);
  }
  return m;
}

}  // namespace track_gen

#pragma once
/// @file
/// The stages every track goes through: catmull_rom (control points only), resample, frames,
/// checkpoints and validate.

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>
#include <track_gen/status.hpp>

namespace track_gen::stages {

/// Periodic centripetal Catmull-Rom spline through the control points, sampled densely:
/// `samples_per_segment` samples per segment at uniform local parameter, or fewer when the
/// generate stage set a dense budget (ws.dense_budget: detail::budgeted_samples_per_segment).
/// Each segment's power form is computed once (one thread per segment) and kept for resample.
///
/// `KeepPoints`: the dense samples are stored in ws.dense (stages::catmull_rom), for resample's
/// chords and for later stages that read or move them (elevation_profile, gate courses,
/// dense_repulsive, centreline_relaxation). Without (stages::catmull_rom_chords) only the chord
/// from each sample to the next is kept, in ws.dense_s[k + 1] (ws.dense_chords): each thread
/// evaluates a run of consecutive samples and the one after it, each sample with the operations
/// of the stored form, so the chords are those of the stored samples bit for bit. Its pipelines
/// need no room for the samples in the scratch, so more blocks fit on an SM
/// (pipeline::stores_dense_points; docs/performance-log.md, entry 54).
template <bool KeepPoints>
struct basic_catmull_rom {
  static constexpr detail::stage_role role = detail::stage_role::interpolate;
  static constexpr std::uint32_t stage_id = 3;
  static constexpr bool keeps_points = KeepPoints;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const int m = ws.num_control;
    const int per = budgeted_samples_per_segment(p.spline.samples_per_segment, ws.dense_budget, m);
    const int total = m * per;
    for (int i = ctx.rank(); i < m; i += ctx.size()) ws.spline[i] = catmull_rom_segment(ws.control, m, i);
    ctx.sync();
    const float inv_per = 1.0f / static_cast<float>(per);
    const auto sample = [&](int k) {
      const int seg = k / per;
      return ws.spline[seg].point(static_cast<float>(k - seg * per) * inv_per);
    };
    if constexpr (KeepPoints) {
      for (int k = ctx.rank(); k < total; k += ctx.size()) ws.dense[k] = sample(k);
    } else {
      const int run = (total + ctx.size() - 1) / ctx.size();
      const int k_begin = ctx.rank() * run;
      const int k_end = k_begin + run < total ? k_begin + run : total;
      float3 here = k_begin < k_end ? sample(k_begin) : f3(0.0f, 0.0f, 0.0f);
      for (int k = k_begin; k < k_end; ++k) {
        const float3 next = sample(k + 1 == total ? 0 : k + 1);
        ws.dense_s[k + 1] = length(next - here);
        here = next;
      }
    }
    ws.num_dense = total;
    ws.dense_is_spline = true;
    ws.dense_chords = !KeepPoints;
    ctx.sync();
  }
};

/// The spline with its dense samples stored (basic_catmull_rom).
using catmull_rom = basic_catmull_rom<true>;
/// The spline with the dense samples' chords only (basic_catmull_rom): for pipelines whose later
/// stages are resample, frames, checkpoints and validate (pipeline.hpp checks it).
using catmull_rom_chords = basic_catmull_rom<false>;

/// Cumulative chord length of the closed dense centreline (a block-wide inclusive scan of the
/// stored dense samples' chords, or of those stages::catmull_rom_chords kept), its total L, and N
/// samples at arc lengths k * L / N: a binary search finds the dense interval,
/// then the spline is re-evaluated inside it (the power form catmull_rom kept, at the parameter
/// that covers the sample's share of the interval with the speed taken linear across it), or
/// the polyline interpolated, for user centrelines.
struct resample {
  static constexpr detail::stage_role role = detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 4;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    (void)p;
    const int nd = ws.num_dense;
    if (!ws.dense_chords) {
      for (int k = ctx.rank(); k < nd; k += ctx.size())
        ws.dense_s[k + 1] = length(ws.dense[k + 1 == nd ? 0 : k + 1] - ws.dense[k]);
    }
    if (ctx.rank() == 0) ws.dense_s[0] = 0.0f;
    ctx.sync();
    ctx.inclusive_sum(ws.dense_s + 1, nd);
    const float total = ws.dense_s[nd];
    ws.length = total;
    const int n = ws.num_samples;
    const int per = ws.dense_is_spline ? nd / ws.num_control : 1;
    for (int k = ctx.rank(); k < n; k += ctx.size()) {
      const float s = total * (static_cast<float>(k) / static_cast<float>(n));
      // Largest j in [0, nd) with dense_s[j] <= s.
      int lo = 0, hi = nd - 1;
      while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (ws.dense_s[mid] <= s) lo = mid; else hi = mid - 1;
      }
      const float span = ws.dense_s[lo + 1] - ws.dense_s[lo];
      const float frac = span > 0.0f ? clamp_f((s - ws.dense_s[lo]) / span, 0.0f, 1.0f) : 0.0f;
      if (ws.dense_is_spline) {
        const int seg = lo / per;
        const spline_segment& sp = ws.spline[seg];
        const float inv_per = 1.0f / static_cast<float>(per);
        const float u0 = mul_rn(static_cast<float>(lo - seg * per), inv_per);  // used three times
        // frac is a share of the interval's chord; the parameter that covers that share of its
        // arc, with the speed |dp/du| taken linear across the interval (speeds s0, s1 at its
        // ends): the root in [0, 1] of s0 v + (s1 - s0) v^2 / 2 = frac (s0 + s1) / 2. Where the
        // speed changes fast (tight turns on long segments) a linear map puts samples more
        // than 1 % of L / N off their spacing.
        // Products written with mul_rn / mul_add: a sum of two products, or a product used twice,
        // is fused differently by nvcc in different kernels (math.hpp).
        const float s0 = length(sp.derivative(u0)), s1 = length(sp.derivative(u0 + inv_per));
        const float root = std::sqrt(mul_add(mul_rn(frac, s1), s1, mul_rn(mul_rn(1.0f - frac, s0), s0)));
        const float v = s0 + root > 0.0f ? frac * (s0 + s1) / (s0 + root) : frac;
        ws.position[k] = sp.point(mul_add(v, inv_per, u0));
      } else {
        ws.position[k] = lerp(ws.dense[lo], ws.dense[lo + 1 == nd ? 0 : lo + 1], frac);
      }
    }
    ctx.sync();
  }
};

/// Unit tangent (central difference), horizontal unit left normal and signed curvature (Menger
/// curvature of three consecutive samples: 4 * triangle area / product of its sides;
/// K. Menger, 1930) per sample; a turn of more than 90 degrees between two samples (a cusp,
/// where the Menger curvature falls to 0) counts as unbounded curvature for validation, written to the output; the largest curvature and whether
/// everything is finite become block-uniform scalars.
struct frames {
  static constexpr detail::stage_role role = detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 5;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& /*params*/) {
    using namespace detail;
    const int n = ws.num_samples;
    float worst = 0.0f;
    bool finite = is_finite(ws.length);
    for (int k = ctx.rank(); k < n; k += ctx.size()) {
      const float3 a = ws.position[k == 0 ? n - 1 : k - 1];
      const float3 b = ws.position[k];
      const float3 c = ws.position[k + 1 == n ? 0 : k + 1];
      const sample_frame frame = frame_between(a, c);
      const float sides = length(b - a) * length(c - b) * length(c - a);
      const float3 turn = cross(b - a, c - b);
      const float kappa = sides > 0.0f ? 2.0f * length(turn) / sides : 0.0f;
      // Menger curvature falls to 0 at a reversal (a cusp, c == a): a turn of more than 90
      // degrees between two samples counts as unbounded curvature for validation.
      const bool cusp = dot(b - a, c - b) < 0.0f;
      ws.out.tangent[k] = frame.tangent;
      ws.out.normal[k] = frame.left;
      // Signed: positive when the track turns left (counter-clockwise seen from above).
      ws.out.curvature[k] = turn.z < 0.0f ? -kappa : kappa;
      worst = max_f(worst, cusp ? 3.0e38f : kappa);
      finite = finite && is_finite(b) && is_finite(kappa);
    }
    ws.max_curvature = ctx.reduce_max(worst);
    ws.finite = ctx.all(finite);
  }
};

/// G = floor(L / checkpoint_spacing) gates, clamped to [1, G_max], at arc lengths g * L / G
/// (gate 0 is the start/finish line). Each gate: centre and tangent interpolated between the
/// two samples around its arc length, the half-width there, and the arc length.
struct checkpoints {
  static constexpr detail::stage_role role = detail::stage_role::shape;
  static constexpr std::uint32_t stage_id = 6;

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const float count = is_finite(ws.length) ? std::floor(ws.length / ws.checkpoint_spacing) : 1.0f;
    const int g_total = count < 1.0f ? 1 : (count > static_cast<float>(ws.max_gates) ? ws.max_gates : static_cast<int>(count));
    const int n = ws.num_samples;
    for (int g = ctx.rank(); g < g_total; g += ctx.size()) {
      // Sample coordinate of the gate: g * N / G, in integer arithmetic for the whole part.
      const long long num = static_cast<long long>(g) * n;
      const int k = static_cast<int>(num / g_total);
      const float f = static_cast<float>(num - static_cast<long long>(k) * g_total) / static_cast<float>(g_total);
      const int k1 = k + 1 == n ? 0 : k + 1;
      ws.out.gate_centre[g] = lerp(ws.position[k], ws.position[k1], f);
      ws.out.gate_normal[g] = normalize_or(lerp(ws.out.tangent[k], ws.out.tangent[k1], f), ws.out.tangent[k]);
      ws.out.gate_half_width[g] = p.half_width;
      ws.out.gate_arc_length[g] = ws.length * (static_cast<float>(g) / static_cast<float>(g_total));
    }
    ws.num_gates = g_total;
    ctx.sync();
  }
};

/// Acceptance test: finite; L in [length_min, length_max]; max curvature <= 1 / r with
/// r = max(turn_radius_min, half_width + clearance_margin / 2) (a tighter turn folds the inner edge);
/// consecutive samples L/N apart within 5% (chord vs arc at the tightest legal turn differs by
/// (ds / r)^2 / 24, about 1.4% at 60 m, N = 256, r = 0.4 m; a shorter chord means part of the
/// dense centreline, e.g. a tiny loop between close control points, fell between samples), and
/// each chord at least 99% of the chord of a circular arc of length L/N at the mean curvature
/// of its two ends, ds sin(x) / x with x = kappa ds / 2 (a shorter one means the centreline
/// bends more between the samples than at them: a turn tighter than the samples show);
/// clearance, exact for the polyline through the samples whatever the sampling: every two of its
/// segments that are farther apart along the track than the local window
/// w = pi * max(turn_radius_min, c / 2) (the arc of a half turn of the tightest legal radius;
/// farther apart: their nearest endpoints are more than floor(w / (L/N)) samples apart, the rule
/// the samples themselves followed) are at least c = 2 * half_width + clearance_margin apart in
/// space, as segments (so a polyline that crosses itself fails whichever samples fall near the
/// crossing). Every such pair is covered, split evenly over the block; pairs that the chord bound
/// proves clear are skipped, which takes the test from O(N^2) segment distances to a few per
/// sample on typical tracks. (A crossing of two sections closer along the track than w would
/// close a loop shorter than w; a loop turns by more than pi, so at curvature <= 1 / r it is
/// longer than pi r = w, up to the sampling of the curvature test.) Sets `valid` and the failure
/// bits.
struct validate {
  static constexpr detail::stage_role role = detail::stage_role::validate;
  static constexpr std::uint32_t stage_id = 7;

  /// Squared distance between the segments [p1, q1] and [p2, q2]: the closed form of
  /// C. Ericson, Real-Time Collision Detection (Morgan Kaufmann, 2005), section 5.1.9,
  /// ClosestPtSegmentSegment, degenerate (point) segments included. The closest parameter on the
  /// first segment's line is clamped to the segment, the second's computed from it and clamped,
  /// then the first's recomputed from that: the two points are always on the segments, so the
  /// result is never below the true distance, and on near-parallel segments (where a*e - b*b
  /// loses its digits) it exceeds it only by about |d1| * 1e-7 / sin(angle between them).
  TRACK_GEN_HD static float segment_distance2(float3 p1, float3 q1, float3 p2, float3 q2) {
    using namespace detail;
    const float3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
    const float a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
    float s = 0.0f, t = 0.0f;
    if (a <= 0.0f && e <= 0.0f) {
      // both segments are points
    } else if (a <= 0.0f) {
      t = clamp_f(f / e, 0.0f, 1.0f);
    } else {
      const float c = dot(d1, r);
      if (e <= 0.0f) {
        s = clamp_f(-c / a, 0.0f, 1.0f);
      } else {
        const float b = dot(d1, d2);
        const float denom = a * e - b * b;
        s = denom > 0.0f ? clamp_f((b * f - c * e) / denom, 0.0f, 1.0f) : 0.0f;  // parallel: any s
        t = (b * s + f) / e;
        if (t < 0.0f) {
          t = 0.0f;
          s = clamp_f(-c / a, 0.0f, 1.0f);
        } else if (t > 1.0f) {
          t = 1.0f;
          s = clamp_f((b - c) / a, 0.0f, 1.0f);
        }
      }
    }
    const float3 gap = (p1 + d1 * s) - (p2 + d2 * t);
    return dot(gap, gap);
  }

  /// Local window of the clearance test, in samples, for a track of length L with N samples.
  TRACK_GEN_HD static int window_samples(const track_params& p, float length, int n) {
    const float c = 2.0f * p.half_width + p.validate.clearance_margin;
    const float arc = detail::pi * detail::max_f(p.validate.turn_radius_min, 0.5f * c);
    const float ds = length / static_cast<float>(n);
    // Pairs k samples apart are k * ds apart along the track: those with k * ds > arc are checked.
    return ds > 0.0f ? static_cast<int>(std::floor(arc / ds)) : n;
  }

  /// c = 2 half_width + clearance_margin [m]: how far apart far-apart sections must be.
  TRACK_GEN_HD static float clearance(const track_params& p) {
    return 2.0f * p.half_width + p.validate.clearance_margin;
  }
  /// The tightest turn radius accepted [m]: turn_radius_min, and at least the half-width plus half
  /// the margin, since the inner edge folds over itself on a tighter turn.
  TRACK_GEN_HD static float min_turn_radius(const track_params& p) {
    return detail::max_f(p.validate.turn_radius_min, p.half_width + 0.5f * p.validate.clearance_margin);
  }

  /// L in [length_min, length_max] (false for NaN).
  TRACK_GEN_HD static bool length_in_range(const detail::workspace& ws, const track_params& p) {
    return ws.length >= p.validate.length_min && ws.length <= p.validate.length_max;
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    std::uint32_t fail = 0;
    if (!ws.finite) fail |= status::fail_not_finite;
    if (!length_in_range(ws, p)) fail |= status::fail_length;
    if (!(ws.max_curvature <= 1.0f / min_turn_radius(p))) fail |= status::fail_curvature;
    // Nested blocks, not `fail == 0 && !test()`: nvcc spills more in the fused kernels with the
    // latter (docs/performance-log.md, entry 36). ws.trust_radius is set below on every path
    // that leaves the track valid; the track stores it only then (generate_track.hpp).
    // The spacing test and the polyline's turns share one pass over the samples, and the
    // clearance test measures the separation up to twice the turns' radius: one scan gives both
    // the tests and the track's trust_radius. Each ends with the base tests' one barrier
    // (ctx.all) when the turns and the separation reach the caps, as on most tracks; only the
    // others pay a reduction of the value (docs/performance-log.md, entry 48). Each
    // reduce_max_pair comes right after a ctx.all that every thread reaches, so no warp still
    // reads the buffer of the same parity from an earlier call.
    const float turn_cap = min_turn_radius(p);
    float turn = turn_cap;
    bool tight = true;  // every chord at most tight_chord L / N
    if (fail == 0) {
      const spacing_turns st = spacing_and_turns(ctx, ws);
      if (!ctx.all(st.uniform && st.tight && st.least_turn >= turn_cap)) {
        // Both in one reduce_max_pair: a CUB reduction here cost the hull kernel 7 %. The first
        // value's maximum says which of the chord tests failed: 2 spacing, 1 tightness alone.
        const float2 worst = ctx.reduce_max_pair(st.uniform ? (st.tight ? 0.0f : 1.0f) : 2.0f, -st.least_turn, 0);
        if (worst.x >= 2.0f) fail |= status::fail_spacing;
        tight = worst.x == 0.0f;
        turn = min_f(-worst.y, turn_cap);
      }
    }
    if (fail == 0) {  // the O(N^2) test only for candidates that passed the cheap ones
      turn = trusted_turn(ws, p, turn, tight);
      const float c = clearance(p);
      const float cap = max_f(c, 2.0f * turn);
      const float least2 = least_separation2_share(ctx, ws, p, cap);
      if (ctx.all(least2 >= cap * cap)) {
        ws.trust_radius = turn;
      } else {
        const float block_least2 = -ctx.reduce_max_pair(-least2, 0.0f, 1).x;
        if (block_least2 < c * c) {
          fail |= status::fail_clearance;
        } else {
          ws.trust_radius = min_f(0.5f * std::sqrt(block_least2), turn);
        }
      }
    }
    ws.fail_bits = fail;
    ws.valid = fail == 0;
  }

  /// The part of the trust radius that the turns allow, for a polyline whose discrete turn
  /// radius is at least `turn` [m] (<= the accepted turn radius): the sections within half a
  /// turn of radius `turn` along the track stay outside the ball of that radius tangent to the
  /// point's nearest segment (the tangent-ball argument), and the clearance test's separation
  /// covers the sections from its first gap, w + 2 segments, on. The sections between, up to
  /// a = (w + 2) h - pi turn farther along (h the longest chord), can come back into that ball:
  /// a circle of the least radius, the tightest such return, has its ends 2 turn cos(a / (2 turn))
  /// apart after pi turn + a. So `turn` cos(a / (2 turn)) when a > 0. h is tight_chord_bound L / N
  /// when every chord passed the `tight` test (resampled tracks: no chord exceeds L / N by more
  /// than 2e-4), else the spacing test's 1.05 L / N. (That the circle is the extreme case is assumed,
  /// not proved: tests/progress/trust_radius_test checks the answers it lets through.)
  TRACK_GEN_HD static float trusted_turn(const detail::workspace& ws, const track_params& p, float turn, bool tight) {
    const int n = ws.num_samples;
    const float h = (tight ? tight_chord_bound : 1.05f) * (ws.length / static_cast<float>(n));
    const float excess = static_cast<float>(window_samples(p, ws.length, n) + 2) * h - detail::pi * turn;
    return excess > 0.0f && turn > 0.0f ? turn * std::cos(detail::min_f(0.5f * excess / turn, 0.5f * detail::pi))
                                        : turn;
  }

  /// The chord test that lets trusted_turn bound the chords by tight_chord_bound L / N instead
  /// of the spacing test's 1.05: every chord at most tight_chord L / N (the bound adds room for
  /// the float rounding of the chord and of the products; both use the same float L).
  static constexpr float tight_chord = 1.001f;
  static constexpr float tight_chord_bound = 1.0011f;

  /// A thread's share of spacing_and_turns.
  struct spacing_turns {
    bool uniform;      ///< its chords pass the spacing test
    bool tight;        ///< its chords are at most tight_chord L / N
    float least_turn;  ///< the least discrete turn radius at its samples [m]; 3e38 where all are straight
  };

  /// The spacing test (evenly_spaced's rule) and the tight test of the chords from this thread's
  /// samples k, and the least discrete turn radius at them: min(|a|, |b|) / (2 tan(theta / 2)) for the edges a
  /// (from sample k - 1) and b (to sample k + 1) turning by theta, the inradius of the regular
  /// polygon of that edge and turn. Its least value over the samples bounds the polyline's
  /// turns as 1 / curvature bounds a smooth curve's: the local half of the trust radius
  /// (track_ref::project_local). Computed squared, as a fraction (tan(theta / 2) =
  /// |a x b| / (|a| |b| + a . b)), with one square root a sample. Reads only; no barrier.
  template <class Ctx>
  TRACK_GEN_HD static spacing_turns spacing_and_turns(const Ctx& ctx, const detail::workspace& ws) {
    using namespace detail;
    const int n = ws.num_samples;
    const float ds = ws.length / static_cast<float>(n);
    bool uniform = true, tight = true;
    float least_num = 1.0f, least_den = 0.0f;  // the least rho^2 as a fraction; none yet
    for (int k = ctx.rank(); k < n; k += ctx.size()) {
      const int next = k + 1 == n ? 0 : k + 1;
      const float3 before = ws.position[k == 0 ? n - 1 : k - 1], pk = ws.position[k], pn = ws.position[next];
      const float chord = length(pn - pk);
      uniform = spaced_chord(ws, k, next, ds, pk, chord) && uniform;
      tight = chord <= tight_chord * ds && tight;
      const float3 a = pk - before, b = pn - pk;
      const float a2 = dot(a, a), b2 = dot(b, b);
      const float3 x = cross(a, b);
      const float half_cot = std::sqrt(a2 * b2) + dot(a, b);  // |a| |b| (1 + cos theta)
      const float num = min_f(a2, b2) * half_cot * half_cot, den = 4.0f * dot(x, x);
      if (den > 0.0f && num * least_den < least_num * den) {
        least_num = num;
        least_den = den;
      }
    }
    return {uniform, tight, least_den > 0.0f ? std::sqrt(least_num / least_den) : 3.0e38f};
  }

  /// Whether a finite track of an acceptable length fails the tests of its shape (curvature,
  /// spacing, clearance), as run() would decide; block-uniform (all threads call it).
  template <class Ctx>
  TRACK_GEN_HD static bool fails_on_shape(Ctx& ctx, const detail::workspace& ws, const track_params& p) {
    return !(ws.max_curvature <= 1.0f / min_turn_radius(p)) || !evenly_spaced(ctx, ws) || !clear_of_itself(ctx, ws, p);
  }

  /// The spacing test (block-uniform; all threads call it).
  template <class Ctx>
  TRACK_GEN_HD static bool evenly_spaced(Ctx& ctx, const detail::workspace& ws) {
    const int n = ws.num_samples;
    const float ds = ws.length / static_cast<float>(n);
    bool uniform = true;
    for (int k = ctx.rank(); k < n; k += ctx.size()) {
      const int next = k + 1 == n ? 0 : k + 1;
      uniform = spaced_at(ws, k, next, ds, ws.position[k], ws.position[next]) && uniform;
    }
    return ctx.all(uniform);
  }

  /// The spacing test of the chord from sample k (at `pk`) to sample `next` (at `pn`), for
  /// samples ds = L / N apart along the curve.
  TRACK_GEN_HD static bool spaced_at(const detail::workspace& ws, int k, int next, float ds, float3 pk, float3 pn) {
    using namespace detail;
    return spaced_chord(ws, k, next, ds, pk, length(pn - pk));
  }

  /// spaced_at with the chord |pn - pk| given.
  TRACK_GEN_HD static bool spaced_chord(const detail::workspace& ws, int k, int next, float ds, float3 pk, float chord) {
    using namespace detail;
    // Consecutive samples must be L/N apart within 5%: a loop of the dense centreline
    // shorter than a sample interval (close control points) shows only here.
    // ds sin(x) / x by its series (x <= 1/2 at the turn radii that pass the curvature test:
    // the next term, x^4 / 120, is below 6e-4).
    const float x = 0.25f * (std::fabs(ws.out.curvature[k]) + std::fabs(ws.out.curvature[next])) * ds;
    const float arc_chord = ds * (1.0f - x * x * (1.0f / 6.0f));
    // Float32 positions resolve about |p| 2^-23: far from the origin (a user track not
    // re-centred) that noise, not the centreline, decides the chords; allow 4 of it.
    const float noise = 4.0f * 1.1920929e-7f * max_f(max_f(std::fabs(pk.x), std::fabs(pk.y)), std::fabs(pk.z));
    return chord >= 0.95f * ds && chord + noise >= 0.99f * arc_chord && chord <= 1.05f * ds;
  }

  /// The clearance test (block-uniform; all threads call it). Its chord bound assumes the
  /// spacing test passed.
  template <class Ctx>
  TRACK_GEN_HD static bool clear_of_itself(Ctx& ctx, const detail::workspace& ws, const track_params& p) {
    const float c = clearance(p);
    return ctx.all(least_separation2_share(ctx, ws, p, c) >= c * c);
  }

  /// This thread's share of the clearance scan: the least squared distance below `cap`^2
  /// (`cap` >= c) between two segments farther apart along the track than the window, over the
  /// pairs of its segments i = rank, rank + size, ...; `cap`^2 when no pair is nearer than
  /// `cap`. It stops at its first pair nearer than c and returns that pair's squared distance
  /// (below c^2): the least over the block is below c^2 exactly when the track fails the
  /// clearance test, and otherwise it is the least such distance, squared, capped at `cap`^2.
  /// Its chord bound assumes the spacing test passed.
  template <class Ctx>
  TRACK_GEN_HD static float least_separation2_share(const Ctx& ctx, const detail::workspace& ws,
                                                    const track_params& p, float cap) {
    using namespace detail;
    const int n = ws.num_samples;
    const int w = window_samples(p, ws.length, n);
    const float c = clearance(p);
    const float c2 = c * c;
    // Segment k joins samples k and k + 1 (mod N). Segments i and j = i + o are farther apart
    // along the track than the window when their nearest endpoints are, i + 1 and i + o being
    // o - 1 > w samples apart, both ways round: o in [w + 2, N - w - 2]. Every unordered pair
    // once: segment i with i + o for o in [w + 2, N / 2] (for o = N / 2, N even, only
    // i < N / 2). Each segment gets the same number of partners, so the threads of the block
    // share the work evenly. (When N / 2 >= w + 2, every pair of samples more than w apart is
    // an endpoint pair of such a pair of segments: this rejects every track that the test of
    // sample pairs, before issue 17, rejected.)
    // Pairs that cannot come nearer than the cap are skipped: the spacing test above bounds
    // every chord by h = 1.05 L/N, so every point of segment i + o + m is within m h of segment
    // i + o, and within m h of sample i + o + 1; every point of segment i is within h / 2 of
    // its midpoint. When segment i + o is D away from segment i, or sample i + o + 1 is D' away
    // from that midpoint, the next floor((D - cap) / h), or floor((D' - h / 2 - cap) / h),
    // partners are farther than the cap. The exact segment distance D is computed only when D'
    // cannot prove segment i + o itself clear (D' < cap + 3 h / 2): at cap = c, for none of
    // 4096 accepted tracks of the track preset (host, seed 5), whose pairs evaluated per track
    // fell from 1482 to 1365 (the first partner is one later, the bound half a partner
    // shorter). (0.999 keeps the bound safe from float rounding; the result is the same as
    // computing the distance of every pair.)
    const int half = n / 2;
    const bool even = (n & 1) == 0;
    const float h = 1.05f * (ws.length / static_cast<float>(n));
    const float inv_chord = 0.999f / h;
    const float near = cap + 1.5f * h;
    const float near2 = near * near;
    const float reach = cap + 0.5f * h;
    float least2 = cap * cap;
    for (int i = ctx.rank(); i < n && !(least2 < c2); i += ctx.size()) {
      const float3 a0 = ws.position[i];
      const float3 a1 = ws.position[i + 1 == n ? 0 : i + 1];
      const float3 mid = (a0 + a1) * 0.5f;
      const int last = even && i >= half ? half - 1 : half;
      for (int o = w + 2; o <= last;) {
        const int j = i + o < n ? i + o : i + o - n;
        const float3 b1 = ws.position[j + 1 == n ? 0 : j + 1];
        const float3 d = b1 - mid;
        const float d2 = dot(d, d);
        float skip;
        if (d2 < near2) {
          const float s2 = segment_distance2(a0, a1, ws.position[j], b1);
          if (s2 < least2) {
            least2 = s2;
            if (s2 < c2) break;
          }
          skip = max_f(std::sqrt(s2) - cap, 0.0f) * inv_chord;  // a pair nearer than the cap skips nothing
        } else {
          skip = (std::sqrt(d2) - reach) * inv_chord;
        }
        o += 1 + (skip < static_cast<float>(n) ? static_cast<int>(skip) : n);
      }
    }
    return least2;
  }
};

}  // namespace track_gen::stages

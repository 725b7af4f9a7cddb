#pragma once
/// @file
/// The `repulsive` generator family: stages::repulsive_growth (issue 13, item 1).

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>

#include <cmath>
#include <cstdint>

namespace track_gen::detail::growth {

/// A point or vector of the plane. Every product goes through mul_rn (math.hpp), so that no
/// compiler fuses it into a multiply-add: the flow is chaotic (a fold is a buckling), and the host
/// and CUDA backends must round alike to grow the same curve.
struct vec2 {
  float x, y;
};
TRACK_GEN_HD inline vec2 operator+(vec2 a, vec2 b) { return {a.x + b.x, a.y + b.y}; }
TRACK_GEN_HD inline vec2 operator-(vec2 a, vec2 b) { return {a.x - b.x, a.y - b.y}; }
TRACK_GEN_HD inline vec2 scaled(vec2 a, float s) { return {mul_rn(a.x, s), mul_rn(a.y, s)}; }
TRACK_GEN_HD inline float dot2(vec2 a, vec2 b) { return mul_rn(a.x, b.x) + mul_rn(a.y, b.y); }
/// The z of a x b.
TRACK_GEN_HD inline float cross2(vec2 a, vec2 b) { return mul_rn(a.x, b.y) - mul_rn(a.y, b.x); }
TRACK_GEN_HD inline float norm2(vec2 a) { return std::sqrt(dot2(a, a)); }
/// a + (b - a) t, the product rounded on its own (detail::lerp's may be fused on the device).
TRACK_GEN_HD inline float mix(float a, float b, float t) { return a + mul_rn(b - a, t); }

/// x^e by repeated squaring when 2e is an integer of at most 64 in magnitude (the defaults'
/// exponents: 3, 2, -3, -2.5), so that both backends round alike; std::pow otherwise (then the
/// host and CUDA curves may differ). x > 0.
TRACK_GEN_HD inline float power(float x, float e) {
  const float twice = e + e;
  if (twice == std::floor(twice) && std::fabs(twice) <= 64.0f) {
    int k = static_cast<int>(std::fabs(twice));
    const bool half = (k & 1) != 0;
    k >>= 1;
    float r = 1.0f, b = x;
    while (k > 0) {
      if (k & 1) r = mul_rn(r, b);
      b = mul_rn(b, b);
      k >>= 1;
    }
    if (half) r = mul_rn(r, std::sqrt(x));
    return e < 0.0f ? 1.0f / r : r;
  }
  return std::pow(x, e);
}

/// The powers the flow takes. `Defaults` (alpha 3, beta 6): written out, the same products in the
/// same order as power() takes them, so the same bits, without power()'s loop in the pair pass.
template <bool Defaults>
struct powers {
  float alpha, half_excess, obstacle;  // alpha, (beta - alpha) / 2, the obstacle term's exponent
  /// (1 / (|d|^2 + eps^2))^3 for the defaults (unused otherwise).
  TRACK_GEN_HD float denominator(float inv) const { return Defaults ? mul_rn(inv, mul_rn(inv, inv)) : 0.0f; }
  /// The kernel P = a^alpha inv^(beta / 2) and q = alpha a^(alpha - 1) inv^(beta / 2) for a =
  /// |wedge| + eps, inv = 1 / (|d|^2 + eps^2) (`inv_den`: denominator(inv)). Other exponents as
  /// (a sqrt(inv))^alpha inv^((beta - alpha) / 2): a sqrt(inv) is at most about 1, so neither
  /// factor overflows where inv^(beta / 2) alone would (beta 17 at points 5 mm apart).
  TRACK_GEN_HD void kernel(float a, float inv, float inv_den, float& P, float& q) const {
    if (Defaults) {
      const float a2 = mul_rn(a, a);
      P = mul_rn(mul_rn(a2, a), inv_den);
      q = mul_rn(mul_rn(alpha, a2), inv_den);
    } else {
      P = mul_rn(power(mul_rn(a, std::sqrt(inv)), alpha), power(inv, half_excess));
      q = mul_rn(alpha, P) / a;
    }
  }
  /// (|x - p|^2 + 1e-8)^(-(beta - alpha) / 2 - 1).
  TRACK_GEN_HD float obstacle_term(float q) const {
    return Defaults ? 1.0f / mul_rn(mul_rn(q, q), std::sqrt(q)) : power(q, obstacle);
  }
};

/// 1 / x, correctly rounded on both backends (the device's reciprocal instruction, without the
/// division's slow path).
TRACK_GEN_HD inline float reciprocal(float x) {
#if defined(__CUDA_ARCH__)
  return __frcp_rn(x);
#else
  return 1.0f / x;
#endif
}

/// (cos, sin) of 2 pi k / n, computed in double and rounded to float: both backends give the
/// same floats unless the double results straddle a float rounding boundary (a chance of about
/// 1e-8 per value).
TRACK_GEN_HD inline vec2 unit_at(int k, int n) {
  const double a = 6.283185307179586 * static_cast<double>(k) / static_cast<double>(n);
  return {static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a))};
}

/// The seed system's reference length (its build_setup median Bezier perimeter at scale 1,
/// `_DOMAIN_SCALE_REF` in its warp_generate_repulsive.py) times its default domain fraction 0.35:
/// the flow runs with this domain radius, the scale its weights and epsilons were chosen at.
inline constexpr float flow_domain_radius = 0.35f * 4.9029f;
/// Regularisation of |wedge| and |d|^2 in the tangent-point kernel (the seed system's eps).
inline constexpr float kernel_epsilon = 1e-4f;
/// Points on the domain wall's ring, and the wall's weight (the seed system's _N_WALL, _WALL_WEIGHT).
inline constexpr int wall_points = 96;
/// Points on each obstacle's ring, and their weight (_N_DISC, _DISC_WEIGHT).
inline constexpr int disc_points = 12;
inline constexpr float disc_weight = 0.25f;
/// Obstacle centres lie within this fraction of the domain radius (_C_FRAC).
inline constexpr float obstacle_band = 0.9f;
/// The most obstacles (param_ranges: repulsive_growth.obstacles_max).
inline constexpr int max_obstacles = 32;
/// Elements summed serially per chunk by block_sum (then the chunks in order).
inline constexpr int sum_chunk = 8;

/// Where the flow's arrays live in the family's scratch (floats from ws.dense), for n_max points.
struct layout {
  int x, tangent_or_ainv, btan_or_lg, grad, g;  // vec2 [n_max] each
  int weight, inv_chord, wcoef, edge, sobolev;  // float [n_max] each
  int cumulative;                               // float [n_max + 1]
  int obstacles;  // vec2 [wall_points + disc_points x max_obstacles]: the wall's ring, then each disc's
  int masses;     // float [max_obstacles]: each disc point's mass (0: no disc)
  int partial;                                  // float [3 x (n_max / sum_chunk + 1)]
  int floats;

  TRACK_GEN_HD static layout make(int n_max) {
    layout l;
    int at = 0;
    auto take = [&at](int count) {
      const int here = at;
      at += (count + 3) & ~3;  // 16-byte aligned blocks
      return here;
    };
    l.x = take(2 * n_max);
    l.tangent_or_ainv = take(2 * n_max);
    l.btan_or_lg = take(2 * n_max);
    l.grad = take(2 * n_max);
    l.g = take(2 * n_max);
    l.weight = take(n_max);
    l.inv_chord = take(n_max);
    l.wcoef = take(n_max);
    l.edge = take(n_max);
    l.sobolev = take(n_max);
    l.cumulative = take(n_max + 1);
    l.obstacles = take(2 * (wall_points + disc_points * max_obstacles));
    l.masses = take(max_obstacles);
    l.partial = take(3 * (n_max / sum_chunk + 1));
    l.floats = at;
    return l;
  }
};

/// The sums over i in [0, n) of the K terms term(i, out) (out: float[K]), in one order on both
/// backends: chunks of sum_chunk elements summed serially (a chunk per thread), then the chunks
/// in index order by every thread. Ends with a barrier; every thread gets the totals.
template <int K, class Ctx, class Term>
TRACK_GEN_HD void block_sum(Ctx& ctx, float* partial, int n, Term&& term, float (&total)[K]) {
  const int chunks = (n + sum_chunk - 1) / sum_chunk;
  for (int c = ctx.rank(); c < chunks; c += ctx.size()) {
    float s[K];
    for (int k = 0; k < K; ++k) s[k] = 0.0f;
    const int end = c * sum_chunk + sum_chunk < n ? c * sum_chunk + sum_chunk : n;
    for (int i = c * sum_chunk; i < end; ++i) {
      float t[K];
      term(i, t);
      for (int k = 0; k < K; ++k) s[k] += t[k];
    }
    for (int k = 0; k < K; ++k) partial[k * chunks + c] = s[k];
  }
  ctx.sync();
  for (int k = 0; k < K; ++k) {
    float s = 0.0f;
    for (int c = 0; c < chunks; ++c) s += partial[k * chunks + c];
    total[k] = s;
  }
  ctx.sync();
}

}  // namespace track_gen::detail::growth

namespace track_gen::stages {

/// Grows a closed curve from a small circle inside a disc with disc obstacles, after Yu,
/// Schumacher & Crane, "Repulsive Curves" (ACM TOG 40(2), 2021), made a track generator by
/// Henrich & Kötter ("Generating Race Tracks With Repulsive Curves"), and by the seed system's
/// `repulsive` generator, whose energy, weights, schedule and defaults this follows. Flat (z = 0).
///
/// The flow, in the seed system's units (domain radius R = detail::growth::flow_domain_radius;
/// the curve is scaled to `domain_radius` at the end):
/// - start: a circle of radius R / init_ratio at the coarsest level's points; the final length
///   L_f = grow_mult x its length, grow_mult uniform in [grow_mult_min, grow_mult_max];
/// - obstacles: the domain wall (96 points on the circle of radius R, weight 1 x their spacing)
///   and k uniform in [obstacles_min, obstacles_max] discs (12 points each, weight 0.25 x their
///   spacing), disc j at angle phase + 2 pi j / k, radius r uniform in [obstacle_radius_min,
///   obstacle_radius_max] x R, centre at a distance uniform in [R / init_ratio + r + 0.05 R,
///   0.9 R] (a disc whose band is empty is left out);
/// - energy: the tangent-point energy sum over pairs (i, j) at least 3 points apart of
///   (|d_ij x T_i| + eps)^alpha / (|d_ij|^2 + eps^2)^(beta / 2) w_i w_j (d_ij = x_j - x_i, T_i the
///   unit chord x_{i+1} - x_{i-1}, w_i half the two incident edges), plus each obstacle point's
///   mass x (|x_i - p|^2 + 1e-8)^(-(beta - alpha) / 2) (per point, not weighted by w_i, as the
///   seed system's), plus length_weight x ((P - L_t) / L_0)^2;
///   its gradient is computed exactly (every way a point enters the sum: as either end of a
///   pair, through its neighbours' tangents and through the weights);
/// - an iteration: the target L_t grows by ratchet_rate (up to L_f; on reaching it the disc
///   obstacles stop acting when deactivate_obstacles); the gradient is preconditioned by the
///   circulant inverse of a fractional power of the ring Laplacian (spectrum 1 / (lambda_k^s +
///   1e-3), lambda_k = 2 - 2 cos(2 pi k / n), s = (beta - 1) / (2 alpha): the seed system's
///   Sobolev-type preconditioner, after Yu et al.'s); the component along the preconditioned length gradient is removed
///   and the mean; the points move against it, the largest move tau x the mean edge; then the
///   curve is scaled about its barycentre to length L_t;
/// - every resample_every iterations the points are spaced evenly in arc length; a level ends
///   when L_t has doubled since it began (resampled to twice the points); the flow runs at most
///   1.6 x (iterations of the ratchet to grow_mult_max) + settle_iterations iterations, and on
///   the finest level stops once L_f is reached and the enclosed area changed by less than
///   stall_area_tolerance over a stall window.
///
/// The curve's points become the control points, evenly spaced (`points` of them once the flow
/// reaches the finest level; a schedule too short to reach it hands over a coarser level's); the
/// spline gets the families' dense budget, and stages::polygon_separation leaves them where they are.
///
/// Block work: every O(n^2) pass gives each thread its own points (a thread sums over all
/// partners in one order), and every sum over the curve runs in chunks in one order
/// (growth::block_sum), so that the host backend grows the same curve (when the host compiler
/// does not contract products into FMAs: GCC does where the target has them, e.g. aarch64 or
/// -march=haswell, unless -ffp-contract=off). Scratch: ws.dense, as
/// floats (growth::layout). Random stream: stage 18; draw 0 (count, phase, growth), draws
/// 1 .. k (the discs).
struct repulsive_growth {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 18;
  /// The family this stage draws (a pipeline with it as its generate stage draws only these).
  static constexpr generator_family family = generator_family::repulsive;
  /// Whether stages::polygon_separation runs many iterations on this family's control polygons: the grown
  /// curve is self-avoiding already, so its one-family pipeline keeps stages::polygon_separation.
  static constexpr bool long_relaxation = false;
  /// Threads of the generation kernel per SM that `__launch_bounds__` must fit (pipeline.hpp):
  /// 512, so 128 registers a thread. The flow's arrays (20 KB at 256 points: growth::layout), with
  /// the pipeline's scratch, let no more than 8 blocks of 64 share an SM anyway, and at the
  /// default 72 registers its pair loop spilled.
  static constexpr int generate_threads_per_sm = 512;

  /// Largest ws.num_control this stage writes for parameters p (host; sizes the scratch).
  static int max_control_points(const track_params& p) { return p.repulsive_growth.points; }

  /// Most dense samples (host; sizes the scratch): the spline's under the dense budget, and at
  /// least the flow's arrays (growth::layout) in float3 units.
  static int max_dense_samples(const track_params& p) {
    return detail::family_dense_samples(p.spline.samples_per_segment, max_control_points(p), max_scratch_points(p));
  }
  /// The points the flow's arrays (growth::layout) take in ws.dense, in float3 units (host; sizes
  /// the scratch of a pipeline that stores no dense samples).
  static int max_scratch_points(const track_params& p) {
    return (detail::growth::layout::make(p.repulsive_growth.points).floats + 2) / 3;
  }

  /// Iterations of the ratchet from 1 to `multiple` at rate r: the least k with (1 + r)^k >=
  /// multiple (a product in double, the same on both backends).
  TRACK_GEN_HD static int ratchet_iterations(float rate, double multiple) {
    double grown = 1.0;
    int k = 0;
    const double factor = 1.0 + static_cast<double>(rate);
    while (grown < multiple && k < 1000000) {
      grown *= factor;
      ++k;
    }
    return k;
  }

  /// The iteration budget: 1.6 x the ratchet iterations to grow_mult_max, plus the settling.
  TRACK_GEN_HD static int max_iterations(const repulsive_growth_params& g) {
    const int ratchet = ratchet_iterations(g.ratchet_rate, static_cast<double>(g.grow_mult_max));
    return (16 * ratchet + 9) / 10 + g.settle_iterations;
  }

  /// Points of level `level` of `levels`.
  TRACK_GEN_HD static int level_points(const repulsive_growth_params& g, int level) {
    return g.points >> (g.levels - 1 - level);
  }

  /// The flow's state in a block's scratch: its arrays (growth::layout, in ws.dense) and the
  /// energy's constants. Public so that tests can check the gradient on its own.
  struct flow {
    detail::growth::vec2 *x, *tangent, *btan, *grad, *gp;
    float *weight, *inv_chord, *wcoef, *edge, *sobolev, *cumulative, *masses, *partial;
    detail::growth::vec2* obstacles;
    float alpha, beta, obstacle_power, obstacle_factor, eps, eps2, wall_mass, length_weight, L0;
    int k_discs;

    /// The arrays of a flow of at most `n_max` points in `scratch` (layout(n_max).floats floats).
    TRACK_GEN_HD static flow in(float* scratch, int n_max, const repulsive_growth_params& g) {
      using namespace detail;
      using namespace detail::growth;
      const layout lay = layout::make(n_max);
      flow f;
      f.x = reinterpret_cast<vec2*>(scratch + lay.x);
      f.tangent = reinterpret_cast<vec2*>(scratch + lay.tangent_or_ainv);
      f.btan = reinterpret_cast<vec2*>(scratch + lay.btan_or_lg);
      f.grad = reinterpret_cast<vec2*>(scratch + lay.grad);
      f.gp = reinterpret_cast<vec2*>(scratch + lay.g);
      f.weight = scratch + lay.weight;
      f.inv_chord = scratch + lay.inv_chord;
      f.wcoef = scratch + lay.wcoef;
      f.edge = scratch + lay.edge;
      f.sobolev = scratch + lay.sobolev;
      f.cumulative = scratch + lay.cumulative;
      f.obstacles = reinterpret_cast<vec2*>(scratch + lay.obstacles);
      f.masses = scratch + lay.masses;
      f.partial = scratch + lay.partial;
      f.alpha = g.alpha;
      f.beta = g.beta;
      f.obstacle_power = -0.5f * (g.beta - g.alpha) - 1.0f;  // the gradient's exponent of |x - p|^2
      f.obstacle_factor = -(g.beta - g.alpha);                // 2 x the energy's exponent
      f.eps = kernel_epsilon;
      f.eps2 = mul_rn(kernel_epsilon, kernel_epsilon);
      f.wall_mass = mul_rn(2.0f * pi, flow_domain_radius) / static_cast<float>(wall_points);
      f.length_weight = g.length_weight;
      f.L0 = 0.0f;
      f.k_discs = 0;
      return f;
    }

    /// The energy's gradient at x[0, n) into gp[0, n) (the disc obstacles only when `discs_act`,
    /// the length term toward `target`); returns the perimeter. Uses tangent, btan, grad, weight,
    /// inv_chord, wcoef, edge, partial. Ends with a barrier.
    template <class Ctx>
    TRACK_GEN_HD float gradient(Ctx& ctx, int n, float target, bool discs_act) const {
      const bool defaults = alpha == 3.0f && beta == 6.0f;
      return defaults ? gradient_with<true>(ctx, n, target, discs_act) : gradient_with<false>(ctx, n, target, discs_act);
    }

    /// gradient() with the powers of `Defaults` (growth::powers).
    template <bool Defaults, class Ctx>
    TRACK_GEN_HD float gradient_with(Ctx& ctx, int n, float target, bool discs_act) const {
      using namespace detail;
      using namespace detail::growth;
      const powers<Defaults> pw{alpha, 0.5f * (beta - alpha), obstacle_power};
      // Per point: its edge, tangent (unit chord of its neighbours) and weight.
      for (int i = ctx.rank(); i < n; i += ctx.size()) {
        const vec2 a = x[wrap(i - 1, n)], b = x[i], c = x[wrap(i + 1, n)];
        const float forward = norm2(c - b), backward = norm2(b - a);
        edge[i] = forward;
        weight[i] = mul_rn(0.5f, forward + backward);
        const vec2 chord = c - a;
        inv_chord[i] = 1.0f / max_f(norm2(chord), 1e-8f);
        tangent[i] = scaled(chord, inv_chord[i]);
      }
      ctx.sync();
      float perimeter_sum[1];
      block_sum<1>(ctx, partial, n, [&](int i, float (&t)[1]) { t[0] = edge[i]; }, perimeter_sum);
      const float perimeter = perimeter_sum[0];
      const float len_coef = mul_rn(mul_rn(2.0f, length_weight), perimeter - target) / mul_rn(L0, L0);

      // The pairs: for point v, every partner t at least 3 points away.
      for (int v = ctx.rank(); v < n; v += ctx.size()) {
        const vec2 xv = x[v], tv = tangent[v];
        float C = 0.0f, D = 0.0f;
        vec2 A = {0.0f, 0.0f}, G = {0.0f, 0.0f};
        for (int k = 3; k <= n - 3; ++k) {
          const int t = v + k < n ? v + k : v + k - n;
          const vec2 d = x[t] - xv;
          const vec2 tt = tangent[t];
          const float wt = weight[t];
          const float inv = reciprocal(dot2(d, d) + eps2);
          const float inv_den = pw.denominator(inv);
          const float c1 = cross2(d, tv), c2 = -cross2(d, tt);  // (x_t - x_v) x T_v and (x_v - x_t) x T_t
          float P1, q1, P2, q2;
          pw.kernel(std::fabs(c1) + eps, inv, inv_den, P1, q1);
          pw.kernel(std::fabs(c2) + eps, inv, inv_den, P2, q2);
          if (c1 < 0.0f) q1 = -q1;
          if (c2 < 0.0f) q2 = -q2;
          C += mul_rn(P1, wt);
          D += mul_rn(P2, wt);
          A = A + scaled(vec2{-d.y, d.x}, mul_rn(q1, wt));
          // d P(v,t) / d(x_t - x_v) and d P(t,v) / d(x_v - x_t).
          const vec2 dvt = scaled(vec2{tv.y, -tv.x}, q1) - scaled(d, mul_rn(mul_rn(P1, beta), inv));
          const vec2 dtv = scaled(vec2{tt.y, -tt.x}, q2) + scaled(d, mul_rn(mul_rn(P2, beta), inv));
          G = G + scaled(dtv - dvt, wt);
        }
        const float wv = weight[v];
        wcoef[v] = C + D;
        const vec2 Af = scaled(A, wv);
        btan[v] = scaled(Af - scaled(tv, dot2(tv, Af)), inv_chord[v]);
        grad[v] = scaled(G, wv);
      }
      ctx.sync();

      // The rest of the gradient: the weights' and tangents' neighbours, the obstacles, the length.
      for (int v = ctx.rank(); v < n; v += ctx.size()) {
        const int before = wrap(v - 1, n), after = wrap(v + 1, n);
        const vec2 xv = x[v];
        const vec2 db = scaled(xv - x[before], 1.0f / max_f(edge[before], 1e-8f));
        const vec2 df = scaled(x[after] - xv, 1.0f / max_f(edge[v], 1e-8f));
        vec2 gv = grad[v];
        gv = gv + scaled(db, mul_rn(0.5f, wcoef[v] + wcoef[before])) - scaled(df, mul_rn(0.5f, wcoef[v] + wcoef[after]));
        gv = gv + (btan[before] - btan[after]);
        for (int m = 0; m < wall_points; ++m) {
          const vec2 d = xv - obstacles[m];
          const float q = dot2(d, d) + 1e-8f;
          gv = gv + scaled(d, mul_rn(mul_rn(wall_mass, obstacle_factor), pw.obstacle_term(q)));
        }
        for (int j = 0; discs_act && j < k_discs; ++j) {
          const float mass = masses[j];
          if (mass == 0.0f) continue;
          const vec2* ring = obstacles + wall_points + disc_points * j;
          for (int m = 0; m < disc_points; ++m) {
            const vec2 d = xv - ring[m];
            const float q = dot2(d, d) + 1e-8f;
            gv = gv + scaled(d, mul_rn(mul_rn(mass, obstacle_factor), pw.obstacle_term(q)));
          }
        }
        gp[v] = gv + scaled(db - df, len_coef);  // the full gradient, preconditioned next
      }
      ctx.sync();

      return perimeter;
    }
  };

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    using namespace detail::growth;
    const repulsive_growth_params& g = p.repulsive_growth;
    const philox_stream rng = ws.rng(stage_id);
    flow f = flow::in(reinterpret_cast<float*>(ws.dense), g.points, g);
    vec2* x = f.x;
    vec2* ainv = f.tangent;  // the preconditioned length gradient, once the tangents are used
    vec2* lg = f.btan;       // the length gradient, once the tangent terms are gathered
    vec2* grad = f.grad;
    vec2* gp = f.gp;
    float* edge = f.edge;
    float* sobolev = f.sobolev;
    float* cumulative = f.cumulative;
    vec2* obstacles = f.obstacles;
    float* masses = f.masses;
    float* partial = f.partial;

    const float R = flow_domain_radius;
    const float r_init = R / g.init_ratio;
    const float two_pi = 2.0f * pi;
    const uniform4 u0 = rng.uniform(0u);
    const int span = g.obstacles_max - g.obstacles_min + 1;
    int k_discs = g.obstacles_min + static_cast<int>(u0.v[0] * static_cast<float>(span));
    if (k_discs > g.obstacles_max) k_discs = g.obstacles_max;
    const float grow_mult = mix(g.grow_mult_min, g.grow_mult_max, u0.v[2]);
    const float L0 = mul_rn(two_pi, r_init);
    const float Lf = mul_rn(grow_mult, L0);

    // Obstacles: the wall's ring, then each disc's ring and the mass of its points.
    for (int i = ctx.rank(); i < wall_points; i += ctx.size()) obstacles[i] = scaled(unit_at(i, wall_points), R);
    for (int j = ctx.rank(); j < max_obstacles; j += ctx.size()) {
      masses[j] = 0.0f;  // no disc
      if (j >= k_discs) continue;
      const uniform4 u = rng.uniform(1u + static_cast<std::uint32_t>(j));
      const float r = mul_rn(mix(g.obstacle_radius_min, g.obstacle_radius_max, u.v[0]), R);
      const float lo = r_init + r + mul_rn(0.05f, R);
      const float hi = mul_rn(obstacle_band, R);
      if (!(lo < hi)) continue;
      const float distance = mix(lo, hi, u.v[1]);
      // The disc's angle: the phase (draw 0) plus j / k of a turn, in double like unit_at.
      const double turn = static_cast<double>(u0.v[1]) + static_cast<double>(j) / static_cast<double>(k_discs);
      const double a = 6.283185307179586 * turn;
      const vec2 centre = {mul_rn(static_cast<float>(std::cos(a)), distance), mul_rn(static_cast<float>(std::sin(a)), distance)};
      for (int m = 0; m < disc_points; ++m) obstacles[wall_points + disc_points * j + m] = centre + scaled(unit_at(m, disc_points), r);
      masses[j] = mul_rn(disc_weight, mul_rn(two_pi, r) / static_cast<float>(disc_points));
    }
    f.k_discs = k_discs;
    f.L0 = L0;

    // The schedule: the whole flow within max_iterations.
    const int ratchet = ratchet_iterations(g.ratchet_rate, static_cast<double>(g.grow_mult_max));
    const int iterations = max_iterations(g);
    int level = 0;
    int n = level_points(g, 0);
    for (int i = ctx.rank(); i < n; i += ctx.size()) x[i] = scaled(unit_at(i, n), r_init);
    sobolev_row(ctx, g, n, sobolev, cumulative, edge);

    // Level k starts when the ratchet has doubled the length k times (at the latest when the
    // ratchet ends); a level past the last never starts.
    auto level_start = [&](int k) {
      if (k >= g.levels) return iterations;
      const int start = ratchet_iterations(g.ratchet_rate, static_cast<double>(1 << k));
      return start < ratchet ? start : ratchet;
    };
    int next_level = level_start(1);
    float target = L0;
    float area_before = 0.0f;
    for (int it = 0; it < iterations; ++it) {
      if (it >= next_level) {
        ++level;
        const int m = level_points(g, level);
        resample(ctx, x, n, m, gp, edge, cumulative);
        n = m;
        sobolev_row(ctx, g, n, sobolev, cumulative, edge);
        next_level = level_start(level + 1);
      }
      target = min_f(mul_rn(target, 1.0f + g.ratchet_rate), Lf);
      const bool reached = target >= Lf;
      const bool discs_act = !(reached && g.deactivate_obstacles != 0);

      const float perimeter = f.gradient(ctx, n, target, discs_act);

      // Preconditioning: grad <- h * gradient (circular convolution), and the length gradient.
      for (int i = ctx.rank(); i < n; i += ctx.size()) {
        vec2 acc = {0.0f, 0.0f};
        for (int j = 0; j < n; ++j) acc = acc + scaled(gp[j], sobolev[i >= j ? i - j : i - j + n]);
        grad[i] = acc;
        const int before = wrap(i - 1, n), after = wrap(i + 1, n);
        const vec2 db = scaled(x[i] - x[before], 1.0f / max_f(edge[before], 1e-8f));
        const vec2 df = scaled(x[after] - x[i], 1.0f / max_f(edge[i], 1e-8f));
        lg[i] = db - df;
      }
      ctx.sync();
      for (int i = ctx.rank(); i < n; i += ctx.size()) {
        vec2 acc = {0.0f, 0.0f};
        for (int j = 0; j < n; ++j) acc = acc + scaled(lg[j], sobolev[i >= j ? i - j : i - j + n]);
        ainv[i] = acc;
      }
      ctx.sync();
      float products[2];
      block_sum<2>(ctx, partial, n, [&](int i, float (&t)[2]) {
        t[0] = dot2(grad[i], lg[i]);
        t[1] = dot2(lg[i], ainv[i]);
      }, products);
      const float project = products[0] / max_f(products[1], 1e-12f);
      float mean_sum[2];
      block_sum<2>(ctx, partial, n, [&](int i, float (&t)[2]) {
        const vec2 gi = grad[i] - scaled(ainv[i], project);
        t[0] = gi.x;
        t[1] = gi.y;
      }, mean_sum);
      const vec2 mean = {mean_sum[0] / static_cast<float>(n), mean_sum[1] / static_cast<float>(n)};
      float largest = 0.0f;
      for (int i = ctx.rank(); i < n; i += ctx.size()) {
        const vec2 gi = grad[i] - scaled(ainv[i], project) - mean;
        grad[i] = gi;
        largest = max_f(largest, norm2(gi));
      }
      largest = max_f(ctx.reduce_max(largest), 1e-12f);
      const float step = mul_rn(g.tau, perimeter / static_cast<float>(n)) / largest;
      for (int i = ctx.rank(); i < n; i += ctx.size()) x[i] = x[i] - scaled(grad[i], step);
      ctx.sync();

      // Scale about the barycentre to the target length.
      float shape[3];
      block_sum<3>(ctx, partial, n, [&](int i, float (&t)[3]) {
        t[0] = norm2(x[wrap(i + 1, n)] - x[i]);
        t[1] = x[i].x;
        t[2] = x[i].y;
      }, shape);
      const vec2 centre = {shape[1] / static_cast<float>(n), shape[2] / static_cast<float>(n)};
      const float factor = target / max_f(shape[0], 1e-9f);
      for (int i = ctx.rank(); i < n; i += ctx.size()) x[i] = centre + scaled(x[i] - centre, factor);
      ctx.sync();

      if ((it + 1) % g.resample_every == 0) resample(ctx, x, n, n, gp, edge, cumulative);
      if (level + 1 == g.levels && (it + 1) % g.stall_window == 0) {
        float area2[1];
        block_sum<1>(ctx, partial, n, [&](int i, float (&t)[1]) { t[0] = cross2(x[i], x[wrap(i + 1, n)]); }, area2);
        const float area = mul_rn(0.5f, std::fabs(area2[0]));
        const float change = std::fabs(area - area_before) / max_f(area, 1e-9f);
        area_before = area;
        if (reached && change < g.stall_area_tolerance) break;
      }
    }
    resample(ctx, x, n, n, gp, edge, cumulative);

    // The control points, in metres.
    const float to_metres = g.domain_radius / R;
    for (int i = ctx.rank(); i < n; i += ctx.size()) ws.control[i] = f3(mul_rn(x[i].x, to_metres), mul_rn(x[i].y, to_metres), 0.0f);
    ws.num_control = n;
    ws.dense_budget = family_dense_budget(p.spline.samples_per_segment);
    // The curve keeps itself apart: stages::polygon_separation, whose clearance pushed the strands of a
    // fold apart and its turns too tight, leaves it alone (no segment is beyond this band).
    ws.relax_neighbours = n / 2;
    ctx.sync();
  }

 private:
  /// Row h of the circulant preconditioner for n points: the inverse DFT of 1 / (lambda_k^s +
  /// 1e-3), summed in double over tables of the cosines and of that spectrum (`table`, `filter`:
  /// n floats of scratch each), rounded to float. Ends with a barrier.
  template <class Ctx>
  TRACK_GEN_HD static void sobolev_row(Ctx& ctx, const repulsive_growth_params& g, int n, float* h, float* table,
                                       float* filter) {
    const double s = (static_cast<double>(g.beta) - 1.0) / (2.0 * static_cast<double>(g.alpha));
    for (int k = ctx.rank(); k < n; k += ctx.size()) {
      table[k] = detail::growth::unit_at(k, n).x;
      const double lambda = 2.0 - detail::mul_rn(2.0, static_cast<double>(table[k]));
      filter[k] = static_cast<float>(1.0 / ((lambda > 0.0 ? std::pow(lambda, s) : 0.0) + 1e-3));
    }
    ctx.sync();
    for (int m = ctx.rank(); m < n; m += ctx.size()) {
      double sum = 0.0;
      for (int k = 0; k <= n / 2; ++k) {
        const double weight = (k == 0 || 2 * k == n) ? 1.0 : 2.0;
        sum += detail::mul_rn(weight * static_cast<double>(filter[k]), static_cast<double>(table[(k * m) % n]));
      }
      h[m] = static_cast<float>(sum / static_cast<double>(n));
    }
    ctx.sync();
  }

  /// Resamples the closed curve x[0, n) to m points evenly spaced in arc length, in place (x
  /// holds m); `out` takes m points, `edge` n floats, `cumulative` n + 1. The new points lie
  /// half a spacing past the old ones (from x[0] on, a point would stay where it is at every
  /// resampling, and a kink there with it).
  template <class Ctx>
  TRACK_GEN_HD static void resample(Ctx& ctx, detail::growth::vec2* x, int n, int m, detail::growth::vec2* out,
                                    float* edge, float* cumulative) {
    using namespace detail;
    using namespace detail::growth;
    for (int i = ctx.rank(); i < n; i += ctx.size()) {
      edge[i] = norm2(x[wrap(i + 1, n)] - x[i]);
      cumulative[i + 1] = edge[i];
    }
    if (ctx.rank() == 0) cumulative[0] = 0.0f;
    ctx.sync();
    ctx.inclusive_sum(cumulative + 1, n);
    ctx.sync();
    const float total = cumulative[n];
    for (int j = ctx.rank(); j < m; j += ctx.size()) {
      const float s = mul_rn(total, static_cast<float>(j) + 0.5f) / static_cast<float>(m);
      int lo = 0, hi = n - 1;  // the last i with cumulative[i] <= s
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (cumulative[mid] <= s) lo = mid;
        else hi = mid - 1;
      }
      const float t = (s - cumulative[lo]) / max_f(edge[lo], 1e-12f);
      const vec2 a = x[lo], b = x[wrap(lo + 1, n)];
      out[j] = a + scaled(b - a, clamp_f(t, 0.0f, 1.0f));
    }
    ctx.sync();
    for (int j = ctx.rank(); j < m; j += ctx.size()) x[j] = out[j];
    ctx.sync();
  }
};

}  // namespace track_gen::stages

#pragma once
/// @file
/// The `voronoi` generator family: stages::voronoi_sites (issue 13, item 1).

#include <track_gen/detail/math.hpp>
#include <track_gen/detail/stages/catmull_rom_eval.hpp>
#include <track_gen/detail/workspace.hpp>
#include <track_gen/params.hpp>

#include <cstdint>

namespace track_gen::stages {

/// Control points that follow an irregular site field (flat, z = 0).
///
/// 1. A random site field: one site per square cell of side `site_spacing`, jittered inside its
///    cell by up to `site_jitter` of the cell (a jittered grid). The field covers the plane and is
///    never stored: the site of cell (ix, iy) is a function of the attempt's random stream and
///    (ix, iy), so any thread can evaluate any site.
/// 2. K targets at sorted jittered angles around the origin (as random_polar: angle step 2 pi / K,
///    jitter `angle_jitter` of a step), radii uniform in [radius_min, radius_max].
/// 3. Each target is snapped to its nearest site, the owner of the Voronoi cell it falls in; with
///    sites inside their cells, the nearest site is always in the 5 x 5 cells around the target's
///    cell (a site three cells away is more than 2 cells away, its own site at most sqrt(2)), so
///    the search is exact. The loop then follows the field's irregular spacing.
/// 4. Targets that snapped to a site already taken by an earlier target are dropped (target order:
///    deterministic); the kept sites are sorted by polar angle (a stable insertion sort), so the
///    polygon is star-shaped about the origin and does not cross itself. Fewer than 4 distinct
///    sites (only for a site spacing near the radii): the unsnapped targets are used instead.
/// 5. `chaikin_rounds` rounds of Chaikin corner cutting (G. Chaikin, "An algorithm for high speed
///    curve generation", Computer Graphics and Image Processing 3(4), 1974): each edge (a, b)
///    gives the points 3/4 a + 1/4 b and 1/4 a + 3/4 b, doubling the points and rounding the
///    corners. The shared Catmull-Rom spline then interpolates these control points.
///
/// The construction follows the idea of the seed system's voronoi generator (targets snapped to a
/// site field, then a Chaikin pass); the code is ours. Random stream: stage 12; draw i for target
/// i, draw K for the phase, draws from `site_draw_base` for the sites (cell indices taken modulo
/// 4096 on each axis: a field that repeats every 4096 cells, far beyond any track).
///
/// Block work: the targets are snapped, the duplicates found, the angles computed, the sites
/// sorted (each one's place counted) and the corners cut by the block, a target or a point per
/// thread; thread 0 only runs the drop of crowded sites (each decision depends on the last site
/// kept) and broadcasts its count. Scratch used: ws.control_next (snapped sites, then the sorted
/// ones), ws.dense_s [0, 2K + 1) (site ids, the count, flags and angles), ws.dense (distinct
/// sites, then the kept ones), the other of the two for a second Chaikin round.
struct voronoi_sites {
  static constexpr detail::stage_role role = detail::stage_role::generate;
  static constexpr std::uint32_t stage_id = 12;
  /// The family this stage draws (a pipeline with it as its generate stage draws only these).
  static constexpr generator_family family = generator_family::voronoi;
  /// Whether stages::polygon_separation runs many iterations on this family's control polygons (about 2 after the first at the defaults; 4.7 when the bound was 32):
  /// its one-family pipeline then relaxes with stages::polygon_separation_listed (presets.hpp).
  static constexpr bool long_relaxation = true;
  /// Whether the CUDA backend relaxes with the lists too: no, its relaxations (about 3
  /// iterations) are 10 % faster there testing every segment (docs/performance-log.md, entry 52);
  /// the host backend keeps them.
  static constexpr bool lists_in_wide_blocks = false;
  /// First draw index of the site field (above every target draw: K <= 256).
  static constexpr std::uint32_t site_draw_base = 0x01000000u;

  /// Largest ws.num_control this stage writes for parameters p (host; sizes the scratch):
  /// K x 2^chaikin_rounds.
  static int max_control_points(const track_params& p) {
    return p.voronoi.control_points << p.voronoi.chaikin_rounds;
  }

  /// Most dense samples the spline makes from them under the families' dense budget
  /// (detail::family_dense_budget; host, sizes the scratch); at least the 2K + 1 ids, flags,
  /// angles and counts the stage keeps in ws.dense_s (and the K sites in ws.dense).
  static int max_dense_samples(const track_params& p) {
    return detail::family_dense_samples(p.spline.samples_per_segment, max_control_points(p), max_scratch_points(p));
  }
  /// The points (and floats of ws.dense_s) the stage keeps for itself (host; sizes the scratch of
  /// a pipeline that stores no dense samples): the 2K + 1 floats, more than the K sites.
  static int max_scratch_points(const track_params& p) { return 2 * p.voronoi.control_points + 1; }

  /// The site of cell (ix, iy) and its id (the draw it came from, below 2^24: exact as a float).
  TRACK_GEN_HD static float3 site(const philox_stream& rng, int ix, int iy, const voronoi_params& v,
                                  std::uint32_t& id) {
    id = (static_cast<std::uint32_t>(ix) & 0xfffu) << 12 | (static_cast<std::uint32_t>(iy) & 0xfffu);
    const uniform4 u = rng.uniform(site_draw_base + id);
    const float h = v.site_spacing;
    return detail::f3((static_cast<float>(ix) + 0.5f + v.site_jitter * (u.v[0] - 0.5f)) * h,
                      (static_cast<float>(iy) + 0.5f + v.site_jitter * (u.v[1] - 0.5f)) * h, 0.0f);
  }

  /// Target i before snapping.
  TRACK_GEN_HD static float3 target(const philox_stream& rng, int i, const voronoi_params& v) {
    using namespace detail;
    const int k = v.control_points;
    const float step = 2.0f * pi / static_cast<float>(k);
    const float phase = rng.uniform(static_cast<std::uint32_t>(k)).v[0] * 2.0f * pi;
    const uniform4 u = rng.uniform(static_cast<std::uint32_t>(i));
    const float angle = phase + step * (static_cast<float>(i) + v.angle_jitter * (u.v[0] - 0.5f));
    const float r = lerp(v.radius_min, v.radius_max, u.v[1]);
    return f3(r * std::cos(angle), r * std::sin(angle), 0.0f);
  }

  /// The site nearest to `t` (ties: the first in row-major order of the 5 x 5 cells) and its id.
  TRACK_GEN_HD static float3 nearest_site(const philox_stream& rng, float3 t, const voronoi_params& v,
                                          std::uint32_t& id) {
    const int cx = static_cast<int>(std::floor(t.x / v.site_spacing));
    const int cy = static_cast<int>(std::floor(t.y / v.site_spacing));
    float best = 0.0f;
    float3 best_site = t;
    id = 0;
    bool found = false;
    for (int dy = -2; dy <= 2; ++dy) {
      for (int dx = -2; dx <= 2; ++dx) {
        std::uint32_t sid = 0;
        const float3 s = site(rng, cx + dx, cy + dy, v, sid);
        const float ex = s.x - t.x, ey = s.y - t.y;
        const float d = ex * ex + ey * ey;
        if (!found || d < best) {
          best = d;
          best_site = s;
          id = sid;
          found = true;
        }
      }
    }
    return best_site;
  }

  /// Points 2i and 2i + 1 of one round of Chaikin corner cutting of the closed polygon src[0, n)
  /// into dst[0, 2n): edge i's (3/4 a + 1/4 b, 1/4 a + 3/4 b).
  TRACK_GEN_HD static void chaikin_edge(const float3* src, int n, int i, float3* dst) {
    using namespace detail;
    const float3 a = src[i];
    const float3 b = src[i + 1 < n ? i + 1 : 0];
    dst[2 * i] = a * 0.75f + b * 0.25f;
    dst[2 * i + 1] = a * 0.25f + b * 0.75f;
  }

  template <class Ctx>
  TRACK_GEN_HD static void run(Ctx& ctx, detail::workspace& ws, const track_params& p) {
    using namespace detail;
    const voronoi_params& v = p.voronoi;
    const int k = v.control_points;
    const philox_stream rng = ws.rng(stage_id);
    float* const id = ws.dense_s;              // [K] each target's site id
    float* const value = ws.dense_s + k + 1;   // [K] per target: taken, then its site's angle
    for (int i = ctx.rank(); i < k; i += ctx.size()) {
      std::uint32_t site_id = 0;
      ws.control_next[i] = nearest_site(rng, target(rng, i, v), v, site_id);
      id[i] = static_cast<float>(site_id);
    }
    ctx.sync();
    // Targets whose site an earlier target took are dropped; the others keep their order.
    for (int i = ctx.rank(); i < k; i += ctx.size()) {
      bool taken = false;
      for (int j = 0; j < i && !taken; ++j) taken = id[j] == id[i];
      value[i] = taken ? 1.0f : 0.0f;
    }
    ctx.sync();
    int m = 0;
    for (int i = 0; i < k; ++i) m += value[i] == 0.0f ? 1 : 0;
    for (int i = ctx.rank(); i < k; i += ctx.size()) {
      if (value[i] != 0.0f) continue;
      int place = 0;
      for (int j = 0; j < i; ++j) place += value[j] == 0.0f ? 1 : 0;
      ws.dense[place] = ws.control_next[i];
    }
    ctx.sync();
    if (m < 4) {  // block-uniform
      m = k;
      for (int i = ctx.rank(); i < k; i += ctx.size()) ws.dense[i] = target(rng, i, v);
      ctx.sync();
    }
    // The stable sort by polar angle: each site's place is the number of sites of smaller angle,
    // and of equal angle and lower index. The sorted sites go to ws.control_next, their angles to
    // ws.dense_s [0, m).
    for (int i = ctx.rank(); i < m; i += ctx.size()) value[i] = std::atan2(ws.dense[i].y, ws.dense[i].x);
    ctx.sync();
    for (int i = ctx.rank(); i < m; i += ctx.size()) {
      const int place = stable_rank(value, m, i);
      ws.control_next[place] = ws.dense[i];
      ws.dense_s[place] = value[i];
    }
    ctx.sync();
    // Drop sites that crowd the last kept one in angle (a radial spike of the polygon): serial,
    // each decision depends on the last kept site. Fewer than 4 kept: every site stays.
    const float3* sites = ws.control_next;
    if (ctx.rank() == 0) {
      const float min_gap = v.min_angle_gap * 2.0f * pi / static_cast<float>(k);
      int kept = 1;
      float last = ws.dense_s[0];
      const float first = last;
      ws.dense[0] = sites[0];
      for (int i = 1; i < m; ++i) {
        const float a = ws.dense_s[i];
        if (a - last < min_gap || first + 2.0f * pi - a < min_gap) continue;
        ws.dense[kept++] = sites[i];
        last = a;
      }
      ws.dense_s[k] = static_cast<float>(kept);
    }
    ctx.sync();
    const int kept = static_cast<int>(ws.dense_s[k]);
    if (kept >= 4) {
      m = kept;
      sites = ws.dense;
    }
    // Chaikin rounds into ws.control (the first of two into the other buffer).
    if (v.chaikin_rounds == 0) {
      for (int i = ctx.rank(); i < m; i += ctx.size()) ws.control[i] = sites[i];
    } else if (v.chaikin_rounds == 1) {
      for (int i = ctx.rank(); i < m; i += ctx.size()) chaikin_edge(sites, m, i, ws.control);
    } else {
      float3* const between = sites == ws.dense ? ws.control_next : ws.dense;
      for (int i = ctx.rank(); i < m; i += ctx.size()) chaikin_edge(sites, m, i, between);
      ctx.sync();
      for (int i = ctx.rank(); i < 2 * m; i += ctx.size()) chaikin_edge(between, 2 * m, i, ws.control);
    }
    ws.num_control = m << v.chaikin_rounds;
    // After r rounds a corner and its two edges span 2^r points: neighbours, not other sections.
    ws.relax_neighbours = (1 << v.chaikin_rounds) > 2 ? 1 << v.chaikin_rounds : 2;
    ws.dense_budget = detail::family_dense_budget(p.spline.samples_per_segment);
    ctx.sync();
  }
};

}  // namespace track_gen::stages

#pragma once
/// @file
/// Collision, signed-distance-field backend: a per-env grid of the signed distance d to the
/// drivable band (the d of collision.hpp: positive inside the road, the distance along the
/// centreline's normal to the nearer border; negative outside, minus the penetration), sampled
/// bilinearly. `sdf_field` owns the grids of E envs; `sdf_ref` is its trivially copyable view,
/// whose `sample` and `collide_box` run in your kernels (one thread per box) or on the host.
///
/// The grid of env e: R x R texels (R = resolution, in [8, 512], param_ranges.hpp), square cells
/// of side `cell` covering the bounding box (xy) of the env's two border polylines plus two cells
/// of margin on every side (beyond it `sample` extrapolates): cell = max(width, height) / (R - 4),
/// the grid centred on the box.
/// Texel (i, j) (column i along +x, row j along +y) holds d at its centre
/// (x0 + (i + 0.5) cell, y0 + (j + 0.5) cell), stored at e R^2 + j R + i. A centre's d is what
/// collision.hpp's exact backend computes for a point at the road's height there: its foot is the
/// nearest point of the centreline polyline in the xy plane (the planar nearest point: on a flat
/// track the 3D one of track_ref::project), n its offset along the interpolated left normal, and
/// d = min(half_width_left - n, n + half_width_right) at the foot.
///
/// Accuracy: d is 1-Lipschitz across the band (more where the half-width varies along the track,
/// by the factor sqrt(1 + (d half_width / ds)^2), collision.hpp; it can jump where the foot jumps
/// between two parts of the track and their half-widths differ), so inside the texel centres'
/// square the bilinear sample differs from the exact d by at most one cell diagonal (sqrt 2
/// cell) and is exact at texel centres; a
/// box's clearance (the least of its corners' samples) is within a cell diagonal of the exact
/// backend's, and the out-of-bounds flags differ only for boxes whose exact clearance is within
/// that band of zero (tests/collision/sdf_test: >= 99.5 % agreement on random boxes over the
/// grid). Choose the cell against the road's half-width: a 300 m track at R = 128 has 2.4 m cells.
///
/// Memory: bytes = E (R^2 * 4 + 16), plus up to 255 bytes of alignment (required_bytes): at
/// E = 8192 and R = 128, 537 MB (the seed system's field takes ~670 MB there); at R = 64,
/// 134 MB; at E = 65,536 and R = 128, 4.3 GB.
///
/// Baking (sdf_field::bake): one CUDA block per selected env (host: a loop over them, the same
/// code) builds a tree of bounding circles over the env's centreline segments in shared memory,
/// then each thread walks a column of texels, each texel's nearest-segment search warm-started
/// at the previous texel's foot (a downhill walk) and made exact by descending the tree, pruning
/// every subtree whose circle lies farther than the best distance found (a branch-and-bound
/// nearest-neighbour search, as in the bounding-volume hierarchies of C. Ericson, "Real-Time
/// Collision Detection", Morgan Kaufmann 2005, ch. 6). Asynchronous on the stream, one launch,
/// no allocation, no synchronisation: recordable into a capture.

#include <track_gen/collision.hpp>
#include <track_gen/detail/config.hpp>
#include <track_gen/detail/host/block_context.hpp>
#include <track_gen/detail/host_checks.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/detail/ops.hpp>
#include <track_gen/detail/param_ranges.hpp>
#include <track_gen/env_mask.hpp>
#include <track_gen/policy.hpp>
#include <track_gen/track_batch.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace track_gen {

/// Where env e's grid lies: texel (i, j)'s centre is (x0 + (i + 0.5) cell, y0 + (j + 0.5) cell)
/// [m], track frame. All zero for an env never baked (every sample then reads 0).
struct sdf_header {
  float x0, y0;    ///< the grid's lower-left corner [m]
  float cell;      ///< side of a square cell [m]
  float inv_cell;  ///< 1 / cell [1/m]
};

/// Trivially copyable view of an sdf_field: pass it by value to kernels. Valid while the field
/// lives. Pointers in the field's memory space (device memory for backend::cuda).
class sdf_ref {
 public:
  sdf_ref() = default;
  sdf_ref(float* texels, sdf_header* headers, int num_envs, int resolution)
      : texels_(texels), headers_(headers), num_envs_(num_envs), resolution_(resolution) {}

  TRACK_GEN_HD int num_envs() const { return num_envs_; }
  /// R: texels per side.
  TRACK_GEN_HD int resolution() const { return resolution_; }
  TRACK_GEN_HD const sdf_header& header(int env) const { return headers_[env]; }
  TRACK_GEN_HD sdf_header& header(int env) { return headers_[env]; }
  /// Env e's R^2 texels, row-major (row j along +y, column i along +x) [m].
  TRACK_GEN_HD float* texels(int env) const {
    return texels_ + static_cast<std::size_t>(env) * static_cast<std::size_t>(resolution_) * resolution_;
  }
  /// The texel of column i, row j of env e [m].
  TRACK_GEN_HD float texel(int env, int i, int j) const { return texels(env)[j * resolution_ + i]; }
  /// The centre of texel (i, j) of env e [m], track frame (z = 0).
  TRACK_GEN_HD float3 texel_centre(int env, int i, int j) const {
    const sdf_header h = headers_[env];
    return detail::f3(h.x0 + (static_cast<float>(i) + 0.5f) * h.cell, h.y0 + (static_cast<float>(j) + 0.5f) * h.cell, 0.0f);
  }

  /// d at (x, y) [m] of env e: the bilinear interpolation of the four texels around it. Outside
  /// the square of the texel centres (beyond the grid's 2-cell margin around the borders: every
  /// point there is off the road), the linear extrapolation of the nearest point c of that
  /// square along the interpolant's gradient there, capped at d(c) (< 0), so such points always
  /// read off the road; its error grows with the distance from the square. `gradient` (optional)
  /// receives the interpolant's gradient at (x, y), or at c outside (unit-less, pointing into the
  /// road: d grows along it). NaN for a non-finite (x, y). O(1), four texel loads.
  TRACK_GEN_HD float sample(int env, float x, float y, float2* gradient = nullptr) const {
    using namespace detail;
    if (!(is_finite(x) && is_finite(y))) {
      if (gradient != nullptr) *gradient = f2(NAN, NAN);
      return NAN;
    }
    const sdf_header h = headers_[env];
    const float top = static_cast<float>(resolution_ - 1);
    const float u = (x - h.x0) * h.inv_cell - 0.5f, v = (y - h.y0) * h.inv_cell - 0.5f;
    const float uc = clamp_f(u, 0.0f, top), vc = clamp_f(v, 0.0f, top);
    const int i = min_i(static_cast<int>(uc), resolution_ - 2), j = min_i(static_cast<int>(vc), resolution_ - 2);
    const float fx = uc - static_cast<float>(i), fy = vc - static_cast<float>(j);
    const float* row = texels(env) + j * resolution_ + i;
    const float d00 = row[0], d10 = row[1], d01 = row[resolution_], d11 = row[resolution_ + 1];
    const float bottom = lerp(d00, d10, fx), upper = lerp(d01, d11, fx);
    const float d = lerp(bottom, upper, fy);
    // The gradient per texel step: d / du and d / dv.
    const float gu = (1.0f - fy) * (d10 - d00) + fy * (d11 - d01), gv = upper - bottom;
    if (gradient != nullptr) *gradient = f2(gu * h.inv_cell, gv * h.inv_cell);
    if (u == uc && v == vc) return d;
    return min_f(d + gu * (u - uc) + gv * (v - vc), d);
  }

  /// The contact of box `b` with the road band of env `env`, from the field: as collide_box of
  /// collision.hpp (same box_contact, same corner order, `out_of_bounds` when the least corner
  /// sample is negative) with these differences: `clearance` is the least of the four corners'
  /// samples (within a cell diagonal of the exact one, file comment); `normal` the unit gradient
  /// of the field at the critical corner (into the road; the exact backend's within the angle
  /// the bilinear interpolant makes, larger near the centreline and the medial axis);
  /// `nearest` = corner - normal * clearance (the border point that gradient step reaches);
  /// `border` is always border_side::left (the field does not record which border is nearer);
  /// `hint` 0; never `lost`. An invalid box (is_valid_box) gives invalid_box_contact(0). O(1).
  TRACK_GEN_HD box_contact collide_box(int env, const box& b) const {
    using namespace detail;
    if (!is_valid_box(b)) return invalid_box_contact(0);
    const box_footprint f = footprint(b);
    float best = INFINITY;
    int best_corner = 0;
    for (int i = 0; i < 4; ++i) {
      const float d = sample(env, f.corner[i].x, f.corner[i].y);
      if (d < best) {
        best = d;
        best_corner = i;
      }
    }
    float2 g;
    sample(env, f.corner[best_corner].x, f.corner[best_corner].y, &g);
    box_contact c;
    c.flags = best < 0.0f ? contact_flags::out_of_bounds : 0u;
    c.clearance = best;
    c.normal = normalize_or(f3(g.x, g.y, 0.0f), f.left);
    c.nearest = f.corner[best_corner] - c.normal * best;
    c.border = border_side::left;
    c.corner = best_corner;
    c.hint = 0;
    return c;
  }

 private:
  TRACK_GEN_HD static int min_i(int a, int b) { return a < b ? a : b; }

  float* texels_ = nullptr;
  sdf_header* headers_ = nullptr;
  int num_envs_ = 0;
  int resolution_ = 0;
};

namespace detail {

/// Segments per leaf of the bake's tree, and the tree's node capacity: 2 P, P the power of two
/// >= the leaves of the longest track (4096 samples / 4 = 1024 leaves): 2048 circles, 24 KiB of
/// shared memory.
inline constexpr int sdf_leaf_segments = 4;
inline constexpr int sdf_max_nodes = 2048;
/// Threads per block of the bake kernel (one column of texels each, then the next).
inline constexpr int sdf_bake_threads = 128;

/// A bounding circle (xy) of a run of centreline samples; r < 0: empty.
struct sdf_node {
  float x, y, r;
};

/// The per-env working set of a bake: the tree (heap order: node 1 the root, node n's children
/// 2n and 2n + 1, the leaves from P on) and the grid's header.
struct sdf_bake_shared {
  sdf_node node[sdf_max_nodes];
  sdf_header header;
  int leaves_from;  ///< P
};

/// The smallest circle enclosing circles a and b (either may be empty), grown by a relative 1e-6
/// so that float rounding never makes it miss a point it should hold.
TRACK_GEN_HD inline sdf_node sdf_merge(const sdf_node& a, const sdf_node& b) {
  if (a.r < 0.0f) return b;
  if (b.r < 0.0f) return a;
  const float dx = b.x - a.x, dy = b.y - a.y, d = std::sqrt(dx * dx + dy * dy);
  if (d + b.r <= a.r) return a;
  if (d + a.r <= b.r) return b;
  const float r = 0.5f * (d + a.r + b.r);
  const float w = (r - a.r) / d;
  return sdf_node{a.x + dx * w, a.y + dy * w, r * (1.0f + 1e-6f) + 1e-6f};
}

TRACK_GEN_HD inline int sdf_min_i(int a, int b) { return a < b ? a : b; }

/// The best segment of a planar nearest-point search.
struct sdf_best {
  int segment;
  float t, d2;
};

/// Squared planar distance from (px, py) to segment k of `track`, into `best` when strictly nearer.
TRACK_GEN_HD inline void sdf_scan(const track_ref& track, float px, float py, int k, sdf_best& best) {
  const int n = track.num_samples();
  const float3 a0 = track.position(k), b0 = track.position(k + 1 == n ? 0 : k + 1);
  const float3 p = f3(px, py, 0.0f), a = f3(a0.x, a0.y, 0.0f), b = f3(b0.x, b0.y, 0.0f);
  const float t = closest_parameter(p, a, b);
  const float3 q = p - lerp(a, b, t);
  const float d2 = dot(q, q);
  if (d2 < best.d2) best = sdf_best{k, t, d2};
}

/// d at the planar point (px, py) of `track` (file comment): the exact nearest segment by
/// branch and bound over the tree in `sh`, warm-started at segment `warm` (>= 0: a downhill walk
/// from there sets the first bound). Returns d; `warm` becomes the foot's segment.
TRACK_GEN_HD inline float sdf_distance(const track_ref& track, const sdf_bake_shared& sh, float px, float py, int& warm) {
  const int n = track.num_samples();
  sdf_best best{0, 0.0f, INFINITY};
  if (warm >= 0) {
    // Downhill from the previous texel's foot: a near bound, so that the tree prunes at once.
    sdf_scan(track, px, py, warm, best);
    for (int dir = -1; dir <= 1; dir += 2) {
      int k = warm;
      for (int step = 0; step < 16; ++step) {
        k += dir;  // wrapped without an integer division
        k = k < 0 ? k + n : (k >= n ? k - n : k);
        const float before = best.d2;
        sdf_scan(track, px, py, k, best);
        if (!(best.d2 < before)) break;
      }
    }
  }
  const int leaves_from = sh.leaves_from;
  int stack[16];  // depth-first: at most one pending sibling per level of the <= 11 levels
  int top = 0;
  stack[top++] = 1;
  float bound = std::sqrt(best.d2) * (1.0f + 1e-5f) + 1e-6f;
  while (top > 0) {
    const int id = stack[--top];
    const sdf_node c = sh.node[id];
    if (c.r < 0.0f) continue;
    const float dx = px - c.x, dy = py - c.y, reach = bound + c.r;
    if (dx * dx + dy * dy > reach * reach) continue;  // no point of this subtree is nearer
    if (id >= leaves_from) {
      const int first = (id - leaves_from) * sdf_leaf_segments;
      const int last = sdf_min_i(first + sdf_leaf_segments, n);
      for (int k = first; k < last; ++k) sdf_scan(track, px, py, k, best);
      bound = std::sqrt(best.d2) * (1.0f + 1e-5f) + 1e-6f;  // a little wide: float rounding never prunes the nearest
      continue;
    }
    // The nearer child on top of the stack: its leaves tighten the bound before the other's test.
    const sdf_node l = sh.node[2 * id], r = sh.node[2 * id + 1];
    const bool left_first = (px - l.x) * (px - l.x) + (py - l.y) * (py - l.y) <= (px - r.x) * (px - r.x) + (py - r.y) * (py - r.y);
    stack[top++] = left_first ? 2 * id + 1 : 2 * id;
    stack[top++] = left_first ? 2 * id : 2 * id + 1;
  }
  warm = best.segment;
  const int k = best.segment, k1 = k + 1 == n ? 0 : k + 1;
  const float3 foot = lerp(track.position(k), track.position(k1), best.t);
  const float3 left = normalize_or(lerp(track.normal(k), track.normal(k1), best.t), track.normal(k));
  // The texel's point at the road's height (z of the foot): the lateral offset is then planar.
  const float lateral = (px - foot.x) * left.x + (py - foot.y) * left.y;
  const float to_left = lerp(track.half_width_left(k), track.half_width_left(k1), best.t) - lateral;
  const float to_right = lateral + lerp(track.half_width_right(k), track.half_width_right(k1), best.t);
  return min_f(to_left, to_right);
}

TRACK_GEN_HD inline int sdf_next_pow2(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

/// Bakes env `env` of `field` from `track` on a block context (host: one thread; CUDA: the
/// block): bounding box and header, the tree, then the texels column by column. Every thread of
/// the block calls it (it synchronises the block).
template <class Ctx>
TRACK_GEN_HD void bake_sdf_env(const Ctx& ctx, sdf_bake_shared& sh, const track_ref& track, sdf_ref field, int env) {
  const int n = track.num_samples(), rank = ctx.rank(), size = ctx.size();
  // Bounding box of both borders (the band lies between them).
  float lo_x = INFINITY, lo_y = INFINITY, hi_x = -INFINITY, hi_y = -INFINITY;
  for (int k = rank; k < n; k += size) {
    const float3 l = track.border_left(k), r = track.border_right(k);
    lo_x = min_f(lo_x, min_f(l.x, r.x));
    lo_y = min_f(lo_y, min_f(l.y, r.y));
    hi_x = max_f(hi_x, max_f(l.x, r.x));
    hi_y = max_f(hi_y, max_f(l.y, r.y));
  }
  lo_x = ctx.reduce_min(lo_x);
  lo_y = ctx.reduce_min(lo_y);
  hi_x = ctx.reduce_max(hi_x);
  hi_y = ctx.reduce_max(hi_y);
  const int res = field.resolution();
  const int leaves = (n + sdf_leaf_segments - 1) / sdf_leaf_segments, leaves_from = sdf_next_pow2(leaves);
  if (rank == 0) {
    float side = max_f(hi_x - lo_x, hi_y - lo_y);
    if (!(side > 0.0f && side < 3.0e38f)) side = 1.0f;  // a degenerate or missing track: any grid
    const float cell = side / static_cast<float>(res - 4);
    const float cx = 0.5f * (lo_x + hi_x), cy = 0.5f * (lo_y + hi_y);
    const bool finite = is_finite(cx) && is_finite(cy);
    sh.header = sdf_header{(finite ? cx : 0.0f) - 0.5f * cell * res, (finite ? cy : 0.0f) - 0.5f * cell * res, cell, 1.0f / cell};
    sh.leaves_from = leaves_from;
    field.header(env) = sh.header;
  }
  // Leaves: the circle around a leaf's points (its segments' ends), then the levels upwards.
  for (int leaf = rank; leaf < leaves_from; leaf += size) {
    sdf_node c{0.0f, 0.0f, -1.0f};
    const int first = leaf * sdf_leaf_segments;
    if (first < n) {
      const int last = sdf_min_i(first + sdf_leaf_segments, n);  // points first .. last (wrapped)
      float ax = INFINITY, ay = INFINITY, bx = -INFINITY, by = -INFINITY;
      for (int k = first; k <= last; ++k) {
        const float3 p = track.position(k == n ? 0 : k);
        ax = min_f(ax, p.x), ay = min_f(ay, p.y), bx = max_f(bx, p.x), by = max_f(by, p.y);
      }
      c.x = 0.5f * (ax + bx);
      c.y = 0.5f * (ay + by);
      float r2 = 0.0f;
      for (int k = first; k <= last; ++k) {
        const float3 p = track.position(k == n ? 0 : k);
        r2 = max_f(r2, (p.x - c.x) * (p.x - c.x) + (p.y - c.y) * (p.y - c.y));
      }
      c.r = std::sqrt(r2) * (1.0f + 1e-6f) + 1e-6f;
    }
    sh.node[leaves_from + leaf] = c;
  }
  ctx.sync();
  for (int level = leaves_from / 2; level >= 1; level /= 2) {
    for (int id = level + rank; id < 2 * level; id += size) sh.node[id] = sdf_merge(sh.node[2 * id], sh.node[2 * id + 1]);
    ctx.sync();
  }
  const sdf_header h = sh.header;
  float* out = field.texels(env);
  for (int i = rank; i < res; i += size) {
    int warm = -1;
    const float px = h.x0 + (static_cast<float>(i) + 0.5f) * h.cell;
    for (int j = 0; j < res; ++j) {
      const float py = h.y0 + (static_cast<float>(j) + 0.5f) * h.cell;
      out[j * res + i] = sdf_distance(track, sh, px, py, warm);
    }
  }
}

/// Which envs a bake covers: the ids in `ids[0, count)` (ids outside [0, E) skipped), or, with
/// `ids` null, every env e < E whose `mask` entry is set (the null mask: all of them).
struct sdf_selection {
  const int* ids = nullptr;
  int count = 0;
  env_mask mask;
  TRACK_GEN_HD int blocks(int num_envs) const { return ids != nullptr ? count : num_envs; }
  /// The env of block b, or -1 when it bakes nothing.
  TRACK_GEN_HD int env(int b, int num_envs) const {
    if (ids != nullptr) {
      const int e = ids[b];
      return e >= 0 && e < num_envs ? e : -1;
    }
    return mask[b] ? b : -1;
  }
};

/// Runs the bake of a selection on `Backend` (primary: the host loop; the CUDA specialisation,
/// one block per selected env, is in detail/sdf/kernels.cuh).
template <class Backend>
struct sdf_baker {
  static_assert(std::is_same_v<Backend, backend::host>,
                "backend::cuda needs a translation unit compiled by nvcc (a .cu file); use backend::host in plain C++.");
  static void prepare() {}
  static void run(const track_batch_ref& tracks, const sdf_ref& field, const sdf_selection& sel, host_stream) {
    const host_block_context ctx;
    sdf_bake_shared sh;  // ~24 KiB on the stack: the GPU's shared memory
    const int blocks = sel.blocks(field.num_envs());
    for (int b = 0; b < blocks; ++b) {
      const int e = sel.env(b, field.num_envs());
      if (e >= 0) bake_sdf_env(ctx, sh, tracks.track(e), field, e);
    }
  }
};

/// The bytes of each part of a field's one allocation: headers, then texels (256-byte aligned).
inline std::size_t sdf_header_bytes(int num_envs) {
  return (static_cast<std::size_t>(num_envs) * sizeof(sdf_header) + 255u) / 256u * 256u;
}
inline std::size_t sdf_texel_bytes(int num_envs, int resolution) {
  return static_cast<std::size_t>(num_envs) * static_cast<std::size_t>(resolution) * static_cast<std::size_t>(resolution) *
         sizeof(float);
}

}  // namespace detail

}  // namespace track_gen

#if TRACK_GEN_CUDA_COMPILER
#include <track_gen/detail/sdf/kernels.cuh>
#endif

namespace track_gen {

/// The signed-distance grids of `num_envs` environments, R x R texels each (file comment). Sized
/// at construction; nothing allocates afterwards. Move-only. Zeroed at construction (every
/// sample reads 0 until an env is baked).
///
/// @tparam Policy backend (policy.hpp): device memory of the current device for `backend::cuda`
///         (a `.cu` translation unit), host memory for `backend::host`.
template <class Policy = policy<>>
class sdf_field {
  using backend_type = typename Policy::backend_type;
  using ops = typename detail::backend_ops<backend_type>::type;

 public:
  using stream_type = typename backend_type::stream_type;

  /// Bytes of the one allocation: E (R^2 * 4 + 16) rounded up to 256-byte blocks per part.
  /// @throws std::invalid_argument as the constructor.
  static std::size_t required_bytes(int num_envs, int resolution) {
    check(num_envs, resolution);
    return detail::sdf_header_bytes(num_envs) + detail::sdf_texel_bytes(num_envs, resolution);
  }

  /// Allocates and zeroes the grids (asynchronous on `stream`); loads the bake kernel.
  /// @throws std::invalid_argument num_envs < 1, or resolution outside [8, 512] (the message
  ///         names "sdf_field.resolution" and the range). @throws capture_error `stream` is
  ///         capturing (this allocates). @throws cuda_error a CUDA call failed.
  sdf_field(int num_envs, int resolution, stream_type stream = {}) {
    const std::size_t bytes = required_bytes(num_envs, resolution);
    ops::require_not_capturing(stream, "sdf_field construction");
    memory_ = ops::allocate_shared(bytes);
    ops::zero(memory_.get(), bytes, stream);
    detail::sdf_baker<backend_type>::prepare();
    view_ = sdf_ref(reinterpret_cast<float*>(memory_.get() + detail::sdf_header_bytes(num_envs)),
                    reinterpret_cast<sdf_header*>(memory_.get()), num_envs, resolution);
  }

  sdf_field(sdf_field&&) noexcept = default;
  sdf_field& operator=(sdf_field&&) noexcept = default;
  sdf_field(const sdf_field&) = delete;
  sdf_field& operator=(const sdf_field&) = delete;

  /// The view for kernels and host code. @throws std::logic_error the field was moved from.
  sdf_ref view() const {
    if (memory_ == nullptr) throw std::logic_error("track_gen: this sdf_field was moved from");
    return view_;
  }
  int num_envs() const { return view_.num_envs(); }
  int resolution() const { return view_.resolution(); }
  /// The shared owner of the field's memory (keep it alive in what records a bake).
  std::shared_ptr<const void> owner() const { return memory_; }

  /// Bakes every env whose `mask` entry is set (the null mask: every env) from `tracks` (the
  /// batch's view, E = num_envs() envs); the other envs' headers and texels are not touched.
  /// Asynchronous on `stream` (stream-ordered after the generation that wrote `tracks`), one
  /// kernel of E blocks (unselected blocks return at once), no allocation, no synchronisation:
  /// recordable into a capture. `mask` in the backend's memory space.
  /// @throws std::invalid_argument tracks.num_envs() != num_envs(), or a mask in the wrong
  ///         memory space.
  void bake(const track_batch_ref& tracks, env_mask mask, stream_type stream) {
    check_tracks(tracks);
    if (!mask.all()) ops::require_device_pointer(mask.data, "sdf_field::bake: mask");
    detail::sdf_selection sel;
    sel.mask = mask;
    detail::sdf_baker<backend_type>::run(tracks, view(), sel, stream);
  }
  /// Every env. As above.
  void bake(const track_batch_ref& tracks, stream_type stream) { bake(tracks, env_mask{}, stream); }
  /// The envs listed in `envs[0, count)` (backend memory; ids outside [0, E) are skipped): one
  /// kernel of `count` blocks, as above (e.g. the ids a masked regeneration compacted).
  /// @throws std::invalid_argument count < 0, count > 0 with a null or misplaced `envs`, or
  ///         tracks.num_envs() != num_envs().
  void bake(const track_batch_ref& tracks, const int* envs, int count, stream_type stream) {
    check_tracks(tracks);
    if (count < 0) throw std::invalid_argument("track_gen: sdf_field::bake: count = " + std::to_string(count) + ", expected >= 0");
    if (count == 0) return;
    if (envs == nullptr) throw std::invalid_argument("track_gen: sdf_field::bake: envs is null with count > 0");
    ops::require_device_pointer(envs, "sdf_field::bake: envs");
    detail::sdf_selection sel;
    sel.ids = envs;
    sel.count = count;
    detail::sdf_baker<backend_type>::run(tracks, view(), sel, stream);
  }

 private:
  static void check(int num_envs, int resolution) {
    if (num_envs < 1)
      throw std::invalid_argument("track_gen: sdf_field.num_envs = " + std::to_string(num_envs) + " is out of range: expected >= 1");
    detail::check_range(detail::param::sdf_resolution, resolution);
  }
  void check_tracks(const track_batch_ref& tracks) const {
    if (tracks.num_envs() != num_envs())
      throw std::invalid_argument("track_gen: sdf_field::bake: tracks.num_envs() = " + std::to_string(tracks.num_envs()) +
                                  ", expected the field's num_envs = " + std::to_string(num_envs()));
  }

  std::shared_ptr<unsigned char> memory_;
  sdf_ref view_;
};

}  // namespace track_gen

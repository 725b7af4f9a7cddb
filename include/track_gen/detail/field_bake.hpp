#pragma once
/// @file
/// What the per-env grids baked from the centreline share (sdf.hpp, heightfield.hpp): the grid's
/// header and the view's accessors, the planar nearest-segment search over a tree of bounding
/// circles, the grid's placement over an env's borders, the bake of an env (texels column by
/// column), the bilinear lookup, the selection of the envs a bake covers, the host loop that
/// runs a bake (the CUDA kernel: detail/field_bake/kernels.cuh) and the owner of the grids.
///
/// The search: one block per env builds a tree of bounding circles (xy) over the env's centreline
/// segments in shared memory; a point's nearest segment is warm-started at the previous point's
/// foot (a downhill walk) and made exact by descending the tree, pruning every subtree whose
/// circle lies farther than the best distance found (a branch-and-bound nearest-neighbour search,
/// as in the bounding-volume hierarchies of C. Ericson, "Real-Time Collision Detection", Morgan
/// Kaufmann 2005, ch. 6).
///
/// A field view type F (derived from grid_ref_base) plugs in with `field_bake_traits<F>` (the
/// names its messages use, the parameter of its resolution) and a `TRACK_GEN_HD` function
/// `bake_field_env(ctx, sh, track, field, env)` in track_gen::detail (found by
/// argument-dependent lookup through the context and `sh`), usually one call of bake_grid_env.

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
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace track_gen {

/// Where env e's grid lies (sdf.hpp's sdf_header, heightfield.hpp's heightfield_header): texel
/// (i, j)'s centre is (x0 + (i + 0.5) cell, y0 + (j + 0.5) cell) [m], track frame. All zero for
/// an env never baked (every sample then reads 0).
struct grid_header {
  float x0, y0;    ///< the grid's lower-left corner [m]
  float cell;      ///< side of a square cell [m]
  float inv_cell;  ///< 1 / cell [1/m]
};

}  // namespace track_gen

namespace track_gen::detail {

/// The accessors a grid view shares (sdf_ref, heightfield_ref): E envs of R x R texels, each
/// env's row-major (row j along +y, column i along +x) after its predecessors', and a header
/// per env. Pointers in the owner's memory space. Trivially copyable.
class grid_ref_base {
 public:
  TRACK_GEN_HD int num_envs() const { return num_envs_; }
  /// R: texels per side.
  TRACK_GEN_HD int resolution() const { return resolution_; }
  TRACK_GEN_HD const grid_header& header(int env) const { return headers_[env]; }
  TRACK_GEN_HD grid_header& header(int env) { return headers_[env]; }
  /// Env e's R^2 texels, row-major (row j along +y, column i along +x).
  TRACK_GEN_HD float* texels(int env) const {
    return texels_ + static_cast<std::size_t>(env) * static_cast<std::size_t>(resolution_) * resolution_;
  }
  /// The texel of column i, row j of env e.
  TRACK_GEN_HD float texel(int env, int i, int j) const { return texels(env)[j * resolution_ + i]; }
  /// The centre of texel (i, j) of env e [m], track frame (z = 0).
  TRACK_GEN_HD float3 texel_centre(int env, int i, int j) const {
    const grid_header h = headers_[env];
    return f3(h.x0 + (static_cast<float>(i) + 0.5f) * h.cell, h.y0 + (static_cast<float>(j) + 0.5f) * h.cell, 0.0f);
  }

 protected:
  grid_ref_base() = default;
  grid_ref_base(float* texels, grid_header* headers, int num_envs, int resolution)
      : texels_(texels), headers_(headers), num_envs_(num_envs), resolution_(resolution) {}

  float* texels_ = nullptr;
  grid_header* headers_ = nullptr;
  int num_envs_ = 0;
  int resolution_ = 0;
};

/// Segments per leaf of the tree, and the tree's node capacity: 2 P, P the power of two >= the
/// leaves of the longest track (4096 samples / 4 = 1024 leaves): 2048 circles, 24 KiB of shared
/// memory.
inline constexpr int planar_leaf_segments = 4;
inline constexpr int planar_max_nodes = 2048;
/// Threads per block of a bake kernel (one column of texels each, then the next).
inline constexpr int field_bake_threads = 128;

/// A bounding circle (xy) of a run of centreline samples; r < 0: empty.
struct planar_node {
  float x, y, r;
};

/// The tree of one env (heap order: node 1 the root, node n's children 2n and 2n + 1, the leaves
/// from P = leaves_from on).
struct planar_tree {
  planar_node node[planar_max_nodes];
  int leaves_from;
};

/// The smallest circle enclosing circles a and b (either may be empty), grown by a relative 1e-6
/// so that float rounding never makes it miss a point it should hold.
TRACK_GEN_HD inline planar_node planar_merge(const planar_node& a, const planar_node& b) {
  if (a.r < 0.0f) return b;
  if (b.r < 0.0f) return a;
  const float dx = b.x - a.x, dy = b.y - a.y, d = std::sqrt(dx * dx + dy * dy);
  if (d + b.r <= a.r) return a;
  if (d + a.r <= b.r) return b;
  const float r = 0.5f * (d + a.r + b.r);
  const float w = (r - a.r) / d;
  return planar_node{a.x + dx * w, a.y + dy * w, r * (1.0f + 1e-6f) + 1e-6f};
}

TRACK_GEN_HD inline int planar_min_i(int a, int b) { return a < b ? a : b; }

TRACK_GEN_HD inline int planar_next_pow2(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

/// The best segment of a planar nearest-point search: the foot is at parameter t of segment
/// `segment` (samples segment and segment + 1, wrapped), d2 its squared planar distance.
struct planar_best {
  int segment;
  float t, d2;
};

/// Squared planar distance from (px, py) to segment k of `track`, into `best` when strictly nearer.
TRACK_GEN_HD inline void planar_scan(const track_ref& track, float px, float py, int k, planar_best& best) {
  const int n = track.num_samples();
  const float3 a0 = track.position(k), b0 = track.position(k + 1 == n ? 0 : k + 1);
  const float3 p = f3(px, py, 0.0f), a = f3(a0.x, a0.y, 0.0f), b = f3(b0.x, b0.y, 0.0f);
  const float t = closest_parameter(p, a, b);
  const float3 q = p - lerp(a, b, t);
  const float d2 = dot(q, q);
  if (d2 < best.d2) best = planar_best{k, t, d2};
}

/// The exact nearest segment of `track` to the planar point (px, py), by branch and bound over
/// `tree`, warm-started at segment `warm` (>= 0: a downhill walk from there sets the first
/// bound). `warm` becomes the foot's segment.
TRACK_GEN_HD inline planar_best planar_nearest(const track_ref& track, const planar_tree& tree, float px, float py, int& warm) {
  const int n = track.num_samples();
  planar_best best{0, 0.0f, INFINITY};
  if (warm >= 0) {
    // Downhill from the previous point's foot: a near bound, so that the tree prunes at once.
    planar_scan(track, px, py, warm, best);
    for (int dir = -1; dir <= 1; dir += 2) {
      int k = warm;
      for (int step = 0; step < 16; ++step) {
        k += dir;  // wrapped without an integer division
        k = k < 0 ? k + n : (k >= n ? k - n : k);
        const float before = best.d2;
        planar_scan(track, px, py, k, best);
        if (!(best.d2 < before)) break;
      }
    }
  }
  const int leaves_from = tree.leaves_from;
  int stack[16];  // depth-first: at most one pending sibling per level of the <= 11 levels
  int top = 0;
  stack[top++] = 1;
  float bound = std::sqrt(best.d2) * (1.0f + 1e-5f) + 1e-6f;
  while (top > 0) {
    const int id = stack[--top];
    const planar_node c = tree.node[id];
    if (c.r < 0.0f) continue;
    const float dx = px - c.x, dy = py - c.y, reach = bound + c.r;
    if (dx * dx + dy * dy > reach * reach) continue;  // no point of this subtree is nearer
    if (id >= leaves_from) {
      const int first = (id - leaves_from) * planar_leaf_segments;
      const int last = planar_min_i(first + planar_leaf_segments, n);
      for (int k = first; k < last; ++k) planar_scan(track, px, py, k, best);
      bound = std::sqrt(best.d2) * (1.0f + 1e-5f) + 1e-6f;  // a little wide: float rounding never prunes the nearest
      continue;
    }
    // The nearer child on top of the stack: its leaves tighten the bound before the other's test.
    const planar_node l = tree.node[2 * id], r = tree.node[2 * id + 1];
    const bool left_first = (px - l.x) * (px - l.x) + (py - l.y) * (py - l.y) <= (px - r.x) * (px - r.x) + (py - r.y) * (py - r.y);
    stack[top++] = left_first ? 2 * id + 1 : 2 * id;
    stack[top++] = left_first ? 2 * id : 2 * id + 1;
  }
  warm = best.segment;
  return best;
}

/// The xy bounding box of an env's two border polylines (the drivable band lies between them).
struct planar_box {
  float lo_x, lo_y, hi_x, hi_y;
};

/// The bounding box of `track`'s borders, reduced over the block (every thread gets it).
template <class Ctx>
TRACK_GEN_HD planar_box border_box(const Ctx& ctx, const track_ref& track) {
  const int n = track.num_samples(), rank = ctx.rank(), size = ctx.size();
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
  return planar_box{lo_x, lo_y, hi_x, hi_y};
}

/// Builds `tree` over `track`'s centreline on a block context: the circle around each leaf's
/// points (its segments' ends), then the levels upwards. Every thread of the block calls it; it
/// ends with a barrier, after which the tree (and whatever the block wrote before the call) is
/// visible to every thread.
template <class Ctx>
TRACK_GEN_HD void build_planar_tree(const Ctx& ctx, planar_tree& tree, const track_ref& track) {
  const int n = track.num_samples(), rank = ctx.rank(), size = ctx.size();
  const int leaves = (n + planar_leaf_segments - 1) / planar_leaf_segments, leaves_from = planar_next_pow2(leaves);
  if (rank == 0) tree.leaves_from = leaves_from;
  for (int leaf = rank; leaf < leaves_from; leaf += size) {
    planar_node c{0.0f, 0.0f, -1.0f};
    const int first = leaf * planar_leaf_segments;
    if (first < n) {
      const int last = planar_min_i(first + planar_leaf_segments, n);  // points first .. last (wrapped)
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
    tree.node[leaves_from + leaf] = c;
  }
  ctx.sync();
  for (int level = leaves_from / 2; level >= 1; level /= 2) {
    for (int id = level + rank; id < 2 * level; id += size) tree.node[id] = planar_merge(tree.node[2 * id], tree.node[2 * id + 1]);
    ctx.sync();
  }
}

/// The bilinear cell of a point in an R x R grid of texel centres (x0 + (i + 0.5) cell, ...):
/// (u, v) the point in texel steps from texel (0, 0)'s centre, (uc, vc) the same clamped to the
/// square of the texel centres [0, R - 1]^2, (i, j) the lower-left texel of the cell holding
/// (uc, vc), (fx, fy) the fractions in it, t00 .. t11 its four texels (t10: column i + 1).
struct bilinear_cell {
  float u, v, uc, vc, fx, fy;
  float t00, t10, t01, t11;
};

/// The cell of (x, y) in the R x R texels at `texels` (row-major, row j along +y), the grid's
/// lower-left corner (x0, y0), 1 / cell `inv_cell`. R >= 2. Four texel loads.
TRACK_GEN_HD inline bilinear_cell bilinear_lookup(const float* texels, int resolution, float x0, float y0, float inv_cell,
                                                  float x, float y) {
  bilinear_cell c;
  const float top = static_cast<float>(resolution - 1);
  c.u = (x - x0) * inv_cell - 0.5f;
  c.v = (y - y0) * inv_cell - 0.5f;
  c.uc = clamp_f(c.u, 0.0f, top);
  c.vc = clamp_f(c.v, 0.0f, top);
  const int i = planar_min_i(static_cast<int>(c.uc), resolution - 2), j = planar_min_i(static_cast<int>(c.vc), resolution - 2);
  c.fx = c.uc - static_cast<float>(i);
  c.fy = c.vc - static_cast<float>(j);
  const float* row = texels + j * resolution + i;
  c.t00 = row[0];
  c.t10 = row[1];
  c.t01 = row[resolution];
  c.t11 = row[resolution + 1];
  return c;
}

/// Which envs a bake covers: the ids in `ids[0, count)` (ids outside [0, E) skipped), or, with
/// `ids` null, every env e < E whose `mask` entry is set (the null mask: all of them).
struct bake_selection {
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

/// The selection of the envs with a set `mask` entry (the null mask: every env).
inline bake_selection bake_selection_of(env_mask mask) {
  bake_selection sel;
  sel.mask = mask;
  return sel;
}

/// A field view's names and parameters (specialised by each field), string literals so that
/// nothing allocates on the bake's path: `owner` (the owner's name in messages, e.g.
/// "sdf_field"), `construction`, `moved_from`, `bake_mask`, `bake_envs` (messages), `loading` and
/// `launching` (what the CUDA errors of its kernel name), `resolution` (its param id).
template <class Field>
struct field_bake_traits;

/// The per-env working set of a bake in shared memory: the tree and the grid's header.
struct grid_bake_shared {
  planar_tree tree;
  grid_header header;
};

/// Bakes env `env`'s grid from `track` on a block context (host: one thread; CUDA: the block):
/// the grid's placement (the borders' bounding box grown by `extra` metres on its longer side,
/// centred, `cells_across` cells over that side; R = field.resolution() cells in all), the
/// tree, then the texels column by column, texel (i, j) = Texel::at(track, tree, px, py, warm)
/// at its centre (`warm`: the previous texel's foot segment down the column, -1 at its start).
/// Every thread of the block calls it (it synchronises the block).
template <class Texel, class Ctx>
TRACK_GEN_HD void bake_grid_env(const Ctx& ctx, grid_bake_shared& sh, const track_ref& track, const grid_ref_base& field,
                                int env, float extra, int cells_across) {
  const planar_box box = border_box(ctx, track);
  const int res = field.resolution();
  if (ctx.rank() == 0) {
    float side = max_f(box.hi_x - box.lo_x, box.hi_y - box.lo_y) + extra;
    if (!(side > 0.0f && side < 3.0e38f)) side = 1.0f;  // a degenerate or missing track: any grid
    const float cell = side / static_cast<float>(cells_across);
    const float cx = 0.5f * (box.lo_x + box.hi_x), cy = 0.5f * (box.lo_y + box.hi_y);
    const bool finite = is_finite(cx) && is_finite(cy);
    sh.header = grid_header{(finite ? cx : 0.0f) - 0.5f * cell * res, (finite ? cy : 0.0f) - 0.5f * cell * res, cell, 1.0f / cell};
    grid_ref_base view = field;
    view.header(env) = sh.header;
  }
  build_planar_tree(ctx, sh.tree, track);  // ends with a barrier: sh.header is visible too
  const grid_header h = sh.header;
  float* out = field.texels(env);
  for (int i = ctx.rank(); i < res; i += ctx.size()) {
    int warm = -1;
    const float px = h.x0 + (static_cast<float>(i) + 0.5f) * h.cell;
    for (int j = 0; j < res; ++j) {
      const float py = h.y0 + (static_cast<float>(j) + 0.5f) * h.cell;
      out[j * res + i] = Texel::at(track, sh.tree, px, py, warm);
    }
  }
}

/// Runs the bake of a selection of `Field` on `Backend` (primary: the host loop, one env after
/// another with the same code as a block; the CUDA specialisation, one block per selected env,
/// is in detail/field_bake/kernels.cuh).
template <class Backend, class Field>
struct field_baker {
  static_assert(std::is_same_v<Backend, backend::host>,
                "backend::cuda needs a translation unit compiled by nvcc (a .cu file); use backend::host in plain C++.");
  static void prepare() {}
  static void run(const track_batch_ref& tracks, const Field& field, const bake_selection& sel, host_stream) {
    const host_block_context ctx;
    grid_bake_shared sh;  // ~24 KiB on the stack: the GPU's shared memory
    const int blocks = sel.blocks(field.num_envs());
    for (int b = 0; b < blocks; ++b) {
      const int e = sel.env(b, field.num_envs());
      if (e >= 0) bake_field_env(ctx, sh, tracks.track(e), field, e);
    }
  }
};

/// The bytes of each part of a grid owner's one allocation: headers, then texels (256-byte aligned).
inline std::size_t grid_header_bytes(int num_envs) {
  return (static_cast<std::size_t>(num_envs) * sizeof(grid_header) + 255u) / 256u * 256u;
}
inline std::size_t grid_texel_bytes(int num_envs, int resolution) {
  return static_cast<std::size_t>(num_envs) * static_cast<std::size_t>(resolution) * static_cast<std::size_t>(resolution) *
         sizeof(float);
}

/// The owner of a grid view `Ref` (sdf_field, heightfield derive from it): one allocation of
/// E headers and E R^2 texels, zeroed at construction; the view; the bakes. Move-only.
template <class Policy, class Ref>
class grid_field {
  using backend_type = typename Policy::backend_type;
  using ops = typename backend_ops<backend_type>::type;
  using traits = field_bake_traits<Ref>;
  using baker = field_baker<backend_type, Ref>;

 public:
  using stream_type = typename backend_type::stream_type;

  grid_field(grid_field&&) noexcept = default;
  grid_field& operator=(grid_field&&) noexcept = default;
  grid_field(const grid_field&) = delete;
  grid_field& operator=(const grid_field&) = delete;

  /// The view for kernels and host code. @throws std::logic_error the field was moved from.
  Ref view() const {
    if (memory_ == nullptr) throw std::logic_error(traits::moved_from);
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
    if (!mask.all()) ops::require_device_pointer(mask.data, traits::bake_mask);
    baker::run(tracks, view(), bake_selection_of(mask), stream);
  }
  /// Every env. As above.
  void bake(const track_batch_ref& tracks, stream_type stream) { bake(tracks, env_mask{}, stream); }
  /// The envs listed in `envs[0, count)` (backend memory; ids outside [0, E) are skipped): one
  /// kernel of `count` blocks, as above (e.g. the ids a masked regeneration compacted).
  /// @throws std::invalid_argument count < 0, count > 0 with a null or misplaced `envs`, or
  ///         tracks.num_envs() != num_envs().
  void bake(const track_batch_ref& tracks, const int* envs, int count, stream_type stream) {
    check_tracks(tracks);
    if (count < 0)
      throw std::invalid_argument(std::string("track_gen: ") + traits::owner + "::bake: count = " + std::to_string(count) +
                                  ", expected >= 0");
    if (count == 0) return;
    if (envs == nullptr) throw std::invalid_argument(std::string("track_gen: ") + traits::owner + "::bake: envs is null with count > 0");
    ops::require_device_pointer(envs, traits::bake_envs);
    bake_selection sel;
    sel.ids = envs;
    sel.count = count;
    baker::run(tracks, view(), sel, stream);
  }

 protected:
  /// Bytes of the one allocation, after checking num_envs >= 1 and the resolution's range.
  static std::size_t checked_bytes(int num_envs, int resolution) {
    if (num_envs < 1)
      throw std::invalid_argument(std::string("track_gen: ") + traits::owner + ".num_envs = " + std::to_string(num_envs) +
                                  " is out of range: expected >= 1");
    check_range(traits::resolution, resolution);
    return grid_header_bytes(num_envs) + grid_texel_bytes(num_envs, resolution);
  }

  /// Allocates and zeroes the grids (asynchronous on `stream`), loads the bake kernel, and makes
  /// the view Ref(texels, headers, num_envs, resolution, extra...).
  template <class... Extra>
  grid_field(int num_envs, int resolution, stream_type stream, Extra... extra) {
    const std::size_t bytes = checked_bytes(num_envs, resolution);
    ops::require_not_capturing(stream, traits::construction);
    memory_ = ops::allocate_shared(bytes);
    ops::zero(memory_.get(), bytes, stream);
    baker::prepare();
    view_ = Ref(reinterpret_cast<float*>(memory_.get() + grid_header_bytes(num_envs)),
                reinterpret_cast<grid_header*>(memory_.get()), num_envs, resolution, extra...);
  }

  const Ref& stored_view() const { return view_; }

 private:
  void check_tracks(const track_batch_ref& tracks) const {
    if (tracks.num_envs() != num_envs())
      throw std::invalid_argument(std::string("track_gen: ") + traits::owner + "::bake: tracks.num_envs() = " +
                                  std::to_string(tracks.num_envs()) + ", expected the field's num_envs = " +
                                  std::to_string(num_envs()));
  }

  std::shared_ptr<unsigned char> memory_;
  Ref view_;
};

}  // namespace track_gen::detail

#if TRACK_GEN_CUDA_COMPILER
#include <track_gen/detail/field_bake/kernels.cuh>
#endif

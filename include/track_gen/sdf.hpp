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
/// Collision Detection", Morgan Kaufmann 2005, ch. 6; shared with heightfield.hpp:
/// detail/field_bake.hpp). Asynchronous on the stream, one launch, no allocation, no
/// synchronisation: recordable into a capture.

#include <track_gen/collision.hpp>
#include <track_gen/detail/config.hpp>
#include <track_gen/detail/field_bake.hpp>
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
/// [m], track frame (detail/field_bake.hpp). All zero for an env never baked (every sample then
/// reads 0).
using sdf_header = grid_header;

/// Trivially copyable view of an sdf_field: pass it by value to kernels. Valid while the field
/// lives. Pointers in the field's memory space (device memory for backend::cuda). Its
/// accessors (detail::grid_ref_base): num_envs(), resolution() (R, texels per side),
/// header(env), texels(env) (env e's R^2 texels of d [m], row-major: row j along +y, column i
/// along +x), texel(env, i, j) [m] and texel_centre(env, i, j) [m, track frame, z = 0].
class sdf_ref : public detail::grid_ref_base {
 public:
  sdf_ref() = default;
  sdf_ref(float* texels, sdf_header* headers, int num_envs, int resolution)
      : grid_ref_base(texels, headers, num_envs, resolution) {}

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
    const bilinear_cell c = bilinear_lookup(texels(env), resolution_, h.x0, h.y0, h.inv_cell, x, y);
    const float bottom = lerp(c.t00, c.t10, c.fx), upper = lerp(c.t01, c.t11, c.fx);
    const float d = lerp(bottom, upper, c.fy);
    // The gradient per texel step: d / du and d / dv.
    const float gu = (1.0f - c.fy) * (c.t10 - c.t00) + c.fy * (c.t11 - c.t01), gv = upper - bottom;
    if (gradient != nullptr) *gradient = f2(gu * h.inv_cell, gv * h.inv_cell);
    if (c.u == c.uc && c.v == c.vc) return d;
    return min_f(d + gu * (c.u - c.uc) + gv * (c.v - c.vc), d);
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

};

namespace detail {

template <>
struct field_bake_traits<sdf_ref> {
  static constexpr const char* owner = "sdf_field";
  static constexpr const char* construction = "sdf_field construction";
  static constexpr const char* moved_from = "track_gen: this sdf_field was moved from";
  static constexpr const char* bake_mask = "sdf_field::bake: mask";
  static constexpr const char* bake_envs = "sdf_field::bake: envs";
  static constexpr const char* loading = "loading the SDF bake kernel";
  static constexpr const char* launching = "launching the SDF bake kernel";
  static constexpr param resolution = param::sdf_resolution;
};

/// d at the planar point (px, py) of `track` (file comment): the exact nearest segment
/// (planar_nearest over `tree`, warm-started at segment `warm`), then d at its foot. `warm`
/// becomes the foot's segment.
TRACK_GEN_HD inline float sdf_distance(const track_ref& track, const planar_tree& tree, float px, float py, int& warm) {
  const int n = track.num_samples();
  const planar_best best = planar_nearest(track, tree, px, py, warm);
  const int k = best.segment, k1 = k + 1 == n ? 0 : k + 1;
  const float3 foot = lerp(track.position(k), track.position(k1), best.t);
  const float3 left = normalize_or(lerp(track.normal(k), track.normal(k1), best.t), track.normal(k));
  // The texel's point at the road's height (z of the foot): the lateral offset is then planar.
  const float lateral = (px - foot.x) * left.x + (py - foot.y) * left.y;
  const float to_left = lerp(track.half_width_left(k), track.half_width_left(k1), best.t) - lateral;
  const float to_right = lateral + lerp(track.half_width_right(k), track.half_width_right(k1), best.t);
  return min_f(to_left, to_right);
}

/// d at a texel's centre (bake_grid_env's Texel).
struct sdf_texel {
  TRACK_GEN_HD static float at(const track_ref& track, const planar_tree& tree, float px, float py, int& warm) {
    return sdf_distance(track, tree, px, py, warm);
  }
};

/// Bakes env `env` of `field` from `track` on a block context (bake_grid_env): the grid covers
/// the borders' bounding box with two cells of margin on every side (R - 4 cells across it).
template <class Ctx>
TRACK_GEN_HD void bake_field_env(const Ctx& ctx, grid_bake_shared& sh, const track_ref& track, const sdf_ref& field, int env) {
  bake_grid_env<sdf_texel>(ctx, sh, track, field, env, 0.0f, field.resolution() - 4);
}

}  // namespace detail

/// The signed-distance grids of `num_envs` environments, R x R texels each (file comment). Sized
/// at construction; nothing allocates afterwards. Move-only. Zeroed at construction (every
/// sample reads 0 until an env is baked). view(), num_envs(), resolution(), owner() and the
/// bakes (`bake(tracks, stream)`, `bake(tracks, mask, stream)`, `bake(tracks, envs, count,
/// stream)`: asynchronous, one kernel, no allocation, recordable into a capture; the other envs'
/// headers and texels untouched) are detail::grid_field's (detail/field_bake.hpp).
///
/// @tparam Policy backend (policy.hpp): device memory of the current device for `backend::cuda`
///         (a `.cu` translation unit), host memory for `backend::host`.
template <class Policy = policy<>>
class sdf_field : public detail::grid_field<Policy, sdf_ref> {
  using base = detail::grid_field<Policy, sdf_ref>;

 public:
  using stream_type = typename base::stream_type;

  /// Bytes of the one allocation: E (R^2 * 4 + 16) rounded up to 256-byte blocks per part.
  /// @throws std::invalid_argument as the constructor.
  static std::size_t required_bytes(int num_envs, int resolution) { return base::checked_bytes(num_envs, resolution); }

  /// Allocates and zeroes the grids (asynchronous on `stream`); loads the bake kernel.
  /// @throws std::invalid_argument num_envs < 1, or resolution outside [8, 512] (the message
  ///         names "sdf_field.resolution" and the range). @throws capture_error `stream` is
  ///         capturing (this allocates). @throws cuda_error a CUDA call failed.
  sdf_field(int num_envs, int resolution, stream_type stream = {}) : base(num_envs, resolution, stream) {}
};

}  // namespace track_gen

#pragma once
/// @file
/// Heightfield: a per-env grid of terrain heights around the track, sampled bilinearly (issue 15
/// item 5). `heightfield<Policy>` owns the grids of E envs; `heightfield_ref` is its trivially
/// copyable view, whose `sample(env, x, y)` runs in your kernels or on the host: e.g. the
/// ground's height under a car or a drone off the road, or a terrain mesh for rendering.
///
/// Texel value: the height z [m] of the nearest centreline cross-section in the xy plane. For
/// the texel's centre p = (x, y), the foot is the nearest point of the centreline polyline in
/// the xy plane (the planar nearest point, as sdf.hpp's), at parameter t of segment k; the texel
/// holds z_k + t (z_{k+1} - z_k), the centreline's z interpolated along that segment: every point
/// of the cross-section (the road's width at the foot) is at that height. On a flat track every
/// texel is the track's z (0 for the track presets); on elevated tracks (elevation_params,
/// presets::elevated_track_pipeline) and gate courses (presets::gate_course_pipeline, whose z
/// is the course line's altitude) the grid extends the road's height sideways: constant along
/// each cross-section, with a crease where the foot jumps between two parts of the track (the
/// medial axis, e.g. between a bridge and the road under it, whichever is nearer in plan view).
///
/// The grid of env e: R x R texels (R = resolution, in [2, 512], param_ranges.hpp), square cells
/// of side `cell` covering the bounding box (xy) of the env's two border polylines plus `margin`
/// metres (in [0, 1e6]) on every side: cell = (max(width, height) + 2 margin) / R, the grid
/// centred on the box. Texel (i, j) (column i along +x, row j along +y) holds the height at its
/// centre (x0 + (i + 0.5) cell, y0 + (j + 0.5) cell), stored at e R^2 + j R + i.
///
/// Outside the grid: `sample` clamps (x, y) to the square of the texel centres (the edge texels
/// extend outwards as constants; the corner texels fill the corner quadrants), so every finite
/// point reads a height of the grid. Within the square, the bilinear interpolation of the four
/// texels around the point: exact at texel centres, between them within the range of those four
/// (the exact height between texel centres is not reproduced: it varies with the track's grade
/// and, inside a bend, faster than along the centreline, and jumps across the crease; choose
/// the cell against the track's grade and radius).
///
/// Memory: bytes = E (R^2 * 4 + 16), plus up to 255 bytes of alignment (required_bytes): at
/// E = 8192 and R = 64, 134 MB; at R = 128, 537 MB; at E = 65,536 and R = 64, 1.07 GB.
///
/// Baking (heightfield::bake; course::attach_heightfield bakes at attach, then the regenerated
/// envs at every regenerate): one CUDA block per selected env (host: a loop over them, the same
/// code) runs sdf.hpp's search (detail/field_bake.hpp: a tree of bounding circles over the env's
/// centreline segments in shared memory, each texel's nearest segment warm-started at the
/// previous texel's foot and made exact by branch and bound, C. Ericson, "Real-Time Collision
/// Detection", Morgan Kaufmann 2005, ch. 6). Cost per env: R^2 nearest-segment searches, about
/// the SDF bake's at the same R (bench: `--only heightfield`). Asynchronous on the stream, one
/// launch, no allocation, no synchronisation: recordable into a capture.

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/field_bake.hpp>
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
using heightfield_header = grid_header;

/// Trivially copyable view of a heightfield: pass it by value to kernels. Valid while the field
/// lives. Pointers in the field's memory space (device memory for backend::cuda). Its
/// accessors (detail::grid_ref_base): num_envs(), resolution() (R, texels per side),
/// header(env), texels(env) (env e's R^2 heights [m], row-major: row j along +y, column i along
/// +x), texel(env, i, j) [m] and texel_centre(env, i, j) [m, track frame, z = 0].
class heightfield_ref : public detail::grid_ref_base {
 public:
  heightfield_ref() = default;
  heightfield_ref(float* texels, heightfield_header* headers, int num_envs, int resolution, float margin)
      : grid_ref_base(texels, headers, num_envs, resolution), margin_(margin) {}

  /// The margin around the borders' bounding box [m] (file comment).
  TRACK_GEN_HD float margin() const { return margin_; }

  /// The terrain height z [m] at (x, y) [m, track frame] of env e: the bilinear interpolation of
  /// the four texels around it, (x, y) first clamped to the square of the texel centres (file
  /// comment: outside the grid the edge texels extend as constants). `gradient` (optional)
  /// receives (dz/dx, dz/dy) of the interpolant (unit-less), 0 along an axis where (x, y) was
  /// clamped. NaN (and a NaN gradient) for a non-finite (x, y). O(1), four texel loads.
  TRACK_GEN_HD float sample(int env, float x, float y, float2* gradient = nullptr) const {
    using namespace detail;
    if (!(is_finite(x) && is_finite(y))) {
      if (gradient != nullptr) *gradient = f2(NAN, NAN);
      return NAN;
    }
    const heightfield_header h = headers_[env];
    const bilinear_cell c = bilinear_lookup(texels(env), resolution_, h.x0, h.y0, h.inv_cell, x, y);
    const float bottom = lerp(c.t00, c.t10, c.fx), upper = lerp(c.t01, c.t11, c.fx);
    if (gradient != nullptr) {
      const float gu = (1.0f - c.fy) * (c.t10 - c.t00) + c.fy * (c.t11 - c.t01), gv = upper - bottom;
      *gradient = f2(c.u == c.uc ? gu * h.inv_cell : 0.0f, c.v == c.vc ? gv * h.inv_cell : 0.0f);
    }
    return lerp(bottom, upper, c.fy);
  }

 private:
  float margin_ = 0.0f;
};

namespace detail {

template <>
struct field_bake_traits<heightfield_ref> {
  static constexpr const char* owner = "heightfield";
  static constexpr const char* construction = "heightfield construction";
  static constexpr const char* moved_from = "track_gen: this heightfield was moved from";
  static constexpr const char* bake_mask = "heightfield::bake: mask";
  static constexpr const char* bake_envs = "heightfield::bake: envs";
  static constexpr const char* loading = "loading the heightfield bake kernel";
  static constexpr const char* launching = "launching the heightfield bake kernel";
  static constexpr param resolution = param::heightfield_resolution;
};

/// The height at the planar point (px, py) of `track` (file comment): z of the centreline at the
/// exact nearest segment's foot (planar_nearest over `tree`, warm-started at segment `warm`,
/// which becomes the foot's segment).
TRACK_GEN_HD inline float heightfield_height(const track_ref& track, const planar_tree& tree, float px, float py, int& warm) {
  const int n = track.num_samples();
  const planar_best best = planar_nearest(track, tree, px, py, warm);
  const int k = best.segment, k1 = k + 1 == n ? 0 : k + 1;
  return lerp(track.position(k).z, track.position(k1).z, best.t);
}

/// The height at a texel's centre (bake_grid_env's Texel).
struct heightfield_texel {
  TRACK_GEN_HD static float at(const track_ref& track, const planar_tree& tree, float px, float py, int& warm) {
    return heightfield_height(track, tree, px, py, warm);
  }
};

/// Bakes env `env` of `field` from `track` on a block context (bake_grid_env): the grid covers
/// the borders' bounding box with `margin` metres on every side (R cells across).
template <class Ctx>
TRACK_GEN_HD void bake_field_env(const Ctx& ctx, grid_bake_shared& sh, const track_ref& track, const heightfield_ref& field,
                                 int env) {
  bake_grid_env<heightfield_texel>(ctx, sh, track, field, env, 2.0f * field.margin(), field.resolution());
}

}  // namespace detail

/// The terrain-height grids of `num_envs` environments, R x R texels each (file comment). Sized
/// at construction; nothing allocates afterwards. Move-only. Zeroed at construction (every
/// sample reads 0 until an env is baked). view(), num_envs(), resolution(), owner() and the
/// bakes are detail::grid_field's (detail/field_bake.hpp):
/// - `bake(tracks, mask, stream)`: every env whose `mask` entry is set (the null mask: every
///   env) from `tracks` (the batch's view, E = num_envs() envs); `bake(tracks, stream)`: every
///   env; `bake(tracks, envs, count, stream)`: the envs listed in `envs[0, count)` (ids outside
///   [0, E) skipped). The other envs' headers and texels are not touched. Asynchronous on
///   `stream` (stream-ordered after the generation that wrote `tracks`), one kernel (one block
///   per env of the mask or the list; unselected blocks return at once), no allocation, no
///   synchronisation: recordable into a capture. Pointers in the backend's memory space.
/// - @throws std::invalid_argument tracks.num_envs() != num_envs(), count < 0, a null `envs`
///   with count > 0, or a pointer in the wrong memory space.
///
/// @tparam Policy backend (policy.hpp): device memory of the current device for `backend::cuda`
///         (a `.cu` translation unit), host memory for `backend::host`.
template <class Policy = policy<>>
class heightfield : public detail::grid_field<Policy, heightfield_ref> {
  using base = detail::grid_field<Policy, heightfield_ref>;

 public:
  using stream_type = typename base::stream_type;

  /// Bytes of the one allocation: E (R^2 * 4 + 16) rounded up to 256-byte blocks per part.
  /// @throws std::invalid_argument as the constructor (num_envs and resolution).
  static std::size_t required_bytes(int num_envs, int resolution) { return base::checked_bytes(num_envs, resolution); }

  /// Allocates and zeroes the grids (asynchronous on `stream`); loads the bake kernel.
  /// @param num_envs   E >= 1.
  /// @param resolution R, texels per side, in [2, 512].
  /// @param margin     metres of grid around the borders' bounding box on every side, in [0, 1e6].
  /// @throws std::invalid_argument a parameter out of range (the message names
  ///         "heightfield.num_envs", "heightfield.resolution" or "heightfield.margin" and the
  ///         range). @throws capture_error `stream` is capturing (this allocates).
  ///         @throws cuda_error a CUDA call failed.
  heightfield(int num_envs, int resolution, float margin, stream_type stream = {})
      : base(checked_margin(num_envs, margin), resolution, stream, margin) {}

  /// The margin [m].
  float margin() const { return this->stored_view().margin(); }

 private:
  /// num_envs, after checking `margin` (first, as the constructor's documentation orders it).
  static int checked_margin(int num_envs, float margin) {
    detail::check_range(detail::param::heightfield_margin, margin);
    return num_envs;
  }
};

}  // namespace track_gen

#pragma once
/// @file
/// The course's box contacts (course::bind with orientations and half extents): the layout of
/// their arrays, the host-side check of the bound boxes, and the per-env operation that
/// course::step launches after the progress step (one more kernel in the same stream order, so
/// recorded into the same capture).

#include <track_gen/collision.hpp>
#include <track_gen/course_ref.hpp>
#include <track_gen/detail/fields.hpp>
#include <track_gen/queries.hpp>
#include <track_gen/status.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace track_gen::detail {

using contact_layout = soa_layout<sizeof(contact_fields) / sizeof(contact_fields[0])>;

/// The contact arrays of `num_envs` envs (256-byte aligned, `bytes` in all).
inline contact_layout plan_contacts(int num_envs) { return contact_layout::make(contact_fields, num_envs, 1, 1); }

/// Throws std::invalid_argument naming the first bad entry of the bound boxes (host memory,
/// [E] each): orientation[e] must have finite components and a norm within 1e-3 of 1 (a unit
/// quaternion x, y, z, w), half_extents[e] finite in (0, 1e7] m: collision.hpp's check_box,
/// whose message says which component, prefixed with the env.
inline void check_bound_boxes(const float4* orientations, const float2* half_extents, int num_envs) {
  for (int e = 0; e < num_envs; ++e) {
    box b{};
    b.orientation = orientations[e];
    b.half_extents = half_extents[e];
    try {
      check_box(b);
    } catch (const std::invalid_argument& err) {
      std::string what = err.what();
      const std::string prefix = "track_gen: box.";
      if (what.compare(0, prefix.size(), prefix) == 0) what = what.substr(prefix.size());
      throw std::invalid_argument("track_gen: bind: env " + std::to_string(e) + ": " + what +
                                  " (orientation and half_extents are checked when bound; fill them before bind)");
    }
  }
}

/// Env e's box against its road band, written to the course's contact arrays: collide_box with
/// the progress step's new hint (the segment of the position's foot, just written by the step
/// that precedes this launch) and the tracker's window; on a track that passed validation, the
/// local searches are trusted up to half the course's clearance_margin beyond the half-width
/// (`trust_margin`, collide_box), so corners a little off the road cost no O(N) search. The box
/// centre is the bound position.
struct course_contacts_op {
  track_batch_ref view;
  const int* hints;
  const float3* centres;
  const float4* orientations;
  const float2* half_extents;
  int window;
  contact_arrays out;
  float trust_margin;  ///< half of track_params::validate.clearance_margin [m]
  TRACK_GEN_HD box box_of(int e) const { return box{centres[e], orientations[e], half_extents[e]}; }
  /// The trust margin of track `tr`: trust_margin on a track that passed validation, else 0.
  TRACK_GEN_HD float margin_of(const track_ref& tr) const {
    return (tr.status() & status::valid) != 0u ? trust_margin : 0.0f;
  }
  TRACK_GEN_HD void write(int e, const box_contact& c) const {
    out.contact_flags[e] = c.flags;
    out.clearance[e] = c.clearance;
    out.contact_point[e] = c.nearest;
    out.contact_normal[e] = c.normal;
    out.contact_border[e] = static_cast<int>(c.border);
  }
  TRACK_GEN_HD void operator()(int e) const {
    const track_ref tr = view.track(e);
    write(e, collide_box(tr, box_of(e), hints[e], window, margin_of(tr)));
  }
#if defined(__CUDACC__)
  /// operator()(e) by every lane of a warp (query_kernel calls it on the CUDA backend:
  /// collide_box_warp, with this warp's `storage` in the second form: the same contacts bit for
  /// bit, the O(N) searches shared); `active` false for a lane without an env of its own, which
  /// reads env 0's inputs instead and discards them (as collide_boxes_op::warp).
  static constexpr bool shares_searches = true;  // warp_form_lanes_per_env applies
  using warp_storage = collide_box_warp_storage;
  template <class... Storage>  // none, or this warp's warp_storage
  __device__ void warp(int e, bool active, Storage&... storage) const {
    const int x = active ? e : 0;
    const track_ref tr = view.track(x);
    const box_contact c = collide_box_warp(tr, box_of(x), hints[x], window, margin_of(tr), active, storage...);
    if (active) write(e, c);
  }
#endif
};

}  // namespace track_gen::detail

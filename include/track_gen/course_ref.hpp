#pragma once
/// @file
/// `course_ref`: the trivially copyable view of a whole course (its track batch and the
/// runtime utilities over it), for the user's own kernels and host code.

#include <track_gen/detail/config.hpp>
#include <track_gen/progress_tracker.hpp>
#include <track_gen/track_batch.hpp>
#include <track_gen/track_ref.hpp>

#include <cstddef>

namespace track_gen {

/// Pointers to the box contacts a course's step writes when boxes are bound ([E] each;
/// detail/fields.hpp, TRACK_GEN_CONTACT_FIELDS, lists the fields). Null in a view that has none.
struct contact_arrays {
#define TRACK_GEN_POINTER(name, type, ext, doc) type* name = nullptr;
  TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_POINTER)
#undef TRACK_GEN_POINTER

  /// The arrays of one allocation at `base` laid out by `layout`.
  template <class Layout>
  static contact_arrays at(unsigned char* base, const Layout& layout) {
    contact_arrays a;
    std::size_t i = 0;
#define TRACK_GEN_AT(name, type, ext, doc) a.name = reinterpret_cast<type*>(base + layout.offset[i++]);
    TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_AT)
#undef TRACK_GEN_AT
    return a;
  }
};

/// Trivially copyable view of a course: tracks, gates and progress of every env. Its members
/// are `__host__ __device__` (`step_warp`: `__device__`); every pointer is in the course's
/// memory space. Valid while the course's memory lives.
class course_ref {
 public:
  using pending_step = progress_tracker_ref::pending_step;

  course_ref() = default;
  explicit course_ref(const progress_tracker_ref& progress, const contact_arrays& contacts = {})
      : progress_(progress), contacts_(contacts) {}

  TRACK_GEN_HD int num_envs() const { return progress_.tracks().num_envs(); }
  TRACK_GEN_HD int num_samples() const { return progress_.tracks().num_samples(); }
  TRACK_GEN_HD int max_gates() const { return progress_.tracks().max_gates(); }
  /// The track batch's view, and every track array.
  TRACK_GEN_HD const track_batch_ref& batch() const { return progress_.tracks(); }
  TRACK_GEN_HD const track_arrays& tracks() const { return progress_.tracks().arrays(); }
  /// The progress tracker's view, and every progress array.
  TRACK_GEN_HD const progress_tracker_ref& tracker() const { return progress_; }
  TRACK_GEN_HD const progress_arrays& progress_data() const { return progress_.arrays(); }
  /// The box contacts written by course::step when boxes are bound (course::bind): [E] each,
  /// zero until the first such step.
  TRACK_GEN_HD const contact_arrays& contacts() const { return contacts_; }

  /// The track of env e in [0, num_envs()).
  TRACK_GEN_HD track_ref track(int e) const { return progress_.track(e); }
  /// Gate g of env e.
  TRACK_GEN_HD track_gen::gate gate(int e, int g) const { return progress_.track(e).gate(g); }
  /// Env e's progress state, by value.
  TRACK_GEN_HD progress_state progress(int e) const { return progress_.progress(e); }
  /// Resets env e's progress to the start line (next gate 1, nothing passed, no last position).
  TRACK_GEN_HD void reset_progress(int e) const { progress_.reset(e); }
  /// progress_tracker_ref::spawn: resets env e's progress as if its agent stood at arc length
  /// `s` [m], `lateral` metres left of the centreline (no lap before a full circuit from there).
  TRACK_GEN_HD track_pose spawn(int e, float s, float lateral = 0.0f) const { return progress_.spawn(e, s, lateral); }

  /// progress_tracker_ref::step: advances env e's progress to `p` [m, env-local frame].
  TRACK_GEN_HD void step(int e, float3 p) const { progress_.step(e, p); }
#if defined(__CUDACC__)
  /// progress_tracker_ref::step_warp: step() by the 32 lanes of a warp together (every lane
  /// calls it, converged; lanes without an env pass active = false).
  __device__ void step_warp(int e, float3 p, bool active) const { progress_.step_warp(e, p, active); }
#endif
  /// progress_tracker_ref::begin_step / finish_step: step() in phases.
  TRACK_GEN_HD bool begin_step(int e, float3 p, pending_step& s) const { return progress_.begin_step(e, p, s); }
  TRACK_GEN_HD void finish_step(int e, float3 p, const pending_step& s) const { progress_.finish_step(e, p, s); }

 private:
  progress_tracker_ref progress_;
  contact_arrays contacts_;
};

}  // namespace track_gen

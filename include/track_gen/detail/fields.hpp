#pragma once
/// @file
/// The field tables: every per-env array of a track batch and of the progress state, written
/// down once. Each row is `X(name, element type, extent, description)`:
/// - `extent` is how many elements one env has: `samples` (N), `gates` (G_max) or `env` (1);
/// - the description gives the unit and meaning (it is the Doxygen text of the generated
///   member).
/// The pointer structs (track_arrays, progress_arrays), the byte layouts, the host snapshots,
/// the LibTorch tensors and the Python names are all generated from these rows: adding a field
/// is one row here (plus the code that computes it).

#include <track_gen/detail/config.hpp>

#include <cstddef>
#include <cstdint>

// clang-format off
#define TRACK_GEN_TRACK_FIELDS(X)                                                                                      \
  X(position, float3, samples, "centreline samples, uniform in arc length [m]")                                      \
  X(tangent, float3, samples, "unit tangents (direction of travel)")                                                  \
  X(normal, float3, samples, "unit left normals (horizontal)")                                                        \
  X(half_widths, float2, samples, "road half-widths [m]: x to the left, y to the right of the centreline")            \
  X(curvature, float, samples, "signed curvature [1/m]: positive turning left (a CCW circle of radius R gives +1/R)") \
  X(arc_length, float, samples, "arc length of each sample from the start line, k * L / N [m]")                       \
  X(border_left, float3, samples, "left road edge, position + half_widths.x * normal [m]")                            \
  X(border_right, float3, samples, "right road edge, position - half_widths.y * normal [m]")                          \
  X(gate_centre, float3, gates, "gate centres, on the centreline [m]")                                                \
  X(gate_normal, float3, gates, "unit gate normals: the track tangent, the forward crossing direction")               \
  X(gate_half_width, float, gates, "half-width of each gate's opening [m]")                                          \
  X(gate_arc_length, float, gates, "arc length of each gate from the start line, ascending in [0, L): g * L / G for checkpoints [m]") \
  X(length, float, env, "centreline length L [m]")                                                                    \
  X(num_gates, int, env, "gates in use G = floor(L / spacing), in [1, G_max]")                                        \
  X(status, std::uint32_t, env, "status bits (status.hpp)")                                                           \
  X(episode, std::uint32_t, env, "episode counter")                                                                  \
  X(origin, float3, env, "where the env's track frame lies in the user's frame [m]: nonzero for re-centred user tracks") \
  X(family, int, env, "generator family of a random track (track_gen::generator_family: polar 0, bezier 1, hull 2, voronoi 3, checkpoint 4, repulsive 5); -1 for user tracks and for pipelines whose generate stage is none of random_family, random_any_family, random_polar and the families' own stages") \
  X(trust_radius, float, env, "how far from the centreline a local projection minimum is the nearest point of the whole track [m] (track_ref::project_local): min(S / 2, t) from stages::validate, S the least distance between sections farther apart than its window, t the polyline's least discrete turn radius (at most the accepted turn radius) less what a circle of that radius could return within the window (validate::trusted_turn); 0 for a track that failed validation (and what to write after editing a track's samples in place)")

#define TRACK_GEN_PROGRESS_FIELDS(X)                                                                                   \
  X(next_gate, int, env, "index of the next gate to pass, in [0, G)")                                                 \
  X(laps, int, env, "laps completed since the last reset")                                                            \
  X(gates_passed, int, env, "gates passed in total since the last reset")                                             \
  X(gates_to_lap, int, env, "gates left to pass until the next lap counts (G after a reset; spawn.hpp); on a one-gate track, -k while a backward crossing of the line waits for the forward one that undoes it (then k again)") \
  X(lap_progress, float, env, "arc length of the last projection, in [0, L) [m]")                                     \
  X(lateral, float, env, "signed lateral offset of the last projection, positive left [m]")                           \
  X(hint, int, env, "segment of the last projection (where the next local search starts)")                           \
  X(last_position, float3, env, "last finite position [m]")                                                           \
  X(flags, std::uint32_t, env, "progress_flags bits")                                                              \
  X(checkpoint_passed, int, env, "gate passed in order by the last step (the last of them when several), -1 when none") \
  X(wrong_checkpoint, int, env, "a gate crossed by the last step, either way, other than the next gate and the gates it passed in order, -1 when none") \
  X(held_gate, int, env, "the gate whose centre and normal the next two fields hold (the step's copy of its track's next gate, read in one coalesced load instead of two scattered ones); -1 after a reset or spawn; equal to next_gate after every step that ran its gate tests (a last position before the step, a valid position, next_gate in [0, G))") \
  X(held_gate_centre, float3, env, "centre of gate held_gate, copied from the track [m]")                            \
  X(held_gate_normal, float3, env, "unit normal of gate held_gate, copied from the track")

/// The contact of each env's box with its road band, written by course::step when boxes are
/// bound (collision.hpp collide_box; course.hpp).
#define TRACK_GEN_CONTACT_FIELDS(X)                                                                                    \
  X(contact_flags, std::uint32_t, env, "contact_flags bits (collision.hpp): out_of_bounds, lost, invalid")           \
  X(clearance, float, env, "signed clearance [m]: + distance to the nearer border, - deepest corner penetration; NaN when invalid") \
  X(contact_point, float3, env, "border point facing the critical corner [m], track frame")                          \
  X(contact_normal, float3, env, "unit inward normal of the border there")                                          \
  X(contact_border, int, env, "which border: 0 left, 1 right (border_side)")
// clang-format on

namespace track_gen::detail {

/// How many elements of a field one env has.
enum class extent : int { samples, gates, env };

/// Scalar kind of an element, for the tensors and the Python names.
enum class scalar : int { float32, int32, uint32 };

/// What a row of a field table says about its element type.
template <class T>
struct element_traits;
template <>
struct element_traits<float> {
  static constexpr scalar kind = scalar::float32;
  static constexpr int components = 1;
};
template <>
struct element_traits<float2> {
  static constexpr scalar kind = scalar::float32;
  static constexpr int components = 2;
};
template <>
struct element_traits<float3> {
  static constexpr scalar kind = scalar::float32;
  static constexpr int components = 3;
};
template <>
struct element_traits<int> {
  static constexpr scalar kind = scalar::int32;
  static constexpr int components = 1;
};
template <>
struct element_traits<std::uint32_t> {
  static constexpr scalar kind = scalar::uint32;
  static constexpr int components = 1;
};

/// One row of a field table, as data (for layouts, copies, tensors and the Python names).
struct field_info {
  const char* name;
  extent per_env;
  scalar kind;
  int components;            ///< 3 for float3, 2 for float2, else 1
  std::size_t element_bytes;
  const char* description;
};

/// Elements of one env for an extent.
TRACK_GEN_HD constexpr std::size_t elements_per_env(extent x, int num_samples, int max_gates) {
  return x == extent::samples ? static_cast<std::size_t>(num_samples)
                              : (x == extent::gates ? static_cast<std::size_t>(max_gates) : std::size_t{1});
}

#define TRACK_GEN_FIELD_INFO(name, type, ext, doc) \
  field_info{#name, extent::ext, element_traits<type>::kind, element_traits<type>::components, sizeof(type), doc},
/// The rows of TRACK_GEN_TRACK_FIELDS, in order.
inline constexpr field_info track_fields[] = {TRACK_GEN_TRACK_FIELDS(TRACK_GEN_FIELD_INFO)};
/// The rows of TRACK_GEN_PROGRESS_FIELDS, in order.
inline constexpr field_info progress_fields[] = {TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_FIELD_INFO)};
/// The rows of TRACK_GEN_CONTACT_FIELDS, in order.
inline constexpr field_info contact_fields[] = {TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_FIELD_INFO)};
#undef TRACK_GEN_FIELD_INFO

/// Byte offset of each array in one allocation, env-major, every array 256-byte aligned, for a
/// table of `Count` fields. `bytes` is the whole size.
template <std::size_t Count>
struct soa_layout {
  std::size_t offset[Count] = {};
  std::size_t bytes = 0;

  static soa_layout make(const field_info (&fields)[Count], int num_envs, int num_samples, int max_gates) {
    soa_layout l;
    std::size_t at = 0;
    for (std::size_t i = 0; i < Count; ++i) {
      l.offset[i] = at;
      const std::size_t b = static_cast<std::size_t>(num_envs) *
                            elements_per_env(fields[i].per_env, num_samples, max_gates) * fields[i].element_bytes;
      at = (at + b + 255u) & ~std::size_t{255u};
    }
    l.bytes = at;
    return l;
  }
};

}  // namespace track_gen::detail

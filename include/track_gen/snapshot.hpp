#pragma once
/// @file
/// Host copies of a course's tracks and progress, for inspection, tests and pictures.

#include <track_gen/course_ref.hpp>

#include <cstdint>
#include <vector>

namespace track_gen {

/// Every track array of a course, copied to host memory (layout as in course_ref.hpp).
struct track_snapshot {
  int num_envs = 0, num_samples = 0, max_gates = 0;
  std::vector<float3> position, tangent, normal;   ///< [E * N]
  std::vector<float> half_width, curvature;        ///< [E * N]
  std::vector<float3> gate_centre, gate_normal;    ///< [E * G_max]
  std::vector<float> gate_half_width, gate_arc_length;  ///< [E * G_max]
  std::vector<float> length;                       ///< [E]
  std::vector<int> num_gates;                      ///< [E]
  std::vector<std::uint32_t> status, episode;      ///< [E]

  /// Index of sample k of env e, and of gate g of env e, in the arrays above.
  std::size_t sample_index(int e, int k) const { return static_cast<std::size_t>(e) * num_samples + k; }
  std::size_t gate_index(int e, int g) const { return static_cast<std::size_t>(e) * max_gates + g; }
};

/// The progress state of every env, copied to host memory ([E] each).
struct progress_snapshot {
  std::vector<int> next_gate, laps, gates_passed, hint;
  std::vector<float> lap_progress, lateral;
  std::vector<float3> last_position;
  std::vector<std::uint32_t> flags;
};

}  // namespace track_gen

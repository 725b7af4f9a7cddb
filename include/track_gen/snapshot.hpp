#pragma once
/// @file
/// Host copies of a batch's tracks and of the progress state, for inspection, tests and
/// pictures. Their members are generated from the field tables (detail/fields.hpp): one
/// `std::vector` per field, named as the field, env-major.

#include <track_gen/detail/fields.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace track_gen {

/// Every track array of a batch, copied to host memory: `samples` fields [E * N], `gates`
/// fields [E * G_max], `env` fields [E] (detail/fields.hpp gives each field's unit).
struct track_snapshot {
  int num_envs = 0, num_samples = 0, max_gates = 0;
#define TRACK_GEN_VECTOR(name, type, ext, doc) std::vector<type> name;
  TRACK_GEN_TRACK_FIELDS(TRACK_GEN_VECTOR)

  /// Index of sample k of env e, and of gate g of env e, in the arrays above.
  std::size_t sample_index(int e, int k) const { return static_cast<std::size_t>(e) * num_samples + k; }
  std::size_t gate_index(int e, int g) const { return static_cast<std::size_t>(e) * max_gates + g; }
};

/// The progress state of every env, copied to host memory ([E] each).
struct progress_snapshot {
  TRACK_GEN_PROGRESS_FIELDS(TRACK_GEN_VECTOR)
};

/// Every env's box contact (course::step with boxes bound), copied to host memory ([E] each).
struct contact_snapshot {
  TRACK_GEN_CONTACT_FIELDS(TRACK_GEN_VECTOR)
#undef TRACK_GEN_VECTOR
};

}  // namespace track_gen

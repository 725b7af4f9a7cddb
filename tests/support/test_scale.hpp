#pragma once
/// @file
/// Problem sizes of the tests. `TRACK_GEN_TEST_SCALE=small` (set by scripts/gpu-check for the
/// compute-sanitizer runs, which are 10-100x slower) asks the tests for small batches.

#include <cstdlib>
#include <cstring>

namespace track_gen_test {

/// Whether the environment asks for small problem sizes (TRACK_GEN_TEST_SCALE=small).
inline bool small_scale() {
  const char* s = std::getenv("TRACK_GEN_TEST_SCALE");
  return s != nullptr && std::strcmp(s, "small") == 0;
}

/// `full` normally, `small` under TRACK_GEN_TEST_SCALE=small.
inline int scaled(int full, int small) { return small_scale() ? small : full; }

}  // namespace track_gen_test

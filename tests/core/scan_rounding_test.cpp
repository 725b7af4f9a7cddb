// The host context's inclusive_sum against exact prefix sums: tiles of 64 in float, carried in
// double, stay within a few float ulps of the exact sums at any length (no drift).
#include <doctest/doctest.h>

#include "scan_rounding_cases.hpp"

TEST_CASE("host context: inclusive_sum is within float rounding of the exact prefix sums") {
  for (const int n : scan_rounding_cases::lengths) {
    CAPTURE(n);
    const std::vector<float> in = scan_rounding_cases::inputs(n, static_cast<std::uint32_t>(n));
    const std::vector<float> sums = scan_rounding_cases::host_sums(in);
    // Within a tile an element is rounded at most 8 times in float (pair sum, 5 scan steps, 2
    // finishing adds), the carry once more: 9 ulps (positive inputs: relative to the sum).
    CHECK(scan_rounding_cases::worst_relative_error(in, sums) <= 9.0 * 5.97e-8);
    for (std::size_t i = 1; i < sums.size(); ++i) REQUIRE(sums[i] >= sums[i - 1]);  // positive inputs
  }
}

TEST_CASE("host context: inclusive_sum follows CUB's raking order, not a sequential sum") {
  // A 1 followed by 31 values 2^-24 (half an ulp of 1). Added one by one in float, every sum is a
  // tie that rounds back to 1. CUB's raking order adds pairs first (1 + 2^-24 ties back to 1, the
  // other pairs are 2^-23), scans the pair sums with the shuffle steps, then finishes each pair:
  // element 31 comes to 1 + 28 * 2^-24 (a float32 emulation of those steps, written apart from
  // this code; the CUDA test checks the same order against CUB itself).
  std::vector<float> in(32, 0x1p-24f);
  in[0] = 1.0f;
  const std::vector<float> sums = scan_rounding_cases::host_sums(in);
  CHECK(sums[31] == 1.0f + 14.0f * 0x1p-23f);
  CHECK(sums[1] == 1.0f);
  CHECK(sums[2] == 1.0f);
}

// Cases of the contexts' inclusive_sum (launch_protocol.hpp, scan_tile): the inputs, and the
// check of the host context against an independent reference (a cumulative sum in long double).
#pragma once

#include <track_gen/detail/host/block_context.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace scan_rounding_cases {

/// Lengths around the run (32) and the block sizes, and longer than the largest block.
inline const std::vector<int> lengths = {1, 2, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 1024, 2049, 4099};

/// Chord lengths like resample's: positive, spread over three decades (a fixed LCG, so the
/// inputs are the same on every platform).
inline std::vector<float> inputs(int n, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uint32_t x = seed * 2654435761u + 12345u;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    const float u = static_cast<float>(x >> 8) / 16777216.0f;  // [0, 1)
    f = 0.001f + std::pow(10.0f, 3.0f * u) * 0.01f;
  }
  return v;
}

/// The host context's prefix sums of `in`.
inline std::vector<float> host_sums(std::vector<float> in) {
  const track_gen::detail::host_block_context ctx;
  ctx.inclusive_sum(in.data(), static_cast<int>(in.size()));
  return in;
}

/// Largest relative distance of `sums` from the exact prefix sums of `in` (long double).
inline double worst_relative_error(const std::vector<float>& in, const std::vector<float>& sums) {
  long double exact = 0.0L;
  double worst = 0.0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    exact += in[i];
    worst = std::fmax(worst, static_cast<double>(std::fabs(static_cast<long double>(sums[i]) - exact) / exact));
  }
  return worst;
}

}  // namespace scan_rounding_cases

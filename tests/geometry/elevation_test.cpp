// Host instantiation of elevation_tests.hpp, and the interpolant of stages::elevation_profile
// (detail::fritsch_carlson_slope, detail::hermite) against the double-precision reference.
#include "elevation_tests.hpp"

#include <random>

namespace tg_test {
TEST_CASE_TEMPLATE_APPLY(elevation_sweep, std::tuple<track_gen::host_policy>);
TEST_CASE_TEMPLATE_APPLY(elevation_flat, std::tuple<track_gen::host_policy>);

TEST_CASE("the periodic monotone cubic matches Fritsch-Carlson, stays within its knots, and keeps 1.5 x the steepest secant") {
  namespace d = track_gen::detail;
  std::mt19937 gen(12345);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double worst_value = 0, worst_slope_ratio = 0;
  int outside_piece = 0, not_monotone = 0;
  for (int set = 0; set < 2000; ++set) {
    const int k_n = 3 + static_cast<int>(unit(gen) * 38);
    const double h = 0.1 + 10 * unit(gen);
    std::vector<double> z(static_cast<std::size_t>(k_n));
    for (double& v : z) {
      v = -5 + 10 * unit(gen);
      if (unit(gen) < 0.15) v = std::round(v);  // plateaus and repeated values
    }
    // The float knots the stage would hold; the reference takes the same values in double.
    std::vector<float> zf(z.begin(), z.end());
    for (int k = 0; k < k_n; ++k) z[static_cast<std::size_t>(k)] = zf[static_cast<std::size_t>(k)];
    const reference_pchip ref(z, h);
    std::vector<float> mf(zf.size());
    double steepest = 0;
    for (int k = 0; k < k_n; ++k) {
      const float before = static_cast<float>((zf[k] - zf[(k + k_n - 1) % k_n]) / h);
      const float after = static_cast<float>((zf[(k + 1) % k_n] - zf[k]) / h);
      mf[static_cast<std::size_t>(k)] = d::fritsch_carlson_slope(before, after);
      steepest = std::max(steepest, std::fabs(static_cast<double>(zf[(k + 1) % k_n]) - zf[k]) / h);
    }
    const double range = *std::max_element(z.begin(), z.end()) - *std::min_element(z.begin(), z.end());
    for (int k = 0; k < k_n; ++k) {
      const int k1 = (k + 1) % k_n;
      const double lo = std::min(z[k], z[k1]), hi = std::max(z[k], z[k1]);
      float previous = zf[k];
      for (int i = 0; i <= 64; ++i) {
        const float u = static_cast<float>(i) / 64.0f;
        const float v = d::hermite(zf[k], zf[k1], mf[k], mf[k1], static_cast<float>(h), u);
        const double s = (k + static_cast<double>(u)) * h;
        worst_value = std::max(worst_value, std::fabs(v - ref(std::min(s, k_n * h - 1e-12))) / (range + 1));
        if (!(v >= lo - 1e-5 * (range + 1) && v <= hi + 1e-5 * (range + 1))) ++outside_piece;
        if ((zf[k1] - zf[k]) * (v - previous) < -1e-5 * (range + 1)) ++not_monotone;
        previous = v;
        if (steepest > 0) worst_slope_ratio = std::max(worst_slope_ratio, std::fabs(ref.slope(s < k_n * h ? s : 0)) / steepest);
      }
    }
  }
  MESSAGE("2000 knot sets: largest |float stage - double reference| / (range + 1) " << worst_value
          << ", largest |slope| / steepest secant " << worst_slope_ratio);
  CHECK(worst_value < 1e-5);
  CHECK(outside_piece == 0);
  CHECK(not_monotone == 0);
  CHECK(worst_slope_ratio <= 1.5 + 1e-9);  // the bound the random walk's step size rests on
}

TEST_CASE("elevation parameters out of range are refused with their name and range") {
  namespace tg = track_gen;
  auto p = tg::presets::elevated_drone_track(4);
  p.elevation.knots = 2;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::elevated_track_pipeline, tg::host_policy>(p, 1.0f)),
                       doctest::Contains("track_params.elevation.knots = 2 is out of range: expected [3, 256]"),
                       std::invalid_argument);
  p = tg::presets::elevated_drone_track(4);
  p.elevation.z_max = 0.25f;
  CHECK_THROWS_WITH_AS((tg::course<tg::presets::elevated_track_pipeline, tg::host_policy>(p, 1.0f)),
                       doctest::Contains("track_params.elevation.z_max [m] = 0.25 is out of range"),
                       std::invalid_argument);
}
}  // namespace tg_test

#pragma once
/// @file
/// track_gen::speed_profile against independent references: on a circle the constant
/// min(sqrt(a_lat R), v_max); on the stadium (two 150 m straights, 10 m turns) the closed-form
/// profile of a point mass (corner speed, accelerating out of the turns, braking into them);
/// on both, the result equals a brute-force O(N^2) evaluation of the forward and backward cones
/// in double precision, satisfies every constraint, and the edge cases a_acc = 0 / a_brake = 0.
/// Templated over the backend policy; applied in speed_profile_test.cpp (host) and .cu (CUDA).

#include "progress_harness.hpp"

#include <track_gen/speed_profile.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace progress_test {

#if defined(__CUDACC__)
__global__ void speed_profile_kernel(const tg::course_ref view, tg::speed_limits limits, float* out) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e < view.num_envs()) tg::speed_profile(view.track(e), limits, out + static_cast<std::size_t>(e) * view.num_samples());
}
#endif

/// speed_profile of every env of `r`, run on the rig's backend (one thread per env), [E * N].
template <class Policy>
std::vector<float> speed_profiles(rig<Policy>& r, const tg::speed_limits& limits) {
  const tg::course_ref view = r.course().view();
  const std::size_t count = static_cast<std::size_t>(view.num_envs()) * view.num_samples();
  typename rig<Policy>::template buffer<float> out(count);
  if constexpr (std::is_same_v<typename Policy::backend_type, tg::backend::host>) {
    for (int e = 0; e < view.num_envs(); ++e) tg::speed_profile(view.track(e), limits, out.data() + static_cast<std::size_t>(e) * view.num_samples());
  } else {
#if defined(__CUDACC__)
    speed_profile_kernel<<<1, 32, 0, r.stream().raw()>>>(view, limits, out.data());
    check_cuda(cudaGetLastError(), "speed_profile_kernel");
#endif
  }
  return out.download(r.stream());
}

/// The largest profile under v_lim with both constraints, by brute force in double: the
/// forward cones of every sample (F), then the backward cones of F (the two passes of the
/// library composed the same way, evaluated over every pair instead of one sweep).
inline std::vector<double> brute_force_profile(const std::vector<double>& vlim, double ds, double acc, double brake) {
  const std::size_t n = vlim.size();
  // Every sample k under the cone of every sample j, at `a` per metre of the loop from j to k
  // (forward: j before k; backward: j after k).
  auto cones = [&](const std::vector<double>& v, double a, bool forward) {
    std::vector<double> out(n);
    for (std::size_t k = 0; k < n; ++k) {
      double best = v[k];
      for (std::size_t j = 0; j < n; ++j) {
        const double d = static_cast<double>((forward ? k + n - j : j + n - k) % n) * ds;
        best = std::min(best, std::sqrt(v[j] * v[j] + 2.0 * a * d));
      }
      out[k] = best;
    }
    return out;
  };
  return cones(cones(vlim, acc, true), brake, false);
}

TEST_CASE_TEMPLATE_DEFINE("speed_profile: circle, stadium in closed form, brute-force cones, constraints", Policy,
                          speed_profile_cases) {
  const circle c{40.0};
  const stadium st{75.0, 10.0};
  tg::track_params params = user_track_params(2);
  rig<Policy> r(params, 10.0f, centreline({c.polyline(2000), st.polyline(2000)}));
  const tg::track_snapshot t = r.tracks();
  require_valid_user_tracks(t);
  const int n = t.num_samples;

  struct variant {
    tg::speed_limits limits;
    const char* name;
  };
  const variant variants[] = {
      {{9.0f, 3.0f, 6.0f, 25.0f}, "a_lat 9, acc 3, brake 6, v_max 25"},
      {{9.0f, 0.0f, 6.0f, 25.0f}, "no acceleration"},
      {{9.0f, 3.0f, 0.0f, 25.0f}, "no braking"},
      {{9.0f, 3.0f, 6.0f, 5.0f}, "v_max below every corner speed"},
  };
  for (const variant& v : variants) {
    CAPTURE(v.name);
    tg::check_speed_limits(v.limits);
    const std::vector<float> speed = speed_profiles(r, v.limits);
    const double a_lat = v.limits.lateral_acceleration, acc = v.limits.acceleration, brake = v.limits.braking,
                 vmax = v.limits.max_speed;
    for (int e = 0; e < 2; ++e) {
      CAPTURE(e);
      const double length = t.length[static_cast<std::size_t>(e)], ds = length / n;
      const float* s = speed.data() + static_cast<std::size_t>(e) * n;
      // The limit from the stored curvature, in double, and the brute-force answer.
      std::vector<double> vlim(static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k) {
        const double kappa = std::fabs(static_cast<double>(t.curvature[t.sample_index(e, k)]));
        vlim[static_cast<std::size_t>(k)] = kappa > 0 ? std::min(vmax, std::sqrt(a_lat / kappa)) : vmax;
      }
      const std::vector<double> ref = brute_force_profile(vlim, ds, acc, brake);
      double worst_ref = 0, worst_fwd = 0, worst_bwd = 0;
      for (int k = 0; k < n; ++k) {
        const double vk = s[k], vn = s[(k + 1) % n], rk = ref[static_cast<std::size_t>(k)];
        worst_ref = std::max(worst_ref, std::fabs(vk - rk) / std::max(rk, 1.0));
        worst_fwd = std::max(worst_fwd, vn * vn - (vk * vk + 2.0 * acc * ds));
        worst_bwd = std::max(worst_bwd, vk * vk - (vn * vn + 2.0 * brake * ds));
        CHECK(vk <= vlim[static_cast<std::size_t>(k)] * (1 + 1e-5));
      }
      CHECK(worst_ref < 1e-5);                // float against double
      CHECK(worst_fwd < 1e-4 * vmax * vmax);  // the constraints, up to float rounding
      CHECK(worst_bwd < 1e-4 * vmax * vmax);

      // Closed form, from the geometry alone (not from the stored curvature): the corner speed
      // in the turns; on the straights the least of v_max, accelerating out of the last turn
      // and braking into the next. The discrete curvature ramps over the samples next to a
      // straight/turn junction, which moves the cones by about a sample: each sample must lie
      // within the range the closed form takes over +-1.5 samples of its arc length, up to
      // 0.5 % (the curvature of a resampled polyline is noisy by about 0.6 %).
      const double corner = std::min(vmax, std::sqrt(a_lat * (e == 0 ? c.r : st.r)));
      auto expected = [&](double arc) {
        if (e == 0) return corner;
        const double straight = 2 * st.a, turn = pi * st.r;
        const double u = wrap_arc(arc, straight + turn);  // position within straight + turn
        if (u >= straight) return corner;
        const double out = std::sqrt(corner * corner + 2 * acc * u);                 // out of a turn
        const double in = std::sqrt(corner * corner + 2 * brake * (straight - u));  // into the next
        return std::min({vmax, out, in});
      };
      double worst_shape = 0;
      for (int k = 0; k < n; ++k) {
        const double arc = static_cast<double>(k) * ds;
        double lo = expected(arc), hi = lo;
        if (e == 1) {
          for (int i = -6; i <= 6; ++i) {
            const double x = expected(arc + 0.25 * i * ds);
            lo = std::min(lo, x);
            hi = std::max(hi, x);
          }
        }
        const double tol = 5e-3;
        const double off = s[k] < lo ? (lo - s[k]) / lo : s[k] > hi ? (s[k] - hi) / hi : 0.0;
        worst_shape = std::max(worst_shape, off);
        CHECK(off <= tol);
      }
      MESSAGE("env " << e << ": largest relative distance to the closed form's range " << worst_shape);
    }
  }
}

TEST_CASE("check_speed_limits names the field and its range") {
  auto message = [](tg::speed_limits l) -> std::string {
    try {
      tg::check_speed_limits(l);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  CHECK(message({0.0f, 1.0f, 1.0f, 1.0f}).find("speed_limits.lateral_acceleration = 0") != std::string::npos);
  CHECK(message({1.0f, -1.0f, 1.0f, 1.0f}).find("speed_limits.acceleration = -1") != std::string::npos);
  CHECK(message({1.0f, 1.0f, std::nanf(""), 1.0f}).find("speed_limits.braking") != std::string::npos);
  CHECK(message({1.0f, 1.0f, 1.0f, 0.0f}).find("speed_limits.max_speed = 0") != std::string::npos);
  CHECK(message({1.0f, 0.0f, 0.0f, 1.0f}) == "no exception");
}

}  // namespace progress_test

#pragma once
/// @file
/// The curvature-limited speed profile of a track: the fastest speed at each sample that a
/// point mass can hold with bounded lateral acceleration, acceleration and braking, around the
/// closed loop. A device function over one env's `track_ref` (one thread per env, in your
/// kernel or on the host); the runtime utility that fills a batch's profile for the
/// regenerated envs is not written yet (issue 14).

#include <track_gen/detail/config.hpp>
#include <track_gen/detail/math.hpp>
#include <track_gen/track_ref.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace track_gen {

/// Limits of the speed profile. Every field must be set (no defaults: they depend on the
/// vehicle and the track's scale); check_speed_limits says what is valid.
struct speed_limits {
  float lateral_acceleration;  ///< a_lat [m/s^2], > 0: corner speed sqrt(a_lat / |curvature|)
  float acceleration;          ///< a_acc [m/s^2], >= 0: v[k+1]^2 <= v[k]^2 + 2 a_acc ds
  float braking;               ///< a_brake [m/s^2], >= 0: v[k]^2 <= v[k+1]^2 + 2 a_brake ds
  float max_speed;             ///< v_max [m/s], > 0: the speed on straights
};

/// Throws std::invalid_argument naming the first field that is not finite or out of range
/// (lateral_acceleration > 0, acceleration >= 0, braking >= 0, max_speed > 0). Host only.
inline void check_speed_limits(const speed_limits& l) {
  auto bad = [](const char* name, float v, const char* range) {
    throw std::invalid_argument(std::string("track_gen: speed_limits.") + name + " = " + std::to_string(v) +
                                ", expected a finite value " + range);
  };
  if (!(std::isfinite(l.lateral_acceleration) && l.lateral_acceleration > 0.0f))
    bad("lateral_acceleration", l.lateral_acceleration, "> 0 [m/s^2]");
  if (!(std::isfinite(l.acceleration) && l.acceleration >= 0.0f)) bad("acceleration", l.acceleration, ">= 0 [m/s^2]");
  if (!(std::isfinite(l.braking) && l.braking >= 0.0f)) bad("braking", l.braking, ">= 0 [m/s^2]");
  if (!(std::isfinite(l.max_speed) && l.max_speed > 0.0f)) bad("max_speed", l.max_speed, "> 0 [m/s]");
}

/// Writes the speed profile of `track` to `speed` [N] (m/s; same memory space as the code that
/// calls it): v_lim = min(sqrt(a_lat / |curvature|), v_max) at each sample, then one forward
/// pass (acceleration) and one backward pass (braking) around the loop, both starting at the
/// sample of least v_lim, spaced ds = L / N. Starting there makes one lap of each pass exact:
/// the speed at that sample is its limit in the answer, so no constraint reaches across it;
/// the result is the largest profile under v_lim with both constraints (the forward-backward
/// integration of racing-line speed planning, e.g. N. R. Kapania, J. Subosits and J. C. Gerdes,
/// "A Sequential Two-Step Algorithm for Fast Generation of Vehicle Racing Trajectories", ASME
/// J. Dyn. Sys., Meas., Control 138(9), 2016). O(N), synchronous, allocates nothing; `limits`
/// must pass check_speed_limits (not checked here: device code).
TRACK_GEN_HD inline void speed_profile(const track_ref& track, const speed_limits& limits, float* speed) {
  const int n = track.num_samples();
  const float ds = track.sample_spacing();
  const float vmax = limits.max_speed;
  int slowest = 0;
  for (int k = 0; k < n; ++k) {
    const float kappa = std::fabs(track.curvature(k));
    const float v = kappa * vmax * vmax > limits.lateral_acceleration ? std::sqrt(limits.lateral_acceleration / kappa) : vmax;
    speed[k] = v;
    if (v < speed[slowest]) slowest = k;
  }
  const float up = 2.0f * limits.acceleration * ds, down = 2.0f * limits.braking * ds;
  for (int i = 1; i < n; ++i) {  // forward, from the slowest sample
    const int k = (slowest + i) % n, prev = (slowest + i - 1) % n;
    speed[k] = detail::min_f(speed[k], std::sqrt(speed[prev] * speed[prev] + up));
  }
  for (int i = 1; i < n; ++i) {  // backward, from the slowest sample
    const int k = (slowest - i + n) % n, next = (slowest - i + 1 + n) % n;
    speed[k] = detail::min_f(speed[k], std::sqrt(speed[next] * speed[next] + down));
  }
}

}  // namespace track_gen

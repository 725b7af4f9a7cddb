"""The kinematic bicycle model of :class:`~track_gen.envs.CarRacingVecEnv`, on batches of torch tensors.

Model (rear-axle reference point, no tyre slip): R. Rajamani, *Vehicle Dynamics and Control*,
2nd ed., Springer 2012, section 2.2 (kinematic model of lateral vehicle motion), with the
reference point at the rear axle (l_r = 0, so the slip angle beta is 0)::

    x' = v cos(psi)      y' = v sin(psi)      psi' = v tan(delta) / L      v' = a

For a constant steering angle delta the path is a circle of radius ``R = L / tan(delta)`` whatever
the speed does, so one step is integrated exactly along that arc: the distance travelled
``d = (v + v_next) dt / 2`` (v_next = v + a dt clamped to the speed limits), the heading change
``dpsi = d tan(delta) / L``, and the chord ``2 R sin(dpsi / 2) = d sinc(dpsi / 2)`` along
``psi + dpsi / 2``. Only the speed ramp is approximated (the trapezoid is exact unless the clamp
cuts the ramp inside the step).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = ["BicycleConfig", "bicycle_step"]


@dataclass(frozen=True)
class BicycleConfig:
    """Car parameters. Defaults: a 1/10-scale race car (F1TENTH-like wheelbase) sized for the
    ``track`` preset's circuits (half-width 0.3 m, curvature up to about 2.2 1/m)."""
    wheelbase: float = 0.26      #: L [m], rear axle to front axle, > 0
    max_steer: float = 0.55      #: [rad] steering angle at action +-1 (tightest radius L / tan = 0.42 m), in (0, pi/2)
    max_accel: float = 4.0       #: [m/s^2] at throttle +1, >= 0
    max_brake: float = 6.0       #: [m/s^2] deceleration at throttle -1, >= 0
    min_speed: float = 0.0       #: [m/s] lower speed limit (0: braking stops the car, no reverse)
    max_speed: float = 3.0       #: [m/s] upper speed limit, > min_speed
    dt: float = 0.05             #: [s] time step, > 0

    def __post_init__(self):
        for name in ("wheelbase", "max_steer", "max_accel", "max_brake", "min_speed", "max_speed", "dt"):
            value = getattr(self, name)   # each field a finite number first, so that a range check names its own field
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ValueError(f"BicycleConfig.{name} = {value!r}: expected a finite number (see its doc)")
        checks = [("wheelbase", self.wheelbase > 0), ("max_steer", 0 < self.max_steer < math.pi / 2),
                  ("max_accel", self.max_accel >= 0), ("max_brake", self.max_brake >= 0),
                  ("max_speed", self.max_speed > self.min_speed), ("dt", self.dt > 0)]
        for name, ok in checks:
            value = getattr(self, name)
            if not (ok and math.isfinite(value)):
                raise ValueError(f"BicycleConfig.{name} = {value} is out of range (see its doc)")


def bicycle_step(x, y, yaw, speed, steer, throttle, cfg: BicycleConfig, scratch=None) -> None:
    """Advances every car one step of ``cfg.dt`` in place (see the module docstring).

    Args:
        x, y, yaw, speed: float ``[E]`` tensors [m, m, rad, m/s], updated in place; yaw is
            wrapped into [-pi, pi).
        steer, throttle: float ``[E]`` actions in [-1, 1] (not clamped here): steering angle
            ``steer * max_steer`` (positive turns left), acceleration ``throttle * max_accel`` when
            throttle >= 0, else ``throttle * max_brake``.
        scratch: optional list of four float ``[E]`` tensors like ``x`` used as work space, so
            that the step allocates nothing (CUDA-graph capture); None allocates them.
    All tensors on one device, one dtype. No host synchronisation.
    """
    import torch  # noqa: PLC0415 - torch is needed only when stepping

    if scratch is None:
        scratch = [torch.empty_like(x) for _ in range(4)]
    accel, dist, dpsi, tmp = scratch
    # Acceleration: throttle scales max_accel forward and max_brake backward.
    _accel(throttle, cfg, accel, tmp)
    # Speed ramp, clamped; distance by the trapezoid rule.
    torch.mul(accel, cfg.dt, out=tmp)
    tmp.add_(speed).clamp_(cfg.min_speed, cfg.max_speed)          # v_next
    torch.add(speed, tmp, out=dist).mul_(0.5 * cfg.dt)             # d = (v + v_next) dt / 2
    speed.copy_(tmp)
    # Heading change along the arc of radius L / tan(delta).
    torch.mul(steer, cfg.max_steer, out=tmp).tan_()
    torch.mul(dist, tmp, out=dpsi).div_(cfg.wheelbase)
    # Chord length d sinc(dpsi / 2) (torch.sinc(t) = sin(pi t) / (pi t), 1 at 0).
    torch.div(dpsi, 2.0 * math.pi, out=tmp).sinc_()
    dist.mul_(tmp)
    torch.mul(dpsi, 0.5, out=tmp).add_(yaw)                        # chord direction
    torch.addcmul(x, dist, torch.cos(tmp, out=accel), out=x)
    torch.addcmul(y, dist, torch.sin(tmp, out=accel), out=y)
    yaw.add_(dpsi).add_(math.pi).remainder_(2.0 * math.pi).sub_(math.pi)


def _accel(throttle, cfg: BicycleConfig, out, tmp):
    """out = throttle * (max_accel if throttle >= 0 else max_brake), without allocating."""
    import torch  # noqa: PLC0415
    torch.clamp(throttle, min=0.0, out=out).mul_(cfg.max_accel)
    torch.clamp(throttle, max=0.0, out=tmp).mul_(cfg.max_brake)
    out.add_(tmp)
    return out

"""Scripted drivers for :class:`~track_gen.envs.CarRacingVecEnv`: baselines and test drivers that
read only the observation."""
from __future__ import annotations

__all__ = ["pure_pursuit"]


def pure_pursuit(config, obs, index: int = 1, target_speed: float = 1.5):
    """Actions of a pure-pursuit driver (R. C. Coulter, "Implementation of the Pure Pursuit Path
    Tracking Algorithm", CMU-RI-TR-92-01, 1992): the steering angle ``atan(2 L y / d^2)`` of the
    arc through look-ahead point ``index`` (at (x, y) in the car's frame, d its distance, L the
    wheelbase), and a proportional throttle toward ``target_speed`` [m/s].

    Args:
        config: the env's :class:`~track_gen.envs.CarRacingConfig`.
        obs: float32 ``[E, D]`` observations of that env.
        index: which look-ahead point, in [0, K).
    Returns:
        float32 ``[E, 2]`` actions (steer, throttle) in [-1, 1], on obs' device (a new tensor).
    """
    import torch  # noqa: PLC0415

    K = config.look_ahead_points
    car = config.car
    p = obs[:, : 2 * K].view(-1, K, 2)[:, index]
    delta = torch.atan(2 * car.wheelbase * p[:, 1] / (p * p).sum(-1).clamp_min(1e-6))
    speed = obs[:, 2 * K] * car.max_speed
    return torch.stack([(delta / car.max_steer).clamp(-1, 1), (2 * (target_speed - speed)).clamp(-1, 1)], 1)

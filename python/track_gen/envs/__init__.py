"""Reinforcement-learning environments on track_gen courses (need torch, gymnasium and the extension).

- :class:`CarRacingVecEnv` / :class:`CarRacingConfig`: car racing with a kinematic bicycle model on
  a batch of generated tracks, a Gymnasium ``VectorEnv`` with torch tensors in and out (CPU or
  CUDA, same-step autoreset, one CUDA graph per step with :meth:`CarRacingVecEnv.capture`).
- :class:`BicycleConfig`, :func:`bicycle_step`: the car model on its own.
- :func:`pure_pursuit`: a scripted driver from the observation (a baseline).
"""
from .bicycle import BicycleConfig, bicycle_step
from .car_racing import CarRacingConfig, CarRacingVecEnv
from .drivers import pure_pursuit

__all__ = ["BicycleConfig", "CarRacingConfig", "CarRacingVecEnv", "bicycle_step", "pure_pursuit"]

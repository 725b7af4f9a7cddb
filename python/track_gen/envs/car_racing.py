"""``CarRacingVecEnv``: car racing on a batch of generated tracks, every env's state in torch
tensors on the course's device (CPU or CUDA), behind Gymnasium's ``VectorEnv`` API.

::

    from track_gen.envs import CarRacingConfig, CarRacingVecEnv

    env = CarRacingVecEnv(CarRacingConfig(num_envs=4096, device="cuda:0"))
    obs, infos = env.reset(seed=0)                  # float32 [E, D] tensor on the env's device
    env.capture()                                   # CUDA: record one step as a CUDA graph
    for _ in range(1000):
        obs, reward, terminated, truncated, infos = env.step(policy(obs))   # [E, 2] in [-1, 1]

Autoreset: Gymnasium's ``AutoresetMode.SAME_STEP`` (``env.metadata["autoreset_mode"]``): an env
whose episode ends in a step is reset within that step; the observation returned for it is the
first observation of its new episode, on a new track (``course.regenerate(advance=True)``), and
its last observation is ``infos["final_obs"]`` (rows where ``infos["_final_obs"]`` is True).

The returned tensors (obs, reward, terminated, truncated and the tensors in infos) are buffers
of the env, overwritten by the next ``step`` / ``reset`` (so that a captured graph replays into
them): ``.clone()`` what you keep past the next call.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Optional

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..course import Course, progress_flag_bits
from ..pipeline import presets
from .bicycle import BicycleConfig, bicycle_step

__all__ = ["CarRacingConfig", "CarRacingVecEnv"]


@dataclass(frozen=True)
class CarRacingConfig:
    """Environment parameters (units in brackets). Rewards are per step."""
    num_envs: int = 64                  #: E, environments (one track and one car each)
    device: str = "cpu"                 #: "cpu" or a CUDA device ("cuda:0")
    seed: int = 0                       #: seed of the tracks and of the spawn draws (``reset(seed=)`` replaces it)
    track_overrides: dict = field(default_factory=dict)  #: parameters of ``presets.track`` (e.g. num_samples=256)
    checkpoint_spacing: float = 0.6     #: [m] gate spacing of the course (laps are counted through gates)
    car: BicycleConfig = field(default_factory=BicycleConfig)  #: the kinematic bicycle (and dt)
    look_ahead_points: int = 10         #: K centreline points in the observation
    look_ahead_spacing: float = 0.4     #: [m] arc length between them (the first one that far ahead)
    laps_to_finish: int = 2             #: an episode terminates when this many laps are completed
    off_road_timeout: float = 1.0       #: [s] an episode terminates after longer than this off the road without a break
    max_episode_steps: int = 1000       #: an episode is truncated after this many steps (50 s at dt = 0.05 s)
    progress_weight: float = 1.0        #: reward per metre of signed progress along the centreline [1/m]
    progress_cap: bool = True           #: credit progress only up to half a gate spacing past the next gate in order
    off_road_penalty: float = 1.0       #: reward -off_road_penalty * dt per step off the road [1/s]
    lap_bonus: float = 10.0             #: reward per lap completed
    spawn_lateral: float = 0.1          #: [m] spawns are uniform in [-spawn_lateral, spawn_lateral] off the centreline
    initial_speed: float = 0.0          #: [m/s] speed at a spawn

    def __post_init__(self):
        def bad(name, why):
            raise ValueError(f"CarRacingConfig.{name} = {getattr(self, name)!r}: {why}")
        # The course's range (track_params.num_envs), checked here, before the env's own buffers
        # of E rows are allocated (at 2**31 envs the first of them failed with a MemoryError).
        if isinstance(self.num_envs, bool) or not isinstance(self.num_envs, int) or not 1 <= self.num_envs <= 2**30:
            bad("num_envs", "expected an int in [1, 2**30]")
        # reset(seed=)'s range: a seed accepted here must be one reset(seed=config.seed) takes.
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or not 0 <= self.seed < 2**63:
            bad("seed", "expected an int in [0, 2**63)")
        if not isinstance(self.car, BicycleConfig):
            bad("car", "expected a BicycleConfig")
        # Type first, so that a string or a bool gets this message rather than a failed comparison.
        for name in ("checkpoint_spacing", "look_ahead_spacing", "off_road_timeout", "spawn_lateral", "initial_speed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                bad(name, "expected a number")
        for name in ("look_ahead_points", "laps_to_finish", "max_episode_steps"):
            if isinstance(getattr(self, name), bool):
                bad(name, "expected an int, not a bool")
        if not isinstance(self.track_overrides, dict):
            bad("track_overrides", "expected a dict of presets.track parameters")
        clash = sorted(set(self.track_overrides) & {"num_envs", "seed", "device"})
        if clash:
            bad("track_overrides", f"{clash} are CarRacingConfig's own fields: set them there, not in track_overrides")
        try:  # before any tensor is made on it: torch's own message for "mps" is a dispatcher dump
            presets._device_string(self.device)
        except (TypeError, ValueError) as err:
            bad("device", str(err))
        if not isinstance(self.look_ahead_points, int) or self.look_ahead_points < 1:
            bad("look_ahead_points", "expected an int >= 1")
        if not (math.isfinite(self.look_ahead_spacing) and self.look_ahead_spacing > 0):
            bad("look_ahead_spacing", "expected a finite number > 0 [m]")
        if not isinstance(self.laps_to_finish, int) or self.laps_to_finish < 1:
            bad("laps_to_finish", "expected an int >= 1")
        if not isinstance(self.max_episode_steps, int) or self.max_episode_steps < 1:
            bad("max_episode_steps", "expected an int >= 1")
        if not (self.off_road_timeout >= 0 and math.isfinite(self.off_road_timeout)):
            bad("off_road_timeout", "expected a finite number >= 0 [s]")
        if not (self.spawn_lateral >= 0 and math.isfinite(self.spawn_lateral)):
            bad("spawn_lateral", "expected a finite number >= 0 [m]")
        if not (self.car.min_speed <= self.initial_speed <= self.car.max_speed):
            bad("initial_speed", "expected within the car's [min_speed, max_speed]")
        for name in ("progress_weight", "off_road_penalty", "lap_bonus"):  # NaN or Inf would poison every reward
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                bad(name, "expected a finite number")

    @property
    def observation_size(self) -> int:
        """D = 2 K + 5: K look-ahead points (x, y), speed, lateral offset, heading error, previous action."""
        return 2 * self.look_ahead_points + 5


class CarRacingVecEnv(VectorEnv):
    """E cars, each on its own generated track (a :class:`~track_gen.course.Course`), stepped together.

    **Actions**: float32 ``[E, 2]`` in [-1, 1] (clamped; NaN read as 0): steering (positive
    turns left, times ``car.max_steer``) and throttle (>= 0: times ``car.max_accel``; < 0:
    braking, times ``car.max_brake``). Physics: :func:`~track_gen.envs.bicycle.bicycle_step`.

    **Observations**: float32 ``[E, D]``, D = 2K + 5 (``config.observation_size``), per env:

    - ``[0 : 2K]``: the next K centreline points (``course.track_ahead``), (x forward, y left)
      pairs in the car's frame [m], spaced ``look_ahead_spacing`` in arc length from the car's
      foot on the centreline;
    - ``[2K]``: speed / ``car.max_speed``;
    - ``[2K + 1]``: lateral offset n / half-width of the road on that side (positive left;
      beyond +-1 is off the road);
    - ``[2K + 2]``: heading error, the car's yaw minus the centreline's heading, in [-pi, pi] [rad];
    - ``[2K + 3 : 2K + 5]``: the previous action (steer, throttle) after clamping (0 after a spawn).

    **Reward** per step: ``progress_weight * dP - off_road_penalty * dt * off_road + lap_bonus * lap``,
    off_road the course step's ``off_track`` flag (``|lateral| > half-width``), lap its
    ``lap_completed`` flag, and dP the change of the credited progress ``P = min(S, C)`` [m]:
    S the episode's signed progress, the sum of ``ds = course.progress_delta(s_prev, s)`` of the
    car's foot on the centreline (wrap-aware at the start line); C the arc length from the spawn
    to the next gate in order plus half a gate spacing (gates are passed in order only, so C
    grows by one spacing per gate passed). Without the cap (``progress_cap=False``: P = S) a car
    cutting across the infield, where the foot jumps to a part of the track further on, is paid
    the jump: PPO found that (docs/envs.md); with it, the jump earns at most half a gate spacing
    until the skipped gate is passed.

    **Episodes** terminate when ``laps_to_finish`` laps are completed or the car has been off the
    road for longer than ``off_road_timeout`` without a break; they are truncated after
    ``max_episode_steps`` steps. Done envs are reset in the same step (``AutoresetMode.SAME_STEP``):
    a new track (``regenerate(mask, advance=True)``), a spawn at a uniformly random arc length and
    lateral offset (``course.spawn``), heading along the centreline, speed ``initial_speed``.

    **Infos** (tensors, valid in the rows where their ``_key`` mask is True):
    ``final_obs`` [E, D] (last observation of the episode that ended), ``_final_obs`` bool [E];
    ``final_info`` dict of [E] tensors about that episode: ``progress`` [m] (credited, P),
    ``raw_progress`` [m] (S), ``laps`` int32, ``length`` int32 steps, ``return``;
    ``_final_info`` bool [E]; and per step ``off_road`` bool [E], ``laps`` int32 [E] (laps of the
    current episode), ``episode`` int32 [E] (each env's track episode, ``course.tracks.episode``).

    After the first step, :meth:`step` allocates nothing and never synchronises with the host,
    so :meth:`capture` can record it into one CUDA graph. Spawn draws come from a
    ``torch.Generator`` on the env's device seeded by ``reset(seed=)`` (or ``config.seed``).

    Raises (constructor): ValueError for bad config values; the errors of :class:`Course`.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, config: Optional[CarRacingConfig] = None, **kwargs):
        """``config`` or the fields of a :class:`CarRacingConfig` as keyword arguments."""
        if config is None:
            config = CarRacingConfig(**kwargs)
        elif kwargs:
            config = dataclasses.replace(config, **kwargs)
        self.config = config
        self.num_envs = config.num_envs
        self.device = torch.device(config.device)
        if self.device.type == "cuda" and self.device.index is None:   # "cuda": the current device, by index
            self.device = torch.device("cuda", torch.cuda.current_device())
        E, D = config.num_envs, config.observation_size
        # Bounds where they are known: speed ratio, heading error, previous action; the look-ahead
        # points and the lateral offset are unbounded (a car may wander off before the timeout).
        K = config.look_ahead_points
        low, high = np.full(D, -np.inf, np.float32), np.full(D, np.inf, np.float32)
        low[2 * K], high[2 * K] = config.car.min_speed / config.car.max_speed, 1.0
        low[2 * K + 2], high[2 * K + 2] = -np.pi, np.pi
        low[2 * K + 3:], high[2 * K + 3:] = -1.0, 1.0
        self.single_observation_space = gymnasium.spaces.Box(low, high, (D,), np.float32)
        self.single_action_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, E)
        self.action_space = batch_space(self.single_action_space, E)
        self.max_episode_length = config.max_episode_steps

        dev = self.device
        zeros = lambda *shape, dtype=torch.float32: torch.zeros(*shape, dtype=dtype, device=dev)  # noqa: E731
        # Car state and actions.
        self.x, self.y, self.yaw, self.speed = zeros(E), zeros(E), zeros(E), zeros(E)
        self.position = zeros(E, 3)          # bound to the course: (x, y, centreline height)
        self.actions = zeros(E, 2)           # the step's input buffer (what a captured graph reads)
        self.prev_actions = zeros(E, 2)
        self._scratch = [zeros(E) for _ in range(4)]
        # Episode bookkeeping.
        self.s_prev = zeros(E)
        self.off_road_time = zeros(E)
        self.episode_length_buf = zeros(E, dtype=torch.int32)
        self.episode_return = zeros(E)
        self.episode_progress = zeros(E)     # S: signed progress of the foot since the spawn [m]
        self.credited_progress = zeros(E)    # P = min(S, C) [m]
        self._cap_base = zeros(E)            # C - gates_passed * spacing: to the first gate ahead + margin
        # Outputs.
        self.obs = zeros(E, D)
        self.final_obs = zeros(E, D)
        self.reward = zeros(E)
        self.terminated = zeros(E, dtype=torch.bool)
        self.truncated = zeros(E, dtype=torch.bool)
        self.done = zeros(E, dtype=torch.bool)
        self.off_road = zeros(E, dtype=torch.bool)
        self.final_info = {"progress": zeros(E), "raw_progress": zeros(E), "laps": zeros(E, dtype=torch.int32),
                           "length": zeros(E, dtype=torch.int32), "return": zeros(E)}
        # Work space.
        self._flag_bits = zeros(E, dtype=torch.int32)
        self._lap = zeros(E, dtype=torch.bool)
        self._off_road_f, self._lap_f = zeros(E), zeros(E)
        self._tmp = zeros(E)
        self._tmp_bool = zeros(E, dtype=torch.bool)
        self._segment = zeros(E, 1, dtype=torch.int64)
        self._hw = zeros(E, 1)
        self._hw_right = zeros(E, 1)
        self._u = zeros(E)
        self._gate_index = zeros(E, 1, dtype=torch.int64)
        self._gate_arc = zeros(E, 1)
        self._spacing = zeros(E)
        self._count_f = zeros(E)      # an int32 count as float (mixed dtypes would allocate a converted copy)
        self._spawn_s = zeros(E)
        self._spawn_lateral = zeros(E)
        self._mask = zeros(E, dtype=torch.bool)
        self._generator = torch.Generator(device=dev)
        bits = progress_flag_bits()
        self._off_track_bit, self._lap_bit = bits["off_track"], bits["lap_completed"]
        self._graph = None
        self._build_course(config.seed)

    # ---- construction and resets --------------------------------------------------------------

    def _build_course(self, seed: int) -> None:
        """A fresh course (episode 0 of every track of ``seed``), positions bound, spawn
        generator seeded with ``seed``. Drops a captured graph (it recorded the old course)."""
        cfg = self.config
        params = presets.track(cfg.num_envs, device=str(self.device), seed=int(seed), **cfg.track_overrides)
        self.course = None     # the old course's memory goes before the new one is allocated
        self._graph = None
        self.course = Course.track(params, checkpoint_spacing=cfg.checkpoint_spacing)
        self.course.bind(position=self.position)
        self._generator.manual_seed(int(seed))
        self._seed = int(seed)
        self._fresh = True     # no episode has used these tracks yet: the first reset keeps them
        self._graph = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Starts a new episode in every env (or in those of ``options["reset_mask"]``).

        Args:
            seed: None: every env moves to its next track (``regenerate(advance=True)``; the
                first reset after construction keeps the tracks it built). An int in [0, 2**63):
                the course is rebuilt with this seed (episode 0 of its tracks) and the spawn
                generator reseeded, so ``reset(seed=s)`` then the same actions give the same
                episodes; this allocates and drops a graph recorded by :meth:`capture`
                (capture again after it).
            options: ``{"reset_mask": bool [E] tensor}`` to reset only those envs (Gymnasium's
                partial reset); other keys are refused.
        Returns:
            (obs float32 [E, D], infos dict) as in :meth:`step`, the buffers of the env.
        Raises:
            ValueError: an unknown option, a bad mask, a mask that leaves envs out of the first
                reset or of a reset whose seed rebuilds the tracks, a seed out of range.
            TypeError: ``options`` not a dict.
        """
        self._check_open("reset")
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"CarRacingVecEnv.reset: options must be a dict or None, got {type(options).__name__}")
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"CarRacingVecEnv.reset: unknown options {sorted(options)}; expected 'reset_mask'")
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2**63:
                raise ValueError(f"CarRacingVecEnv.reset: seed = {seed!r}, expected an int in [0, 2**63)")
        rebuild = seed is not None and not (self._fresh and int(seed) == self._seed)  # fresh: these are seed's tracks
        if mask is not None:
            mask = torch.as_tensor(mask, device=self.device)
            if mask.shape != (self.num_envs,) or mask.dtype != torch.bool:
                raise ValueError(f"CarRacingVecEnv.reset: reset_mask must be a bool tensor of shape [{self.num_envs}], "
                                 f"got {mask.dtype} {list(mask.shape)}")
            # New tracks in every env (the first reset, or a seed that rebuilds the course) with
            # only some cars placed would leave the others' cars and progress on tracks that are
            # gone; checked before anything changes (one host read of the mask, in reset only).
            if (self._fresh or rebuild) and not bool(mask.all()):
                raise ValueError("CarRacingVecEnv.reset: reset_mask must select every env "
                                 + ("on the first reset (no car is placed yet)" if self._fresh and not rebuild else
                                    f"with seed = {seed!r} (it rebuilds every env's track)"))
        if rebuild:
            self._build_course(int(seed))
        elif seed is not None:
            self._generator.manual_seed(int(seed))
        if mask is None:
            self._mask.fill_(True)
        else:
            self._mask.copy_(mask)
        self._reset_masked(self._mask, regenerate=not self._fresh)
        self._fresh = False
        self._write_observation(self.obs, cold=True)
        torch.where(self._mask, self._frame.s, self.s_prev, out=self.s_prev)
        self.final_obs.copy_(self.obs)
        self.done.zero_()
        return self.obs, self._infos()

    def _reset_idx(self, env_ids=None) -> None:
        """Isaac-Lab-style reset of the state of envs ``env_ids`` (a sequence or tensor of indices,
        or None for every env): new tracks, spawns, cleared bookkeeping. Observations are not
        recomputed (call :meth:`reset` or step next). Indexing by ids builds a mask on the host
        side of torch (not for a captured step; :meth:`step` uses a mask)."""
        self._check_open("_reset_idx")
        self._mask.zero_()
        if env_ids is None:
            self._mask.fill_(True)
        else:
            ids = torch.as_tensor(env_ids, device=self.device)
            if ids.numel() == 0 and ids.dim() == 1 and ids.dtype.is_floating_point:
                ids = ids.to(torch.long)     # [] is float32 to torch: an empty list of ids, nothing to reset
            if ids.dtype in (torch.bool, torch.float16, torch.bfloat16, torch.float32, torch.float64) or ids.dim() > 1:
                raise TypeError(f"CarRacingVecEnv._reset_idx: env_ids must be a 1-D sequence of int indices, got "
                                f"{ids.dtype} {list(ids.shape)} (a bool mask goes to reset(options={{'reset_mask': m}}))")
            if ids.numel() == 0:
                return                       # no env: nothing changes (before the first reset too)
            low, high = int(ids.min()), int(ids.max())   # a host read, as the indexing below
            if low < 0 or high >= self.num_envs:
                raise ValueError(f"CarRacingVecEnv._reset_idx: env_ids must be in [0, {self.num_envs}), got "
                                 f"{low if low < 0 else high}")
            self._mask[ids.to(torch.long)] = True
            # Before the first reset no car is placed: as reset's mask, every env or none.
            if self._fresh and not bool(self._mask.all()):
                raise ValueError("CarRacingVecEnv._reset_idx: env_ids must cover every env before the first reset "
                                 "(no car is placed yet)")
        # The first reset keeps the tracks just built, as reset() does; step may follow it.
        self._reset_masked(self._mask, regenerate=not self._fresh)
        self._fresh = False
        self._frame = self.course.localize(window=0)
        torch.where(self._mask, self._frame.s, self.s_prev, out=self.s_prev)

    def _reset_masked(self, mask, regenerate: bool) -> None:
        """New track (when ``regenerate``), spawn and cleared bookkeeping for the envs of the bool
        ``mask``; others untouched. Tensor ops only (no host synchronisation, no allocation after
        the course's first calls)."""
        cfg, course = self.config, self.course
        if regenerate:
            course.regenerate(mask=mask, advance=True)
        # Draws for every env (masked or not), so that the generator advances the same way
        # whatever the mask is: other envs' later spawns do not depend on this one's.
        self._u.uniform_(0.0, 1.0, generator=self._generator)
        torch.mul(self._u, course.tracks.length, out=self._spawn_s)
        self._u.uniform_(-1.0, 1.0, generator=self._generator)
        torch.mul(self._u, cfg.spawn_lateral, out=self._spawn_lateral)
        spawn = course.spawn(mask, self._spawn_s, self._spawn_lateral)
        col = mask.unsqueeze(1)
        torch.where(col, spawn.position, self.position, out=self.position)
        torch.where(mask, spawn.position[:, 0], self.x, out=self.x)
        torch.where(mask, spawn.position[:, 1], self.y, out=self.y)
        torch.where(mask, spawn.yaw, self.yaw, out=self.yaw)
        self.speed.masked_fill_(mask, cfg.initial_speed)
        self.prev_actions.masked_fill_(col, 0.0)
        for t in (self.off_road_time, self.episode_length_buf, self.episode_return, self.episode_progress,
                  self.credited_progress):
            t.masked_fill_(mask, 0)
        # The progress cap's base: arc length from the spawn to its first gate ahead (the spawn's
        # next gate), plus half a gate spacing (gates are evenly spaced: L / num_gates).
        tracks = course.tracks
        self._gate_index.copy_(course.next_gate.unsqueeze(1))
        # A next_gate written out of range from outside: the course's step flags that env
        # (invalid_state); here it only must not index past the gates (a device assert on CUDA).
        self._gate_index.clamp_(0, course.max_gates - 1)
        torch.gather(tracks.gate_arc_length, 1, self._gate_index, out=self._gate_arc)
        torch.sub(self._gate_arc[:, 0], self._spawn_s, out=self._tmp)
        torch.remainder(self._tmp, tracks.length, out=self._tmp)
        self._gate_spacing_into_spacing(tracks)
        self._tmp.add_(self._spacing, alpha=0.5)
        torch.where(mask, self._tmp, self._cap_base, out=self._cap_base)

    # ---- observations ---------------------------------------------------------------------------

    def _write_observation(self, out, cold: bool = False) -> None:
        """The observation of every env's current state into ``out`` [E, D]; leaves the
        localization in ``self._frame``. ``cold``: search every segment (after teleports)."""
        cfg, course = self.config, self.course
        K = cfg.look_ahead_points
        frame = course.localize(window=0 if cold else 8)
        self._frame = frame
        ahead = course.track_ahead(K, cfg.look_ahead_spacing, self.yaw, position=self.position, s=frame.s)
        out[:, : 2 * K].view(self.num_envs, K, 2).copy_(ahead[:, :, :2])
        torch.div(self.speed, cfg.car.max_speed, out=out[:, 2 * K])
        # Half-width on the side the car is on (half_widths[..., 0] left, [..., 1] right).
        self._segment.copy_(frame.segment.unsqueeze(1))
        hw = course.tracks.half_widths
        torch.gather(hw[:, :, 0], 1, self._segment, out=self._hw)
        torch.gather(hw[:, :, 1], 1, self._segment, out=self._hw_right)
        torch.ge(frame.n, 0, out=self._tmp_bool)
        torch.where(self._tmp_bool, self._hw[:, 0], self._hw_right[:, 0], out=self._tmp)
        torch.div(frame.n, self._tmp, out=out[:, 2 * K + 1])
        # Heading error wrapped into [-pi, pi] by atan2(sin, cos).
        torch.sub(self.yaw, frame.heading, out=self._tmp)
        torch.atan2(torch.sin(self._tmp, out=self._hw[:, 0]), torch.cos(self._tmp, out=self._hw_right[:, 0]),
                    out=out[:, 2 * K + 2])
        out[:, 2 * K + 3:].copy_(self.prev_actions)

    def _infos(self) -> dict:
        return {"final_obs": self.final_obs, "_final_obs": self.done,
                "final_info": self.final_info, "_final_info": self.done,
                "off_road": self.off_road, "laps": self.course.laps, "episode": self.course.tracks.episode}

    # ---- stepping -------------------------------------------------------------------------------

    def step(self, actions):
        """One step of every env (see the class docstring), replaying the captured graph when
        :meth:`capture` recorded one.

        Args:
            actions: ``[E, 2]`` (steer, throttle) in [-1, 1], a tensor (any float or integer
                dtype, copied to the env's device) or array-like; may be ``self.actions`` itself.
        Returns:
            (obs float32 [E, D], reward float32 [E], terminated bool [E], truncated bool [E],
            infos dict): the env's buffers, overwritten by the next call.
        Raises:
            TypeError: actions that are not numbers (None, strings, bools, complex).
            ValueError: actions of another shape.
            RuntimeError: no reset() yet (the cars are not on their tracks).
            gymnasium.error.ClosedEnvironmentError: after :meth:`close`.
        """
        self._check_open("step")
        if self._fresh:  # tracks built, no reset since: the cars are not on them yet
            raise RuntimeError("CarRacingVecEnv.step: call reset() first (Gymnasium's order: the cars are placed on "
                               "their tracks by reset)")
        if actions is not self.actions:
            wanted = f"a float tensor or array of shape [{self.num_envs}, 2] (steer, throttle in [-1, 1])"
            try:
                actions = torch.as_tensor(actions).detach()  # a policy's output may carry autograd: the env is not differentiable
            except (TypeError, ValueError, RuntimeError):  # None, strings, ragged lists: torch's message names neither
                raise TypeError(f"CarRacingVecEnv.step: actions must be {wanted}, "
                                f"got {type(actions).__name__}") from None
            if actions.dtype == torch.bool or actions.is_complex():
                raise TypeError(f"CarRacingVecEnv.step: actions must be {wanted}, got {actions.dtype}")
            if tuple(actions.shape) != (self.num_envs, 2):
                raise ValueError(f"CarRacingVecEnv.step: actions must have shape [{self.num_envs}, 2], "
                                 f"got {list(actions.shape)}")
            self.actions.copy_(actions)
        if self._graph is not None:
            self._graph.replay()
        else:
            self._step_impl()
        return self.obs, self.reward, self.terminated, self.truncated, self._infos()

    def _step_impl(self) -> None:
        """The step on ``self.actions``: tensor ops and course calls only (capturable)."""
        cfg, course, car = self.config, self.course, self.config.car
        a = self.actions
        torch.nan_to_num_(a, nan=0.0).clamp_(-1.0, 1.0)
        bicycle_step(self.x, self.y, self.yaw, self.speed, a[:, 0], a[:, 1], car, self._scratch)
        self.position[:, 0].copy_(self.x)
        self.position[:, 1].copy_(self.y)
        self.prev_actions.copy_(a)
        flags = course.step().events.flags
        # Reward: signed progress of the foot on the centreline, off-road time, laps.
        self._write_observation(self.final_obs)
        ds = course.progress_delta(self.s_prev, self._frame.s)
        self.s_prev.copy_(self._frame.s)
        torch.bitwise_and(flags, self._off_track_bit, out=self._flag_bits)
        torch.ne(self._flag_bits, 0, out=self.off_road)
        torch.bitwise_and(flags, self._lap_bit, out=self._flag_bits)
        torch.ne(self._flag_bits, 0, out=self._lap)
        # Float copies of the flags: a bool operand of a float in-place op would be converted
        # into a new tensor (an allocation per step).
        self._off_road_f.copy_(self.off_road)
        self._lap_f.copy_(self._lap)
        # Credited progress P = min(S, C), C = cap base + gates passed in order * spacing.
        self.episode_progress.add_(ds)
        if cfg.progress_cap:
            self._gate_spacing_into_spacing(course.tracks)
            self._count_f.copy_(course.gates_passed)
            torch.mul(self._count_f, self._spacing, out=self._tmp)
            self._tmp.add_(self._cap_base)
            torch.minimum(self.episode_progress, self._tmp, out=self._tmp)
        else:
            self._tmp.copy_(self.episode_progress)
        torch.sub(self._tmp, self.credited_progress, out=self.reward)   # dP
        self.credited_progress.copy_(self._tmp)
        self.reward.mul_(cfg.progress_weight)
        self.reward.add_(self._off_road_f, alpha=-cfg.off_road_penalty * car.dt)
        self.reward.add_(self._lap_f, alpha=cfg.lap_bonus)
        self.episode_return.add_(self.reward)
        self.episode_length_buf.add_(1)
        # Off-road timer: time since the car last was on the road.
        self.off_road_time.add_(car.dt).mul_(self._off_road_f)
        # Terminations and truncations.
        torch.ge(course.laps, cfg.laps_to_finish, out=self.terminated)
        torch.gt(self.off_road_time, cfg.off_road_timeout, out=self._tmp_bool)
        self.terminated.logical_or_(self._tmp_bool)
        torch.ge(self.episode_length_buf, cfg.max_episode_steps, out=self.truncated)
        torch.logical_not(self.terminated, out=self._tmp_bool)
        self.truncated.logical_and_(self._tmp_bool)                   # a termination wins over the limit
        torch.logical_or(self.terminated, self.truncated, out=self.done)
        # The ending episodes' summaries, then their resets (same-step autoreset).
        fi = self.final_info
        fi["progress"].copy_(self.credited_progress)
        fi["raw_progress"].copy_(self.episode_progress)
        fi["laps"].copy_(course.laps)
        fi["length"].copy_(self.episode_length_buf)
        fi["return"].copy_(self.episode_return)
        self._reset_masked(self.done, regenerate=True)
        self._write_observation(self.obs)
        torch.where(self.done.unsqueeze(1), self.obs, self.final_obs, out=self.obs)
        torch.where(self.done, self._frame.s, self.s_prev, out=self.s_prev)

    def capture(self) -> bool:
        """Records :meth:`step` (on ``self.actions``) into a CUDA graph that later ``step`` calls
        replay (``torch.cuda.graph`` + ``track_gen.interop.torch.registered(graph=g,
        conditional=True)``: the regeneration of done envs is a conditional node, skipped on
        steps where no episode ends). First runs one eager step on the current ``self.actions``
        (the warm-up: it makes every buffer and loads every kernel), so the env advances one step.
        A later ``reset(seed=...)`` drops the graph. On the CPU: nothing is recorded, steps stay
        eager, returns False. Returns True when a graph was recorded."""
        self._check_open("capture")
        if self.device.type != "cuda":
            return False
        import track_gen.interop.torch as tg_torch  # noqa: PLC0415 - CUDA only

        self._graph = None
        self._step_impl()                         # warm-up (torch.cuda.graph's advice): buffers, kernels
        torch.cuda.synchronize(self.device)
        g = torch.cuda.CUDAGraph()
        g.register_generator_state(self._generator)   # the spawn draws advance with each replay
        with torch.cuda.graph(g):
            with tg_torch.registered(graph=g, conditional=True):
                self._step_impl()
        self._graph = g
        return True

    def close_extras(self, **kwargs: Any) -> None:
        """Releases the captured graph and the course (its tracks' device memory); later calls
        of reset, step, _reset_idx and capture raise ClosedEnvironmentError."""
        self._graph = None
        self.course = None
        self._frame = None

    def _check_open(self, method: str) -> None:
        if self.closed:
            raise gymnasium.error.ClosedEnvironmentError(
                f"CarRacingVecEnv.{method}: the env is closed (close() released its course); make a new env")

    def _gate_spacing_into_spacing(self, tracks) -> None:
        """self._spacing = L / G per env (gates are evenly spaced), into the preallocated buffers.
        A gate count written out of range (< 1) reads as 1: no division by zero."""
        self._count_f.copy_(tracks.num_gates)
        self._count_f.clamp_(min=1.0)
        torch.div(tracks.length, self._count_f, out=self._spacing)

    def __repr__(self) -> str:
        return f"CarRacingVecEnv(num_envs={self.num_envs}, device={str(self.device)!r})"

"""Presets: the C++ library's documented default parameters (``include/track_gen/presets.hpp``),
for a number of environments on a device, with overrides::

    params = presets.track(num_envs=64, device="cuda:0", seed=7, half_width=0.4,
                           polar={"radius_min": 5.0})

A preset object only records what you asked for; the defaults live in the C++ library (one place),
and every range is checked there when a ``Course`` is built (``ValueError`` naming the parameter
and its range). ``TrackParams.resolved()`` shows every value (needs the compiled extension).

Parameter names (units: metres, radians): ``seed``, ``env_offset``, ``num_samples``,
``half_width``, ``gate_half_height``, and per stage ``polar.{control_points, radius_min,
radius_max, angle_jitter, lobe_amplitude_min, lobe_amplitude_max, elevation_min,
elevation_max}``, ``polygon_separation.{clearance, smoothing, max_iterations, tolerance}``
(the control polygon's push, called ``repulsive`` before 2026-12-05),
``spline.samples_per_segment``, ``validate.{length_min, length_max, turn_radius_min,
clearance_margin, max_attempts}``, and the generator families'
``bezier.{corners_min, corners_max, extent, layout, min_corner_distance, max_turn, rad, edgy,
handle_clamp, samples_per_piece}``, ``hull.{corners_min, corners_max, extent, layout,
min_corner_distance, max_turn, displacement, convex, chaikin_passes}``, ``voronoi.{control_points, radius_min, radius_max, angle_jitter, site_spacing, site_jitter,
min_angle_gap, chaikin_rounds}``, ``checkpoint.{checkpoints, radius_min, radius_max,
angle_jitter, step_length, max_turn_rate, steer_gain, closure_boost, control_spacing, max_steps,
candidates, closure_tolerance}`` and ``repulsive_growth.{domain_radius, init_ratio, grow_mult_min,
grow_mult_max, obstacles_min, obstacles_max, obstacle_radius_min, obstacle_radius_max,
ratchet_rate, alpha, beta, tau, length_weight, points, levels, settle_iterations, resample_every,
stall_window, stall_area_tolerance, deactivate_obstacles}`` (docs/generators.md). Give a stage's fields as a dict
(``polar={"radius_min": 5.0}``) or flattened with a double underscore (``polar__radius_min=5.0``).

The generator family (the seed system's ``generator=``): ``generator="bezier"`` (one of
``"polar"`` (the default), ``"bezier"``, ``"hull"``, ``"voronoi"``, ``"checkpoint"``,
``"repulsive"``), or a mix:
``generator_weights={"bezier": 2.0, "hull": 1.0}`` draws each env's family per episode with
probability weight / sum (the ``family`` field of ``course.tracks`` says which one it got).

Elevation (docs/generators.md, "Elevation profiles"): ``elevation.{profile, knots, z_min, z_max,
max_grade, harmonics}``, ``profile`` one of ``"flat"`` (the default), ``"uniform"``,
``"random_walk"``, ``"harmonics"``; or the seed system's names ``z_profile`` (``"noise"`` is
``"harmonics"``), ``z_min``, ``z_max``, ``z_control_points``, ``z_valid_grade``,
``z_noise_harmonics``. :func:`elevated_drone_track` is a drone course with a random-walk profile.

The polar family's knot count also takes the seed system's name ``polar_num_knots``
(``polar.control_points``); its radial and angular jitters are not ours (docs/generators/polar.md).

Centreline relaxation (docs/generators.md, "Relaxation"): a random attempt that would fail
validation on its shape (a tight turn, uneven spacing, two far-apart sections too close) is relaxed
instead of redrawn, by ``relaxation.{max_iterations, margin, separation_weight, spacing_weight,
bending_weight, chebyshev_rho, chebyshev_gamma, chebyshev_start, smoothing_passes}``. It is off by
default here (``max_iterations`` 0), unlike the seed system (``relax_enable=True``, 50 sweeps): turn
it on with ``relaxation={"max_iterations": 50}`` or the seed system's names ``relax_iters``,
``relax_margin``, ``relax_sep_relax``, ``relax_spc_relax``, ``relax_bend_relax``,
``relax_cheby_rho``, ``relax_cheby_gamma``, ``relax_cheby_start``, ``relax_smooth_passes``, and
its switches ``relax_enable`` (True: 50 sweeps unless ``relax_iters`` says how many; False: off),
``relax_accel`` (``"chebyshev"``, the default; or ``"none"``: ``chebyshev_rho`` 0 and
``chebyshev_gamma`` 1, plain Jacobi sweeps) and
``relax_solver`` (``"xpbd"`` only); ``relax_accel="none"`` with ``relax_cheby_*`` in the same call
is refused, and tuning names without ``relax_iters`` / ``relax_enable`` warn (the relaxation is off
until turned on). A relaxed track has the ``relaxed`` status bit. With the
relaxation on, a ``Course`` runs ``elevated_relaxed_family_pipeline``; gate courses have no relaxation
(``Course.gates`` refuses ``max_iterations`` > 0).
"""
from __future__ import annotations

import numbers
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional

__all__ = ["TrackParams", "track", "drone_track", "elevated_drone_track", "gate_course"]

_STAGES = ("polar", "polygon_separation", "spline", "validate", "bezier", "hull", "voronoi", "checkpoint", "repulsive_growth",
           "elevation", "gates", "relaxation")
# The seed system's names of the elevation fields and of the polar family's knot count (its
# polar_radial_jitter and polar_angular_jitter have no counterpart of the same meaning).
_SEED_NAMES = {"polar_num_knots": "polar.control_points",
               "z_profile": "elevation.profile", "z_min": "elevation.z_min", "z_max": "elevation.z_max",
               "z_control_points": "elevation.knots", "z_valid_grade": "elevation.max_grade",
               "z_noise_harmonics": "elevation.harmonics",
               # The repulsive family's (repulsive_domain_frac and repulsive_stages have no
               # counterpart of the same meaning: repulsive_growth.domain_radius is in metres,
               # repulsive_growth.points and levels make the schedule).
               "repulsive_grow_mult_min": "repulsive_growth.grow_mult_min",
               "repulsive_grow_mult_max": "repulsive_growth.grow_mult_max",
               "repulsive_domain_init_ratio": "repulsive_growth.init_ratio",
               "repulsive_obstacle_count_min": "repulsive_growth.obstacles_min",
               "repulsive_obstacle_count_max": "repulsive_growth.obstacles_max",
               "repulsive_obstacle_radius_min_frac": "repulsive_growth.obstacle_radius_min",
               "repulsive_obstacle_radius_max_frac": "repulsive_growth.obstacle_radius_max",
               "repulsive_ratchet_rate": "repulsive_growth.ratchet_rate",
               "repulsive_alpha": "repulsive_growth.alpha", "repulsive_beta": "repulsive_growth.beta",
               "repulsive_tau": "repulsive_growth.tau", "repulsive_w_len": "repulsive_growth.length_weight",
               "repulsive_settle_iters": "repulsive_growth.settle_iterations",
               "repulsive_resample_every": "repulsive_growth.resample_every",
               "repulsive_stall_window": "repulsive_growth.stall_window",
               "repulsive_stall_area_tol": "repulsive_growth.stall_area_tolerance",
               "repulsive_deactivate_obstacles": "repulsive_growth.deactivate_obstacles",
               # The centreline relaxation's (stages::centreline_relaxation; relax_enable,
               # relax_accel and relax_solver are switches: _RELAX_SWITCHES).
               "relax_iters": "relaxation.max_iterations", "relax_margin": "relaxation.margin",
               "relax_sep_relax": "relaxation.separation_weight", "relax_spc_relax": "relaxation.spacing_weight",
               "relax_bend_relax": "relaxation.bending_weight", "relax_cheby_rho": "relaxation.chebyshev_rho",
               "relax_cheby_gamma": "relaxation.chebyshev_gamma", "relax_cheby_start": "relaxation.chebyshev_start",
               "relax_smooth_passes": "relaxation.smoothing_passes"}
# The seed system's names with no counterpart of the same meaning, and what to use instead (or why
# there is nothing to set).
_NO_CACHE = "there is no candidate cache to tune (far-apart beads are skipped by an exact chord bound)"
_SEED_UNSUPPORTED = {"repulsive_stages": "use repulsive_growth.points (the finest level) and repulsive_growth.levels",
                     "repulsive_domain_frac": "use repulsive_growth.domain_radius (in metres)",
                     "relax_band": "the window is validation's own: pi * max(validate.turn_radius_min, c / 2) of arc "
                                   "(c = 2 half_width + validate.clearance_margin); not settable",
                     "relax_tol": "validation's thresholds are exact (validate.clearance_margin and "
                                  "validate.turn_radius_min); there is no tolerance to set",
                     "relax_sep_every": _NO_CACHE, "relax_sep_cache_slots": _NO_CACHE,
                     "relax_sep_cache_skin": _NO_CACHE,
                     "relax_smooth_spacing_iters": "the relaxed centreline is resampled at uniform arc length, so no "
                                                   "spacing polish is needed"}
# The seed system's switches of its relaxation: relax_enable (True: relax_iters sweeps, or the
# seed's default of 50; False: off), relax_accel ("none": plain Jacobi sweeps), relax_solver (only
# "xpbd" here). Applied by _relax_switches.
_RELAX_SWITCHES = ("relax_enable", "relax_accel", "relax_solver")
_RELAX_ITERATIONS = "relaxation.max_iterations"
_RELAX_DEFAULT_ITERATIONS = 50  # the seed system's relax_iters
_CHEBYSHEV_FIELDS = ("relaxation.chebyshev_rho", "relaxation.chebyshev_gamma")
_RELAX_ACCELS = ("chebyshev", "none")
# Our own names before the control polygon's push was renamed (the seed system's repulsive_* names
# belong to the repulsive family, repulsive_growth).
_RENAMED = {f"repulsive.{f}": f"polygon_separation.{f}" for f in ("clearance", "smoothing", "max_iterations", "tolerance")}
_DEVICE = re.compile(r"^cuda(?::(\d+))?$")


@dataclass(frozen=True)
class TrackParams:
    """What a ``Course`` is built from: a C++ preset, the number of environments, the device
    (``"cuda:N"`` or ``"cpu"``), and overrides of the preset's parameters (flattened names, e.g.
    ``"polar.radius_min"``)."""

    preset: str
    num_envs: int
    device: str = "cuda:0"
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: The seed system's names the overrides were given by, {flattened name: given name} (e.g.
    #: {"elevation.z_max": "z_max"}), so that an error can name what the caller wrote.
    given_as: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def env_offset(self) -> int:
        """Global id of env 0 (C++ ``track_params::env_offset``, default 0): env ``e`` of the
        course is global env ``env_offset + e``, which keys its random streams. Set it with the
        ``env_offset=`` override, or with :func:`track_gen.shard_params` for one rank of several."""
        return int(self.overrides.get("env_offset", 0))

    @property
    def device_index(self) -> int:
        """The CUDA device index (``"cuda"`` means device 0); -1 for ``"cpu"``."""
        m = _DEVICE.match(self.device)
        return int(m.group(1) or 0) if m else -1

    @property
    def is_cpu(self) -> bool:
        """Whether the course runs on the CPU (the C++ host backend)."""
        return self.device == "cpu"

    def replace(self, **overrides) -> "TrackParams":
        """A copy with more overrides (same rules as the preset functions; ``relax_enable=True``
        keeps a sweep count set before, ``relax_accel="chebyshev"`` drops an earlier ``"none"``'s
        values, back to the C++ defaults)."""
        merged = dict(self.overrides)
        given_as = dict(self.given_as)
        flat = _flatten(overrides, given_as, existing=self.overrides)
        if overrides.get("relax_accel") == "chebyshev":
            for name in _CHEBYSHEV_FIELDS:  # an earlier "none"'s values only, not values the caller set
                if name not in flat and self.given_as.get(name) == "relax_accel":
                    merged.pop(name, None)
                    given_as.pop(name, None)
        merged.update(flat)
        return TrackParams(self.preset, self.num_envs, self.device, merged, given_as)

    def resolved(self) -> Dict[str, Any]:
        """Every parameter's value, the preset's defaults with the overrides applied (calls the
        compiled extension; ranges are checked only when a Course is built)."""
        from .. import _extension
        return dict(_extension().preset_params(self.preset, self.num_envs, dict(self.overrides)))


def _device_string(device) -> str:
    """'cuda:N' from 'cuda', 'cuda:N', an int N or a torch.device of type cuda; 'cpu' from 'cpu'
    or a torch.device of type cpu."""
    if isinstance(device, bool):
        raise TypeError(f"device must be 'cuda', 'cuda:N', 'cpu', an int or a torch.device, got {device!r}")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"device index must be >= 0, got {device}")
        return f"cuda:{device}"
    text = str(device)
    if text == "cpu":
        return "cpu"
    m = _DEVICE.match(text)
    if m is None:
        raise ValueError(f"device must be a CUDA device ('cuda' or 'cuda:N') or 'cpu', got {device!r}")
    return f"cuda:{int(m.group(1) or 0)}"


def _check_value(name: str, value, given: Optional[str] = None) -> Any:
    """Numbers only (bool refused: it would silently become 0/1); elevation.profile is a name.
    `given`: the seed system's name the caller wrote, named in the error."""
    if name == "elevation.profile":
        if not isinstance(value, str):
            raise TypeError(f"track parameter 'elevation.profile' must be a profile name (str), got {value!r}")
        return "harmonics" if value == "noise" else value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        alias = f" (given as {given})" if given else ""
        raise TypeError(f"track parameter {name!r}{alias} must be a number, got {type(value).__name__} {value!r}")
    # numpy's and other number types (numbers.Integral / numbers.Real) as Python's own.
    value = int(value) if isinstance(value, numbers.Integral) else float(value)
    if name in ("seed", "env_offset"):
        if not isinstance(value, int):
            raise TypeError(f"track parameter {name!r} must be an int, got {value!r}")
        limit = 2 ** 64 if name == "seed" else 2 ** 32
        if not 0 <= value < limit:
            raise ValueError(f"track parameter {name!r} must be in [0, {limit}), got {value}")
    return value


def _flatten(overrides: Mapping[str, Any], given_as: Optional[Dict[str, str]] = None,
             existing: Mapping[str, Any] = {}) -> Dict[str, Any]:  # noqa: B006 (read only)
    """{"polar": {"radius_min": 5}} and {"polar__radius_min": 5} -> {"polar.radius_min": 5};
    generator="bezier" stays a name; generator_weights={"hull": 1} -> {"generator.weights.hull": 1};
    the seed system's names -> ours (`given_as`, when given, gets {our name: the seed's name})."""
    flat: Dict[str, Any] = {}
    for key, value in overrides.items():
        if key in _SEED_UNSUPPORTED:
            raise ValueError(f"track parameter '{key}' (a seed-system name) has no counterpart of the same "
                             f"meaning here: {_SEED_UNSUPPORTED[key]}")
        if key in _RELAX_SWITCHES:
            _check_relax_switch(key, value)  # applied after the loop: relax_enable defers to relax_iters
            continue
        if key == "generator":
            if not isinstance(value, str):
                raise TypeError(f"track parameter 'generator' must be a family name (str), got {value!r}")
            flat[key] = value
            continue
        if key == "generator_weights":
            if not isinstance(value, Mapping):
                raise TypeError("track parameter 'generator_weights' must be a dict {family name: weight}, "
                                f"got {value!r}")
            for family, weight in value.items():
                flat[f"generator.weights.{family}"] = _check_value(f"generator_weights[{family!r}]", weight)
            continue
        if key == "repulsive" and isinstance(value, Mapping):
            raise ValueError("track parameter 'repulsive' (the control polygon's push) is now 'polygon_separation' "
                             f"(polygon_separation={dict(value)!r}); the repulsive family's own parameters are "
                             "repulsive_growth")
        if key in _STAGES and isinstance(value, Mapping):
            for sub, v in value.items():
                flat[f"{key}.{sub}"] = _check_value(f"{key}.{sub}", v)
                if given_as is not None:
                    given_as.pop(f"{key}.{sub}", None)  # written by our name now
            continue
        name = _SEED_NAMES.get(key, key.replace("__", ".", 1))
        if name in _RENAMED:
            raise ValueError(f"track parameter '{key}' is now '{_RENAMED[name]}' (the control polygon's push); the "
                             "repulsive family's own parameters are repulsive_growth.*")
        if key == "repulsive_deactivate_obstacles" and isinstance(value, bool):
            value = int(value)  # the seed system's flag is a bool; ours is 0 or 1
        flat[name] = _check_value(name, value, key if key in _SEED_NAMES else None)
        if given_as is not None:
            if key in _SEED_NAMES:
                given_as[name] = key
            else:
                given_as.pop(name, None)  # written by our name now
    _relax_switches(overrides, flat, given_as, existing)
    tuning = [key for key in overrides if key.startswith("relax_") and key in _SEED_NAMES and key != "relax_iters"]
    if tuning and not _sweeps_given(flat, existing):
        verb = "tunes" if len(tuning) == 1 else "tune"
        warnings.warn(f"track_gen: {', '.join(tuning)} {verb} the centreline relaxation, which is off by default "
                      "here (the seed system's is on): relax_enable=True or relax_iters=N turns it on",
                      stacklevel=4)  # the caller of track() / replace()
    return flat


def _sweeps_given(flat: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    """Whether the relaxation's sweep count is given in this call (`flat`), or positive in the
    parameters being replaced (`existing`)."""
    return _RELAX_ITERATIONS in flat or existing.get(_RELAX_ITERATIONS, 0) > 0


def _is_bool(value) -> bool:
    """A Python or numpy bool."""
    return isinstance(value, bool) or (type(value).__name__ == "bool" and type(value).__module__ == "numpy")


def _check_relax_switch(key: str, value) -> None:
    """TypeError / ValueError unless `value` is one the seed system's switch `key` takes here."""
    if key == "relax_enable":
        if not _is_bool(value):
            raise TypeError(f"track parameter 'relax_enable' (a seed-system name) must be a bool, got "
                            f"{type(value).__name__} {value!r}")
    elif key == "relax_accel":
        if not (isinstance(value, str) and value in _RELAX_ACCELS):
            raise ValueError(f"track parameter 'relax_accel' (a seed-system name) must be 'chebyshev' "
                             f"(the Chebyshev acceleration at relaxation.chebyshev_rho / chebyshev_gamma) or 'none' "
                             f"(plain Jacobi sweeps: chebyshev_rho 0, chebyshev_gamma 1), got {value!r}")
    elif not (isinstance(value, str) and value == "xpbd"):  # relax_solver
        raise ValueError(f"track parameter 'relax_solver' (a seed-system name) = {value!r}: only 'xpbd' exists "
                         "here (stages::centreline_relaxation; the seed system's 'energy' and 'tp_sobolev' solvers "
                         "do not)")


def _relax_switches(overrides: Mapping[str, Any], flat: Dict[str, Any], given_as: Optional[Dict[str, str]],
                    existing: Mapping[str, Any] = {}) -> None:  # noqa: B006 (read only)
    """The seed system's relaxation switches (checked in the loop) applied to `flat`:
    relax_enable=False sets relaxation.max_iterations to 0 (over relax_iters), relax_enable=True
    to 50 unless relax_iters or relaxation.max_iterations is given (in this call, or positive in
    `existing`, the overrides a replace() adds to); relax_accel="none" sets
    relaxation.chebyshev_rho to 0 and chebyshev_gamma to 1 (plain Jacobi sweeps, over
    relax_cheby_rho / relax_cheby_gamma); relax_accel="chebyshev" (the C++ defaults) and
    relax_solver="xpbd" set nothing.
    `given_as` (when not None) gets the switch for each field it set."""
    enable = overrides.get("relax_enable")
    enable = None if enable is None else bool(enable)  # numpy's bool as Python's
    if enable is False or (enable is True and not _sweeps_given(flat, existing)):
        flat[_RELAX_ITERATIONS] = _RELAX_DEFAULT_ITERATIONS if enable else 0
        if given_as is not None:
            given_as[_RELAX_ITERATIONS] = "relax_enable"
    if overrides.get("relax_accel") == "none":
        clash = [f for f in _CHEBYSHEV_FIELDS if f in flat]  # set in this same call, by any name
        if clash:
            raise ValueError(f"track parameter 'relax_accel' = 'none' (plain Jacobi sweeps: chebyshev_rho 0, "
                             f"chebyshev_gamma 1) contradicts {', '.join(clash)} given with it: give one or the other")
        for field, value in zip(_CHEBYSHEV_FIELDS, (0.0, 1.0)):
            flat[field] = value
            if given_as is not None:
                given_as[field] = "relax_accel"


def _make(preset: str, num_envs, device, seed, overrides) -> TrackParams:
    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral):
        raise TypeError(f"num_envs must be an int, got {num_envs!r}")
    num_envs = int(num_envs)
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    if num_envs > 2**31 - 1:  # the library's own range (track_params.num_envs) is checked at construction
        raise ValueError(f"num_envs = {num_envs} does not fit a 32-bit int (track_params.num_envs: "
                         "docs/parameters.md has its range)")
    given_as: Dict[str, str] = {}
    flat = _flatten(overrides, given_as)
    flat["seed"] = _check_value("seed", seed)
    return TrackParams(preset, num_envs, _device_string(device), flat, given_as)


def track(num_envs: int, device="cuda:0", seed: int = 0, **overrides) -> TrackParams:
    """A small flat closed circuit per environment (C++ ``presets::track``): 12 control points at
    radii 4.5-6 m scaled by random two- and three-lobed profiles, centrelines of 10-60 m
    (about 36-56 m), half-width 0.3 m, 256 samples.

    Args:
        num_envs: environments (one track each), in [1, 2**30] (docs/parameters.md).
        device: where the course runs: a CUDA device ("cuda", "cuda:N", N or a torch.device)
            or "cpu" (the C++ host backend: the same tracks, tensors on the CPU, no graphs).
        seed: seed of every random stream of the batch, in [0, 2**64).
        **overrides: parameters to change (see the module docstring for the names).
    Raises:
        TypeError: a value that is not a number (or num_envs not an int).
        ValueError: num_envs < 1, a device that is neither CUDA nor "cpu", seed out of range.
            A name that is not a parameter, and a value out of its range, are refused when the
            course is built (``Course.track``: ValueError naming it and the valid names or
            range; the names live in the C++ parameter table, which this module does not load).
    """
    return _make("track", num_envs, device, seed, overrides)


def drone_track(num_envs: int, device="cuda:0", seed: int = 0, **overrides) -> TrackParams:
    """As :func:`track`, for drone racing (C++ ``presets::drone_track``): control points at
    elevations 0.5-2.5 m, half-width 0.5 m, gates 0.5 m high on each side of the centreline."""
    return _make("drone_track", num_envs, device, seed, overrides)


def elevated_drone_track(num_envs: int, device="cuda:0", seed: int = 0, **overrides) -> TrackParams:
    """As :func:`drone_track` with level control points and a random-walk elevation profile
    (C++ ``presets::elevated_drone_track``): z in [0.5, 2.5] m through 10 knots, grades up to 0.3;
    steeper candidates fail validation (``status_bits()["fail_grade"]``)."""
    return _make("elevated_drone_track", num_envs, device, seed, overrides)


def gate_course(num_envs: int, device="cuda:0", seed: int = 0, **overrides) -> TrackParams:
    """A drone-racing gate course per environment (C++ ``presets::gate_course``, docs/drones.md):
    6-12 gates with 1.5 m x 1.5 m openings (``half_width`` = ``gate_half_height`` = 0.75 m) at the
    anchors of a generator family, at least 3 m apart, on a random-walk altitude in [1, 4] m; the
    course line is a closed spline through them. Build it with ``Course.gates(params)``.
    ``gates={"min_gates", "max_gates", "min_spacing", "spacing_iterations", "ordering", "align"}``
    (``ordering`` 0 as generated, 1 angle-sorted; ``align`` 0 level gates, 1 following the 3D
    tangent) change the gates; every other name as for :func:`track`."""
    return _make("gate_course", num_envs, device, seed, overrides)

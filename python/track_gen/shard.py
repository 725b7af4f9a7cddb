"""Sharding a batch of environments over several processes (one per GPU: torchrun), the Python
face of C++ ``include/track_gen/shard.hpp``.

Every track is keyed on its global env id (``env_offset + e``), so a rank that builds the envs of
its shard with ``env_offset`` = the shard's first id holds, bit for bit, the tracks those envs
have in one course of all of them, through any masked regenerations whose masks select the same
global ids (``examples/multi_gpu/check_shards.py`` checks it on the GPU)::

    import track_gen
    from track_gen.course import Course
    from track_gen.pipeline import presets

    params = track_gen.shard_params(presets.track(num_envs=1, device=device, seed=42),
                                    total_envs=E, world_size=world_size, rank=rank)
    course = Course.track(params)            # envs [params.env_offset, + params.num_envs)

The split is C++'s (``track_gen::shard_of``, through the extension): one formula for C++ and
Python users.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

from .pipeline.presets import TrackParams

__all__ = ["Shard", "shard_of", "shard_params"]


class Shard(NamedTuple):
    """The envs of one rank: global ids ``[first, first + num_envs)``."""

    first: int     #: global id of the rank's env 0: its ``TrackParams.env_offset``
    num_envs: int  #: envs of the rank: its ``TrackParams.num_envs``


def _int_arg(name: str, value) -> int:
    """TypeError unless an int (bool refused: it would silently become 0 or 1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"track_gen: shard_of: {name} must be an int, got {type(value).__name__} {value!r}")
    return value


def shard_of(total_envs: int, world_size: int, rank: int, base: int = 0) -> Shard:
    """Rank ``rank``'s share of ``total_envs`` envs with global ids ``[base, base + total_envs)``,
    split over ``world_size`` ranks in rank order: the first ``total_envs % world_size`` ranks
    get one env more than the others, so shards differ by at most one env and cover every id
    once (C++ ``track_gen::shard_of``). Host only: needs the compiled extension, not a GPU.

    Args:
        total_envs: envs of all ranks together, >= world_size.
        world_size: ranks, >= 1.
        rank: this rank, in [0, world_size).
        base: global id of the whole batch's first env, in [0, 2**32).
    Returns:
        ``Shard(first, num_envs)`` (Python ints).
    Raises:
        TypeError: an argument that is not an int (or a bool).
        ValueError: the C++ message naming the argument and its valid range: world_size < 1, rank
            outside [0, world_size), total_envs < world_size, base outside [0, 2**32), global ids
            past 2**32 - 1, or a shard of more than 2**30 envs (``num_envs``' range).
    """
    args = [_int_arg(n, v) for n, v in
            (("total_envs", total_envs), ("world_size", world_size), ("rank", rank), ("base", base))]
    from . import _extension  # noqa: PLC0415 - lazy: loads torch and the extension
    first, num_envs = _extension().shard_of(*args)
    return Shard(int(first), int(num_envs))


def shard_params(params: TrackParams, total_envs: int, world_size: int, rank: int) -> TrackParams:
    """``params`` for rank ``rank``: ``num_envs`` and ``env_offset`` of
    ``shard_of(total_envs, world_size, rank, base=params.env_offset)``, every other field as
    given (the same seed and device on every rank; set the device per rank yourself). As C++
    ``track_gen::shard_params``, ``params.num_envs`` is ignored: ``total_envs`` counts the envs.

    Raises:
        TypeError: ``params`` is not a TrackParams, or an argument is not an int.
        ValueError: as :func:`shard_of`.
    """
    if not isinstance(params, TrackParams):
        raise TypeError(f"track_gen: shard_params: params must be a TrackParams (presets.track(...)), "
                        f"got {type(params).__name__}")
    s = shard_of(total_envs, world_size, rank, base=params.env_offset)
    overrides = dict(params.overrides)
    overrides["env_offset"] = s.first
    return dataclasses.replace(params, num_envs=s.num_envs, overrides=overrides)

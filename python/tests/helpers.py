"""Shared helpers of the GPU tests: courses, agents that move along their tracks, snapshots and
bit-for-bit comparison of every output tensor."""
from __future__ import annotations

import gc
import time

import torch

import track_gen.course
from track_gen.course import Course
from track_gen.pipeline import presets

DEVICE = "cuda:0"


def progress_fields() -> tuple:
    """The progress tensors' names (the C++ field table, through the extension: loaded on first use)."""
    return track_gen.course.Progress._fields


def outputs() -> tuple:
    """Every output tensor's name: progress fields, then track fields."""
    return progress_fields() + track_gen.course.Tracks._fields


def make_course(num_envs: int, seed: int = 7, spacing: float = 0.6, device: str = DEVICE, **overrides) -> Course:
    """A course of the track preset on `device`, bound to a zero position tensor of its own."""
    course = Course.track(presets.track(num_envs=num_envs, device=device, seed=seed, **overrides),
                          checkpoint_spacing=spacing)
    course.bind(position=torch.zeros(num_envs, 3, device=device))
    return course


def output(course: Course, name: str) -> torch.Tensor:
    return getattr(course.progress, name) if name in progress_fields() else getattr(course.tracks, name)


def snapshot(course: Course) -> dict:
    """Clones of every output tensor (after the work queued so far)."""
    torch.cuda.synchronize()
    return {name: output(course, name).clone() for name in outputs()}


def assert_same(a: dict, b: dict, what: str = "") -> None:
    """Every tensor of two snapshots, bit for bit (floats compared as their int32 bits)."""
    for name in outputs():
        x, y = a[name], b[name]
        if x.dtype == torch.float32:
            x, y = x.view(torch.int32), y.view(torch.int32)
        bad = (x != y).nonzero()
        assert bad.numel() == 0, f"{what}{name} differs first at index {bad[0].tolist()} ({bad.shape[0]} elements)"


class Agents:
    """One agent per env, moved deterministically along its current track: on sample
    (7 e + stride * s) mod N, shifted sideways by a fraction of the half-width that cycles with s
    (s: the env's step counter). Writes the positions into a tensor in place."""

    def __init__(self, num_envs: int, stride: int = 3):
        self.steps = torch.zeros(num_envs, dtype=torch.int64, device=DEVICE)
        self.env = torch.arange(num_envs, device=DEVICE)
        self.stride = stride

    def move(self, course: Course, out: torch.Tensor) -> None:
        t = course.tracks
        n = t.position.shape[1]
        k = (7 * self.env + self.stride * self.steps) % n
        side = 0.25 * ((self.steps % 5) - 2).to(torch.float32)
        rows = self.env
        off = (side * t.half_width[rows, k]).unsqueeze(-1)
        out.copy_(t.position[rows, k] + off * t.normal[rows, k])
        self.steps += 1


def random_masks(count: int, num_envs: int, p: float, dtype, seed: int):
    """``count`` masks [E] of ``dtype`` with entries set with probability p (on the device)."""
    g = torch.Generator(device=DEVICE)
    g.manual_seed(seed)
    m = torch.rand(count, num_envs, generator=g, device=DEVICE) < p
    return m.to(dtype)


def eventually(done, seconds: float = 10.0) -> bool:
    """Polls done() until it holds (CUDA destroys graph user objects on an internal thread)."""
    until = time.monotonic() + seconds
    while True:
        gc.collect()
        torch.cuda.synchronize()
        if done():
            return True
        if time.monotonic() > until:
            return False
        time.sleep(0.01)

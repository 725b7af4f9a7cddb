"""Sharding over several processes (issue 18): ``track_gen.shard_of`` / ``shard_params`` against an
independent formula, shards built in one process against the whole batch, and the examples of
``examples/multi_gpu`` run under torchrun as two processes on one GPU (gloo), on every GPU when
there are several (NCCL), and with a deliberately wrong ``env_offset`` that the check must catch.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import track_gen
from track_gen.course import Course
from track_gen.pipeline import presets

from helpers import DEVICE

pytestmark = pytest.mark.gpu

_REPO = Path(__file__).resolve().parents[2]
_EXAMPLES = _REPO / "examples" / "multi_gpu"


def expected_shards(total: int, world: int, base: int) -> list:
    """(first, num_envs) of every rank, written independently of the library: sizes first (the
    first total % world ranks one env more), then the firsts as running sums from ``base``."""
    sizes = [total // world] * world
    for r in range(total % world):
        sizes[r] += 1
    firsts, at = [], base
    for s in sizes:
        firsts.append(at)
        at += s
    return list(zip(firsts, sizes))


@pytest.mark.parametrize("total, world, base", [
    (1, 1, 0), (1000, 2, 0), (1001, 2, 7), (1001, 3, 0), (7, 7, 0), (10, 4, 5), (1000, 7, 123),
    (10, 4, 2 ** 32 - 10),            # the last id is 2^32 - 1
    (2 ** 30, 1, 0), (2 ** 31 + 1, 3, 0),  # shards at and just below num_envs' maximum (2^30)
])
def test_shard_of_matches_an_independent_split_and_covers_every_id_once(total, world, base):
    got = [track_gen.shard_of(total, world, r, base=base) for r in range(world)]
    assert [tuple(s) for s in got] == expected_shards(total, world, base)
    assert all(isinstance(s, track_gen.Shard) and s.first == s[0] and s.num_envs == s[1] for s in got)
    if total <= 10_000:  # every id once, listed
        ids = [i for s in got for i in range(s.first, s.first + s.num_envs)]
        assert ids == list(range(base, base + total))
    assert max(s.num_envs for s in got) - min(s.num_envs for s in got) <= 1


@pytest.mark.parametrize("args, text", [
    ((10, 0, 0), r"track_gen: shard_of: world_size = 0, expected >= 1"),
    ((10, -3, 0), r"world_size = -3, expected >= 1"),
    ((10, 2, 2), r"rank = 2, expected in \[0, 1\] \(world_size = 2\)"),
    ((10, 2, -1), r"rank = -1, expected in \[0, 1\]"),
    ((1, 2, 0), r"total_envs = 1, expected >= world_size = 2 \(one env per rank at least\)"),
    ((10, 2, 0, 2 ** 32 - 5), r"base \+ total_envs - 1 = 4294967300, expected <= 2\^32 - 1"),
    ((10, 2, 0, -1), r"base = -1, expected in \[0, 4294967295\]"),
    ((10, 2, 0, 2 ** 32), r"base = 4294967296, expected in \[0, 4294967295\]"),
    ((2 ** 30 + 1, 1, 0), r"rank 0 would hold 1073741825 envs, more than track_params.num_envs allows"),
    ((10, 2, 2 ** 40), r"rank = 1099511627776, expected a 32-bit int"),
    ((10, 2 ** 33, 0), r"world_size = 8589934592, expected a 32-bit int"),
])
def test_shard_of_errors_are_value_errors_with_the_cpp_message(args, text):
    with pytest.raises(ValueError, match=text):
        track_gen.shard_of(*args)


def test_shard_params_sets_num_envs_and_env_offset_and_keeps_the_rest():
    p = presets.track(num_envs=5, device=DEVICE, seed=9, env_offset=7, half_width=0.4)
    for rank, (first, size) in enumerate(expected_shards(1001, 3, 7)):
        q = track_gen.shard_params(p, 1001, 3, rank)
        assert (q.num_envs, q.env_offset) == (size, first)
        assert (q.preset, q.device) == (p.preset, p.device)
        assert {k: v for k, v in q.overrides.items() if k != "env_offset"} == \
               {k: v for k, v in p.overrides.items() if k != "env_offset"}
    assert (p.num_envs, p.env_offset) == (5, 7)  # unchanged
    with pytest.raises(ValueError, match="rank = 3"):
        track_gen.shard_params(p, 1001, 3, 3)


def test_shards_built_in_one_process_equal_the_whole_batch_env_for_env():
    # The Python path of what tests/core/sharding_test checks in C++, without torchrun.
    total, world, base = 53, 4, 11
    whole_params = presets.track(num_envs=total, device=DEVICE, seed=42, env_offset=base, num_samples=64)
    whole = Course.track(whole_params)
    checked = 0
    for rank in range(world):
        part = Course.track(track_gen.shard_params(whole_params, total, world, rank))
        start = part.params.env_offset - base
        for name in whole.tracks._fields:
            a = getattr(whole.tracks, name)[start:start + part.num_envs]
            b = getattr(part.tracks, name)
            if name.startswith("gate_"):  # only the gates in use: the slots past num_gates are not written
                used = torch.arange(a.shape[1], device=DEVICE) < part.tracks.num_gates.unsqueeze(1)
                a, b = a[used], b[used]
            if a.dtype == torch.float32:
                a, b = a.view(torch.int32), b.view(torch.int32)
            assert torch.equal(a, b), f"rank {rank}: {name} differs from the whole batch"
        checked += part.num_envs
    assert checked == total
    # Not vacuous: a shard one id off holds other tracks.
    off = Course.track(track_gen.shard_params(whole_params, total, world, 1).replace(env_offset=base + 14 + 1))
    assert not torch.equal(off.tracks.position, whole.tracks.position[14:14 + off.num_envs])


# ---- the examples under torchrun ------------------------------------------------------------------

def _launcher_problem():
    """Why torchrun cannot run here, or None."""
    import torch.distributed as dist
    if not dist.is_available():
        return "torch.distributed is not available in this torch build"
    if not dist.is_gloo_available():
        return "torch.distributed has no gloo backend"
    try:
        import torch.distributed.run  # noqa: F401 - what the torchrun command runs
    except ImportError as e:
        return f"torch.distributed.run (torchrun) is not importable ({e})"
    return None


@pytest.fixture
def launcher():
    """Skips without torch.distributed / torchrun; under TRACK_GEN_REQUIRE_GPU=1 (the GPU
    machine) that is a failure instead, like a missing GPU."""
    problem = _launcher_problem()
    if problem is not None:
        if os.environ.get("TRACK_GEN_REQUIRE_GPU") == "1":
            pytest.fail(f"TRACK_GEN_REQUIRE_GPU=1 but {problem}")
        pytest.skip(problem)


def _first_visible_gpu() -> str:
    """The first entry of CUDA_VISIBLE_DEVICES (the first GPU when unset)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    return visible.split(",")[0] if visible else "0"


def run_example(script: str, nproc: int, *args, one_gpu: bool = True, timeout: int = 300):
    """``torchrun --standalone --nproc_per_node=nproc examples/multi_gpu/<script> args`` (as
    ``python -m torch.distributed.run``: this interpreter's torch), or the script alone when
    ``nproc`` is 0; the package these tests imported (an installed one, or this source tree with
    its in-place build) first on PYTHONPATH. ``one_gpu`` hides every GPU but the first."""
    env = dict(os.environ)
    package_root = str(Path(track_gen.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("OMP_NUM_THREADS", "1")
    if one_gpu:
        env["CUDA_VISIBLE_DEVICES"] = _first_visible_gpu()
    launch = [] if nproc == 0 else ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    cmd = [sys.executable, *launch, str(_EXAMPLES / script), *map(str, args)]
    out = subprocess.run(cmd, cwd=_REPO, env=env, capture_output=True, text=True, timeout=timeout)
    return out, f"$ {' '.join(cmd)}\n--- stdout\n{out.stdout[-6000:]}\n--- stderr\n{out.stderr[-6000:]}"


def check_report(report: dict, total: int, world: int, base: int, backend: str) -> None:
    assert report["match"] is True and report["mismatched_envs"] == 0 and report["coverage"] is True
    assert (report["total_envs"], report["world_size"], report["backend"]) == (total, world, backend)
    assert [(r["first"], r["envs"]) for r in report["ranks"]] == expected_shards(total, world, base)
    assert [s["name"] for s in report["stages"]] == ["construction", "round 1", "round 2", "round 3"]
    assert all(s["done_envs"] > 0 for s in report["stages"][1:])  # every round regenerated some envs
    assert 0 < report["changed_envs"] < total                    # ... and the check saw them change


def test_check_shards_two_ranks_on_one_gpu_match_one_process(tmp_path, launcher):
    report_path = tmp_path / "check.json"
    out, log = run_example("check_shards.py", 2, "--envs", 1001, "--base", 7, "--out", report_path)
    assert out.returncode == 0, log
    check_report(json.loads(report_path.read_text()), 1001, 2, 7, "gloo")
    assert "match: True" in out.stdout, log


def test_check_shards_catches_a_rank_with_a_wrong_env_offset(tmp_path, launcher):
    report_path = tmp_path / "check.json"
    out, log = run_example("check_shards.py", 2, "--envs", 1001, "--base", 7, "--skew-rank", 1, "--out", report_path)
    assert out.returncode != 0, log
    report = json.loads(report_path.read_text())
    assert report["match"] is False and report["skew_rank"] == 1
    rank0, rank1 = report["ranks"]
    assert rank0["mismatched_envs"] == 0 and 0 < rank1["mismatched_envs"] <= rank1["envs"]
    assert report["mismatched_envs"] == rank1["mismatched_envs"]
    assert all(m["rank"] == 1 for m in report["first_mismatches"])


def test_check_shards_on_every_gpu_with_nccl(tmp_path, launcher):
    count = torch.cuda.device_count()
    if count < 2:
        pytest.skip(f"needs 2 GPUs or more (NCCL, one rank per GPU); {count} visible")
    report_path = tmp_path / "check.json"
    out, log = run_example("check_shards.py", count, "--envs", 4099, "--out", report_path, one_gpu=False)
    assert out.returncode == 0, log
    check_report(json.loads(report_path.read_text()), 4099, count, 0, "nccl")


def test_race_totals_do_not_depend_on_the_number_of_ranks(tmp_path, launcher):
    args = ["--envs", 301, "--steps", 400, "--max-episode-steps", 150, "--log-every", 0]
    one, log1 = run_example("race.py", 0, *args, "--out", tmp_path / "race1.json")  # a world of one, no group
    assert one.returncode == 0, log1
    two, log2 = run_example("race.py", 2, *args, "--out", tmp_path / "race2.json")
    assert two.returncode == 0, log2
    r1, r2 = (json.loads((tmp_path / f).read_text()) for f in ("race1.json", "race2.json"))
    assert (r1["backend"], r1["world_size"], r2["backend"], r2["world_size"]) == ("none", 1, "gloo", 2)
    assert r1["totals"]["env_steps"] == 301 * 400
    assert r1["totals"]["episodes"] > 0 and r1["totals"]["laps"] > 0  # agents lapped and episodes ended
    assert r2["totals"] == r1["totals"], f"{log1}\n{log2}"
    assert sum(r["laps"] for r in r2["ranks"]) == r2["totals"]["laps"]  # the all-reduce summed the ranks

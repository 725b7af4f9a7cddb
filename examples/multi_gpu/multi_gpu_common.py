"""What the multi-GPU examples share: the process group (torchrun), one CUDA device per rank, the
masks of global env ids, per-env track hashes, CUDA-event timing and the JSON report.

Each example runs under ``torchrun --nproc_per_node=G`` (one process per rank); run with plain
``python`` it is one rank of a world of one, without a process group.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional

import torch
import torch.distributed as dist

# The package from this source tree when it is not installed (an in-place build of python/).
_PY_ROOT = Path(__file__).resolve().parents[2] / "python"
try:
    import track_gen  # noqa: F401
except ImportError:
    sys.path.insert(0, str(_PY_ROOT))

BACKENDS = ("auto", "nccl", "gloo")


@dataclass(frozen=True)
class Rank:
    """This process's place in the run."""

    rank: int              #: global rank, in [0, world_size)
    world_size: int        #: processes of the run
    local_rank: int        #: rank on this machine
    local_world_size: int  #: processes on this machine
    device: torch.device   #: cuda:(local_rank % device_count)
    backend: str           #: "nccl", "gloo", or "none" (a world of one without a process group)

    @property
    def distributed(self) -> bool:
        return self.backend != "none"


def arg_parser(doc: str, envs: int, envs_note: str = "") -> argparse.ArgumentParser:
    """The options every example has: --envs (E, default ``envs``), --seed, --spacing, --backend,
    --out; the script adds its own."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, default=envs, help=f"E: envs of all ranks together (default {envs}{envs_note})")
    ap.add_argument("--seed", type=int, default=42, help="seed of every rank (default 42)")
    ap.add_argument("--spacing", type=float, default=0.6, help="checkpoint spacing [m] (default 0.6)")
    ap.add_argument("--backend", choices=BACKENDS, default="auto",
                    help="process group backend (default auto: nccl when each rank has a GPU, else gloo)")
    ap.add_argument("--out", default=None, help="JSON report path (written by rank 0)")
    return ap


def pick_backend(requested: str, local_world_size: int, device_count: int) -> str:
    """The process-group backend: ``requested`` unless "auto"; then NCCL when every rank on this
    machine has a GPU of its own, gloo otherwise.

    NCCL refuses two ranks on one GPU (its communicator fails with "Duplicate GPU detected"), so
    ranks that share a GPU (G processes on a one-GPU machine) talk through gloo, over the CPU.
    The rule counts the ranks of this machine (torchrun's LOCAL_WORLD_SIZE): on one machine that
    is the world size; on several identical machines each picks the same backend.

    Raises:
        ValueError: an unknown backend, or "nccl" asked for with more ranks than GPUs here.
    """
    if requested not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {requested!r}")
    if requested == "nccl" and local_world_size > device_count:
        raise ValueError(f"backend nccl with {local_world_size} ranks on {device_count} GPU(s): NCCL refuses two "
                         "ranks on one GPU; use --backend gloo (or auto)")
    if requested != "auto":
        return requested
    return "nccl" if local_world_size <= device_count else "gloo"


def start(requested_backend: str = "auto") -> Rank:
    """Joins torchrun's process group (environment ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
    ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``/``PORT``) and makes ``cuda:(local_rank % device_count)``
    the current device. Without ``RANK`` (plain ``python``): a world of one, no process group.

    Raises:
        SystemExit: no CUDA device.
        ValueError: as :func:`pick_backend`.
    """
    if not torch.cuda.is_available():
        raise SystemExit("multi_gpu: torch sees no CUDA device (track_gen's Python course runs on CUDA only)")
    count = torch.cuda.device_count()
    if "RANK" not in os.environ:
        device = torch.device("cuda", 0)
        torch.cuda.set_device(device)
        return Rank(0, 1, 0, 1, device, "none")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    device = torch.device("cuda", local_rank % count)
    torch.cuda.set_device(device)  # before the group: NCCL and all_gather_object use the current device
    backend = pick_backend(requested_backend, local_world, count)
    if backend == "nccl":
        dist.init_process_group(backend="nccl", device_id=device)
    else:
        dist.init_process_group(backend="gloo")
    return Rank(rank, world, local_rank, local_world, device, backend)


def barrier(me: Rank) -> None:
    """Waits for every rank (nothing in a world of one)."""
    if me.distributed:
        dist.barrier()


def finish(me: Rank) -> None:
    """Leaves the process group (after a barrier, so no rank tears it down under another)."""
    if me.distributed:
        dist.barrier()
        dist.destroy_process_group()


def gather(me: Rank, obj) -> List:
    """Every rank's ``obj`` in rank order (pickled: small objects only), on every rank."""
    if not me.distributed:
        return [obj]
    out = [None] * me.world_size
    dist.all_gather_object(out, obj)
    return out


def broadcast(me: Rank, obj, src: int = 0):
    """Rank ``src``'s ``obj`` on every rank."""
    if not me.distributed:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=src)
    return box[0]


def all_reduce_sum(me: Rank, values: torch.Tensor) -> torch.Tensor:
    """The element-wise sum over ranks of ``values`` (any device), as a new CPU float64 tensor.
    NCCL reduces on the GPU; gloo on CPU tensors (its CUDA path is not in every torch build)."""
    where = me.device if me.backend == "nccl" else torch.device("cpu")
    t = values.detach().to(device=where, dtype=torch.float64).clone()
    if me.distributed:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.cpu()


def done_in_round(global_ids: torch.Tensor, round_: int) -> torch.Tensor:
    """Whether each global env id's episode ends in round ``round_`` (bool, same shape and device):
    about one env in five, another set each round; a function of the id alone, so every rank
    computes its own ids' part of the whole batch's mask. The rule of the C++ sharding test
    (tests/core/sharding_tests.hpp ``done_in_round``): ``((id * 2654435761) mod 2**32 >> (7 + round)) % 5 == 0``
    (the shift taken modulo 16 beyond round 15, where it would empty the hash).

    The uint32 product is formed from 16-bit halves: int64 holds each partial product exactly.
    """
    k = 2654435761
    ids = global_ids.to(torch.int64)
    lo, hi = ids & 0xFFFF, (ids >> 16) & 0xFFFF
    h = (lo * k + (((hi * k) & 0xFFFF) << 16)) & 0xFFFFFFFF
    return ((h >> (7 + round_ % 16)) % 5) == 0


def env_hashes(course) -> List[str]:
    """SHA-256 of each env's track, hex, in env order: every track field of ``course.tracks``
    (the C++ field table: positions, frames, half-widths, borders, gates, length, status,
    episode, origin) as bytes of a CPU copy; gate fields only over the env's ``num_gates`` slots
    (generation writes only those: the slots past it hold an earlier track's gates or whatever
    the allocation held). Synchronises."""
    torch.cuda.synchronize(course.device)
    t = course.tracks
    fields = {name: getattr(t, name).cpu().numpy() for name in t._fields}
    num_gates = fields["num_gates"]
    out = []
    for e in range(course.num_envs):
        h = hashlib.sha256()
        for name, values in fields.items():
            row = values[e]
            if name.startswith("gate_"):  # the per-gate fields of the table ([E, G_max, ...])
                row = row[: int(num_gates[e])]
            h.update(name.encode())
            h.update(row.tobytes())
        out.append(h.hexdigest())
    return out


def median_ms(run: Callable[[], None], repeats: int, warmup: int, inner: int = 1) -> float:
    """Median over ``repeats`` timings of ``inner`` calls of ``run`` [ms per call], CUDA events
    on the current stream around each timing, after ``warmup`` untimed calls. Synchronises."""
    for _ in range(warmup):
        run()
    stream = torch.cuda.current_stream()
    pairs = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(stream)
        for _ in range(inner):
            run()
        b.record(stream)
        pairs.append((a, b))
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) / inner for a, b in pairs)


def write_json(path: Optional[str], report: dict) -> None:
    """``report`` as indented JSON at ``path`` (folders made); nothing when path is None."""
    if not path:
        return
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(report, indent=2) + "\n")


def print_table(rows: List[List], header: List[str]) -> None:
    """A plain aligned text table."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for i, r in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
        if i == 0:
            print("  ".join("-" * w for w in widths))

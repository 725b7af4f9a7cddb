"""track_gen: batches of closed race tracks on the GPU (or the CPU), their gates, and agents' progress.

The Python face of the C++ library (``include/track_gen``), driven from PyTorch::

    from track_gen.course import Course
    from track_gen.pipeline import presets
    import track_gen.interop.torch
    track_gen.shard_params(params, total_envs, world_size, rank)   # one rank's envs (torchrun)
    track_gen.GateGenerator(presets.gate_course(64)).generate()   # gates only (track_gen.generator)

Importing the package needs neither torch nor the compiled extension ``track_gen._C``: both are
loaded at the first call that needs them (``Course.track``, ``registered``), so the pure-Python
parts (``retain``, ``CaptureError``, argument checks) work anywhere.
"""
__version__ = "0.1.0"

from .shard import Shard, shard_of, shard_params  # noqa: E402 - pure Python; the C++ split is loaded on first call
from .circuits import Circuit, course_from_circuits, export_track, load_circuit, save_circuit  # noqa: E402 - pure Python
# The seed system's generate-only classes; pure Python at import (torch loads at construction).
from .generator import GateGenerator, GateSequence, Track, TrackGenerator  # noqa: E402

__all__ = ["Shard", "release_deferred", "shard_of", "shard_params",
           "Circuit", "course_from_circuits", "export_track", "load_circuit", "save_circuit",
           "GateGenerator", "GateSequence", "Track", "TrackGenerator"]


def _extension():
    """The compiled extension ``track_gen._C`` (imported on first use, with torch). ImportError
    saying what to install when torch or the extension is missing."""
    try:
        import torch  # noqa: F401 - loads libtorch before the extension that links it
    except ImportError as err:
        raise ImportError("track_gen's courses need PyTorch: pip install torch (any build: with CUDA for GPU "
                          f"courses, CPU-only for device='cpu'), then pip install ./python from the repository root "
                          f"({err})") from err
    try:
        from . import _C
    except ImportError as err:
        raise ImportError("track_gen's compiled extension track_gen._C is not built or does not match this torch: "
                          "from the repository root, pip install ./python (with torch already installed; offline: "
                          "--no-build-isolation with scikit-build-core, cmake and ninja installed; CUDA needs nvcc, "
                          f"the CPU-only build a C++17 compiler) ({err})") from err
    return _C


def release_deferred() -> None:
    """Frees now the course memory that destroyed graphs released (CUDA hands it back on an
    internal thread where no CUDA call is allowed, so it waits for the next library call made
    outside a capture). Not inside a capture."""
    _extension().release_deferred()

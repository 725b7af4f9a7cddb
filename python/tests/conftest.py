"""pytest configuration of the track_gen Python tests.

Tests marked ``gpu`` need torch with CUDA, a GPU and the compiled extension ``track_gen._C``.
Without them they are skipped, unless ``TRACK_GEN_REQUIRE_GPU=1`` (set by scripts/python-check on
the GPU machine), where a missing GPU or extension is an error, never a silent skip.
Tests marked ``cpu`` need torch (any build) and the extension, no GPU: they run CPU courses
(``device="cpu"``); skipped without them unless ``TRACK_GEN_REQUIRE_CPU=1`` (CI, which builds
the CPU-only extension). Tests that take the ``device`` fixture run once per device, marked
accordingly. Run the CPU and pure-Python ones with ``pytest -m "not gpu"``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

# The package from the source tree when it is not installed (ctest's python.pure runs so); an
# installed one (with its compiled extension: scripts/python-check --pip, python-cpu-check) wins.
_PY_ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("track_gen") is None and str(_PY_ROOT) not in sys.path:
    sys.path.insert(0, str(_PY_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _torch_importable() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


# Without torch the GPU test modules cannot even be imported (they import torch at the top):
# leave them out of the collection. These modules import torch only inside their GPU tests.
_IMPORTABLE_WITHOUT_TORCH = {"test_pure_python.py", "test_generators.py", "test_circuits.py", "test_binding_tables.py",
                             "test_gate_courses.py", "test_build_config.py", "test_ppo_report.py"}
collect_ignore = []
if not _torch_importable():
    if os.environ.get("TRACK_GEN_REQUIRE_GPU") == "1":
        raise pytest.UsageError("TRACK_GEN_REQUIRE_GPU=1 but torch is not importable")
    collect_ignore = [p.name for p in Path(__file__).resolve().parent.glob("test_*.py")
                      if p.name not in _IMPORTABLE_WITHOUT_TORCH]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs torch with CUDA, a GPU and the compiled track_gen._C extension")
    config.addinivalue_line("markers", "cpu: needs torch and the compiled track_gen._C extension (either build), no GPU")


@pytest.fixture(params=[pytest.param("cpu", marks=pytest.mark.cpu), pytest.param("cuda:0", marks=pytest.mark.gpu)])
def device(request):
    """Each device a course can live on: "cpu" (the host backend, marked cpu) and "cuda:0"
    (marked gpu). Tests that take it run once per device."""
    return request.param


def _cpu_problem():
    """Why the CPU tests cannot run here, or None."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        return f"torch is not importable ({e})"
    try:
        import track_gen
        track_gen._extension()
    except ImportError as e:
        return str(e)
    return None


def _gpu_problem():
    """Why the GPU tests cannot run here, or None."""
    try:
        import torch
    except ImportError as e:
        return f"torch is not importable ({e})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    try:
        import track_gen
        track_gen._extension()
    except ImportError as e:
        return f"the extension track_gen._C is not built ({e}); run pip install --no-build-isolation ./python"
    return None


def pytest_collection_modifyitems(config, items):
    cpu_items = [item for item in items if "cpu" in item.keywords]
    if cpu_items:
        problem = _cpu_problem()
        if problem is not None:
            if os.environ.get("TRACK_GEN_REQUIRE_CPU") == "1":
                raise pytest.UsageError(f"TRACK_GEN_REQUIRE_CPU=1 but {problem}")
            for item in cpu_items:
                item.add_marker(pytest.mark.skip(reason=problem))
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    problem = _gpu_problem()
    if problem is None:
        return
    if os.environ.get("TRACK_GEN_REQUIRE_GPU") == "1":
        raise pytest.UsageError(f"TRACK_GEN_REQUIRE_GPU=1 but {problem}")
    skip = pytest.mark.skip(reason=problem)
    for item in gpu_items:
        item.add_marker(skip)

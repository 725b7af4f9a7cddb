"""Builds the track_gen Python package and its torch extension ``track_gen._C``.

From the repository root (torch, pybind11, ninja and setuptools already installed; no internet
needed)::

    pip install --no-build-isolation ./python

Two builds of the extension: with CUDA (csrc/module.cu by nvcc: CUDA and CPU courses) when torch
was built with CUDA and the CUDA toolkit is found (CUDA_HOME or nvcc on PATH), else CPU only
(csrc/module_cpu.cpp by the C++ compiler: ``device="cpu"`` courses).

Environment:
    TRACK_GEN_BACKENDS     "cpu" to build the CPU-only extension even where CUDA is available
    TRACK_GEN_INCLUDE_DIR  the C++ headers (default: <repo>/include)
    RANDOM123_INCLUDE_DIR  directory holding Random123/philox.h (default: <repo>/.deps/usr/include
                           when present, else /usr/include)
    TORCH_CUDA_ARCH_LIST   GPU architectures ("8.6;9.0"); when unset, from CUDAARCHS (CMake's
                           form, "86;90", suffixes -real/-virtual dropped), else torch's default:
                           the architectures of the GPUs visible at build time
    MAX_JOBS               parallel compile jobs of torch's ninja build
"""
import os
import re
from pathlib import Path

from setuptools import setup

here = Path(__file__).resolve().parent
repo = here.parent


def arch_list_from_cudaarchs(value: str) -> str:
    """CMake's CUDAARCHS ("86;90-real") as torch's TORCH_CUDA_ARCH_LIST ("8.6;9.0")."""
    archs = []
    for item in value.replace(",", ";").split(";"):
        m = re.fullmatch(r"(\d+)(\d)([af]?)", item.strip().split("-")[0])
        if m is None:
            raise RuntimeError(f"track_gen setup: CUDAARCHS entry {item!r} is not an architecture like 90, 90a or 86-real")
        archs.append(f"{m.group(1)}.{m.group(2)}{m.group(3)}")
    return ";".join(archs)


if "TORCH_CUDA_ARCH_LIST" not in os.environ and os.environ.get("CUDAARCHS", "").strip():
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list_from_cudaarchs(os.environ["CUDAARCHS"])

import torch  # noqa: E402 - after the arch list
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension  # noqa: E402


def random123_include() -> str:
    """Where Random123/philox.h is: $RANDOM123_INCLUDE_DIR, <repo>/.deps/usr/include, /usr/include."""
    explicit = os.environ.get("RANDOM123_INCLUDE_DIR")
    candidates = [explicit] if explicit else [str(repo / ".deps" / "usr" / "include"), "/usr/include"]
    for c in candidates:
        if (Path(c) / "Random123" / "philox.h").is_file():
            return c
    raise RuntimeError(
        "track_gen setup: Random123/philox.h not found in " + ", ".join(candidates)
        + "; install librandom123-dev, run scripts/fetch-device-deps, or set RANDOM123_INCLUDE_DIR")


def library_include() -> str:
    """The C++ library's headers: $TRACK_GEN_INCLUDE_DIR or <repo>/include (pip builds in place)."""
    where = Path(os.environ.get("TRACK_GEN_INCLUDE_DIR", repo / "include"))
    if not (where / "track_gen" / "course.hpp").is_file():
        raise RuntimeError(f"track_gen setup: track_gen/course.hpp not found under {where}; build from the "
                           "repository (pip install --no-build-isolation ./python) or set TRACK_GEN_INCLUDE_DIR")
    return str(where)


def build_cuda() -> bool:
    """Whether to build the CUDA extension: torch has CUDA, the toolkit is found, and
    TRACK_GEN_BACKENDS is not "cpu"."""
    wanted = os.environ.get("TRACK_GEN_BACKENDS", "").strip().lower()
    if wanted not in ("", "cpu", "cuda"):
        raise RuntimeError(f"track_gen setup: TRACK_GEN_BACKENDS = {wanted!r}; expected 'cpu', 'cuda' or unset")
    available = torch.version.cuda is not None and CUDA_HOME is not None
    if wanted == "cuda" and not available:
        raise RuntimeError("track_gen setup: TRACK_GEN_BACKENDS=cuda, but "
                           + ("this torch was built without CUDA" if torch.version.cuda is None
                              else "the CUDA toolkit (nvcc) was not found: set CUDA_HOME"))
    if available and wanted == "" and "TORCH_CUDA_ARCH_LIST" not in os.environ and torch.cuda.device_count() == 0:
        # torch takes the architectures from the visible GPUs; with none (a machine without a GPU
        # but with CUDA torch, PyPI's default, and nvcc) it has nothing to build for.
        print("track_gen setup: CUDA torch and nvcc but no GPU visible and no TORCH_CUDA_ARCH_LIST or CUDAARCHS: "
              "building the CPU-only extension; to build for GPUs elsewhere set TORCH_CUDA_ARCH_LIST (e.g. 9.0) "
              "or TRACK_GEN_BACKENDS=cuda with one of them")
        return False
    if wanted == "cuda" and "TORCH_CUDA_ARCH_LIST" not in os.environ and torch.cuda.device_count() == 0:
        raise RuntimeError("track_gen setup: TRACK_GEN_BACKENDS=cuda with no GPU visible: set TORCH_CUDA_ARCH_LIST "
                           "(e.g. 9.0) or CUDAARCHS (e.g. 90) to say which GPUs to build for")
    return available and wanted != "cpu"


def language_standard() -> str:
    """-std=c++17 (the library's), or c++20 where torch's headers require it (they say so in
    ATen/ATen.h: torch 2.12 and later)."""
    aten = Path(torch.__file__).resolve().parent / "include" / "ATen" / "ATen.h"
    needs_20 = aten.is_file() and "C++20 or later" in aten.read_text(errors="replace")
    return "-std=c++20" if needs_20 else "-std=c++17"


def extension():
    """The CUDA extension (module.cu) or the CPU-only one (module_cpu.cpp), see build_cuda."""
    includes = [library_include(), random123_include()]
    std = language_standard()
    if build_cuda():
        return CUDAExtension(name="track_gen._C", sources=["csrc/module.cu"], include_dirs=includes,
                             extra_compile_args={"cxx": ["-O2", std], "nvcc": ["-O3", std]})
    print("track_gen setup: building the CPU-only extension (device='cpu' courses)")
    return CppExtension(name="track_gen._C", sources=["csrc/module_cpu.cpp"], include_dirs=includes,
                        extra_compile_args={"cxx": ["-O2", std]})


setup(
    name="track_gen",
    version="0.1.0",
    description="Batches of closed race tracks and progress tracking on the GPU or CPU (PyTorch bindings)",
    packages=["track_gen", "track_gen.envs", "track_gen.exec", "track_gen.interop", "track_gen.pipeline"],
    package_data={"track_gen": ["_C.pyi", "py.typed"]},  # the extension's type stubs (PEP 561)
    python_requires=">=3.9",
    ext_modules=[extension()],
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)

"""Builds the track_gen Python package and its torch extension ``track_gen._C``.

From the repository root (torch, pybind11, ninja and setuptools already installed; no internet
needed)::

    pip install --no-build-isolation ./python

Environment:
    TRACK_GEN_INCLUDE_DIR  the C++ headers (default: <repo>/include)
    RANDOM123_INCLUDE_DIR  directory holding Random123/philox.h (default: <repo>/.deps/usr/include
                           when present, else /usr/include)
    TORCH_CUDA_ARCH_LIST   GPU architectures (default "9.0": sm_90, the H200)
    MAX_JOBS               parallel compile jobs of torch's ninja build
"""
import os
from pathlib import Path

from setuptools import setup

here = Path(__file__).resolve().parent
repo = here.parent
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")

from torch.utils.cpp_extension import BuildExtension, CUDAExtension  # noqa: E402 - after the arch default


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


setup(
    name="track_gen",
    version="0.1.0",
    description="Batches of closed race tracks and progress tracking on the GPU (PyTorch bindings)",
    packages=["track_gen", "track_gen.exec", "track_gen.interop", "track_gen.pipeline"],
    package_data={"track_gen": ["_C.pyi", "py.typed"]},  # the extension's type stubs (PEP 561)
    python_requires=">=3.9",
    ext_modules=[
        CUDAExtension(
            name="track_gen._C",
            sources=["csrc/module.cu"],
            include_dirs=[library_include(), random123_include()],
            extra_compile_args={
                "cxx": ["-O2", "-std=c++17"],
                "nvcc": ["-O3", "-std=c++17"],
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)

"""What python/csrc/CMakeLists.txt needs to know about torch and the machine to build ``track_gen._C``.

Run by CMake (``pip install ./python`` through scikit-build-core) with the interpreter that pip
installs into: ``python build_config.py OUT.cmake`` writes ``set(NAME "VALUE")`` lines (lists
';'-separated) for CMake to include, or prints one sentence on stderr and exits with status 1.

The extension is built from torch's own C++ build settings (``torch.utils.cpp_extension``: include
and library paths, the pybind11 ABI flags; ``torch._C._GLIBCXX_USE_CXX11_ABI``), as torch's
setuptools extensions are, and not through torch's CMake package: that one fails to load when torch
was built with CUDA but no CUDA toolkit is installed (a CUDA wheel from PyPI on a machine without
nvcc, where the CPU-only extension must still build), and it replaces CMAKE_CUDA_ARCHITECTURES by
its own architecture list.

Environment read:
    TRACK_GEN_BACKENDS    "cpu", "cuda", or unset (auto); "none" never reaches CMake (pyproject.toml:
                          a pure-Python wheel without the extension)
    CUDAARCHS             CMake's CUDA architectures ("86;90", "90a-real"), used as given
    TORCH_CUDA_ARCH_LIST  torch's form ("8.6;9.0+PTX"), converted when CUDAARCHS is unset
    CUDACXX, CUDA_HOME, CUDA_PATH   where nvcc is (else PATH, else /usr/local/cuda/bin/nvcc)

The functions below take their inputs as arguments (no torch, no environment) so that
python/tests/test_build_config.py checks them alone.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import warnings
from pathlib import Path
from typing import Mapping, Optional


class ConfigError(Exception):
    """A build that cannot go ahead; the message says what to do."""


def cuda_architectures_from_torch(arch_list: str) -> str:
    """torch's TORCH_CUDA_ARCH_LIST ("8.6;9.0+PTX", also space-separated) as CMake's
    CUDA_ARCHITECTURES ("86-real;90"): "X.Y" is SASS only (torch's code=sm_XY, CMake's XY-real),
    "X.Y+PTX" adds the PTX (CMake's plain XY). Raises ConfigError for other entries (torch's
    architecture names such as "Hopper" included: give numbers)."""
    out = []
    for item in re.split(r"[;\s]+", arch_list.strip()):
        if not item:
            continue
        m = re.fullmatch(r"(\d+)\.(\d)([af]?)(\+PTX)?", item)
        if m is None:
            raise ConfigError(f"TORCH_CUDA_ARCH_LIST entry {item!r} is not an architecture like 8.6, 9.0a or 9.0+PTX")
        out.append(f"{m.group(1)}{m.group(2)}{m.group(3)}" + ("" if m.group(4) else "-real"))
    if not out:
        raise ConfigError("TORCH_CUDA_ARCH_LIST is empty: unset it or name architectures like 9.0")
    return ";".join(out)


def check_cudaarchs(value: str) -> str:
    """CMake's CUDAARCHS ("86;90a-real;100-virtual", also "native" or "all"), checked and
    ';'-separated. Raises ConfigError for an entry CMake would reject (e.g. "sm_90", "9.0")."""
    items = [i for i in re.split(r"[;,\s]+", value.strip()) if i]
    for item in items:
        if item not in ("native", "all", "all-major") and not re.fullmatch(r"\d+[af]?(-real|-virtual)?", item):
            raise ConfigError(f"CUDAARCHS entry {item!r} is not a CMake CUDA architecture like 90, 90a or 86-real")
    if not items:
        raise ConfigError("CUDAARCHS is empty: unset it or name architectures like 90")
    return ";".join(items)


def cuda_architectures(cudaarchs: Optional[str], torch_arch_list: Optional[str]) -> Optional[str]:
    """The CUDA architectures asked for: CUDAARCHS as given, else TORCH_CUDA_ARCH_LIST converted,
    else None (none named)."""
    if cudaarchs is not None and cudaarchs.strip():
        return check_cudaarchs(cudaarchs)
    if torch_arch_list is not None and torch_arch_list.strip():
        return cuda_architectures_from_torch(torch_arch_list)
    return None


def choose_backend(wanted: str, torch_cuda: Optional[str], nvcc: Optional[str], gpus: int,
                   archs: Optional[str]) -> "tuple[str, str]":
    """Which extension to build, and for which GPUs: ("cuda", CMake architectures) or ("cpu", "").

    wanted: TRACK_GEN_BACKENDS ("", "cpu" or "cuda"); torch_cuda: torch.version.cuda (None for a
    CPU-only torch); nvcc: the CUDA compiler's path or None; gpus: GPUs torch sees; archs: the
    architectures named (see cuda_architectures) or None. Unset (auto) builds CUDA when torch has
    CUDA, nvcc is found, and a GPU is visible or architectures are named; the architectures are
    those named, else "native" (the visible GPUs'). Raises ConfigError when "cuda" is asked for
    and cannot be built, or for another value of wanted."""
    wanted = wanted.strip().lower()
    if wanted not in ("", "cpu", "cuda"):
        raise ConfigError(f"TRACK_GEN_BACKENDS={wanted!r}; expected 'cpu', 'cuda', 'none' or unset")
    if wanted == "cpu":
        return "cpu", ""
    missing = ("this torch was built without CUDA" if torch_cuda is None
               else "the CUDA compiler nvcc was not found (set CUDACXX or CUDA_HOME, or put nvcc on PATH)"
               if nvcc is None else None)
    if wanted == "cuda":
        if missing is not None:
            raise ConfigError(f"TRACK_GEN_BACKENDS=cuda, but {missing}")
        if archs is None and gpus == 0:
            raise ConfigError("TRACK_GEN_BACKENDS=cuda with no GPU visible: set CUDAARCHS (e.g. 90) or "
                              "TORCH_CUDA_ARCH_LIST (e.g. 9.0) to say which GPUs to build for")
        return "cuda", archs or "native"
    if missing is None and (archs is not None or gpus > 0):
        return "cuda", archs or "native"
    return "cpu", ""


def find_nvcc(env: Mapping[str, str], which=shutil.which, default: str = "/usr/local/cuda/bin/nvcc") -> Optional[str]:
    """nvcc as torch and CMake look for it: $CUDACXX, $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc,
    nvcc on PATH (`which`), `default`; the first that is an executable file, else None."""
    candidates = [env.get("CUDACXX")]
    candidates += [str(Path(env[k]) / "bin" / "nvcc") for k in ("CUDA_HOME", "CUDA_PATH") if env.get(k)]
    candidates += [which("nvcc"), default]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    return None


def needs_cxx20(aten_header: Path) -> bool:
    """Whether torch's headers require C++20 (ATen/ATen.h says "C++20 or later": torch 2.12 and
    later); the library itself is C++17."""
    return aten_header.is_file() and "C++20 or later" in aten_header.read_text(errors="replace")


def cmake_list(values) -> str:
    """A CMake list of strings (no ';' inside an item)."""
    return ";".join(str(v) for v in values)


def torch_settings() -> "dict[str, str]":
    """torch's C++ build settings (imports torch). Raises ConfigError without torch."""
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError as err:
        raise ConfigError(
            f"PyTorch is not importable by {sys.executable} ({err}): install torch first (pip install torch; "
            "any build: CUDA for GPU courses, CPU-only for device='cpu'), then run "
            "pip install ./python from the repository root again (offline: pip install --no-build-isolation ./python, "
            "with scikit-build-core, cmake and ninja installed)") from err
    root = Path(torch.__file__).resolve().parent
    flags = [f"_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"]
    # torch < 2.8 also pinned pybind11's ABI tag ("-DPYBIND11_COMPILER_TYPE=..."); later ones return [].
    with warnings.catch_warnings():  # deprecated (not removed) in torch 2.9 and later
        warnings.simplefilter("ignore")
        abi_flags = getattr(cpp_extension, "_get_pybind11_abi_build_flags", lambda: [])()
    flags += [f[2:] for f in abi_flags if f.startswith("-D")]
    return {
        "TORCH_VERSION": torch.__version__,
        "TORCH_CUDA_VERSION": torch.version.cuda or "",
        "TORCH_INCLUDE_DIRS": cmake_list(cpp_extension.include_paths()),
        "TORCH_LIBRARY_DIRS": cmake_list(cpp_extension.library_paths()),
        "TORCH_DEFINITIONS": cmake_list(flags),
        "TORCH_CXX_STANDARD": "20" if needs_cxx20(root / "include" / "ATen" / "ATen.h") else "17",
        "TORCH_GPUS": str(torch.cuda.device_count() if torch.version.cuda else 0),
    }


def cmake_set(name: str, value: str) -> str:
    """A CMake set() line that gives `name` the string `value` (quotes, backslashes and $ escaped)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'set({name} "{escaped}")'


def main(env: Mapping[str, str], out: Path) -> int:
    try:
        settings = torch_settings()
        nvcc = find_nvcc(env)
        archs = cuda_architectures(env.get("CUDAARCHS"), env.get("TORCH_CUDA_ARCH_LIST"))
        backend, arch = choose_backend(env.get("TRACK_GEN_BACKENDS", ""), settings["TORCH_CUDA_VERSION"] or None,
                                       nvcc, int(settings["TORCH_GPUS"]), archs)
    except ConfigError as err:
        print(f"track_gen: {err}", file=sys.stderr)
        return 1
    settings.update(TRACK_GEN_BACKEND=backend, TRACK_GEN_CUDA_ARCHITECTURES=arch,
                    TRACK_GEN_NVCC=nvcc if backend == "cuda" else "")
    out.write_text("".join(cmake_set(name, value) + "\n" for name, value in settings.items()))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: build_config.py OUT.cmake")
    sys.exit(main(os.environ, Path(sys.argv[1])))

"""python/csrc/build_config.py, the build's choices (CUDA architectures, which extension, where
nvcc is), checked against hand-written answers. Pure Python: neither torch nor a build needed."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "csrc" / "build_config.py"
_spec = importlib.util.spec_from_file_location("track_gen_build_config", _PATH)
bc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bc)


@pytest.mark.parametrize("torch_list, cmake", [
    ("9.0", "90-real"),                        # torch: code=sm_90 only (SASS)
    ("9.0+PTX", "90"),                         # and compute_90: CMake's plain number
    ("8.6;9.0", "86-real;90-real"),
    ("8.6 9.0a", "86-real;90a-real"),          # torch also splits on spaces
    (" 10.0f;12.0+PTX ", "100f-real;120"),
])
def test_torch_arch_list_becomes_cmakes(torch_list, cmake):
    assert bc.cuda_architectures_from_torch(torch_list) == cmake


@pytest.mark.parametrize("bad", ["Hopper", "90", "sm_90", "9", "9.0+ptx"])
def test_torch_arch_list_entries_that_are_refused(bad):
    with pytest.raises(bc.ConfigError, match=re.escape(f"TORCH_CUDA_ARCH_LIST entry {bad!r}")):
        bc.cuda_architectures_from_torch(bad)


def test_cudaarchs_is_used_as_given_and_checked():
    assert bc.check_cudaarchs("86;90a-real;100-virtual") == "86;90a-real;100-virtual"
    assert bc.check_cudaarchs("86,90 ") == "86;90"
    assert bc.check_cudaarchs("native") == "native"
    for bad in ("sm_90", "9.0", "90-both"):
        with pytest.raises(bc.ConfigError, match=re.escape(f"CUDAARCHS entry {bad!r}")):
            bc.check_cudaarchs(bad)
    with pytest.raises(bc.ConfigError, match="CUDAARCHS is empty"):
        bc.check_cudaarchs(";")


def test_cudaarchs_wins_over_torchs_list_and_blank_is_unset():
    assert bc.cuda_architectures("89", "9.0") == "89"
    assert bc.cuda_architectures(None, "9.0") == "90-real"
    assert bc.cuda_architectures("  ", "8.0+PTX") == "80"
    assert bc.cuda_architectures(None, None) is None
    assert bc.cuda_architectures("", " ") is None


NVCC = "/opt/cuda/bin/nvcc"


@pytest.mark.parametrize("wanted, torch_cuda, nvcc, gpus, archs, expected", [
    ("", None, NVCC, 1, None, ("cpu", "")),             # CPU-only torch
    ("", "13.0", None, 1, None, ("cpu", "")),           # no nvcc
    ("", "13.0", NVCC, 0, None, ("cpu", "")),           # no GPU to build for, none named
    ("", "13.0", NVCC, 2, None, ("cuda", "native")),    # the visible GPUs
    ("", "13.0", NVCC, 0, "90", ("cuda", "90")),        # named GPUs, none visible
    ("", "13.0", NVCC, 1, "86-real;90", ("cuda", "86-real;90")),
    ("cpu", "13.0", NVCC, 2, "90", ("cpu", "")),
    (" CPU", None, None, 0, None, ("cpu", "")),
    ("cuda", "13.0", NVCC, 1, None, ("cuda", "native")),
    ("Cuda", "13.0", NVCC, 0, "90", ("cuda", "90")),
])
def test_backend_choice(wanted, torch_cuda, nvcc, gpus, archs, expected):
    assert bc.choose_backend(wanted, torch_cuda, nvcc, gpus, archs) == expected


@pytest.mark.parametrize("wanted, torch_cuda, nvcc, gpus, archs, message", [
    ("cuda", None, NVCC, 1, "90", "this torch was built without CUDA"),
    ("cuda", "13.0", None, 1, "90", "nvcc was not found"),
    ("cuda", "13.0", NVCC, 0, None, "no GPU visible: set CUDAARCHS"),
    ("gpu", "13.0", NVCC, 1, None, "TRACK_GEN_BACKENDS='gpu'; expected 'cpu', 'cuda', 'none' or unset"),
])
def test_backend_choice_errors(wanted, torch_cuda, nvcc, gpus, archs, message):
    with pytest.raises(bc.ConfigError, match=message):
        bc.choose_backend(wanted, torch_cuda, nvcc, gpus, archs)


def _executable(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_nvcc_search_order(tmp_path):
    cudacxx = _executable(tmp_path / "a" / "nvcc")
    home = _executable(tmp_path / "home" / "bin" / "nvcc")
    on_path = _executable(tmp_path / "path" / "nvcc")
    default = _executable(tmp_path / "default" / "nvcc")
    which = lambda name: on_path  # noqa: E731
    env = {"CUDACXX": cudacxx, "CUDA_HOME": str(tmp_path / "home")}
    assert bc.find_nvcc(env, which, default) == cudacxx
    assert bc.find_nvcc({"CUDA_HOME": str(tmp_path / "home")}, which, default) == home
    assert bc.find_nvcc({"CUDA_PATH": str(tmp_path / "home")}, which, default) == home
    assert bc.find_nvcc({"CUDA_HOME": str(tmp_path / "missing")}, which, default) == on_path
    assert bc.find_nvcc({}, lambda name: None, default) == default
    assert bc.find_nvcc({"CUDACXX": str(tmp_path / "missing")}, lambda name: None, str(tmp_path / "none")) is None
    (tmp_path / "default" / "nvcc").chmod(0o644)   # not executable: not a compiler
    assert bc.find_nvcc({}, lambda name: None, default) is None


def test_cxx20_is_read_from_atens_header(tmp_path):
    header = tmp_path / "ATen.h"
    assert not bc.needs_cxx20(header)
    header.write_text('#error "C++17 or later compatible compiler is required to use ATen."\n')
    assert not bc.needs_cxx20(header)
    header.write_text('#error "C++20 or later compatible compiler is required to use ATen."\n')
    assert bc.needs_cxx20(header)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_reads_back_the_values_written(tmp_path):
    values = {"PLAIN": "/a/b;/c d", "QUOTED": 'say "x"', "DOLLAR": "${HOME}$ENV{PATH}", "BACK": "a\\b\\"}
    script = tmp_path / "read.cmake"
    lines = [bc.cmake_set(k, v) for k, v in values.items()]
    lines += [f'message(STATUS "{k}=[${{{k}}}]")' for k in values]
    script.write_text("\n".join(lines) + "\n")
    out = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [f"-- {k}=[{v}]" for k, v in values.items()]


def test_a_missing_torch_is_one_sentence_naming_the_command(tmp_path):
    # An interpreter that cannot import torch: this one with torch hidden behind a stub that fails.
    stub = tmp_path / "torch"
    stub.mkdir()
    (stub / "__init__.py").write_text("raise ImportError('no torch here')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    out = subprocess.run([sys.executable, str(_PATH), str(tmp_path / "out.cmake")], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.startswith("track_gen: PyTorch is not importable by ")
    # The README's command first: --no-build-isolation alone fails in a venv without
    # scikit-build-core (ModuleNotFoundError: scikit_build_core, found by a fresh-user trial).
    assert "then run pip install ./python from the repository root again" in out.stderr
    assert "--no-build-isolation ./python, with scikit-build-core, cmake and ninja installed" in out.stderr
    assert not (tmp_path / "out.cmake").exists()

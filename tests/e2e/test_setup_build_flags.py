"""Set-up picks llama.cpp's build by itself (scripts/llama_build_flags.sh): fake ``nvcc`` and
``nvidia-smi`` on PATH, ``SETUP_DRY_RUN=1``, and the commands set-up and ``make llama-server``
would run are read back. Nothing is compiled or installed."""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from testkit.paths import ROOT

SYSTEM_PATH = "/usr/bin:/bin"


def _fake_tools(folder: Path, caps: list[str] | None, nvcc: bool) -> Path:
    """A bin folder with an ``nvidia-smi`` reporting ``caps`` (one line per GPU) and/or an
    ``nvcc``."""
    folder.mkdir(parents=True, exist_ok=True)
    tools = {}
    if caps is not None:
        lines = "\\n".join(caps)
        tools["nvidia-smi"] = ('[ "$*" = "--query-gpu=compute_cap --format=csv,noheader" ]'
                               f' || exit 9\nprintf "{lines}\\n"\n')
    if nvcc:
        tools["nvcc"] = 'echo "Cuda compilation tools, release 12.4, V12.4.131"\n'
    for name, body in tools.items():
        path = folder / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    return folder


def _dry_run(script: str, tmp_path: Path, bin_dir: Path | None, venv: Path | str,
             **env) -> tuple[str, list[list[str]]]:
    """Run ``script`` in dry-run mode; its output and the commands it would run, split."""
    path = f"{bin_dir}:{SYSTEM_PATH}" if bin_dir else SYSTEM_PATH
    full = {"PATH": path, "HOME": str(tmp_path), "SETUP_DRY_RUN": "1",
            "CUDA_HOME": str(tmp_path / "no-cuda"), "MIRAGE_DATA_DIR": str(tmp_path / "data"),
            "TMPDIR": str(tmp_path), "PYTHON": sys.executable, **env}
    out = subprocess.run(["bash", str(ROOT / "scripts" / script), str(venv)], cwd=tmp_path,
                         env=full, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    commands = [shlex.split(line[len("would run:"):]) for line in out.stdout.splitlines()
                if line.startswith("would run:")]
    return out.stdout, commands


def _llama_install(commands: list[list[str]]) -> list[str]:
    found = [c for c in commands if "llama-cpp-python==0.3.36" in c]
    assert len(found) == 1, commands
    return found[0]


def _setup_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("setup: ")]


@pytest.mark.parametrize("caps, archs", [(["9.0"], "90"), (["8.6", "9.0", "8.6"], "86;90")])
def test_setup_on_a_gpu_machine_builds_both_with_cuda_for_its_capability(tmp_path, caps, archs):
    tools = _fake_tools(tmp_path / "bin", caps, nvcc=True)
    stdout, commands = _dry_run("setup.sh", tmp_path, tools, tmp_path / "venv")
    flags = f"-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES={archs}"
    install = _llama_install(commands)
    assert install[:2] == ["env", f"CMAKE_ARGS={flags}"]
    assert "--no-cache-dir" in install            # never a cached CPU wheel of the same version
    assert ["bash", "scripts/build_llama_server.sh", str(tmp_path / "venv")] in commands
    said = [line for line in _setup_lines(stdout) if "llama-server" in line]
    assert said == [f"setup: CUDA build ({flags}): building llama-server with the same flags"]
    assert not (tmp_path / "venv").exists()       # a dry run changes nothing


def _cpu_args() -> str:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "llama_check.py"), "cpu-args"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_setup_without_nvcc_builds_for_this_cpu_by_name_and_says_how_to_add_llama_server(
        tmp_path):
    tools = _fake_tools(tmp_path / "bin", ["8.6"], nvcc=False)
    stdout, commands = _dry_run("setup.sh", tmp_path, tools, tmp_path / "venv")
    install = _llama_install(commands)
    # the CPU's instruction sets named, never -march=native (AMX crashes: models/llama/build.py)
    assert install[:2] == ["env", f"CMAKE_ARGS={_cpu_args()}"]
    if platform.machine() == "x86_64":
        assert "-DGGML_NATIVE=OFF" in install[1] and "-DGGML_AMX_INT8=OFF" in install[1]
    assert "--no-cache-dir" in install        # pip's cache knows neither flags nor CPU
    assert "would check: load SmolLM2 in a child process and generate 8 greedy tokens" in stdout
    assert not [c for c in commands if "scripts/build_llama_server.sh" in c]
    hint = [line for line in _setup_lines(stdout) if "make llama-server" in line]
    assert hint == ["setup: llama.cpp runs on the CPU (an NVIDIA GPU (compute capability 8.6) "
                    "but no CUDA toolkit (nvcc)); `make llama-server` adds the batched "
                    "llama-server backend (~15 min on 2 cores)"]


def test_setup_with_nvcc_but_no_gpu_builds_for_the_cpu(tmp_path):
    tools = _fake_tools(tmp_path / "bin", None, nvcc=True)
    stdout, commands = _dry_run("setup.sh", tmp_path, tools, tmp_path / "venv")
    assert "CUDA" not in _llama_install(commands)[1]
    assert "but no NVIDIA GPU" in stdout and "make llama-server" in stdout


def test_nvcc_under_cuda_home_is_found_and_named_to_cmake(tmp_path):
    cuda = _fake_tools(tmp_path / "cuda" / "bin", None, nvcc=True)
    tools = _fake_tools(tmp_path / "bin", ["8.9"], nvcc=False)
    _, commands = _dry_run("setup.sh", tmp_path, tools, tmp_path / "venv",
                           CUDA_HOME=str(cuda.parent))
    assert _llama_install(commands)[1] == ("CMAKE_ARGS=-DGGML_CUDA=on "
                                           "-DCMAKE_CUDA_ARCHITECTURES=89 "
                                           f"-DCMAKE_CUDA_COMPILER={cuda / 'nvcc'}")


def test_the_users_own_cmake_args_win(tmp_path):
    tools = _fake_tools(tmp_path / "bin", ["9.0"], nvcc=True)
    stdout, commands = _dry_run("setup.sh", tmp_path, tools, tmp_path / "venv",
                                CMAKE_ARGS="-DGGML_VULKAN=on")
    assert _llama_install(commands)[:2] == ["env", "CMAKE_ARGS=-DGGML_VULKAN=on"]
    assert not [c for c in commands if "scripts/build_llama_server.sh" in c]
    assert "make llama-server` builds llama-server with them" in stdout


def test_setup_replaces_a_cpu_llama_cpp_on_a_gpu_machine(tmp_path):
    """The real venv's llama_cpp (a CPU build here) on a machine that now has a GPU."""
    venv = Path(sys.prefix)
    probe = subprocess.run([sys.executable, "-c", "import llama_cpp; "
                            "print(llama_cpp.llama_supports_gpu_offload())"],
                           capture_output=True, text=True, timeout=60)
    if probe.stdout.strip() != "False":
        pytest.skip(f"this venv's llama_cpp is not a CPU build: {probe.stdout or probe.stderr}")
    tools = _fake_tools(tmp_path / "bin", ["9.0"], nvcc=True)
    _, commands = _dry_run("setup.sh", tmp_path, tools, venv, MIRAGE_LLAMA_SERVER="")
    build = _llama_install(commands)
    assert build[1] == "CMAKE_ARGS=-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90"
    assert "--no-cache-dir" in build
    install = [c for c in commands if c[1:4] == ["-m", "pip", "install"] and
               "<the wheel built above>" in c]
    assert len(install) == 1 and {"--force-reinstall", "--no-deps"} <= set(install[0])


@pytest.mark.parametrize("caps, expected", [(["9.0"], "-DGGML_CUDA=on "
                                             "-DCMAKE_CUDA_ARCHITECTURES=90"), (None, None)])
def test_make_llama_server_gets_the_cuda_flags_without_any_from_the_user(tmp_path, caps,
                                                                          expected):
    tools = _fake_tools(tmp_path / "bin", caps, nvcc=True)
    stdout, commands = _dry_run("build_llama_server.sh", tmp_path, tools, Path(sys.prefix))
    configure = [c for c in commands if c[:2] == ["cmake", "-S"]]
    assert len(configure) == 1 and "-DLLAMA_BUILD_SERVER=ON" in configure[0]
    cuda = [a for a in configure[0] if "CUDA" in a]
    assert cuda == (expected.split() if expected else [])
    if not caps and _cpu_args():   # the CPU llama-server: the same named flags, never AMX
        assert _cpu_args().split() == configure[0][-len(_cpu_args().split()):]
    assert ["install", "-m", "0755"] == commands[-1][:3]
    assert commands[-1][-1] == str(tmp_path / "data" / "bin" / "llama-server")
    assert f"build_llama_server: {'cuda' if caps else 'cpu'} build" in stdout


def test_the_makefile_reruns_setup_when_the_build_choice_changes():
    makefile = (ROOT / "Makefile").read_text()
    assert "scripts/llama_build_flags.sh" in makefile.split("$(STAMP):", 1)[1].splitlines()[0]
    assert os.access(ROOT / "scripts" / "llama_build_flags.sh", os.R_OK)

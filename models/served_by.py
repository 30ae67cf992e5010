"""Which backend serves a model, in a few words and one line of why, for the Models screen
and Live's title.

- :func:`backend_words`: a loaded model's backend as its identity records it (``llama.cpp``,
  ``llama-server``, ``http``, ``sentence-transformers``, ...), with the device it ran on where
  that says more: ``llama.cpp on CPU``, ``llama-server``, ``HTTP endpoint``. Live's title
  reads it from the run header (:func:`engine.results.text.served_text`).
- :func:`planned_backend`: a catalog entry before it is loaded (the Models screen): a GGUF model
  goes to the model host on the backend :func:`models.host.backend_choice.choose_backend`
  picks (``llama.cpp host``; ``llama-server (GPU build)`` or ``(CPU build)``, read from the
  binary), or to a host already running it, or into the app's own process with
  ``$MIRAGE_HOSTING=in-process``; an endpoint is its server's; an embedder or a reranker loads
  in process on its own library. :func:`with_device` adds what a model check saw
  (``llama.cpp host (CPU)``): the build of llama.cpp is known only once a process has loaded it.

Reads files only (the host registry, the llama-server binary's head, the backend
measurement): no model is loaded and no server is asked.
"""

from __future__ import annotations

from dataclasses import dataclass

_DEVICES = {"cpu": "CPU", "gpu": "GPU", "cuda": "CUDA", "mps": "MPS"}


@dataclass(frozen=True)
class Serving:
    backend: str      # the identity's backend: 'llama.cpp', 'llama-server', 'http', ...
    words: str        # what a table shows: 'llama.cpp host', 'llama-server (GPU build)'
    reason: str       # one line: why this backend


def backend_words(backend: str | None, device: str | None = None) -> str:
    """A loaded model's backend in words, its device added where it says more
    (``llama.cpp on CPU``; ``llama-server``, ``HTTP endpoint`` as they are); "" for none."""
    if not backend:
        return ""
    if backend == "http":
        return "HTTP endpoint"
    shown = _DEVICES.get((device or "").lower())
    return f"{backend} on {shown}" if shown else backend


def with_device(serving: Serving, check: dict | None) -> str:
    """``serving``'s words with the device a model check of it saw (``llama.cpp host (CPU)``),
    when that check ran on the same backend and named a device."""
    if not check or check.get("backend") not in (None, serving.backend) or \
            "(" in serving.words:
        return serving.words
    shown = _DEVICES.get(str(check.get("device") or "").lower())
    return f"{serving.words} ({shown})" if shown else serving.words


def planned_backend(entry) -> Serving:
    """What would serve the catalog ``entry`` (:class:`models.catalog.CatalogEntry`) if it were
    loaded now, and why (module docstring)."""
    if entry.kind == "endpoint":
        where = f"the server at {entry.url}" if entry.url else "its server"
        return Serving("http", "HTTP endpoint",
                       f"{where} answers over HTTP and decides how requests are served")
    if entry.kind in ("embedder", "reranker"):
        from models.embedders.specs import PACKAGED

        backend = (PACKAGED.get(entry.name) or {}).get("backend") or "sentence-transformers"
        return Serving(backend, backend, f"loaded in the app's own process by {backend}")
    return _generator_backend(entry)


def _generator_backend(entry) -> Serving:
    from models.base import ModelError
    from models.host import registry
    from models.host.backend_choice import SERVER, choose_backend, gpu_build
    from models.host.llama_server import find_llama_server
    from models.host.supervisor import HOSTING_ENV, hosting_default

    if not hosting_default():
        return Serving("llama.cpp", "llama.cpp in process",
                       f"${HOSTING_ENV}=in-process: loaded into the app's own process")
    running = [e for e in registry.live_entries() if entry.path and e.model == entry.path]
    if running:
        host = running[0]
        return Serving(host.backend, _host_words(host.backend, find_llama_server, gpu_build),
                       f"a model host runs it now (pid {host.pid}, {host.url})")
    try:
        choice = choose_backend()
    except ModelError as exc:
        return Serving("?", "no backend", str(exc))
    words = _host_words(choice.backend, find_llama_server, gpu_build)
    return Serving(choice.backend, words, choice.reason if choice.backend == SERVER
                   else f"the model host runs it with llama.cpp: {choice.reason}")


def _host_words(backend: str, find_binary, is_gpu_build) -> str:
    if backend != "llama-server":
        return "llama.cpp host"
    binary = find_binary()
    if binary is None:
        return "llama-server"
    return f"llama-server ({'GPU' if is_gpu_build(binary) else 'CPU'} build)"

"""Check that one model works here and how fast: load it and time one short job.

A generator answers one question about a passage (a prompt about as long as a MIRAGE item's),
after a one-token warm-up (prompt and generated tokens per second, load time, device); an embedder embeds a small batch of passages (items per second, dimension).
Used by ``mirage-tui models check`` and by the TUI's Models screen, so both say the same.
The result is a plain dict (JSON-ready); a model that does not work gives ``ok = False`` and
the reason in ``error``, never an exception for the expected failures (not installed, no such
model, a file llama.cpp cannot load). A ``cancel`` asked between the steps (load, warm-up,
timed job) ends the check there: ``ok = False``, ``cancelled = True``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from models.base import ModelError, SamplingParams

CHECK_PASSAGE = (
    "Jupiter is the fifth planet from the Sun and the largest in the Solar System. It is a gas "
    "giant with a mass more than two and a half times that of all the other planets combined, "
    "but slightly less than one thousandth the mass of the Sun. Jupiter orbits the Sun at a "
    "distance of 5.20 AU with an orbital period of 11.86 years. It is the third brightest "
    "natural object in the night sky after the Moon and Venus, and it has been observed since "
    "prehistoric times. Its name derives from that of Jupiter, the chief deity of ancient Roman "
    "religion. Jupiter is primarily composed of hydrogen, followed by helium, which constitutes "
    "a quarter of its mass and a tenth of its volume. Its outer atmosphere is divided into a "
    "series of latitudinal bands, with turbulence and storms along their interacting "
    "boundaries; the most obvious result of this is the Great Red Spot, a giant storm that has "
    "been recorded since at least 1831. Jupiter is surrounded by a faint planetary ring system "
    "and has a powerful magnetosphere, the second largest contiguous structure in the Solar "
    "System after the heliosphere. It has 95 known moons; the four Galilean moons, Io, Europa, "
    "Ganymede and Callisto, were discovered by Galileo Galilei in 1610, and Ganymede is the "
    "largest moon in the Solar System.")
# a question about a passage, its prompt about as long as a MIRAGE item's (a few hundred
# tokens): timed on a one-line prompt, the per-token prompt rate came out several times too
# low (fixed costs over few tokens), and run estimates before the first item followed it
CHECK_MESSAGES = [{"role": "user", "content": f"Context: {CHECK_PASSAGE}\n\nQuestion: Which "
                                              "is the largest planet of the solar system, and "
                                              "what is one thing known about it?"}]
# another prompt than the check's, so that the check's prompt is evaluated (and timed) whole
WARM_UP_MESSAGES = [{"role": "user", "content": "Hello."}]
CHECK_PASSAGES = [f"Passage {i}: a short text about topic number {i}, used to time the "
                  f"embedder." for i in range(32)]


CANCELLED = "cancelled"


LOCAL_BACKENDS = ("llama.cpp", "llama-server")


def is_local(model) -> bool:
    """A model this machine runs (llama.cpp in process or in our host, llama-server), which
    :func:`warm_up` pays for; an endpoint is someone else's, and warm."""
    return getattr(model, "backend", None) in LOCAL_BACKENDS


def warm_up(model) -> None:
    """One generation of one token. The first call after a load runs several times slower than
    the next (buffers allocated, the weights paged in: 4× once measured), so the check
    times the second call, and a run or a judging starts its first item on a warm model: its
    first item's pace is then its own, not the load's."""
    model.generate(WARM_UP_MESSAGES, SamplingParams(max_tokens=1))


class _Cancelled(Exception):
    """Raised between two steps of a check that was asked to stop."""


def _step(cancel) -> None:
    if cancel is not None and cancel():
        raise _Cancelled


def check_model(name: str, max_tokens: int = 16, *, n_threads: int | None = None,
                cancel: Callable[[], bool] | None = None) -> dict:
    """Load ``name`` (a catalog name, a GGUF path or an endpoint spec) and time one short job; see the module
    docstring. Keys: name, kind, ok, device, seconds, load_seconds, tokens_per_s,
    prompt_tokens_per_s, items_per_s, error; plus, for a generator, prompt_tokens,
    completion_tokens, finish_reason, text, chat, backend, backend_reason; for an embedder,
    items and dim; ``cancelled`` when ``cancel()`` stopped it between its steps."""
    from models.catalog import load_embedder, load_generator, resolve_model
    from models.endpoints import without_credentials

    result: dict = {"name": without_credentials(name), "kind": None, "ok": False, "device": None,
                    "seconds": None, "load_seconds": None, "tokens_per_s": None,
                    "prompt_tokens_per_s": None, "items_per_s": None, "error": None}
    try:
        ref = resolve_model(name)
        entry = ref.entry
        kind = entry.kind if entry else "generator"
        result["kind"] = kind if ref.kind != "unknown" else None
        if entry is not None and not entry.installed:
            raise ModelError(entry.error or f"{name}: not installed; `{entry.install}`")
        started = time.perf_counter()
        if kind == "embedder":
            model = load_embedder(name)
            result["load_seconds"] = time.perf_counter() - started
            _step(cancel)
            t0 = time.perf_counter()
            vectors = model.embed_passages(CHECK_PASSAGES)
            seconds = time.perf_counter() - t0
            result.update(ok=True, device=getattr(model, "device", "cpu"), seconds=seconds,
                          items=len(CHECK_PASSAGES), dim=int(vectors.shape[1]),
                          items_per_s=len(CHECK_PASSAGES) / seconds if seconds else None)
        else:
            if max_tokens < 1:
                raise ValueError("--max-tokens must be at least 1")
            opts = {} if n_threads is None else {"n_threads": n_threads}
            model = load_generator(name, **opts)
            result["load_seconds"] = time.perf_counter() - started
            _step(cancel)
            # the first call after a load pages the weights in and starts the threads: often
            # several times slower than a run's items; timed, it made run estimates far long
            warm_up(model)
            _step(cancel)
            gen = model.generate(CHECK_MESSAGES, SamplingParams(max_tokens=max_tokens))
            result.update(
                ok=True, name=model.name, device=gen.device, seconds=gen.seconds,
                tokens_per_s=gen.extra.get("generation_tokens_per_s", gen.tokens_per_s),
                prompt_tokens_per_s=gen.extra.get("prompt_tokens_per_s"),
                prompt_tokens=gen.prompt_tokens, completion_tokens=gen.completion_tokens,
                finish_reason=gen.finish_reason, text=gen.text, chat=model.chat)
            result["backend"], result["backend_reason"] = backend_and_reason(model)
    except _Cancelled:
        result.update(error=CANCELLED, cancelled=True)
    except (ModelError, ValueError, OSError, RuntimeError) as exc:
        result["error"] = str(exc)
    return result


def backend_and_reason(model) -> tuple[str | None, str]:
    """The backend a loaded generator runs on and why, in one line
    (:mod:`models.host.backend_choice` for a hosted model)."""
    from models.host.backend_choice import choose_backend
    from models.host.client import HostedGenerator
    from models.host.supervisor import HOSTING_ENV

    identity = getattr(model, "identity", None)
    backend = identity.backend if identity is not None else None
    if isinstance(model, HostedGenerator):
        choice = choose_backend()
        return backend, (choice.reason if choice.backend == backend else
                         f"its host was started as {backend} before the choice changed")
    if backend == "http":
        return backend, "an HTTP endpoint: its server decides how requests are served"
    return backend, f"loaded in this process (${HOSTING_ENV}=in-process)"

"""The optional llama-server backend of a model host: llama.cpp's own server, for GPUs.

When a ``llama-server`` binary is found ($MIRAGE_LLAMA_SERVER, ``<data dir>/bin/llama-server``
or PATH; ``make llama-server`` builds it, see scripts/build_llama_server.sh), a host serves its
model through it: parallel slots (``-np``), continuous batching and ``cache_prompt``, so many
requests in flight share each forward pass. The host process still owns the registry entry,
the leases and the watchdog; llama-server is its child (killed with it: PR_SET_PDEATHSIG).

Prompts are rendered and counted exactly as in process: the host loads the model's vocabulary
only (``vocab_only``) into :class:`models.llama.generator.LlamaGenerator`'s rendering code and sends
llama-server the token ids. What differs: batching may change a greedy text in its last bits
(llama.cpp's batched kernels), and ``label_probs`` sees only the top ``LABEL_TOP_N`` tokens of
the next-token distribution. So the identity's backend is ``'llama-server'`` and its cached
generations never mix with the in-process ones.

Whether a new host uses it is :mod:`models.host.backend_choice`'s call (a GPU build always; on a
CPU when ``benchmarks/bench_backends.py`` measured that it pays here).

Tested against a stand-in speaking llama-server's HTTP API (tests/testkit/
llama_server_standin.py: start, health, token-id prompts, top-N label probabilities, death,
leases, judging through it) and, wherever ``make llama-server`` has built the binary, against
the real one (tests/models/test_llama_server_real.py, and tests/models/test_bench_backends.py,
which runs both backends through the product's run path and records the measurement);
``find_llama_server`` and the choice are tested without one (tests/models/test_host.py,
tests/models/test_backend_choice.py).

A cancelled request (``/mirage/cancel``) is refused before it is sent to llama-server; one
already there runs to its end (a non-streamed request cannot be cut short of dropping its
connection); the job that cancelled it stops waiting for it
:data:`engine.inflight.ABORT_WAIT_S` after its abort.

llama-server dying kills the host (exit 70, "llama-server exited with status N" in its log),
also when a request sees the connection drop first: the client then sees a host death, retried
once with a restart, as with the default host.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence

from models.base import (ContextOverflow, Generation, ModelError, Prompt, SamplingParams,
                         TransientModelError)
from models.env_settings import env_seconds
from models.host import registry
from models.http.errors import context_refusal, server_message
from models.reasoning import prompt_opens_thinking
from models.replies import apart, checked_text

BINARY_ENV = "MIRAGE_LLAMA_SERVER"
LABEL_TOP_N = 100
START_TIMEOUT_ENV = "MIRAGE_HOST_START_TIMEOUT"      # how long a client waits for its host
HEALTH_MARGIN_S = 10.0          # the host's own start (Python, the vocabulary) within that wait


def health_timeout() -> float:
    """How long a host waits for llama-server's ``/health``: until a little before its client
    gives up on the host, so a llama-server that never becomes healthy is named as such (with
    the log) rather than as a host that did not answer."""
    total = env_seconds(START_TIMEOUT_ENV)
    return max(total / 4, total - HEALTH_MARGIN_S)


def find_llama_server() -> Path | None:
    """$MIRAGE_LLAMA_SERVER (an empty value disables the backend), else
    ``<data dir>/bin/llama-server``, else ``llama-server`` on PATH."""
    env = os.environ.get(BINARY_ENV)
    if env is not None:
        path = Path(env).expanduser()
        return path if env and path.is_file() and os.access(path, os.X_OK) else None
    local = registry.data_dir() / "bin" / "llama-server"
    if local.is_file() and os.access(local, os.X_OK):
        return local
    found = shutil.which("llama-server")
    return Path(found) if found else None


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _make_class():
    import llama_cpp

    from models.llama.generator import LlamaGenerator

    class LlamaServerGenerator(LlamaGenerator):
        """Rendering from LlamaGenerator (vocabulary only); inference by llama-server."""

        backend = "llama-server"
        slots = 1
        url = ""
        _proc: subprocess.Popen | None = None

        def _load_llama(self):
            return llama_cpp.Llama(str(self.path), vocab_only=True, verbose=False)

        @classmethod
        def start(cls, path, *, n_ctx, n_threads, slots, name, log_file):
            binary = find_llama_server()
            if binary is None:
                raise ModelError("no llama-server binary found (make llama-server)")
            self = cls(path, n_ctx=n_ctx, n_threads=n_threads, name=name)
            self.slots, port = max(1, slots), _free_port()
            self.url = f"http://127.0.0.1:{port}"
            cmd = [str(binary), "-m", str(self.path), "--host", "127.0.0.1", "--port", str(port),
                   "-c", str(self.n_ctx * self.slots), "-np", str(self.slots),
                   "-t", str(self.n_threads), "-ngl", "999"]
            out = open(log_file, "ab") if log_file else subprocess.DEVNULL
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
            self.device = "llama-server"
            self._wait_healthy(log_file)
            threading.Thread(target=self._exit_with_child, daemon=True).start()
            return self

        def _wait_healthy(self, log_file) -> None:
            timeout = health_timeout()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    raise ModelError(f"{self.path}: llama-server exited with status "
                                     f"{self._proc.returncode} while loading (log: {log_file})")
                with contextlib.suppress(OSError, ValueError):
                    with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                        if json.loads(r.read()).get("status") == "ok":
                            return
                time.sleep(0.2)
            self._proc.kill()
            raise ModelError(f"{self.path}: llama-server did not become healthy within "
                             f"{timeout:g} s (log: {log_file})")

        def _exit_with_child(self) -> None:
            proc = self._proc
            self._host_dies_with(proc, proc.wait())

        def _host_dies_with(self, proc, code) -> None:
            if self._proc is proc:              # not closing: the host cannot serve any more
                print(f"mirage host: error: llama-server exited with status {code}",
                      flush=True)
                os._exit(70)

        def _post(self, body: dict) -> dict:
            request = urllib.request.Request(self.url + "/completion",
                                             data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=3600) as r:
                    return json.loads(r.read())
            except urllib.error.HTTPError as exc:
                raise self._refused(exc) from None
            except (OSError, ValueError) as exc:
                proc = self._proc
                if proc is not None and not isinstance(exc, urllib.error.HTTPError):
                    # a crash drops the connection a moment before the exit is seen: answering
                    # this request with an error first would hide the death from the client
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self._host_dies_with(proc, proc.wait(2.0))
                raise ModelError(f"{self.name}: llama-server failed: {exc}") from None

        def _refused(self, exc: urllib.error.HTTPError) -> ModelError:
            """llama-server's refusal with its own words (``{"error": {"message": ...}}``,
            :func:`models.http.errors.server_message`), not urllib's bare "HTTP Error 400";
            an overlong prompt is a ContextOverflow, a busy or failing server transient."""
            try:
                body = (exc.read() or b"").decode("utf-8", "replace")
            except OSError:
                body = ""
            said = server_message(body)
            message = (f"{self.name}: llama-server answered HTTP {exc.code} {exc.reason}"
                       f"{': ' + said if said else ''}")
            refusal = context_refusal(body) if exc.code in (400, 413, 422) else None
            if refusal is not None:
                return ContextOverflow(message, prompt_tokens=refusal[1],
                                       context_length=refusal[0] or self.n_ctx)
            if exc.code == 429 or exc.code >= 500:
                return TransientModelError(message)
            return ModelError(message)

        def _tokens(self, prompt: Prompt, max_tokens: int, thinking: str = "auto"):
            rendered = self.render(prompt, thinking)
            if len(rendered.tokens) + max_tokens > self.n_ctx:
                raise ContextOverflow(
                    f"{self.path.name}: the prompt is {len(rendered.tokens)} tokens and "
                    f"max_tokens {max_tokens}, more than the context of {self.n_ctx} tokens",
                    prompt_tokens=len(rendered.tokens), context_length=self.n_ctx)
            return rendered

        def generate(self, prompt: Prompt, params: SamplingParams = SamplingParams(), *,
                     cancel: threading.Event | None = None) -> Generation:
            rendered = self._tokens(prompt, params.max_tokens, params.thinking)
            self._check_cancel(cancel, 0, params.max_tokens)
            stops = list(dict.fromkeys(tuple(params.stop) + rendered.stop))
            out = self._post({"prompt": rendered.tokens, "n_predict": params.max_tokens,
                              "temperature": params.temperature, "top_k": params.top_k,
                              "top_p": params.top_p, "min_p": 0.0, "repeat_penalty": 1.0,
                              "seed": params.seed, "stop": stops, "cache_prompt": True})
            t = out.get("timings") or {}
            seconds = (t.get("prompt_ms", 0.0) + t.get("predicted_ms", 0.0)) / 1000
            generation = Generation(
                text=checked_text(self.name, out.get("content"), "llama-server"),
                prompt_tokens=len(rendered.tokens),
                completion_tokens=int(out.get("tokens_predicted") or 0),
                prompt_tokens_evaluated=int(t.get("prompt_n", len(rendered.tokens))),
                seconds=seconds,
                finish_reason="length" if out.get("stop_type") == "limit" else "stop",
                device=self.device, prompt_text=rendered.text,
                extra={"mode": rendered.mode, "stop": stops, "seed": params.seed,
                       "prompt_tokens_per_s": t.get("prompt_per_second", 0.0),
                       "generation_tokens_per_s": t.get("predicted_per_second", 0.0),
                       "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                       "slots": self.slots})
            return apart(generation, self.name, opened=prompt_opens_thinking(rendered.text),
                         count_tokens=self.count_tokens)

        def label_probs(self, prompt: Prompt, labels: Sequence[str], *,
                        cancel: threading.Event | None = None) -> dict[str, float]:
            if not labels:
                raise ValueError("label_probs needs at least one label")
            rendered = self._tokens(prompt, 1)
            self._check_cancel(cancel, 0, 1)
            ids = self._labels_token_ids(labels)        # colliding labels refused, as in process
            out = self._post({"prompt": rendered.tokens, "n_predict": 1, "temperature": 0.0,
                              "n_probs": LABEL_TOP_N, "cache_prompt": True})
            first = (out.get("completion_probabilities") or [{}])[0]
            top = {p["id"]: math.exp(p["logprob"]) for p in first.get("top_logprobs", [])
                   if "id" in p and "logprob" in p}
            mass = {label: sum(top.get(t, 0.0) for t in toks) for label, toks in ids.items()}
            total = sum(mass.values())
            if total <= 0:
                raise ModelError(f"{self.name}: no label among llama-server's top "
                                 f"{LABEL_TOP_N} next tokens")
            return {label: m / total for label, m in mass.items()}

        def set_threads(self, n: int) -> None:
            self.n_threads = n        # llama-server keeps its -t; recorded for the budget only

        def close(self) -> None:
            proc, self._proc = self._proc, None
            if proc is not None and proc.poll() is None:
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(10)
                if proc.poll() is None:
                    proc.kill()

    return LlamaServerGenerator


def __getattr__(name: str):
    # the class derives from LlamaGenerator (llama_cpp): built only inside a host process
    if name == "LlamaServerGenerator":
        cls = _make_class()
        globals()[name] = cls
        return cls
    raise AttributeError(name)

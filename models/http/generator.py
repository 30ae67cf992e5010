# One idea: one Generator on one HTTP endpoint (errors, identity, label probs: beside it in http/).
"""A Generator on an OpenAI-compatible HTTP endpoint (a llama.cpp server, vLLM, Ollama, ...).

Transport: one pooled ``httpx.Client`` per generator, shared by every thread that calls it
(the engine keeps several requests in flight through one generator); the lazily probed facts
(the model list, the identity, logprobs support) are computed once under a lock.

Failures name the URL (and the model when known) and carry the server's own words: the message
of its JSON error body, or its plain body, on one line, shown not obeyed, bounded
(:func:`models.http.errors.server_message`). Those that may pass on a second try are
:class:`models.base.TransientModelError`: a refused or reset connection, a request past its
timeout, HTTP 429 and 5xx (:class:`HttpTransientStatusError`, which is also an
:class:`HttpStatusError` with ``status`` and the server's ``retry_after`` seconds when it sent
Retry-After). Any other non-200 answer, a body that is not the expected JSON, an unknown host:
a plain ModelError, which the engine records as that item's error, except HTTP 401, 403 and
407, a key's missing environment variable and an unknown host (:class:`HttpAuthError` and
:class:`~models.base.ModelUnusable`: no request can pass, the run stops). A refusal of an
overlong prompt (HTTP 400 with OpenAI's, vLLM's or llama-cpp-python's "maximum context length
is N tokens", or llama.cpp's "request (P tokens) exceeds the available context size (N
tokens)" and its ``n_ctx`` field) is a :class:`~models.base.ContextOverflow` carrying N and
P when said: the engine then fits prompts to N (:meth:`HttpGenerator.learn_context`) and asks
again once. Nothing here retries: the engine owns one retry policy for all backends.

**Cancel.** :meth:`HttpGenerator.abort` shuts down every connection the generator holds (each
new one is seen through httpx's ``trace`` extension), so a request waiting on a slow server
ends at once with a transport error and the server sees the client go.

**Credentials in the URL** (``http://user:key@host``) are sent as HTTP Basic auth and kept
out of every URL the generator stores, shows or hashes (:mod:`models.urls`).

**Identity** (the cache key): the served model id plus what the server reports about its
weights (:mod:`models.http.identity`).

``label_probs`` reads the first generated token's ``top_logprobs``
(:mod:`models.http.label_probs`, mixed in).
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
import urllib.parse
import weakref

import httpx

from ..base import (ContextOverflow, Generation, Message, ModelError, ModelIdentity,
                    ModelUnusable, Prompt, ReplyError, SamplingParams, TransientModelError)
from ..thinking import endpoint_fields
from .errors import (AUTH_STATUSES, HttpAuthError, HttpStatusError,  # noqa: F401
                     HttpTransientStatusError, HttpTransportError, context_refusal,
                     retry_after, server_message)
from .identity import probe_identity
from .label_probs import LogprobLabels
from ..reasoning import prompt_opens_thinking
from ..replies import apart, checked_text
from ..urls import split_credentials

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
PROBE_TIMEOUT_S = 5.0
DEFAULT_CONTEXT = 8192
"""The context assumed when the server reports none and the config gives none: prompts are
fitted to it, and a server with a smaller window answers an overlong prompt with an error."""
CHARS_PER_TOKEN = 3.0
"""A token count estimate (chat API, no tokenize endpoint): UTF-8 bytes / 3, on the high side."""
WEAK = "weak: id only"


class HttpGenerator(LogprobLabels):
    """Generation through ``/v1/chat/completions`` (``api="chat"``) or ``/v1/completions``.

    ``base_url`` is the server root or its ``/v1`` (both work). ``model`` defaults to the
    first model the server lists. With ``api="completions"`` the generator counts as a base
    model (``chat`` False): judges then send completion frames, not messages. The API key is
    ``api_key``, or read from the environment variable ``api_key_env`` at each request (so it
    is held nowhere). ``server`` ('ollama', 'lmstudio', 'vllm', 'llamacpp') limits the
    identity probes to that server's; ``spec`` is how the user named the endpoint. ``auth``
    (or credentials written into ``base_url``) is sent as HTTP Basic auth, and shown nowhere.
    """

    backend = "http"
    device = "http"

    def __init__(self, base_url: str, model: str | None = None, api: str = "chat",
                 api_key: str | None = None, timeout: float = 120.0, top_logprobs: int = 20,
                 *, api_key_env: str | None = None, server: str | None = None,
                 context_length: int | None = None, spec: str | None = None,
                 auth: tuple[str, str] | None = None):
        if api not in ("chat", "completions"):
            raise ValueError(f"api must be 'chat' or 'completions', not {api!r}")
        base_url, in_url = split_credentials(base_url)
        auth = auth or in_url
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        root = base_url.rstrip("/")
        self.base_url = root if root.endswith("/v1") else root + "/v1"
        self.api = api
        self.chat = api == "chat"
        self._api_key = api_key
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.top_logprobs = top_logprobs
        self.server = server
        self.spec = spec
        self._context_length = context_length
        self._learned_context = 0                  # from a refusal (learn_context); 0: none
        self._unanswered: list[str] = []           # identity probes past their timeout
        self._sockets: weakref.WeakSet = weakref.WeakSet()   # open connections (abort)
        self._model = model
        self._models_listing: list[dict] | None = None
        self._identity: ModelIdentity | None = None
        self._reported: list[str] = []
        self._label_probs_n: int | None = None     # top-N the server accepted; 0 = none
        self._tokenize: str | None = None          # the tokenize path that works; "" = none
        self._lock = threading.RLock()
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        # Loopback never goes through an environment proxy; anything else may need one.
        self._client = httpx.Client(
            trust_env=host not in _LOOPBACK, timeout=timeout, auth=auth,
            limits=httpx.Limits(max_connections=128, max_keepalive_connections=64))

    def close(self) -> None:
        self._client.close()

    def abort(self) -> None:
        """Shut down every connection this generator holds, now (a cancelled run): a request
        waiting on the server ends at once with a transport error, and the server sees the
        client go. Later requests open new connections."""
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass                    # closed already

    def _trace(self, event: str, info: dict) -> None:
        """httpx's ``trace`` extension: keep each new connection's socket (for :meth:`abort`)."""
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with self._lock:
                    self._sockets.add(sock)

    # ------------------------------------------------------------------ transport

    def _headers(self) -> dict:
        headers = {"Accept": "application/json"}
        key = self._api_key
        if key is None and self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ModelUnusable(f"{self.spec or self.base_url}: the environment variable "
                                 f"{self.api_key_env} (its API key) is not set")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _request(self, method: str, path: str, body: dict | None = None, *,
                 root: bool = False, timeout: float | None = None) -> dict:
        """JSON from ``base_url + path`` (or from the server root + path when ``root``)."""
        url = (self.base_url[: -len("/v1")] if root else self.base_url) + path
        seconds = self.timeout if timeout is None else timeout
        of = f" (model {self._model})" if self._model else ""
        try:
            response = self._client.request(method, url, json=body, headers=self._headers(),
                                            timeout=seconds, extensions={"trace": self._trace})
            raw = response.content
        except httpx.TimeoutException as e:
            raise HttpTransportError(f"{method} {url}: no answer within {seconds:g} s{of}") \
                from e
        except httpx.ConnectError as e:
            if _caused_by(e, socket.gaierror):
                raise ModelUnusable(f"{method} {url}: unknown host ({e})") from e
            if _caused_by(e, ConnectionRefusedError) or "refused" in str(e).lower():
                raise HttpTransportError(f"{method} {url}: connection refused (is the server "
                                         f"running?){of}") from e
            raise HttpTransportError(f"{method} {url}: cannot connect: {e}{of}") from e
        except (httpx.NetworkError, httpx.RemoteProtocolError) as e:
            raise HttpTransportError(f"{method} {url}: connection failed: "
                                     f"{type(e).__name__}: {e}{of}") from e
        except httpx.HTTPError as e:
            raise ModelError(f"{method} {url}: {type(e).__name__}: {e}{of}") from e
        if response.status_code != 200:
            status = response.status_code
            body_text = raw.decode("utf-8", "replace").strip()
            detail = server_message(body_text) or "(no body)"
            message = f"{method} {url}: HTTP {status} {response.reason_phrase}: {detail}{of}"
            if status == 429 or status >= 500:
                raise HttpTransientStatusError(message, status, retry_after(response))
            if status in AUTH_STATUSES:
                raise HttpAuthError(message, status)
            refusal = context_refusal(body_text) if status in (400, 413, 422) else None
            if refusal is not None:
                context, prompt_tokens = refusal
                raise ContextOverflow(message, prompt_tokens=prompt_tokens,
                                      context_length=context)
            raise HttpStatusError(message, status)
        try:
            parsed = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ModelError(f"{method} {url}: malformed JSON ({e}): "
                             f"{raw[:200].decode('utf-8', 'replace')!r}{of}") from e
        if not isinstance(parsed, dict):
            raise ModelError(f"{method} {url}: expected a JSON object, got "
                             f"{type(parsed).__name__}{of}")
        return parsed

    def _url(self, path: str) -> str:
        return self.base_url + path

    # ------------------------------------------------------------------ what it is

    def _models(self) -> list[dict]:
        with self._lock:
            if self._models_listing is None:
                listing = self._request("GET", "/models")
                data = listing.get("data")
                models = [m for m in data if isinstance(m, dict) and "id" in m] \
                    if isinstance(data, list) else []
                if not models:
                    raise ModelError(f"GET {self._url('/models')}: no models listed: "
                                     f"{json.dumps(listing)[:200]}")
                self._models_listing = models
            return self._models_listing

    @property
    def model(self) -> str:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = str(self._models()[0]["id"])
        return self._model

    @property
    def name(self) -> str:
        return self.model

    def _entry(self) -> dict:
        """This model's /v1/models entry (Ollama lists ``NAME`` as ``NAME:latest``)."""
        models = self._models()
        for wanted in (self.model, self.model + ":latest"):
            entry = next((m for m in models if m["id"] == wanted), None)
            if entry is not None:
                return entry
        raise ModelError(f"GET {self._url('/models')}: model {self.model!r} is not "
                         f"served (served: {[m['id'] for m in models]})")

    @property
    def identity(self) -> ModelIdentity:
        with self._lock:
            if self._identity is None:
                self._identity = self._probe_identity()
            return self._identity

    def _probe_identity(self) -> ModelIdentity:
        identity, self._reported = probe_identity(self, self._entry())
        return identity

    def _probe(self, method: str, path: str, body: dict | None = None) -> dict | None:
        """A probe's JSON, or None when the server has no such endpoint (any non-200 answer,
        or not JSON, or no answer within the probe timeout, noted); a server that refuses the
        connection raises."""
        seconds = min(self.timeout, PROBE_TIMEOUT_S)
        try:
            return self._request(method, path, body, root=True, timeout=seconds)
        except HttpStatusError:
            return None
        except HttpTransportError as exc:
            if not isinstance(exc.__cause__, httpx.TimeoutException):
                raise
            # a server slow on a probe (Ollama loading the model for /api/show): the identity
            # goes without that report (weaker), and says so, rather than failing the run
            self._unanswered.append(f"{path}: no answer within {seconds:g} s")
            return None
        except ModelError:
            return None

    @property
    def endpoint(self) -> dict:
        """What the run header records about the endpoint (never the key)."""
        identity = self.identity
        strength = ("reported: " + ", ".join(self._reported)) if self._reported else WEAK
        if self._unanswered:
            strength += f" ({'; '.join(self._unanswered)})"
        return {"url": self.base_url, "model": self.model, "api": self.api,
                "spec": self.spec, "api_key_env": self.api_key_env,
                "context_length": self.n_ctx, "identity": strength, "sha256": identity.sha256}

    @property
    def n_ctx(self) -> int:
        """The context prompts are fitted to: the one a refusal named (:meth:`learn_context`),
        else the server's, else the config's, else :data:`DEFAULT_CONTEXT`."""
        return (self._learned_context or self.identity.context_length or self._context_length
                or DEFAULT_CONTEXT)

    @property
    def context_key(self) -> str:
        """Where a learned context is kept: this model on this server (no credentials)."""
        return f"{self.base_url}#{self.model}"

    def learn_context(self, tokens: int) -> None:
        """Fit prompts to ``tokens`` from now on: the context the server's refusal of an
        overlong prompt named (or one learned before and kept in the workspace)."""
        if isinstance(tokens, int) and tokens > 0:
            self._learned_context = tokens

    # ------------------------------------------------------------------ generation

    def _body(self, prompt: Prompt, params: SamplingParams) -> tuple[str, dict, str]:
        body: dict = {"model": self.model, "max_tokens": params.max_tokens,
                      "temperature": params.temperature, "top_p": params.top_p,
                      "top_k": params.top_k, "seed": params.seed, "stream": False}
        if params.stop:
            body["stop"] = list(params.stop)
        body.update(endpoint_fields(params.thinking, self.model))   # nothing for auto
        if self.chat:
            messages = _as_messages(prompt)
            body["messages"] = messages
            return "/chat/completions", body, json.dumps(messages, ensure_ascii=False)
        if not isinstance(prompt, str):
            raise ValueError("the completions API takes a text prompt, not chat messages "
                             "(use api='chat')")
        body["prompt"] = prompt
        return "/completions", body, prompt

    def generate(self, prompt: Prompt, params: SamplingParams = SamplingParams()) -> Generation:
        path, body, sent = self._body(prompt, params)
        start = time.perf_counter()
        response = self._request("POST", path, body)
        seconds = time.perf_counter() - start
        url = self._url(path)
        try:
            choice = response["choices"][0]
            message = choice["message"] if self.chat else {}
            text = message["content"] if self.chat else choice["text"]
            # vLLM, llama-server --reasoning-format, LM Studio: the thinking in its own field
            # (newer vLLM: "reasoning"), the content null while the thinking was cut
            thought = next((message[k] for k in ("reasoning_content", "reasoning")
                            if message.get(k) is not None), None)
            if text is None and isinstance(thought, str):
                text = ""
            usage = response.get("usage") or {}
            prompt_tokens = int(usage["prompt_tokens"])
            completion_tokens = int(usage["completion_tokens"])
            details = usage.get("completion_tokens_details")
            thought_tokens = details.get("reasoning_tokens") if isinstance(details, dict) \
                else None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise ReplyError(f"{self.model}: POST {url}: unexpected response "
                             f"({type(e).__name__}: {e}): "
                             f"{json.dumps(response, ensure_ascii=True)[:300]}") from e
        generation = Generation(
            text=checked_text(self.model, text, f"POST {url}"),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            prompt_tokens_evaluated=_evaluated(response, prompt_tokens),
            seconds=seconds,
            finish_reason=str(choice.get("finish_reason") or "unknown"),
            device="http",
            prompt_text=sent,
            extra={"api": self.api, "url": url, "model": response.get("model"),
                   "id": response.get("id")})
        return apart(generation, self.model, reasoning_field=thought,
                     opened=not self.chat and prompt_opens_thinking(sent),
                     reasoning_tokens=thought_tokens, count_tokens=self._reasoning_tokens)

    def _reasoning_tokens(self, text: str) -> int:
        """The reasoning's tokens when the server did not count them: its tokenizer, else
        the estimate of :meth:`count_tokens` (UTF-8 bytes / 3; also for a completions API
        whose tokenizer is unknown, which :meth:`count_tokens` would ask a generation of, and
        when the tokenizer fails: that is not the reply's fault)."""
        if self.chat or self._tokenize:
            try:
                return self.count_tokens(text)
            except ModelError:
                pass
        return math.ceil(len(text.encode("utf-8")) / CHARS_PER_TOKEN)

    # ------------------------------------------------------------------ tokens

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` by the server's own tokenizer.

        Tries llama-cpp-python's ``/extras/tokenize/count``, then llama.cpp's and vLLM's
        ``/tokenize`` (the one that works is remembered); failing both, with the completions
        API, the prompt_tokens of a one-token completion (which may include a BOS token), and
        with the chat API (Ollama, LM Studio, hosted APIs) an estimate: UTF-8 bytes / 3.
        """
        attempts = [("/extras/tokenize/count", {"input": text, "model": self.model}),
                    ("/tokenize", {"content": text, "prompt": text, "model": self.model})]
        for path, body in attempts:
            if self._tokenize is not None and path != self._tokenize:
                continue
            try:
                response = self._request("POST", path, body, root=True)
            except HttpStatusError as e:
                if isinstance(e, TransientModelError) and self._tokenize == path:
                    raise
                continue          # not this server's endpoint
            if isinstance(response.get("count"), int):     # llama-cpp-python, vLLM
                self._tokenize = path
                return response["count"]
            if isinstance(response.get("tokens"), list):
                self._tokenize = path
                return len(response["tokens"])
        self._tokenize = ""
        if self.chat:
            return math.ceil(len(text.encode("utf-8")) / CHARS_PER_TOKEN)
        return self.generate(text, SamplingParams(max_tokens=1)).prompt_tokens


def _as_messages(prompt: Prompt) -> list[Message]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


def _caused_by(exc: BaseException, kind: type) -> bool:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, kind):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _evaluated(response: dict, prompt_tokens: int) -> int:
    """Prompt tokens the server computed: fewer than sent when it reused a cached prefix."""
    usage = response.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if isinstance(cached, int) and 0 <= cached <= prompt_tokens:
        return prompt_tokens - cached
    timings = response.get("timings") or {}          # llama.cpp's own server
    if isinstance(timings, dict) and isinstance(timings.get("prompt_n"), int):
        return min(timings["prompt_n"], prompt_tokens)
    return prompt_tokens

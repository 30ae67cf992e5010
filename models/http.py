"""A Generator on an OpenAI-compatible HTTP endpoint (a llama.cpp server, vLLM, ...).

Standard library only (urllib). Every failure (connection refused, timeout, a non-200 answer,
a body that is not the expected JSON) is a ModelError naming the URL and the problem.

``label_probs`` reads the first generated token's ``top_logprobs`` (completions API:
``logprobs: N``; chat API: ``logprobs: true, top_logprobs: N``). The server only reports its
top N tokens, so a label outside them gets probability 0 before normalising; if no label is
among them, that is a ModelError (a judge then falls back to parsing a reply). Whether the
server reports logprobs at all is probed once and cached in ``supports_label_probs``; when it
does not, ``label_probs`` raises NotImplementedError.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Sequence

from .base import (Generation, Message, ModelError, ModelIdentity, Prompt, ReplyError,
                   SamplingParams)
from .replies import checked_text

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class HttpStatusError(ModelError):
    """The server answered, but not with 200."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class HttpGenerator:
    """Generation through ``/v1/chat/completions`` (``api="chat"``) or ``/v1/completions``.

    ``base_url`` is the server root or its ``/v1`` (both work). ``model`` defaults to the
    first model the server lists. With ``api="completions"`` the generator counts as a base
    model (``chat`` False): judges then send completion frames, not messages.
    """

    backend = "http"

    def __init__(self, base_url: str, model: str | None = None, api: str = "chat",
                 api_key: str | None = None, timeout: float = 120.0, top_logprobs: int = 20):
        if api not in ("chat", "completions"):
            raise ValueError(f"api must be 'chat' or 'completions', not {api!r}")
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        root = base_url.rstrip("/")
        self.base_url = root if root.endswith("/v1") else root + "/v1"
        self.api = api
        self.chat = api == "chat"
        self.api_key = api_key
        self.timeout = timeout
        self.top_logprobs = top_logprobs
        self._model = model
        self._models_listing: list[dict] | None = None
        self._identity: ModelIdentity | None = None
        self._label_probs_n: int | None = None     # top-N the server accepted; 0 = none
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        # Loopback never goes through an environment proxy; anything else may need one.
        self._opener = (urllib.request.build_opener(urllib.request.ProxyHandler({}))
                        if host in _LOOPBACK else urllib.request.build_opener())

    # ------------------------------------------------------------------ transport

    def _request(self, method: str, path: str, body: dict | None = None, *,
                 root: bool = False) -> dict:
        """JSON from ``base_url + path`` (or from the server root + path when ``root``)."""
        url = (self.base_url[: -len("/v1")] if root else self.base_url) + path
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            try:
                detail = e.read().decode("utf-8", "replace").strip()[:500]
            except (OSError, http.client.HTTPException):
                detail = "(no body)"
            raise HttpStatusError(f"{method} {url}: HTTP {e.code} {e.reason}: {detail}",
                                  e.code) from e
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise ModelError(f"{method} {url}: no answer within {self.timeout:g} s") from e
            if isinstance(reason, ConnectionRefusedError):
                raise ModelError(f"{method} {url}: connection refused (is the server "
                                 f"running?)") from e
            raise ModelError(f"{method} {url}: cannot connect: {reason}") from e
        except (TimeoutError, socket.timeout) as e:
            raise ModelError(f"{method} {url}: no answer within {self.timeout:g} s") from e
        except (OSError, http.client.HTTPException) as e:
            raise ModelError(f"{method} {url}: connection failed: "
                             f"{type(e).__name__}: {e}") from e
        try:
            parsed = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ModelError(f"{method} {url}: malformed JSON ({e}): "
                             f"{raw[:200].decode('utf-8', 'replace')!r}") from e
        if not isinstance(parsed, dict):
            raise ModelError(f"{method} {url}: expected a JSON object, got "
                             f"{type(parsed).__name__}")
        return parsed

    def _url(self, path: str) -> str:
        return self.base_url + path

    # ------------------------------------------------------------------ what it is

    def _models(self) -> list[dict]:
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
            self._model = str(self._models()[0]["id"])
        return self._model

    @property
    def name(self) -> str:
        return self.model

    @property
    def identity(self) -> ModelIdentity:
        if self._identity is None:
            entry = next((m for m in self._models() if m["id"] == self.model), None)
            if entry is None:
                raise ModelError(f"GET {self._url('/models')}: model {self.model!r} is not "
                                 f"served (served: {[m['id'] for m in self._models()]})")
            self._identity = ModelIdentity(
                name=self.model,
                sha256=hashlib.sha256((self.base_url + self.model).encode()).hexdigest(),
                quantization=None,
                context_length=_context_length(entry),
                backend="http")
        return self._identity

    # ------------------------------------------------------------------ generation

    def _body(self, prompt: Prompt, params: SamplingParams) -> tuple[str, dict, str]:
        body: dict = {"model": self.model, "max_tokens": params.max_tokens,
                      "temperature": params.temperature, "top_p": params.top_p,
                      "top_k": params.top_k, "seed": params.seed, "stream": False}
        if params.stop:
            body["stop"] = list(params.stop)
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
            text = choice["message"]["content"] if self.chat else choice["text"]
            usage = response.get("usage") or {}
            prompt_tokens = int(usage["prompt_tokens"])
            completion_tokens = int(usage["completion_tokens"])
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise ReplyError(f"{self.model}: POST {url}: unexpected response "
                             f"({type(e).__name__}: {e}): "
                             f"{json.dumps(response, ensure_ascii=True)[:300]}") from e
        return Generation(
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

    # ------------------------------------------------------------------ label probabilities

    def _logprob_body(self, prompt: Prompt, n: int) -> tuple[str, dict]:
        path, body, _ = self._body(prompt, SamplingParams(max_tokens=1, temperature=0.0))
        if self.chat:
            body.update(logprobs=True, top_logprobs=n)
        else:
            body["logprobs"] = n
        return path, body

    def _first_token_logprobs(self, response: dict) -> dict[str, float] | None:
        """The first generated token's top alternatives, or None if the server sent none."""
        try:
            logprobs = response["choices"][0].get("logprobs")
            if not logprobs:
                return None
            if self.chat:
                first = (logprobs.get("content") or [None])[0]
                if not first or not first.get("top_logprobs"):
                    return None
                pairs = [(t["token"], t["logprob"]) for t in first["top_logprobs"]]
            else:
                tops = logprobs.get("top_logprobs") or [None]
                if not tops[0]:
                    return None
                pairs = list(tops[0].items())
        except (KeyError, IndexError, TypeError, AttributeError):
            return None
        out: dict[str, float] = {}
        for token, logprob in pairs:
            if logprob is None or not math.isfinite(float(logprob)):
                continue
            out[token] = max(out.get(token, -math.inf), float(logprob))
        return out or None

    @property
    def supports_label_probs(self) -> bool:
        """Probed once: does the server return top logprobs for the first token?"""
        if self._label_probs_n is None:
            self._label_probs_n = 0
            # OpenAI's completions API allows at most 5; vLLM and llama.cpp allow 20 or more.
            for n in dict.fromkeys((self.top_logprobs, 5)):
                path, body = self._logprob_body("Hi" if not self.chat else
                                                [{"role": "user", "content": "Hi"}], n)
                try:
                    response = self._request("POST", path, body)
                except HttpStatusError:
                    continue      # the server refused logprobs (or this many of them)
                if self._first_token_logprobs(response):
                    self._label_probs_n = n
                break
        return self._label_probs_n > 0

    def label_probs(self, prompt: Prompt, labels: Sequence[str]) -> dict[str, float]:
        """P(label is the next token), normalised over the labels.

        A label matches a reported token when both are equal after stripping whitespace (so
        ``"A"`` also collects ``" A"``); a label's matches are summed.
        """
        if not self.supports_label_probs:
            raise NotImplementedError(f"{self.base_url} returns no logprobs for the "
                                      f"{self.api} API")
        path, body = self._logprob_body(prompt, self._label_probs_n)
        response = self._request("POST", path, body)
        tops = self._first_token_logprobs(response)
        if tops is None:
            raise ModelError(f"POST {self._url(path)}: no logprobs in the response")
        mass = {label: 0.0 for label in labels}
        for token, logprob in tops.items():
            for label in labels:
                if token.strip() == label.strip() and token.strip():
                    mass[label] += math.exp(logprob)
        total = sum(mass.values())
        if total <= 0:
            raise ModelError(f"POST {self._url(path)}: none of the labels {list(labels)} is "
                             f"among the top {len(tops)} next tokens {sorted(tops)[:20]}")
        return {label: m / total for label, m in mass.items()}

    # ------------------------------------------------------------------ tokens

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` by the server's own tokenizer.

        Tries llama-cpp-python's ``/extras/tokenize/count``, then llama.cpp's and vLLM's
        ``/tokenize``; failing both, the prompt_tokens of a one-token completion (which may
        include a BOS token).
        """
        attempts = [("/extras/tokenize/count", {"input": text, "model": self.model}),
                    ("/tokenize", {"content": text, "prompt": text, "model": self.model})]
        for path, body in attempts:
            try:
                response = self._request("POST", path, body, root=True)
            except HttpStatusError:
                continue          # not this server's endpoint
            if isinstance(response.get("count"), int):     # llama-cpp-python, vLLM
                return response["count"]
            if isinstance(response.get("tokens"), list):
                return len(response["tokens"])
        if self.chat:
            raise ModelError(f"{self.base_url}: no tokenize endpoint, and a chat prompt's "
                             f"token count includes its template")
        return self.generate(text, SamplingParams(max_tokens=1)).prompt_tokens


def _as_messages(prompt: Prompt) -> list[Message]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


def _context_length(entry: dict) -> int:
    """The context window a /v1/models entry reports (vLLM, llama.cpp), else 0."""
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    for value in (entry.get("max_model_len"), entry.get("context_length"), entry.get("n_ctx"),
                  meta.get("n_ctx"), meta.get("n_ctx_train")):
        if isinstance(value, int) and value > 0:
            return value
    return 0


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

"""What an HTTP endpoint's failures are (:mod:`models.http`): a status that is not 200 (busy,
failing, a refused key), no answer at all, and the context a "prompt too long" answer names."""

from __future__ import annotations

import email.utils
import re
import time

from .base import ModelError, ModelUnusable, TransientModelError


class HttpStatusError(ModelError):
    """The server answered, but not with 200."""

    def __init__(self, message: str, status: int, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class HttpTransientStatusError(HttpStatusError, TransientModelError):
    """HTTP 429 or 5xx: the server is busy or failing now; the same request may pass later."""


class HttpAuthError(HttpStatusError, ModelUnusable):
    """HTTP 401, 403 or 407: the key is wrong or missing, so no request can pass."""


AUTH_STATUSES = (401, 403, 407)
_OVERFLOW_WORDS = ("maximum context length", "exceeds the available context size",
                   "exceed_context_size")
_CONTEXT_SAID = (re.compile(r"maximum context length is (\d+) tokens"),   # OpenAI, vLLM, ...
                 re.compile(r"available context size \((\d+) tokens\)"),  # llama.cpp
                 re.compile(r'"n_ctx"\s*:\s*(\d+)'))
_PROMPT_SAID = (re.compile(r"\((\d+) in (?:the messages|your prompt)"),
                re.compile(r"has (\d+) input tokens"),
                re.compile(r"request \((\d+) tokens\)"),
                re.compile(r'"n_prompt_tokens"\s*:\s*(\d+)'))


def context_refusal(detail: str) -> tuple[int, int] | None:
    """``(context, prompt tokens)`` a server's "prompt too long" answer names (0 for what it
    does not say); None when ``detail`` is not such an answer."""
    lower = detail.lower()
    if not any(word in lower for word in _OVERFLOW_WORDS):
        return None

    def said(patterns) -> int:
        for pattern in patterns:
            found = pattern.search(detail)
            if found:
                return int(found.group(1))
        return 0

    return said(_CONTEXT_SAID), said(_PROMPT_SAID)


class HttpTransportError(TransientModelError):
    """No answer: a refused or reset connection, or a request past its timeout."""

    status = None
    retry_after = None


def retry_after(response) -> float | None:
    """Seconds from an httpx response's Retry-After header (a number, or an HTTP date), else
    None."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) if when is not None else None

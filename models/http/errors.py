"""What an HTTP endpoint's failures are (:mod:`models.http.generator`, and llama-server behind a model
host): a status that is not 200 (busy, failing, a refused key), no answer at all, the context a
"prompt too long" answer names, and the server's own words on what went wrong
(:func:`server_message`)."""

from __future__ import annotations

import email.utils
import json
import re
import time

from ..base import ModelError, ModelUnusable, TransientModelError
from ..visible_text import visible_line


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


MESSAGE_LIMIT = 300
"""The most characters of a server's message an error carries (the rest is ``…``)."""
_TAG = re.compile(r"<[^>]*>")


def _said(parsed) -> str:
    """The message in a parsed JSON error body: ``{"error": {"message": ..., "type": ...}}``
    (OpenAI, vLLM, llama.cpp's server), ``{"error": "..."}`` (Ollama), ``{"detail": ...}``
    (FastAPI), ``{"message": ...}``; "" when none of these."""
    if not isinstance(parsed, dict):
        return ""
    error = parsed.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message.strip():
            kind = error.get("type")
            return message if not isinstance(kind, str) or not kind or kind in message \
                else f"{message} ({kind})"
        return _said(error)
    for key in ("error", "detail", "message"):
        value = parsed.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, (list, dict)) and value:
            return json.dumps(value, ensure_ascii=False)
    return ""


def server_message(body: bytes | str, limit: int = MESSAGE_LIMIT) -> str:
    """A server's own words in an error answer's ``body``, fit for a one-line error on a
    terminal and in a run's log: the message of a JSON error body (:func:`_said`; the type
    added when it says more), else the body as text (an HTML page without its tags); spaces and
    line breaks collapsed, control characters written out (:func:`models.visible_text.
    visible_line`), at most ``limit`` characters (then ``…``); "" for an empty body."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    text = text.strip()
    try:
        said = _said(json.loads(text)) if text[:1] in "{[" and text else ""
    except ValueError:
        said = ""
    if not said and text[:1] == "<":
        said = _TAG.sub(" ", text)
    words = visible_line(" ".join((said or text).split()))
    return words if len(words) <= limit else words[:limit - 1].rstrip() + "…"

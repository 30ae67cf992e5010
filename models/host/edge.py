"""The model host's edge: every request checked before it reaches the model.

A POST must say ``Content-Type: application/json`` (415 otherwise, so a web page cannot post
a "simple" text/plain request at it), send a ``Content-Length`` (411) and fit
``MAX_BODY_BYTES`` (413, refused before anything is read); the token is checked first
(:meth:`models.host.server.Host.check_token`: 401, 403). Then each field: ``checked_prompt``,
``sampling_params`` (its ``thinking`` mode: ``thinking_mode``), ``labels_of``,
``required_field``, ``request_id``; a client's mistake (a
body that is not a JSON object, a malformed message, a value of the wrong type) is a 400
naming it, a request its client cancelled a 409, a model's failure a 500 (``error_body``).
Every answer is JSON, escaped ASCII.

Standard library, :mod:`models.base` and :mod:`models.thinking`'s modes only (the host
process imports no more:
:mod:`models.host.server`).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import time
from dataclasses import fields
from http.server import BaseHTTPRequestHandler

from models.base import ContextOverflow, ModelError, ReplyError, RequestCancelled, SamplingParams
from models.thinking import MODES

_PARAM_FIELDS = {f.name for f in fields(SamplingParams)}
MAX_BODY_BYTES = 8 << 20        # a prompt of a 128k context is ~1 MB of JSON
_REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class Refused(Exception):
    """A request refused before its body is read (auth, media type, size)."""

    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind = status, kind


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


def sampling_params(raw) -> SamplingParams:
    """The SamplingParams of a request's ``params`` object, each value checked (ValueError
    naming the field)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ValueError("'params' must be a JSON object")
    raw = dict(raw)
    unknown = set(raw) - _PARAM_FIELDS
    if unknown:
        raise ValueError(f"unknown sampling parameters: {', '.join(sorted(unknown))}")
    for name in ("max_tokens", "top_k", "seed"):
        if name in raw and not is_int(raw[name]):
            raise ValueError(f"'{name}' must be an integer (got {raw[name]!r:.40})")
    for name in ("temperature", "top_p"):
        if name in raw and not (_is_number(raw[name]) and raw[name] >= 0):
            raise ValueError(f"'{name}' must be a number >= 0 (got {raw[name]!r:.40})")
    if "stop" in raw:
        stop = raw["stop"]
        stop = (stop,) if isinstance(stop, str) else stop
        if not isinstance(stop, (list, tuple)) or not all(isinstance(x, str) for x in stop):
            raise ValueError("'stop' must be a string or a list of strings")
        raw["stop"] = tuple(stop)
    raw["thinking"] = thinking_mode(raw)
    return SamplingParams(**raw)


def thinking_mode(body: dict) -> str:
    """A render request's ``thinking`` mode (``auto`` when absent; ValueError naming the field
    for anything but a mode)."""
    mode = body.get("thinking", "auto")
    if mode not in MODES:
        raise ValueError(f"'thinking' must be one of {', '.join(MODES)} (got {mode!r:.40})")
    return mode


def checked_prompt(value, field: str = "prompt"):
    """A prompt from a request: a string, or a non-empty list of ``{role, content}`` objects
    with string values (ValueError naming ``field`` otherwise)."""
    if isinstance(value, str):
        return value
    if (isinstance(value, list) and value and all(
            isinstance(m, dict) and isinstance(m.get("role"), str)
            and isinstance(m.get("content"), str) for m in value)):
        return value
    raise ValueError(f"'{field}' must be a string or a non-empty list of "
                     "{\"role\": string, \"content\": string} objects")


def required_field(body: dict, name: str, kind: type, what: str):
    if name not in body:
        raise ValueError(f"'{name}' is missing")
    value = body[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"'{name}' must be {what}")
    return value


def request_id(body: dict) -> str | None:
    """The optional ``request`` of a generate or label_probs body: the client's id for it,
    which ``/mirage/cancel`` names (1 to 64 letters, digits, ``-`` or ``_``)."""
    value = body.get("request")
    if value is None:
        return None
    if not isinstance(value, str) or not _REQUEST_ID.fullmatch(value):
        raise ValueError("'request' must be 1 to 64 letters, digits, '-' or '_'")
    return value


def request_ids(body: dict) -> list[str]:
    """``/mirage/cancel``'s ``requests``: a list of request ids (:func:`request_id`)."""
    ids = body.get("requests")
    if not isinstance(ids, list) or len(ids) > 1024:
        raise ValueError("'requests' must be a list of at most 1024 request ids")
    return [request_id({"request": i}) for i in ids]


def labels_of(body: dict) -> list[str]:
    labels = body.get("labels")
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise ValueError("'labels' must be a list of strings")
    return labels


def error_body(exc: Exception) -> tuple[int, dict]:
    kind = type(exc).__name__
    body = {"type": kind, "message": str(exc)}
    if isinstance(exc, ContextOverflow):
        body.update(prompt_tokens=exc.prompt_tokens, context_length=exc.context_length)
        return 400, {"error": body}
    if isinstance(exc, RequestCancelled):
        body.update(completion_tokens=exc.completion_tokens)
        return 409, {"error": body}
    if isinstance(exc, (ValueError, KeyError, TypeError, ReplyError)):
        if isinstance(exc, (KeyError, TypeError)):
            body.update(type="ValueError", message=f"bad request: {kind}: {exc}")
        return 400, {"error": body}
    if not isinstance(exc, ModelError):
        body.update(type="ModelError", message=f"{kind}: {exc}")
    return 500, {"error": body}


def make_handler(host, log):
    """The HTTP handler of ``host`` (a :class:`models.host.server.Host`: its ``check_token``
    and ``route``); ``log`` writes a line to the host's log (a failure answered 500)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"        # keep-alive: one connection per client thread

        def _answer(self, method: str) -> None:
            try:
                host.check_token(self.headers.get("Authorization"))
                body = self._body() if method == "POST" else {}
                if method != "POST" and self.headers.get("Content-Length", "0") != "0":
                    self.close_connection = True     # a GET's body is not read
                action = host.route(method, self.path.split("?", 1)[0], body)
                if action is None:
                    status, out = 404, {"error": {"type": "NotFound",
                                                  "message": f"no route {method} {self.path}"}}
                else:
                    status, out = 200, action()
            except Refused as exc:
                status, out = exc.status, {"error": {"type": exc.kind, "message": str(exc)}}
                self.close_connection = True         # its body (if any) was not read
            except Exception as exc:  # noqa: BLE001 - every failure goes back as JSON
                status, out = error_body(exc)
                if status >= 500:
                    log(f"{method} {self.path}: {out['error']['message']}")
            data = json.dumps(out).encode("ascii")   # escaped ASCII: a lone surrogate survives
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            if self.close_connection:
                self._linger()

        def _linger(self, seconds: float = 1.0) -> None:
            """Let the client read the refusal: stop sending, then drop (64 KB at a time, for
            at most ``seconds``) what it still sends, so closing with unread bytes does not
            reset the connection under the answer. Nothing is kept."""
            with contextlib.suppress(OSError):
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_WR)
                deadline = time.monotonic() + seconds
                while (left := deadline - time.monotonic()) > 0:
                    self.connection.settimeout(left)
                    if not self.connection.recv(65536):
                        break

        def _body(self):
            """The JSON body of a POST: refused (415, 411, 413) before reading when it is not
            JSON or too big; a ValueError (400) when it does not parse."""
            media = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if media != "application/json":
                raise Refused(415, "UnsupportedMediaType",
                              f"Content-Type must be application/json (got {media or 'none'})")
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                raise Refused(411, "LengthRequired", "send the body with a Content-Length")
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                raise Refused(400, "ValueError", "Content-Length is not a number") from None
            if length < 0:
                raise Refused(400, "ValueError", "Content-Length is negative")
            if length > MAX_BODY_BYTES:
                raise Refused(413, "PayloadTooLarge",
                              f"the body is {length} bytes, more than the {MAX_BODY_BYTES} "
                              "this host accepts")
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else {}
            except ValueError as exc:
                raise ValueError(f"the body is not JSON ({exc})") from None

        def do_GET(self):  # noqa: N802 - http.server's names
            self._answer("GET")

        def do_POST(self):  # noqa: N802
            self._answer("POST")

        def log_message(self, format, *args):  # noqa: A002 - one line per request is noise
            pass

    return Handler

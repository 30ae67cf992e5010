"""Dataset importers. Each module exposes FORMAT, detect(path), files(path), default_name(path)
and parse(path, progress) -> ParsedDataset; see :mod:`engine.importers.base`."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from types import ModuleType

from engine.importers.base import DatasetFormatError

# order matters for detection: the first whose detect() says yes wins
_MODULES = {
    "mirage": "engine.importers.mirage",
    "mirage-parquet": "engine.importers.mirage_parquet",
    "squad": "engine.importers.squad",
    "lfrqa": "engine.importers.lfrqa",
    "wiki-summaries": "engine.importers.wiki",
    "beir": "engine.importers.beir",
}
FORMATS = tuple(_MODULES)


def get_importer(fmt: str) -> ModuleType:
    return import_module(_MODULES[fmt])


def detect_format(path: Path) -> str:
    for fmt in FORMATS:
        if get_importer(fmt).detect(path):
            return fmt
    kind = "folder" if path.is_dir() else "file"
    raise DatasetFormatError(
        path, f"cannot tell this {kind}'s format; pass --format (one of: {', '.join(FORMATS)})")

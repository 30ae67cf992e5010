"""Dataset importers. Each module exposes FORMAT, detect(path), files(path), default_name(path)
and parse(path, steps) -> ParsedDataset; see :mod:`engine.datasets.formats.base`."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from types import ModuleType

from engine.datasets.formats.base import DatasetFormatError

# order matters for detection: the first whose detect() says yes wins
_MODULES = {
    "mirage": "engine.datasets.formats.mirage",
    "mirage-parquet": "engine.datasets.formats.mirage_parquet",
    "squad": "engine.datasets.formats.squad",
    "lfrqa": "engine.datasets.formats.lfrqa",
    "wiki-summaries": "engine.datasets.formats.wiki",
    "beir": "engine.datasets.formats.beir",
    "ragchecker-meta": "engine.datasets.formats.ragchecker_meta",
    "pairwise-labels": "engine.datasets.formats.pairwise_labels",
}
FORMATS = tuple(_MODULES)


def get_importer(fmt: str) -> ModuleType:
    return import_module(_MODULES[fmt])


def detect_format(path: Path) -> str:
    for fmt in FORMATS:
        if get_importer(fmt).detect(path):
            return fmt
    kind = "folder" if path.is_dir() else "file"
    choices = f"pass --format (one of: {', '.join(FORMATS)})"
    if path.is_file() and path.suffix.lower() == ".json":
        # a JSON file no reader recognises may be one cut short: say where it breaks
        from engine.datasets.formats.base import load_json

        try:
            load_json(path)
        except DatasetFormatError as exc:
            hint = " (truncated?)" if "truncated" not in exc.reason else ""
            raise DatasetFormatError(path, f"{exc.reason}{hint}, so its format cannot be "
                                           f"told; fix the file, or {choices}") from None
    raise DatasetFormatError(path, f"cannot tell this {kind}'s format; {choices}")

"""RAGChecker's meta-evaluation file of human pairwise labels, as a format of its own (the
reader is :func:`engine.datasets.formats.pairwise_labels.parse_ragchecker`, which documents
the layout)."""

from __future__ import annotations

from pathlib import Path

from engine.datasets.formats.base import ParsedDataset
from engine.datasets.formats.pairwise_labels import (RAGCHECKER_FORMAT, default_name, files,
                                                     is_ragchecker, parse_ragchecker)
from engine.jobs import StepCount

FORMAT = RAGCHECKER_FORMAT
__all__ = ["FORMAT", "default_name", "detect", "files", "parse"]


def detect(path: Path) -> bool:
    return is_ragchecker(path)


def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    return parse_ragchecker(path, steps)

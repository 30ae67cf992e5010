"""Self-contained HTML pages of results: a run and a paired comparison (an arena's leaderboard
and a judge calibration are the arena package's: :mod:`engine.arena.ratings.page`,
:mod:`engine.arena.trust.page`, in the same frame).

One file each, nothing fetched (styles, script, charts and data inline), built from the same
engine functions that feed the TUI and ``--json`` (:func:`engine.results.report.build_report`,
:func:`engine.results.paired.compare_pair`, the Inspector's
:func:`~engine.results.inspector.items_for` and :func:`~engine.results.inspector.item_detail`).

- :mod:`.page`: the frame, tables and the one number format; :mod:`.assets`: inline CSS and
  the item browser's script; :mod:`.svg`: the charts; :mod:`.items`: the browser's data;
- :mod:`.run_page`, :mod:`.compare_page`: one page kind each.

:func:`write_page` writes a page through :func:`engine.output_files.write_text` (a temporary
file beside it, renamed only over a regular file or a new path).
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.output_files import write_text
from engine.results.html.compare_page import comparison_page
from engine.results.html.items import ITEM_LIMIT

__all__ = ["ITEM_LIMIT", "comparison_page", "write_page"]


def write_page(html: str, out: str | os.PathLike) -> Path:
    """Write ``html`` to ``out`` (UTF-8, folders made); returns the path. A device, FIFO or
    folder at ``out`` is refused and a failed write leaves ``out`` as it was
    (:class:`engine.output_files.OutputFileError`, one line)."""
    return write_text(out, html)

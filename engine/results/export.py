"""Export a run's items with every score, and a header that says how to reproduce the run.

One row per run item (system × setting × query), in the report's order (system, query, setting),
with the item's query, golds, context, exact prompt, response and generation facts, then two
columns per metric that any item of the run has: ``<metric>`` (the value; empty / null when the
metric does not apply or the item has no generation) and ``<metric>_detail`` (why); the run
engine's ``_scorer`` marker becomes the ``scorer_version`` column. A run with a reasoning
model's thinking has three more columns after ``response`` (the scored answer):
``reasoning``, ``reasoning_tokens`` and ``thinking_cut`` (the thinking never closed).

Conventions (one per format, so a file is never ambiguous):

- ``jsonl``: the first line is the header ``{"type": "header", ...}``; every other line is an
  item ``{"type": "item", <column>: value, ...}`` with native JSON values (answers and context
  are lists, truncated a boolean).
- ``csv``: the items only (RFC 4180: ``\\r\\n`` rows, a cell with a line break quoted), one
  header row of column names, then one row per item; lists are
  JSON text, truncated is 0/1, a missing value is an empty cell. The run header goes to a
  sidecar JSON file beside it, ``<stem>.header.json`` (``run.csv`` -> ``run.header.json``).
  Writing to an open file instead of a path writes the sidecar only when ``header_out`` is
  given. Text cells that a spreadsheet would read as a formula get a leading ``'``
  (:func:`engine.output_files.csv_cell`); numbers stay numbers.

A path is written through :func:`engine.output_files.output_file`: a device, FIFO or folder is
refused, and a failed write leaves neither the data file nor the sidecar half-written.

The header holds the run's name, status and item counts (``partial``: "partial: N of M items
(run running)" for a run that has not finished, else null), the dataset (name@version and content
hash), the run config as asked for, and the run engine's header (model identities, templates,
seeds, package versions, device, ...) as stored in ``runs.header``, plus the column list, and
``definitions``: the choices the run records (gold, correct-language detector and rule, parity)
and the detector and rule behind each ``correct_language*`` column.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from engine.output_files import csv_cell, csv_writer, is_stdout, output_file, write_text
from engine.results.records import (
    SCORER_MARK,
    count_items,
    parse_retrieved,
    run_metrics,
    run_settings,
    setting_rank_sql,
    split_system,
    stored_counts,
)
from engine.store import Store, json_column
from engine.store.database import batched
from engine.store.exports import (
    GENERATION_COLUMNS,
    VIEW_EXTRA,
    run_has_reasoning,
    export_items,
    export_scores,
    scores_of_generations,
)
from engine.store.item_queries import order_by, view_rows
from engine.runs.lookup import RunInfo

FORMATS = ("csv", "jsonl")
EXPORT_FORMAT_VERSION = 1

ITEM_COLUMNS = ("run", "system", "generator", "template", "setting", "retriever", "top_k",
                "query_rowid", "query_id", "language", "source", "query", "answers", "context",
                "generation_key", "model_name", "prompt", "response", "prompt_tokens",
                "completion_tokens", "prompt_tokens_evaluated", "seconds", "finish_reason",
                "device", "truncated", "error", "scorer_version")
REASONING_COLUMNS = ("reasoning", "reasoning_tokens", "thinking_cut")
"""After ``response`` in a run with a reasoning model's thinking (its own fields, never part
of the response); a run without any has none of them, as before."""


def item_columns(store: Store, run: RunInfo) -> list[str]:
    """:data:`ITEM_COLUMNS`, with :data:`REASONING_COLUMNS` after ``response`` when the run
    holds reasoning."""
    columns = list(ITEM_COLUMNS)
    if run_has_reasoning(store, run.id):
        at = columns.index("response") + 1
        columns[at:at] = REASONING_COLUMNS
    return columns


def header_path(data_path: str | os.PathLike) -> Path:
    """The csv sidecar's path: ``<stem>.header.json`` beside the data file."""
    path = Path(data_path)
    return path.with_name(f"{path.stem}.header.json")


def export_files(out: str | os.PathLike, format: str) -> list[Path]:
    """Every file an export to ``out`` writes: the data file, and for ``csv`` its header
    sidecar (:func:`header_path`); what the app checks before it would replace one."""
    path = Path(out)
    return [path, header_path(path)] if format == "csv" else [path]


def _version() -> str | None:
    try:
        from importlib.metadata import version

        return version("mirage-tui")
    except Exception:  # not installed (running from a checkout)
        return None


def run_header(store: Store, run: RunInfo) -> dict[str, Any]:
    """Everything needed to reproduce (and to identify) the run, for an export's header."""
    return {"type": "header", "export_format_version": EXPORT_FORMAT_VERSION,
            "run": run.name, "status": run.status,
            "items": stored_counts(store, run).as_json(), "dataset": run.dataset,
            "dataset_id": run.dataset_id,
            "dataset_content_hash": run.dataset_hash, "dataset_queries": run.dataset_queries,
            "config": run.config, "run_header": run.header.as_dict(),
            "definitions": export_definitions(run.config),
            "created_at": run.created_at, "updated_at": run.updated_at,
            "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "exported_by": {"mirage_tui": _version(), "python": sys.version.split()[0],
                            "platform": platform.platform()}}


def partial_note(header: dict[str, Any]) -> str | None:
    """``partial: 7 of 15 items (run running)`` when an export's header is of a run that has
    not finished every planned item (running, interrupted, cancelled, failed), else None."""
    items = header.get("items") or {}
    done, total, status = items.get("done", 0), items.get("total", 0), header.get("status")
    if status == "done" and done >= total:
        return None
    return f"partial: {done} of {total} items (run {status})"


def export_definitions(config: dict) -> dict[str, Any]:
    """The report choices the run records (:mod:`engine.metrics.definitions`), and what
    produced each correct-language column: ``{"recorded": ..., "language_columns": {column:
    "langid 1.1.6, rule: ..."}}``. Retrieval scores are not exported per item, so the gold
    definition is only recorded here."""
    from engine.metrics.definitions import resolve
    from engine.metrics.language import LANGUAGE_METRICS, describe

    return {"recorded": resolve(config).as_json(),
            "language_columns": {m: describe(d, r) for m, (d, r) in LANGUAGE_METRICS.items()}}


def export_rows(store: Store, run: RunInfo) -> tuple[list[str], list[dict[str, Any]]]:
    """``(columns, rows)``: one dict per run item with native values (see module docstring).
    Every row in memory: for a big run, iterate :func:`iter_export_rows` instead."""
    columns, rows = iter_export_rows(store, run)
    return columns, list(rows)


def iter_export_rows(store: Store, run: RunInfo) -> tuple[list[str], Iterator[dict[str, Any]]]:
    """``(columns, rows)`` with the rows as an iterator: two cursors walk the run's items and
    their scores side by side in the same order (system, query, setting), so memory stays
    bounded however big the run is."""
    metrics = run_metrics(store, run.id)
    columns = item_columns(store, run) + [c for m in metrics for c in (m, f"{m}_detail")]
    rank, _ = setting_rank_sql(s for names in run_settings(store, run.id).values()
                               for s in names)
    items, scores = export_items(store, run.id, rank), export_scores(store, run.id, rank)
    return columns, _rows(run.name, columns, metrics, items, scores)


# an export of a view looks up the scores of this many items at a time
VIEW_PAGE = 500


def iter_view_rows(store: Store, run: RunInfo, filters: dict | None = None,
                   sort: str | None = None, descending: bool = False
                   ) -> tuple[list[str], Iterator[dict[str, Any]]]:
    """Like :func:`iter_export_rows`, for the items an inspector view shows: those matching
    ``filters`` (the keyword filters of :func:`engine.results.inspector.items_for`), in its
    order (``sort``, ``descending``). Streamed: one cursor walks the view in order (SQLite
    sorts once, spilling to disk for a big view), and the scores are looked up for
    :data:`VIEW_PAGE` items at a time."""
    from engine.results.inspector import _check_filters, _check_sort

    filters = dict(filters or {})
    _check_filters(filters.get("category"), filters.get("pattern"), filters.get("metric"),
                   filters.get("min_value"), filters.get("max_value"), filters.get("cut"))
    _check_sort(sort)
    metrics = run_metrics(store, run.id)
    columns = item_columns(store, run) + [c for m in metrics for c in (m, f"{m}_detail")]
    return columns, _view_rows(store, run, columns, metrics, filters, sort, descending)


def _view_rows(store: Store, run, columns: list[str], metrics: list[str], filters: dict,
               sort: str | None, descending: bool) -> Iterator[dict[str, Any]]:
    from engine.results.item_queries import items_sql

    sql = items_sql(store, run.id, **filters)
    items = view_rows(store, sql, order_by(sql, sort, descending), VIEW_EXTRA)
    for page in batched(items, VIEW_PAGE):
        scores: dict[tuple, list] = {}
        keys = sorted({r["generation_key"] for r in page if r["generation_key"]})
        for s in scores_of_generations(store, keys):
            scores.setdefault((s["generation_key"], s["query_rowid"]), []).append(s)
        for r in page:
            yield _row(run.name, columns, metrics, r,
                       scores.get((r["generation_key"], r["query_rowid"]), []))


def _rows(run: str, columns: list[str], metrics: list[str], items: Iterator,
          scores: Iterator) -> Iterator[dict[str, Any]]:
    pending = next(scores, None)
    for r in items:
        key = (r["system"], r["query_rowid"], r["setting"])
        mine = []
        while pending is not None and (pending[0], pending[1], pending[2]) == key:
            mine.append(pending)
            pending = next(scores, None)
        yield _row(run, columns, metrics, r, mine)


def _row(run: str, columns: list[str], metrics: list[str], r, scores: list) -> dict[str, Any]:
    """One item's export row from its item row ``r`` and its score rows."""
    values: dict[str, Any] = {}
    details: dict[str, Any] = {}
    scorer = None
    for score in scores:
        if score["metric"] == SCORER_MARK:
            scorer = score["detail"]
        elif not score["metric"].startswith("_"):
            values[score["metric"]] = score["value"]
            details[score["metric"]] = score["detail"]
    generator, template = split_system(r["system"])
    retrieved = parse_retrieved(r["setting"])
    row: dict[str, Any] = {
        "run": run, "system": r["system"], "generator": generator,
        "template": template, "setting": r["setting"],
        "retriever": retrieved[1] if retrieved else None,
        "top_k": retrieved[0] if retrieved else None,
        "query_rowid": r["query_rowid"], "query_id": r["query_id"],
        "language": r["language"], "source": r["source"], "query": r["query"],
        "answers": json.loads(r["answers"]), "context": json_column(r["context"], None),
        "generation_key": r["generation_key"],
        "truncated": bool(r["truncated"]), "error": r["error"],
        "scorer_version": scorer}
    for key_ in GENERATION_COLUMNS:
        row[key_] = r[key_]
    row["thinking_cut"] = None if r["thinking_cut"] is None else bool(r["thinking_cut"])
    row["response"] = r["response"]
    for m in metrics:
        row[m] = values.get(m)
        row[f"{m}_detail"] = details.get(m)
    return {c: row[c] for c in columns}


def _write(fh: IO[str], fmt: str, header: dict, columns: list[str],
           rows: Iterable[dict[str, Any]]) -> None:
    """Write as the rows come (one row in memory at a time)."""
    if fmt == "jsonl":
        fh.write(json.dumps(header, ensure_ascii=False) + "\n")
        for row in rows:
            fh.write(json.dumps({"type": "item", **row}, ensure_ascii=False) + "\n")
        return
    writer = csv_writer(fh)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row[c]) for c in columns])


def export_run(store: Store, run: RunInfo, format: str = "csv",
               out: str | os.PathLike | IO[str] | None = None,
               header_out: str | os.PathLike | None = None, filters: dict | None = None,
               sort: str | None = None, descending: bool = False) -> Path | None:
    """Write the run's items (and its header) as ``csv`` or ``jsonl``; returns the data file's
    path (None when ``out`` is an open file). ``out`` defaults to ``./<run>.<format>``.
    ``filters`` / ``sort`` / ``descending`` export an inspector view instead: the items
    matching the filters, in its order (:func:`iter_view_rows`); the header's ``view`` says
    which, and its ``rows`` how many matched."""
    if format not in FORMATS:
        raise ValueError(f"unknown export format {format!r} (one of {', '.join(FORMATS)})")
    header = run_header(store, run)
    view = {k: v for k, v in (filters or {}).items() if v is not None}
    if view or sort is not None or descending:
        from engine.results.inspector import count_items_for

        columns, rows = iter_view_rows(store, run, view, sort, descending)
        header["view"] = {"filters": view, "sort": sort or "system", "descending": descending}
        count = count_items_for(store, run, **view)
    else:
        columns, rows = iter_export_rows(store, run)
        count = count_items(store, run)
    header["format"] = format
    header["columns"] = columns
    header["rows"] = count
    header["partial"] = partial_note(header)
    if out is None:
        out = Path(f"{run.name}.{format}")
    if hasattr(out, "write"):
        _write(out, format, header, columns, rows)  # type: ignore[arg-type]
        if format == "csv" and header_out is not None:
            write_text(header_out, _header_text(header))
        return None
    path = Path(out)
    sidecar = Path(header_out) if header_out is not None else header_path(path)
    # both temporary files are renamed only when both were written (a write error surfaces
    # at a flush, so both are flushed inside the block)
    with output_file(path) as fh, (output_file(sidecar) if format == "csv" and not
                                   is_stdout(path) else nullcontext()) as side:
        _write(fh, format, header, columns, rows)
        if side is not None:
            side.write(_header_text(header))
            side.flush()
        fh.flush()
    return path


def _header_text(header: dict) -> str:
    return json.dumps(header, ensure_ascii=False, indent=2) + "\n"

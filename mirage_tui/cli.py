"""The ``mirage-tui`` command: the TUI with no arguments, headless subcommands otherwise.

Every subcommand takes ``--db PATH`` (or ``$MIRAGE_DB``) and exits non-zero on failure, so it
can be scripted. Textual is imported only when the TUI starts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from engine.datasets import (DatasetNotFound, attach_collection, get_dataset, get_query,
                             list_datasets, list_queries)
from engine.importers import FORMATS
from engine.importers.base import DatasetFormatError
from engine.store import Store, StoreError, default_db_path
from models.base import ModelError


class CliError(Exception):
    """A failure to report in one line and exit with status 1."""


def _db_option(parser: argparse.ArgumentParser, top: bool) -> None:
    parser.add_argument(
        "--db", type=Path, metavar="PATH",
        default=None if top else argparse.SUPPRESS,
        help="workspace database file (default: $MIRAGE_DB or the user data folder)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mirage-tui",
        description="Local-first RAG evaluation workbench. With no command, opens the TUI.")
    _db_option(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    data = sub.add_parser("data", help="import, list and inspect datasets")
    data_sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)

    p = data_sub.add_parser("import", help="import a dataset file or folder")
    _db_option(p, top=False)
    p.add_argument("path", type=Path)
    p.add_argument("--format", choices=FORMATS, help="skip format detection")
    p.add_argument("--name", help="dataset name (default: from the file or folder name)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = data_sub.add_parser("list", help="list datasets with their counts")
    _db_option(p, top=False)
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.add_argument("--all-versions", action="store_true", help="include older versions")

    p = data_sub.add_parser("show", help="show a dataset, or one query with its pool")
    _db_option(p, top=False)
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("query_id", nargs="?")
    p.add_argument("--limit", type=int, default=20, help="queries to list (default 20)")
    p.add_argument("--json", action="store_true")

    p = data_sub.add_parser("attach", help="add a distractor collection to a dataset's pool")
    _db_option(p, top=False)
    p.add_argument("dataset")
    p.add_argument("collection")

    p = data_sub.add_parser("demo", help="import the shipped demo pool (if not there yet)")
    _db_option(p, top=False)

    from mirage_tui import cli_models

    cli_models.add_models_parser(sub)
    for module in _extension_modules():
        module.add_parsers(sub)
    return parser


# subcommand groups that live in their own modules: each has add_parsers(sub) and
# run(args, store) -> int and imports its heavy dependencies only when it runs
_EXTENSIONS: dict[str, str] = {
    "index": "mirage_tui.cli_index",
    "retrieve": "mirage_tui.cli_index",
    "run": "mirage_tui.cli_run",
    "report": "mirage_tui.cli_report",
    "export": "mirage_tui.cli_report",
    "arena": "mirage_tui.cli_arena",
}


def _extension_modules():
    from importlib import import_module

    return [import_module(name) for name in dict.fromkeys(_EXTENSIONS.values())]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    db_path = args.db or default_db_path()
    try:
        if args.command is None:
            from mirage_tui.app import run_app

            run_app(db_path)
            return 0
        if args.command == "models":
            from mirage_tui.cli_models import run_models

            return run_models(args)
        store = Store(db_path)
        if args.command in _EXTENSIONS:
            from importlib import import_module

            return import_module(_EXTENSIONS[args.command]).run(args, store)
        handler = {"import": cmd_import, "list": cmd_list, "show": cmd_show,
                   "attach": cmd_attach, "demo": cmd_demo}[args.data_command]
        return handler(store, args)
    except (CliError, DatasetFormatError, DatasetNotFound, LookupError, StoreError,
            ValueError, ModelError) as exc:
        print(f"mirage-tui: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mirage-tui: interrupted", file=sys.stderr)
        return 130


# --------------------------------------------------------------------------- data commands

class _ProgressLine:
    """A one-line progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, label: str):
        self.label = label
        self.enabled = sys.stderr.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int | None, what: str) -> None:
        if not self.enabled:
            return
        if total:
            width = 24
            filled = int(width * done / total)
            bar = "█" * filled + "░" * (width - filled)
            text = f"{self.label} {bar} {done}/{total} {what}"
        else:
            text = f"{self.label} {done} {what}"
        sys.stderr.write("\r" + text[:100].ljust(100))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def cmd_import(store: Store, args) -> int:
    from engine.importing import import_path

    progress = _ProgressLine(f"importing {args.path.name}")
    try:
        result = import_path(store, args.path, format=args.format, name=args.name,
                             progress=progress)
    finally:
        progress.close()
    if args.json:
        print(json.dumps({"name": result.dataset, "version": result.version,
                          "format": result.format, "outcome": result.outcome,
                          "counts": result.counts, "warnings": result.warnings,
                          "seconds": round(result.seconds, 3)}, ensure_ascii=False))
        return 0
    if result.outcome == "unchanged":
        print(f"{result.label}: already imported (same content); nothing written")
    else:
        counts = ", ".join(f"{v:,} {k.replace('_', ' ')}" for k, v in result.counts.items())
        print(f"imported {result.label} ({result.format}) in {result.seconds:.1f}s: {counts}")
    for warning in result.warnings:
        print(f"  warning: {warning}")
    return 0


def _languages(langs: dict[str, int]) -> str:
    return " ".join(f"{k}:{v}" for k, v in langs.items()) or "-"


def cmd_list(store: Store, args) -> int:
    datasets = list_datasets(store, latest_only=not args.all_versions)
    if args.json:
        print(json.dumps([d.as_json() for d in datasets], ensure_ascii=False))
        return 0
    if not datasets:
        print("no datasets yet: `mirage-tui data import PATH` or `mirage-tui data demo`")
        return 0
    rows = [("DATASET", "KIND", "FORMAT", "QUERIES", "CHUNKS", "LANGUAGES")]
    rows += [(d.label, d.kind, d.format, f"{d.queries:,}", f"{d.chunks:,}",
              _languages(d.languages)) for d in datasets]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        cells = [r[i].rjust(widths[i]) if i in (3, 4) else r[i].ljust(widths[i]) for i in range(5)]
        print("  ".join(cells + [r[5]]))
    return 0


def cmd_show(store: Store, args) -> int:
    if args.query_id:
        detail = get_query(store, args.dataset, args.query_id)
        if args.json:
            from dataclasses import asdict

            print(json.dumps(asdict(detail), ensure_ascii=False))
            return 0
        print(f"{detail.query_id}  [{detail.language or '?'}]  source: {detail.source or '-'}")
        print(f"Q: {detail.text}")
        print(f"gold: {' | '.join(detail.answers) or '-'}")
        if detail.reference_answer:
            print(f"reference: {detail.reference_answer}")
        print(f"pool ({len(detail.pool)} chunks):")
        for entry in detail.pool:
            mark = "★ oracle" if entry.is_oracle else (
                "supports" if entry.support else "noise")
            if entry.support and entry.support_source != "label":
                mark += f" ({entry.support_source})"
            pos = "-" if entry.position is None else str(entry.position + 1)
            print(f"  [{pos}] {mark:<24} {entry.chunk_id}  {entry.title or ''}")
            text = " ".join(entry.text.split())
            print(f"      {text[:300]}{'…' if len(text) > 300 else ''}")
        return 0
    summary = get_dataset(store, args.dataset)
    queries = list_queries(store, args.dataset, limit=args.limit)
    if args.json:
        print(json.dumps({**summary.as_json(), "first_queries": queries}, ensure_ascii=False))
        return 0
    print(f"{summary.label}  ({summary.kind}, {summary.format}, imported {summary.created_at})")
    print(f"  {summary.queries:,} queries, {summary.chunks:,} chunks")
    print(f"  languages: {_languages(summary.languages)}")
    if summary.sources:
        top = list(summary.sources.items())[:8]
        more = len(summary.sources) - len(top)
        print(f"  sources: {_languages(dict(top))}{f' (+{more} more)' if more > 0 else ''}")
    if summary.collections:
        print(f"  distractor collections: {', '.join(summary.collections)}")
    for q in queries:
        print(f"  {q['query_id']:<36} [{q['language'] or '?'}] {q['text'][:70]}")
    if summary.queries > len(queries):
        print(f"  … {summary.queries - len(queries):,} more (--limit N)")
    return 0


def cmd_attach(store: Store, args) -> int:
    attach_collection(store, args.dataset, args.collection)
    print(f"attached {args.collection} to {args.dataset}")
    return 0


def cmd_demo(store: Store, args) -> int:
    from engine.demo_pool import ensure_demo

    result = ensure_demo(store)
    if result is None:
        print("the demo pool is already imported")
    else:
        print(f"imported {result.label}: {result.counts['queries']} queries, "
              f"{result.counts['chunks']} chunks")
    return 0


if __name__ == "__main__":
    sys.exit(main())

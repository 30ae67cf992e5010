"""``mirage-tui data``: import, list and inspect datasets.

    mirage-tui data import PATH [--format F] [--name NAME] [--json]
    mirage-tui data list [--json] [--all-versions]
    mirage-tui data show NAME[@VERSION] [QUERY_ID] [--limit N] [--json]
    mirage-tui data attach DATASET COLLECTION
    mirage-tui data demo
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.datasets.catalog import (
    attach_collection,
    get_dataset,
    get_query,
    list_datasets,
    list_queries,
)
from engine.datasets.formats import FORMATS
from engine.datasets.formats.pairwise_labels import UNNAMED
from engine.store import Store
from engine.text_safety import visible_line
from engine import counts
from mirage_tui.cli.common import count_type, db_option, json_option, print_table
from mirage_tui.cli.progress import ProgressPrinter


def add_parsers(sub) -> None:
    data = sub.add_parser("data", help="import, list and inspect datasets")
    data_sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)

    p = data_sub.add_parser("import", help="import a dataset file or folder")
    db_option(p)
    p.add_argument("path", type=Path)
    p.add_argument("--format", choices=FORMATS, help="skip format detection")
    p.add_argument("--name", help="dataset name (default: from the file or folder name)")
    json_option(p, "print the result as JSON")

    p = data_sub.add_parser("list", help="list datasets with their counts")
    db_option(p)
    json_option(p, "print a JSON array")
    p.add_argument("--all-versions", action="store_true", help="include older versions")

    p = data_sub.add_parser("show", help="show a dataset, or one query with its pool")
    db_option(p)
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("query_id", nargs="?")
    p.add_argument("--limit", type=count_type(counts.LIMIT),
                   default=20, help="queries (of a labels dataset: answer pairs) to list "
                                    "(default 20)")
    json_option(p, "print the dataset (or the query and its pool) as JSON")

    p = data_sub.add_parser("attach", help="add a distractor collection to a dataset's pool")
    db_option(p)
    p.add_argument("dataset")
    p.add_argument("collection")

    p = data_sub.add_parser("demo", help="import the shipped demo pool (if not there yet)")
    db_option(p)


def run(args, store: Store) -> int:
    handler = {"import": cmd_import, "list": cmd_list, "show": cmd_show,
               "attach": cmd_attach, "demo": cmd_demo}[args.data_command]
    return handler(store, args)


def cmd_import(store: Store, args) -> int:
    from engine.datasets.importing import import_path

    printer = ProgressPrinter(sys.stderr, interval=None)
    try:
        result = import_path(store, args.path, format=args.format, name=args.name,
                             progress=printer)
    finally:
        printer.close()
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
    # a line break in a name would forge a row: every cell is shown on one line
    rows += [tuple(map(visible_line, (d.label, d.kind, d.format, f"{d.queries:,}",
                                      f"{d.chunks:,}", _languages(d.languages))))
             for d in datasets]
    print_table(rows, right={3, 4})
    return 0


def cmd_show(store: Store, args) -> int:
    if args.query_id:
        detail = get_query(store, args.dataset, args.query_id)
        if args.json:
            from dataclasses import asdict

            print(json.dumps(asdict(detail), ensure_ascii=False))
            return 0
        print(f"{detail.query_id}  [{detail.language or '?'}]  source: {detail.source or '-'}")
        print(f"Q: {visible_line(detail.text)}")
        print(f"gold: {visible_line(' | '.join(detail.answers)) or '-'}")
        if detail.reference_answer:
            print(f"reference: {visible_line(detail.reference_answer)}")
        print(f"pool ({len(detail.pool)} chunks):")
        for entry in detail.pool:
            mark = "★ oracle" if entry.is_oracle else (
                "supports" if entry.support else "noise")
            if entry.support and entry.support_source != "label":
                mark += f" ({entry.support_source})"
            pos = "-" if entry.position is None else str(entry.position + 1)
            print(f"  [{pos}] {mark:<24} {visible_line(entry.chunk_id)}  "
                  f"{visible_line(entry.title or '')}")
            text = " ".join(entry.text.split())
            print(f"      {text[:300]}{'…' if len(text) > 300 else ''}")
        return 0
    summary = get_dataset(store, args.dataset)
    if summary.kind == "labels":
        return _show_labels(store, args, summary)
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
        print(f"  {visible_line(q['query_id']):<36} [{visible_line(q['language'] or '?')}] "
              f"{visible_line(q['text'])[:70]}")
    if summary.queries > len(queries):
        print(f"  … {summary.queries - len(queries):,} more (--limit N)")
    return 0


def _show_labels(store: Store, args, summary) -> int:
    """A labels dataset: its answer pairs (the first ``--limit``), each with its query and
    every person's label by aspect (``-2`` A much better … ``2`` B much better)."""
    from engine.datasets.labels import load_label_pairs

    pairs = load_label_pairs(store, args.dataset)
    shown = pairs[:args.limit]
    people = {name for p in pairs for by in p.labels.values() for name in by
              if not name.startswith(UNNAMED)}
    if args.json:
        print(json.dumps({**summary.as_json(), "pairs": len(pairs), "annotators": len(people),
                          "first_pairs": [
                              {"pair_id": p.pair_id, "query": p.query, "domain": p.domain,
                               "answer_a": p.answer_a, "answer_b": p.answer_b,
                               "reference": p.reference, "labels": p.labels}
                              for p in shown]}, ensure_ascii=False))
        return 0
    aspects = sorted({a for p in pairs for a in p.labels})
    labels = sum(len(by) for p in pairs for by in p.labels.values())
    print(f"{visible_line(summary.label)}  (labels, {summary.format}, imported "
          f"{summary.created_at})")
    print(f"  {len(pairs):,} answer pairs, {labels:,} labels, {len(people):,} annotator(s); "
          f"aspects: {', '.join(aspects) or '-'}; a label runs from -2 (A much better) to 2 "
          "(B much better)")
    for p in shown:
        domain = f" [{visible_line(p.domain)}]" if p.domain else ""
        print(f"  {visible_line(p.pair_id)}{domain}  Q: {visible_line(p.query)[:70]}")
        print(f"      A: {visible_line(' '.join(p.answer_a.split()))[:70]}")
        print(f"      B: {visible_line(' '.join(p.answer_b.split()))[:70]}")
        for aspect, by in sorted(p.labels.items()):
            said = ", ".join(f"{visible_line(name)} {label:+d}" if label else
                             f"{visible_line(name)} 0" for name, label in sorted(by.items()))
            print(f"      {aspect}: {said}")
    if len(pairs) > len(shown):
        print(f"  … {len(pairs) - len(shown):,} more (--limit N)")
    return 0


def cmd_attach(store: Store, args) -> int:
    attach_collection(store, args.dataset, args.collection)
    print(f"attached {args.collection} to {args.dataset}")
    return 0


def cmd_demo(store: Store, args) -> int:
    from engine.datasets.demo_pool import ensure_demo

    result = ensure_demo(store)
    if result is None:
        print("the demo pool is already imported")
    else:
        print(f"imported {result.label}: {result.counts['queries']} queries, "
              f"{result.counts['chunks']} chunks")
    return 0

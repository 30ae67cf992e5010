"""``mirage-tui report`` and ``mirage-tui export``: a run's numbers, and its rows as files.

    mirage-tui report RUN [--json] [--by language|source] [--n-boot N] [--seed S]
    mirage-tui export RUN [--format csv|jsonl] [-o PATH]

Both read the run's stored rows (a run still going reports what it has, marked partial).
``export`` writes ``./RUN.csv`` (plus its header in ``./RUN.header.json``) or ``./RUN.jsonl``
(header on the first line) unless ``-o`` says where.
"""

from __future__ import annotations

import json
from pathlib import Path

from mirage_tui.cli.common import db_option

COMMANDS = ("report", "export")


def add_parsers(sub) -> None:
    """Add the ``report`` and ``export`` subcommands to the top-level subparsers."""

    p = sub.add_parser("report", help="a run's adaptability, accuracy and retrieval tables")
    db_option(p)
    p.add_argument("run", help="run name")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--by", choices=("language", "source"),
                   help="split the tables by query language or source")
    p.add_argument("--n-boot", type=int, default=1000, metavar="N",
                   help="bootstrap resamples for the 95%% CIs of scores; rates use exact "
                        "Clopper-Pearson intervals (default 1000)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="bootstrap seed (default 0)")

    p = sub.add_parser("export", help="write a run's items and scores as CSV or JSON lines")
    db_option(p)
    p.add_argument("run", help="run name")
    p.add_argument("--format", choices=("csv", "jsonl"), default="csv",
                   help="csv (header in a .header.json sidecar) or jsonl (header first line); "
                        "default csv")
    p.add_argument("-o", "--out", type=Path, metavar="PATH",
                   help="output file (default ./RUN.csv or ./RUN.jsonl)")


def run(args, store) -> int:
    if args.command == "report":
        return _report(args, store)
    if args.command == "export":
        return _export(args, store)
    raise ValueError(f"not a report command: {args.command!r}")


def _report(args, store) -> int:
    from engine.results import build_report, format_report

    if args.n_boot < 1:
        raise ValueError("--n-boot must be at least 1")
    report = build_report(store, args.run, n_boot=args.n_boot, seed=args.seed)
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        print(format_report(report, by=args.by), end="")
    return 0


def _export(args, store) -> int:
    from engine.results import count_items, export_run, header_path, load_run

    run_info = load_run(store, args.run)
    out = args.out or Path(f"{args.run}.{args.format}")
    path = export_run(store, args.run, format=args.format, out=out)
    n = count_items(store, run_info)
    where = f"{path}" + (f" (header: {header_path(path)})" if args.format == "csv" else "")
    print(f"exported {n:,} items of run {args.run} to {where}")
    return 0

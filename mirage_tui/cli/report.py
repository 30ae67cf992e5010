"""``mirage-tui report`` and ``mirage-tui export``: a run's numbers, and its rows as files.

    mirage-tui report RUN [--json] [--html FILE [--force]] [--by language|source] [--n-boot N] [--seed S]
                      [--parity mirage|bergen|none] [--gold oracle|oracle+answer-match]
                      [--language-rule mirage-tui|bergen] [--language-detector langid|fasttext]
    mirage-tui export RUN [--format csv|jsonl] [-o PATH] [--force]

Both read the run's stored rows (a run still going reports what it has, marked partial). The
report's header names the choices behind its numbers (correct-language detector and rule,
retrieval gold); they are the ones the run recorded unless a flag asks for others.
``--html FILE`` writes the report as one self-contained page instead (charts, the item
browser; nothing is fetched when it is opened) and prints where it went (an existing FILE only with ``--force``). ``export`` writes
``./RUN.csv`` (plus its header in ``./RUN.header.json``) or ``./RUN.jsonl`` (header on the
first line) unless ``-o`` says where (``-o -``: standard output); an existing file is left
alone unless ``--force``.
Exporting a run that has not finished says so: "partial: N of M items".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from engine.metrics.definitions import GOLD_DEFINITIONS, NO_PARITY, PARITY_MODES
from engine.metrics.language import DETECTORS, RULES
from engine.output_files import is_stdout
from engine.stats import N_BOOT, SEED
from engine import counts
from mirage_tui.cli.common import (count_type, db_option, force_option, html_option, json_option,
                                   no_overwrite)

COMMANDS = ("report", "export")


def add_parsers(sub) -> None:
    """Add the ``report`` and ``export`` subcommands to the top-level subparsers."""

    p = sub.add_parser("report", help="a run's adaptability, accuracy and retrieval tables")
    db_option(p)
    p.add_argument("run", help="run name")
    json_option(p, "print the report as JSON")
    html_option(p, "the report", "charts, item browser")
    force_option(p, "an existing --html file")
    p.add_argument("--by", choices=("language", "source"),
                   help="split the tables by query language or source")
    p.add_argument("--n-boot", type=count_type(counts.RESAMPLES), default=N_BOOT, metavar="N",
                   help="bootstrap resamples for the 95%% CIs of scores; rates use exact "
                        f"Clopper-Pearson intervals (default {N_BOOT}, as in the app)")
    p.add_argument("--seed", type=count_type(counts.SEED), default=SEED, metavar="S",
                   help=f"bootstrap seed (default {SEED})")
    p.add_argument("--parity", choices=(*PARITY_MODES, NO_PARITY),
                   help="a reference's choices: mirage (the file's retrieval gold) or bergen "
                        "(raw-response correct language, fastText); none sets aside the "
                        "run's recorded parity")
    p.add_argument("--gold", choices=GOLD_DEFINITIONS,
                   help="retrieval gold: oracle (supporting in the file, MIRAGE's definition) "
                        "or oracle+answer-match (plus siblings containing an answer); "
                        "default: the run's, else oracle")
    p.add_argument("--language-rule", choices=RULES,
                   help="correct language of the response with citations removed and "
                        "stripped (mirage-tui) or of the raw response (bergen); default: the "
                        "run's, else mirage-tui")
    p.add_argument("--language-detector", choices=DETECTORS,
                   help="langid or fasttext (lid.176.ftz); default: the run's, else langid")

    p = sub.add_parser("export", help="write a run's items and scores as CSV or JSON lines")
    db_option(p)
    p.add_argument("run", help="run name")
    p.add_argument("--format", choices=("csv", "jsonl"), default="csv",
                   help="csv (header in a .header.json sidecar) or jsonl (header first line); "
                        "default csv")
    p.add_argument("-o", "--out", type=Path, metavar="PATH",
                   help="output file (default ./RUN.csv or ./RUN.jsonl)")
    force_option(p, "an existing output file (and its .header.json)")


def run(args, store) -> int:
    if args.command == "report":
        return _report(args, store)
    if args.command == "export":
        return _export(args, store)
    raise ValueError(f"not a report command: {args.command!r}")


def _report(args, store) -> int:
    from engine.results import build_report, format_report
    from engine.runs.lookup import load_run
    from mirage_tui.cli.common import text_width

    if args.n_boot < 1:
        raise ValueError("--n-boot must be at least 1")
    no_overwrite(args, args.html)
    run = load_run(store, args.run)
    report = build_report(store, run, n_boot=args.n_boot, seed=args.seed,
                          parity=args.parity, gold=args.gold, language_rule=args.language_rule,
                          language_detector=args.language_detector)
    if args.html:
        from engine.arena.ratings.page import run_page_with_arenas
        from engine.results.html import write_page

        path = write_page(run_page_with_arenas(store, run, n_boot=args.n_boot, seed=args.seed,
                                               report=report), args.html)
        print(written_line("run report", path), file=said_to(args.json, path))
        if not args.json:
            return 0
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        print(format_report(report, by=args.by, width=text_width()), end="")
    return 0


def written_line(what: str, path: Path) -> str:
    """``wrote the run report to /abs/path.html (123 KB)``: where an HTML page went."""
    if is_stdout(path):
        return f"wrote the {what} to standard output"
    from engine.text_safety import visible_line

    size = path.stat().st_size          # a name's line break or escape shown, never obeyed
    return (f"wrote the {what} to {visible_line(path.resolve())} "
            f"({max(1, round(size / 1024)):,} KB)")


def said_to(json_out: bool, *paths) -> TextIO:
    """Where the line saying what was written goes: stderr when stdout carries JSON or the
    written file itself (``-o -``), else stdout."""
    return sys.stderr if json_out or any(is_stdout(p) for p in paths) else sys.stdout


def _export(args, store) -> int:
    from engine.results import count_items, export_run, header_path
    from engine.results.export import partial_note, run_header
    from engine.runs.lookup import load_run

    run_info = load_run(store, args.run)
    out = args.out or Path(f"{args.run}.{args.format}")
    no_overwrite(args, out, header_path(out) if args.format == "csv" and not is_stdout(out)
                 else None)
    path = export_run(store, run_info, format=args.format, out=out)
    n = count_items(store, run_info)
    from engine.text_safety import visible_line

    where = visible_line(path) + (f" (header: {visible_line(header_path(path))})"
                                  if args.format == "csv" else "")
    note = partial_note(run_header(store, run_info))
    if is_stdout(path):
        where = "standard output" + (" (no header file: --format jsonl carries it)"
                                     if args.format == "csv" else "")
    print(f"exported {n:,} items of run {visible_line(args.run)} to {where}"
          + (f" — {note}" if note else ""), file=said_to(False, path))
    return 0

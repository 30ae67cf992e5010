"""``mirage-tui compare``: is B really better than A? A paired comparison on shared items.

    mirage-tui compare A B [--metric M ...] [--json] [--csv PATH] [--html FILE] [--force] [--n-boot N] [--seed S]
                       [--delta POINTS] [--fail-if-worse METRIC:DELTA] [--flips N]

A and B are ``RUN`` or ``RUN:SYSTEM`` (two systems of one run, or of two runs, of different
models too; SYSTEM by any part ``--generator`` accepts, e.g. ``RUN:gemma3``); only the
(setting, query) items both generated are compared (:mod:`engine.results.paired`), and a
warning names each generation setting the two sides differ in (max tokens, template,
sampling, seed, backend). ``--csv`` and ``--html`` leave an existing file alone unless
``--force``. ``--fail-if-worse em_loose:2`` exits 1 when B is
significantly worse than A on that metric (Holm p < 0.05) by more than 2 points (the CI's
bound beyond −2), in any setting, so a model or prompt change can be gated in CI.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from engine.stats import PAIRED_N_BOOT, SEED
from engine import counts
from mirage_tui.cli.common import (CliError, count_type, db_option, force_option, fraction_type,
                                   html_option, json_option, no_overwrite, text_width)

COMMANDS = ("compare",)


def add_parsers(sub) -> None:
    p = sub.add_parser("compare", help="paired comparison of two systems on shared items: "
                                       "Δ with CIs, McNemar/permutation p, Holm, item diff")
    db_option(p)
    p.add_argument("a", help="A: RUN or RUN:SYSTEM (SYSTEM: any part --generator accepts)")
    p.add_argument("b", help="B: RUN or RUN:SYSTEM")
    p.add_argument("--metric", action="append", metavar="M",
                   help="a stored score or an adaptability share (nv, ca, ci, cm, overall); "
                        "repeat for more; 'all' for every stored score (default em_loose, "
                        "f1_mirage, char3_recall, correct_language and the adaptability)")
    json_option(p, "print the comparison as JSON")
    p.add_argument("--csv", type=Path, metavar="PATH",
                   help="also write one row per shared item with both sides' scores")
    html_option(p, "the comparison", "Δ chart, flipped items")
    force_option(p, "existing --csv and --html files")
    p.add_argument("--n-boot", type=count_type(counts.RESAMPLES),
                   default=PAIRED_N_BOOT, metavar="N",
                   help=f"bootstrap resamples (default {PAIRED_N_BOOT}, as on the Compare "
                        "screen)")
    p.add_argument("--seed", type=count_type(counts.SEED), default=SEED, metavar="S",
                   help=f"seed (default {SEED})")
    p.add_argument("--delta", type=fraction_type(0, 100, "a difference in points"),
                   metavar="POINTS",
                   help="also size the sample to detect this difference (points)")
    p.add_argument("--flips", type=count_type(counts.FLIPS), default=5, metavar="N",
                   help="flipped items to show per direction (default 5)")
    p.add_argument("--fail-if-worse", metavar="METRIC:DELTA",
                   help="exit 1 when B is significantly worse than A on METRIC by more "
                        "than DELTA points")


def run(args, store) -> int:
    from engine.arena.ratings.duel import compare
    from engine.output_files import is_stdout
    from engine.results.paired import PairingError, side_runs, worse_than
    from engine.results.paired_text import format_comparison, write_items_csv

    gate = _gate(args.fail_if_worse)
    if args.n_boot < 1:
        raise CliError("--n-boot must be at least 1")
    no_overwrite(args, args.csv, args.html)
    on_stdout = [name for name, on in (("--csv -", is_stdout(args.csv)),
                                       ("--html -", is_stdout(args.html)),
                                       ("--json", args.json)) if on]
    if len(on_stdout) > 1:
        raise CliError(f"{' and '.join(on_stdout)} would both write to standard output; send "
                       "one of them to a file")
    runs = side_runs(store, args.a, args.b)       # each run looked up once
    try:
        c = compare(store, args.a, args.b, runs, args.metric, n_boot=args.n_boot,
                    seed=args.seed, delta=None if args.delta is None else args.delta / 100)
    except PairingError as exc:
        raise CliError(str(exc)) from None
    if args.csv:
        write_items_csv(c, args.csv)
    if args.html:
        from engine.results.html import comparison_page, write_page
        from mirage_tui.cli.report import said_to, written_line

        path = write_page(comparison_page(c), args.html)
        print(written_line("comparison", path), file=said_to(args.json, path, args.csv))
    if args.json:
        print(json.dumps(c.as_json(), ensure_ascii=False))
    elif not args.html and not is_stdout(args.csv):
        print(format_comparison(c, flips=args.flips, width=text_width()), end="")
    if gate:
        try:
            worse = worse_than(c, *gate)
        except PairingError as exc:
            raise CliError(f"--fail-if-worse: {exc}") from None
        if worse:
            print(f"FAIL: B is worse than A on {', '.join(r.name for r in worse)} by more "
                  f"than {gate[1]:g} points")
            return 1
    return 0


def _gate(text: str | None) -> tuple[str, float] | None:
    if not text:
        return None
    metric, sep, delta = text.rpartition(":")
    try:
        points = float(delta)
    except ValueError:
        raise CliError(f"--fail-if-worse wants METRIC:DELTA (e.g. em_loose:2), got {text!r}") \
            from None
    if not math.isfinite(points):
        # nan compares false with everything and inf is never exceeded: the gate would be off
        raise CliError(f"--fail-if-worse: DELTA must be a finite number of points, got "
                       f"{delta!r}")
    return metric, points

"""``mirage-tui arena``: judge a run's answers, and read the arena back.

    mirage-tui arena judge RUN [--judge JUDGE] [--pairs all|reference] [--reference SYSTEM]
                           [--queries N] [--order random|both|debiased] [--seed S] [--threads N]
                           [--concurrency N] [--max-errors N|P%] [--name NAME]
    mirage-tui arena ratings RUN [--arena NAME] [--boot 200] [--seed 0] [--json] [--html FILE]
                             [--force]
    mirage-tui arena surrogate RUN [--arena NAME] [--judge MODEL] [--json]
    mirage-tui arena export RUN [--arena NAME] [--format csv|jsonl] [--out PATH]
                            [--what battles|ratings] [--force]
    mirage-tui arena list RUN [--json]

``judge`` without ``--judge`` uses config.toml's ``judge``, else the calibrated default
(:func:`engine.arena.trust.default_judge.default_judge`) and says which on stderr. It is resumable:
the same command again skips the stored battles and answers judge calls from the judgments
cache. Ctrl-C cancels after the current battle (twice: at once).
Progress goes to stderr as ``run`` prints it: a live bar on a terminal, else a line every
~10 seconds. Every subcommand exits 1 with a one-line message on errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.stats import SEED, TOURNAMENTS
from engine.text_fit import wrap_lines
from engine.text_safety import visible_line
from engine import counts
from mirage_tui.cli.common import (CliError, count_type, db_option, force_option, from_settings,
                                   html_option, in_flight_options, interruptible, json_option,
                                   no_overwrite, print_table, text_width)
from mirage_tui.cli.progress import ProgressPrinter
from mirage_tui.durations import duration


def add_parsers(sub) -> None:

    arena = sub.add_parser("arena", help="judge a run's answers pairwise or against a "
                                         "reference; ratings, surrogate, export",
                           description="The arena: an LLM judge compares a run's answers "
                                       "(MIRAGE-Bench pairwise, or RAG-QA Arena against a "
                                       "reference); Bradley-Terry ratings with bootstrap CIs.")
    asub = arena.add_subparsers(dest="arena_command", metavar="ACTION", required=True)
    from engine.arena.judges.kinds import judge_help

    p = asub.add_parser("judge", help="judge a run's answers (resumable)")
    db_option(p)
    p.add_argument("run", help="run name")
    p.add_argument("--judge", metavar="JUDGE",
                   help=f"judge: {judge_help(detail=True)}. Default: judge in "
                        "config.toml, else by what the queries have: reference:answer-match on "
                        "short gold answers; on long-form references the best-calibrated judge "
                        "(judge list), else reference:blend; else a calibrated LLM")
    p.add_argument("--pairs", choices=("all", "reference"), default="all",
                   help="all: every pair of contestants (MIRAGE-Bench); reference: each "
                        "contestant against the reference answer (RAG-QA Arena)")
    p.add_argument("--reference", metavar="SYSTEM",
                   help="with --pairs reference: a contestant to judge against instead of "
                        "the dataset's reference answers ('SYSTEM | SETTING')")
    p.add_argument("--queries", type=count_type(counts.QUERIES), metavar="N",
                   help="a seeded sample of N queries, stratified by source and language")
    p.add_argument("--order", choices=("random", "both", "debiased"),
                   help="random: a seeded A/B order per battle; both: judge both orders, "
                        "a disagreement is a tie; debiased: judge both orders and average each "
                        "side's label probability over them (cancels a position preference). "
                        "Default: random, or the default judge's own order")
    p.add_argument("--seed", type=count_type(counts.SEED),
                   default=0, metavar="S", help="seed (default 0)")
    p.add_argument("--settings", metavar="LIST",
                   help="judge only contestants in these settings, e.g. base,oracle,retrieved@3 "
                        "(default: every setting of the run)")
    p.add_argument("--threads", type=count_type(counts.THREADS),
                   metavar="N", help="llama.cpp threads for the judge")
    in_flight_options(p, "judge")
    p.add_argument("--name", help="arena name (default pairwise:JUDGE or reference:JUDGE)")
    p.add_argument("--dry-run", action="store_true",
                   help="judge nothing: print the battles and the time estimate (the runs' "
                        "estimator: the judge's speed, load and requests in flight)")
    json_option(p, "print the summary as JSON")

    p = asub.add_parser("ratings", help="Bradley-Terry leaderboard with bootstrap CIs")
    db_option(p)
    p.add_argument("run", help="run name")
    p.add_argument("--arena", metavar="NAME", help="arena (default: the only or latest "
                                                   "pairwise one)")
    p.add_argument("--boot", type=count_type(counts.TOURNAMENTS), default=TOURNAMENTS, metavar="N",
                   help=f"bootstrap tournaments (default {TOURNAMENTS}, as on the Leaderboard)")
    p.add_argument("--seed", type=count_type(counts.SEED), default=SEED, metavar="S",
                   help=f"bootstrap seed ({SEED})")
    json_option(p, "print the ratings as JSON")
    html_option(p, "the leaderboard", "forest plot, win-fraction heatmap, surrogate")
    force_option(p, "an existing --html file")

    p = asub.add_parser("surrogate", help="the random-forest surrogate judge")
    db_option(p)
    p.add_argument("run", help="run name")
    p.add_argument("--arena", metavar="NAME")
    p.add_argument("--judge", metavar="MODEL",
                   help="model for the judged features (support, reranker, overlap, fluency); "
                        "without it only the model-free features are used")
    p.add_argument("--threads", type=count_type(counts.THREADS),
                   metavar="N", help="llama.cpp threads for --judge")
    p.add_argument("--boot", type=count_type(counts.TOURNAMENTS), default=TOURNAMENTS, metavar="N",
                   help=f"bootstrap rounds (default {TOURNAMENTS}, as on the Leaderboard)")
    p.add_argument("--seed", type=count_type(counts.SEED), default=SEED, metavar="S")
    json_option(p, "print the surrogate's report as JSON")

    p = asub.add_parser("export", help="write an arena's battles or ratings as CSV or JSONL")
    db_option(p)
    p.add_argument("run", help="run name")
    p.add_argument("--arena", metavar="NAME")
    p.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    p.add_argument("--out", "-o", type=Path, metavar="PATH",
                   help="output file (default ./RUN.arena-WHAT.FORMAT)")
    force_option(p)
    p.add_argument("--what", choices=("battles", "ratings"), default="battles")
    p.add_argument("--boot", type=count_type(counts.TOURNAMENTS), default=TOURNAMENTS, metavar="N",
                   help=f"bootstrap tournaments for --what ratings ({TOURNAMENTS})")
    p.add_argument("--seed", type=count_type(counts.SEED), default=SEED, metavar="S")

    p = asub.add_parser("list", help="a run's arenas")
    db_option(p)
    p.add_argument("run", help="run name")
    json_option(p, "print a JSON array")


def run(args, store) -> int:
    handler = {"judge": _judge, "ratings": _ratings, "surrogate": _surrogate,
               "export": _export, "list": _list}[args.arena_command]
    return handler(args, store)


# --------------------------------------------------------------------------- judge

def _judge(args, store) -> int:
    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run

    if args.reference and args.pairs != "reference":
        args.pairs = "reference"
    run = load_run(store, args.run)
    args.judge, args.order = _judge_and_order(args, store, run)
    if args.dry_run:
        return _judge_dry_run(args, store, run)
    printer = ProgressPrinter(sys.stderr)
    with interruptible(printer) as cancel:
        summary = judge_arena(store, run, args.judge, pairs=args.pairs,
                              queries=args.queries, seed=args.seed, order=args.order,
                              systems=_systems_in(store, run, args.settings),
                              name=args.name, reference=args.reference,
                              n_threads=args.threads, progress=printer, cancel=cancel,
                              concurrency=args.concurrency, max_errors=args.max_errors)
    if args.json:
        print(json.dumps(summary.as_json(), ensure_ascii=False))
    else:
        _print_summary(summary)
    if summary.status == "failed":
        print(f"mirage-tui: error: {summary.message}", file=sys.stderr)
        return 1
    return 130 if summary.status == "cancelled" else 0


def _judge_dry_run(args, store, run) -> int:
    """``arena judge --dry-run``: what would be judged and how long it should take; a judge
    that does not exist (typed, or config.toml's) is refused, not planned for."""
    from engine.arena.judges.names import judge_problem
    from engine.arena.judging.estimate import judging_estimate
    from mirage_tui.widgets.estimates import judging_line

    problem = judge_problem(args.judge, store)
    if problem:
        raise CliError(problem)

    guess = judging_estimate(store, run, args.judge, args.queries, args.order, args.seed,
                             pairs=args.pairs, systems=_systems_in(store, run, args.settings),
                             reference=args.reference, concurrency=args.concurrency)
    data = {"run": args.run, "judge": args.judge, "pairs": args.pairs, "order": args.order,
            **guess, "estimate_s": guess["seconds"]}
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
    elif guess.get("offline"):
        print(judging_line(guess))
    else:
        print(f"arena judge {args.run} with {args.judge} ({args.order} order): "
              f"{guess['battles']} battles on {guess['queries']} queries")
        print(f"  {judging_line(guess)}; verdicts of {guess['verdict_tokens']} token(s)")
    return 0


def _judge_and_order(args, store, run) -> tuple[str, str]:
    """``--judge``, else config.toml's ``judge`` (each in ``--order``, default random), else
    the calibrated default (:func:`engine.arena.trust.default_judge.default_judge`, in its own order
    unless ``--order`` says otherwise), said on stderr."""
    try:
        return from_settings(args, "judge", "--judge MODEL"), args.order or "random"
    except CliError:
        from engine.arena.trust.default_judge import default_judge

        choice = default_judge(store, run, args.pairs)
        if choice.spec is None:
            raise CliError(f"arena judge needs --judge MODEL: {choice.why}") from None
        order = args.order or choice.order
        print(f"mirage-tui: judging with {choice.spec} in {order} order (no --judge, no judge "
              f"in config.toml): {choice.why}", file=sys.stderr)
        return choice.spec, order


def _systems_in(store, run, settings: str | None) -> list[str] | None:
    """The run's contestants whose setting is listed (``retrieved@3`` matches
    ``retrieved@3:e5-small-q4#…``); None for all of them."""
    if not settings:
        return None
    from engine.arena.judging.plan import run_contestants
    from engine.arena.types import split_arena_system

    wanted = {s.strip() for s in settings.split(",") if s.strip()}
    chosen, seen = [], set()
    for name in run_contestants(store, run.id):
        setting = split_arena_system(name)[1] or ""
        short = setting.split(":", 1)[0]
        if short in wanted or setting in wanted:
            chosen.append(name)
            seen |= {short, setting}
    missing = sorted(wanted - seen)
    if missing:
        from engine.suggest import did_you_mean

        known = sorted({split_arena_system(n)[1] or "" for n in run_contestants(store, run.id)}
                       - {""})
        shorts = sorted({s.split(":", 1)[0] for s in known})
        near = did_you_mean(missing[0], shorts + known) if len(missing) == 1 else ""
        raise CliError(f"--settings: the run has no contestants in {', '.join(missing)}{near} "
                       f"(its settings: {', '.join(shorts) or 'none'})")
    return chosen


def _print_summary(s) -> None:
    print(f"arena {s.arena} ({s.mode}) of run {s.run}: {s.status} — {s.done}/{s.total} "
          f"battles over {s.queries} queries ({s.judged} judged now, {s.cached} from the "
          f"store or the judgment cache) in {duration(s.seconds)}")
    print(f"  {len(s.contestants)} contestants; judge calls: {s.judge_calls} new, "
          f"{s.cached_calls} cached; parse failures: {s.parse_failures} "
          f"({s.unparsed_battles} battles without a verdict)")
    if s.disagreements:
        print(f"  {s.disagreements} battles where the two orders disagreed (stored as ties)")
    if s.skipped_queries:
        print(f"  {s.skipped_queries} queries without a reference answer skipped")
    if s.errors:
        print(f"  {s.errors} battles not judged: {s.message}")
    if s.status == "cancelled":
        print("  cancelled: run the same command again to resume")


# --------------------------------------------------------------------------- read back

def _ratings_for(store, run, arena, boot: int, seed: int):
    from engine.arena.ratings.battles import battles_of, resolve_arena

    if boot < 1:
        raise ValueError("--boot must be at least 1")
    info = resolve_arena(store, run, arena)
    try:
        from engine.arena.ratings.leaderboard import compute_ratings, format_leaderboard
    except ImportError as exc:
        raise ValueError(f"ratings are not available in this build ({exc})") from None
    battles = battles_of(store, info.id)
    if not battles:
        raise ValueError(f"arena {info.name!r} has no battles yet")
    return info, compute_ratings(battles, n_boot=boot, seed=seed), format_leaderboard


def _ratings(args, store) -> int:
    from engine.runs.lookup import load_run

    no_overwrite(args, args.html)
    run = load_run(store, args.run)
    info, ratings, format_leaderboard = _ratings_for(store, run, args.arena, args.boot,
                                                     args.seed)
    if getattr(args, "html", None):
        from engine.arena.ratings.page import leaderboard_page
        from engine.results.html import write_page
        from engine.runs.lookup import load_run
        from mirage_tui.cli.report import said_to, written_line

        path = write_page(leaderboard_page(store, run, info.name, n_boot=args.boot,
                                           seed=args.seed), args.html)
        print(written_line("leaderboard", path), file=said_to(args.json, path))
        if not args.json:
            return 0
    from engine.arena.ratings.battles import battles_of
    from engine.arena.trust.default_judge import arena_header

    header = arena_header(store, run, info, battles_of(store, info.id), ratings)
    report = None
    if info.mode == "reference":
        from engine.arena.ratings.reference_report import format_reference_report, reference_report

        report = reference_report(store, run, info.name)
    if args.json:
        data = {"run": args.run, "arena": info.name, "mode": info.mode, "judge": info.judge,
                "status": info.status, **header.as_json(), **ratings.as_json(),
                "reference": report.as_json() if report else None}
        print(json.dumps(data, ensure_ascii=False))
        return 0
    width = text_width()
    print(wrap_lines(f"arena {info.name} ({info.mode}, {info.status}) of run {args.run}", width))
    print(wrap_lines("\n".join(header.lines), width))
    print(format_leaderboard(ratings, width).rstrip("\n"))
    if report is not None:
        print()
        print(format_reference_report(report, width), end="")
    return 0


def _surrogate(args, store) -> int:
    """Features first (model-free ones always, judged ones with --judge; stored features are
    reused) over the queries the arena judged, then the surrogate fit."""
    from engine.arena.ratings.battles import battles_of, resolve_arena
    from engine.runs.lookup import load_run

    try:
        from engine.arena.surrogate.features import compute_features
        from engine.arena.surrogate.forest import format_surrogate, surrogate_for_run
    except ImportError as exc:
        raise ValueError(f"the surrogate judge is not available in this build ({exc})") from None
    if args.boot < 1:
        raise ValueError("--boot must be at least 1")
    run = load_run(store, args.run)
    info = resolve_arena(store, run, args.arena)
    queries = sorted({b.query for b in battles_of(store, info.id)})
    printer = ProgressPrinter(sys.stderr, interval=None)
    try:
        features = compute_features(store, run, judge=args.judge, queries=queries,
                                    n_threads=getattr(args, "threads", None),
                                    progress=printer)
    finally:
        printer.close()
    if features.errors:
        print(f"mirage-tui: {len(features.errors)} feature errors (first: "
              f"{features.errors[0]})", file=sys.stderr)
    report = surrogate_for_run(store, run, info.name, n_boot=args.boot, seed=args.seed)
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        print(format_surrogate(report).rstrip("\n"))
    return 0


def _export(args, store) -> int:
    from engine.arena.ratings.battles import battle_rows, resolve_arena
    from engine.output_files import is_stdout
    from engine.runs.lookup import load_run
    from mirage_tui.cli.report import said_to

    run = load_run(store, args.run)
    info = resolve_arena(store, run, args.arena)
    out = args.out or Path(f"{args.run}.arena-{args.what}.{args.format}")
    no_overwrite(args, out)
    if args.what == "battles":
        rows = battle_rows(store, run, info.name)
    else:
        _, ratings, _ = _ratings_for(store, run, info.name, args.boot, args.seed)
        rows = [{"arena": info.name, **s.as_json()} for s in ratings.systems]
    write_rows(rows, out, args.format)
    print(f"exported {len(rows):,} {args.what} of arena {visible_line(info.name)} (run "
          f"{visible_line(args.run)}) to "
          f"{'standard output' if is_stdout(out) else visible_line(out)}",
          file=said_to(False, out))
    return 0


def write_rows(rows: list[dict], out: Path, fmt: str) -> None:
    """Flat dicts as CSV (lists and dicts as JSON text, formula-like text neutralised) or as
    JSON lines, through :mod:`engine.output_files`."""
    from engine.output_files import write_csv, write_jsonl

    if fmt == "jsonl":
        write_jsonl(out, rows)
    else:
        write_csv(out, dict.fromkeys(k for row in rows for k in row), rows)


def _list(args, store) -> int:
    from engine.arena.ratings.battles import list_arenas
    from engine.runs.lookup import load_run

    infos = list_arenas(store, load_run(store, args.run))
    if args.json:
        print(json.dumps([i.as_json() for i in infos], ensure_ascii=False))
        return 0
    if not infos:
        print(f"run {args.run} has no arenas yet: `mirage-tui arena judge {args.run} "
              f"--judge MODEL`")
        return 0
    rows = [("ARENA", "MODE", "JUDGE", "STATUS", "BATTLES", "PARSE FAILURES", "UPDATED")]
    rows += [tuple(map(visible_line, (i.name, i.mode, i.judge or "-", i.status, str(i.battles),
                                      str(i.parse_failures), i.updated_at))) for i in infos]
    print_table(rows, right={4, 5})
    return 0

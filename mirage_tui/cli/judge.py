"""``mirage-tui judge``: can this judge be trusted? Calibrate it against human labels.

    mirage-tui judge calibrate --judge MODEL --labels DATASET [--aspect overall]
                               [--both-orders] [--sample N] [--seed S] [--template NAME]
                               [--threads N] [--concurrency N] [--max-errors N|P%] [--json]
    mirage-tui judge calibration [--judge MODEL] [--template NAME] [--json]
                                 [--html FILE [--force]]
    mirage-tui judge compare ID_A ID_B [--boot 1000] [--json]
    mirage-tui judge fit NAME --labels DATASET|verdicts [--aspect A] [--judge LLM]
                         [--method logistic|standardized-sum] [--features F,...]
                         [--force] [--json]
    mirage-tui judge list [--labels DATASET] [--json]
    mirage-tui judge verdicts [--run RUN] [--json]

``calibrate`` judges every pair of a labels dataset (``mirage-tui data import`` of a RAGChecker
meta-evaluation file or a plain JSONL/CSV of labels), cached and resumable like arena judging,
stores the calibration and prints every figure with its 95% CI and n beside the published
anchors. ``calibration`` prints the newest stored one again. ``compare`` puts two stored
calibrations (two templates, two judges) side by side on the pairs both judged, with the paired
bootstrap CI of each difference; both must have been made on the same labels dataset
(name@version), and be two different calibrations.
``fit`` fits a judge to people's labels (:mod:`engine.arena.judges.fitted`; then ``--judge
fitted:NAME``); ``list`` ranks every calibrated judge (:mod:`engine.arena.trust.rankings`) and shows the fitted ones.
``verdicts`` lists the verdicts people entered in the app (:mod:`engine.arena.trust.human_verdicts`).
"""

from __future__ import annotations

import json
import sys

from engine.stats import N_BOOT
from engine import counts
from mirage_tui.cli.common import (CliError, count_type, db_option, force_option, from_settings,
                                   html_option, in_flight_options, interruptible, json_option,
                                   no_overwrite, print_table, text_width)
from engine.text_fit import wrap_lines
from engine.text_safety import visible_line
from mirage_tui.cli.progress import ProgressPrinter
from mirage_tui.durations import duration


def add_parsers(sub) -> None:
    judge = sub.add_parser("judge", help="calibrate a judge against human labels",
                           description="Can this judge be trusted? Its pairwise verdicts "
                                       "against human labels, with CIs, beside the ceiling "
                                       "of human-human agreement.")
    jsub = judge.add_subparsers(dest="judge_command", metavar="ACTION", required=True)
    from engine.arena.judges.kinds import judge_help

    p = jsub.add_parser("calibrate", help="judge every labelled pair and store the figures "
                                          "(resumable)")
    db_option(p)
    p.add_argument("--judge", metavar="JUDGE",
                   help=f"judge: {judge_help()} (default: judge in config.toml)")
    p.add_argument("--labels", required=True, metavar="DATASET",
                   help="a labels dataset (name or name@version)")
    p.add_argument("--aspect", default="overall",
                   help="the labels read as the main figures (default overall; every aspect "
                        "is also broken down)")
    p.add_argument("--order", choices=("random", "both", "debiased"), default=None,
                   help="random: one seeded order per pair (default); both: both orders, a "
                        "disagreement is a tie (position bias: the flip rate); debiased: both "
                        "orders, each side's probability averaged over them (the arena's)")
    p.add_argument("--both-orders", action="store_true", help="the same as --order both")
    p.add_argument("--sample", type=count_type(counts.SAMPLE),
                   metavar="N", help="a seeded sample of N pairs")
    p.add_argument("--seed", type=count_type(counts.SEED),
                   default=0, metavar="S", help="seed (default 0)")
    p.add_argument("--template", default=None, metavar="NAME",
                   help="pairwise judge template (default ragqa_arena_pairwise)")
    p.add_argument("--boot", type=count_type(counts.RESAMPLES), default=N_BOOT, metavar="N",
                   help=f"bootstrap resamples for the CIs (default {N_BOOT}, as in the app)")
    p.add_argument("--threads", type=count_type(counts.THREADS),
                   metavar="N", help="llama.cpp threads for the judge")
    in_flight_options(p, "judge")
    json_option(p, "print the result as JSON")

    p = jsub.add_parser("calibration", help="print the newest stored calibration")
    db_option(p)
    p.add_argument("--judge", metavar="MODEL", help="of this judge (its identity name)")
    p.add_argument("--template", metavar="NAME@VERSION")
    json_option(p, "print the calibration as JSON")
    html_option(p, "the calibration", "charts beside the anchors")
    force_option(p, "an existing --html file")

    p = jsub.add_parser("compare", help="two stored calibrations, paired on their common pairs")
    db_option(p)
    p.add_argument("first", metavar="A", help="calibration id (A), or a judge's name (its "
                   "newest calibration)")
    p.add_argument("second", metavar="B", help="calibration id (B), or a judge's name")
    p.add_argument("--boot", type=count_type(counts.RESAMPLES), default=N_BOOT, metavar="N",
                   help=f"bootstrap resamples (default {N_BOOT})")
    json_option(p, "print the comparison as JSON")
    _add_fit_parsers(jsub)


def _add_fit_parsers(jsub) -> None:
    from engine.arena.judges.fit_features import BLEND_FEATURES, DEFAULT_FEATURES, FEATURES
    from engine.arena.judges.fit_methods import FOLDS, LOGISTIC, METHODS, STANDARDIZED_SUM
    from engine.arena.judges.fitted import MIN_PAIRS

    listed = "; ".join(f"{k}: {v}" for k, v in FEATURES.items())
    p = jsub.add_parser(
        "fit", help="fit a judge to people's labels (then --judge fitted:NAME)",
        description="A logistic regression without intercept (or, with --method "
                    "standardized-sum, every feature divided by its standard deviation and "
                    "summed) on each pair's feature differences f(B) - f(A) (no position bias: "
                    "swapping the answers mirrors the probability), fitted to the sign of the "
                    f"annotators' mean label (ties left out; at least {MIN_PAIRS} pairs, both "
                    f"sides). Agreement is {FOLDS}-fold cross-validated with folds grouped by "
                    "query, beside the best single feature on the same folds, and left out "
                    "one domain at a time when the labels name domains.")
    db_option(p)
    p.add_argument("name", metavar="NAME", help="the judge's name: --judge fitted:NAME")
    p.add_argument("--labels", required=True, metavar="DATASET",
                   help="a labels dataset (name or name@version), or 'verdicts': every "
                        "verdict recorded in the Inspector, combined")
    p.add_argument("--aspect", default="overall", help="the labels' aspect (default overall)")
    p.add_argument("--judge", metavar="LLM",
                   help="add the feature judge:LLM (its order-averaged P(B) - P(A), cached)")
    p.add_argument("--method", choices=tuple(METHODS), default=LOGISTIC,
                   help=f"{LOGISTIC}: a logistic regression (default); {STANDARDIZED_SUM}: "
                        "the sign of the sum of each feature's difference divided by its "
                        "standard deviation over the pairs (reference:blend's method)")
    p.add_argument("--features", metavar="F,...",
                   help=f"comma-separated (default {','.join(DEFAULT_FEATURES)}; with "
                        f"--method {STANDARDIZED_SUM} {','.join(BLEND_FEATURES)}); {listed}")
    p.add_argument("--template", default=None, metavar="NAME",
                   help="the LLM feature's template (default ragqa_arena_pairwise)")
    p.add_argument("--threads", type=count_type(counts.THREADS),
                   metavar="N", help="llama.cpp threads for --judge")
    p.add_argument("--force", action="store_true", help="replace a fitted judge of this name")
    json_option(p, "print the fit as JSON")

    p = jsub.add_parser("list", help="which judge can I trust? every calibrated judge, best "
                                     "first, and the fitted judges")
    db_option(p)
    p.add_argument("--labels", metavar="DATASET", help="calibrations on this labels dataset")
    json_option(p, "print the ranking as JSON")

    p = jsub.add_parser("verdicts", help="your own verdicts: every verdict people entered in "
                                         "the app (the Inspector's a/e/b), with its pair",
                        description="Every verdict people entered in the Inspector, oldest "
                                    "first: the run, the query, answer A and answer B (each a "
                                    "system in a setting), the verdict in words, who and when. "
                                    "They are the labels datasets verdicts:RUN (label -1: A "
                                    "better, 0: a tie, 1: B better; imported labels run from "
                                    "-2 to 2).")
    db_option(p)
    p.add_argument("--run", metavar="RUN", help="the verdicts on this run's answers only")
    json_option(p, "print a JSON array")


def run(args, store) -> int:
    return {"calibrate": _calibrate, "calibration": _show, "compare": _compare,
            "fit": _fit, "list": _list, "verdicts": _verdicts}[args.judge_command](args, store)


def _verdicts(args, store) -> int:
    from engine.arena.trust.human_verdicts import workspace_verdicts
    from engine.runs.lookup import load_run

    if args.run is not None:
        load_run(store, args.run)       # an unknown run: one line with a did-you-mean
    found = workspace_verdicts(store, args.run)
    if args.json:
        print(json.dumps([v.as_json() for v in found], ensure_ascii=False))
        return 0
    if not found:
        print("no verdict entered" + (f" on run {args.run!r}" if args.run else "") +
              " (open an item in the Inspector and press a, e or b)")
        return 0
    rows = [("RUN", "QUERY", "A", "B", "SETTING", "VERDICT", "BY", "WHEN")]
    rows += [(visible_line(v.run), visible_line(v.query_id or str(v.query_rowid)),
              visible_line(v.system_a), visible_line(v.system_b), visible_line(v.setting),
              v.label_words, visible_line(v.annotator), (v.created_at or "-")[:16])
             for v in found]
    print_table(rows, keys=2)
    people = len({v.annotator for v in found})
    print(wrap_lines(f"{len(found)} verdict{'s' if len(found) != 1 else ''} by {people} "
                     f"{'person' if people == 1 else 'people'}; labels datasets verdicts:RUN "
                     "(judge calibrate --labels verdicts:RUN)", text_width()))
    return 0


def _fit(args, store) -> int:
    from engine.arena.judges.fitted_report import fit_lines
    from engine.arena.judges.fit_features import (BLEND_FEATURES, DEFAULT_FEATURES,
                                                  DEFAULT_LLM_TEMPLATE, parse_features)
    from engine.arena.judges.fit_methods import STANDARDIZED_SUM
    from engine.arena.judges.fitted import fit_judge
    from engine.arena.judges.kinds import FITTED_PREFIX
    from engine.jobs import Stop

    default = BLEND_FEATURES if args.method == STANDARDIZED_SUM else DEFAULT_FEATURES
    features = parse_features(args.features, args.judge, default)
    printer = ProgressPrinter(sys.stderr)
    try:
        with interruptible(printer) as cancel:
            result = fit_judge(store, args.name, args.labels, aspect=args.aspect,
                               features=features,
                               template=args.template or DEFAULT_LLM_TEMPLATE,
                               n_threads=args.threads, force=args.force, method=args.method,
                               progress=printer, cancel=cancel)
    except Stop:
        print("mirage-tui: judge fit cancelled; nothing stored (the judge's verdicts so far "
              "are cached: the same command again asks only the rest)", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(result.as_json(), ensure_ascii=False))
        return 0
    for line in fit_lines(result):
        print(line)
    print(f"use it: --judge {FITTED_PREFIX}{result.name} (arena judge, judge calibrate)")
    return 0


def _list(args, store) -> int:
    from engine.arena.judges.blend import in_sample_labels, shipped_blend
    from engine.arena.trust.calibrate import unfinished_calibrations
    from engine.arena.judges.fitted import fitted_judges
    from engine.arena.judges.fitted_report import IN_SAMPLE, fit_lines, fitted_on
    from engine.arena.trust.rankings import WORSE_THAN_REFERENCE, ceiling_text, judge_rankings

    rows = judge_rankings(store, args.labels)
    fits = fitted_judges(store)
    unfinished = unfinished_calibrations(store)
    blend_labels = in_sample_labels(store)
    if args.json:
        print(json.dumps({"calibrated": [{**r.as_json(), "in_sample": fitted_on(
                              fits, r.judge, r.labels, blend_labels)} for r in rows],
                          "fitted": [f.as_json() for f in fits],
                          "unfinished_calibrations": [u.as_json() for u in unfinished],
                          "packaged": shipped_blend().as_json()}, ensure_ascii=False))
        return 0
    if not rows:
        print("no judge calibrated" + (f" on {args.labels!r}" if args.labels else "")
              + " (mirage-tui judge calibrate --judge J --labels L)")
    else:
        table = [("JUDGE", "ORDER", "LABELS", "SIGN ACCURACY", "FLIP RATE", "KAPPA",
                  "HUMAN CEILING", "")]
        for r in rows:
            marks = [f"! {WORSE_THAN_REFERENCE} ({r.best_reference} "
                     f"{_pct(r.best_reference_accuracy)})"] if r.worse_than_reference else []
            if fitted_on(fits, r.judge, r.labels, blend_labels):
                marks.append(f"({IN_SAMPLE})")
            table.append((r.judge, r.order, r.labels, r.sign_accuracy.format_pct(),
                          _pct(r.flip_rate), _num(r.kappa), ceiling_text(r.human_ceiling),
                          " ".join(marks)))
        print_table(table, keys=3)
    lines = ["", "calibrations not stored yet:"] if unfinished else []
    lines += [f"  {u.name}: {u.status} (pid {u.pid}" + (
        "); run it again to resume from the cached verdicts" if u.status == "interrupted"
        else ")") for u in unfinished]
    if fits:
        lines += ["", "fitted judges (cross-validated, folds grouped by query):"]
        lines += ["  " + line for f in fits for line in fit_lines(f)]
    lines += ["", "packaged judge fitted to people (shipped):", "  " + shipped_blend().summary()]
    print(wrap_lines("\n".join(lines), text_width()))
    return 0


def _pct(e) -> str:
    return "-" if e is None or e.value is None else f"{100 * e.value:.1f}%"


def _num(e) -> str:
    return "-" if e is None or e.value is None else f"{e.value:.2f}"


def _calibrate(args, store) -> int:
    from engine.arena.trust.calibrate import DEFAULT_TEMPLATE, calibrate_judge, latest_calibration

    _check_boot(args.boot)
    args.judge = from_settings(args, "judge", "--judge MODEL")
    printer = ProgressPrinter(sys.stderr)
    with interruptible(printer) as cancel:
        if args.both_orders and args.order not in (None, "both"):
            raise CliError(f"--both-orders and --order {args.order} disagree: give one")
        summary = calibrate_judge(store, args.labels, args.judge, aspect=args.aspect,
                                  order=args.order or ("both" if args.both_orders else "random"),
                                  sample=args.sample,
                                  seed=args.seed, template=args.template or DEFAULT_TEMPLATE,
                                  n_threads=args.threads, progress=printer, cancel=cancel,
                                  concurrency=args.concurrency, max_errors=args.max_errors,
                                  n_boot=args.boot)
    if summary.status == "cancelled":
        print("mirage-tui: calibration cancelled; run the same command again to resume (the "
              "verdicts so far are cached)", file=sys.stderr)
        return 130
    if summary.status != "done":
        raise CliError(f"calibration {summary.status}: {summary.message} (run it again to "
                       "resume: the verdicts so far are cached)")
    stored = latest_calibration(store, calibration_id=summary.calibration_id)
    if args.json:
        print(json.dumps({**summary.as_json(), "stored": _stored_json(stored)},
                         ensure_ascii=False))
        return 0
    _print(stored)
    print(f"\n{summary.pairs} pairs in {duration(summary.seconds)}: {summary.judge_calls} new "
          f"judge call(s), {summary.cached} pair(s) from the cache")
    if summary.message:
        print(f"note: {summary.message}")
    return 0


def _show(args, store) -> int:
    from engine.arena.judges.names import calibration_for

    no_overwrite(args, args.html)
    stored = calibration_for(store, args.judge, args.template)
    if args.html:
        from engine.arena.trust.page import calibration_page
        from engine.results.html import write_page
        from mirage_tui.cli.report import said_to, written_line

        path = write_page(calibration_page(stored), args.html)
        print(written_line("calibration", path), file=said_to(args.json, path))
        if not args.json:
            return 0
    if args.json:
        print(json.dumps(_stored_json(stored), ensure_ascii=False))
    else:
        _print(stored)
    return 0


def _compare(args, store) -> int:
    from engine.arena.trust.figures import paired_difference
    from engine.arena.trust.text import ROWS
    from engine.arena.judges.names import calibration_named

    _check_boot(args.boot)
    a, b = (calibration_named(store, text) for text in (args.first, args.second))
    if a.id == b.id:
        raise CliError(f"judge compare: #{a.id} is the same calibration twice; give two "
                       "different ids")
    if a.labels != b.labels:
        raise CliError(f"judge compare: #{a.id} was made on the labels {a.labels} and #{b.id} "
                       f"on {b.labels}; only calibrations on the same labels dataset pair up")
    if a.aspect != b.aspect:
        raise CliError(f"judge compare: #{a.id} is on the aspect {a.aspect} and #{b.id} on "
                       f"{b.aspect}; only calibrations on the same aspect pair up")
    diff = paired_difference(a.items(), b.items(), n_boot=args.boot)
    if args.json:
        print(json.dumps({"a": a.id, "b": b.id, "difference": {k: v.as_json()
                                                               for k, v in diff.items()}}))
        return 0
    print(f"A: #{a.id} {a.judge} · {a.template} · {a.labels} · {a.aspect}")
    print(f"B: #{b.id} {b.judge} · {b.template} · {b.labels} · {b.aspect}")
    print(f"paired on {next(iter(diff.values())).n} common pairs; B − A with its 95% CI")
    width = max(len(label) for _, label, _, _ in ROWS)
    for name, label, _, _ in ROWS:
        if not name.startswith("human_"):
            print(f"  {label:<{width}}  {diff[name].format_num(3)}")
    return 0


def _check_boot(n: int) -> None:
    """The rule ``compare --n-boot`` follows: at least one resample."""
    if n < 1:
        raise CliError("--boot must be at least 1")


def _stored_json(stored) -> dict:
    return stored.as_json()


def _print(stored) -> None:
    from engine.arena.trust.text import calibration_lines

    print(wrap_lines("\n".join(calibration_lines(stored)), text_width()))

"""``mirage-tui run``: plan and execute an evaluation run from a TOML file or from flags.

    mirage-tui run --config run.toml
    mirage-tui run --dataset demo --generator smollm2-135m-instruct \\
        --settings base,oracle,mixed,retrieved@1,retrieved@3,retrieved@5 \\
        --retriever minilm-l6-v2,e5-small-q4 --sample 100 --seed 0 --name demo-smol
    mirage-tui run ... --dry-run          # the plan, what is stored already, a time estimate
    mirage-tui run ... --concurrency 8 --max-errors 5%   # requests in flight, error budget

Flags override the file's keys. Running the same command again resumes the run (without
``--name`` the name is derived from the configuration, so the same command finds it); a run
of the same name with other settings is refused unless ``--force-new`` (``--concurrency``,
``--max-errors`` and ``--threads`` may change: the run resumes). Items that failed (retries
spent, an unusable reply, an HTTP 4xx, a prompt over the context) are recorded with their error
and retried by the next run. Ctrl-C cancels at once (the requests in flight to an endpoint are
cut; a local model finishes its current item); twice: the process exits at once. Either way the
stored items are whole and the run resumes from the store.

Progress goes to stderr: a live bar on a terminal, otherwise a line every ~10 seconds.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from engine import counts
from mirage_tui.cli.common import (CliError, count_type, db_option, fraction_type,
                                   in_flight_options, interruptible, json_option, without_key)
from mirage_tui.cli.progress import ProgressPrinter, accuracy_line
from mirage_tui.durations import duration


def add_parsers(sub) -> None:

    p = sub.add_parser("run", help="run an evaluation (systems × settings × queries)",
                       description="Plan and execute an evaluation run (systems × settings × "
                                   "queries) from a TOML file or from flags. Running the same "
                                   "command again resumes it, and so does --resume NAME.")
    db_option(p)
    p.add_argument("--resume", metavar="NAME",
                   help="resume the stored run NAME with its own configuration: failed and "
                        "missing items are asked again (only --threads, --concurrency, "
                        "--max-errors and the report choices may change)")
    p.add_argument("--config", type=Path, metavar="TOML",
                   help="a run file: dataset, generators, settings, retrievers, ... as keys")
    p.add_argument("--dataset", help="NAME or NAME@VERSION")
    p.add_argument("--generator", metavar="NAME[,NAME]", help="generators to run")
    p.add_argument("--settings", metavar="LIST",
                   help="base,oracle,mixed,retrieved@1,retrieved@3,retrieved@5 "
                        "(default base,oracle,mixed)")
    p.add_argument("--retriever", metavar="NAME[,NAME]", help="embedders for retrieved@k")
    p.add_argument("--reranker", metavar="judge:NAME", help="rerank retrieved candidates")
    p.add_argument("--rerank-depth", type=count_type(counts.DEPTH),
                   metavar="N", help="candidates to rerank (20)")
    p.add_argument("--template", help="mirage (default), bergen or mirage-bench")
    p.add_argument("--sample", type=count_type(counts.SAMPLE), metavar="N",
                   help="a seeded sample of N queries, stratified by source and language")
    p.add_argument("--seed", type=count_type(counts.SEED),
                   metavar="S", help="sampling and generation seed (0)")
    p.add_argument("--name", help="run name (default: derived from the configuration)")
    p.add_argument("--adaptive-until", choices=("precision", "difference"),
                   help="adaptive sampling stops when every CI is narrow enough (precision, "
                        "with --adaptive-target) or when the paired CI of the second "
                        "generator's EM minus the first's excludes 0 (difference)")
    p.add_argument("--adaptive-target", type=fraction_type(what="a CI half-width"), metavar="W",
                   help="sample until every 95%% CI half-width is below W (e.g. 0.03)")
    p.add_argument("--adaptive-batch", type=count_type(counts.ADAPTIVE_BATCH), metavar="N",
                   help="queries per adaptive batch (default max(20, 10%% of the budget))")
    p.add_argument("--budget", type=count_type(counts.BUDGET),
                   metavar="N", help="most queries adaptive may use")
    p.add_argument("--max-tokens", type=count_type(counts.MAX_TOKENS),
                   metavar="N", help="tokens per answer of a model that does not think (64)")
    p.add_argument("--thinking", metavar="MODE[,MODE]",
                   help="auto (the model's default), on or off: a reasoning model's own switch "
                        "(chat-template enable_thinking, chat_template_kwargs for an endpoint); "
                        "on,off runs each generator both ways, as two systems")
    p.add_argument("--thinking-budget", type=count_type(counts.MAX_TOKENS), metavar="N",
                   help="tokens per answer of a model that thinks (default 1024, or "
                        "--max-tokens when larger)")
    p.add_argument("--n-ctx", type=count_type(counts.N_CTX),
                   metavar="N", help="context window (model default)")
    p.add_argument("--threads", type=count_type(counts.THREADS),
                   metavar="N", help="llama.cpp threads")
    in_flight_options(p)
    p.add_argument("--parity", choices=("mirage", "bergen", "none"),
                   help="record a reference's choices for the report: mirage (the file's "
                        "retrieval gold) or bergen (correct language of the raw response, "
                        "fastText); none clears a recorded one")
    p.add_argument("--gold", choices=("oracle", "oracle+answer-match"),
                   help="retrieval gold the report uses (default oracle)")
    p.add_argument("--language-rule", choices=("mirage-tui", "bergen"),
                   help="correct-language rule the report uses (default mirage-tui)")
    p.add_argument("--language-detector", choices=("langid", "fasttext"),
                   help="correct-language detector the report uses (default langid)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan, what is stored already and a time estimate")
    p.add_argument("--force-new", action="store_true",
                   help="replace a stored run of the same name (its cached generations stay)")
    json_option(p, "print the plan or summary as JSON")


_RESUME_KEEPS = ("threads", "concurrency", "max_errors", "parity", "gold", "language_rule",
                 "language_detector")
"""What ``--resume`` may change: settings outside the run's identity (how many requests, and
the recorded report choices)."""


def _resumed_config(args, store):
    """Run ``args.resume`` (looked up once) and its stored configuration with only
    :data:`_RESUME_KEEPS` replaced; any other configuration flag is a usage error (it would
    make another run)."""
    from engine.runs.lookup import load_run
    from engine.runs import RunConfig

    given = [f"--{key.replace('_', '-')}" for key, value in vars(args).items()
             if key in _CONFIG_FLAGS and value not in (None, False)]
    if given:
        raise CliError(f"--resume {args.resume} takes the run's stored configuration; drop "
                       f"{', '.join(given)} (only --threads, --concurrency, --max-errors and "
                       "the report choices --parity/--gold/--language-* may change)")
    stored = load_run(store, args.resume)
    return RunConfig.from_dict(stored.config, name=stored.name,
                               **{k: getattr(args, k) for k in _RESUME_KEEPS}), stored


_CONFIG_FLAGS = ("config", "dataset", "generator", "settings", "retriever", "reranker",
                 "rerank_depth", "template", "sample", "seed", "name", "adaptive_target",
                 "adaptive_until", "adaptive_batch", "budget", "max_tokens", "n_ctx",
                 "thinking", "thinking_budget", "force_new")


def _config(args, store):
    """The run's configuration and its stored run, looked up once (None: a new run)."""
    from engine.runs import RunConfig
    from engine.runs.lookup import find_run
    from engine.runs.plan import with_canonical_names

    if getattr(args, "resume", None):
        return _resumed_config(args, store)
    overrides = {"dataset": args.dataset,
                 "generators": args.generator and without_key(args.generator),
                 "settings": args.settings, "retrievers": args.retriever,
                 "reranker": args.reranker, "rerank_depth": args.rerank_depth,
                 "template": args.template, "sample": args.sample, "seed": args.seed,
                 "name": args.name, "adaptive_target": args.adaptive_target,
                 "adaptive_until": args.adaptive_until,
                 "adaptive_batch": args.adaptive_batch, "budget": args.budget,
                 "max_tokens": args.max_tokens, "thinking": args.thinking,
                 "thinking_budget": args.thinking_budget,
                 "n_ctx": args.n_ctx, "threads": args.threads,
                 "concurrency": args.concurrency, "max_errors": args.max_errors,
                 "parity": args.parity, "gold": args.gold, "language_rule": args.language_rule,
                 "language_detector": args.language_detector}
    if args.config is not None:
        config = RunConfig.from_toml(args.config, **overrides)
    else:
        if not args.dataset or not args.generator:      # config.toml's defaults, if it has them
            from engine.app_config import load_app_config

            settings = load_app_config()
            overrides["dataset"] = args.dataset or settings.dataset
            overrides["generators"] = overrides["generators"] or \
                without_key(",".join(settings.generators))
        if not args.thinking:                           # config.toml's default mode, if any
            from engine.app_config import load_app_config

            overrides["thinking"] = load_app_config().thinking
        if not overrides["dataset"] or not overrides["generators"]:
            raise CliError("run needs --dataset and --generator (or --config FILE, or dataset "
                           "and generators in config.toml)")
        config = RunConfig.from_dict({}, **overrides)
    # the one naming rule: demo@1 is demo while 1 is newest, smollm2 is smollm2-135m-instruct
    config = with_canonical_names(store, config)
    return config, find_run(store, config.name)


def run(args, store) -> int:
    from engine.runs import execute, plan_run

    plan = plan_run(store, *_config(args, store), force_new=args.force_new)
    if args.dry_run:
        return _dry_run(store, plan, args.json)
    printer = ProgressPrinter(sys.stderr)
    with interruptible(printer) as cancel:
        summary = execute(store, plan, progress=printer, cancel=cancel)
    if args.json:
        print(json.dumps(asdict(summary), ensure_ascii=False))
    else:
        _print_summary(summary, printer.last)
    if summary.status == "failed":
        print(f"mirage-tui: error: {summary.message}", file=sys.stderr)
        return 1
    return 130 if summary.status == "cancelled" else 0


# --------------------------------------------------------------------------- output

def _print_summary(s, last_event) -> None:
    from engine.runs.tally import cut_words

    print(f"run {s.run}: {s.status} — {s.done}/{s.total} items ({s.generated} generated, "
          f"{s.cached} from the store, {s.errors} errors, {s.truncated} truncated, "
          f"{cut_words(s.cut, s.cut_while_thinking)}) in {duration(s.seconds)}")
    if s.generated:
        print(f"  prompt tokens {s.prompt_tokens:,} (evaluated {s.prompt_tokens_evaluated:,} "
              f"after prefix reuse), generated {s.completion_tokens:,} tokens")
    if s.stop_reason:
        from engine.units import fmt_points

        widest = max(s.half_widths.values(), default=None)
        print(f"  adaptive: {s.queries} queries, {s.stop_reason} (widest 95% CI half-width "
              f"{fmt_points(widest)})")
    if last_event is not None and accuracy_line(last_event):
        print(f"  EM_loose: {accuracy_line(last_event)}")
    if s.status == "cancelled":
        print("  cancelled: run the same command again to resume")


def _dry_run(store, plan, as_json: bool) -> int:
    from engine.runs.estimates import estimate_remaining, in_flight_words
    from engine.runs.rows import stored_status
    from engine.runs.plan import thinking_notes
    from mirage_tui.thinking_text import thinking_lines

    status = stored_status(store, plan)
    # the estimator New run and the Live ETA use; the cache hits found here need no model
    guess = estimate_remaining(store, plan, skip=status["stored_items"],
                               cache_looked_up=status["looked_up"])
    data = {**plan.summary(), "run_exists": plan.existing_run is not None,
            "stored": status["run_items"], "cached": status["cache_hits"],
            "cache_checked": status["checked"], "estimate_seconds": guess["seconds"],
            "estimate": guess["generators"]}
    notes = thinking_notes(store, plan)
    if notes:
        data["thinking"] = [n.as_json() for n in notes]
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
        return 0
    c = plan.config
    state = ("replaces the stored run" if plan.replace_existing else
             f"resumes (status {plan.existing_run.status})" if plan.existing_run else "new")
    selection = ("all queries" if not (c.sample or c.adaptive) else
                 f"seeded sample stratified by source and language, seed {c.seed}")
    print(f"run {c.name} ({state})")
    print(f"  dataset {plan.dataset}: {plan.first_batch} of {plan.dataset_queries} queries "
          f"({selection})")
    if c.adaptive:
        until = (f"the paired 95% CI of {plan.systems[1].label} − {plan.systems[0].label} "
                 "(EM_loose) excludes 0" if c.adaptive_until == "difference"
                 else f"every 95% CI half-width < {c.adaptive_target}")
        print(f"  adaptive: batches of {plan.batch_size} queries until {until}, at most "
              f"{len(plan.queries)} queries ({plan.max_count} items)")
    print(f"  systems: {', '.join(s.label for s in plan.systems)}")
    print(f"  settings: {', '.join(plan.settings)}")
    print(f"  items: {plan.count} ({plan.first_batch} queries × {len(plan.systems)} "
          f"system(s) × {len(plan.settings)} settings)")
    print(f"  stored: {status['run_items']} items of this run, {status['cache_hits']} more "
          f"found in the generation cache ({status['checked']})")
    print(f"  estimate: ~{duration(guess['seconds'])} for the rest ({guess['items']} items), "
          f"up to {c.max_tokens} tokens an answer")
    for name, g in guess["generators"].items():
        flight = in_flight_words(g["in_flight"], g["parallel"], g["backend"])
        print(f"    {name}: {g['items']} items, ~{g['prompt_tokens']:,.0f} prompt tokens, "
              f"~{g['answer_tokens']:.0f} tokens an answer; {g['prompt_tps']:.0f} prompt / "
              f"{g['gen_tps']:.0f} generated tok/s ({g['speed']}"
              + (f"; {g['load_note']}" if g.get("load_note") else "") + "); load "
              f"{duration(g['load_seconds'])} ({g['load']})" + (f"; {flight}" if flight else ""))
    for line in thinking_lines(notes):
        print(f"  {line}")
    return 0

"""``mirage-tui index`` and ``mirage-tui retrieve``: embed a dataset's pool, then retrieve and
score (MIRAGE §1 retrieval; the table has the shape of MIRAGE's Table 2).

    mirage-tui index DATASET --embedder NAME [--batch-size N] [--json]
    mirage-tui retrieve DATASET --embedder NAME [--reranker judge:GENERATOR]
                        [--rerank-depth 20] [--depth 5] [--by language|source]
                        [--gold oracle|oracle+answer-match] [--json]

Both resume: vectors and rankings already stored are reused, so an interrupted command picks
up where it stopped. Models are loaded only when a command runs.
"""

from __future__ import annotations

import json
import sys

from engine.datasets.catalog import resolve
from engine.metrics.definitions import DEFAULT_GOLD, GOLD_DEFINITIONS, gold_line
from engine.stats import N_BOOT, SEED
from engine.units import fmt_interval
from engine.retrieval import Retriever, index_dataset, report_json, retrieval_report_for
from engine import counts
from mirage_tui.cli.common import count_type, db_option, from_settings, json_option
from mirage_tui.cli.progress import ProgressPrinter

METRIC_ROWS = (("P", "p"), ("R", "r"), ("F1", "f1"), ("NDCG", "ndcg"),
               ("NDCG (MIRAGE ref.)", "ndcg_mirage"))


def add_parsers(sub) -> None:

    p = sub.add_parser("index", help="embed a dataset's chunks (and attached collections)")
    db_option(p)
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("--embedder", help="an embedder from `mirage-tui models list` (default: "
                                      "embedder in config.toml)")
    p.add_argument("--batch-size", type=count_type(counts.BATCH_SIZE), default=64,
                   help="texts per embedding call and per stored transaction (default 64)")
    json_option(p, "print the index report as JSON")

    p = sub.add_parser("retrieve", help="retrieve top-k for every query and score retrieval")
    db_option(p)
    p.add_argument("dataset", help="NAME or NAME@VERSION")
    p.add_argument("--embedder", help="an embedder from `mirage-tui models list` (default: "
                                      "embedder in config.toml)")
    p.add_argument("--reranker", metavar="KIND:NAME",
                   help="rerank the dense top --rerank-depth: judge:GENERATOR (a local LLM "
                        "judge) or cross-encoder:FOLDER")
    p.add_argument("--rerank-depth", type=count_type(counts.DEPTH), default=20,
                   help="dense candidates given to the reranker (default 20)")
    p.add_argument("--depth", type=count_type(counts.DEPTH),
                   default=5, help="chunks kept per query (default 5)")
    p.add_argument("--by", choices=("language", "source"), help="one table per group")
    p.add_argument("--n-boot", type=count_type(counts.RESAMPLES), default=N_BOOT,
                   help=f"bootstrap resamples (default {N_BOOT}, as every report)")
    p.add_argument("--seed", type=count_type(counts.SEED), default=SEED)
    p.add_argument("--gold", choices=GOLD_DEFINITIONS, default=DEFAULT_GOLD,
                   help="relevant chunks: oracle (supporting in the file, MIRAGE's definition; "
                        "default) or oracle+answer-match (plus siblings containing an answer)")
    json_option(p, "print the report as JSON")


def run(args, store) -> int:
    if args.command == "index":
        return _index(args, store)
    if args.command == "retrieve":
        return _retrieve(args, store)
    raise ValueError(f"mirage_tui.cli.index cannot run {args.command!r}")


def load_reranker(spec: str):
    """``judge:GENERATOR`` or ``cross-encoder:FOLDER`` -> a models Reranker
    (:meth:`models.rerankers.RerankerSpec.parse` reads the text)."""
    from models.rerankers import RerankerSpec

    try:
        parsed = RerankerSpec.parse(spec)
    except ValueError as exc:
        raise ValueError(f"--{exc}") from None
    return parsed.open()


def _index(args, store) -> int:
    from models.catalog import load_embedder

    resolve(store, args.dataset)                    # a typo fails before a model loads
    embedder = load_embedder(from_settings(args, "embedder", "--embedder NAME"))
    printer = ProgressPrinter(sys.stderr, interval=None)
    try:
        report = index_dataset(store, args.dataset, embedder, batch_size=args.batch_size,
                               progress=printer)
    finally:
        printer.close()
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
        return 0
    print(f"indexed {report.dataset} with {report.embedder} in {report.seconds:.1f}s: "
          f"{report.chunks:,} chunks ({report.texts:,} distinct texts), "
          f"{report.embedded:,} embedded, {report.reused:,} reused, "
          f"{report.over_length:,} over-length")
    if report.over_length:
        policy = getattr(embedder, "long_text_policy", "truncate")
        what = "averaged over windows" if policy == "window-average" else "truncated"
        print(f"  warning: {report.over_length:,} chunk(s) are longer than {report.embedder}'s "
              f"{report.max_seq_length} tokens and were {what} by the embedder")
    return 0


def _retrieve(args, store) -> int:
    from models.catalog import load_embedder

    if args.depth < 1:
        raise ValueError("--depth must be at least 1")
    resolve(store, args.dataset)
    embedder = load_embedder(from_settings(args, "embedder", "--embedder NAME"))
    reranker = load_reranker(args.reranker) if args.reranker else None
    retriever = Retriever(store, args.dataset, embedder, reranker, args.rerank_depth)
    printer = ProgressPrinter(sys.stderr, interval=None)
    try:
        retriever.retrieve(depth=args.depth, progress=printer)
    finally:
        printer.close()
    ks = tuple(sorted({k for k in (1, 3, 5) if k <= args.depth} | {args.depth}))
    report = retrieval_report_for(store, retriever.dataset, retriever.label, ks=ks, by=args.by,
                                  n_boot=args.n_boot, seed=args.seed, gold=args.gold)
    if args.json:
        print(json.dumps({**report_json(report), "chunks": retriever.chunk_count},
                         ensure_ascii=False))
        return 0
    print(f"{report['dataset']}  retriever {report['retriever']}  top {report['depth']} of "
          f"{retriever.chunk_count:,} chunks")
    print(gold_line(report["gold"], report["answer_match_rows"]))
    blocks = [("all", report)] + list(report["groups"].items())
    for name, block in blocks:
        print(format_table(name, block, report["ks"]))
    if report["missing"]:
        print(f"  ({report['missing']} queries have no stored ranking and are not scored)")
    return 0


def format_table(name: str, block: dict, ks) -> str:
    """One group's P/R/F1/NDCG rows by k, each cell ``value [lo, hi]``."""
    lines = [f"{name}: n={block['n']}"
             + (f" ({block['no_gold']} without a relevant chunk, scored with recall 0)"
                if block["no_gold"] else "")]
    width = 22
    lines.append(("  " + " " * 20 + "".join(f"@{k}".ljust(width) for k in ks)).rstrip())
    for title, prefix in METRIC_ROWS:
        cells = []
        for k in ks:
            e = block["metrics"][f"{prefix}@{k}"]
            cells.append(fmt_interval(e.value, e.lo, e.hi))
        lines.append("  " + title.ljust(20) + "".join(c.ljust(width) for c in cells).rstrip())
    return "\n".join(lines)


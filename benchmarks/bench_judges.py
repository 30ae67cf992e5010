"""Which offline judge agrees with people? Every packaged judge calibrated on the shared human
labels (RAGChecker's meta-evaluation: 196 answer pairs, two annotators each), in one process.

- **Reference judges** (no LLM): ``reference:minilm-l6-v2``, ``reference:e5-small-q4``,
  ``reference:f1``, ``reference:char3`` on every pair (they have no position bias: the
  random order is the only one measured; both orders give the same verdicts, flip rate 0).
- **Fitted judges** (``judge fit``): logistic regressions on several sets of features
  (reference similarities, the answers' lengths), each with 5-fold cross-validation grouped
  by query (no query in train and test), its held-out agreement beside the best single
  feature's under the same folds. Then one fitted on four of the seven RobustQA domains and
  calibrated on the other three, beside the reference judges on those same pairs.
- **The packaged LLM judges** (SmolLM2-135M Instruct, Gemma 3 270M) in all three orders
  (random, both, debiased) on a seeded sample of ``--llm-sample`` pairs (default 40: on 2 CPU
  cores each judge call takes seconds; the three orders share the judgments cache, so
  'random' and 'debiased' cost no call after 'both'). ``--llm-sample 0`` skips them.

Every figure is the calibration's own (``engine.arena.trust.figures``): sign accuracy on the
pairs whose human consensus is not a tie (a judge tie counts as wrong), with its exact 95% CI
and n; Cohen's κ; flip rate. Speed: reference-judge verdicts per second with the embeddings
cached, against the LLM judge's calls per second measured in the same process (the ratio is
the number to read; these machines are noisy). ::

    .venv/bin/python benchmarks/bench_judges.py [--labels PATH] [--llm-sample 40] [--boot 1000]

Writes benchmarks/results/judges.json and prints the table of docs/judges.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.arena.trust.calibrate import calibrate_judge  # noqa: E402
from engine.arena.judges.fit_features import DEFAULT_FEATURES  # noqa: E402
from engine.arena.judges.fitted import fit_judge  # noqa: E402
from engine.arena.judges.specs import open_judge  # noqa: E402
from engine.arena.judges.cache import judgment_key  # noqa: E402
from engine.datasets.importing import import_path  # noqa: E402
from engine.datasets.labels import load_label_pairs  # noqa: E402
from engine.store import Store  # noqa: E402

LABELS = ROOT.parent / "shared" / "data" / "ragchecker-meta" / "human_labeled_pairs.json"
REFERENCE_JUDGES = ("reference:minilm-l6-v2", "reference:e5-small-q4", "reference:f1",
                    "reference:char3")
LLM_JUDGES = ("smollm2", "gemma3-270m")
FEATURE_SETS = (tuple(DEFAULT_FEATURES), ("f1", "length"), ("cos:minilm-l6-v2", "f1"),
                ("cos:minilm-l6-v2", "cos:e5-small-q4", "f1", "char3", "length"))
TRAIN_DOMAINS = ("robustqa/fiqa", "robustqa/lifestyle", "robustqa/recreation", "robustqa/bioasq")
FIGURES = ("sign_accuracy", "kappa", "flip_rate", "first_position_wins", "pearson",
           "human_sign_agreement")


def figures_json(summary) -> dict:
    return {k: summary.figures[k].as_json() for k in FIGURES if k in summary.figures}


def calibrate(store, labels, judge, order, sample, boot) -> dict:
    started = time.perf_counter()
    s = calibrate_judge(store, labels, judge, order=order, sample=sample, n_boot=boot)
    seconds = time.perf_counter() - started
    print(f"  {judge:28} {order:9} sign {s.figures['sign_accuracy'].format_pct()}  "
          f"({s.judge_calls} calls, {seconds:.1f} s)", flush=True)
    return {"judge": s.judge, "spec": judge, "order": order, "pairs": s.pairs,
            "sample": sample, "status": s.status, "judge_calls": s.judge_calls,
            "seconds": round(seconds, 3), "calibration_id": s.calibration_id,
            "figures": figures_json(s)}


def import_domain_split(store, path: Path) -> None:
    """``rc-train`` (the pairs of :data:`TRAIN_DOMAINS`) and ``rc-test`` (the other three
    domains) as labels datasets, once."""
    rows = json.loads(path.read_text())
    folder = Path(tempfile.mkdtemp())
    for part, keep in (("train", True), ("test", False)):
        subset = [r for r in rows if (r["dataset"] in TRAIN_DOMAINS) == keep]
        (folder / f"rc-{part}.json").write_text(json.dumps(subset))
        if not store.query("SELECT 1 FROM datasets WHERE name = ?", (f"rc-{part}",)):
            import_path(store, folder / f"rc-{part}.json", name=f"rc-{part}")


def held_out_domains(store, path: Path, boot: int) -> dict:
    """Fit on four RobustQA domains, calibrate on the other three: a fitted judge's agreement
    on labels it never saw, beside the reference judges' on the same pairs."""
    import_domain_split(store, path)
    fit = fit_judge(store, "domains", "rc-train", force=True)
    out = {"train": list(TRAIN_DOMAINS), "fit_cv": fit.cv, "test": []}
    print(f"held-out domains: fitted on {len(TRAIN_DOMAINS)} (CV {fit.cv_estimate().format_pct()})",
          flush=True)
    for judge in ("fitted:domains", "reference:f1", "reference:minilm-l6-v2"):
        out["test"].append(calibrate(store, "rc-test", judge, "random", None, boot))
    return out


def verdict_speed(store, labels, judge_spec, limit=None) -> dict:
    """Verdicts per second of one judge over the pairs in both orders, straight through the
    judge (no cache, no store writes); the embeddings are prepared first and timed apart."""
    pairs = load_label_pairs(store, labels)[:limit]
    judge = open_judge(judge_spec, "ragqa_arena_pairwise", store=store)
    started = time.perf_counter()
    if hasattr(judge, "prepare"):
        judge.prepare([t for p in pairs for t in (p.answer_a, p.answer_b, p.reference)])
    prepared = time.perf_counter() - started
    started = time.perf_counter()
    n = 0
    for p in pairs:
        for a, b in ((p.answer_a, p.answer_b), (p.answer_b, p.answer_a)):
            fields = judge.fields(p.query, a, b, reference=p.reference)
            judgment_key(judge, fields)
            judge.verdict(fields)
            n += 1
    seconds = time.perf_counter() - started
    return {"judge": judge_spec, "verdicts": n, "seconds": round(seconds, 4),
            "verdicts_per_s": round(n / seconds, 1) if seconds else None,
            "prepare_seconds": round(prepared, 3)}


def labels_options(ap: argparse.ArgumentParser, results: str) -> None:
    """``--labels``, ``--boot``, ``--db`` and ``--out`` (default benchmarks/results/RESULTS)."""
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--db", type=Path, help="workspace to use (default: a temporary one)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / results)


def open_workspace(args, filename: str):
    """``(store, tmp)``: ``--db``, or a workspace in a temporary folder kept alive by ``tmp``;
    None (said on stderr) when ``--labels`` is missing."""
    if not args.labels.exists():
        print(f"no labels at {args.labels}", file=sys.stderr)
        return None
    tmp = tempfile.TemporaryDirectory()
    return Store(args.db or Path(tmp.name) / filename), tmp


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    labels_options(ap, "judges.json")
    ap.add_argument("--llm-sample", type=int, default=40)
    args = ap.parse_args()
    opened = open_workspace(args, "judges.db")
    if opened is None:
        return 1
    store, _tmp = opened
    labels = "ragchecker"
    if not store.query("SELECT 1 FROM datasets WHERE name = ?", (labels,)):
        import_path(store, args.labels, name=labels)
    out: dict = {"labels": str(args.labels.name), "machine": platform.platform(),
                 "cpus": os.cpu_count(), "load_before": os.getloadavg()[0],
                 "boot": args.boot, "reference": [], "llm": [], "speed": []}

    print("reference judges (every pair):", flush=True)
    for judge in REFERENCE_JUDGES:
        out["reference"].append(calibrate(store, labels, judge, "random", None, args.boot))
    print("fitted judges (5-fold CV grouped by query, every pair):", flush=True)
    out["fitted"] = []
    for i, features in enumerate(FEATURE_SETS):
        fit = fit_judge(store, f"bench{i}", labels, features=features, force=True)
        agree, (single, single_est) = fit.cv_estimate(), fit.best_single
        print(f"  {','.join(features):55} CV {agree.format_pct()}  best single {single} "
              f"{single_est.format_pct()}", flush=True)
        out["fitted"].append({"features": list(features), "cv": fit.cv,
                              "coefficients": fit.coefficients})
    out["held_out_domains"] = held_out_domains(store, args.labels, args.boot)

    for judge in REFERENCE_JUDGES:
        out["speed"].append(verdict_speed(store, labels, judge))
    if args.llm_sample:
        print(f"LLM judges (a seeded sample of {args.llm_sample} pairs):", flush=True)
        for judge in LLM_JUDGES:
            for order in ("both", "random", "debiased"):
                out["llm"].append(calibrate(store, labels, judge, order, args.llm_sample,
                                            args.boot))
    # the baseline in this process: the LLM judge's own verdicts per second, uncached
    llm = verdict_speed(store, labels, LLM_JUDGES[0], limit=3)
    out["llm_speed"] = llm
    for s in out["speed"]:
        s["ratio_vs_llm"] = round(s["verdicts_per_s"] / llm["verdicts_per_s"], 1)
        print(f"  {s['judge']:28} {s['verdicts_per_s']:8.1f} verdicts/s "
              f"({s['ratio_vs_llm']}x {LLM_JUDGES[0]}'s {llm['verdicts_per_s']}/s)", flush=True)
    out["load_after"] = os.getloadavg()[0]
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

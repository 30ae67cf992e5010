"""How far each arena's ranking agrees with the answers' accuracy: the cross-check
(engine/arena/trust/cross_check.py) of every arena of the named runs in a workspace, as one table
and benchmarks/results/judge_vs_accuracy.json.

The runs behind the committed figures (2 cores, real packaged models, greedy, 64 tokens)::

    mirage-tui data demo
    mirage-tui run --dataset demo --generator smollm2-135m-instruct,gemma3-270m \\
        --settings base,oracle,mixed,retrieved@1,retrieved@3,retrieved@5 \\
        --retriever minilm-l6-v2 --sample 10 --seed 0 --name quick-comparison
    mirage-tui run ... --settings base,oracle,mixed,retrieved@1,retrieved@3 --seed 1 \\
        --name other-sample
    mirage-tui data import ../shared/data/xquad/xquad.th.json
    mirage-tui run --dataset xquad.th --generator smollm2-135m-instruct,gemma3-270m \\
        --settings base,oracle,mixed --sample 6 --name xquad-th
    mirage-tui arena judge RUN [--judge reference:minilm-l6-v2 | reference:f1]

    .venv/bin/python benchmarks/judge_vs_accuracy.py --db WORKSPACE RUN [RUN ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.arena.ratings.battles import battles_of, list_arenas  # noqa: E402
from engine.arena.trust.cross_check import cross_check  # noqa: E402
from engine.arena.ratings.leaderboard import compute_ratings  # noqa: E402
from engine.runs.lookup import load_run  # noqa: E402
from engine.store import Store  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" /
                    "judge_vs_accuracy.json")
    args = ap.parse_args()
    store = Store(args.db)
    rows = []
    for name in args.runs:
        run = load_run(store, name)
        for info in list_arenas(store, run):
            battles = battles_of(store, info.id)
            ratings = compute_ratings(battles, n_boot=200, seed=0)
            check = cross_check(store, run, battles, ratings)
            rows.append({"run": name, "arena": info.name, "judge": info.judge,
                         "battles": len(battles),
                         "cross_check": check.as_json() if check else None})
            c = check
            rho = "–" if c is None or c.spearman is None else f"{c.spearman:.2f}"
            tau = "–" if c is None or c.kendall is None else f"{c.kendall:.2f}"
            print(f"{name:<18}{info.judge:<26}{c.systems if c else 0:>4} systems  ρ {rho:>5}  "
                  f"τ {tau:>5}  {c.gold_pairs.format_pct() if c else ''}"
                  f"{'' if c is None or c.can_rank else '  ' + c.why_not}")
    args.out.write_text(json.dumps({"benchmark": "judge_vs_accuracy", "rows": rows},
                                   indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

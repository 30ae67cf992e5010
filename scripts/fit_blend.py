"""Fit ``reference:blend`` again on RAGChecker's human labels and write the shipped file
(engine/arena/judges/blend_weights.json; :mod:`engine.arena.judges.blend`).

    .venv/bin/python scripts/fit_blend.py --labels ../shared/data/ragchecker-meta/human_labeled_pairs.json
    .venv/bin/python scripts/fit_blend.py --check     # exit 1 when the shipped file no longer reproduces
    .venv/bin/python scripts/fit_blend.py --db W.db   # reuse a workspace's stored embeddings

The labels are imported with the product's importer into a workspace (a temporary one unless
``--db``) as ``ragchecker``, then fitted exactly as ``mirage-tui judge fit blend --labels
ragchecker --method standardized-sum`` does (features f1, cos:minilm-l6-v2, cos:e5-small-q4).
Embedding the 583 texts with both embedders takes minutes on 2 CPU cores; nothing else is slow.
Only the fitted scale and figures are written; the labels stay where they are.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.arena.judges.blend import (WEIGHTS_FILE, record_differences,  # noqa: E402
                                       refit_record, shipped_from)
from engine.store import Store  # noqa: E402

LABELS = Path("../shared/data/ragchecker-meta/human_labeled_pairs.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS,
                        help=f"RAGChecker's meta-evaluation JSON (default {LABELS}, from the "
                             "project root)")
    parser.add_argument("--db", type=Path, help="workspace to use (default: a temporary one)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the shipped file, write nothing")
    args = parser.parse_args(argv)
    labels = args.labels if args.labels.is_absolute() else ROOT / args.labels
    if not labels.exists():
        print(f"no labels at {labels}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(args.db or Path(tmp) / "blend.db")
        try:
            record = refit_record(store, labels)
        finally:
            store.close()
    record["labels"]["file"] = str(args.labels)
    if args.check:
        problems = record_differences(json.loads(WEIGHTS_FILE.read_text()), record)
        for line in problems:
            print(line, file=sys.stderr)
        print("the shipped blend reproduces" if not problems else
              f"{WEIGHTS_FILE.name} does not reproduce: {len(problems)} difference(s)")
        return 1 if problems else 0
    WEIGHTS_FILE.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {WEIGHTS_FILE.relative_to(ROOT)}")
    print(shipped_from(record).summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

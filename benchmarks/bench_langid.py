"""Language-ID accuracy on XQuAD, where the true language of every text is known.

For each shared XQuAD language (ar, de, en, es, hi, ru, th, zh) and each detector the
correct-language rate can use (:data:`engine.metrics.language.DETECTORS`: langid, fastText
lid.176.ftz), the share of texts whose detected language (primary subtag) is the file's:

- ``paragraphs``: the 240 context paragraphs (what the issue asked for: long, clean text);
- ``questions``: the 1,190 questions, short texts closer to the length of a model's answer
  (the rate only judges responses over 20 characters, so questions of 20 or fewer are left out,
  as the metric leaves them out).

Each rate comes with its exact (Clopper–Pearson) 95% interval and n, plus the most frequent
wrong labels. Detection goes through :func:`engine.metrics.language.language_verdict`, the same
code the metric uses, under the mirage-tui rule (the texts carry no citations, so the BERGEN
rule differs only in keeping surrounding whitespace). No baseline: this measures a detector,
not the engine's overhead.

    .venv/bin/python benchmarks/bench_langid.py [--data ../shared/data] [--out PATH] [--doc]

``--doc`` also writes the table into docs/parity.md between :data:`BEGIN` and :data:`END`;
``tests/unit/test_parity_table.py`` checks that the page's table is the committed results'.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.metrics.language import (DETECTORS, MIN_LANGUAGE_CHARS, _classify,  # noqa: E402
                                     detector_version, language_verdict, primary_language)
from engine.stats import rate_interval  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "langid_xquad.json"
PAGE = ROOT / "docs" / "parity.md"
BEGIN = "<!-- langid-table:begin (benchmarks/bench_langid.py) -->"
END = "<!-- langid-table:end -->"
DATA = next((f / "shared" / "data" for f in ROOT.parents if (f / "shared" / "data").is_dir()),
            ROOT.parent / "shared" / "data")


def texts(path: Path) -> dict[str, list[str]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    paragraphs = [p["context"] for a in doc["data"] for p in a["paragraphs"]]
    questions = [qa["question"] for a in doc["data"] for p in a["paragraphs"] for qa in p["qas"]]
    return {"paragraphs": paragraphs,
            "questions": [q for q in questions if len(q.strip()) > MIN_LANGUAGE_CHARS]}


def measure(items: list[str], language: str, detector: str) -> dict:
    values, wrong = [], Counter()
    started = time.perf_counter()
    for text in items:
        value, _ = language_verdict(text, language, detector=detector)
        values.append(value)
        if value == 0.0:
            wrong[primary_language(_classify(text.strip(), detector)[0])] += 1
    seconds = time.perf_counter() - started
    est = rate_interval([v for v in values if v is not None])
    return {"accuracy": est.value, "lo": est.lo, "hi": est.hi, "n": est.n,
            "errors": est.n - round(est.value * est.n), "wrong_labels": dict(wrong.most_common(3)),
            "ms_per_text": 1000 * seconds / max(1, len(items))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--doc", action="store_true", help="write the table into docs/parity.md")
    args = parser.parse_args()
    files = sorted((args.data / "xquad").glob("xquad.*.json"))
    if not files:
        print(f"no XQuAD files under {args.data / 'xquad'}", file=sys.stderr)
        return 1
    for detector in DETECTORS:   # load outside the timing
        _classify("warm up the model", detector)
    results: dict = {"detectors": {d: detector_version(d) for d in DETECTORS},
                     "rule": "mirage-tui", "languages": {}}
    for path in files:
        language = path.name.split(".")[1]
        sets = texts(path)
        results["languages"][language] = {
            kind: {d: measure(items, language, d) for d in DETECTORS}
            for kind, items in sets.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(markdown(results))
    print(f"\nwritten to {args.out}")
    if args.doc:
        PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8"), markdown(results)),
                          encoding="utf-8")
        print(f"and into {PAGE}")
    return 0


def with_table(text: str, table: str) -> str:
    """The page's text with the part between :data:`BEGIN` and :data:`END` replaced."""
    start, end = text.index(BEGIN), text.index(END)
    return text[:start + len(BEGIN)] + "\n" + table + "\n" + text[end:]


def _cell(r: dict) -> str:
    return f"{100 * r['accuracy']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"


def markdown(results: dict) -> str:
    """docs/parity.md's table: accuracy (%) with its 95% CI per language, detector and text kind."""
    head = ["language"] + [f"{d} {kind} (n)" for kind in ("paragraphs", "questions")
                           for d in DETECTORS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for language, kinds in results["languages"].items():
        cells = [language]
        for kind in ("paragraphs", "questions"):
            for d in DETECTORS:
                r = kinds[kind][d]
                cells.append(f"{_cell(r)} ({r['n']})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

"""Labels datasets written for the fitted-judge tests: pairs whose better answer is known."""

from __future__ import annotations

import json

from engine.datasets.importing import import_path


def write_labels(store, tmp_path, name, n=24, flip=(), reference=True, one_side=False,
                 queries=None):
    """``n`` pairs: the answer that repeats the reference beside a wordier wrong one, on
    alternating sides; people prefer the right one, except on the pairs in ``flip``."""
    rows = []
    for i in range(n):
        ref = f"the capital of country {i} is city {i}"
        good = f"city {i} is the capital of country {i}"
        bad = f"I think it might be town {i + 100} in the north, not far from the river"
        b_good = one_side or i % 2 == 0
        a, b = (bad, good) if b_good else (good, bad)
        label = 2 if b_good else -1
        if i in flip:
            label = -label
        for annotator in ("ann", "bob"):
            row = {"query": f"question {queries(i) if queries else i}?", "answer_a": a,
                   "answer_b": b, "label": label, "annotator": annotator, "pair_id": f"p{i}"}
            if reference:
                row["reference"] = ref
            rows.append(row)
    return import_rows(store, tmp_path, name, rows)


def import_rows(store, tmp_path, name, rows):
    """``rows`` (the pairwise-labels columns) written as JSONL and imported as ``name``."""
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, path, name=name)
    return name

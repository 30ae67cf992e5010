"""A hand-made run for the report, drill-down and export tests (rows written by direct SQL).

The synthetic run: dataset ``toy@1`` with nine queries (q0-q3 and q8 in English, q4-q7 in
German; even ones from source "wiki", odd ones from "news"), each with a three-chunk pool
(chunk 0 the oracle, chunks 0 and 1 supporting). Two systems:

- A = gen-a/mirage@1 with base, oracle, mixed and retrieved@1:ret-x on q0-q7; on q8 only base
  and oracle (so q8 is left out as missing). Its (b, o, m) labels cover all eight patterns once,
  so NV = CA = CI = CM = 2/8; with retrieved@1 as mixed, CA = 4/8, NV = 0, CI = CM = 2/8.
- B = gen-b/mirage@1 with base, oracle and mixed; its oracle item on q8 failed (left out as
  errored). NV = 2/8, CA = 5/8, CI = 0, CM = 1/8.
"""

from __future__ import annotations

import json

A, B = "gen-a/mirage@1", "gen-b/mirage@1"
LABEL = "ret-x#0badcafe"  # retriever labels carry an identity hash
RET = f"retrieved@1:{LABEL}"
LANG = {f"q{i}": ("en" if i in (0, 1, 2, 3, 8) else "de") for i in range(9)}

# (base, oracle, mixed, retrieved@1) EM_loose labels; None: no item; "err": a failed item
LABELS = {
    A: {"q0": (1, 1, 1, 1), "q1": (0, 1, 0, 1), "q2": (0, 0, 0, 0), "q3": (1, 0, 0, 0),
        "q4": (0, 1, 1, 1), "q5": (1, 1, 0, 1), "q6": (0, 0, 1, 0), "q7": (1, 0, 1, 0),
        "q8": (0, 1, None, None)},
    B: {**{f"q{i}": (0, 1, 1, None) for i in range(5)},
        "q5": (0, 1, 0, None), "q6": (0, 1, 0, None), "q7": (1, 0, 0, None),
        "q8": (0, "err", 1, None)},
}
SETTINGS = ("base", "oracle", "mixed", RET)


def write_dataset(store) -> dict[str, int]:
    """toy@1 by direct SQL; returns query_id -> rowid."""
    with store.write() as db:
        c = db.conn
        c.execute("INSERT INTO datasets (id, name, version, kind, format, content_hash, "
                  "created_at) VALUES (1, 'toy', 1, 'qa', 'mirage', 'hash-toy', '2024-01-01')")
        for i in range(9):
            qid = f"q{i}"
            c.execute("INSERT INTO queries (id, dataset_id, query_id, text, language, source, "
                      "answers) VALUES (?, 1, ?, ?, ?, ?, ?)",
                      (100 + i, qid, f"What is {qid}?", LANG[qid],
                       "wiki" if i % 2 == 0 else "news", json.dumps([f"ans{i}"])))
            for j in range(3):
                c.execute("INSERT INTO chunks (id, dataset_id, chunk_id, title, text, "
                          "content_hash) VALUES (?, 1, ?, ?, ?, ?)",
                          (1000 + 10 * i + j, f"{qid}-c{j}", qid, f"text {qid} {j}",
                           f"h{i}{j}"))
                c.execute("INSERT INTO pool VALUES (?, ?, ?, ?, ?, 'label')",
                          (100 + i, 1000 + 10 * i + j, j, int(j < 2), int(j == 0)))
    return {f"q{i}": 100 + i for i in range(9)}


def chunk_rowid(i: int, j: int) -> int:
    return 1000 + 10 * i + j


def write_rankings(store) -> None:
    """ret-x rankings: even queries [oracle, noise, support, ...], odd [noise, oracle, ...];
    q8 has none."""
    with store.write() as db:
        for i in range(8):
            other = [chunk_rowid((i + 1) % 8, 2), chunk_rowid((i + 2) % 8, 2)]
            order = ([chunk_rowid(i, 0), chunk_rowid(i, 2), chunk_rowid(i, 1), *other] if i % 2 == 0
                     else [chunk_rowid(i, 2), chunk_rowid(i, 0), other[0], chunk_rowid(i, 1), other[1]])
            ranked = [[c, 1.0 - 0.1 * r] for r, c in enumerate(order)]
            db.conn.execute("INSERT INTO retrievals VALUES (?, ?, ?)",
                            (LABEL, 100 + i, json.dumps(ranked)))


def new_run(store, name: str, status: str = "done", config: dict | None = None,
             header: dict | None = None) -> int:
    with store.write() as db:
        cur = db.conn.execute(
            "INSERT INTO runs (name, dataset_id, config, header, status, created_at, "
            "updated_at) VALUES (?, 1, ?, ?, ?, '2024-01-02', '2024-01-02')",
            (name, json.dumps(config or {"seed": 0}),
             json.dumps(header or {"device": "cpu", "models": {"gen-a": "sha-a"}}), status))
        return cur.lastrowid


def _context(i: int, setting: str) -> list[int]:
    return {"base": [], "oracle": [chunk_rowid(i, 0)], "mixed": [chunk_rowid(i, j) for j in range(3)],
            RET: [chunk_rowid(i, 0) if i % 2 == 0 else chunk_rowid(i, 2)]}[setting]


def add_item(store, run_id: int, system: str, setting: str, qid: str, label) -> None:
    """One run item with its generation and scores (label 0/1), or a failed item ("err")."""
    i = int(qid[1:])
    qrow = 100 + i
    with store.write() as db:
        c = db.conn
        if label == "err":
            c.execute("INSERT INTO run_items (run_id, system, setting, query_rowid, context, "
                      "error) VALUES (?, ?, ?, ?, ?, 'context overflow: 900 > 512')",
                      (run_id, system, setting, qrow, json.dumps(_context(i, setting))))
            return
        key = f"{system}|{setting}|{qid}"
        text = f"It is ans{i}." if label else "I do not know."
        c.execute("INSERT OR IGNORE INTO generations (key, model_key, model_name, prompt, "
                  "params, text, prompt_tokens, completion_tokens, seconds, finish_reason, "
                  "device, created_at) VALUES (?, ?, ?, ?, '{}', ?, 50, 5, 0.1, 'stop', 'cpu', "
                  "'2024-01-02')",
                  (key, system.split("/")[0] + "-key", system.split("/")[0],
                   f"<prompt {system} {setting} {qid}>", text))
        scores = {"em_loose": float(label), "em_strict": float(label and i == 0),
                  "f1_mirage": 0.5 * label, "no_answer": float(1 - label),
                  "correct_language": None if i % 3 == 0 else 1.0}
        for metric, value in scores.items():
            c.execute("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)",
                      (key, qrow, metric, value, f"why {metric} {qid}"))
        # the run engine's marker row: which scorer wrote these scores (not a metric)
        c.execute("INSERT OR REPLACE INTO scores VALUES (?, ?, '_scorer', NULL, 'answer-1')",
                  (key, qrow))
        c.execute("INSERT INTO run_items (run_id, system, setting, query_rowid, generation_key, "
                  "context, truncated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (run_id, system, setting, qrow, key, json.dumps(_context(i, setting)),
                   int(system == A and setting == "oracle" and qid == "q1")))


def fill(store, run_id: int, systems=(A, B), queries=None) -> None:
    for system in systems:
        for qid, labels in LABELS[system].items():
            if queries is not None and qid not in queries:
                continue
            for setting, label in zip(SETTINGS, labels):
                if label is not None:
                    add_item(store, run_id, system, setting, qid, label)


def build_toy(store):
    """Write ``toy@1``, its rankings and the run ``toy-run`` (61 items) into ``store``."""
    write_dataset(store)
    write_rankings(store)
    run_id = new_run(store, "toy-run", header={"device": "cpu", "total_items": 61,
                                                "models": {"gen-a": "sha-a"}})
    fill(store, run_id)
    return store

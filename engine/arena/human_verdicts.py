"""A person's own verdict on a judged battle, entered in the app (the Inspector), kept beside
the judge's and never over it.

A verdict is stored as a human label (``human_labels``, ``source = 'app'``, with who and when)
on an answer pair of the run's own labels dataset, ``verdicts:<run>`` (kind ``labels``, format
``app``, created on the first verdict): the pair is the battle's query and its two answers in
canonical order (``system_a`` is answer A), its id ``[query rowid, system_a, system_b]``, its
domain the query's source. So the verdicts export with the rest and are labels like any
imported ones: ``mirage-tui judge calibrate --labels verdicts:<run>`` reads the judge against
them. Entering a verdict again replaces that person's earlier one on the same pair; the
judge's battle rows are never touched.
"""

from __future__ import annotations

import getpass
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone

from engine.arena.planning import load_answers
from engine.datasets.labels import labels_dataset_name
from engine.runs.lookup import load_run
from engine.store import Store

VERDICTS = {"a": -1, "tie": 0, "b": 1}
LABEL_WORDS = {-2: "A much better", -1: "A better", 0: "tie", 1: "B better",
               2: "B much better"}


@dataclass(frozen=True)
class HumanVerdict:
    annotator: str
    label: int                     # -2..2 (-1 / 0 / 1 from the app)
    note: str | None
    created_at: str | None
    source: str


def pair_id(query_rowid: int, system_a: str, system_b: str) -> str:
    """``[query rowid, system_a, system_b]`` as JSON (contestant names hold ``|`` and ``:``)."""
    return json.dumps([query_rowid, system_a, system_b], ensure_ascii=False)


def who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in this environment
        return "unknown"


def record_human_verdict(store: Store, run_name: str, query_rowid: int, system_a: str,
                         system_b: str, verdict: str, note: str | None = None,
                         annotator: str | None = None) -> str:
    """Store ``verdict`` ('a', 'tie' or 'b' for ``system_a`` / ``system_b``) by ``annotator``
    (default: the login name) on the battle; returns the labels dataset's name. ValueError for
    an unknown verdict or a battle whose answers the run does not hold."""
    if verdict not in VERDICTS:
        raise ValueError(f"a verdict is one of {', '.join(VERDICTS)}, not {verdict!r}")
    run = load_run(store, run_name)
    answers = load_answers(store, run.id).get(query_rowid, {})
    missing = [s for s in (system_a, system_b) if s not in answers]
    if missing:
        raise ValueError(f"run {run_name!r} has no answer of {', '.join(missing)} to query "
                         f"{query_rowid}")
    query = store.query("SELECT text, source FROM queries WHERE id = ?", (query_rowid,))[0]
    name = labels_dataset_name(run_name)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    note = (note or "").strip() or None
    with store.write() as db:
        conn = db.conn
        row = conn.execute("SELECT id FROM datasets WHERE name = ? AND format = 'app' "
                           "ORDER BY version DESC LIMIT 1", (name,)).fetchone()
        if row is None:
            version = conn.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM datasets "
                                   "WHERE name = ?", (name,)).fetchone()[0]
            digest = hashlib.sha256(f"app-verdicts\0{run_name}".encode()).hexdigest()
            dataset_id = conn.execute(
                "INSERT INTO datasets (name, version, kind, format, content_hash, created_at, "
                "description) VALUES (?, ?, 'labels', 'app', ?, ?, ?)",
                (name, version, digest, now, f"verdicts entered in the app on run "
                                             f"{run_name}")).lastrowid
        else:
            dataset_id = row[0]
        ident = pair_id(query_rowid, system_a, system_b)
        found = conn.execute("SELECT id FROM label_pairs WHERE dataset_id = ? AND pair_id = ?",
                             (dataset_id, ident)).fetchone()
        if found is None:
            pair_rowid = conn.execute(
                "INSERT INTO label_pairs (dataset_id, pair_id, query, reference, answer_a, "
                "answer_b, domain, metadata) VALUES (?, ?, ?, NULL, ?, ?, ?, NULL)",
                (dataset_id, ident, query["text"], answers[system_a][0], answers[system_b][0],
                 query["source"])).lastrowid
        else:
            pair_rowid = found[0]
        conn.execute(
            "INSERT OR REPLACE INTO human_labels (pair_rowid, annotator, aspect, label, note, "
            "source, created_at) VALUES (?, ?, 'overall', ?, ?, 'app', ?)",
            (pair_rowid, annotator or who(), VERDICTS[verdict], note, now))
    return name


def human_verdicts_of_run(store: Store, run_name: str, query_rowid: int | None = None
                          ) -> dict[tuple[int, str, str], list[HumanVerdict]]:
    """``(query rowid, system_a, system_b) -> verdicts`` people entered on the run's battles
    (of one query with ``query_rowid``)."""
    prefix = "[%" if query_rowid is None else f"[{query_rowid}, %"
    rows = store.query(
        "SELECT p.pair_id, l.annotator, l.label, l.note, l.created_at, l.source "
        "FROM human_labels l JOIN label_pairs p ON p.id = l.pair_rowid "
        "JOIN datasets d ON d.id = p.dataset_id WHERE d.name = ? AND d.format = 'app' "
        "AND p.pair_id LIKE ? ORDER BY l.created_at",
        (labels_dataset_name(run_name), prefix))
    out: dict[tuple[int, str, str], list[HumanVerdict]] = {}
    for r in rows:
        q, a, b = json.loads(r["pair_id"])
        out.setdefault((q, a, b), []).append(HumanVerdict(r["annotator"], r["label"], r["note"],
                                                          r["created_at"], r["source"]))
    return out


def human_verdicts_for(store: Store, run_name: str, query_rowid: int
                       ) -> dict[tuple[str, str], list[HumanVerdict]]:
    """``(system_a, system_b) -> verdicts`` people entered on the query's battles of the run."""
    return {(a, b): found for (_, a, b), found in
            human_verdicts_of_run(store, run_name, query_rowid).items()}

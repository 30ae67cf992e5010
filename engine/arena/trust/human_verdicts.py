"""A person's own verdict on two of a run's answers to one query, entered in the app (the
Inspector), kept beside the judge's and never over it.

A verdict is stored as a human label (``human_labels``, ``source = 'app'``, with who and when)
on an answer pair of the run's own labels dataset, ``verdicts:<run>`` (kind ``labels``, format
``app``, created on the first verdict): the pair is a query and two of the run's answers to
it, its id ``[query rowid, system_a, system_b]`` (``system_a`` is answer A), its domain the
query's source. So the verdicts export with the rest and are labels like any imported ones:
``mirage-tui judge calibrate --labels verdicts:<run>`` reads the judge against them.

The pair is the one the person chose, judged in some arena or in none. It is stored in the
order it already has (a verdict stored earlier on it, else a battle of the run on that query,
else the two contestants sorted), the label turned with it, so that it sits beside the judge's
battle; verdicts stored before keep their pair and order. Entering a verdict again replaces
that person's earlier one on the same pair (one person however the name is spelled: the first
spelling is kept); the judge's battle rows are never touched.
"""

from __future__ import annotations

import getpass
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone

from engine.arena.types import arena_system, split_arena_system
from engine.datasets.formats.pairwise_labels import annotator_key
from engine.datasets.labels import labels_dataset_name, run_of_labels_dataset
from engine.runs.lookup import RunInfo
from engine.store import Store
from engine.store.arenas import (all_app_verdict_rows, app_verdict_rows, query_answer_rows,
                                 query_battles, query_facts, query_text_source,
                                 save_app_verdict)

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


@dataclass(frozen=True)
class StoredVerdict:
    """One person's verdict as a workspace holds it (``judge verdicts``): the run, the query,
    answer A and answer B (each a system in a setting), the label (-2..2) and its words, who
    and when."""

    run: str
    query_rowid: int
    query_id: str | None
    query: str
    system_a: str
    setting_a: str | None
    system_b: str
    setting_b: str | None
    label: int
    annotator: str
    created_at: str | None
    note: str | None

    @property
    def label_words(self) -> str:
        return LABEL_WORDS.get(self.label, str(self.label))

    @property
    def setting(self) -> str:
        """The pair's setting, once when both answers share it (``oracle``), else both
        (``base vs oracle``)."""
        a, b = self.setting_a or "-", self.setting_b or "-"
        return a if a == b else f"{a} vs {b}"

    def as_json(self) -> dict:
        return {"run": self.run, "query_rowid": self.query_rowid, "query_id": self.query_id,
                "query": self.query, "system_a": self.system_a, "setting_a": self.setting_a,
                "system_b": self.system_b, "setting_b": self.setting_b, "label": self.label,
                "label_words": self.label_words, "annotator": self.annotator,
                "created_at": self.created_at, "note": self.note}


def workspace_verdicts(store: Store, run: str | None = None) -> list[StoredVerdict]:
    """Every verdict people entered in the app on the workspace's runs (on run ``run`` only
    when given), oldest first; a pair id that is not the app's ``[rowid, A, B]`` is skipped."""
    found: list[tuple[dict, list]] = []
    for r in all_app_verdict_rows(store):
        name = run_of_labels_dataset(r["dataset"])
        if run is not None and name != run:
            continue
        try:
            q, a, b = json.loads(r["pair_id"])
        except (ValueError, TypeError):
            continue
        found.append((dict(r, run=name), [int(q), str(a), str(b)]))
    facts = query_facts(store, {q for _, (q, _, _) in found})
    out = []
    for r, (q, a, b) in found:
        (sa, ta), (sb, tb) = split_arena_system(a), split_arena_system(b)
        out.append(StoredVerdict(r["run"], q, facts.get(q, {}).get("query_id"), r["query"],
                                 sa, ta, sb, tb, r["label"], r["annotator"], r["created_at"],
                                 r["note"]))
    return out


def pair_id(query_rowid: int, system_a: str, system_b: str) -> str:
    """``[query rowid, system_a, system_b]`` as JSON (contestant names hold ``|`` and ``:``)."""
    return json.dumps([query_rowid, system_a, system_b], ensure_ascii=False)


def who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in this environment
        return "unknown"


def stored_order(store: Store, run: RunInfo, query_rowid: int, a: str, b: str
                 ) -> tuple[str, str]:
    """The order the pair of ``a`` and ``b`` is (or will be) stored in: that of a verdict
    already stored on it, else of a battle of the run on the query, else sorted."""
    pairs = [(x, y) for (_, x, y) in human_verdicts_of_run(store, run, query_rowid)]
    pairs += [(r["system_a"], r["system_b"]) for r in query_battles(store, run.id, query_rowid)]
    return next((p for p in pairs if set(p) == {a, b}), tuple(sorted((a, b))))


def record_human_verdict(store: Store, run: RunInfo, query_rowid: int, system_a: str,
                         system_b: str, verdict: str, note: str | None = None,
                         annotator: str | None = None) -> str:
    """Store ``verdict`` ('a', 'tie' or 'b' for ``system_a`` / ``system_b``) by ``annotator``
    (default: the login name) on that pair of answers to the query, in the pair's stored order
    (module docstring); returns the labels dataset's name. ValueError for an unknown verdict,
    a pair of one contestant, or answers the run does not hold."""
    if verdict not in VERDICTS:
        raise ValueError(f"a verdict is one of {', '.join(VERDICTS)}, not {verdict!r}")
    if system_a == system_b:
        raise ValueError(f"a verdict compares two answers, not {system_a!r} with itself")
    answers = {arena_system(r["system"], r["setting"]): r["text"]
               for r in query_answer_rows(store, run.id, query_rowid)}
    missing = [s for s in (system_a, system_b) if s not in answers]
    if missing:
        raise ValueError(f"run {run.name!r} has no answer of {', '.join(missing)} to query "
                         f"{query_rowid}")
    if stored_order(store, run, query_rowid, system_a, system_b) != (system_a, system_b):
        system_a, system_b = system_b, system_a
        verdict = {"a": "b", "b": "a"}.get(verdict, verdict)
    query = query_text_source(store, query_rowid)
    name = labels_dataset_name(run.name)
    annotator = _spelled_as_stored(store, run, annotator or who())
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    digest = hashlib.sha256(f"app-verdicts\0{run.name}".encode()).hexdigest()
    save_app_verdict(store, name, digest, f"verdicts entered in the app on run {run.name}",
                     pair_id(query_rowid, system_a, system_b), query["text"], query["source"],
                     answers[system_a], answers[system_b], annotator,
                     VERDICTS[verdict], (note or "").strip() or None, now)
    return name


def _spelled_as_stored(store: Store, run: RunInfo, annotator: str) -> str:
    """The spelling this person's verdicts on the run are stored under (the first one given:
    ``Alice`` after ``alice`` is ``alice``, :func:`annotator_key`), else ``annotator``
    trimmed; so a verdict entered again under another spelling replaces the earlier one."""
    key = annotator_key(annotator)
    same = [v for verdicts in human_verdicts_of_run(store, run).values() for v in verdicts
            if annotator_key(v.annotator) == key]
    if same:
        return min(same, key=lambda v: v.created_at or "").annotator
    return annotator.strip() or annotator


def human_verdicts_of_run(store: Store, run: RunInfo, query_rowid: int | None = None
                          ) -> dict[tuple[int, str, str], list[HumanVerdict]]:
    """``(query rowid, system_a, system_b) -> verdicts`` people entered on the run's answer
    pairs (of one query with ``query_rowid``), each pair in its stored order."""
    prefix = "[%" if query_rowid is None else f"[{query_rowid}, %"
    out: dict[tuple[int, str, str], list[HumanVerdict]] = {}
    for r in app_verdict_rows(store, labels_dataset_name(run.name), prefix):
        q, a, b = json.loads(r["pair_id"])
        out.setdefault((q, a, b), []).append(HumanVerdict(r["annotator"], r["label"], r["note"],
                                                          r["created_at"], r["source"]))
    return out


def human_verdicts_for(store: Store, run: RunInfo, query_rowid: int
                       ) -> dict[tuple[str, str], list[HumanVerdict]]:
    """``(system_a, system_b) -> verdicts`` people entered on the query's answer pairs of the
    run, each pair in its stored order."""
    return {(a, b): found for (_, a, b), found in
            human_verdicts_of_run(store, run, query_rowid).items()}

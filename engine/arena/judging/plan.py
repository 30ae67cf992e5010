"""Planning an arena: which contestants, which queries, which battles, in which A/B order.

Contestants are the run's (system, setting) pairs (:func:`engine.arena.types.arena_system`),
each with the items that have a generation. :func:`plan_jobs` turns them into
:class:`QueryJob` s, one per sampled query (a seeded order stratified by source and language;
a larger sample extends a smaller one), each holding its :class:`Matchup` s in canonical order
(sorted contestants; against a reference, the contestant is a):

- pairwise (MIRAGE-Bench arena): every pair of contestants that both answered the query. The
  judge sees the query's *reference documents*: its supporting pool chunks (``support = 1``;
  the oracle first, then pool order), at most :data:`MAX_DOCUMENTS` of them.
- reference (RAG-QA Arena): each contestant against the query's reference answer (``b`` is
  :data:`REFERENCE`) or a chosen reference contestant, whose answer then stands in for it (the
  dataset's reference answer, when there is one, is shown to the judge as the template's
  reference section). Queries without a reference are skipped and counted.

Position bias: with ``order="random"`` a battle's A/B order is :func:`shown_order`, drawn from
a hash of (seed, query, contestants), so it is the same on every resume.

Nothing here writes to the store or calls a judge; :mod:`engine.arena.judging.job` runs the plan
and :mod:`engine.arena.ratings.reference_report` reports a reference arena.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from itertools import combinations

from engine.arena.types import ArenaError, arena_system, split_arena_system
from engine.results.records import split_system
from engine.runs.sampling import stratified_order
from engine.store import Store
from engine.store.arenas import (query_facts, run_answers, run_contestant_rows,
                                 supporting_chunks)
from engine.suggest import did_you_mean, pick_one

REFERENCE = "reference"
MAX_DOCUMENTS = 5


@dataclass(frozen=True)
class Matchup:
    """One battle to judge: two answers to one query, in canonical order."""

    query: int
    a: str
    b: str
    answer_a: str
    answer_b: str
    refusal: int            # bit 1: a declines, bit 2: b declines


@dataclass
class QueryJob:
    rowid: int
    query_id: str
    text: str
    documents: list[dict] | None          # pairwise: the reference documents
    reference: str | list[str] | None     # shown as the template's reference section (an
                                          # offline judge's: the reference texts)
    matchups: list[Matchup] = field(default_factory=list)


def load_answers(store: Store, run_id: int) -> dict[int, dict[str, tuple[str, bool]]]:
    """``answers[query rowid][contestant] = (text, declines)`` for every generated item.
    Declining is the stored ``no_answer`` score (as the run scored it), else
    :func:`engine.metrics.no_answer.is_no_answer` on the text."""
    from engine.metrics.no_answer import is_no_answer

    out: dict[int, dict[str, tuple[str, bool]]] = {}
    for r in run_answers(store, run_id):
        declines = bool(r["no_answer"]) if r["no_answer"] is not None else is_no_answer(r["text"])
        out.setdefault(r["query_rowid"], {})[arena_system(r["system"], r["setting"])] = (
            r["text"], declines)
    return out


def reference_documents(store: Store, rowids) -> dict[int, list[dict]]:
    """The documents the pairwise judge sees per query (module docstring)."""
    out: dict[int, list[dict]] = {q: [] for q in rowids}
    for r in supporting_chunks(store, rowids):
        docs = out[r["query_rowid"]]
        if len(docs) < MAX_DOCUMENTS:
            docs.append({"docid": r["chunk_id"], "title": r["title"], "text": r["text"]})
    return out


def sample_queries(rows: dict[int, dict], eligible: list[int], queries: int | None,
                   seed: int) -> list[int]:
    """The eligible queries in a seeded order stratified by (source, language), the first
    ``queries`` of them when given (a larger sample extends a smaller one)."""
    eligible = sorted(eligible)
    order = stratified_order([(rows[q]["source"], rows[q]["language"]) for q in eligible], seed)
    chosen = [eligible[i] for i in order]
    return chosen if queries is None else chosen[:queries]


def refusal(a: tuple[str, bool], b: tuple[str, bool] | None) -> int:
    """The battle's ``refusal`` bits from the two answers' (text, declines)."""
    return int(a[1]) | (2 if b is not None and b[1] else 0)


def plan_jobs(store: Store, run_id: int, *, mode: str, contestants: list[str],
              reference: str | None, queries: int | None, seed: int
              ) -> tuple[list[QueryJob], int, int]:
    """The queries to judge, each with its matchups, in working order (a seeded sample
    stratified by source and language); the number of queries they were drawn from; and how
    many of the run's queries were skipped for want of a reference (reference mode)."""
    answers = load_answers(store, run_id)
    rows = query_facts(store, answers)
    if mode != "pairwise":
        return _reference_jobs(answers, rows, contestants, reference, queries, seed)
    wanted = set(contestants)
    eligible = [q for q, by in answers.items() if len(wanted & set(by)) >= 2]
    chosen = sample_queries(rows, eligible, queries, seed)
    documents = reference_documents(store, chosen)
    jobs = []
    for q in chosen:
        by, row = answers[q], rows[q]
        job = QueryJob(q, row["query_id"], row["text"], documents[q], None)
        present = sorted(c for c in contestants if c in by)
        for a, b in combinations(present, 2):
            job.matchups.append(Matchup(q, a, b, by[a][0], by[b][0], refusal(by[a], by[b])))
        jobs.append(job)
    return jobs, len(eligible), 0


def _reference_jobs(answers: dict, rows: dict, contestants: list[str], reference: str | None,
                    queries: int | None, seed: int):
    """Reference-mode battles: ``(jobs, eligible queries, skipped queries)``, as
    :func:`plan_jobs` returns them."""

    def has_reference(q: int) -> bool:
        if reference is not None:
            return reference in answers[q]
        return bool((rows[q]["reference_answer"] or "").strip())

    judged = [c for c in contestants if c != reference]
    eligible = [q for q in answers
                if has_reference(q) and any(c in answers[q] for c in judged)]
    skipped = sum(1 for q in answers if not has_reference(q))
    jobs = []
    for q in sample_queries(rows, eligible, queries, seed):
        by, row = answers[q], rows[q]
        text = (row["reference_answer"] or "").strip()
        if reference is None:
            job = QueryJob(q, row["query_id"], row["text"], None, None)
            against, b_name = (text, False), REFERENCE
        else:   # the dataset's reference answer, when there is one, is shown to the judge
            job = QueryJob(q, row["query_id"], row["text"], None, text or None)
            against, b_name = by[reference], reference
        for c in sorted(c for c in judged if c in by):
            job.matchups.append(Matchup(q, c, b_name, by[c][0], against[0],
                                        refusal(by[c], against if reference else None)))
        jobs.append(job)
    return jobs, len(eligible), skipped


def run_contestants(store: Store, run_id: int) -> list[str]:
    """The run's contestants: every (system, setting) with at least one generation."""
    return sorted({arena_system(r[0], r[1]) for r in run_contestant_rows(store, run_id)})


def shown_order(seed: int, query: int, a: str, b: str) -> str:
    """'ab' or 'ba': the seeded, resume-stable A/B order of one battle (order='random')."""
    digest = hashlib.sha256(json.dumps([seed, query, a, b]).encode("utf-8")).digest()
    return "ab" if digest[0] % 2 == 0 else "ba"


def choose_contestants(store: Store, run, pairs: str, systems: list[str] | None,
                       reference: str | None) -> list[str]:
    """The contestants to judge: ``systems`` (default: all the run's), plus the reference
    contestant; raises :class:`ArenaError` for an unknown name or too few of them."""
    found = run_contestants(store, run.id)
    if systems:
        unknown = [s for s in systems if s not in found]
        if unknown:
            raise ArenaError(f"run {run.name!r} has no contestant {', '.join(map(repr, unknown))}"
                             f"; its contestants: {', '.join(found) or 'none'}")
        chosen = sorted(set(systems))
    else:
        chosen = found
    if reference is not None:
        reference = _named_contestant(run, found, reference)
        chosen = sorted(set(chosen) | {reference})
    if pairs == "all" and len(chosen) < 2:
        raise ArenaError(f"run {run.name!r} has {len(chosen)} contestant(s) with answers "
                         f"({', '.join(chosen) or 'none'}); a pairwise arena needs at least 2")
    if pairs == "reference" and len([c for c in chosen if c != reference]) < 1:
        raise ArenaError(f"run {run.name!r} has no contestant with answers to judge")
    return chosen


def reference_contestant(store: Store, run, reference: str | None) -> str | None:
    """The stored name of the reference contestant ``reference`` names (``gemma3 | mixed``
    is ``gemma3-270m-it/… | mixed``), None for None: the one spelling an arena's name, its
    configuration and its claim are made of. ArenaError when it names none or several."""
    if reference is None:
        return None
    return _named_contestant(run, run_contestants(store, run.id), reference)


def _named_contestant(run, found: list[str], wanted: str) -> str:
    """The contestant ``wanted`` (``SYSTEM | SETTING``) names, among those in that setting,
    SYSTEM by any part ``--generator`` accepts (``gemma3 | mixed``); ArenaError when none or
    several are."""
    system, setting = split_arena_system(wanted.strip())
    in_setting = {split_arena_system(c)[0]: c for c in found
                  if split_arena_system(c)[1] == setting}
    where = f"run {run.name!r}" + (f" in {setting}" if setting else "")
    system = pick_one(system, in_setting, what="contestants", where=where, error=ArenaError,
                      part=lambda s: split_system(s)[0])
    if system is not None:
        return in_setting[system]
    raise ArenaError(f"run {run.name!r} has no contestant {wanted!r} to use as the reference; "
                     f"its contestants: {', '.join(found) or 'none'}"
                     f"{did_you_mean(wanted, found)}")

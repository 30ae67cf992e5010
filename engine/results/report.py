"""A run's report, computed from its stored rows on every call (never kept as the only copy).

Per system (generator/template), and for each setting that can play MIRAGE's "mixed" role
(``mixed``, and in RAG mode every ``retrieved@k:retriever``): NV, CA, CI, CM and the overall
score with 95% CIs and the counts of the eight (b, o, m) EM_loose patterns
(MIRAGE §1, :mod:`engine.metrics.adaptability`), also split by query language and source.
Only queries whose base, oracle and mixed-like items all have an EM_loose score count; the
others are counted as left out (``errored`` when one of the three items failed, ``missing``
otherwise: not run yet, or no score). Also per system: accuracy (EM_loose) for every setting of
the run, and the mean of every other stored metric per setting, each with its CI and n (None
values, e.g. a reply too short for language detection, are left out of n). And the retrieval
table (MIRAGE Table 2 shape) for every retriever the run used, over the run's queries.

Two recorded choices decide numbers here (:mod:`engine.metrics.definitions`), and the report
names both: the retrieval gold definition (``oracle`` or ``oracle+answer-match``; the table is
computed for both, ``retrieval`` holding the chosen one and ``retrieval_by_gold`` each) and the
correct-language detector and rule (every item stores all of them; the report shows the chosen
one as ``correct_language``). The run's config records the choices; arguments override them.

A run that is not done reports what it has and says so (``partial``). Same rows and seed, same
numbers.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from engine.metrics.adaptability import adaptability
from engine.metrics.definitions import GOLD_DEFINITIONS, resolve as resolve_definitions
from engine.metrics.language import DEFAULT_LANGUAGE_METRIC, LANGUAGE_METRICS
from engine.metrics.retrieval import DEFAULT_KS, retrieval_report
from engine.results.records import (LOOSE_METRIC, ItemRecord, RunInfo, RunNotFound, is_mixed_like,
                                    item_counts, load_items, load_run, metric_order,
                                    parse_retrieved, retriever_name, setting_order,
                                    split_system)
from engine.retrieval.scores import answer_match_rows, gold_chunks, stored_rankings
from engine.stats import RATE, interval, intervals
from engine.store import Store

__all__ = ["RunReport", "RunNotFound", "build_report", "format_report", "system_label",
           "run_retrievers"]

UNKNOWN = "?"
"""The breakdown key for queries with no language (or no source)."""

_BySystem = dict[str, dict[str, dict[int, ItemRecord]]]
"""system -> setting -> query rowid -> item."""

_Rankings = dict[str, dict[int, list[int]]]
"""retriever label -> query rowid -> the top chunk rowids of its stored ranking."""


def system_label(system: str, mixed_setting: str) -> str:
    """The report's row name: the system, plus the mixed-like setting unless it is ``mixed``,
    e.g. ``smollm2-135m-instruct/mirage@1 | retrieved@3:minilm-l6-v2``."""
    return system if mixed_setting == "mixed" else f"{system} | {mixed_setting}"


@dataclass
class RunReport:
    run: str
    status: str
    dataset: str
    header: dict
    config: dict
    items: dict[str, int]
    partial: bool
    sample: dict | None
    systems: list[dict]
    accuracy: dict[str, dict[str, dict]]            # system -> setting -> estimate
    metrics: dict[str, dict[str, dict[str, dict]]]  # system -> setting -> metric -> estimate
    retrieval: list[dict]
    notes: list[str] = field(default_factory=list)
    n_boot: int = 1000
    seed: int = 0
    definitions: dict = field(default_factory=dict)     # Definitions.as_json() + answer_match_rows
    retrieval_by_gold: dict[str, list[dict]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"run": self.run, "status": self.status, "partial": self.partial,
                "dataset": self.dataset, "header": self.header, "config": self.config,
                "definitions": self.definitions,
                "items": dict(self.items), "sample": self.sample, "n_boot": self.n_boot,
                "seed": self.seed, "systems": self.systems, "accuracy": self.accuracy,
                "metrics": self.metrics, "retrieval": self.retrieval,
                "retrieval_by_gold": self.retrieval_by_gold, "notes": self.notes}


# --------------------------------------------------------------------------- the report

def build_report(store: Store, run_name: str, n_boot: int = 1000, seed: int = 0, *,
                 parity: str | None = None, gold: str | None = None,
                 language_rule: str | None = None,
                 language_detector: str | None = None, summary_only: bool = False) -> RunReport:
    """Everything computed from the run's stored rows; see the module docstring. ``parity``,
    ``gold``, ``language_rule`` and ``language_detector`` override the choices the run
    recorded (:func:`engine.metrics.definitions.resolve`; a contradiction raises
    :class:`~engine.metrics.definitions.DefinitionError`). ``summary_only`` computes only what
    a run's summary shows (accuracy and adaptability per system; no per-language or per-source
    breakdowns, no other metrics, no retrieval table), from the EM_loose scores alone."""
    run = load_run(store, run_name)
    definitions = resolve_definitions(run.config, parity=parity, gold=gold,
                                      language_rule=language_rule,
                                      language_detector=language_detector)
    items = load_items(store, run, metrics=(LOOSE_METRIC,) if summary_only else None)
    labels = [] if summary_only else run_retrievers(run, items)
    widened = answer_match_rows(store, run.dataset_id)
    rankings = {label: stored_rankings(store, run.dataset_id, label, max(DEFAULT_KS))
                for label in labels}

    counts = item_counts(run, items)
    by_system: _BySystem = defaultdict(lambda: defaultdict(dict))
    facts: dict[int, ItemRecord] = {}
    for item in items:
        by_system[item.system][item.setting][item.query_rowid] = item
        facts.setdefault(item.query_rowid, item)
    queries = sorted(facts)
    # arena features (``feat:*``) belong to the surrogate report, not to the answer tables;
    # of the correct-language variants only the chosen one is shown, as ``correct_language``
    stored = {m for i in items for m in i.scores if not m.startswith("feat:")}
    shown = {m: m for m in stored if m not in LANGUAGE_METRICS}
    if stored & set(LANGUAGE_METRICS):
        shown[DEFAULT_LANGUAGE_METRIC] = definitions.language_metric
    all_metrics = [(m, shown[m]) for m in metric_order(shown)]
    systems, accuracy, metrics, notes = _system_tables(by_system, queries, all_metrics,
                                                       n_boot, seed, not summary_only)
    notes += _language_notes(items, definitions.language_metric)
    by_gold: dict[str, list[dict]] = {}
    for definition in GOLD_DEFINITIONS:
        if by_gold and not widened:   # no answer-match rows: the same gold sets
            by_gold[definition] = next(iter(by_gold.values()))
            continue
        sets = gold_chunks(store, run.dataset_id, definition) if labels else {}
        by_gold[definition] = _retrieval_table(rankings, sets, queries, facts, n_boot, seed)
    return RunReport(
        run=run.name, status=run.status, dataset=run.dataset, header=run.header,
        config=run.config, items=counts,
        partial=run.status != "done" or counts["pending"] > 0,
        sample=_sample_note(run, len(queries)), systems=systems, accuracy=accuracy,
        metrics=metrics, retrieval=by_gold[definitions.gold], notes=notes, n_boot=n_boot,
        seed=seed, definitions={**definitions.as_json(), "answer_match_rows": widened},
        retrieval_by_gold=by_gold)


def _language_notes(items: list[ItemRecord], metric: str) -> list[str]:
    """A note when items scored before the chosen correct-language variant existed lack it."""
    if metric == DEFAULT_LANGUAGE_METRIC:
        return []
    lacking = sum(1 for i in items if DEFAULT_LANGUAGE_METRIC in i.scores
                  and metric not in i.scores)
    if not lacking:
        return []
    return [f"{lacking} item{'s were' if lacking != 1 else ' was'} scored before {metric} was "
            "stored (an older scorer): their correct language is left out; resume the run to "
            "rescore them from the stored generations (nothing is generated again)"]


def format_report(report: RunReport | dict, by: str | None = None) -> str:
    """The report as text: see :func:`engine.results.text.format_report`."""
    from engine.results.text import format_report as _format

    return _format(report, by=by)


def _system_tables(by_system: _BySystem, queries: list[int],
                   all_metrics: list[tuple[str, str]], n_boot: int, seed: int,
                   breakdowns: bool = True) -> tuple[list[dict], dict, dict, list[str]]:
    """Per system: the adaptability rows (one per mixed-like setting), accuracy and every
    other metric per setting (``all_metrics``: (name shown, stored metric read)), and notes on
    the adaptability a system cannot have."""
    systems, notes = [], []
    accuracy: dict[str, dict[str, dict]] = {}
    metrics: dict[str, dict[str, dict[str, dict]]] = {}
    for system in sorted(by_system):
        settings = by_system[system]
        ordered = sorted(settings, key=setting_order)
        accuracy[system] = {s: _accuracy(settings[s].values(), n_boot, seed) for s in ordered}
        # every metric of a setting in one call: columns of one length share the resamples
        metrics[system] = {
            s: {m: est.as_json() for m, est in intervals(
                {m: [i.scores.get(source) for i in settings[s].values()]
                 for m, source in all_metrics}, n_boot=n_boot, seed=seed).items()}
            for s in ordered}
        for mixed in (s for s in ordered if is_mixed_like(s)):
            lacking = [s for s in ("base", "oracle") if s not in settings]
            if lacking:
                notes.append(f"{system}: no adaptability with {mixed}: the run has no "
                             f"{' and no '.join(lacking)} items for it")
                continue
            systems.append(_adaptability_entry(system, mixed, settings, queries,
                                               accuracy[system], n_boot, seed, breakdowns))
    return systems, accuracy, metrics, notes


def _sample_note(run: RunInfo, queries_in_run: int) -> dict | None:
    """``{"mode": "sample"|"adaptive", "queries": N, "of": M, "seed": s}`` when the run uses a
    sample of the dataset's M queries, else None. The mode and the planned N come from the
    header's ``selection`` (the run engine writes it), else from the config's ``sample`` /
    ``adaptive_target``; an adaptive run's N is the queries it used (``adaptive.queries``), or
    those it has items for so far."""
    config, header = run.config, run.header
    selection = header.get("selection") if isinstance(header.get("selection"), dict) else {}
    adaptive = (config.get("adaptive_target") is not None
                or config.get("adaptive_until") == "difference")
    mode = selection.get("mode") or ("adaptive" if adaptive
                                     else "sample" if config.get("sample") else "all")
    if mode == "adaptive":
        used = header.get("adaptive") if isinstance(header.get("adaptive"), dict) else {}
        queries = used.get("queries") or queries_in_run
    elif mode == "sample":
        queries = selection.get("queries") or config.get("sample") or queries_in_run
    else:
        return None
    of = selection.get("of") or run.dataset_queries
    if not isinstance(queries, int) or queries >= of:
        return None
    return {"mode": mode, "queries": queries, "of": of, "seed": config.get("seed", 0)}


# --------------------------------------------------------------------------- per system

def _adaptability_entry(system: str, mixed: str, settings: dict[str, dict[int, ItemRecord]],
                        queries: list[int], accuracy: dict, n_boot: int,
                        seed: int, breakdowns: bool = True) -> dict[str, Any]:
    triples: dict[int, tuple[int, int, int]] = {}
    facts: dict[int, ItemRecord] = {}
    left_out = {"missing": 0, "errored": 0}
    for q in queries:
        trio = [settings.get(s, {}).get(q) for s in ("base", "oracle", mixed)]
        labels = [None if item is None else item.loose for item in trio]
        if all(label is not None for label in labels):
            triples[q] = tuple(labels)  # type: ignore[assignment]
            facts[q] = trio[0]  # type: ignore[assignment]
        elif any(item is not None and item.error for item in trio):
            left_out["errored"] += 1
        else:
            left_out["missing"] += 1
    generator, template = split_system(system)
    retrieved = parse_retrieved(mixed)
    entry: dict[str, Any] = {
        "system": system_label(system, mixed), "run_system": system, "generator": generator,
        "template": template, "mixed_setting": mixed,
        "retriever": retrieved[1] if retrieved else None,
        "retriever_name": retriever_name(retrieved[1]) if retrieved else None,
        "top_k": retrieved[0] if retrieved else None,
    }
    entry.update(_adaptability_json(list(triples.values()), mixed, n_boot, seed))
    entry["left_out"] = {**left_out, "total": left_out["missing"] + left_out["errored"]}
    entry["accuracy"] = accuracy
    if not breakdowns:
        return entry
    trio_settings = {s: settings[s] for s in ("base", "oracle", mixed)}
    entry["by_language"] = _breakdown("language", triples, facts, trio_settings, mixed,
                                      n_boot, seed)
    entry["by_source"] = _breakdown("source", triples, facts, trio_settings, mixed,
                                    n_boot, seed)
    return entry


def _breakdown(attr: str, queries: dict[int, tuple[int, int, int]],
               facts: dict[int, ItemRecord], settings: dict[str, dict[int, ItemRecord]],
               mixed: str, n_boot: int, seed: int) -> dict[str, dict]:
    """Adaptability and accuracy per group (language or source), the items grouped in one
    pass: per group the compact list of its triples and, per setting, of its labels."""
    groups: dict[str, list[tuple]] = defaultdict(list)
    for q, triple in queries.items():
        groups[_key(getattr(facts[q], attr))].append(triple)
    ordered = sorted(settings, key=setting_order)
    labels: dict[str, dict[str, list]] = defaultdict(lambda: {s: [] for s in ordered})
    for s in ordered:
        for item in settings[s].values():
            labels[_key(getattr(item, attr))][s].append(item.loose)
    out = {}
    # groups whose queries were all left out still show their accuracy
    for group in sorted(set(groups) | set(labels)):
        entry = _adaptability_json(groups.get(group, []), mixed, n_boot, seed)
        by_setting = labels.get(group) or {s: [] for s in ordered}
        entry["accuracy"] = {s: _rate(by_setting[s], n_boot, seed) for s in ordered}
        out[group] = entry
    return out


def _adaptability_json(triples: list[tuple[int, int, int]], mixed: str, n_boot: int,
                       seed: int) -> dict[str, Any]:
    out = adaptability(triples, n_boot=n_boot, seed=seed, mixed_setting=mixed).as_json()
    for key in ("n_boot", "seed"):
        out.pop(key)
    return out


def _accuracy(items: Iterable[ItemRecord], n_boot: int, seed: int) -> dict:
    return _rate([i.loose for i in items], n_boot, seed)


def _rate(labels: list, n_boot: int, seed: int) -> dict:
    return interval(RATE, labels, n_boot=n_boot, seed=seed).as_json()


def _key(value: str | None) -> str:
    return value if value else UNKNOWN


# --------------------------------------------------------------------------- retrieval table

def run_retrievers(run: RunInfo, items: Iterable[ItemRecord]) -> list[str]:
    """Retriever labels the run used: from its ``retrieved@k:label`` settings, in order."""
    labels: list[str] = []
    for setting in sorted({i.setting for i in items}, key=setting_order):
        retrieved = parse_retrieved(setting)
        if retrieved and retrieved[1] and retrieved[1] not in labels:
            labels.append(retrieved[1])
    if not labels:  # "retrieved@k" without a label: the config names the retriever(s)
        configured = run.config.get("retrievers") or []
        if any(parse_retrieved(i.setting) for i in items):
            labels = [str(r) for r in configured]
    return labels


def _relevances(ranking: dict[int, list[int]], gold: dict[int, set[int]],
                queries: Iterable[int]) -> dict[int, tuple[list[int], int]]:
    """``{query_rowid: (relevances of the ranked chunks, |gold|)}`` for the run's queries
    that have a ranking. Relevant: a chunk in the query's gold set (MIRAGE §1; which rows
    count depends on the gold definition, :func:`engine.retrieval.scores.gold_chunks`);
    |gold| counts them."""
    wanted = set(queries)
    return {q: ([int(chunk in gold.get(q, ())) for chunk in ranked], len(gold.get(q, ())))
            for q, ranked in ranking.items() if q in wanted}


def _retrieval_table(rankings: _Rankings, gold: dict[int, set[int]], queries: list[int],
                     facts: dict[int, ItemRecord], n_boot: int, seed: int,
                     ks: tuple[int, ...] = DEFAULT_KS) -> list[dict]:
    table = []
    for label, ranking in rankings.items():
        per_query = _relevances(ranking, gold, queries)
        est = retrieval_report(list(per_query.values()), ks, n_boot=n_boot, seed=seed)
        no_gold = sum(1 for _, n_gold in per_query.values() if n_gold == 0)
        entry: dict[str, Any] = {"retriever": label, "retriever_name": retriever_name(label),
                                 "n": len(per_query), "missing": len(queries) - len(per_query),
                                 "no_gold": no_gold,
                                 "ks": list(ks),
                                 "metrics": {k: v.as_json() for k, v in est.items()}}
        for attr in ("language", "source"):
            groups: dict[str, list] = defaultdict(list)
            for q, row in per_query.items():
                groups[_key(getattr(facts[q], attr))].append(row)
            entry[f"by_{attr}"] = {
                g: {"n": len(rows), "metrics": {k: v.as_json() for k, v in retrieval_report(
                    rows, ks, n_boot=n_boot, seed=seed).items()}}
                for g, rows in sorted(groups.items())}
        table.append(entry)
    return table

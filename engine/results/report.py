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
numbers: the app and ``report`` both take :data:`engine.stats.N_BOOT` resamples and
:data:`engine.stats.SEED` unless told otherwise, so the screen and the CLI agree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from engine.metrics.adaptability import PATTERN_KEYS, adaptability_many
from engine.metrics.definitions import (GOLD_DEFINITIONS, Definitions, definition_lines,
                                        resolve as resolve_definitions)
from engine.metrics.language import DEFAULT_LANGUAGE_METRIC, LANGUAGE_METRICS
from engine.metrics.retrieval import DEFAULT_KS
from engine.results.adaptability_rows import AdaptabilityGroup, AdaptabilityRow, LeftOut
from engine.results.records import (LOOSE_METRIC, ItemCounts, RunColumns, column_counts,
                                    is_mixed_like, load_columns, metric_order, parse_retrieved,
                                    retriever_name, setting_order, split_system)
from engine.results.replies import ReplyRow, reply_table
from engine.results.retrieval_table import RetrievalRow, group_key, retrievers, retrieval_table
from engine.runs.header import RunHeader, Selection
from engine.runs.lookup import RunInfo, RunNotFound
from engine.retrieval.scores import answer_match_rows, gold_chunks, stored_rankings
from engine.stats import (N_BOOT, RATE, SEED, Estimate, clopper_pearson_many, estimates_json,
                          interval, intervals)
from engine.store import Store

__all__ = ["AdaptabilityRow", "ItemCounts", "ReportConfig", "ReportDefinitions", "RunReport",
           "RunNotFound", "SampleNote", "build_report", "system_label"]

def system_label(system: str, mixed_setting: str) -> str:
    """The report's row name: the system, plus the mixed-like setting unless it is ``mixed``,
    e.g. ``smollm2-135m-instruct/mirage@1 | retrieved@3:minilm-l6-v2``."""
    return system if mixed_setting == "mixed" else f"{system} | {mixed_setting}"


@dataclass(frozen=True)
class SampleNote:
    """A run over a sample of its dataset: ``mode`` (``sample`` or ``adaptive``), ``queries``
    of the dataset's ``of``, drawn with ``seed``."""

    mode: str
    queries: int
    of: int
    seed: Any

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReportDefinitions:
    """The choices the report's numbers follow (``chosen``) and the dataset's answer-match
    rows (those the two gold definitions differ by)."""

    chosen: Definitions
    answer_match_rows: int

    def lines(self) -> list[str]:
        """The report's header lines on them
        (:func:`engine.metrics.definitions.definition_lines`)."""
        return definition_lines(self.chosen, self.answer_match_rows)

    def as_json(self) -> dict[str, Any]:
        return {**self.chosen.as_json(), "answer_match_rows": self.answer_match_rows}


@dataclass(frozen=True)
class ReportConfig:
    """The run's stored configuration as the report carries it: what its readers show, typed
    (the prompt ``template`` and the ``seed``; None where the run recorded none), and the
    stored JSON, written back as it is (an older run's has keys no :class:`RunConfig` has)."""

    template: str | None
    seed: Any
    stored: dict = field(repr=False)

    @classmethod
    def of(cls, config: dict) -> "ReportConfig":
        return cls(config.get("template"), config.get("seed"), config)

    def as_json(self) -> dict[str, Any]:
        return self.stored


Accuracy = dict[str, dict[str, Estimate]]
"""system -> setting -> EM_loose accuracy."""
Metrics = dict[str, dict[str, dict[str, Estimate]]]
"""system -> setting -> metric -> its mean."""


@dataclass
class RunReport:
    run: str
    status: str
    dataset: str
    header: RunHeader
    config: ReportConfig
    items: ItemCounts
    partial: bool
    sample: SampleNote | None
    systems: list[AdaptabilityRow]
    accuracy: Accuracy
    metrics: Metrics
    retrieval: list[RetrievalRow]
    notes: list[str] = field(default_factory=list)
    n_boot: int = N_BOOT
    seed: int = SEED
    definitions: ReportDefinitions | None = None
    retrieval_by_gold: dict[str, list[RetrievalRow]] = field(default_factory=dict)
    replies: list[ReplyRow] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        out = {"run": self.run, "status": self.status, "partial": self.partial,
               "dataset": self.dataset, "header": self.header.as_dict(),
               "config": self.config.as_json(),
               "definitions": self.definitions.as_json() if self.definitions else {},
               "items": self.items.as_json(),
               "sample": self.sample.as_json() if self.sample else None, "n_boot": self.n_boot,
               "seed": self.seed, "systems": [row.as_json() for row in self.systems],
               "accuracy": {system: estimates_json(per)
                            for system, per in self.accuracy.items()},
               "metrics": {system: {setting: estimates_json(per) for setting, per in
                                    settings.items()}
                           for system, settings in self.metrics.items()},
               "retrieval": [r.as_json() for r in self.retrieval],
               "retrieval_by_gold": {gold: [r.as_json() for r in rows]
                                     for gold, rows in self.retrieval_by_gold.items()},
               "notes": self.notes}
        if self.replies:                # a run with no cut answer and no reasoning: none
            out["replies"] = [r.as_json() for r in self.replies]
        return out

    @property
    def gold(self) -> str:
        """The gold definition of :attr:`retrieval`: the chosen one (``oracle`` by default)."""
        return self.definitions.chosen.gold if self.definitions else GOLD_DEFINITIONS[0]

    def definition_lines(self) -> list[str]:
        """The header lines on the report's choices (:meth:`ReportDefinitions.lines`)."""
        return self.definitions.lines() if self.definitions else []


# --------------------------------------------------------------------------- the report

def build_report(store: Store, run: RunInfo, n_boot: int = N_BOOT, seed: int = SEED, *,
                 parity: str | None = None, gold: str | None = None,
                 language_rule: str | None = None,
                 language_detector: str | None = None, summary_only: bool = False) -> RunReport:
    """Everything computed from the run's stored rows; see the module docstring. ``parity``,
    ``gold``, ``language_rule`` and ``language_detector`` override the choices the run
    recorded (:func:`engine.metrics.definitions.resolve`; a contradiction raises
    :class:`~engine.metrics.definitions.DefinitionError`). ``summary_only`` computes only what
    a run's summary shows (accuracy and adaptability per system; no per-language or per-source
    breakdowns, no other metrics, no retrieval table), from the EM_loose scores alone.

    The rows are read once as columns (:func:`engine.results.records.load_columns`: one scan
    of the items, one of their scores) and every group is an array slice or a ``bincount``:
    per system and setting the metric columns go to :func:`engine.stats.intervals`, and the
    adaptability of the run and of each language and source comes from pattern counts
    (:func:`engine.metrics.adaptability.adaptability_many`, one vectorised call per
    breakdown). Nothing is built per item: a 60k-item run reports in ~1.9 s on 2 cores.
    """
    definitions = resolve_definitions(run.config, parity=parity, gold=gold,
                                      language_rule=language_rule,
                                      language_detector=language_detector)
    cols = load_columns(store, run, metrics=(LOOSE_METRIC,) if summary_only else None)
    labels = [] if summary_only else retrievers(run, cols.settings)
    widened = answer_match_rows(store, run.dataset_id)
    rankings = {label: stored_rankings(store, run.dataset_id, label, max(DEFAULT_KS))
                for label in labels}

    counts = column_counts(run, cols)
    queries, first = np.unique(cols.query_rowid, return_index=True)
    facts = _QueryFacts(queries, cols, first)
    # (arena features ``feat:*`` are the surrogate's: load_columns leaves them out); of the
    # correct-language variants only the chosen one is shown, as ``correct_language``
    stored = set(cols.present)
    shown = {m: m for m in stored if m not in LANGUAGE_METRICS}
    if stored & set(LANGUAGE_METRICS):
        shown[DEFAULT_LANGUAGE_METRIC] = definitions.language_metric
    all_metrics = [(m, shown[m]) for m in metric_order(shown)]
    systems, accuracy, metrics, notes = _system_tables(cols, queries, facts, all_metrics,
                                                       n_boot, seed, not summary_only)
    notes += _language_notes(cols, definitions.language_metric)
    by_gold: dict[str, list[RetrievalRow]] = {}
    query_list = [int(q) for q in queries]
    for definition in GOLD_DEFINITIONS:
        if by_gold and not widened:   # no answer-match rows: the same gold sets
            by_gold[definition] = next(iter(by_gold.values()))
            continue
        sets = gold_chunks(store, run.dataset_id, definition) if labels else {}
        by_gold[definition] = retrieval_table(rankings, sets, query_list, facts, n_boot, seed)
    return RunReport(
        run=run.name, status=run.status, dataset=run.dataset, header=run.header,
        config=ReportConfig.of(run.config), items=counts,
        partial=run.status != "done" or counts.pending > 0,
        sample=_sample_note(run, len(queries)), systems=systems, accuracy=accuracy,
        metrics=metrics, retrieval=by_gold[definitions.gold], notes=notes, n_boot=n_boot,
        seed=seed, definitions=ReportDefinitions(definitions, widened),
        retrieval_by_gold=by_gold,
        replies=[] if summary_only else reply_table(store, run.id, n_boot, seed))


class _QueryFacts:
    """The run's queries (sorted rowids) with each one's breakdown keys: ``keys(attr)`` gives
    every query's group index and the group names (``language`` or ``source``; no value:
    :data:`~engine.results.retrieval_table.UNKNOWN`); ``facts[q]`` a query's own (for the
    retrieval table)."""

    def __init__(self, queries: np.ndarray, cols: RunColumns, first: np.ndarray):
        self.queries, self.cols, self.first = queries, cols, first

    def item_groups(self, attr: str) -> tuple[list[str], np.ndarray]:
        """``(names, group index per item)``: the items' breakdown keys as groups."""
        raw = self.cols.languages if attr == "language" else self.cols.sources
        names = sorted({group_key(v) for v in raw})
        index = {name: g for g, name in enumerate(names)}
        of_code = np.array([index[group_key(v)] for v in raw], dtype=np.int64)
        codes = self.cols.language if attr == "language" else self.cols.source
        return names, of_code[codes] if len(codes) else codes

    def __getitem__(self, q: int) -> "_Facts":
        i = int(self.first[np.searchsorted(self.queries, q)])
        return _Facts(self.cols.languages[self.cols.language[i]],
                      self.cols.sources[self.cols.source[i]])


@dataclass(frozen=True)
class _Facts:
    """A query's language and source (the breakdown keys)."""

    language: str | None
    source: str | None


def _language_notes(cols: RunColumns, metric: str) -> list[str]:
    """A note when items scored before the chosen correct-language variant existed lack it."""
    if metric == DEFAULT_LANGUAGE_METRIC or DEFAULT_LANGUAGE_METRIC not in cols.present:
        return []
    chosen = cols.present.get(metric)
    lacking = int((cols.present[DEFAULT_LANGUAGE_METRIC]
                   & (~chosen if chosen is not None else True)).sum())
    if not lacking:
        return []
    return [f"{lacking} item{'s were' if lacking != 1 else ' was'} scored before {metric} was "
            "stored (an older scorer): their correct language is left out; resume the run to "
            "rescore them from the stored generations (nothing is generated again)"]


def _system_tables(cols: RunColumns, queries: np.ndarray, facts: _QueryFacts,
                   all_metrics: list[tuple[str, str]], n_boot: int, seed: int,
                   breakdowns: bool = True
                   ) -> tuple[list[AdaptabilityRow], Accuracy, Metrics, list[str]]:
    """Per system: the adaptability rows (one per mixed-like setting), accuracy and every
    other metric per setting (``all_metrics``: (name shown, stored metric read)), and notes on
    the adaptability a system cannot have."""
    systems, notes = [], []
    accuracy: Accuracy = {}
    metrics: Metrics = {}
    loose = cols.loose()
    for system in cols.systems:
        ordered = [s for s in cols.settings if cols.span(system, s) is not None]
        spans = {s: cols.span(system, s) for s in ordered}
        accuracy[system] = {s: _rate(loose[spans[s]], n_boot, seed) for s in ordered}
        # every metric of a setting in one call: columns of one length share the resamples
        metrics[system] = {
            s: intervals({m: _kept(cols, source, spans[s]) for m, source in all_metrics},
                         n_boot=n_boot, seed=seed)
            for s in ordered}
        for mixed in (s for s in ordered if is_mixed_like(s)):
            lacking = [s for s in ("base", "oracle") if s not in spans]
            if lacking:
                notes.append(f"{system}: no adaptability with {mixed}: the run has no "
                             f"{' and no '.join(lacking)} items for it")
                continue
            trio = {s: spans[s] for s in ("base", "oracle", mixed)}
            systems.append(_adaptability_entry(system, mixed, cols, loose, trio, queries, facts,
                                               accuracy[system], n_boot, seed, breakdowns))
    return systems, accuracy, metrics, notes


def _kept(cols: RunColumns, metric: str, span: slice) -> np.ndarray:
    """The metric's values over ``span``, in query order, items with no value left out."""
    values = cols.values.get(metric)
    if values is None:
        return np.empty(0)
    part = values[span]
    return part[~np.isnan(part)]


def _sample_note(run: RunInfo, queries_in_run: int) -> SampleNote | None:
    """The :class:`SampleNote` of a run that uses a sample of the dataset's M queries, else
    None. The mode and the planned N come from the
    header's ``selection`` (the run engine writes it), else from the config's ``sample`` /
    ``adaptive_target``; an adaptive run's N is the queries it used (``adaptive.queries``), or
    those it has items for so far."""
    config, header = run.config, run.header
    selection = header.selection or Selection()
    adaptive = (config.get("adaptive_target") is not None
                or config.get("adaptive_until") == "difference")
    mode = selection.mode or ("adaptive" if adaptive
                              else "sample" if config.get("sample") else "all")
    if mode == "adaptive":
        queries = (header.adaptive and header.adaptive.queries) or queries_in_run
    elif mode == "sample":
        queries = selection.queries or config.get("sample") or queries_in_run
    else:
        return None
    of = selection.of or run.dataset_queries
    if not isinstance(queries, int) or queries >= of:
        return None
    return SampleNote(mode, queries, of, config.get("seed", 0))


# --------------------------------------------------------------------------- per system

def _adaptability_entry(system: str, mixed: str, cols: RunColumns, loose: np.ndarray,
                        trio: dict[str, slice], queries: np.ndarray, facts: _QueryFacts,
                        accuracy: dict[str, Estimate], n_boot: int, seed: int,
                        breakdowns: bool = True) -> AdaptabilityRow:
    """One adaptability row: over the run's queries, those whose base, oracle and ``mixed``
    items all have an EM_loose label give a (b, o, m) pattern; the others are left out,
    ``errored`` when one of the three items failed, else ``missing``."""
    labels = np.full((3, len(queries)), -1, dtype=np.int64)
    exists = np.zeros((3, len(queries)), dtype=bool)
    errored = np.zeros(len(queries), dtype=bool)
    for row, setting in enumerate(("base", "oracle", mixed)):
        span = trio[setting]
        where = np.searchsorted(queries, cols.query_rowid[span])
        part = loose[span]
        labels[row, where] = np.where(np.isnan(part), -1, part).astype(np.int64)
        exists[row, where] = True
        errored[where] |= cols.has_error[span]
    complete = (labels >= 0).all(axis=0)
    n_errored = int((~complete & errored).sum())
    patterns = np.where(complete, 4 * labels[0] + 2 * labels[1] + labels[2], -1)
    generator, template = split_system(system)
    retrieved = parse_retrieved(mixed)
    counts = np.bincount(patterns[complete], minlength=len(PATTERN_KEYS))
    by = {attr: _breakdown(attr, cols, loose, trio, queries, facts, patterns, mixed, n_boot,
                           seed) if breakdowns else None for attr in ("language", "source")}
    return AdaptabilityRow(
        system=system_label(system, mixed), run_system=system, generator=generator,
        template=template, mixed_setting=mixed,
        retriever=retrieved[1] if retrieved else None,
        retriever_name=retriever_name(retrieved[1]) if retrieved else None,
        top_k=retrieved[0] if retrieved else None,
        shares=adaptability_many(counts, mixed_setting=mixed)[0],
        left_out=LeftOut(int((~complete).sum()) - n_errored, n_errored), accuracy=accuracy,
        by_language=by["language"], by_source=by["source"])


def _breakdown(attr: str, cols: RunColumns, loose: np.ndarray, trio: dict[str, slice],
               queries: np.ndarray, facts: _QueryFacts, patterns: np.ndarray, mixed: str,
               n_boot: int, seed: int) -> dict[str, AdaptabilityGroup]:
    """Adaptability and accuracy per group (language or source), every group at once: the
    pattern counts of each group's queries (a ``bincount`` over group × pattern) and, per
    setting, the k and n of each group's EM_loose labels. A group appears when any of its
    items is in one of the three settings, so groups whose queries were all left out still
    show their accuracy."""
    ordered = sorted(trio, key=setting_order)
    names, item_group = facts.item_groups(attr)
    shown = np.unique(np.concatenate([item_group[trio[s]] for s in ordered]))
    query_group = item_group[facts.first]
    chosen = patterns >= 0
    width = len(PATTERN_KEYS)
    counts = np.bincount(query_group[chosen] * width + patterns[chosen],
                         minlength=len(names) * width).reshape(len(names), width)
    reports = adaptability_many(counts[shown], mixed_setting=mixed)
    rates = {}
    for s in ordered:
        group = item_group[trio[s]]
        part = loose[trio[s]]
        valid = ~np.isnan(part)
        k = np.bincount(group[valid], weights=part[valid], minlength=len(names))[shown]
        n = np.bincount(group[valid], minlength=len(names))[shown]
        rates[s] = _rates(k, n)
    return {names[int(g)]: AdaptabilityGroup(reports[i], {s: rates[s][i] for s in ordered})
            for i, g in enumerate(shown)}


def _rate(labels: np.ndarray, n_boot: int, seed: int) -> Estimate:
    """The share of 1s among the 0/1 ``labels`` (NaN: no label, left out) with its interval."""
    return interval(RATE, labels[~np.isnan(labels)], n_boot=n_boot, seed=seed)


def _rates(k: np.ndarray, n: np.ndarray) -> list[Estimate]:
    """``k[g]`` of ``n[g]`` per group as :func:`_rate` gives it, the Clopper–Pearson
    intervals in one vectorised call."""
    lo, hi = np.zeros(len(n)), np.zeros(len(n))
    has = n > 0
    if has.any():
        lo[has], hi[has] = clopper_pearson_many(np.rint(k[has]), n[has])
    return [Estimate(int(round(k[g])) / int(n[g]), float(lo[g]), float(hi[g]), int(n[g]))
            if n[g] else Estimate(None, None, None, 0) for g in range(len(n))]

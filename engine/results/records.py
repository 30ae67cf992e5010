"""Reading a run's stored rows back: the run, its items with their scores, and setting names.

Everything a report, the inspector or an export shows is computed from these rows on every
call (never kept as the only copy), so a run that gains items reports the new numbers at once.

Setting names (shared with the run engine): ``base``, ``oracle``, ``mixed`` and
``retrieved@{k}:{retriever_label}`` (``retrieved@{k}`` alone is read too). ``mixed`` and every
``retrieved@…`` setting are *mixed-like*: each can play the "mixed" role of MIRAGE's
adaptability metrics (RAG mode, MIRAGE §1).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Iterable

import numpy as np

from engine.store import Store, json_column
from engine.store import items as stored
from engine.runs.lookup import RunInfo

SCORER_MARK = "_scorer"
"""The run engine's marker row in ``scores`` (value NULL, detail = the scorer version); like
every metric whose name starts with ``_`` it is not a metric and reports skip it."""

LOOSE_METRIC = "em_loose"
"""The EM_loose label behind NV/CA/CI/CM and per-setting accuracy (MIRAGE §1)."""

_RETRIEVED = re.compile(r"^retrieved@(\d+)(?::(.+))?$")


def parse_retrieved(setting: str) -> tuple[int, str | None] | None:
    """``(k, retriever_label)`` of a ``retrieved@k[:label]`` setting, else None."""
    match = _RETRIEVED.match(setting)
    if not match:
        return None
    return int(match.group(1)), match.group(2)


def is_mixed_like(setting: str) -> bool:
    """True for ``mixed`` and every ``retrieved@k…`` setting (each can play mixed)."""
    return setting == "mixed" or parse_retrieved(setting) is not None


def setting_order(setting: str) -> tuple:
    """Sort key: base, oracle, mixed, then retrieved settings by retriever and k, then others."""
    fixed = {"base": 0, "oracle": 1, "mixed": 2}
    if setting in fixed:
        return (fixed[setting], "", 0, "")
    retrieved = parse_retrieved(setting)
    if retrieved is not None:
        return (3, retrieved[1] or "", retrieved[0], "")
    return (4, "", 0, setting)


def split_system(system: str) -> tuple[str, str | None]:
    """``(generator, template)`` of a ``generator/template`` system label (a thinking mode's
    `` | think`` / `` | no-think`` after it is not part of the template)."""
    system = system.split(" | ", 1)[0]
    generator, sep, template = system.rpartition("/")
    return (generator, template) if sep and generator else (system, None)


def system_without_template(system: str) -> str:
    """A system label with its template left out and its thinking mode kept:
    ``qwen3 | no-think`` of ``qwen3/mirage@1 | no-think`` (what tells systems apart when they
    share their template)."""
    _, sep, mode = system.partition(" | ")
    return f"{split_system(system)[0]}{sep}{mode}"


def retriever_name(label: str | None) -> str | None:
    """The readable part of a retriever label: ``minilm-l6-v2`` of ``minilm-l6-v2#1f0c2a9e``
    (see :func:`engine.retrieval.retriever_label`)."""
    return None if label is None else label.rsplit("#", 1)[0]


def metric_order(metrics: Iterable[str]) -> list[str]:
    """The answer metrics in :data:`engine.metrics.answer.METRICS` order, others after, sorted."""
    known = _known_metrics()
    present = set(metrics)
    return [m for m in known if m in present] + sorted(present - set(known))


@dataclass
class ItemRecord:
    """One run item (system × setting × query) with its query's facts and its scores."""

    system: str
    setting: str
    query_rowid: int
    query_id: str
    language: str | None
    source: str | None
    generation_key: str | None
    truncated: bool
    error: str | None
    context: list[int] | None
    scores: dict[str, float | None] = field(default_factory=dict)
    details: dict[str, str | None] = field(default_factory=dict)
    scorer_version: str | None = None   # from the run engine's ``_scorer`` marker row

    @property
    def loose(self) -> int | None:
        """The EM_loose label (0/1), or None when the item has no such score."""
        value = self.scores.get(LOOSE_METRIC)
        return None if value is None else int(round(value))


def load_items(store: Store, run: RunInfo, metrics: Iterable[str] | None = None,
               details: bool = False) -> list[ItemRecord]:
    """Every item of the run with its scores (all metrics, or only ``metrics``), ordered by
    system, query and setting. ``details=True`` also loads each score's detail text."""
    rows = stored.item_rows(store, run.id)
    items = {(r["system"], r["setting"], r["query_rowid"]): ItemRecord(
        r["system"], r["setting"], r["query_rowid"], r["query_id"], r["language"], r["source"],
        r["generation_key"], bool(r["truncated"]), r["error"], json_column(r["context"], None))
        for r in rows}
    wanted = None if metrics is None else sorted(set(metrics) | {SCORER_MARK})
    for r in stored.item_score_rows(store, run.id, wanted, details, SCORER_MARK):
        item = items[(r["system"], r["setting"], r["query_rowid"])]
        if r["metric"] == SCORER_MARK:
            item.scorer_version = r["detail"]
        elif not r["metric"].startswith("_"):  # other marker rows are not metrics
            item.scores[r["metric"]] = r["value"]
            if details:
                item.details[r["metric"]] = r["detail"]
    return _ordered(items.values())


@dataclass
class RunColumns:
    """A run's items as columns (numpy arrays, one entry per item), in the run's key order
    (system, setting, query rowid), so each system × setting is one contiguous ``span``.

    What a report reads of a big run without building an object per item or per score:
    ``values[metric]`` holds the metric's value per item (NaN: no score row, or a NULL value)
    and ``present[metric]`` whether the item has a score row at all (NULL included).
    """

    systems: list[str]                  # sorted
    settings: list[str]                 # setting_order
    system: np.ndarray                  # index into systems
    setting: np.ndarray                 # index into settings
    query_rowid: np.ndarray
    language: np.ndarray                # per item, the query's: index into languages
    source: np.ndarray                  # index into sources
    languages: list[str | None]
    sources: list[str | None]
    generated: np.ndarray               # bool: has a generation
    failed: np.ndarray                  # bool: no generation and an error text
    has_error: np.ndarray               # bool: an error text
    truncated: np.ndarray               # bool
    values: dict[str, np.ndarray] = field(default_factory=dict)
    present: dict[str, np.ndarray] = field(default_factory=dict)
    spans: dict[tuple[str, str], slice] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.query_rowid)

    def span(self, system: str, setting: str) -> slice | None:
        """The items of ``system`` × ``setting`` (ordered by query rowid), or None."""
        return self.spans.get((system, setting))

    def loose(self) -> np.ndarray:
        """The EM_loose label per item as a float (0.0 / 1.0; NaN when it has none)."""
        values = self.values.get(LOOSE_METRIC)
        return np.rint(values) if values is not None else np.full(len(self), np.nan)


def load_columns(store: Store, run: RunInfo,
                 metrics: Iterable[str] | None = None) -> RunColumns:
    """The run's items and their scores (all metrics, or only ``metrics``; marker rows
    ``_…`` and arena features ``feat:…`` left out) as :class:`RunColumns`: one ordered scan of the run's key for the items
    and one pass over their score rows, the values placed by the item's rowid, vectorised."""
    rows = stored.column_item_tuples(store, run.id)
    count = len(rows)
    rowid, system, setting, qrow, gen, err, trunc, language, source = (
        map(list, zip(*rows)) if rows else ([] for _ in range(9)))
    systems = sorted(set(system))
    settings = sorted(set(setting), key=setting_order)
    sys_index = {s: i for i, s in enumerate(systems)}
    set_index = {s: i for i, s in enumerate(settings)}
    languages, language_code = _codes(language)
    sources, source_code = _codes(source)
    generated = np.array(gen, dtype=bool)
    has_error = np.array(err, dtype=bool)
    cols = RunColumns(
        systems=systems, settings=settings,
        system=np.array([sys_index[s] for s in system], dtype=np.int64),
        setting=np.array([set_index[s] for s in setting], dtype=np.int64),
        query_rowid=np.array(qrow, dtype=np.int64), language=language_code,
        source=source_code, languages=languages, sources=sources,
        generated=generated, failed=~generated & has_error, has_error=has_error,
        truncated=np.array(trunc, dtype=bool))
    start = 0
    for i in range(1, count + 1):
        if i == count or system[i] != system[start] or setting[i] != setting[start]:
            cols.spans[(system[start], setting[start])] = slice(start, i)
            start = i
    if not count:
        return cols
    # every score row of the run comes back as two numbers: rowid * 64 + the metric's code
    # (its place in the known metrics, 0 for any other name) and the value, so that 700k rows
    # cost two small objects each, not a string; rows of other names come in a second query
    known = _known_metrics()
    wanted = None if metrics is None else sorted(set(metrics))
    if wanted is not None and not wanted:
        return cols
    rows = stored.packed_score_tuples(store, run.id, known, wanted)
    packed = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    value = np.array([r[1] for r in rows], dtype=float)           # None -> NaN
    score_rowid, code = packed >> 6, packed & 63
    names = {i: m for i, m in enumerate(known, start=1)}
    if (code == 0).any():    # names outside the known list: by name
        others = stored.other_score_tuples(store, run.id, known, wanted)
        extra = sorted({r[1] for r in others})
        names.update({len(known) + 1 + i: m for i, m in enumerate(extra)})
        by_name = {m: c for c, m in names.items()}
        keep = code != 0
        score_rowid = np.concatenate([score_rowid[keep], [r[0] for r in others]]).astype(np.int64)
        code = np.concatenate([code[keep], [by_name[r[1]] for r in others]]).astype(np.int64)
        value = np.concatenate([value[keep], np.array([r[2] for r in others], dtype=float)])
    item_rowid = np.array(rowid, dtype=np.int64)
    order = np.argsort(item_rowid)
    at = order[np.searchsorted(item_rowid[order], score_rowid)]
    for c in np.unique(code):
        chosen = code == c
        column = np.full(count, np.nan)
        column[at[chosen]] = value[chosen]
        present = np.zeros(count, dtype=bool)
        present[at[chosen]] = True
        cols.values[names[int(c)]], cols.present[names[int(c)]] = column, present
    return cols


def _codes(values: list) -> tuple[list, np.ndarray]:
    """``(distinct values, each value's index among them)``."""
    distinct = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(distinct)}
    return distinct, np.array([index[v] for v in values], dtype=np.int64)


def _known_metrics() -> list[str]:
    """The answer metrics a run stores, in :func:`metric_order` (at most 63: a 6-bit code)."""
    from engine.metrics.answer import CITATION_METRIC, LANGUAGE_VARIANTS, METRICS

    known = list(dict.fromkeys([*METRICS, *LANGUAGE_VARIANTS, CITATION_METRIC]))
    assert len(known) < 64
    return known


run_settings = stored.run_settings


def run_metrics(store: Store, run_id: int) -> list[str]:
    """Every metric any item of the run has (marker rows ``_…`` left out), in
    :func:`metric_order` (one aggregate query)."""
    return metric_order(stored.run_metric_names(store, run_id))


def setting_rank_sql(settings: Iterable[str], column: str = "ri.setting") -> tuple[str, dict]:
    """``(CASE expression, {setting: rank})``: the rank of ``column`` in :func:`setting_order`
    among ``settings``, so that SQL orders items as :func:`load_items` does."""
    ranks = {s: i for i, s in enumerate(sorted(set(settings), key=setting_order))}
    return stored.rank_case(ranks, column), ranks


def count_items(store: Store, run: RunInfo) -> int:
    """How many items of the run are stored (generated or failed)."""
    return stored.count_run_items(store, run.id)


def _ordered(items: Iterable[ItemRecord]) -> list[ItemRecord]:
    return sorted(items, key=lambda i: (i.system, i.query_rowid, setting_order(i.setting)))


@dataclass(frozen=True)
class ItemCounts:
    """A run's item counts as the run engine's progress counts them: ``done`` (finished:
    generated or failed), ``total`` (planned), ``generated``, ``errors``, ``truncated`` and
    ``pending``."""

    done: int
    total: int
    generated: int
    errors: int
    truncated: int
    pending: int

    def as_json(self) -> dict[str, int]:
        return asdict(self)


def item_counts(run: RunInfo, items: list[ItemRecord]) -> ItemCounts:
    """The run's :class:`ItemCounts` over ``items``.

    The planned total is the header's ``total_items`` (the run engine keeps it, growing with
    adaptive batches), never less than the items stored.
    """
    generated = sum(1 for i in items if i.generation_key is not None)
    errors = sum(1 for i in items if i.generation_key is None and i.error)
    truncated = sum(1 for i in items if i.truncated)
    return _counts(run, len(items), generated, errors, truncated)


def column_counts(run: RunInfo, cols: RunColumns) -> ItemCounts:
    """:func:`item_counts` of :class:`RunColumns`."""
    return _counts(run, len(cols), int(cols.generated.sum()), int(cols.failed.sum()),
                   int(cols.truncated.sum()))


def _counts(run: RunInfo, items: int, generated: int, errors: int,
            truncated: int) -> ItemCounts:
    done = generated + errors
    total = max(_planned_total(run) or 0, items)
    return ItemCounts(done, total, generated, errors, truncated, total - done)


def stored_counts(store: Store, run: RunInfo) -> ItemCounts:
    """The counts of :func:`item_counts` from the run's counters (``run_counts``, kept with
    the run as its items are written): one row read, no item loaded."""
    items, generated, errors, truncated = stored.run_counters(store, run.id)
    return _counts(run, items, generated, errors, truncated)


def _planned_total(run: RunInfo) -> int | None:
    value = run.header.total_items
    if isinstance(value, int):
        return value
    count = run.header.plan.get("count")
    return count if isinstance(count, int) else None

"""Is B really better than A? Two systems compared on the items both answered.

A side is ``RUN`` or ``RUN:SYSTEM`` (:mod:`engine.results.pairing`: SYSTEM found by any part
``--generator`` would accept): two systems of one run, or systems of two runs, of different
models too. An item is a (setting, query); the pairing keeps the items both sides generated
(:func:`pair`, :class:`PairingError` when there are none, naming how many each side has) and
names the generation settings in which the sides differ (max tokens, template, sampling,
seed, backend: :attr:`PairedComparison.warning`). :func:`compare_pair` then computes, per metric × setting (and the MIRAGE §1
adaptability shares per mixed-like setting), A's and B's values, Δ = B − A with a paired
bootstrap 95% CI over queries, a p-value (McNemar's exact test for binary scores, the paired
sign-flip permutation test otherwise, also for the adaptability shares, which are means of
per-query indicators), Holm's adjustment across every row of the comparison, a verdict, and the
items for 80% power (:mod:`engine.paired_stats` has the statistics and their sources).
And the item diff: every item whose binary score flipped (A right → B wrong, wrong → right),
grouped by setting, language and source, with both responses, and the (b, o, m) pattern
transitions of the queries (e.g. ``110 → 100``).

Resampling is over queries, all settings of a query together (a query's items are not
independent). Same rows, same seed, same numbers.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

import numpy as np

from engine.metrics.adaptability import PATTERN_KEYS
from engine.metrics.language import DEFAULT_LANGUAGE_METRIC
from engine.results.generation_settings import SettingDifference, differences_warning
from engine.results.pairing import (Pairing, PairingError, Side, pair, parse_side,  # noqa: F401
                                    side_runs, system_choice)
from engine.results.records import (LOOSE_METRIC, ItemRecord, is_mixed_like, metric_order,
                                    split_system)
from engine.paired_stats import (holm, mcnemar_exact, mcnemar_sample_size,
                                 paired_bootstrap, paired_mean_sample_size, sign_flip_p)
from engine.results.paired_words import verdict_line
from engine.stats import PAIRED_N_BOOT
from engine.suggest import did_you_mean
from engine.store.generations import generation_texts
from engine.results.replies import cut_rate_warning
from engine.store.items import cut_flags, query_texts

DEFAULT_METRICS = (LOOSE_METRIC, "f1_mirage", "char3_recall", DEFAULT_LANGUAGE_METRIC)
"""The rows shown unless ``metrics`` names others (``all``: every stored one)."""

CONTINUOUS = frozenset({"f1_mirage", "bergen_f1", "char3_recall", "citations"})
"""Scores that are not 0/1 (any other score is binary when all its values are 0 or 1)."""

ADAPTABILITY = (("nv", "NV"), ("ca", "CA"), ("ci", "CI"), ("cm", "CM"), ("overall", "overall"))
LOWER_BETTER = frozenset({"nv", "ci", "cm"})
NEUTRAL = frozenset({"no_answer", "citations"})
"""Scores with no better direction: the verdict says higher/lower."""


# --------------------------------------------------------------------------- rows


@dataclass
class PairedRow:
    """One compared number: a score in one setting, or an adaptability share."""

    metric: str
    setting: str
    kind: str                   # "binary" | "continuous" | "adaptability"
    n: int
    a: float | None
    b: float | None
    delta: float | None         # B − A
    lo: float | None
    hi: float | None
    p: float | None
    test: str
    table: dict | None = None   # binary: both / a_only / b_only / neither
    sd: float | None = None     # standard deviation of the per-item differences
    p_holm: float | None = None
    n_for_power: int | None = None      # items for 80% power at the observed Δ
    n_for_delta: int | None = None      # ... at the user-named Δ
    verdict: str = ""

    @property
    def name(self) -> str:
        return f"{self.metric} ({self.setting})"

    @property
    def direction(self) -> int:
        """+1 higher is better, −1 lower is better, 0 neither."""
        if self.metric in NEUTRAL:
            return 0
        return -1 if self.metric in LOWER_BETTER else 1

    @property
    def significant(self) -> bool:
        return (self.p_holm is not None and self.p_holm < 0.05 and self.lo is not None
                and (self.lo > 0 or self.hi < 0))

    @property
    def better(self) -> int:
        """+1 B significantly better, −1 B significantly worse, 0 no clear difference."""
        if not self.significant:
            return 0
        sign = 1 if self.delta > 0 else -1
        return sign * self.direction if self.direction else 0


@dataclass
class Flip:
    """An item whose binary score differs between A and B."""

    setting: str
    query_rowid: int
    query_id: str
    language: str | None
    source: str | None
    a: float
    b: float
    a_key: str | None
    b_key: str | None
    a_response: str | None = None
    b_response: str | None = None
    query: str | None = None

    @property
    def way(self) -> str:
        return "better" if self.b > self.a else "worse"


@dataclass
class PairedComparison:
    a: Side
    b: Side
    shared_items: int
    shared_queries: int
    only_a: int
    only_b: int
    rows: list[PairedRow]
    flip_metric: str
    flips: list[Flip]
    transitions: dict[str, dict[str, dict[str, int]]]   # mixed setting -> A pattern -> B -> n
    n_boot: int
    seed: int
    delta: float | None = None          # the user-named difference for the power column
    items: list[dict] = field(default_factory=list)     # one row per shared item
    arena: list[dict] = field(default_factory=list)     # engine.arena.ratings.duel, per setting
    differences: list[SettingDifference] = field(default_factory=list)  # generation settings
    cut_warning: str | None = None      # answers cut at the token limit at unlike rates

    @property
    def warning(self) -> str | None:
        """Where the two sides were generated differently, in words (None: alike)."""
        return differences_warning(self.differences, self.a.run == self.b.run,
                                   split_system(self.a.system)[0]
                                   == split_system(self.b.system)[0])

    def flip_groups(self, by: str) -> dict[str, dict[str, int]]:
        """``{group: {"better": n, "worse": n}}`` of the flips by setting, language or
        source."""
        out: dict[str, Counter] = defaultdict(Counter)
        for f in self.flips:
            out[str(getattr(f, by) or "?")][f.way] += 1
        return {k: {"better": v["better"], "worse": v["worse"]} for k, v in sorted(out.items())}

    def row(self, metric: str, setting: str | None = None) -> PairedRow | None:
        for r in self.rows:
            if r.metric == metric and (setting is None or r.setting == setting):
                return r
        return None

    def headline(self) -> PairedRow | None:
        """The row the verdict line speaks of: the flip metric in mixed (else its first
        setting), else the first row."""
        return (self.row(self.flip_metric, "mixed") or self.row(self.flip_metric)
                or (self.rows[0] if self.rows else None))

    def as_json(self) -> dict[str, Any]:
        return {"a": asdict(self.a), "b": asdict(self.b), "shared_items": self.shared_items,
                "shared_queries": self.shared_queries, "only_a": self.only_a,
                "only_b": self.only_b, "n_boot": self.n_boot, "seed": self.seed,
                "named_delta": self.delta,
                "rows": [asdict(r) | {"better": r.better} for r in self.rows],
                "flip_metric": self.flip_metric,
                "flips": [asdict(f) for f in self.flips],
                "flip_groups": {by: self.flip_groups(by)
                                for by in ("setting", "language", "source")},
                "transitions": self.transitions, "arena": self.arena,
                "generation_differences": [d.as_json() for d in self.differences],
                "warning": self.warning, "verdict": verdict_line(self)} | (
                    {"cut_warning": self.cut_warning} if self.cut_warning else {})


def _binary(metric: str, values: np.ndarray) -> bool:
    if metric in CONTINUOUS:
        return False
    v = values[~np.isnan(values)]
    return bool(np.all((v == 0) | (v == 1)))


def _score(item: ItemRecord, metric: str) -> float:
    value = item.scores.get(metric)
    return np.nan if value is None else float(value)


def _wanted_metrics(pairing: Pairing, metrics: Iterable[str] | None) -> list[str]:
    stored = {m for i in pairing.items_a.values() for m in i.scores if not m.startswith("feat:")}
    stored &= {m for i in pairing.items_b.values() for m in i.scores}
    if metrics is None:
        return [m for m in DEFAULT_METRICS if m in stored]
    metrics = list(metrics)
    if metrics == ["all"]:
        return metric_order(stored)
    unknown = [m for m in metrics if m not in stored and m not in dict(ADAPTABILITY)]
    if unknown:
        near = did_you_mean(unknown[0], list(stored)) if len(unknown) == 1 else ""
        raise PairingError(f"no stored score {', '.join(unknown)} on both sides{near} "
                           f"(stored: {', '.join(metric_order(stored))})")
    return [m for m in metrics if m in stored]


def _pattern(items: dict, setting: str, q: int) -> tuple[int, int, int] | None:
    labels = []
    for s in ("base", "oracle", setting):
        item = items.get((s, q))
        value = None if item is None else item.loose
        if value is None:
            return None
        labels.append(value)
    return tuple(labels)


def _indicators(p: tuple[int, int, int]) -> dict[str, float]:
    b, o, m = p
    nv, ca, ci, cm = o * (1 - m), o * m, (1 - o) * (1 - b), (1 - o) * b
    return {"nv": nv, "ca": ca, "ci": ci, "cm": cm, "overall": -nv + ca - ci - cm}


def compare_pair(store, pairing: Pairing, metrics: Iterable[str] | None = None, *,
                 n_boot: int = PAIRED_N_BOOT, n_perm: int = 9_999, seed: int = 0,
                 delta: float | None = None, responses: bool = True) -> PairedComparison:
    """Everything the module docstring lists, for ``metrics`` (default
    :data:`DEFAULT_METRICS`; ``["all"]`` every stored score; adaptability keys ``nv``… pick
    those shares). ``delta`` (a fraction, e.g. 0.05) adds the items for 80% power to detect it.
    """
    wanted = _wanted_metrics(pairing, metrics)
    adapt_keys = [k for k, _ in ADAPTABILITY
                  if metrics is None or list(metrics) == ["all"] or k in list(metrics)]
    queries = pairing.queries
    qpos = {q: i for i, q in enumerate(queries)}
    nq = len(queries)
    columns: list[tuple[str, str, np.ndarray, np.ndarray]] = []   # metric, setting, a, b
    for metric in wanted:
        for setting in pairing.settings:
            a, b = np.full(nq, np.nan), np.full(nq, np.nan)
            for s, q in pairing.shared:
                if s == setting:
                    a[qpos[q]] = _score(pairing.items_a[(s, q)], metric)
                    b[qpos[q]] = _score(pairing.items_b[(s, q)], metric)
            if np.any(~(np.isnan(a) | np.isnan(b))):
                columns.append((metric, setting, a, b))
    transitions: dict[str, dict[str, dict[str, int]]] = {}
    kinds = {}
    for setting in [s for s in pairing.settings if is_mixed_like(s)]:
        pa = {q: _pattern(pairing.items_a, setting, q) for q in queries}
        pb = {q: _pattern(pairing.items_b, setting, q) for q in queries}
        both = [q for q in queries if pa[q] is not None and pb[q] is not None]
        if not both:
            continue
        matrix = {k: dict.fromkeys(PATTERN_KEYS, 0) for k in PATTERN_KEYS}
        for q in both:
            matrix["b{}o{}m{}".format(*pa[q])]["b{}o{}m{}".format(*pb[q])] += 1
        transitions[setting] = matrix
        for key in adapt_keys:
            a, b = np.full(nq, np.nan), np.full(nq, np.nan)
            for q in both:
                a[qpos[q]] = _indicators(pa[q])[key]
                b[qpos[q]] = _indicators(pb[q])[key]
            columns.append((key, setting, a, b))
            kinds[(key, setting)] = "adaptability"

    diffs = np.column_stack([b - a for _, _, a, b in columns]) if columns else np.empty((nq, 0))
    lo, hi = paired_bootstrap(diffs, n_boot=n_boot, seed=seed)
    rows = []
    for j, (metric, setting, a, b) in enumerate(columns):
        have = ~(np.isnan(a) | np.isnan(b))
        av, bv = a[have], b[have]
        d = bv - av
        kind = kinds.get((metric, setting)) or ("binary" if _binary(metric, np.concatenate(
            [av, bv])) else "continuous")
        sd = float(np.std(d, ddof=1)) if len(d) > 1 else None
        row = PairedRow(metric, setting, kind, int(have.sum()), float(av.mean()),
                        float(bv.mean()), float(d.mean()), _num(lo[j]), _num(hi[j]), None, "",
                        sd=sd)
        if kind == "binary":
            test = mcnemar_exact(av, bv)
            row.p, row.table, row.test = test["p"], test["table"], "McNemar exact"
            p10, p01 = test["table"]["a_only"] / row.n, test["table"]["b_only"] / row.n
            row.n_for_power = mcnemar_sample_size(p10, p01)
            row.n_for_delta = None if delta is None else mcnemar_sample_size(p10, p01, delta)
        else:
            row.p = sign_flip_p(av, bv, n_resamples=n_perm, seed=seed)
            row.test = "sign-flip permutation"
            if sd is not None:
                row.n_for_power = paired_mean_sample_size(sd, row.delta)
                row.n_for_delta = None if delta is None else paired_mean_sample_size(sd, delta)
        rows.append(row)
    for row, adjusted in zip(rows, holm([r.p for r in rows])):
        row.p_holm = _num(adjusted)
        row.verdict = _verdict(row)

    binary = [r.metric for r in rows if r.kind == "binary"]
    flip_metric = LOOSE_METRIC if LOOSE_METRIC in binary or not binary else binary[0]
    flips = _flips(store, pairing, flip_metric, responses)
    out = PairedComparison(pairing.a, pairing.b, len(pairing.shared), nq, pairing.only_a,
                           pairing.only_b, rows, flip_metric, flips, transitions, n_boot, seed,
                           delta)
    out.items = _item_rows(pairing, wanted)
    out.differences = pairing.differences
    out.cut_warning = _cut_warning(store, pairing)
    return out


def _cut_warning(store, pairing: Pairing) -> str | None:
    """:func:`engine.results.replies.cut_rate_warning` over the shared items' generations."""
    sides = {"A": pairing.items_a, "B": pairing.items_b}
    keys = [i.generation_key for items in sides.values() for i in items.values()
            if i.generation_key]
    flags = cut_flags(store, keys)
    shared = set(pairing.shared)
    counts = {}
    for name, items in sides.items():
        mine = [flags[i.generation_key] for k, i in items.items()
                if k in shared and i.generation_key in flags]
        counts[name] = (len(mine), sum(f[0] for f in mine), sum(f[1] for f in mine))
    return cut_rate_warning("A", "B", counts)


def _num(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _verdict(row: PairedRow) -> str:
    if row.better > 0:
        return "B better"
    if row.better < 0:
        return "B worse"
    if row.significant:
        return "B higher" if row.delta > 0 else "B lower"
    return "no clear difference"


def _flips(store, pairing: Pairing, metric: str, responses: bool) -> list[Flip]:
    out = []
    for s, q in pairing.shared:
        ia, ib = pairing.items_a[(s, q)], pairing.items_b[(s, q)]
        a, b = ia.scores.get(metric), ib.scores.get(metric)
        if a is None or b is None or round(a) == round(b):
            continue
        out.append(Flip(s, q, ia.query_id, ia.language, ia.source, float(a), float(b),
                        ia.generation_key, ib.generation_key))
    if responses and out:
        texts = generation_texts(store, (k for f in out for k in (f.a_key, f.b_key) if k))
        queries = query_texts(store, (f.query_rowid for f in out))
        for f in out:
            f.a_response, f.b_response = texts.get(f.a_key), texts.get(f.b_key)
            f.query = queries.get(f.query_rowid)
    return out


def _item_rows(pairing: Pairing, metrics: list[str]) -> list[dict]:
    rows = []
    for s, q in pairing.shared:
        ia, ib = pairing.items_a[(s, q)], pairing.items_b[(s, q)]
        row = {"setting": s, "query_id": ia.query_id, "language": ia.language,
               "source": ia.source}
        for m in metrics:
            row[f"a_{m}"] = ia.scores.get(m)
            row[f"b_{m}"] = ib.scores.get(m)
        rows.append(row)
    return rows


def worse_than(c: PairedComparison, metric: str, delta_points: float) -> list[PairedRow]:
    """The rows of ``metric`` where B is significantly worse than A (Holm p < 0.05, CI
    excluding 0) by more than ``delta_points``: the whole CI beyond −delta (beyond +delta for
    a lower-is-better share). :class:`PairingError` when ``metric`` has no row."""
    rows = [r for r in c.rows if r.metric == metric]
    if not rows:
        near = did_you_mean(metric, [r.metric for r in c.rows])
        raise PairingError(f"no compared row for {metric!r}{near} "
                           f"(rows: {', '.join(dict.fromkeys(r.metric for r in c.rows))})")
    d = delta_points / 100
    return [r for r in rows if r.better < 0
            and (r.hi < -d if r.direction > 0 else r.lo > d)]

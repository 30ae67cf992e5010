"""RAG adaptability (MIRAGE, Park et al., §1 "RAG adaptability").

Each item carries three EM_loose labels (0/1): b without context (base), o with the oracle
chunk, and m with noisy context ("mixed": the query's five pool chunks, or in RAG mode a
retriever's top k; the caller says which setting plays mixed). Every item falls in exactly one
of four categories, so the four shares sum to 1:

- noise vulnerability (NV, lower is better): o = 1 and m = 0
- context acceptability (CA, higher is better): o = 1 and m = 1
- context insensitivity (CI, lower is better): o = 0 and b = 0
- context misinterpretation (CM, lower is better): o = 0 and b = 1

The overall score is the reference code's ``-NV + CA - CI - CM``. Unlike the paper, every share
comes with a 95% CI over items (Clopper–Pearson; see :func:`adaptability`). The counts of the eight
(b, o, m) patterns are kept as the reference keeps them, but keyed ``b1o0m1``; the reference
writes ``{b}_{m}_{o}`` (mixed before oracle), an easy thing to misread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from engine.stats import Estimate, clopper_pearson_many

Labels = Sequence[int]
"""One item's (b, o, m) EM_loose labels, each 0 or 1."""

PATTERN_KEYS = tuple(f"b{b}o{o}m{m}" for b in (0, 1) for o in (0, 1) for m in (0, 1))

NOISE_VULNERABLE = "noise_vulnerable"
CONTEXT_ACCEPTABLE = "context_acceptable"
CONTEXT_INSENSITIVE = "context_insensitive"
CONTEXT_MISINTERPRETED = "context_misinterpreted"
CATEGORIES = (NOISE_VULNERABLE, CONTEXT_ACCEPTABLE, CONTEXT_INSENSITIVE, CONTEXT_MISINTERPRETED)

_LABEL_TEMPLATES = {
    NOISE_VULNERABLE: "noise vulnerable: right with oracle, wrong with {mixed}",
    CONTEXT_ACCEPTABLE: "context acceptable: right with oracle and with {mixed}",
    CONTEXT_INSENSITIVE: "context insensitive: wrong with oracle and without context",
    CONTEXT_MISINTERPRETED: "context misinterpreted: right without context, wrong with oracle",
}


def _label(value: Any, what: str) -> int:
    if value in (0, 1):  # also accepts False/True and 0.0/1.0
        return int(value)
    raise ValueError(f"{what} label must be 0 or 1, got {value!r}")


def _checked(item: Labels) -> tuple[int, int, int]:
    if len(item) != 3:
        raise ValueError(f"expected (base, oracle, mixed) labels, got {item!r}")
    b, o, m = item
    return _label(b, "base"), _label(o, "oracle"), _label(m, "mixed")


def pattern_key(b: int, o: int, m: int) -> str:
    """The item's label pattern as ``b1o0m1`` (base, oracle, mixed)."""
    b, o, m = _checked((b, o, m))
    return f"b{b}o{o}m{m}"


def pattern_counts(items: Iterable[Labels]) -> dict[str, int]:
    """How many items show each of the eight (b, o, m) patterns; all eight keys, zeros included.

    Reference: MIRAGE ``evaluation.py`` (``Metrics.get_analysis_and_report``, ``label_count``).
    Deviation: keys read ``b{b}o{o}m{m}``; the reference writes ``{b}_{m}_{o}`` (mixed before
    oracle). The counts are the same.
    """
    counts = dict.fromkeys(PATTERN_KEYS, 0)
    for item in items:
        counts[pattern_key(*_checked(item))] += 1
    return counts


def category_of(b: int, o: int, m: int) -> str:
    """The adaptability category of one item (MIRAGE §1); with the oracle right it depends on
    mixed, with the oracle wrong it depends on base."""
    b, o, m = _checked((b, o, m))
    if o == 1:
        return CONTEXT_ACCEPTABLE if m == 1 else NOISE_VULNERABLE
    return CONTEXT_MISINTERPRETED if b == 1 else CONTEXT_INSENSITIVE


def category_label(category: str, mixed_name: str = "mixed") -> str:
    """A human label for the inspector, e.g. "noise vulnerable: right with oracle, wrong with
    mixed"; ``mixed_name`` names the setting that played mixed (e.g. "retrieved@5")."""
    return _LABEL_TEMPLATES[category].format(mixed=mixed_name)


def _indicators(items: Iterable[Labels]) -> dict[str, np.ndarray]:
    rows = [_checked(item) for item in items]
    arr = np.asarray(rows, dtype=float).reshape(-1, 3)
    b, o, m = arr[:, 0], arr[:, 1], arr[:, 2]
    nv = o * (1 - m)
    ca = o * m
    ci = (1 - o) * (1 - b)
    cm = (1 - o) * b
    return {"nv": nv, "ca": ca, "ci": ci, "cm": cm, "overall": -nv + ca - ci - cm,
            "base": b, "oracle": o, "mixed": m}


def _share(items: Iterable[Labels], name: str) -> float | None:
    col = _indicators(items)[name]
    return float(col.mean()) if len(col) else None


def _share_metric(key: str, name: str, short: str, meaning: str
                  ) -> Callable[[Iterable[Labels]], float | None]:
    """One of the four shares (NV, CA, CI, CM): the share of items whose (base, oracle, mixed)
    pattern ``meaning`` says, documented for the parity table as the other three are."""
    def metric(items: Iterable[Labels]) -> float | None:
        return _share(items, key)

    metric.__name__ = metric.__qualname__ = name
    metric.__doc__ = (
        f"{short} (MIRAGE §1): the share of items {meaning}.\n\n"
        f"Reference: MIRAGE ``evaluation.py`` (``Metrics.get_analysis_and_report``, "
        f"``{key}``).\n"
        "Deviation: not rounded to 5 decimals; a 95% Clopper–Pearson interval and n are added "
        "(the reference reports the share alone).\n")
    return metric


noise_vulnerability = _share_metric(
    "nv", "noise_vulnerability", "NV", "right with the oracle and wrong with mixed")
context_acceptability = _share_metric(
    "ca", "context_acceptability", "CA", "right with the oracle and right with mixed")
context_insensitivity = _share_metric(
    "ci", "context_insensitivity", "CI", "wrong with the oracle and wrong without context")
context_misinterpretation = _share_metric(
    "cm", "context_misinterpretation", "CM", "wrong with the oracle but right without context")


def overall_score(items: Iterable[Labels]) -> float | None:
    """MIRAGE's overall score as its reference code ranks systems: -NV + CA - CI - CM.

    Reference: MIRAGE ``evaluation.py`` (``Metrics.calculate_score``).
    Deviation: computed from unrounded shares (the reference sums shares rounded to 5
    decimals); its 95% interval is 2·CP(CA) − 1, as the four shares sum to 1.
    """
    return _share(items, "overall")


METRIC_KEYS = ("nv", "ca", "ci", "cm", "overall")

OVERALL_MEANING = ("Overall↑ = CA − NV − CI − CM = 2·CA − 100: +100 when every query is right "
                   "both with the oracle chunk and with the mixed context, −100 when none is")
"""What the overall score means, in the words shown beside it wherever it is shown (the Runs
summary, Live's adaptability panel, ``report``'s Table 1, the run page): the reference code's
``-NV + CA - CI - CM`` (METRICS.md §1), which, the four shares summing to 1, is ``2 CA - 1``
(:func:`adaptability`), in percent."""
SETTING_KEYS = ("base", "oracle", "mixed")


@dataclass(frozen=True)
class AdaptabilityReport:
    """NV, CA, CI, CM and overall with 95% CIs (:func:`engine.stats.interval`), accuracy per setting, pattern counts."""

    n: int
    nv: Estimate
    ca: Estimate
    ci: Estimate
    cm: Estimate
    overall: Estimate
    accuracy: dict[str, Estimate]  # "base", "oracle", "mixed" -> EM_loose accuracy
    patterns: dict[str, int]
    mixed_setting: str = "mixed"
    n_boot: int = 1000
    seed: int = 0

    def as_json(self) -> dict[str, Any]:
        """Flat, system-agnostic keys: n, nv, nv_lo, nv_hi, ..., overall_hi (fractions),
        acc_base, acc_base_lo, ..., acc_mixed_hi, patterns, and which setting played mixed."""
        out: dict[str, Any] = {"n": self.n}
        for key in METRIC_KEYS:
            out.update(getattr(self, key).as_dict(key))
        for key in SETTING_KEYS:
            out.update(self.accuracy[key].as_dict(f"acc_{key}"))
        out["patterns"] = dict(self.patterns)
        out["mixed_setting"] = self.mixed_setting
        out["n_boot"] = self.n_boot
        out["seed"] = self.seed
        return out


def adaptability(items: Iterable[Labels], n_boot: int = 1000, seed: int = 0,
                 mixed_setting: str = "mixed") -> AdaptabilityReport:
    """The MIRAGE §1 adaptability report for one system over items of (b, o, m) EM_loose labels.

    NV, CA, CI, CM and the three accuracies are k-of-n rates with Clopper–Pearson intervals;
    overall (= 2 CA - 1, as the four shares sum to 1) gets the matching image of CA's interval
    (:func:`engine.stats.composite_interval`), so no interval has zero width, even at 0 of n or
    n of n. ``mixed_setting`` records which setting filled the mixed slot (e.g. "retrieved@5").
    Every number is a function of the eight pattern counts: see :func:`adaptability_many`.
    """
    counts = pattern_counts(items)
    return adaptability_many([[counts[key] for key in PATTERN_KEYS]], n_boot=n_boot,
                             seed=seed, mixed_setting=mixed_setting)[0]


_BITS = np.array([[b, o, m] for b in (0, 1) for o in (0, 1) for m in (0, 1)])
"""(b, o, m) of each pattern, in :data:`PATTERN_KEYS` order (pattern index = 4b + 2o + m)."""

_SELECT = {
    "nv": (_BITS[:, 1] == 1) & (_BITS[:, 2] == 0),
    "ca": (_BITS[:, 1] == 1) & (_BITS[:, 2] == 1),
    "ci": (_BITS[:, 1] == 0) & (_BITS[:, 0] == 0),
    "cm": (_BITS[:, 1] == 0) & (_BITS[:, 0] == 1),
    "base": _BITS[:, 0] == 1, "oracle": _BITS[:, 1] == 1, "mixed": _BITS[:, 2] == 1,
}
"""Which patterns count as a 1 for each share and each setting's accuracy."""


def adaptability_many(counts: Sequence[Sequence[int]] | np.ndarray, n_boot: int = 1000,
                      seed: int = 0, mixed_setting: str = "mixed") -> list[AdaptabilityReport]:
    """:func:`adaptability` for many groups at once (e.g. a report's languages and sources),
    from each group's eight pattern counts (rows of ``counts``, :data:`PATTERN_KEYS` order).

    Every share and accuracy is k of n (k: the counts of its patterns), the point value k / n
    and the interval Clopper–Pearson (:func:`engine.stats.clopper_pearson_many`, one vectorised
    call for all groups); overall is (2 k_CA - n) / n with the interval
    ``-1 + 2 [CA_lo, CA_hi]``, as :func:`engine.stats.composite_interval` gives for the
    ±1 column. These are the numbers :func:`engine.stats.intervals` gives for the per-item
    columns, computed without building them.
    """
    c = np.asarray(counts, dtype=np.int64).reshape(-1, len(PATTERN_KEYS))
    n = c.sum(axis=1)
    k = {name: c[:, chosen].sum(axis=1) for name, chosen in _SELECT.items()}
    has = n > 0
    bounds: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, kk in k.items():
        lo, hi = np.zeros(len(n)), np.zeros(len(n))
        if has.any():
            lo[has], hi[has] = clopper_pearson_many(kk[has], n[has])
        bounds[name] = lo, hi
    reports = []
    for g in range(len(n)):
        ng = int(n[g])
        est: dict[str, Estimate] = {}
        for name in _SELECT:
            est[name] = (Estimate(int(k[name][g]) / ng, float(bounds[name][0][g]),
                                  float(bounds[name][1][g]), ng) if ng
                         else Estimate(None, None, None, 0))
        if ng:
            ca_lo, ca_hi = bounds["ca"][0][g], bounds["ca"][1][g]
            est["overall"] = Estimate((2 * int(k["ca"][g]) - ng) / ng, float(-1.0 + 2.0 * ca_lo),
                                      float(-1.0 + 2.0 * ca_hi), ng)
        else:
            est["overall"] = Estimate(None, None, None, 0)
        reports.append(AdaptabilityReport(
            n=ng, nv=est["nv"], ca=est["ca"], ci=est["ci"], cm=est["cm"],
            overall=est["overall"], accuracy={key: est[key] for key in SETTING_KEYS},
            patterns={key: int(c[g, i]) for i, key in enumerate(PATTERN_KEYS)},
            mixed_setting=mixed_setting, n_boot=n_boot, seed=seed))
    return reports

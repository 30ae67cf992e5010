"""One unit per metric, wherever a number is written for people (TUI screens, CLI text).

Metrics between 0 and 1 (EM, F1, rates, the adaptability shares NV/CA/CI/CM and the overall
score, retrieval P/R/F1/NDCG, win rates) are written as percentages with one decimal and no
sign: ``30.0 [10.0, 60.0]``; a difference of two of them in percentage points, signed:
``+12.5 pp``. Means of counts (:data:`COUNT_METRICS`, e.g. citations an answer) are plain
numbers with two decimals. JSON output keeps the engine's raw fractions; only text goes
through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.stats import Estimate

COUNT_METRICS = frozenset({"citations"})
"""Means of counts, not rates: written as plain numbers."""
NO_VALUE = "–"


def _is_count(metric: str | None) -> bool:
    return metric is not None and metric.split("@")[0] in COUNT_METRICS


def fmt_value(value: float | None, metric: str | None = None) -> str:
    """``30.0`` for 0.3 (``1.25`` for a count metric); ``–`` without a value."""
    if value is None:
        return NO_VALUE
    return f"{value:.2f}" if _is_count(metric) else f"{100 * value:.1f}"


def fmt_interval(value: float | None, lo: float | None = None, hi: float | None = None,
                 metric: str | None = None) -> str:
    """``30.0 [10.0, 60.0]``; the value alone when an end is missing; ``–`` without a value."""
    text = fmt_value(value, metric)
    if value is not None and lo is not None and hi is not None:
        text += f" [{fmt_value(lo, metric)}, {fmt_value(hi, metric)}]"
    return text


def fmt_estimate(est: Estimate | None, metric: str | None = None) -> str:
    """An :class:`~engine.stats.Estimate` as ``30.0 [10.0, 60.0] n=20``; ``– n=0`` without
    one."""
    if est is None:
        return f"{NO_VALUE} n=0"
    return f"{fmt_interval(est.value, est.lo, est.hi, metric)} n={est.n}"


def fmt_delta(value: float | None, metric: str | None = None, unit: bool = True) -> str:
    """A difference of two 0–1 metrics as ``+12.5 pp`` (``+12.5`` with ``unit=False``, for
    an interval's ends); of a count metric as ``+0.25``; ``–`` without a value."""
    if value is None:
        return NO_VALUE
    if _is_count(metric):
        return f"{value:+.2f}"
    return f"{100 * value:+.1f}" + (" pp" if unit else "")


def fmt_points(value: float | None) -> str:
    """A width or a threshold on a 0–1 metric, unsigned: ``3.0 pp`` for 0.03."""
    return NO_VALUE if value is None else f"{100 * value:.1f} pp"


def fmt_delta_interval(value: float | None, lo: float | None = None,
                       hi: float | None = None, metric: str | None = None) -> str:
    """``+12.5 pp [+2.0, +23.0]``."""
    text = fmt_delta(value, metric)
    if value is not None and lo is not None and hi is not None:
        text += f" [{fmt_delta(lo, metric, False)}, {fmt_delta(hi, metric, False)}]"
    return text

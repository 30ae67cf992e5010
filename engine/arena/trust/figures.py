"""Can this judge be trusted? A pairwise judge's verdicts read against human labels.

Pure functions over :class:`CalibrationItem` (one answer pair, one aspect: every annotator's
label and every order the judge saw). Labels run from -2 (answer A much better) to 2 (answer B
much better). Definitions (RAGChecker, Ru et al. 2024, §4.3 "meta evaluation", and the usual
LLM-as-judge agreement figures, Zheng et al. 2023 §3.3-4.2):

- **human consensus** of a pair: the mean of its annotators' labels; its 3-way class is the
  mean's sign (A better / tie / B better); its 5-point class is the mean rounded to the nearest
  integer, halves towards 0 (a split between "better" and "much better" reads as "better").
- **judge verdict** of a pair: the one order's winner; with both orders judged, the two
  winners combined as the arena does (:func:`engine.arena.judges.orders.combine_orders`: a
  disagreement is a tie, one unparsed order leaves the other); in the ``debiased`` order, the
  side whose probability, averaged over the two orders, leads by at least
  :data:`engine.arena.judges.orders.DEBIAS_TIE_MARGIN` (else a tie), as
  :func:`engine.arena.judges.orders.debiased_winner` decides a battle. **judge score**: P(B better) −
  P(A better) in the pair's own A/B terms, the mean over the orders that carry label
  probabilities; an order without them scores its label (+1, −1, 0).
- **sign accuracy**: the share of pairs whose human consensus is not a tie on which the judge
  names the same side (a judge tie counts as wrong), RAGChecker's "preferred side" accuracy.
- **3-way agreement** and **Cohen's κ** between judge and human 3-way classes
  (``sklearn.metrics.cohen_kappa_score``); **weighted κ** (linear weights) between the human
  5-point class and the judge's, ``round(2 · score)``, on pairs whose every order has
  probabilities (the judge has no 5-point scale otherwise).
- **Pearson** and **Spearman** between the judge score and the mean human label
  (``scipy.stats``).
- **position bias**: the *flip rate*, the share of pairs judged in both orders (both parsed)
  whose two winners differ; and the *first-position win share*, the share of non-tie parsed
  verdicts that chose the answer shown first (0.5 for an unbiased judge on balanced data).
- **unparsed** and **failed** order verdicts are counted and left out of every figure.
- **human–human** (the ceiling): the pair's first two annotators (by name) against each
  other, on the pairs with at least two distinct named annotators (a label whose row named
  nobody is no annotator; its n says how many pairs it rests on): sign agreement on pairs both call non-ties, Cohen's κ on the 3-way classes, Pearson
  and Spearman of their labels.

Every figure is an :class:`engine.stats.Estimate`: the value on the data, a 95% CI and its n.
Shares of pairs or verdicts (:data:`RATES`) get the exact Clopper–Pearson interval, like every
rate in the app; κ and the correlations a percentile bootstrap over pairs (the same resampled
pairs for every figure). The
bootstrap is written here on :func:`engine.stats.resample_indices` rather than taken from
:func:`engine.stats.bootstrap_many` because κ and correlations are undefined on some resamples
(one class only, a constant column): those resamples are dropped instead of making the
interval NaN. κ and the correlations are computed on all resamples at once (sklearn and scipy
take one sample per call; their definitions are followed exactly and the tests compare).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from engine.arena.judges.orders import DEBIAS_TIE_MARGIN, combine_orders
from engine.counts import check_resample_memory
from engine.stats import Estimate, clopper_pearson, resample_indices

CLASSES = ("a", "tie", "b")
_SIGN = {"a": -1, "tie": 0, "b": 1}


@dataclass(frozen=True)
class JudgedOrder:
    """What the judge said when shown the pair in one order."""

    shown: str                  # 'ab': answer A shown first; 'ba': answer B shown first
    winner: str | None          # 'a' | 'b' | 'tie' in the pair's terms; None: no verdict
    score: float | None = None  # P(B better) - P(A better) in the pair's terms (probabilities)
    failed: bool = False        # the request failed (no reply), not an unparsed reply


@dataclass(frozen=True)
class CalibrationItem:
    pair_id: str
    aspect: str
    domain: str | None
    human: tuple[int, ...]              # each annotator's label, by annotator name
    orders: tuple[JudgedOrder, ...]
    debiased: bool = False              # both orders read as the arena's 'debiased' order
    annotators: tuple[int, ...] | None = None   # named annotators' labels (None: all of human)

    @property
    def ceiling_labels(self) -> tuple[int, ...]:
        """The labels the human ceiling compares: those of distinct named annotators."""
        return self.human if self.annotators is None else self.annotators


# --------------------------------------------------------------------------- per pair

def human_mean(item: CalibrationItem) -> float:
    return float(np.mean(item.human))


def human_class(item: CalibrationItem) -> str:
    mean = human_mean(item)
    return "tie" if mean == 0 else ("b" if mean > 0 else "a")


def _round_half_to_zero(x: float) -> int:
    return int(math.copysign(math.ceil(abs(x) - 0.5), x))


def human_five(item: CalibrationItem) -> int:
    return _round_half_to_zero(human_mean(item))


def judge_class(item: CalibrationItem) -> str | None:
    """The judge's verdict on the pair (module docstring); None when no order gave one."""
    winners = [o.winner for o in item.orders]
    if len(winners) == 1:
        return winners[0]
    if item.debiased and all(o.score is not None for o in item.orders):
        # the mean of P(b) - P(a) over the orders is p_b - p_a of orders.debiased_winner
        lead = float(np.mean([o.score for o in item.orders]))
        return "tie" if abs(lead) < DEBIAS_TIE_MARGIN else ("b" if lead > 0 else "a")
    return combine_orders(winners[0], winners[1])[0]


def judge_score(item: CalibrationItem) -> float | None:
    scores = [o.score if o.score is not None else _SIGN[o.winner]
              for o in item.orders if o.winner is not None]
    return float(np.mean(scores)) if scores else None


def judge_five(item: CalibrationItem) -> int | None:
    """round(2 · score) when every parsed order carries probabilities, else None."""
    parsed = [o for o in item.orders if o.winner is not None]
    if not parsed or any(o.score is None for o in parsed):
        return None
    return _round_half_to_zero(2 * judge_score(item))


# --------------------------------------------------------------------------- statistics
# Each statistic takes per-pair columns of shape (rows, n) (the data itself is one row; the
# bootstrap draws are the others) and returns one value per row, NaN where undefined.

def _agreement_weights(k: int, weights: str | None) -> np.ndarray:
    i, j = np.indices((k, k))
    return np.abs(i - j).astype(float) if weights == "linear" else (i != j).astype(float)


def kappa_rows(x: np.ndarray, y: np.ndarray, mask: np.ndarray, labels: Sequence[int],
               weights: str | None = None) -> np.ndarray:
    """Cohen's κ of each row's masked pairs: ``1 - Σ w·O / Σ w·E`` with O the confusion
    matrix, E the outer product of its margins over N, w ``1 - I`` (or ``|i - j|``, linear):
    ``sklearn.metrics.cohen_kappa_score``'s formula (the tests check they agree), written out
    because sklearn takes one sample per call and a bootstrap needs a thousand."""
    k = len(labels)
    code = {v: i for i, v in enumerate(labels)}
    xi = np.vectorize(lambda v: code.get(v, 0), otypes=[int])(np.nan_to_num(x))
    yi = np.vectorize(lambda v: code.get(v, 0), otypes=[int])(np.nan_to_num(y))
    rows = np.broadcast_to(np.arange(x.shape[0])[:, None], x.shape)
    flat = (rows * k * k + xi * k + yi)[mask]
    observed = np.bincount(flat, minlength=x.shape[0] * k * k).reshape(x.shape[0], k, k)
    total = observed.sum(axis=(1, 2)).astype(float)
    with np.errstate(all="ignore"):
        expected = (observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :]
                    / total[:, None, None])
        w = _agreement_weights(k, weights)
        out = 1 - (w * observed).sum(axis=(1, 2)) / (w * expected).sum(axis=(1, 2))
    return np.where(total > 0, out, np.nan)


def pearson_rows(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Pearson's r of each row's masked pairs (``scipy.stats.pearsonr`` per row, vectorised;
    NaN for fewer than two pairs or a constant column)."""
    m = mask.astype(float)
    n = m.sum(axis=1)
    with np.errstate(all="ignore"):
        xm = np.where(mask, x, 0).sum(axis=1) / n
        ym = np.where(mask, y, 0).sum(axis=1) / n
        dx = np.where(mask, x - xm[:, None], 0)
        dy = np.where(mask, y - ym[:, None], 0)
        sxx, syy = (dx * dx).sum(axis=1), (dy * dy).sum(axis=1)
        r = (dx * dy).sum(axis=1) / np.sqrt(sxx * syy)
    return np.where((n >= 2) & (sxx > 1e-12) & (syy > 1e-12), np.clip(r, -1, 1), np.nan)


def spearman_rows(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Spearman's ρ: Pearson's r of the average ranks (``scipy.stats.rankdata``) of each row's
    masked pairs, as ``scipy.stats.spearmanr`` defines it."""
    from scipy.stats import rankdata

    rx = rankdata(np.where(mask, x, np.nan), axis=1, nan_policy="omit")
    ry = rankdata(np.where(mask, y, np.nan), axis=1, nan_policy="omit")
    return pearson_rows(rx, ry, mask)


def _share(hit: np.ndarray, valid: np.ndarray) -> np.ndarray:
    n = valid.sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where(n > 0, (hit & valid).sum(axis=1) / n, np.nan)


def _masks(c: dict) -> dict[str, np.ndarray]:
    judged = ~np.isnan(c["judge"])
    hh = ~np.isnan(c["h1"])
    return {"judged": judged, "nontie": judged & (c["human"] != 0),
            "five": ~np.isnan(c["judge5"]), "scored": ~np.isnan(c["score"]),
            "both": ~np.isnan(c["flip"]), "hh": hh,
            "hh_nontie": hh & (c["h1"] != 0) & (c["h2"] != 0),
            "decisive": c["decisive"] > 0}


_FIGURES: dict[str, tuple[str, Callable[[dict, dict], np.ndarray]]] = {
    # name: (the mask whose pairs it counts as n, statistic)
    "sign_accuracy": ("nontie", lambda c, m: _share(c["judge"] == c["human"], m["nontie"])),
    "agreement": ("judged", lambda c, m: _share(c["judge"] == c["human"], m["judged"])),
    "kappa": ("judged", lambda c, m: kappa_rows(c["human"], c["judge"], m["judged"],
                                                [-1, 0, 1])),
    "weighted_kappa": ("five", lambda c, m: kappa_rows(c["human5"], c["judge5"], m["five"],
                                                       [-2, -1, 0, 1, 2], "linear")),
    "pearson": ("scored", lambda c, m: pearson_rows(c["score"], c["mean"], m["scored"])),
    "spearman": ("scored", lambda c, m: spearman_rows(c["score"], c["mean"], m["scored"])),
    "flip_rate": ("both", lambda c, m: _share(c["flip"] == 1, m["both"])),
    "first_position_wins": ("decisive", lambda c, m: np.where(
        c["decisive"].sum(axis=1) > 0, c["first_wins"].sum(axis=1)
        / np.maximum(c["decisive"].sum(axis=1), 1), np.nan)),
    "human_sign_agreement": ("hh_nontie", lambda c, m: _share(
        np.sign(c["h1"]) == np.sign(c["h2"]), m["hh_nontie"])),
    "human_kappa": ("hh", lambda c, m: kappa_rows(np.sign(c["h1"]), np.sign(c["h2"]), m["hh"],
                                                  [-1, 0, 1])),
    "human_pearson": ("hh", lambda c, m: pearson_rows(c["h1"], c["h2"], m["hh"])),
    "human_spearman": ("hh", lambda c, m: spearman_rows(c["h1"], c["h2"], m["hh"])),
}
FIGURES = tuple(_FIGURES)


def _columns(items: Sequence[CalibrationItem]) -> dict[str, np.ndarray]:
    nan = math.nan
    cols: dict[str, list] = {k: [] for k in ("human", "human5", "mean", "judge", "judge5",
                                             "score", "flip", "first_wins", "decisive",
                                             "h1", "h2")}
    for it in items:
        cls = judge_class(it)
        five, score = judge_five(it), judge_score(it)
        cols["human"].append(_SIGN[human_class(it)])
        cols["human5"].append(human_five(it))
        cols["mean"].append(human_mean(it))
        cols["judge"].append(nan if cls is None else _SIGN[cls])
        cols["judge5"].append(nan if five is None else five)
        cols["score"].append(nan if score is None else score)
        parsed = [o for o in it.orders if o.winner is not None]
        cols["flip"].append(float(parsed[0].winner != parsed[1].winner)
                            if len(it.orders) == 2 and len(parsed) == 2 else nan)
        decisive = [o for o in parsed if o.winner != "tie"]
        cols["decisive"].append(len(decisive))
        cols["first_wins"].append(sum((o.winner == "a") == (o.shown == "ab")
                                      for o in decisive))
        people = it.ceiling_labels
        two = len(people) >= 2
        cols["h1"].append(people[0] if two else nan)
        cols["h2"].append(people[1] if two else nan)
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}


def calibration_figures(items: Sequence[CalibrationItem], *, n_boot: int = 1000,
                        seed: int = 0) -> dict[str, Estimate]:
    """Every figure of the module docstring with its bootstrap 95% CI over pairs and n
    (value None where the figure is undefined: no pair, one class only)."""
    cols = {k: v[None, :] for k, v in _columns(items).items()}
    masks = _masks(cols)
    n = len(items)
    values = {name: float(fn(cols, masks)[0]) if n else math.nan
              for name, (_, fn) in _FIGURES.items()}
    boots: dict[str, list[np.ndarray]] = {name: [] for name in _FIGURES}
    if n > 1:
        check_resample_memory(n_boot, len(_FIGURES), "resamples × figures × 8 bytes")
        for idx in resample_indices(n, n_boot, seed):
            sample = {k: v[0][idx] for k, v in cols.items()}
            sample_masks = _masks(sample)
            for name, (_, fn) in _FIGURES.items():
                if not math.isnan(values[name]):
                    boots[name].append(fn(sample, sample_masks))
    out = {}
    for name, (mask, _) in _FIGURES.items():
        value, count = values[name], int(masks[mask].sum())
        if name == "first_position_wins":      # its n: the verdicts, not the pairs
            count = int(cols["decisive"].sum())
        if name in RATES and not math.isnan(value) and count > 0:
            lo, hi = clopper_pearson(int(round(value * count)), count)
            out[name] = Estimate(value, lo, hi, count)
        else:
            out[name] = _estimate(value, boots[name], count)
    return out


RATES = frozenset({"sign_accuracy", "agreement", "flip_rate", "first_position_wins",
                   "human_sign_agreement"})
"""Figures that are a share of n pairs (or verdicts): their interval is the exact
Clopper–Pearson one (:func:`engine.stats.clopper_pearson`), as for every rate the app shows,
not the percentile bootstrap, which has zero width at 0 of n and n of n."""


def _estimate(value: float, drawn: list[np.ndarray], n: int) -> Estimate:
    """The value with the 2.5 and 97.5 percentiles of its defined bootstrap draws."""
    if math.isnan(value):
        return Estimate(None, None, None, n)
    d = np.concatenate(drawn) if drawn else np.asarray([value])
    d = d[~np.isnan(d)]
    lo, hi = np.percentile(d, [2.5, 97.5]) if len(d) else (value, value)
    return Estimate(value, float(lo), float(hi), n)


def verdict_counts(items: Iterable[CalibrationItem]) -> dict[str, int]:
    """Pairs, order verdicts asked for, and those unparsed or failed (never scored)."""
    items = list(items)
    orders = [o for it in items for o in it.orders]
    return {"pairs": len(items), "orders": len(orders),
            "unparsed": sum(1 for o in orders if o.winner is None and not o.failed),
            "failed": sum(1 for o in orders if o.failed),
            "no_verdict": sum(1 for it in items if judge_class(it) is None)}


def confusion(items: Iterable[CalibrationItem]) -> dict[str, dict[str, int]]:
    """judge class -> human class -> pairs ('none': no judge verdict)."""
    out = {j: dict.fromkeys(CLASSES, 0) for j in (*CLASSES, "none")}
    for it in items:
        out[judge_class(it) or "none"][human_class(it)] += 1
    return out


def breakdown(items: Sequence[CalibrationItem], key: Callable[[CalibrationItem], str | None],
              *, n_boot: int = 1000, seed: int = 0) -> dict[str, dict[str, Estimate]]:
    """The figures per group (a domain, an aspect), groups sorted by name."""
    groups: dict[str, list[CalibrationItem]] = {}
    for it in items:
        groups.setdefault(key(it) or "(none)", []).append(it)
    return {g: calibration_figures(groups[g], n_boot=n_boot, seed=seed) for g in sorted(groups)}


def paired_difference(items_a: Sequence[CalibrationItem], items_b: Sequence[CalibrationItem],
                      *, n_boot: int = 1000, seed: int = 0) -> dict[str, Estimate]:
    """Two calibrations compared on the pairs both judged (two templates, two judges): for
    every figure, B's value minus A's, with a *paired* percentile-bootstrap 95% CI (each
    resample draws the same pairs for both, so the pair-to-pair spread common to both cancels)
    and n, the pairs in common. A CI that excludes 0 says the difference is more than the
    choice of pairs."""
    by_id = {it.pair_id: it for it in items_b}
    common = [(a, by_id[a.pair_id]) for a in items_a if a.pair_id in by_id]
    n = len(common)
    cols_a = {k: v[None, :] for k, v in _columns([a for a, _ in common]).items()}
    cols_b = {k: v[None, :] for k, v in _columns([b for _, b in common]).items()}

    def diff(ca, cb):
        ma, mb = _masks(ca), _masks(cb)
        return {name: fn(cb, mb) - fn(ca, ma) for name, (_, fn) in _FIGURES.items()}

    values = {k: float(v[0]) for k, v in diff(cols_a, cols_b).items()} if n else \
        dict.fromkeys(_FIGURES, math.nan)
    drawn: dict[str, list[np.ndarray]] = {name: [] for name in _FIGURES}
    if n > 1:
        check_resample_memory(n_boot, len(_FIGURES), "resamples × figures × 8 bytes")
        for idx in resample_indices(n, n_boot, seed):
            for name, d in diff({k: v[0][idx] for k, v in cols_a.items()},
                                {k: v[0][idx] for k, v in cols_b.items()}).items():
                drawn[name].append(d)
    return {name: _estimate(value, drawn[name], n) for name, value in values.items()}

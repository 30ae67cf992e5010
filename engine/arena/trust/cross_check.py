"""Every arena on data with gold answers checks its own ranking against the answers' accuracy
(issue 34): the figure beside the judge's trust line on the Leaderboard, in the HTML
leaderboard and in ``arena ratings --json`` under ``cross_check``.

Two figures, both over what the arena judged (its battles' queries):

- **rank agreement**: Spearman's ρ and Kendall's τ (scipy.stats ``spearmanr``,
  ``kendalltau``) between the systems' Elo and their EM_loose accuracy (MIRAGE §1, the label
  behind NV/CA/CI/CM; :func:`engine.metrics.answer.em_loose`), over the rated systems, with n
  systems. Below ρ = 0.5 the line says in words that the ranking disagrees with accuracy.
- **gold pairs**: on battles where exactly one answer matches the gold, how often the judge
  picks it (a tie or the other answer counts as not picking it; unparsed battles are left out),
  with its Clopper–Pearson 95% CI and n.

Accuracy can only check a ranking it can itself tell apart. When every system scores the same
on every query, or fewer than :data:`MIN_CORRECT` of all the arena's answers match the gold
(XQuAD Thai with 135M–270M models: nearly all 0), the line says the accuracy cannot rank them
instead of printing a ρ that would be noise. Otherwise ρ is printed, and when Cochran's Q
(Cochran 1950: do k matched binary samples differ?) over the queries every rated system
answered does not reject equal accuracy at 5% (10 queries rarely do), the line says so, so ρ is
read loosely. Q is written here (scipy has no Cochran's Q; statsmodels is not a
dependency): ``Q = (k−1)(k·ΣC_j² − N²) / (k·N − ΣR_i²)`` on the query × system 0/1 matrix
(C: system totals, R: query totals, N: all), χ² with k−1 degrees of freedom.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from engine.arena.types import Ratings, arena_system, split_arena_system
from engine.results.records import load_items
from engine.stats import Estimate, clopper_pearson, format_interval
from engine.store import Store
from engine.store.runs import RunInfo

METRIC = "em_loose"
DISAGREES_BELOW = 0.5
ALPHA = 0.05
MIN_CORRECT = 5          # fewer right answers than this over the arena: accuracy cannot rank


@dataclass(frozen=True)
class CrossCheck:
    """How the arena's ranking compares with the answers' accuracy (module docstring)."""
    metric: str
    systems: int                        # rated systems with an accuracy
    accuracy: dict[str, float]          # per system, over the arena's queries
    can_rank: bool
    why_not: str | None                 # when accuracy cannot rank the systems
    spearman: float | None
    kendall: float | None
    cochran_p: float | None
    gold_pairs: Estimate                # exactly one answer matches: the judge picks it

    @property
    def disagrees(self) -> bool:
        return self.spearman is not None and self.spearman < DISAGREES_BELOW

    @property
    def line(self) -> str:
        picks = self.gold_pairs
        rate = format_interval(picks.value, picks.lo, picks.hi, digits=1, scale=100, unit="%")
        picked = (f"on {picks.n} pairs where exactly one answer matches the gold, the judge "
                  f"picks it {rate}" if picks.n else
                  "no pair where exactly one answer matches the gold")
        if not self.can_rank:
            return f"cross-check with {self.metric}: {self.why_not}; {picked}"
        text = (f"cross-check with {self.metric} over {self.systems} systems: Elo vs accuracy "
                f"Spearman ρ {self.spearman:.2f}, Kendall τ {self.kendall:.2f}; {picked}")
        if self.cochran_p is not None and self.cochran_p >= ALPHA:
            text += (f" (the accuracies' own differences are not significant: Cochran's Q "
                     f"p={self.cochran_p:.2f}, so read ρ loosely)")
        if self.disagrees:
            text += (f". The ranking DISAGREES with accuracy (ρ < {DISAGREES_BELOW}): the judge "
                     "may reward something other than right answers")
        return text

    def as_json(self) -> dict:
        return {"metric": self.metric, "systems": self.systems,
                "accuracy": {k: round(v, 4) for k, v in self.accuracy.items()},
                "can_rank": self.can_rank, "why_not": self.why_not,
                "spearman": self.spearman, "kendall": self.kendall,
                "cochran_p": self.cochran_p, "disagrees": self.disagrees,
                "disagrees_below": DISAGREES_BELOW, "gold_pairs": self.gold_pairs.as_json(),
                "line": self.line}


def cochran_q(matrix: np.ndarray) -> tuple[float, float] | None:
    """``(Q, p)`` of a blocks × treatments 0/1 matrix (module docstring); None when every
    block is all 0 or all 1 (nothing to compare)."""
    x = np.asarray(matrix, dtype=float)
    k = x.shape[1]
    rows, cols, total = x.sum(axis=1), x.sum(axis=0), x.sum()
    denominator = k * total - float((rows ** 2).sum())
    if k < 2 or denominator <= 0:
        return None
    q = (k - 1) * (k * float((cols ** 2).sum()) - total ** 2) / denominator
    return q, float(stats.chi2.sf(q, k - 1))


def cross_check(store: Store, run: RunInfo, battles, ratings: Ratings) -> CrossCheck | None:
    """The cross-check of an arena's ``battles`` rated as ``ratings``; None when the run's items
    have no EM_loose (no gold answers: long-form or no reference)."""
    queries = {b.query for b in battles}
    labels: dict[tuple[str, int], int] = {}
    for item in load_items(store, run, metrics=[METRIC]):
        if item.query_rowid in queries and item.loose is not None:
            labels[(arena_system(item.system, item.setting), item.query_rowid)] = item.loose
    if not labels:
        return None
    rated = [s for s in ratings.systems if split_arena_system(s.system)[1] is not None
             and any((s.system, q) in labels for q in queries)]
    accuracy = {}
    for s in rated:
        values = [labels[(s.system, q)] for q in queries if (s.system, q) in labels]
        accuracy[s.system] = float(np.mean(values))
    gold = _gold_pairs(battles, labels)
    shared = sorted(q for q in queries if all((s.system, q) in labels for s in rated))
    tested = cochran_q(np.array([[labels[(s.system, q)] for s in rated] for q in shared])) \
        if len(rated) >= 2 and shared else None
    low, high = (min(accuracy.values()), max(accuracy.values())) if accuracy else (0.0, 0.0)
    spread = f"{METRIC} from {100 * low:.0f}% to {100 * high:.0f}%"
    correct = sum(labels[(s.system, q)] for s in rated for q in queries
                  if (s.system, q) in labels)
    why = None
    if len(rated) < 3:
        why = f"only {len(rated)} rated systems: too few to rank"
    elif tested is None:
        why = (f"the accuracy cannot rank these {len(rated)} systems: on every query they all "
               f"score the same ({spread})")
    elif correct < MIN_CORRECT:
        why = (f"the accuracy cannot rank these {len(rated)} systems: {correct} of their "
               f"answers match the gold ({spread})")
    elif low == high:       # a rank correlation with a constant is undefined (scipy: nan)
        why = (f"the accuracy cannot rank these {len(rated)} systems: each scores "
               f"{METRIC} {100 * low:.0f}%")
    elif len({s.elo for s in rated}) == 1:
        why = (f"the ratings do not rank these {len(rated)} systems: each is rated "
               f"{rated[0].elo:.0f}")
    if why is not None:
        return CrossCheck(METRIC, len(rated), accuracy, False, why, None, None,
                          tested[1] if tested else None, gold)
    elo = [s.elo for s in rated]
    acc = [accuracy[s.system] for s in rated]
    rho = float(stats.spearmanr(elo, acc).statistic)
    tau = float(stats.kendalltau(elo, acc).statistic)
    return CrossCheck(METRIC, len(rated), accuracy, True, None, rho, tau, tested[1], gold)


def _gold_pairs(battles, labels: dict[tuple[str, int], int]) -> Estimate:
    picked = n = 0
    for b in battles:
        if b.winner is None:
            continue
        la, lb = labels.get((b.a, b.query)), labels.get((b.b, b.query))
        if la is None or lb is None or la == lb:
            continue
        n += 1
        picked += b.winner == ("a" if la else "b")
    if n == 0:
        return Estimate(None, None, None, 0)
    lo, hi = clopper_pearson(picked, n)
    return Estimate(picked / n, lo, hi, n)

"""Every arena on data with gold answers checks its own ranking against the answers' accuracy:
the figure beside the judge's trust line on the Leaderboard, in the HTML
leaderboard and in ``arena ratings --json`` under ``cross_check``.

Two figures, both over what the arena judged (its battles' queries):

- **rank agreement**: Spearman's ρ and Kendall's τ (scipy.stats ``spearmanr``,
  ``kendalltau``) between the systems' Elo and their EM_loose accuracy (MIRAGE §1, the label
  behind NV/CA/CI/CM; :func:`engine.metrics.answer.em_loose`), over the rated systems, with n
  systems, and ρ's p (the test of ρ = 0 that ``spearmanr`` gives).
- **gold pairs**: on battles where exactly one answer matches the gold, how often the judge
  picks it (a tie or the other answer counts as not picking it; unparsed battles are left out),
  with its Clopper–Pearson 95% CI and n.

The line's verdict is worded by its evidence (:attr:`CrossCheck.verdict`): when Cochran's Q
does not reject equal accuracy at 5%, the accuracies themselves are not told apart, so it says
"too few queries to tell" whatever ρ is (ρ 0.45 over 4 systems is noise when Q's p is 0.42);
only when they are told apart and ρ < :data:`DISAGREES_BELOW` without being significantly
positive does it say the ranking disagrees with accuracy; a significantly positive ρ follows
it; any other ρ "leans" with it, not significantly.

A judge that decides by EM_loose itself (``reference:answer-match``, the default judge on
short gold answers) agrees with accuracy by construction: the line says so instead of
offering its ρ or its picks as evidence (they stay in the JSON).

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

from engine.arena.judges.reference import ANSWER_MATCH, PREFIX
from engine.arena.types import Ratings, arena_system, split_arena_system
from engine.results.records import load_items
from engine.stats import Estimate, clopper_pearson, format_interval
from engine.store import Store
from engine.runs.lookup import RunInfo

METRIC = "em_loose"
DISAGREES_BELOW = 0.5
ALPHA = 0.05
MIN_CORRECT = 5          # fewer right answers than this over the arena: accuracy cannot rank
BY_ACCURACY = PREFIX + ANSWER_MATCH
"""The judge that decides by the run's own EM_loose: its agreement with it is no evidence."""
FOLLOWS, DISAGREES, LEANS, TOO_FEW = ("follows", "disagrees", "leans, not significantly",
                                      "too few queries to tell")


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
    spearman_p: float | None = None     # the test of ρ = 0
    queries: int = 0                    # the queries every rated system answered (Q's n)
    judge: str | None = None            # the arena's judge

    @property
    def by_construction(self) -> bool:
        """The judge decides by the accuracy it is checked against (module docstring)."""
        return (self.judge or "").strip().lower() == BY_ACCURACY

    @property
    def verdict(self) -> str | None:
        """What ρ says, worded by its evidence (module docstring); None when it cannot
        rank or agrees by construction."""
        if not self.can_rank or self.by_construction:
            return None
        if self.cochran_p is None or self.cochran_p >= ALPHA:
            return TOO_FEW
        positive = self.spearman > 0 and self.spearman_p is not None and \
            self.spearman_p < ALPHA
        if self.spearman < DISAGREES_BELOW and not positive:
            return DISAGREES
        return FOLLOWS if positive else LEANS

    @property
    def disagrees(self) -> bool:
        """The ranking disagrees with accuracy, significantly (module docstring)."""
        return self.verdict == DISAGREES

    @property
    def line(self) -> str:
        if self.by_construction:
            return (f"cross-check with {self.metric}: no evidence here: the judge "
                    f"{BY_ACCURACY} decides by the run's own EM_loose, so its ranking agrees "
                    "with accuracy by construction")
        picks = self.gold_pairs
        rate = format_interval(picks.value, picks.lo, picks.hi, digits=1, scale=100, unit="%")
        picked = (f"on {picks.n} pairs where exactly one answer matches the gold, the judge "
                  f"picks it {rate}" if picks.n else
                  "no pair where exactly one answer matches the gold")
        if not self.can_rank:
            return f"cross-check with {self.metric}: {self.why_not}; {picked}"
        text = (f"cross-check with {self.metric} over {self.systems} systems: Elo vs accuracy "
                f"Spearman ρ {self.spearman:.2f}, Kendall τ {self.kendall:.2f}; {picked}")
        q = (f"Cochran's Q {_p(self.cochran_p)} over {self.queries} queries"
             if self.cochran_p is not None else f"{self.queries} queries")
        rho = f"ρ {self.spearman:.2f}, {_p(self.spearman_p)}, n={self.systems} systems"
        verdict = self.verdict
        if verdict == TOO_FEW:
            return (f"{text}; too few queries to tell whether the ranking follows accuracy "
                    f"(the accuracies do not differ significantly: {q})")
        if verdict == DISAGREES:
            return (f"{text}; the ranking disagrees with accuracy ({rho}, while the accuracies "
                    f"differ: {q}): the judge may reward something other than right answers")
        if verdict == FOLLOWS:
            return f"{text}; the ranking follows accuracy ({rho}; {q})"
        return f"{text}; the ranking leans with accuracy, not significantly ({rho}; {q})"

    def as_json(self) -> dict:
        return {"metric": self.metric, "systems": self.systems,
                "accuracy": {k: round(v, 4) for k, v in self.accuracy.items()},
                "can_rank": self.can_rank, "why_not": self.why_not,
                "spearman": self.spearman, "spearman_p": self.spearman_p,
                "kendall": self.kendall, "cochran_p": self.cochran_p, "queries": self.queries,
                "verdict": self.verdict, "disagrees": self.disagrees,
                "by_construction": self.by_construction,
                "disagrees_below": DISAGREES_BELOW, "gold_pairs": self.gold_pairs.as_json(),
                "line": self.line}


def _p(p: float | None) -> str:
    """``p=0.42``, ``p<0.001``; ``p –`` when there is none."""
    if p is None or p != p:
        return "p –"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


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


def cross_check(store: Store, run: RunInfo, battles, ratings: Ratings,
                judge: str | None = None) -> CrossCheck | None:
    """The cross-check of an arena's ``battles`` rated as ``ratings`` by ``judge``; None when
    the run's items have no EM_loose (no gold answers: long-form or no reference)."""
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
    n = f"n={len(queries)} queries"
    spread = f"{METRIC} from {100 * low:.0f}% to {100 * high:.0f}%, {n}"
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
               f"{METRIC} {100 * low:.0f}%, {n}")
    elif len({s.elo for s in rated}) == 1:
        why = (f"the ratings do not rank these {len(rated)} systems: each is rated "
               f"{rated[0].elo:.0f}")
    if why is not None:
        return CrossCheck(METRIC, len(rated), accuracy, False, why, None, None,
                          tested[1] if tested else None, gold, queries=len(shared), judge=judge)
    elo = [s.elo for s in rated]
    acc = [accuracy[s.system] for s in rated]
    rank = stats.spearmanr(elo, acc)
    tau = float(stats.kendalltau(elo, acc).statistic)
    return CrossCheck(METRIC, len(rated), accuracy, True, None, float(rank.statistic), tau,
                      tested[1], gold, spearman_p=float(rank.pvalue), queries=len(shared),
                      judge=judge)


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

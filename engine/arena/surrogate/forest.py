"""MIRAGE-Bench's surrogate judge (Thakur et al.; docs/METRICS.md §2, "Surrogate judge").

The arena's judged ratings are expensive; MIRAGE-Bench shows that a random forest trained on
cheap heuristic features reproduces them (paper: average Kendall τ = 0.909 between the
surrogate's ranking and the judge's Bradley–Terry ranking). Here:

- one training row per contestant (``system | setting``): the mean of each heuristic feature
  (:mod:`engine.arena.surrogate.features`) over the arena's queries; target: its Elo rating (a linear map
  of the Bradley–Terry log-strength, so rankings and R² are the same as on θ);
- a ``RandomForestRegressor`` (scikit-learn, ``random_state=seed``);
- held-out predictions by leave-one-out over the judged contestants (each is predicted by a
  forest fit on all the others), from which :func:`heldout_r2` and :func:`kendall_tau` (the
  predicted ranking against the judged one) are computed;
- their 95% CIs: percentile bootstrap over contestants, resampling the held-out
  (prediction, rating) pairs with replacement ``n_boot`` times. The forests are not refit per
  resample (that would take ``n_boot × n`` fits, minutes); the interval reflects which
  contestants happen to be judged, not the forest's own randomness. With a handful of
  contestants it is wide, and says so with its n;
- feature importances: impurity-based (mean decrease in squared error) of the forest fit on
  every judged contestant;
- contestants with features that were never judged get that forest's prediction and are
  ranked together with the judged ones.

Missing features: a feature missing for some contestants is imputed with its mean over the
contestants that have it (listed in the report); one missing for all is dropped (listed).
Fewer than 4 judged contestants with features is a :class:`ValueError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from engine.arena.ratings.tournaments import DEFAULT_TOURNAMENTS
from engine.stats import Estimate

MIN_SYSTEMS = 4
PAPER_TAU = 0.909
IMPORTANCE_KIND = ("impurity (mean decrease in squared error), forest fit on every judged "
                   "contestant")


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Kendall's τ-b (``scipy.stats.kendalltau``) between two score lists over the same
    systems: 1 for the same ranking, -1 for the reverse. None when undefined (fewer than two
    systems, or one list constant). ``[1, 2, 3]`` against ``[1, 3, 2]`` gives 1/3."""
    from scipy.stats import kendalltau

    if len(a) != len(b):
        raise ValueError(f"kendall_tau needs lists of one length, got {len(a)} and {len(b)}")
    if len(a) < 2:
        return None
    tau = kendalltau(a, b).statistic
    return None if tau is None or not math.isfinite(tau) else float(tau)


def heldout_r2(y_true: Sequence[float], y_pred: Sequence[float]) -> float | None:
    """R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)² of held-out predictions (each ŷ from a model that never
    saw its system); ≤ 0 when the predictions do no better than the mean. None when the
    targets do not vary (or fewer than two)."""
    y = np.asarray(y_true, dtype=float)
    p = np.asarray(y_pred, dtype=float)
    if y.shape != p.shape:
        raise ValueError(f"heldout_r2 needs arrays of one shape, got {y.shape} and {p.shape}")
    if len(y) < 2:
        return None
    total = float(((y - y.mean()) ** 2).sum())
    if total <= 0:
        return None
    return 1.0 - float(((y - p) ** 2).sum()) / total


@dataclass
class SurrogateRow:
    system: str
    judged: bool
    elo: float | None             # the judged rating (None: never judged)
    judged_rank: int | None       # from the leaderboard when given, else 1 + systems rated higher
    predicted: float              # held-out (leave-one-out) for judged, forest fit for unjudged
    predicted_rank: int           # among every contestant, by ``predicted``

    def as_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SurrogateReport:
    rows: list[SurrogateRow]              # by predicted rank
    features: list[str]                   # the columns used, in order
    importances: dict[str, float]         # feature -> importance (sums to 1 unless all 0)
    tau: Estimate                         # Kendall τ, held-out predicted vs judged ranking
    r2: Estimate                          # held-out R²
    n_judged: int
    n_unjudged: int
    n_boot: int
    seed: int
    n_estimators: int
    importance_kind: str = IMPORTANCE_KIND
    heldout: str = "leave-one-out over judged contestants"
    dropped_features: list[str] = field(default_factory=list)   # missing for every contestant
    imputed: dict[str, list[str]] = field(default_factory=dict)  # feature -> contestants
    left_out: list[str] = field(default_factory=list)  # judged, but without features
    boot_used: dict[str, int] = field(default_factory=dict)  # resamples with a defined value
    notes: list[str] = field(default_factory=list)
    source: dict = field(default_factory=dict)   # run / arena, when built from a run

    def as_json(self) -> dict:
        def est(e: Estimate) -> dict:
            return {"value": e.value, "lo": e.lo, "hi": e.hi, "n": e.n}

        return {"rows": [r.as_json() for r in self.rows], "features": self.features,
                "importances": self.importances, "importance_kind": self.importance_kind,
                "tau": est(self.tau), "r2": est(self.r2), "heldout": self.heldout,
                "n_judged": self.n_judged, "n_unjudged": self.n_unjudged,
                "n_boot": self.n_boot, "seed": self.seed, "n_estimators": self.n_estimators,
                "dropped_features": self.dropped_features, "imputed": self.imputed,
                "left_out": self.left_out, "boot_used": self.boot_used, "notes": self.notes,
                "source": self.source, "paper_tau": PAPER_TAU}


def _matrix(X: Mapping[str, Mapping[str, float]], systems: list[str]
            ) -> tuple[np.ndarray, list[str], list[str], dict[str, list[str]]]:
    """Feature matrix over ``systems`` with imputation (module docstring)."""
    names = sorted({f for s in systems for f in X.get(s, {})})

    def value(s, f):
        v = X.get(s, {}).get(f)
        return float(v) if v is not None and math.isfinite(float(v)) else math.nan

    raw = np.array([[value(s, f) for f in names] for s in systems], dtype=float)
    raw = raw.reshape(len(systems), len(names))
    keep, dropped, imputed = [], [], {}
    for j, f in enumerate(names):
        column = raw[:, j]
        missing = np.isnan(column)
        if missing.all():
            dropped.append(f)
            continue
        if missing.any():
            column[missing] = column[~missing].mean()
            imputed[f] = [systems[i] for i in np.flatnonzero(missing)]
        keep.append(j)
    return raw[:, keep], [names[j] for j in keep], dropped, imputed


def _forest(n_estimators: int, seed: int):
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=n_estimators, random_state=seed, n_jobs=1)


def _ordinal_ranks(values: Mapping[str, float]) -> dict[str, int]:
    """1 + the number of systems with a strictly higher value (ties share a rank)."""
    return {s: 1 + sum(1 for o in values.values() if o > v) for s, v in values.items()}


def _bootstrap(y: np.ndarray, p: np.ndarray, n_boot: int, seed: int
               ) -> tuple[tuple[float, float] | None, tuple[float, float] | None, int, int]:
    rng = np.random.default_rng(seed)
    taus, r2s = [], []
    for _ in range(n_boot):
        idx = rng.integers(0, len(y), size=len(y))
        tau = kendall_tau(y[idx], p[idx])
        r2 = heldout_r2(y[idx], p[idx])
        if tau is not None:
            taus.append(tau)
        if r2 is not None:
            r2s.append(r2)

    def ci(values):
        if not values:
            return None
        lo, hi = np.percentile(values, [2.5, 97.5])
        return float(lo), float(hi)

    return ci(taus), ci(r2s), len(taus), len(r2s)


def fit_surrogate(X: Mapping[str, Mapping[str, float]], y: Mapping[str, float], *,
                  n_boot: int = 200, seed: int = 0, n_estimators: int = 200,
                  ranks: Mapping[str, int] | None = None) -> SurrogateReport:
    """Fit MIRAGE-Bench's surrogate judge (module docstring) on per-contestant feature means
    ``X`` (system -> feature -> value) and judged ratings ``y`` (system -> Elo).

    Contestants in ``X`` but not in ``y`` are predicted, not trained on; those in ``y`` without
    features are left out (listed). ``ranks``: the leaderboard's ranks to show (default: by
    ``y``). Deterministic under ``seed``.
    """
    judged = sorted(s for s in y if X.get(s))
    left_out = sorted(s for s in y if not X.get(s))
    unjudged = sorted(s for s in X if s not in y and X.get(s))
    if len(judged) < MIN_SYSTEMS:
        raise ValueError(f"the surrogate needs at least {MIN_SYSTEMS} judged contestants with "
                         f"features, got {len(judged)}"
                         + (f" ({', '.join(judged)})" if judged else "")
                         + (f"; judged without features: {', '.join(left_out)}"
                            if left_out else ""))
    everyone = judged + unjudged
    matrix, names, dropped, imputed = _matrix(X, everyone)
    if not names:
        raise ValueError(f"no feature has a value for any contestant (dropped: "
                         f"{', '.join(dropped) or 'none'})")
    train = matrix[:len(judged)]
    target = np.array([float(y[s]) for s in judged])

    heldout = np.empty(len(judged))
    for i in range(len(judged)):
        rest = np.arange(len(judged)) != i
        heldout[i] = _forest(n_estimators, seed).fit(train[rest], target[rest]).predict(
            train[i:i + 1])[0]
    full = _forest(n_estimators, seed).fit(train, target)
    importances = {f: float(v) for f, v in zip(names, full.feature_importances_)}
    predicted = dict(zip(judged, heldout.tolist()))
    if unjudged:
        predicted.update(zip(unjudged, full.predict(matrix[len(judged):]).tolist()))

    tau_ci, r2_ci, tau_used, r2_used = _bootstrap(target, heldout, n_boot, seed)
    tau = kendall_tau(target, heldout)
    r2 = heldout_r2(target, heldout)
    n = len(judged)
    tau_est = Estimate(tau, *(tau_ci or (None, None)), n)
    r2_est = Estimate(r2, *(r2_ci or (None, None)), n)

    judged_ranks = dict(ranks) if ranks is not None else _ordinal_ranks(
        {s: float(y[s]) for s in judged})
    predicted_ranks = _ordinal_ranks(predicted)
    rows = [SurrogateRow(s, s in y, float(y[s]) if s in y else None, judged_ranks.get(s),
                         float(predicted[s]), predicted_ranks[s]) for s in everyone]
    rows.sort(key=lambda r: (r.predicted_rank, r.system))

    notes = [f"held-out predictions: {n} forests, each fit on the other {n - 1} judged "
             f"contestants; 95% CIs: percentile bootstrap over contestants ({n_boot} "
             f"resamples of the held-out pairs, forests not refit)"]
    if tau is None:
        notes.append("Kendall τ undefined: the held-out predictions (or the ratings) are "
                     "constant")
    if n < 8:
        notes.append(f"only {n} judged contestants: τ and R² are rough")
    for f, who in imputed.items():
        notes.append(f"{f}: missing for {', '.join(who)}; imputed with the column mean")
    if dropped:
        notes.append(f"dropped (missing for every contestant): {', '.join(dropped)}")
    if left_out:
        notes.append(f"judged but without features, left out: {', '.join(left_out)}")
    if unjudged:
        notes.append(f"{len(unjudged)} never-judged contestant"
                     f"{'' if len(unjudged) == 1 else 's'} predicted by the forest fit on "
                     f"every judged one")
    return SurrogateReport(rows, names, importances, tau_est, r2_est, n, len(unjudged), n_boot,
                           seed, n_estimators, dropped_features=dropped, imputed=imputed,
                           left_out=left_out, boot_used={"tau": tau_used, "r2": r2_used},
                           notes=notes)


def surrogate_for_run(store, run, arena_name: str | None = None, *,
                      n_boot: int = DEFAULT_TOURNAMENTS, seed: int = 0,
                      n_estimators: int = 200) -> SurrogateReport:
    """The surrogate for one run's arena (``run``: an :class:`engine.runs.lookup.RunInfo`;
    ``arena_name``; None: the only arena, else the
    latest pairwise one, as :func:`engine.arena.ratings.battles.resolve_arena` picks): its battles give
    Elo ratings (:func:`engine.arena.ratings.leaderboard.compute_ratings`, ``n_boot`` tournaments), the
    features stored by :func:`engine.arena.surrogate.features.compute_features` are averaged per
    contestant over the queries the arena judged, and :func:`fit_surrogate` does the rest.
    :class:`engine.arena.ratings.battles.ArenaNotFound` (a LookupError) for an unknown arena."""
    from engine.arena.ratings.battles import battles_of, resolve_arena
    from engine.arena.surrogate.features import feature_values
    from engine.arena.ratings.leaderboard import compute_ratings

    arena = resolve_arena(store, run, arena_name)
    battles = battles_of(store, arena.id)
    ratings = compute_ratings(battles, n_boot=n_boot, seed=seed)
    queries = sorted({b.query for b in battles})
    values = feature_values(store, run, queries=queries)
    # A feature with no value for a contestant stays None, so that one missing for every
    # contestant is reported as dropped rather than silently absent.
    X = {system: {f: (float(np.mean(kept)) if (kept := [v for v in vals if v is not None])
                      else None) for f, vals in per.items()}
         for system, per in values.items()}
    y = {r.system: r.elo for r in ratings.systems}
    report = fit_surrogate(X, y, n_boot=n_boot, seed=seed, n_estimators=n_estimators,
                           ranks={r.system: r.rank for r in ratings.systems})
    report.notes += [f"ratings: {note}" for note in ratings.notes]
    report.source = {"run": run.name, "arena": arena.name, "queries": len(queries),
                     "battles": ratings.n_battles}
    return report


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _estimate(e: Estimate, used: int | None) -> str:
    text = _num(e.value)
    if e.lo is not None and e.hi is not None:
        text += f" [{e.lo:.3f}, {e.hi:.3f}]"
    return text + f" n={e.n}" + (f" ({used} resamples)" if used is not None else "")


def format_surrogate(report: SurrogateReport) -> str:
    """The surrogate as text: contestants by predicted rank, τ and R² with CIs and n, the
    feature importances and the notes."""
    lines = []
    if report.source:
        src = report.source
        lines.append(f"Surrogate judge (MIRAGE-Bench) for run {src.get('run')}, arena "
                     f"{src.get('arena')}: {src.get('queries')} queries, "
                     f"{src.get('battles')} battles")
    else:
        lines.append("Surrogate judge (MIRAGE-Bench)")
    width = max([len("system")] + [len(r.system) for r in report.rows])
    lines.append(f"{'pred':>4}  {'system':<{width}}  {'judged Elo':>10}  {'rank':>4}  "
                 f"{'predicted':>9}")
    for r in report.rows:
        elo = "unjudged" if r.elo is None else f"{r.elo:.1f}"
        rank = "–" if r.judged_rank is None else str(r.judged_rank)
        lines.append(f"{r.predicted_rank:>4}  {r.system:<{width}}  {elo:>10}  {rank:>4}  "
                     f"{r.predicted:>9.1f}")
    lines.append("")
    lines.append(f"Kendall τ (held-out predicted vs judged ranking): "
                 f"{_estimate(report.tau, report.boot_used.get('tau'))}  "
                 f"(paper average {PAPER_TAU})")
    lines.append(f"held-out R²: {_estimate(report.r2, report.boot_used.get('r2'))}")
    lines.append(f"feature importances, {report.importance_kind}:")
    for f, v in sorted(report.importances.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {v:6.3f}  {f}")
    if report.notes:
        lines.append("notes:")
        lines += [f"  - {n}" for n in report.notes]
    return "\n".join(lines)

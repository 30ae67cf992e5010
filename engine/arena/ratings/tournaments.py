"""Bootstrap "tournaments" for the arena's ratings (MIRAGE-Bench §2, docs/METRICS.md).

A tournament resamples the queries with replacement (every battle of a drawn query comes
along, as many times as the query was drawn) and refits Bradley–Terry; the 2.5/97.5
percentiles of a system's ratings over the tournaments are its 95% CI. Queries, not battles,
are resampled because the battles of one query share its difficulty. (FastChat resamples
battles; RAG-QA Arena's battles are one per query and reference, so there the two agree.)

The fast path never rebuilds a battle list. The verdicts are summed once into one win-count
matrix per query, stored as a sparse (queries × systems²) matrix; a tournament's win matrix is
then ``counts @ per_query`` where ``counts[q]`` is how many times query q was drawn (a bincount
of the resampled indices), and the fit runs on that small dense matrix. The systems' win rates
per tournament come from the same matrices (:func:`tournament_win_rates`), so the Elo and the
win-rate CIs rest on the same resamples.
:func:`bootstrap_thetas_pairs` is the slow reference (the reference code's way: rebuild the
list of (winner, loser) pairs for every tournament and fit it); both see the same resamples.

Resamples come from :func:`engine.stats.resample_indices`, the same seeded draws as every
other bootstrap here: the same seed gives the same tournaments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import sparse

from engine.arena.ratings.bradley_terry import (DEFAULT_ALPHA, bradley_terry_fit,
                                                bradley_terry_fit_pairs, doubled_pairs)
from engine.arena.types import Battle
from engine.counts import check_resample_memory
from engine.stats import TOURNAMENTS, resample_indices

DEFAULT_TOURNAMENTS = TOURNAMENTS
"""The app's and the CLI's one setting (:data:`engine.stats.TOURNAMENTS`)."""
_SCORE = {"a": 1.0, "b": 0.0, "tie": 0.5}


@dataclass(frozen=True)
class EncodedBattles:
    """Parsed battles as index arrays: system i vs j on query q, score 1 (i won), 0.5, 0."""

    systems: list[str]          # sorted names; index into the matrices
    queries: list[int]          # distinct query rowids in first-seen order; index = q
    q: np.ndarray               # per battle: index into ``queries``
    i: np.ndarray               # per battle: system index of side a
    j: np.ndarray               # per battle: system index of side b
    score: np.ndarray           # per battle: a's share of the win
    parse_failures: int         # battles left out (winner None)

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    def outcomes(self, mask: np.ndarray | None = None) -> list[tuple[int, int, float]]:
        sel = slice(None) if mask is None else mask
        return list(zip(self.i[sel].tolist(), self.j[sel].tolist(), self.score[sel].tolist()))


def encode_battles(battles: Sequence[Battle]) -> EncodedBattles:
    """Index the parsed battles; a battle whose winner is None is counted, not kept.

    Raises ValueError for a winner other than 'a', 'b', 'tie' or None, or a system against
    itself."""
    kept: list[Battle] = []
    failures = 0
    for battle in battles:
        if battle.winner is None:
            failures += 1
            continue
        if battle.winner not in _SCORE:
            raise ValueError(f"battle winner must be 'a', 'b', 'tie' or None, "
                             f"got {battle.winner!r}")
        if battle.a == battle.b:
            raise ValueError(f"a system cannot battle itself: {battle.a!r} "
                             f"(query {battle.query})")
        kept.append(battle)
    systems = sorted({s for b in kept for s in (b.a, b.b)})
    index = {s: k for k, s in enumerate(systems)}
    queries = list(dict.fromkeys(b.query for b in kept))
    q_index = {q: k for k, q in enumerate(queries)}
    return EncodedBattles(
        systems=systems, queries=queries,
        q=np.array([q_index[b.query] for b in kept], dtype=np.int64),
        i=np.array([index[b.a] for b in kept], dtype=np.int64),
        j=np.array([index[b.b] for b in kept], dtype=np.int64),
        score=np.array([_SCORE[b.winner] for b in kept], dtype=float),
        parse_failures=failures)


def per_query_wins(enc: EncodedBattles) -> sparse.csr_matrix:
    """Row q is query q's win-count matrix, flattened: ``[q, i*S + j]`` = wins of i over j
    (ties 0.5 each way). ``per_query_wins(enc).sum(axis=0)`` is the whole data's matrix."""
    s = enc.n_systems
    rows = np.concatenate([enc.q, enc.q])
    cols = np.concatenate([enc.i * s + enc.j, enc.j * s + enc.i])
    vals = np.concatenate([enc.score, 1.0 - enc.score])
    keep = vals != 0.0
    matrix = sparse.coo_matrix((vals[keep], (rows[keep], cols[keep])),
                               shape=(enc.n_queries, s * s))
    return matrix.tocsr()        # duplicates summed


def total_wins(enc: EncodedBattles) -> np.ndarray:
    """The dense win-count matrix of all parsed battles."""
    s = enc.n_systems
    return np.asarray(per_query_wins(enc).sum(axis=0)).reshape(s, s)


def resample_counts(n_queries: int, n_boot: int = DEFAULT_TOURNAMENTS,
                    seed: int = 0) -> np.ndarray:
    """(n_boot, n_queries): how many times each tournament drew each query."""
    check_resample_memory(n_boot, 2 * n_queries, "tournaments × 2 × queries × 8 bytes")
    chunks = []
    for idx in resample_indices(n_queries, n_boot, seed):
        offsets = np.arange(idx.shape[0])[:, None] * n_queries
        chunks.append(np.bincount((idx + offsets).ravel(), minlength=idx.size)
                      .reshape(idx.shape[0], n_queries))
    return np.concatenate(chunks) if chunks else np.zeros((0, n_queries), dtype=np.int64)


def tournament_wins(enc: EncodedBattles, n_boot: int = DEFAULT_TOURNAMENTS,
                    seed: int = 0) -> np.ndarray:
    """(n_boot, S, S): each tournament's win-count matrix (ties 0.5 each way)."""
    s = enc.n_systems
    if n_boot == 0 or enc.n_queries == 0:
        return np.zeros((n_boot, s, s))
    check_resample_memory(n_boot, 2 * enc.n_queries + 2 * s * s,
                          "tournaments × (2 × queries + 2 × systems²) × 8 bytes")
    per_query = per_query_wins(enc)
    counts = resample_counts(enc.n_queries, n_boot, seed).astype(float)
    # (per_query.T @ counts.T).T: a sparse-times-dense product, one win matrix per tournament
    return np.asarray(per_query.T @ counts.T).T.reshape(n_boot, s, s)


def fit_tournaments(wins: np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """(n_boot, S) BT log-strengths from :func:`tournament_wins`' matrices. Tournaments that
    drew the same win matrix share one fit (the fit is a function of the matrix alone): with
    few queries most of them do, e.g. 15 distinct matrices in 1,000 tournaments of 4 queries."""
    thetas = np.zeros(wins.shape[:2])
    if not wins.any():
        return thetas
    n_boot, s = wins.shape[:2]
    distinct, which = np.unique(wins.reshape(n_boot, s * s), axis=0, return_inverse=True)
    fitted = np.array([bradley_terry_fit(w.reshape(s, s), alpha) for w in distinct])
    return fitted[which.reshape(-1)]


def bootstrap_thetas(enc: EncodedBattles, n_boot: int = DEFAULT_TOURNAMENTS, seed: int = 0,
                     alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """(n_boot, S) BT log-strengths, one row per tournament (the fast path)."""
    return fit_tournaments(tournament_wins(enc, n_boot, seed), alpha)


def tournament_win_rates(wins: np.ndarray) -> np.ndarray:
    """(n_boot, S): each system's (wins + ties/2) / battles per tournament, NaN where the
    tournament drew none of its battles. A battle adds 1 to ``wins[i, j] + wins[j, i]``, so a
    system's battles are its row sum plus its column sum."""
    won = wins.sum(axis=2)
    battles = won + wins.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(battles > 0, won / battles, np.nan)


def bootstrap_thetas_pairs(enc: EncodedBattles, n_boot: int = DEFAULT_TOURNAMENTS,
                           seed: int = 0, alpha: float = DEFAULT_ALPHA,
                           tournaments: Sequence[int] | None = None) -> np.ndarray:
    """The slow reference: for each tournament, the list of (winner, loser) pairs of the drawn
    queries' battles, fitted with :func:`bradley_terry_fit_pairs`.

    Same resamples as :func:`bootstrap_thetas`; ``tournaments`` picks a subset of them (by
    number) and the result then has one row per picked tournament."""
    picked = list(range(n_boot)) if tournaments is None else list(tournaments)
    by_query: list[list[tuple[int, int, float]]] = [[] for _ in range(enc.n_queries)]
    for q, i, j, score in zip(enc.q.tolist(), enc.i.tolist(), enc.j.tolist(),
                              enc.score.tolist()):
        by_query[q].append((i, j, score))
    rows = np.concatenate(list(resample_indices(enc.n_queries, n_boot, seed))) \
        if n_boot and enc.n_queries else np.zeros((0, 0), dtype=np.int64)
    thetas = np.zeros((len(picked), enc.n_systems))
    for k, t in enumerate(picked):
        pairs: list[tuple[int, int]] = []
        for q in rows[t]:
            pairs += doubled_pairs(by_query[q])
        thetas[k] = bradley_terry_fit_pairs(enc.n_systems, pairs, alpha)
    return thetas

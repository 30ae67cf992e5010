"""Two systems compared (:mod:`engine.results.paired`), with their duel in their run's arena
when both are of one run that has one: P(θ_A > θ_B) over bootstrap tournaments and the Elo difference
with its 95% CI (:func:`arena_duel`). :func:`compare` is what ``mirage-tui compare``, the
Compare screen and the comparison page compute."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from engine.arena.ratings.battles import ArenaNotFound, load_battles
from engine.arena.ratings.bradley_terry import ELO_PER_NAT, bradley_terry_fit
from engine.arena.ratings.tournaments import bootstrap_thetas, encode_battles, total_wins
from engine.arena.types import arena_system
from engine.results.paired import PairedComparison, compare_pair
from engine.results.pairing import Pairing, pair
from engine.runs.lookup import RunInfo


def compare(store, a_spec: str, b_spec: str, runs: tuple[RunInfo, RunInfo],
            metrics: Iterable[str] | None = None, **options) -> PairedComparison:
    """:func:`~engine.results.pairing.pair` then :func:`~engine.results.paired.compare_pair`,
    and the sides' :func:`arena_duel` (at most 1,000 tournaments, the comparison's seed).
    ``runs``: the sides' runs as the caller looked them up
    (:func:`~engine.results.pairing.side_runs`)."""
    pairing = pair(store, a_spec, b_spec, runs)
    out = compare_pair(store, pairing, metrics, **options)
    out.arena = arena_duel(store, pairing, n_boot=min(out.n_boot, 1000), seed=out.seed)
    return out


def arena_duel(store, pairing: Pairing, arena: str | None = None, n_boot: int = 1000,
               seed: int = 0) -> list[dict]:
    """For two systems of one run with a pairwise arena: per setting where both are
    contestants, P(θ_A > θ_B) over the bootstrap tournaments (queries resampled, Bradley–Terry
    refitted on each: :func:`engine.arena.ratings.tournaments.bootstrap_thetas`) and the Elo difference
    B − A with its percentile 95% CI (Elo = 400·θ/ln 10, :func:`engine.arena.ratings.bradley_terry.
    elo_scale`). Empty when the sides are in different runs or the run has no arena."""
    if pairing.a.run != pairing.b.run:
        return []
    try:
        battles = load_battles(store, pairing.run_a, arena)
    except ArenaNotFound:
        return []
    enc = encode_battles(battles)
    if enc.n_queries == 0:
        return []
    out = []
    thetas = None
    for setting in pairing.settings:
        ca, cb = arena_system(pairing.a.system, setting), arena_system(pairing.b.system, setting)
        if ca not in enc.systems or cb not in enc.systems:
            continue
        if thetas is None:
            thetas = bootstrap_thetas(enc, n_boot, seed)
            theta = bradley_terry_fit(total_wins(enc))
        ia, ib = enc.systems.index(ca), enc.systems.index(cb)
        d = ELO_PER_NAT * (thetas[:, ib] - thetas[:, ia])
        lo, hi = np.percentile(d, [2.5, 97.5])
        out.append({"setting": setting, "p_a_stronger": float(np.mean(d < 0)),
                    "elo_delta": float(ELO_PER_NAT * (theta[ib] - theta[ia])), "elo_lo": float(lo), "elo_hi": float(hi),
                    "tournaments": n_boot, "queries": enc.n_queries})
    return out

"""The arena's leaderboard: Bradley–Terry Elo with bootstrap CIs (MIRAGE-Bench §2, RAG-QA Arena
§4 of docs/METRICS.md), laid out the way FastChat's ``elo_analysis.py`` leaderboard is read.

- Elo: the fit on all parsed battles, 400·θ/ln 10 + 1000 (the systems' mean is 1000).
- 95% CI: the 2.5/97.5 percentiles of Elo over ``n_boot`` tournaments (queries resampled with
  replacement, :mod:`engine.arena.ratings.tournaments`).
- Win rate: (wins + ties/2) / battles, with the 2.5/97.5 percentiles of the same quantity over
  the same tournaments as its 95% CI (a tournament that drew none of a system's battles is left
  out of that system's percentiles). Where those percentiles have zero width (every battle
  won, lost or tied: each tournament gives the same rate) the interval is the Clopper–Pearson
  interval of round(wins + ties/2) of the battles instead, so 3 wins of 3 battles is
  ``100.0% [29.2, 100.0] n=3``, not ``[100.0, 100.0]``; over too few queries (below) it is
  that exact interval for every system.
- Too few queries: a bootstrap over fewer than :data:`MIN_INTERVAL_QUERIES` queries has at most
  3 distinct resamples (2 queries: both twice, or each once), so its percentiles are not an
  interval (``+39/-0``). Then no Elo CI is given (``–``, None in JSON; a note says "too few
  queries for an interval") and every system shares rank 1; the win rates get their exact
  intervals.
- Rank: 1 + the number of systems whose CI lower bound is above this system's upper bound, so
  systems whose CIs overlap share a rank (FastChat's CI-aware rank).
- Ties count as half wins in the fit and in the win rates; battles whose verdict could not be
  parsed are left out and counted.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
from scipy.sparse import csgraph

from engine.arena.ratings.bradley_terry import DEFAULT_ALPHA, bradley_terry_fit_method, elo_scale
from engine.arena.ratings.tournaments import (DEFAULT_TOURNAMENTS, EncodedBattles, encode_battles,
                                              fit_tournaments, total_wins, tournament_win_rates,
                                              tournament_wins)
from engine.arena.types import Battle, Ratings, SystemRating, elo_ci_text
from engine.stats import Estimate, clopper_pearson_many
from engine.text_fit import cell_len, fit_table, wrap_lines


# Elo points: bounds that differ by float rounding only (all-tie arenas) do not separate ranks
RANK_TOLERANCE = 1e-6
MIN_INTERVAL_QUERIES = 3
"""Fewer queries than this give no Elo interval (module docstring)."""

def compute_ratings(battles: Sequence[Battle], *, n_boot: int = DEFAULT_TOURNAMENTS,
                    seed: int = 0, alpha: float = DEFAULT_ALPHA) -> Ratings:
    """The leaderboard of some battles. The same battles and seed give the same Ratings.

    Raises ValueError when no battle has a parsed verdict (nothing to rate)."""
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    enc = encode_battles(battles)
    if enc.n_systems == 0:
        raise ValueError(f"no battles to rate: {len(battles)} given, "
                         f"{enc.parse_failures} of them parse failures")
    s = enc.n_systems
    wins = total_wins(enc)
    theta, method = bradley_terry_fit_method(wins, alpha)
    elo = elo_scale(theta)
    decisive_i, decisive_j, tie_count = _record_matrices(enc)
    meetings = decisive_i + decisive_i.T + tie_count
    # as SystemRating.win_rate; every rated system has battles
    rate = (decisive_i.sum(axis=1) + 0.5 * tie_count.sum(axis=1)) / meetings.sum(axis=1)
    if n_boot:
        boot_wins = tournament_wins(enc, n_boot, seed)
        lo, hi = np.percentile(elo_scale(fit_tournaments(boot_wins, alpha)), [2.5, 97.5],
                               axis=0)
        rate_lo, rate_hi = _percentiles_where_drawn(tournament_win_rates(boot_wins))
    else:
        lo, hi = elo.copy(), elo.copy()
        rate_lo, rate_hi = rate.copy(), rate.copy()
    interval = not (n_boot and enc.n_queries < MIN_INTERVAL_QUERIES)
    if n_boot:
        rate_lo, rate_hi = _exact_where_degenerate(
            rate_lo, rate_hi, decisive_i.sum(axis=1) + 0.5 * tie_count.sum(axis=1),
            meetings.sum(axis=1), every=not interval)

    rows = []
    for k, name in enumerate(enc.systems):
        rank = 1 + int(np.sum(lo > hi[k] + RANK_TOLERANCE)) if interval else 1
        rows.append(SystemRating(
            system=name, rank=rank, elo=float(elo[k]),
            elo_lo=float(lo[k]) if interval else None,
            elo_hi=float(hi[k]) if interval else None, battles=int(meetings[k].sum()),
            wins=int(decisive_i[k].sum()), ties=int(tie_count[k].sum()),
            losses=int(decisive_j[k].sum()), win_rate_lo=_or_none(rate_lo[k]),
            win_rate_hi=_or_none(rate_hi[k])))
    rows.sort(key=lambda r: (r.rank, -r.elo, r.system))

    win_fraction = [[None if meetings[a, b] == 0 else float(wins[a, b] / meetings[a, b])
                     for b in range(s)] for a in range(s)]
    return Ratings(
        systems=rows, order=list(enc.systems), win_fraction=win_fraction,
        battle_counts=meetings.astype(int).tolist(), n_queries=enc.n_queries,
        n_battles=len(enc.q), parse_failures=enc.parse_failures, n_boot=n_boot, seed=seed,
        notes=_notes(battles, enc, rows, wins, method, alpha, n_boot))


def rank_line(ranks: Iterable[int]) -> str:
    """What the rank means (the module docstring's FastChat CI-aware rank), and how many share
    rank 1: the line under every rating table (the Leaderboard, ``arena ratings``, the
    leaderboard page)."""
    top = sum(rank == 1 for rank in ranks)
    return ("rank: 1 + the systems whose Elo 95% CI lies wholly above; overlapping CIs share a "
            "rank" + (f" ({top} share rank 1)" if top > 1 else ""))


def format_leaderboard(ratings: Ratings, width: int | None = None) -> str:
    """A plain-text table: rank, system, Elo, +x/-y (95% CI), battles, win rate with its 95%
    CI and n; then the notes and how the numbers were made. Within ``width`` cells when given
    (the table's cells wrap, :func:`engine.text_fit.fit_table`; the lines under it wrap at
    words)."""
    name_width = max([len("system")] + [len(r.system) for r in ratings.systems])
    cis = [elo_ci_text(r.elo, r.elo_lo, r.elo_hi) for r in ratings.systems]
    ci_width = max([len("95% CI")] + [len(c) for c in cis])
    rates = [Estimate(r.win_rate, r.win_rate_lo, r.win_rate_hi, r.battles).format_pct()
             for r in ratings.systems]
    lines = [f"{'rank':>4}  {'system':<{name_width}}  {'Elo':>5}  {'95% CI':<{ci_width}}  "
             f"{'battles':>7}  win rate"]
    for r, ci, rate in zip(ratings.systems, cis, rates):
        lines.append(f"{r.rank:>4}  {r.system:<{name_width}}  {r.elo:>5.0f}  "
                     f"{ci:<{ci_width}}  {r.battles:>7}  {rate}")
    if width is not None and max(cell_len(line) for line in lines) > width:
        rows = [["rank", "system", "Elo", "95% CI", "battles", "win rate"]]
        rows += [[str(r.rank), r.system, f"{r.elo:.0f}", ci, str(r.battles), rate]
                 for r, ci, rate in zip(ratings.systems, cis, rates)]
        lines = fit_table(rows, {0, 2, 4}, width, keys=2)
    lines.append(rank_line(r.rank for r in ratings.systems))
    lines += [f"note: {n}" for n in ratings.notes]
    lines.append(f"{ratings.n_boot} tournaments over {ratings.n_queries} queries, "
                 f"seed {ratings.seed}; ties count as half wins; "
                 f"{ratings.parse_failures} parse failures left out")
    return wrap_lines("\n".join(lines), width)


def _percentiles_where_drawn(rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2.5/97.5 percentiles of each column over its non-NaN rows (NaN: never drawn)."""
    lo = np.full(rates.shape[1], np.nan)
    hi = lo.copy()
    drawn = ~np.isnan(rates).all(axis=0)
    if drawn.any():
        lo[drawn], hi[drawn] = np.nanpercentile(rates[:, drawn], [2.5, 97.5], axis=0)
    return lo, hi


def _exact_where_degenerate(lo: np.ndarray, hi: np.ndarray, won: np.ndarray,
                            battles: np.ndarray, every: bool) -> tuple[np.ndarray, np.ndarray]:
    """The win rates' percentile ends, replaced by the Clopper–Pearson interval of
    round(``won``) of ``battles`` where they have zero width or were never drawn (NaN), or
    for ``every`` system (too few queries: module docstring)."""
    cp_lo, cp_hi = clopper_pearson_many(np.minimum(np.rint(won), battles), battles)
    exact = np.ones(len(lo), dtype=bool) if every else ~(hi - lo > 0)
    return np.where(exact, cp_lo, lo), np.where(exact, cp_hi, hi)


def _or_none(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _record_matrices(enc: EncodedBattles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts per ordered pair: decisive wins of i over j, the same seen from j (its
    transpose), and ties (symmetric)."""
    s = enc.n_systems
    won = np.zeros((s, s), dtype=np.int64)
    ties = np.zeros((s, s), dtype=np.int64)
    a_won = enc.score == 1.0
    b_won = enc.score == 0.0
    tied = enc.score == 0.5
    np.add.at(won, (enc.i[a_won], enc.j[a_won]), 1)
    np.add.at(won, (enc.j[b_won], enc.i[b_won]), 1)
    np.add.at(ties, (enc.i[tied], enc.j[tied]), 1)
    np.add.at(ties, (enc.j[tied], enc.i[tied]), 1)
    return won, won.T, ties


def _notes(battles: Sequence[Battle], enc: EncodedBattles, rows: list[SystemRating],
           wins: np.ndarray, method: str, alpha: float, n_boot: int) -> list[str]:
    notes = []
    rated = set(enc.systems)
    unrated = sorted({s for b in battles for s in (b.a, b.b)} - rated)
    for name in unrated:
        notes.append(f"{name}: no parsed battle (every verdict failed to parse): left out")
    if all(r.wins == 0 and r.losses == 0 for r in rows):
        notes.append("every parsed battle was a tie: all ratings are equal")
    elif enc.n_systems > 1:
        n_weak = csgraph.connected_components(wins > 0, connection="weak")[0]
        n_strong = csgraph.connected_components(wins > 0, connection="strong")[0]
        if n_strong > 1:
            held = f"held finite by regularisation (alpha={alpha:g})"
            before = len(notes)
            for r in sorted(rows, key=lambda r: r.system):
                if r.losses == 0 and r.ties == 0:
                    notes.append(f"{r.system} never lost: its rating is {held}")
                elif r.wins == 0 and r.ties == 0:
                    notes.append(f"{r.system} never won: its rating is {held}")
            if n_weak > 1:
                notes.append(f"the systems fall into {n_weak} groups that never met, directly "
                             f"or through others: ratings across groups rest on the "
                             f"regularisation alone")
            if len(notes) == before:
                notes.append(f"no maximum-likelihood fit exists for these verdicts (some "
                             f"group of systems never lost to the rest): ratings are {held}")
    if method == "map":
        notes.append(f"I-LSR did not converge: the fit fell back to the penalised MAP "
                     f"(alpha={alpha:g}), as MIRAGE-Bench's reference code does")
    if n_boot == 0:
        notes.append("no bootstrap (n_boot=0): the Elo CIs are the point values")
    elif enc.n_queries < MIN_INTERVAL_QUERIES:
        notes.append(f"{enc.n_queries} {'query' if enc.n_queries == 1 else 'queries'} only: "
                     "too few queries for an interval (resampling them cannot vary the battles "
                     f"enough; at least {MIN_INTERVAL_QUERIES}), so no Elo CI is given and every "
                     "system shares rank 1; the win rates' CIs are exact (Clopper–Pearson) over "
                     "the battles")
    return notes

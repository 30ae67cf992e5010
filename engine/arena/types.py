"""The arena's shared records: battles in, ratings and surrogate reports out, and the one
error every part of the arena raises (:class:`ArenaError`).

These are the contract between the arena's parts (judging writes battles; the ratings, the
surrogate, the CLI and the TUI read them) and hold no logic beyond formatting.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ArenaError(ValueError):
    """Judging cannot start, or a judge cannot open: what is wrong is in the message."""


@dataclass(frozen=True)
class Battle:
    """One judged comparison of two systems' answers to one query.

    ``winner`` is 'a', 'b' or 'tie'; None when the judge's reply could not be parsed (such a
    battle is counted as a parse failure and left out of the fit). Against a reference,
    ``b`` is the reference's name (e.g. 'reference:lfrqa').
    """

    query: int              # query rowid: the unit the bootstrap resamples
    a: str
    b: str
    winner: str | None


@dataclass(frozen=True)
class SystemRating:
    system: str
    rank: int               # 1 + systems whose CI lower bound beats this one's upper bound
    elo: float              # 400·θ/ln 10 + 1000 (θ: the BT log-strength, centred)
    elo_lo: float | None    # 2.5th percentile over bootstrap tournaments (None: too few
    elo_hi: float | None    # queries for an interval); 97.5th percentile
    battles: int            # parsed battles this system took part in
    wins: int
    ties: int
    losses: int
    win_rate_lo: float | None = None    # 2.5th percentile of the win rate over the tournaments
    win_rate_hi: float | None = None    # 97.5th percentile

    @property
    def win_rate(self) -> float | None:
        """(wins + ties/2) / battles: ties count as half wins, as in the fit."""
        return None if not self.battles else (self.wins + 0.5 * self.ties) / self.battles

    def as_json(self) -> dict:
        return {"system": self.system, "rank": self.rank, "elo": self.elo,
                "elo_lo": self.elo_lo, "elo_hi": self.elo_hi, "battles": self.battles,
                "wins": self.wins, "ties": self.ties, "losses": self.losses,
                "win_rate": self.win_rate, "win_rate_lo": self.win_rate_lo,
                "win_rate_hi": self.win_rate_hi}


NO_INTERVAL = "–"
"""What an Elo CI column shows where there is no interval (too few queries to resample)."""


def elo_ci_text(elo: float, lo: float | None, hi: float | None, minus: str = "-") -> str:
    """``+39/-12``: an Elo's 95% CI as distances from it; :data:`NO_INTERVAL` without one."""
    if lo is None or hi is None:
        return NO_INTERVAL
    return f"+{hi - elo:.0f}/{minus}{elo - lo:.0f}"


@dataclass
class Ratings:
    """A leaderboard: systems best first, with the matrices behind the heatmap."""

    systems: list[SystemRating]            # sorted by rank, then Elo (descending)
    order: list[str]                       # system names indexing the matrices
    win_fraction: list[list[float | None]]  # [i][j]: share of i's battles against j it won
                                           # (ties as half); None when they never met
    battle_counts: list[list[int]]         # [i][j]: parsed battles between i and j
    n_queries: int
    n_battles: int                         # parsed battles in the fit
    parse_failures: int                    # battles left out: the judge's reply was unparsed
    n_boot: int
    seed: int
    ties: str = "half-win"                 # how ties entered the fit
    notes: list[str] = field(default_factory=list)   # e.g. "a system never lost: regularised"

    def as_json(self) -> dict:
        return {"systems": [s.as_json() for s in self.systems], "order": self.order,
                "win_fraction": self.win_fraction, "battle_counts": self.battle_counts,
                "n_queries": self.n_queries, "n_battles": self.n_battles,
                "parse_failures": self.parse_failures, "n_boot": self.n_boot,
                "seed": self.seed, "ties": self.ties, "notes": self.notes}


ARENA_SEPARATOR = " | "


def arena_system(system: str, setting: str) -> str:
    """A contestant: a run system in one setting, e.g.
    ``gemma3-270m/mirage-bench@1 | retrieved@3:e5-small-q4#68b194a2`` (the same shape as the
    report's row names)."""
    return f"{system}{ARENA_SEPARATOR}{setting}"


def split_arena_system(name: str) -> tuple[str, str | None]:
    """``(system, setting)`` of an arena contestant; setting None for a bare name (a reference)."""
    system, sep, setting = name.rpartition(ARENA_SEPARATOR)
    return (system, setting) if sep else (name, None)

"""The Leaderboard's one status line over the ratings (the run and the arena named there
only), and the full text its ``t`` shows: the status, who judged and how far people agree,
the rule that chose the judge, and the cross-check, each of which the screen draws in one
line."""

from __future__ import annotations

from mirage_tui.screens.leaderboard.board import rank_line


def status_line(run: str | None, arena: str | None, info, r) -> str:
    """The run and arena, the judge, what was rated and how: the most telling part first, so
    that a narrow screen's elision (at words) takes the least."""
    judge = f"judge {info.judge}" if info is not None and info.judge else "judge unknown"
    rated = f"{r.n_battles} battles rated over {r.n_queries} queries"
    if r.parse_failures:
        rated += f" ({r.parse_failures} unparsed left out)"
    return " · ".join([f"{run} · {arena}", judge, rated,
                       f"95% CIs from {r.n_boot} tournaments (seed {r.seed})",
                       "ties count half", "Enter inspects a system"])


def details_text(status: str, judge_lines: str, r) -> str:
    """What ``t`` shows: every line the screen draws in one row, whole."""
    parts = [status, judge_lines, rank_line(r) if r is not None else ""]
    return "\n\n".join(p for p in parts if p.strip())

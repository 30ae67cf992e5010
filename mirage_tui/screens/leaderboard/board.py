"""What the leaderboard draws, as rows and text: the ratings table's cells, the status and note
lines around it, the surrogate judge beside the judged ranking, and the judging progress. Pure
formatting of the engine's results (``engine.arena.types.Ratings``,
``engine.arena.surrogate.SurrogateReport``, the judging's ``JobEvent`` and summary)."""

from __future__ import annotations

from rich.text import Text

from engine.stats import Estimate
from mirage_tui.widgets.safe_text import elided_column

RATING_COLUMNS = (("rank", "rank"), ("system", "system"), ("Elo", "elo"), ("95% CI", "ci"),
                  ("battles", "battles"), ("W/T/L", "wtl"), ("win rate [95% CI] n", "rate"))
"""(label, key) of the ratings table's columns."""

NO_RUNS = ("No runs yet: an arena judges a run's answers, so start a run first "
           "(`mirage-tui run …`).")


def no_arena(run: str) -> str:
    return (f"No arena yet for run {run}: press j to judge its answers pairwise here, or run "
            f"`mirage-tui arena judge {run} --judge MODEL`.")


def arena_line(info) -> str:
    """One arena (``engine.arena.battles.ArenaInfo``) in a line."""
    judge = f"judge {info.judge}" if info.judge else "judge unknown"
    return (f"{info.name} · {info.mode} · {judge} · {info.status} · {info.battles} battles"
            f" · {info.parse_failures} unparsed replies")


def rating_cells(s) -> list[Text]:
    """A system's row (``engine.arena.types.SystemRating``) in :data:`RATING_COLUMNS`."""
    # as the CLI's `arena ratings`: the rate with its 95% CI over the tournaments, and its n
    rate = Estimate(s.win_rate, s.win_rate_lo, s.win_rate_hi, s.battles).format_pct()
    return [Text(str(s.rank), justify="right"), Text(s.system),
            Text(f"{s.elo:.0f}", justify="right"),
            Text(f"+{s.elo_hi - s.elo:.0f}/-{s.elo - s.elo_lo:.0f}"),
            Text(str(s.battles), justify="right"),
            Text(f"{s.wins}/{s.ties}/{s.losses}"), Text(rate, justify="right")]


def rating_rows(systems, width: int) -> list[list[Text]]:
    """Every system's :func:`rating_cells` for a table ``width`` cells wide (border and
    scrollbar in): the system names elided alike, keeping them apart, in what the other
    columns leave (issue 27: at 80 columns the last column was cut)."""
    rows = [rating_cells(s) for s in systems]
    others = sum(max([len(label)] + [row[i].cell_len for row in rows]) + 2
                 for i, (label, _) in enumerate(RATING_COLUMNS) if i != 1)
    # at 80 columns the win rate with its CI and n leaves the names 10 cells
    names = elided_column([s.system for s in systems], max(8, width - 4 - 2 - others))
    for row, name in zip(rows, names):
        row[1] = name
    return rows


def ratings_status(arena: str | None, info, r) -> str:
    """The status line over a rated arena: its judge, what was rated and how."""
    judge = f"judge {info.judge}" if info is not None and info.judge else "judge unknown"
    return (f"{arena} · {judge} · {r.n_battles} battles rated over {r.n_queries} queries"
            f" ({r.parse_failures} unparsed left out) · 95% CIs from {r.n_boot} tournaments "
            f"(seed {r.seed}) · ties count half · Enter inspects a system")


def ratings_notes(r) -> Text:
    """The engine's notes on the ratings, and the battles left out unparsed."""
    notes = Text()
    for note in r.notes:
        notes.append(f"note: {note}\n", style="italic")
    if r.parse_failures:
        what = "battle" if r.parse_failures == 1 else "battles"
        notes.append(f"{r.parse_failures} {what} left out: the judge's reply could not be "
                     "parsed\n", style="italic")
    return notes


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _estimate(e) -> str:
    """``0.667 [0.333, 1.000] n=4`` of an :class:`engine.stats.Estimate` (or its dict)."""
    get = (lambda k: e.get(k)) if isinstance(e, dict) else (lambda k: getattr(e, k, None))
    text = _num(get("value"))
    if get("lo") is not None and get("hi") is not None:
        text += f" [{get('lo'):.3f}, {get('hi'):.3f}]"
    return text + f" n={get('n')}"


def surrogate_text(report) -> Text:
    """The surrogate's ranking beside the judged one, τ and R² with CIs and n."""
    out = Text("Surrogate judge (random forest on heuristic features)\n", style="bold")
    out.append(f"Kendall τ {_estimate(report.tau)} · held-out R² {_estimate(report.r2)} · "
               f"{report.n_judged} judged, {report.n_unjudged} unjudged contestants; "
               f"{report.heldout}\n")
    width = max([len("system")] + [len(r.system) for r in report.rows])
    out.append(f"{'pred':>4}  {'judged':>6}  {'system':<{width}}  {'Elo':>8}  {'predicted':>9}\n",
               style="bold")
    for r in report.rows:
        judged = "–" if r.judged_rank is None else str(r.judged_rank)
        elo = "unjudged" if r.elo is None else f"{r.elo:.0f}"
        out.append(f"{r.predicted_rank:>4}  {judged:>6}  {r.system:<{width}}  {elo:>8}  "
                   f"{r.predicted:>9.0f}\n")
    if report.importances:
        top = sorted(report.importances.items(), key=lambda kv: -kv[1])[:5]
        out.append("top features: " + ", ".join(f"{k} {v:.2f}" for k, v in top) + "\n",
                   style="dim")
    for note in report.notes:
        out.append(f"note: {note}\n", style="italic")
    return out


def judging_line(p) -> str:
    """The status line while judging, from the job's newest ``JobEvent``."""
    return (f"Judging {p.name}: {p.done}/{p.total} {p.unit} "
            f"({p.cached} cached, {p.detail.parse_failures} unparsed)"
            + (f" · {p.rate:.2f}/s" if p.rate else "")
            + (f" · about {p.eta_seconds:.0f}s left" if p.eta_seconds is not None else "")
            + " · x cancels")


def judged_line(s) -> str:
    """What a judging did (``engine.arena.judging``'s summary), for its notification."""
    text = (f"Arena {s.arena}: {s.status}, {s.done}/{s.total} battles ({s.judged} judged "
            f"now, {s.cached} cached, {s.parse_failures} unparsed)")
    if s.message:
        text += f": {s.message}"
    return text

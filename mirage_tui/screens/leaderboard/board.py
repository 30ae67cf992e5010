"""What the leaderboard draws, as rows and text: the ratings table's cells, the status and note
lines around it, the surrogate judge beside the judged ranking, and the judging progress. Pure
formatting of the engine's results (``engine.arena.types.Ratings``,
``engine.arena.surrogate.forest.SurrogateReport``, the judging's ``JobEvent`` and summary)."""

from __future__ import annotations

from rich.text import Text

from engine.arena.types import elo_ci_text
from engine.stats import Estimate
from engine.text_fit import cell_len, labels_apart
from mirage_tui.widgets.safe_text import SystemColumn, apart_width
from mirage_tui.widgets.tables import Elastic

RATING_COLUMNS = {"rank": "rank", "system": "system", "elo": "Elo", "ci": "95% CI",
                  "battles": "battles", "wtl": "W/T/L", "rate": "win rate [95% CI] n"}
"""The ratings table's columns (key: label), in display order."""
RATING_PRIORITY = ["rank", "system", "elo", "ci", "rate", "wtl", "battles"]
"""Which columns stay when the table is narrow, the most important first: the rank, the Elo
and its CI that the rank is read from, the win rate with its CI and n, then W/T/L and the
battles (that n again). A column that does not fit is left out whole and named: a number
cut misleads (the win rate's n=110 would read ``n=1``)."""
LEAST_NAME = 20
"""The system names narrow to this (or to where they stay apart) before a column goes: at 80
columns the battles give way (the win rate's n shows them) rather than the names."""

SURROGATE_NAME = 40
"""The surrogate's table names its systems in this many cells (:func:`surrogate_text`)."""

NO_RUNS = ("No runs yet: an arena judges a run's answers, so start a run first "
           "(`mirage-tui run …`).")


def no_arena(run: str) -> str:
    return (f"No arena yet for run {run}: press j to judge its answers pairwise here, or run "
            f"`mirage-tui arena judge {run} --judge MODEL`.")


def arena_line(info) -> str:
    """One arena (``engine.arena.ratings.battles.ArenaInfo``) in a line."""
    judge = f"judge {info.judge}" if info.judge else "judge unknown"
    return (f"{info.name} · {info.mode} · {judge} · {info.status} · {info.battles} battles"
            f" · {info.parse_failures} unparsed replies")


def rating_cells(s) -> dict[str, Text]:
    """A system's row (``engine.arena.types.SystemRating``) in :data:`RATING_COLUMNS`."""
    # as the CLI's `arena ratings`: the rate with its 95% CI over the tournaments, and its n
    rate = Estimate(s.win_rate, s.win_rate_lo, s.win_rate_hi, s.battles).format_pct()
    return dict(zip(RATING_COLUMNS, (
        Text(str(s.rank), justify="right"), Text(s.system), Text(f"{s.elo:.0f}", justify="right"),
        Text(elo_ci_text(s.elo, s.elo_lo, s.elo_hi)),
        Text(str(s.battles), justify="right"), Text(f"{s.wins}/{s.ties}/{s.losses}"),
        Text(rate, justify="right"))))


def rating_rows(systems) -> tuple[list[tuple[str, dict[str, Text]]], Elastic]:
    """Every system's :func:`rating_cells` keyed by its name, for
    :func:`~mirage_tui.widgets.tables.refill_fitting`, and the system column as the one that
    narrows first: the names less the words they all share, kept apart by the part that
    differs (its ``cells.caption()`` says what was left out), before any column
    holding a number is left out whole."""
    names = [s.system for s in systems]
    return ([(s.system, rating_cells(s)) for s in systems],
            Elastic("system", apart_width(names, LEAST_NAME), SystemColumn(names)))


def rank_line(r) -> str:
    """What the rank column means, and how many share rank 1, in the words ``arena ratings``
    prints (:func:`engine.arena.ratings.leaderboard.rank_line`)."""
    from engine.arena.ratings.leaderboard import rank_line as meaning

    return meaning(s.rank for s in r.systems)


def ratings_status(arena: str | None, info, r) -> str:
    """The status line over a rated arena: its judge, what was rated and how."""
    judge = f"judge {info.judge}" if info is not None and info.judge else "judge unknown"
    return (f"{arena} · {judge} · {r.n_battles} battles rated over {r.n_queries} queries"
            f" ({r.parse_failures} unparsed left out) · 95% CIs from {r.n_boot} tournaments "
            f"(seed {r.seed}) · ties count half · Enter inspects a system")


def ratings_notes(r) -> Text:
    """What the rank means (:func:`rank_line`), the engine's notes on the ratings, and the
    battles left out unparsed."""
    notes = Text(rank_line(r) + "\n")
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
    # the names less what they all share (said after the table), so that a row fits 80 columns
    apart = labels_apart([r.system for r in report.rows], SURROGATE_NAME)
    width = max([len("system")] + [cell_len(s) for s in apart.shown.values()])
    out.append(f"{'pred':>4}  {'judged':>6}  {'system':<{width}}  {'Elo':>8}  {'predicted':>9}\n",
               style="bold")
    for r in report.rows:
        judged = "–" if r.judged_rank is None else str(r.judged_rank)
        elo = "unjudged" if r.elo is None else f"{r.elo:.0f}"
        name = apart.shown[" ".join(r.system.split())]
        name += " " * (width - cell_len(name))
        out.append(f"{r.predicted_rank:>4}  {judged:>6}  {name}  {elo:>8}  "
                   f"{r.predicted:>9.0f}\n")
    if apart.caption():
        out.append(f"systems {apart.caption()}\n", style="dim")
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
    """What a judging did (``engine.arena.judging.job``'s summary), for its notification."""
    text = (f"Arena {s.arena}: {s.status}, {s.done}/{s.total} battles ({s.judged} judged "
            f"now, {s.cached} cached, {s.parse_failures} unparsed)")
    if s.message:
        text += f": {s.message}"
    return text

"""What the leaderboard's workers ask the engine, on the worker's thread: the runs and their
arenas, an arena's ratings, the surrogate judge, its model-free features (``run``: the run's
``RunInfo``, looked up once, with its arenas, and held by the screen). The arena modules are imported when used, so the
screen still opens (and says why) when one is missing."""

from __future__ import annotations

from rich.text import Text

from engine.runs.lookup import load_run
from engine.stats import SEED, TOURNAMENTS
from engine.store.runs import known_runs
from mirage_tui.screens.leaderboard.board import surrogate_text

N_BOOT = TOURNAMENTS
"""Bootstrap tournaments behind the ratings' and the surrogate's CIs (seed :data:`SEED`):
``arena ratings``' own, so the Leaderboard and the CLI show the same figures."""


def arena_choices(store, run: str | None, arena: str | None):
    """``(runs, run, arenas, arena)``: the stored runs' names; the run called ``run``, or
    without one the latest run that has an arena, else the latest run (its ``RunInfo``; None
    when there is no run); its arenas; ``arena`` when it is one of them, else the latest."""
    from engine.arena.ratings.battles import list_arenas

    runs = known_runs(store)
    info, arenas = None, []
    if run is None:  # the latest run that has an arena, else the latest run
        for name in reversed(runs):
            info = load_run(store, name)
            arenas = list_arenas(store, info)
            if arenas:
                break
        else:
            info = load_run(store, runs[-1]) if runs else None
    else:
        info = load_run(store, run)
        arenas = list_arenas(store, info)
    names = [a.name for a in arenas]
    if arena not in names:
        arena = names[-1] if names else None
    return runs, info, arenas, arena


def rate(store, run, arena: str):
    """``(ratings, None)``, or ``(None, why)`` when there are none: an arena module is
    missing, or nothing parsed to rate."""
    try:
        from engine.arena.ratings.battles import load_battles
        from engine.arena.ratings.leaderboard import compute_ratings
    except ImportError as exc:
        return None, f"the ratings are not available ({exc})"
    battles = load_battles(store, run, arena)
    try:
        return compute_ratings(battles, n_boot=N_BOOT, seed=SEED), None
    except ValueError as exc:  # nothing parsed to rate
        return None, str(exc)


def judge_line(store, run, arena: str, ratings=None) -> Text:
    """Who judged the arena and how far people agree with that judge, which rule picked it,
    and (with ``ratings``) the ranking's cross-check against accuracy, flagged in bold when it
    disagrees (:func:`engine.arena.trust.default_judge.arena_header`)."""
    from engine.arena.ratings.battles import battles_of, resolve_arena
    from engine.arena.trust.default_judge import arena_header, judge_rule, judge_trust

    info = resolve_arena(store, run, arena)
    if ratings is None:
        return Text("\n".join(x for x in (judge_trust(store, info).line,
                                          judge_rule(store, run, info)) if x))
    header = arena_header(store, run, info, battles_of(store, info.id), ratings)
    text = Text("\n".join(x for x in (header.trust.line, header.rule) if x))
    if header.cross_check is not None:
        style = "bold red" if header.cross_check.disagrees else ""
        text.append("\n" + header.cross_check.line, style=style)
    return text


def surrogate(store, run, arena: str) -> Text:
    """The surrogate judge's ranking (:func:`.board.surrogate_text`), or why there is none and
    how to get it."""
    hint = (f"press u to compute the model-free features here, or run `mirage-tui arena "
            f"surrogate {run.name} --arena '{arena}'` (add --judge MODEL for the judged ones)")
    try:
        from engine.arena.surrogate.features import feature_values
        from engine.arena.surrogate.forest import surrogate_for_run
    except ImportError as exc:
        return Text(f"Surrogate judge not available in this build ({exc}).", style="dim")
    try:
        if not any(any(v is not None for vals in per.values() for v in vals)
                   for per in feature_values(store, run).values()):
            return Text(f"Surrogate judge: no features yet: {hint}.", style="dim")
        return surrogate_text(surrogate_for_run(store, run, arena, n_boot=N_BOOT, seed=SEED))
    except Exception as exc:  # too few contestants, a failed fit, ...
        return Text(f"Surrogate judge unavailable: {exc}", style="dim")


def compute_surrogate_features(store, run, arena: str, *, progress=None, cancel=None):
    """Store the model-free features (language, citations, ROUGE-L, BLEU) of the arena's
    queries, which the surrogate needs; returns the ``FeatureSummary``."""
    from engine.arena.ratings.battles import load_battles
    from engine.arena.surrogate.features import compute_features

    queries = sorted({b.query for b in load_battles(store, run, arena)})
    return compute_features(store, run, judge=None, queries=queries, progress=progress,
                            cancel=cancel)

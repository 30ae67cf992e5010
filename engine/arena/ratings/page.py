"""An arena's leaderboard on a page (the frame: :mod:`engine.results.html.page`): the ratings
:func:`engine.arena.ratings.leaderboard.compute_ratings` computes (what ``mirage-tui arena ratings
--json`` prints) as a forest plot of Elo with 95% CIs, the win-fraction heatmap and the table;
and, when the arena's contestants have stored features, the surrogate judge's ranking
(:func:`engine.arena.surrogate.forest.surrogate_for_run`) beside the judged one with Kendall τ and the
held-out R². A run's page carries the leaderboard of each of its arenas
(:func:`run_page_with_arenas`)."""

from __future__ import annotations

from engine.arena.ratings.battles import ArenaNotFound, battles_of, list_arenas, resolve_arena
from engine.arena.ratings.leaderboard import compute_ratings, rank_line
from engine.arena.ratings.tournaments import DEFAULT_TOURNAMENTS
from engine.arena.types import elo_ci_text
from engine.arena.trust.default_judge import arena_header
from engine.results.html.page import definition_list, esc, figure, notes, page, table
from engine.results.html.run_page import run_page
from engine.results.html.svg import Interval, heatmap, interval_chart
from engine.store import Store
from engine.runs.lookup import RunInfo

ARENA_BOOT = DEFAULT_TOURNAMENTS
"""Bootstrap tournaments, as ``mirage-tui arena ratings`` and the Leaderboard take them."""


def run_arenas(store: Store, run: RunInfo) -> list[str]:
    """The run's arenas that have battles, oldest first."""
    return [i.name for i in list_arenas(store, run) if i.battles]


def arena_data(store: Store, run: RunInfo, arena_name: str | None = None, *,
               n_boot: int = ARENA_BOOT, seed: int = 0) -> dict:
    """``{"arena": info, "judge_trust": how far its judge agrees with people
    (:func:`engine.arena.trust.default_judge.judge_trust`), "judge_rule": which rule picked the
    judge, "cross_check": the ranking against accuracy or None, "ratings": Ratings.as_json(),
    "surrogate": SurrogateReport.as_json() or None, "surrogate_note": why there is none}``."""
    info = resolve_arena(store, run, arena_name)
    battles = battles_of(store, info.id)
    if not battles:
        raise ArenaNotFound(f"arena {info.name!r} of run {run.name!r} has no battles yet")
    ratings = compute_ratings(battles, n_boot=n_boot, seed=seed)
    surrogate, why = None, None
    try:
        from engine.arena.surrogate.forest import surrogate_for_run

        surrogate = surrogate_for_run(store, run, info.name, n_boot=n_boot,
                                      seed=seed).as_json()
    except (ValueError, LookupError, ImportError) as exc:
        why = str(exc)
    heading = arena_header(store, run, info, battles, ratings)
    return {"arena": info.as_json(), **heading.as_json(),
            "ratings": ratings.as_json(), "surrogate": surrogate, "surrogate_note": why}


def forest_plot(ratings: dict) -> str:
    rows = [Interval(f"{r['rank']}. {r['system']}", r["elo"], r["elo_lo"], r["elo_hi"],
                     r["battles"]) for r in ratings["systems"]]
    return interval_chart(rows, title="Elo with 95% CI (bootstrap tournaments)",
                          x_title="Elo (points; the systems' mean is 1000)", reference=1000)


def win_heatmap(ratings: dict) -> str:
    return heatmap(ratings["order"], ratings["win_fraction"], counts=ratings["battle_counts"],
                   title="Win fraction, row against column")


def _cross_check(check: dict | None) -> str:
    """The ranking's cross-check against accuracy (:mod:`engine.arena.trust.cross_check`), flagged
    when it disagrees."""
    if not check:
        return ""
    css = "cross-check worse" if check["disagrees"] else "cross-check"
    text = esc(check["line"])
    return f'<p class="{css}">{"<strong>" + text + "</strong>" if check["disagrees"] else text}</p>'


def _surrogate(data: dict) -> str:
    s = data["surrogate"]
    if s is None:
        return ("<h3>Surrogate judge</h3>"
                f'<p class="note">No surrogate ranking: {esc(data["surrogate_note"])}.</p>')
    rows = [[r["system"], "–" if r["judged_rank"] is None else r["judged_rank"],
             "–" if r["elo"] is None else f"{r['elo']:.0f}", r["predicted_rank"],
             f"{r['predicted']:.0f}"] for r in s["rows"]]

    def est(e: dict) -> str:
        if e["value"] is None:
            return "–"
        return f"{e['value']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}], n={e['n']}" \
            if e["lo"] is not None else f"{e['value']:.2f}, n={e['n']}"

    return ("<h3>Surrogate judge beside the judged ranking</h3>"
            + definition_list([("Kendall τ", est(s["tau"])), ("held-out R²", est(s["r2"])),
                               ("held out", s["heldout"]),
                               ("features", ", ".join(s["features"]))])
            + table(["system", "judged rank", "Elo", "surrogate rank", "surrogate Elo"], rows,
                    numeric=range(1, 5))
            + notes(s["notes"]))


def arena_sections(store: Store, run: RunInfo, arena_name: str | None = None, *,
                   seed: int = 0, heading_level: int = 2, data: dict | None = None) -> list[str]:
    data = data or arena_data(store, run, arena_name, seed=seed)
    a, r = data["arena"], data["ratings"]
    rows = [[s["rank"], s["system"], f"{s['elo']:.0f}",
             elo_ci_text(s["elo"], s["elo_lo"], s["elo_hi"], minus="−"), s["battles"],
             figure({"value": s["win_rate"], "lo": s["win_rate_lo"], "hi": s["win_rate_hi"],
                     "n": s["battles"]})] for s in r["systems"]]
    h = f"h{heading_level}"
    return [f"<{h}>Arena {esc(a['name'])}</{h}>"
            + definition_list([("mode", a.get("mode")), ("judge", a.get("judge")),
                               ("status", a.get("status")),
                               ("battles", f"{r['n_battles']} parsed over {r['n_queries']} "
                                           f"queries, {r['parse_failures']} parse failures"),
                               ("bootstrap", f"{r['n_boot']} tournaments, seed {r['seed']}; "
                                             "ties count as half wins")])
            + f'<p class="judge-trust"><strong>{esc(data["judge_trust"]["line"])}</strong></p>'
            + "".join(f'<p class="judge-rule">{esc(line)}</p>' for line in [data["judge_rule"]]
                      if line)
            + _cross_check(data["cross_check"])
            + forest_plot(r)
            + table(["rank", "system", "Elo", "95% CI", "battles", "win rate %"], rows,
                    numeric=(0, 2, 3, 4, 5))
            + f'<p class="note">{esc(rank_line(s["rank"] for s in r["systems"]))}.</p>'
            + win_heatmap(r) + notes(r["notes"]) + _surrogate(data)]


def leaderboard_page(store: Store, run: RunInfo, arena_name: str | None = None, *,
                     n_boot: int = ARENA_BOOT, seed: int = 0) -> str:
    """The leaderboard page of one arena (the only or latest pairwise one by default)."""
    data = arena_data(store, run, arena_name, n_boot=n_boot, seed=seed)
    a = data["arena"]
    return page(f"Leaderboard {a['name']} · run {run.name}",
                f"{a.get('mode')} arena judged by {a.get('judge')}",
                arena_sections(store, run, data=data, heading_level=2),
                {"kind": "leaderboard", "run": run.name, **data})


def arena_sections_of_run(store: Store, run: RunInfo, *, seed: int = 0) -> list[str]:
    """The leaderboard of each of the run's arenas that has battles."""
    out = []
    for name in run_arenas(store, run):
        try:
            out += arena_sections(store, run, name, seed=seed, heading_level=2)
        except ValueError as exc:      # e.g. every verdict failed to parse: nothing to rate
            out.append(f"<h2>Arena {esc(name)}</h2>" + notes([f"No ratings: {exc}"]))
    return out


def run_page_with_arenas(store: Store, run: RunInfo, *, seed: int = 0, **options) -> str:
    """The run's page (:func:`engine.results.html.run_page.run_page`, ``options`` passed on)
    with the leaderboard of each of its arenas after the report."""
    return run_page(store, run, seed=seed,
                    arena_sections=arena_sections_of_run(store, run, seed=seed), **options)

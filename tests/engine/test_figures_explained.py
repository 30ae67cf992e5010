"""Every figure that needs it is explained where it is shown (issue 36, "one truth"): the
adaptability overall in ``report``'s text and the run page, the rank in ``arena ratings``' text
and the leaderboard page, Holm's "no clear difference" in ``compare``'s text and page. The
words are the engine's, one string each, which the screens show too
(tests/tui/test_app_i27_explained.py, tests/engine/test_comparison.py)."""

from __future__ import annotations

import html as html_lib

import pytest

from engine.arena.ratings.battles import load_battles
from engine.arena.ratings.duel import compare
from engine.arena.ratings.leaderboard import compute_ratings, format_leaderboard, rank_line
from engine.arena.ratings.page import leaderboard_page
from engine.arena.ratings.page import run_page_with_arenas as run_page
from engine.metrics.adaptability import OVERALL_MEANING
from engine.results import build_report
from engine.results.html import comparison_page
from engine.results.paired_text import format_comparison
from engine.results.paired_words import holm_line
from engine.results.pairing import side_runs
from engine.results.text import format_report
from engine.runs.lookup import load_run
from engine.store import Store

A, B = "alpha:fake-a/mirage@1", "alpha:fake-b/mirage@1"


@pytest.fixture(scope="module")
def store(db):
    s = Store(db)
    yield s
    s.close()


def _plain(page: str) -> str:
    return html_lib.unescape(page)


def test_the_overall_says_what_it_means_in_report_and_on_the_run_page(store):
    assert OVERALL_MEANING.startswith("Overall↑ = CA − NV − CI − CM = 2·CA − 100: +100 when")
    run = load_run(store, "alpha")
    report = build_report(store, run, n_boot=50)
    text = format_report(report)
    lines = text.splitlines()
    table_end = lines.index(OVERALL_MEANING + ".")      # right under Table 1's rows
    assert lines[table_end - 1].lstrip().startswith(report.systems[-1].run_system)
    assert "Table 1." in lines[table_end - 4]
    # within a narrow terminal it wraps at words, every word kept
    narrow = format_report(report, width=60)
    assert max(map(len, narrow.splitlines())) <= 60
    assert " ".join(OVERALL_MEANING.split()) in " ".join(narrow.split())
    assert OVERALL_MEANING in _plain(run_page(store, run, n_boot=50, report=report))


def test_the_rank_says_what_it_means_in_arena_ratings_and_on_its_page(store):
    run = load_run(store, "alpha")
    ratings = compute_ratings(load_battles(store, run, "duel"), n_boot=50, seed=0)
    lines = format_leaderboard(ratings).splitlines()
    meaning = rank_line(s.rank for s in ratings.systems)
    assert meaning.startswith("rank: 1 + the systems whose Elo 95% CI lies wholly above; "
                              "overlapping CIs share a rank")
    assert lines[1 + len(ratings.systems)] == meaning          # right under the rows
    assert meaning in _plain(leaderboard_page(store, run, "duel", n_boot=50))
    assert rank_line([1, 1, 3]).endswith("share a rank (2 share rank 1)")
    assert rank_line([1, 2]).endswith("share a rank")


def test_no_clear_difference_and_holm_are_said_in_compare_text_and_page(store):
    c = compare(store, A, B, side_runs(store, A, B), n_boot=200)
    line = holm_line(c)
    assert line == (f"no clear difference = Holm p ≥ 0.05 (p corrected for {len(c.rows)} "
                    "tests) or 0 in the CI")
    lines = format_comparison(c).splitlines()
    verdict = next(i for i, x in enumerate(lines) if x.startswith("No clear difference on "))
    assert lines[verdict + 1] == line
    assert line in _plain(comparison_page(c))

"""The Leaderboard's ratings at 80 and 120 columns with real system names (issue 27: the header
read "win r"; issue 34: the win rate's n read ``n=1`` for 110): the system names give way
first, elided alike and kept apart; then columns are left out whole, never cut."""

from __future__ import annotations

from types import SimpleNamespace

from mirage_tui.screens.leaderboard.board import (LEAST_NAME, RATING_COLUMNS, RATING_PRIORITY,
                                                  rating_rows)
from mirage_tui.widgets.tables import fit_widths

NAMES = ["smollm2-135m-instruct/mirage@1 | retrieved@5:minilm-l6-v2",
         "smollm2-135m-instruct/mirage@1 | retrieved@1:minilm-l6-v2",
         "smollm2-135m-instruct/mirage@1 | oracle",
         "gemma3-270m/mirage@1 | retrieved@5:minilm-l6-v2",
         "gemma3-270m/mirage@1 | oracle"]
# the table's cells at 80 and 120 columns: the body's scrollbar, the border, the table's own
CONTENT = {80: 80 - 2 - 2 - 2, 120: 120 - 2 - 2 - 2}


def _rating(rank, system):
    return SimpleNamespace(rank=rank, system=system, elo=1000.0 + rank, elo_hi=1100.0,
                           elo_lo=900.0, battles=110, wins=60, ties=11, losses=39,
                           win_rate=0.614, win_rate_lo=0.486, win_rate_hi=0.727)


def _fit(width):
    rows, names = rating_rows([_rating(i + 1, name) for i, name in enumerate(NAMES)])
    widths = {k: max([len(label)] + [cells[k].cell_len for _, cells in rows])
              for k, label in RATING_COLUMNS.items()}
    return rows, names, widths, fit_widths(widths, RATING_PRIORITY, CONTENT[width],
                                           (names.key, names.least))


def test_the_names_give_way_first_then_columns_go_whole():
    for width in (80, 120):
        rows, names, widths, fit = _fit(width)
        assert sum(w + 2 for w in fit.values()) <= CONTENT[width], (width, fit)
        # every column but the names is shown at its full width or not at all
        assert all(fit[k] == widths[k] for k in fit if k != "system"), fit
        assert {"rank", "system", "elo", "ci", "rate"} <= set(fit), fit
        shown = [cell.plain for cell in names.cells(fit["system"])]
        assert len(set(shown)) == len(NAMES), shown                       # still apart
        assert all(len(s) <= fit["system"] for s in shown)
        assert fit["system"] >= LEAST_NAME
    # at 120 every column shows; at 80 the battles (the win rate's n again) and W/T/L go
    assert set(_fit(120)[3]) == set(RATING_COLUMNS)
    assert set(RATING_COLUMNS) - set(_fit(80)[3]) == {"battles", "wtl"}


def test_the_names_narrow_no_further_than_where_they_stay_apart():
    rows, names, widths, fit = _fit(80)
    assert names.least >= LEAST_NAME
    shown = [cell.plain for cell in names.cells(names.least)]
    assert len(set(shown)) == len(NAMES), shown
    # the names take what the shown columns leave, up to their full width
    room = CONTENT[80] - sum(w + 2 for k, w in fit.items() if k != "system") - 2
    assert fit["system"] == min(widths["system"], room)


def test_a_name_column_keeps_its_full_width_when_there_is_room():
    rows, names, widths, fit = _fit(120)
    short = fit_widths({**widths, "system": 30}, RATING_PRIORITY, 200, ("system", 20))
    assert short == {**widths, "system": 30}

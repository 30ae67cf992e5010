"""The Leaderboard's ratings at 80 columns with real system names (issue 27: the header read
"win r"): the system names give way, elided alike and kept apart, and every row fits."""

from __future__ import annotations

from types import SimpleNamespace

from mirage_tui.screens.leaderboard.board import RATING_COLUMNS, rating_rows

NAMES = ["smollm2-135m-instruct/mirage@1 | retrieved@5:minilm-l6-v2",
         "smollm2-135m-instruct/mirage@1 | oracle",
         "gemma3-270m/mirage@1 | retrieved@5:minilm-l6-v2",
         "gemma3-270m/mirage@1 | oracle"]


def _rating(rank, system):
    return SimpleNamespace(rank=rank, system=system, elo=1000.0 + rank, elo_hi=1100.0,
                           elo_lo=900.0, battles=12, wins=6, ties=1, losses=5, win_rate=0.54,
                           win_rate_lo=0.3, win_rate_hi=0.8)


def test_rating_rows_fit_80_columns_and_keep_systems_apart():
    systems = [_rating(i + 1, name) for i, name in enumerate(NAMES)]
    for width in (80, 120):
        rows = rating_rows(systems, width)
        widths = [max([len(label)] + [row[i].cell_len for row in rows])
                  for i, (label, _) in enumerate(RATING_COLUMNS)]
        assert sum(w + 2 for w in widths) <= width - 4, (width, widths)   # border, scrollbar
        shown = [row[1].plain for row in rows]
        assert len(set(shown)) == len(NAMES), shown                       # still apart
        assert all(row[1].full == name for row, name in zip(rows, NAMES))
        # elided only where there is no room: the names get what the other columns leave
        room = width - 4 - sum(w + 2 for i, w in enumerate(widths) if i != 1) - 2
        assert any("…" in s for s in shown) == (max(map(len, NAMES)) > room), (room, shown)
        assert widths[1] == min(max(map(len, NAMES)), room)           # and use all of it

"""The Inspector's item view puts the answers first and starts your verdict from what you look
at: the settings' panels right under the question and its gold answers, the judge's pairs
folded under one counted line (``j`` unfolds them), the pool counted as the dataset's pool with
the chunks retrieved from outside it named apart; and with the tail of one setting at the top
and the next filling the view, the verdict dialog takes the pair of the one that fills it."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from textual.widgets import Collapsible, DataTable, Static

from testkit.scripted_runs import A, B
from testkit.tui import RecordingApp, open_screen, settle, text_of

AO, AM, BO, BM = f"{A} | oracle", f"{A} | mixed", f"{B} | oracle", f"{B} | mixed"


async def open_first_item(pilot, app):
    from mirage_tui.screens.inspector import InspectorScreen

    await open_screen(pilot, InspectorScreen("alpha"))
    screen = app.screen
    screen.query_one("#insp-items", DataTable).focus()
    await pilot.press("enter")
    await settle(pilot)
    assert screen.current[0] == A
    return screen


def rows_by_setting(detail) -> dict:
    from mirage_tui.screens.inspector.detail import SettingRow

    return {row.setting: row for row in detail.query(SettingRow)}


@pytest.mark.asyncio
async def test_the_verdict_starts_from_the_setting_most_in_view(workspace):
    from mirage_tui.dialogs.human_verdict import HumanVerdictModal
    from mirage_tui.screens.inspector.detail import ItemDetail

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_first_item(pilot, app)
        await pilot.press("s")                  # fake-b beside: the pair is both, in a setting
        await settle(pilot)
        detail = screen.query_one(ItemDetail)
        rows = rows_by_setting(detail)
        oracle, mixed = rows["oracle"], rows["mixed"]
        # only the oracle panels' last 4 lines at the top, the mixed panels under them
        top = oracle.region.bottom - detail.region.y + detail.scroll_y - 4
        detail.scroll_to(y=top, animate=False)
        await settle(pilot)
        view = detail.region
        oracle_seen = oracle.region.intersection(view).height
        mixed_seen = mixed.region.intersection(view).height
        assert 3 <= oracle_seen <= 5 and mixed_seen > oracle_seen, (oracle_seen, mixed_seen)
        assert detail.setting_in_view() == "mixed"
        await pilot.press("a")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, HumanVerdictModal)
        entry = dialog.entry()
        assert {entry.system_a, entry.system_b} == {AM, BM}, entry     # not the oracle pair
        await pilot.press("escape")
        await settle(pilot)
        # the oracle panels filling the view: their pair
        detail.scroll_to_widget(oracle, top=True, animate=False)
        await settle(pilot)
        assert detail.setting_in_view() == "oracle"
        await pilot.press("a")
        await settle(pilot)
        entry = app.screen.entry()
        assert {entry.system_a, entry.system_b} == {AO, BO}, entry
        await pilot.press("escape")
        await settle(pilot)
        assert not app.errors()


@pytest.mark.asyncio
async def test_answers_first_and_the_judge_pairs_folded_and_counted(workspace):
    from mirage_tui.screens.inspector.detail import ItemDetail

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_first_item(pilot, app)
        detail = screen.query_one(ItemDetail)
        order = [w.id for w in detail.children]
        assert order.index("d-answers") < order.index("d-settings") < \
            order.index("d-verdicts-fold") < order.index("d-pool-heading")
        # the first answer is on the first screen: right under the question
        first = next(iter(rows_by_setting(detail).values()))
        assert first.region.y < detail.region.bottom
        fold = detail.query_one("#d-verdicts-fold", Collapsible)
        assert fold.collapsed and fold.display
        assert re.match(r"[1-9]\d* judge pairs? on this query · j unfolds$", fold.title), \
            fold.title
        verdicts = detail.query_one("#d-verdicts", Static)
        assert "duel" in text_of(verdicts)
        await pilot.press("j")
        await settle(pilot)
        assert not fold.collapsed
        await pilot.press("j")
        await settle(pilot)
        assert fold.collapsed
        heading = text_of(detail.query_one("#d-pool-heading", Static))
        pool = [c for c in screen.query(".pool-chunk")]
        assert heading.startswith(f"Pool: {len(pool)} chunks · 1 oracle (★)"), heading
        assert "outside the pool" not in heading
        assert not app.errors()


def test_the_pool_is_counted_as_the_pool_and_retrieved_chunks_apart():
    from mirage_tui.screens.inspector.detail import pool_heading

    def chunk(in_pool, oracle=False, used=()):
        return SimpleNamespace(in_pool=in_pool, is_oracle=oracle, in_context_of=list(used))

    chunks = [chunk(True, oracle=True, used=("oracle", "mixed")), *(chunk(True) for _ in range(4)),
              chunk(False, used=("retrieved@3:minilm-l6-v2#1a2b",)),
              chunk(False, used=("retrieved@5:minilm-l6-v2#1a2b", "retrieved@3:minilm-l6-v2#1a2b")),
              *(chunk(False) for _ in range(13))]
    assert pool_heading(chunks) == ("Pool: 5 chunks · 1 oracle (★) · retrieved from outside the "
                                    "pool: 15, used by retrieved@3, retrieved@5")
    assert pool_heading(chunks[:5]) == "Pool: 5 chunks · 1 oracle (★)"
    assert pool_heading([chunk(True), chunk(False)]).endswith("outside the pool: 1, used by "
                                                              "no setting")
    assert pool_heading([]) == "Pool: this query has no pool entries."

"""Your own verdict in the Inspector: a / e / b on a judged item with an optional note, stored
with who and when beside the judge's (never over it), still there after a restart, and usable
as labels for ``judge calibrate``."""

from __future__ import annotations

import getpass

import pytest
from textual.widgets import DataTable, Input, Static

from engine.runs.lookup import load_run
from engine.store import Store
from testkit.arena import ScriptedJudge
from testkit.tui import RecordingApp, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio


async def _open_first_item(pilot, app):
    from mirage_tui.screens.inspector import InspectorScreen

    await open_screen(pilot, InspectorScreen("alpha"))
    screen = app.screen
    screen.query_one("#insp-items", DataTable).focus()
    await pilot.press("enter")
    await settle(pilot)
    return screen


async def test_a_human_verdict_survives_a_restart_and_feeds_calibrate(workspace):
    from engine.arena.trust.calibrate import calibrate_judge

    store = Store(workspace["path"])
    battles_before = [tuple(r) for r in store.query("SELECT * FROM battles ORDER BY 1, 2, 3")]
    store.close()
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open_first_item(pilot, app)
        assert screen.shown_verdicts
        # the mixed answers in view (the answers come first): the pair the arena judged
        from mirage_tui.screens.inspector.detail import ItemDetail, SettingRow

        detail = screen.query_one(ItemDetail)
        mixed = next(r for r in detail.query(SettingRow) if r.setting == "mixed")
        detail.scroll_to_widget(mixed, top=True, animate=False)
        await settle(pilot)
        await pilot.press("b")
        await settle(pilot)
        battle = app.screen.entry()             # the pair the dialog names
        app.screen.query_one("#hv-note", Input).value = "B cites the oracle"
        await pilot.press("enter")
        await settle(pilot)
        await settle(pilot)
        verdicts = text_of(screen.query_one("#d-verdicts", Static))
        assert f"{getpass.getuser()} (" in verdicts and "B better" in verdicts
        assert "B cites the oracle" in verdicts
        # Escape in the dialog stores nothing
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not app.errors()

    # a restart: the verdict is read back from the workspace file
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open_first_item(pilot, app)
        verdicts = text_of(screen.query_one("#d-verdicts", Static))
        assert "B better · B cites the oracle" in verdicts
        assert not app.errors()

    store = Store(workspace["path"])
    # the judge's battles are untouched
    assert [tuple(r) for r in store.query("SELECT * FROM battles ORDER BY 1, 2, 3")] == \
        battles_before
    rows = store.query("SELECT annotator, label, note, source, created_at FROM human_labels")
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (getpass.getuser(), 1, "B cites the oracle", "app")]
    assert rows[0]["created_at"]
    # exported with the battles
    from engine.arena.ratings.battles import battle_rows

    exported = [r for r in battle_rows(store, load_run(store, "alpha"), battle.arena)
                if (r["system_a"], r["system_b"]) == (battle.system_a, battle.system_b)
                and r["human_verdicts"]]
    assert [r["human_verdicts"][0]["note"] for r in exported] == ["B cites the oracle"]
    result = calibrate_judge(store, "verdicts:alpha", ScriptedJudge(), n_boot=20)
    assert result.status == "done" and result.pairs == 1
    [pair] = store.query("SELECT pair_id FROM label_pairs")
    assert battle.system_a in pair[0] and battle.system_b in pair[0]
    store.close()

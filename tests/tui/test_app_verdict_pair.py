"""Your verdict lands on the pair you are looking at (issue 34, item 5): the dialog names the two
answers and the arena, starts from the panel in view (or the two systems side by side, in the
setting in view) and the Leaderboard's arena, lets you pick another pair and arena, and stores
exactly the pair it names. Verdicts stored before keep their pair."""

from __future__ import annotations

import getpass
import json

import pytest
from textual.widgets import DataTable, Input, Select, Static

from engine.store import Store
from testkit.scripted_runs import A, B, add_arena
from testkit.tui import RecordingApp, open_screen, settle, text_of

pytestmark = pytest.mark.asyncio

AB, AO, AM = f"{A} | base", f"{A} | oracle", f"{A} | mixed"
BB, BO, BM = f"{B} | base", f"{B} | oracle", f"{B} | mixed"


def stored_pairs(path) -> list[tuple[list, str, int, str | None]]:
    """``(pair id, annotator, label, note)`` of every verdict in the workspace file."""
    store = Store(path)
    try:
        return [(json.loads(r[0]), r[1], r[2], r[3]) for r in store.query(
            "SELECT p.pair_id, l.annotator, l.label, l.note FROM human_labels l "
            "JOIN label_pairs p ON p.id = l.pair_rowid ORDER BY p.id, l.annotator")]
    finally:
        store.close()


def add_later_arena(workspace) -> None:
    """A second, newer arena on run alpha: only the base answers of fake-a and fake-b, fake-a's
    winning (judge ``reference:f1``)."""
    store = Store(workspace["path"])
    add_arena(store, "alpha", "later", [(q, AB, BB, "a") for q in workspace["queries"]["alpha"]],
              judge="reference:f1")
    store.close()


async def open_item(pilot, app, **kwargs):
    """The Inspector of run alpha (``kwargs``: its options), Enter on the first row: fake-a's
    item of the first query."""
    from mirage_tui.screens.inspector import InspectorScreen

    await open_screen(pilot, InspectorScreen("alpha", **kwargs))
    screen = app.screen
    screen.query_one("#insp-items", DataTable).focus()
    await pilot.press("enter")
    await settle(pilot)
    assert screen.current[0] == A
    return screen


async def scroll_to_setting(pilot, screen, setting: str) -> None:
    """Scroll the item so that ``setting``'s heading and panels are at the top of the view."""
    from mirage_tui.screens.inspector.detail import ItemDetail

    detail = screen.query_one(ItemDetail)
    heading = next(h for h in detail.query(".d-heading") if text_of(h) == f"Setting {setting}")
    detail.scroll_to_widget(heading, top=True, animate=False)
    await settle(pilot)


async def verdict_key(pilot, key: str):
    from mirage_tui.dialogs.human_verdict import HumanVerdictModal

    await pilot.press(key)
    await settle(pilot)
    dialog = pilot.app.screen
    assert isinstance(dialog, HumanVerdictModal), dialog
    return dialog


def dialog_text(dialog) -> str:
    return "\n".join(text_of(w) for w in dialog.query(Static))


def shown(dialog) -> tuple[str, str, str, str | None, str, str]:
    """A, B, the verdict, the arena and the dialog's two lines, as the dialog shows them."""
    e = dialog.entry()
    return (e.system_a, e.system_b, e.verdict, e.arena,
            text_of(dialog.query_one("#hv-pair", Static)),
            text_of(dialog.query_one("#hv-judge", Static)))


async def save(pilot, dialog, note: str) -> None:
    dialog.query_one("#hv-note", Input).value = note
    await pilot.press("enter")
    await settle(pilot)
    await settle(pilot)


async def test_the_panel_in_view_is_the_pair_and_another_can_be_picked(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_item(pilot, app)
        q = screen.current[1]
        await scroll_to_setting(pilot, screen, "oracle")
        dialog = await verdict_key(pilot, "b")
        assert AO in dialog_text(dialog) and "duel" in dialog_text(dialog)
        # the oracle panel against its partner of the same system in arena duel, as the battle
        # names them (today's dialog took fake-a's mixed answer against fake-b's)
        a, b, verdict, arena, pair, judge = shown(dialog)
        assert (a, b, verdict, arena) == (AO, AM, "b", "duel")
        assert pair == f"Your verdict: {AM} is better than {AO}"
        assert judge.startswith("Arena duel (judge smollm2-135m-instruct): it chose ")
        # another pair: fake-b's oracle answer as B
        dialog.query_one("#hv-b", Select).value = BO
        await settle(pilot)
        assert shown(dialog)[4] == f"Your verdict: {BO} is better than {AO}"
        await save(pilot, dialog, "B names the source")
        verdicts = text_of(screen.query_one("#d-verdicts", Static))
        assert f"{getpass.getuser()} (" in verdicts and "B names the source" in verdicts
        assert not app.errors()
    assert stored_pairs(workspace["path"]) == [
        ([q, AO, BO], getpass.getuser(), 1, "B names the source")]


async def test_side_by_side_in_the_newest_arena_and_a_pair_no_arena_holds(workspace):
    add_later_arena(workspace)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_item(pilot, app)
        q = screen.current[1]
        await pilot.press("s")              # fake-b beside fake-a: the only other system
        await settle(pilot)
        assert screen.second == B
        await scroll_to_setting(pilot, screen, "base")
        dialog = await verdict_key(pilot, "e")
        a, b, verdict, arena, pair, judge = shown(dialog)
        assert (a, b, verdict, arena) == (AB, BB, "tie", "later")     # the newest arena
        assert judge == f"Arena later (judge reference:f1): it chose {AB}."
        # the older arena never judged the base answers: said in one line, with what to do
        dialog.query_one("#hv-arena", Select).value = "duel"
        await settle(pilot)
        judge = shown(dialog)[5]
        assert judge.startswith("Arena duel has no battle between these two answers on this "
                                "query (arena later has one): Enter stores your verdict")
        assert "`mirage-tui arena judge alpha --judge smollm2-135m-instruct --settings base`" \
            in judge
        assert (shown(dialog)[0], shown(dialog)[1]) == (AB, BB)   # the pair is not swapped
        await pilot.press("escape")
        await settle(pilot)

        # the mixed panels side by side: the pair duel judged
        await scroll_to_setting(pilot, screen, "mixed")
        dialog = await verdict_key(pilot, "a")
        assert shown(dialog)[:4] == (AM, BM, "a", "later")
        assert "Arena later has no battle" in shown(dialog)[5]
        assert "(arena duel has one)" in shown(dialog)[5]
        await save(pilot, dialog, "")
        assert not app.errors()
    assert stored_pairs(workspace["path"]) == [([q, AM, BM], getpass.getuser(), -1, None)]


async def test_the_leaderboards_arena_and_a_pair_no_arena_judged(workspace):
    add_later_arena(workspace)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_item(pilot, app, arena="duel")
        q = screen.current[1]
        await scroll_to_setting(pilot, screen, "base")
        dialog = await verdict_key(pilot, "a")
        # fake-a's base answer was judged in arena later only: duel has no partner for it
        a, b, verdict, arena, _, judge = shown(dialog)
        assert (a, b, verdict, arena) == (AB, AM, "a", "duel")  # the first other panel
        assert judge.startswith("Arena duel has no battle between these two answers")
        # B: fake-b's oracle answer, in the other order (A better: fake-b's oracle answer)
        dialog.query_one("#hv-a", Select).value = BO
        dialog.query_one("#hv-b", Select).value = AB
        await settle(pilot)
        await save(pilot, dialog, "")
        verdicts = text_of(screen.query_one("#d-verdicts", Static))
        assert f"no arena: {AB}  vs  {BO}  (no arena judged this pair)" in verdicts
        assert "B better" in verdicts
        assert not app.errors()
    # stored sorted (no battle names the pair), the verdict turned with it
    assert stored_pairs(workspace["path"]) == [([q, AB, BO], getpass.getuser(), 1, None)]


async def test_a_verdict_stored_before_keeps_its_pair(workspace):
    from engine.arena.trust.human_verdicts import human_verdicts_for, pair_id
    from engine.runs.lookup import load_run
    from engine.store.arenas import save_app_verdict

    q = min(workspace["queries"]["alpha"])      # the first row's query
    store = Store(workspace["path"])
    # as the dialog before issue 34 stored it: the battle's order, oracle before mixed
    save_app_verdict(store, "verdicts:alpha", "h", "verdicts entered in the app on run alpha",
                     pair_id(q, AO, AM), "question", "demo", "oracle answer", "mixed answer",
                     "someone", -1, "kept", "2025-01-01T00:00:00+00:00")
    store.close()
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_item(pilot, app)
        assert screen.current[1] == q
        verdicts = text_of(screen.query_one("#d-verdicts", Static))
        assert f"duel: {AO}  vs  {AM}" in verdicts
        assert "someone (2025-01-01T00:00): A better · kept" in verdicts
        # the same pair picked the other way round joins the stored one, turned with it
        await scroll_to_setting(pilot, screen, "mixed")
        dialog = await verdict_key(pilot, "a")
        dialog.query_one("#hv-a", Select).value = AM
        dialog.query_one("#hv-b", Select).value = AO
        await settle(pilot)
        assert shown(dialog)[4] == f"Your verdict: {AM} is better than {AO}"
        await save(pilot, dialog, "")
        assert not app.errors()
    assert stored_pairs(workspace["path"]) == [
        ([q, AO, AM], getpass.getuser(), 1, None), ([q, AO, AM], "someone", -1, "kept")]
    store = Store(workspace["path"])
    found = human_verdicts_for(store, load_run(store, "alpha"), q)
    store.close()
    assert list(found) == [(AO, AM)]
    assert sorted((h.annotator, h.label) for h in found[(AO, AM)]) == [
        (getpass.getuser(), 1), ("someone", -1)]


async def test_the_inspector_opened_from_the_leaderboard_reads_its_arena(workspace):
    from mirage_tui.screens.inspector import InspectorScreen
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    add_later_arena(workspace)
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await open_screen(pilot, LeaderboardScreen("alpha", arena="duel"))
        table = app.screen.query_one("#ratings", DataTable)
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen) and inspector.arena == "duel"
        inspector.query_one("#insp-items", DataTable).focus()
        await pilot.press("enter")
        await settle(pilot)
        dialog = await verdict_key(pilot, "a")
        assert shown(dialog)[3] == "duel"         # not the newer arena "later"
        assert not app.errors()


async def test_a_run_without_arenas_takes_a_verdict_and_says_so(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, InspectorScreen("beta"))
        screen = app.screen
        screen.query_one("#insp-items", DataTable).focus()
        await pilot.press("enter")
        await settle(pilot)
        q = screen.current[1]
        await scroll_to_setting(pilot, screen, "mixed")
        dialog = await verdict_key(pilot, "b")   # not in the footer: no battle, still a dialog
        a, b, verdict, arena, _, judge = shown(dialog)
        assert (a, b, verdict, arena) == (AM, AB, "b", None)   # the first other panel
        assert judge.startswith("Run beta has no arena yet: Enter stores your verdict")
        assert "`mirage-tui arena judge beta --settings " in judge
        await save(pilot, dialog, "")
        assert not app.errors()
    # stored sorted, "B (base) is better" turned with it
    assert stored_pairs(workspace["path"]) == [([q, AB, AM], getpass.getuser(), -1, None)]

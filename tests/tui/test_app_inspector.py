"""The inspector and runs screens, driven by Pilot on a real workspace: the demo pool and two
runs made by the real run engine with scripted generators, and an arena
(:mod:`testkit.scripted_runs`; the ``workspace`` fixture of ``conftest.py``). Every item's
(b, o, m) pattern is known in advance from the scripts' ``LABELS``.
"""

from __future__ import annotations

import csv
import json

import pytest
from textual.widgets import DataTable, Input, Select, Static

from engine.metrics.adaptability import NOISE_VULNERABLE
from engine.runs.lookup import load_run
from engine.store import Store
from testkit.scripted_runs import A, B, FIXED_TIME, LABELS
from testkit.tui import RecordingApp, cells, open_screen, settle, text_of, wait_until

pytestmark = pytest.mark.asyncio


def expected_items(run: str, gen: str, queries: list[int], category: str) -> set[tuple]:
    from engine.metrics.adaptability import category_of

    return {(f"{gen}/mirage@1", s, q) for q, labels in zip(queries, LABELS[run][gen])
            if category_of(*labels) == category for s in ("base", "oracle", "mixed")}


# --------------------------------------------------------------------------- inspector


async def test_inspector_filters_by_category_and_opens_an_item(workspace):
    from mirage_tui.screens.inspector import ORACLE_MARK, InspectorScreen

    queries = workspace["queries"]["alpha"]
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, InspectorScreen("alpha"))
        screen = app.screen
        table = screen.query_one("#insp-items", DataTable)
        assert table.row_count == 2 * 6 * 3
        assert "36 items match" in text_of(screen.query_one("#insp-status", Static))

        screen.query_one("#f-category", Select).value = NOISE_VULNERABLE
        await settle(pilot)
        want = expected_items("alpha", "fake-a", queries, NOISE_VULNERABLE) | \
            expected_items("alpha", "fake-b", queries, NOISE_VULNERABLE)
        got = {tuple(k.value.split("\t")) for k in table.rows}
        assert {(s, t, int(q)) for s, t, q in got} == want
        status = text_of(screen.query_one("#insp-status", Static))
        assert f"{len(want)} items match" in status and "category noise vulnerable" in status

        screen.query_one("#f-system", Select).value = A
        await settle(pilot)
        want_a = expected_items("alpha", "fake-a", queries, NOISE_VULNERABLE)
        assert table.row_count == len(want_a) == 6
        assert all(cells(table, k.value)[5] == "b0o1m0" for k in table.rows)

        # the detail: query, golds, pool with the oracle starred, prompts, responses, scores
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        detail = screen.query_one("#insp-detail")
        first_nv = min(q for _, _, q in want_a)  # the list is by system, then query rowid
        assert detail.display and screen.current == (A, first_nv)
        panels = [text_of(p) for p in screen.query(".setting-panel").results(Static)]
        assert len(panels) == 3
        base, oracle, mixed = panels
        assert "Question: " in base and "Prompt sent" in base and "I am not sure." in base
        assert "Context : " in oracle and "The answer is" in oracle
        assert "em_loose" in oracle and "f1_mirage" in oracle
        cards = [text_of(c) for c in screen.query(".pool-chunk").results(Static)]
        assert sum(ORACLE_MARK in c for c in cards) == 1
        assert len(screen.query(".pool-chunk.oracle")) == 1
        assert "noise vulnerable: right with oracle, wrong with mixed" in text_of(
            screen.query_one("#d-adapt", Static))
        # the arena's verdict on this query, with its probabilities
        verdicts = text_of(screen.query_one("#d-verdicts", Static))
        winner = {queries[0]: f"{B} | mixed wins", queries[4]: f"{B} | mixed wins"}[first_nv]
        assert "duel" in verdicts and winner in verdicts and "P(second) 85.0%" in verdicts

        # side by side: s picks the only other system; both columns, setting by setting
        await pilot.press("s")
        await settle(pilot)
        titles = [str(p.border_title) for p in screen.query(".setting-panel")]
        assert len(titles) == 6
        assert titles[:2] == [f"{A} · base", f"{B} · base"]
        assert "  vs  " in text_of(screen.query_one("#d-meta", Static))

        await pilot.press("escape")  # back to the list
        assert screen.query_one("#insp-items").display
        await pilot.press("escape")  # back to where it was opened from
        assert app.screen is not screen
        assert not app.errors()


async def test_inspector_pattern_range_and_opening_a_query(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    queries = workspace["queries"]["alpha"]
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        qid = Store(workspace["path"]).query("SELECT query_id FROM queries WHERE id = ?",
                                             (queries[3],))[0][0]
        await open_screen(pilot, InspectorScreen("alpha", system=B, pattern="b0o0m0",
                                                 query=qid))
        screen = app.screen
        # opened straight on the query, the list behind it filtered as asked
        assert screen.current == (B, queries[3])
        table = screen.query_one("#insp-items", DataTable)
        assert table.row_count == 3 and screen.total == 3
        await pilot.press("escape")
        await pilot.press("x")  # clear the filters
        await settle(pilot)
        assert table.row_count == 36
        screen.query_one("#f-metric", Select).value = "em_loose"
        screen.query_one("#f-setting", Select).value = "mixed"
        screen.query_one("#f-max", Input).value = "0"
        wrong_mixed = sum(1 for gen in ("fake-a", "fake-b") for labels in LABELS["alpha"][gen]
                          if labels[2] == 0)
        status = screen.query_one("#insp-status", Static)
        await wait_until(pilot, lambda: text_of(status).startswith(f"{wrong_mixed} items match")
                         and table.row_count == wrong_mixed, 30, "the filtered list")
        await settle(pilot)
        assert table.row_count == wrong_mixed
        assert f"{wrong_mixed} items match" in text_of(screen.query_one("#insp-status", Static))
        assert not app.errors()


async def test_inspector_unknown_run_is_an_error_not_a_crash(workspace):
    from mirage_tui.screens.inspector import InspectorScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, InspectorScreen("nope"))
        assert any("no run named 'nope'" in e for e in app.errors())
        assert "Cannot open the run" in text_of(app.screen.query_one("#insp-status", Static))
        assert app.is_running


# --------------------------------------------------------------------------- verdicts


async def test_verdicts_for_reads_one_query_with_order_and_probs(workspace):
    from engine.arena.ratings.verdicts import verdicts_for

    store = Store(workspace["path"])
    q = workspace["queries"]["alpha"][0]
    run = load_run(store, "alpha")
    verdicts = verdicts_for(store, run, q)
    assert [(v.system_a, v.system_b, v.winner_name) for v in verdicts] == [
        (f"{A} | mixed", f"{B} | mixed", f"{B} | mixed"),
        (f"{A} | oracle", f"{A} | mixed", f"{A} | mixed"),
        (f"{A} | oracle", f"{B} | oracle", f"{A} | oracle")]
    unparsed = verdicts_for(store, run, workspace["queries"]["alpha"][4])[-1]
    assert unparsed.winner is None and unparsed.winner_name is None
    assert unparsed.parse_failures == 1 and unparsed.orders[0].winner is None
    first = verdicts[0]
    assert first.arena == "duel" and first.judge == "smollm2-135m-instruct"
    assert first.orders[0].label == "B" and first.orders[0].winner == f"{B} | mixed"
    assert first.orders[0].probs["B"] == 0.85
    assert first.involves(A) and first.involves(f"{B} | mixed") and not first.involves("x")
    assert verdicts_for(store, load_run(store, "beta"), q) == []


# --------------------------------------------------------------------------- runs


async def test_runs_list_summary_compare_and_export(workspace, tmp_path):
    from mirage_tui.dialogs.export_run import ExportRunScreen
    from mirage_tui.screens.runs import RunsScreen

    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, RunsScreen())
        screen = app.screen
        table = screen.query_one("#runs", DataTable)
        assert table.row_count == 2
        alpha = cells(table, "alpha")
        assert alpha[:4] == ["alpha", "demo@1", "done", "36/36"]
        assert "fake-a, fake-b" in alpha[4] and "cpu" in alpha
        assert alpha[-2:] == [FIXED_TIME["alpha"][:10], FIXED_TIME["alpha"][11:16]]

        # Enter: the summary with accuracy per system × setting and adaptability, CIs and n
        table.move_cursor(row=table.get_row_index("alpha"))
        await pilot.press("enter")
        await settle(pilot)
        summary = text_of(screen.query_one("#run-summary", Static))
        assert "Accuracy (EM_loose)" in summary and "n=6" in summary
        assert "NV" in summary and "[" in summary and B in summary
        assert f"created {FIXED_TIME['alpha'][:16]}" in summary
        # fake-a oracle accuracy 4/6
        assert "66.7" in summary

        # compare: mark alpha with space, then c on beta
        await pilot.press("space")
        assert cells(table, "alpha")[0] == "● alpha"
        table.move_cursor(row=table.get_row_index("beta"))
        await pilot.press("c")
        await settle(pilot)
        # c opens the Compare screen: paired on shared items, the runs side by side below
        from mirage_tui.screens.compare import CompareScreen
        assert isinstance(app.screen, CompareScreen)
        compare = text_of(app.screen.query_one("#cmp-more", Static))
        assert "alpha" in compare and "beta" in compare
        # fake-a mixed: alpha 2/6, beta 4/6 → +33.3 pp; fake-b is only in alpha
        mixed_row = next(line for line in compare.splitlines()
                         if line.startswith(A) and " mixed " in line)
        assert "+33.3" in mixed_row and "CIs overlap" in mixed_row
        assert f"only in alpha: {B}" in compare
        # and paired on the items both answered (issue 16): alpha's fake-a against beta's
        verdict = text_of(app.screen.query_one("#cmp-verdict", Static))
        assert "No clear difference on em_loose (mixed): +33.3 pp" in verdict
        assert "18 shared items" in verdict
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen

        # export beta as JSONL through the modal
        out = tmp_path / "exports" / "beta.jsonl"
        out.parent.mkdir()                  # an export never makes folders (issue 35)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportRunScreen)
        app.screen.query_one("#export-path", Input).value = str(out)
        app.screen.query_one("#export-format", Select).value = "jsonl"
        await pilot.press("enter")
        await settle(pilot)
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert lines[0]["type"] == "header" and lines[0]["run"] == "beta"
        assert len(lines) == 1 + 18
        assert any(str(out) in m for m, _ in app.notes)

        # and as CSV in a folder we name: the dialog starts in the format last used (JSONL)
        await pilot.press("e")
        await pilot.pause()
        assert app.screen.query_one("#export-format", Select).value == "jsonl"
        app.screen.query_one("#export-format", Select).value = "csv"
        csv_out = tmp_path / "beta.csv"
        app.screen.query_one("#export-path", Input).value = str(csv_out)
        await pilot.press("enter")
        await settle(pilot)
        with csv_out.open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert len(rows) == 18 and rows[0]["run"] == "beta"
        assert not app.errors()


async def test_runs_empty_workspace_says_what_to_do(tmp_path):
    from mirage_tui.screens.inspector import InspectorScreen  # noqa: F401 (imports cleanly)
    from mirage_tui.screens.runs import RunsScreen

    app = RecordingApp(tmp_path / "empty.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_screen(pilot, RunsScreen())
        screen = app.screen
        assert screen.query_one("#runs", DataTable).row_count == 0
        assert "No runs yet" in text_of(screen.query_one("#run-summary", Static))
        await pilot.press("enter", "i", "b", "c", "e", "space")
        await settle(pilot)
        assert not app.errors()
        assert isinstance(app.screen, RunsScreen)

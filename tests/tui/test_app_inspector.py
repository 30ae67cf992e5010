"""The inspector and runs screens, driven by Pilot on a real workspace.

The workspace: the demo pool and two runs made by the real run engine (plan, execute, scoring)
with scripted generators at the edge. A scripted generator knows, per query, whether to answer
right (with the gold answer) or wrong in each of base, oracle and mixed, so every item's
(b, o, m) pattern is known in advance:

- run ``alpha``: ``fake-a`` and ``fake-b`` on 6 sampled queries × base/oracle/mixed;
- run ``beta``: ``fake-a`` only, with other labels (for comparing runs);
- arena ``duel`` on ``alpha``: pairwise battles between the two systems' mixed answers.

The workspace is built once per session and copied for each test (building runs the engine).
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil

import pytest
from textual.widgets import DataTable, Input, Select, Static
from textual.worker import WorkerState

from engine.datasets.demo_pool import ensure_demo
from engine.metrics.adaptability import NOISE_VULNERABLE
from engine.runs import RunConfig, execute, plan_run
from engine.store import Store
from mirage_tui.app import MirageApp
from models.base import Generation, ModelIdentity

pytestmark = pytest.mark.asyncio

A, B = "fake-a/mirage@1", "fake-b/mirage@1"
# (base, oracle, mixed) EM_loose labels per sampled query, in plan order
LABELS = {
    "alpha": {"fake-a": [(0, 1, 0), (0, 1, 1), (0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 1)],
              "fake-b": [(0, 1, 1), (0, 1, 1), (0, 1, 0), (0, 0, 0), (1, 1, 1), (0, 1, 1)]},
    "beta": {"fake-a": [(1, 1, 1), (0, 1, 1), (0, 1, 1), (1, 0, 0), (0, 1, 1), (1, 1, 0)]},
}
FIXED_TIME = {"alpha": "2025-01-02 10:00:00", "beta": "2025-01-03 11:30:00"}
WRONG = "I am not sure."


# --------------------------------------------------------------------------- the workspace


class _Rendered:
    def __init__(self, text: str):
        self.text = text
        self.tokens = list(range(len(text) // 4 + 1))


class ScriptedGenerator:
    """Answers each query right or wrong per setting, as its script says: right is
    "The answer is <gold>.", wrong is "I am not sure."."""

    chat = True
    supports_label_probs = False
    device = "cpu"

    def __init__(self, name: str, script: dict[str, tuple[str, tuple[int, int, int]]],
                 salt: str = ""):
        self.name, self.n_ctx, self.script = name, 8192, script
        # another script is another model: the generation cache must not mix them up
        self.sha = hashlib.sha256(f"{name}|{salt}".encode()).hexdigest()

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, self.sha, None, self.n_ctx, "scripted")

    def render(self, messages) -> _Rendered:
        return _Rendered("".join(f"<{m['role']}>{m['content']}" for m in messages))

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def generate(self, messages, params) -> Generation:
        text = self.render(messages).text
        if "Context : " not in text:
            slot, question = 0, text.split("Question: ", 1)[1].split("\n\nAnswer", 1)[0]
        else:
            question, _, context = text.split("Question : ", 1)[1].partition(
                "\n\nContext : ")
            slot = 2 if context.startswith("1. ") else 1
        gold, labels = self.script[question]
        answer = f"The answer is {gold}." if labels[slot] else WRONG
        return Generation(text=answer, prompt_tokens=len(text) // 4 + 1, completion_tokens=6,
                          prompt_tokens_evaluated=len(text) // 4 + 1, seconds=0.001,
                          finish_reason="stop", device="cpu", prompt_text=text)


def make_run(store: Store, name: str) -> list[int]:
    """Plan and execute run ``name`` with its scripted generators; returns its query rowids
    in plan order."""
    labels = LABELS[name]
    cfg = RunConfig(dataset="demo", generators=list(labels), settings=["base", "oracle", "mixed"],
                    sample=6, name=name)
    plan = plan_run(store, cfg, check_models=False)
    queries = list(dict.fromkeys(plan.queries))
    texts = {r["id"]: (r["text"], json.loads(r["answers"])[0]) for r in store.query(
        f"SELECT id, text, answers FROM queries WHERE id IN ({','.join('?' * len(queries))})",
        tuple(queries))}
    generators = {gen: ScriptedGenerator(gen, {texts[q][0]: (texts[q][1], labels[gen][i])
                                               for i, q in enumerate(queries)}, salt=name)
                  for gen in labels}
    summary = execute(store, plan, generators=generators)
    assert summary.status == "done", summary
    with store.write() as db:  # no clocks in snapshots
        db.conn.execute("UPDATE runs SET created_at = ?, updated_at = ? WHERE name = ?",
                        (FIXED_TIME[name], FIXED_TIME[name], name))
    return queries


def add_arena(store: Store, run: str, name: str, battles: list[tuple[int, str, str, str]],
              judge: str = "smollm2-135m-instruct") -> None:
    """An arena with battles (query rowid, system_a, system_b, winner), each shown 'ab' with
    label probabilities, as the judging engine stores them."""
    run_id = store.query("SELECT id FROM runs WHERE name = ?", (run,))[0][0]
    with store.write() as db:
        cur = db.conn.execute(
            "INSERT INTO arenas (run_id, name, mode, config, header, status, created_at, "
            "updated_at) VALUES (?, ?, 'pairwise', ?, '{}', 'done', ?, ?)",
            (run_id, name, json.dumps({"judge": judge, "seed": 0}), FIXED_TIME[run],
             FIXED_TIME[run]))
        for query, a, b, winner in battles:
            label = {"a": "A", "b": "B", "tie": "tie", None: None}[winner]
            probs = {"A": 0.8, "B": 0.15, "tie": 0.05} if label == "A" else \
                {"A": 0.1, "B": 0.85, "tie": 0.05} if label == "B" else \
                {"A": 0.3, "B": 0.3, "tie": 0.4}
            detail = {"orders": [{"shown": "ab", "label": label, "probs": probs,
                                  "method": "logits", "key": f"k-{query}-{a}-{b}"}],
                      "documents": 5, "disagreement": False}
            db.conn.execute(
                "INSERT INTO battles (arena_id, query_rowid, system_a, system_b, winner, shown, "
                "judgment_keys, parse_failures, refusal, detail, created_at) "
                "VALUES (?, ?, ?, ?, ?, 'ab', ?, ?, 0, ?, ?)",
                (cur.lastrowid, query, a, b, winner, json.dumps([f"k-{query}-{a}-{b}"]),
                 int(winner is None), json.dumps(detail), FIXED_TIME[run]))


def duel_battles(queries: list[int]) -> list[tuple[int, str, str, str]]:
    """fake-b's mixed answers beat fake-a's on 4 queries, lose on 1, tie on 1; oracle vs mixed
    of fake-a on every query (oracle wins 5, loses 1); fake-a's oracle against fake-b's (one
    verdict unparsed)."""
    am, bm, ao, bo = f"{A} | mixed", f"{B} | mixed", f"{A} | oracle", f"{B} | oracle"
    winners = ["b", "b", "a", "tie", "b", "b"]
    out = [(q, am, bm, w) for q, w in zip(queries, winners)]
    out += [(q, ao, am, "a" if i else "b") for i, q in enumerate(queries)]
    # a fourth contestant, so that the surrogate (which needs 4) can be fitted
    out += [(q, ao, bo, w) for q, w in zip(queries, ["a", "b", "a", "a", None, "tie"])]
    return out


@pytest.fixture(scope="session")
def workspace_template(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("inspect-workspace")
    path = folder / "workspace.db"
    store = Store(path)
    ensure_demo(store)
    queries = {name: make_run(store, name) for name in ("alpha", "beta")}
    add_arena(store, "alpha", "duel", duel_battles(queries["alpha"]))
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return {"path": path, "queries": queries}


@pytest.fixture
def workspace(workspace_template, tmp_path) -> dict:
    path = tmp_path / "workspace.db"
    shutil.copy(workspace_template["path"], path)
    return {"path": path, "queries": workspace_template["queries"]}


# --------------------------------------------------------------------------- pilot helpers


class RecordingApp(MirageApp):
    """The real app, remembering every notification it showed."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[tuple[str, str]] = []

    def notify(self, message, *, severity="information", **kwargs) -> None:
        self.notes.append((str(message), severity))
        super().notify(message, severity=severity, **kwargs)

    def errors(self) -> list[str]:
        return [m for m, sev in self.notes if sev == "error"]


async def settle(pilot, rounds: int = 60, quiet: int = 3) -> None:
    """Wait until no worker is pending or running, ``quiet`` times in a row: a worker's
    message may start the next worker only when it is handled, a pause later."""
    idle = 0
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        busy = [w for w in pilot.app.workers
                if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        idle = 0 if busy else idle + 1
        if idle >= quiet:
            return
    raise AssertionError(f"workers still busy: {busy}")


def text_of(widget: Static) -> str:
    content = widget.content
    return getattr(content, "plain", None) or str(content)


def cells(table: DataTable, key: str) -> list[str]:
    return [getattr(c, "plain", None) or str(c) for c in table.get_row(key)]


def expected_items(run: str, gen: str, queries: list[int], category: str) -> set[tuple]:
    from engine.metrics.adaptability import category_of

    return {(f"{gen}/mirage@1", s, q) for q, labels in zip(queries, LABELS[run][gen])
            if category_of(*labels) == category for s in ("base", "oracle", "mixed")}


async def open_screen(pilot, screen) -> None:
    await settle(pilot)
    await pilot.app.push_screen(screen)
    await settle(pilot)


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
        assert f"{len(want)} items match" in status and "noise_vulnerable" in status

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
        assert "duel" in verdicts and winner in verdicts and "0.85" in verdicts

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
        await pilot.pause(0.5)
        await settle(pilot)
        wrong_mixed = sum(1 for gen in ("fake-a", "fake-b") for labels in LABELS["alpha"][gen]
                          if labels[2] == 0)
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
    from engine.arena.verdicts import verdicts_for

    store = Store(workspace["path"])
    q = workspace["queries"]["alpha"][0]
    verdicts = verdicts_for(store, "alpha", q)
    assert [(v.system_a, v.system_b, v.winner_name) for v in verdicts] == [
        (f"{A} | mixed", f"{B} | mixed", f"{B} | mixed"),
        (f"{A} | oracle", f"{A} | mixed", f"{A} | mixed"),
        (f"{A} | oracle", f"{B} | oracle", f"{A} | oracle")]
    unparsed = verdicts_for(store, "alpha", workspace["queries"]["alpha"][4])[-1]
    assert unparsed.winner is None and unparsed.winner_name is None
    assert unparsed.parse_failures == 1 and unparsed.orders[0].winner is None
    first = verdicts[0]
    assert first.arena == "duel" and first.judge == "smollm2-135m-instruct"
    assert first.orders[0].label == "B" and first.orders[0].winner == f"{B} | mixed"
    assert first.orders[0].probs["B"] == 0.85
    assert first.involves(A) and first.involves(f"{B} | mixed") and not first.involves("x")
    assert verdicts_for(store, "beta", q) == []


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
        compare = text_of(screen.query_one("#run-summary", Static))
        assert "alpha" in compare and "beta" in compare
        # fake-a mixed: alpha 2/6, beta 4/6 → +33.3 points; fake-b is only in alpha
        mixed_row = next(line for line in compare.splitlines()
                         if line.startswith(A) and " mixed " in line)
        assert "+33.3" in mixed_row and "CIs overlap" in mixed_row
        assert f"only in alpha: {B}" in compare

        # export beta as JSONL through the modal
        out = tmp_path / "exports" / "beta.jsonl"
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

        # and as CSV with its default path in a folder we name
        await pilot.press("e")
        await pilot.pause()
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

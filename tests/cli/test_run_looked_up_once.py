"""Each command looks its run up by name once and hands the ``RunInfo`` down: ``run`` (a new
run, its dry run, the same command again to resume, ``--resume NAME``, ``--force-new``),
``report``, ``arena judge`` and ``compare`` (each of its two runs once). ``plan_run`` takes the run it is given and opening the run
claims or inserts it without reading it again.

Traced, on every connection the commands open: every statement that reads the ``runs`` table
by a run's name (whatever function sends it), and every call of the store's look-ups by name
(``engine.store.runs.run_by_name``, behind ``load_run`` and ``find_run``, and
``run_id_named``). (The TUI's New run: ``tests/tui/test_app_new_run_plans_once.py``.)"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

import engine.store.runs as run_table
from engine.datasets.demo_pool import ensure_demo
from engine.runs import lookup
from engine.store import Store
from mirage_tui import cli
from testkit.scripted import ScriptedGenerator, ScriptedJudge

NAME = "once"
RUN = ("--dataset", "demo", "--generator", "smollm2", "--sample", "2", "--settings",
       "base,oracle", "--name", NAME)
BY_NAME = re.compile(r"\bFROM runs\b.*\bname = '", re.IGNORECASE | re.DOTALL)


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> str:
    """The demo pool; any generator the commands load is scripted, ``fake`` a judge."""
    import models.catalog

    store = Store(tmp_path / "w.db")
    ensure_demo(store)
    store.close()
    monkeypatch.setattr(models.catalog, "load_generator", lambda name, **opts: (
        ScriptedJudge() if name == "fake" else ScriptedGenerator(name, sha="5" * 64)))
    return str(tmp_path / "w.db")


@pytest.fixture
def lookups(monkeypatch) -> dict[str, list]:
    """What the commands run from here on looked the run up with: ``statements`` (SQL reading
    ``runs`` by name) and ``calls`` (the store functions that do)."""
    seen: dict[str, list] = {"statements": [], "calls": []}
    connect = Store._connect

    def traced(self):
        conn = connect(self)
        conn.set_trace_callback(
            lambda sql: seen["statements"].append(sql) if BY_NAME.search(sql) else None)
        return conn

    def counted(module, name):
        real = getattr(module, name)

        def call(*args, **kwargs):
            seen["calls"].append(name)
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, call)

    monkeypatch.setattr(Store, "_connect", traced)
    counted(lookup, "run_by_name")          # load_run and find_run read through it
    counted(run_table, "run_by_name")
    counted(run_table, "run_id_named")
    return seen


def command(lookups, *args: str) -> tuple[int, int]:
    """``mirage-tui ARGS`` in this process (exit status 0 asserted); the look-ups it made:
    (statements, calls)."""
    for found in lookups.values():
        found.clear()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    assert code == 0, err.getvalue()
    return len(lookups["statements"]), len(lookups["calls"])


def test_run_resume_report_and_arena_judge_each_look_the_run_up_once(workspace, lookups):
    db = ("--db", workspace)
    commands = [
        ("run", *db, *RUN, "--dry-run"),                    # a new run: found to be none
        ("run", *db, *RUN),                                 # planned and stored
        ("run", *db, *RUN, "--dry-run", "--json"),          # what resuming it would do
        ("run", *db, *RUN),                                 # the same command resumes it
        ("run", *db, "--resume", NAME),
        ("run", *db, *RUN, "--force-new"),                  # replaced: deleted by its id
        ("report", NAME, *db, "--n-boot", "20"),
        ("arena", "judge", NAME, "--judge", "fake", "--settings", "base,oracle", *db),
    ]
    made = {args: command(lookups, *args) for args in commands}
    assert made == {args: (1, 1) for args in commands}, {
        " ".join(a[:1] + a[3:]): m for a, m in made.items()}


def test_a_resume_refused_for_another_configuration_looks_it_up_once(workspace, lookups):
    command(lookups, "run", "--db", workspace, *RUN)
    for found in lookups.values():
        found.clear()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main(["run", "--db", workspace, *RUN, "--seed", "3"])
    assert code != 0 and "differs in: seed" in err.getvalue()
    assert (len(lookups["statements"]), len(lookups["calls"])) == (1, 1)


def test_compare_looks_each_of_its_runs_up_once(workspace, lookups):
    db = ("--db", workspace)
    command(lookups, "run", *db, *RUN)
    command(lookups, "run", *db, *RUN[:-1], "other")
    assert command(lookups, "compare", NAME, "other", *db, "--n-boot", "20") == (2, 2)
    assert command(lookups, "compare", NAME, "other", *db, "--n-boot", "20", "--json") == (2, 2)

"""A run is loaded once per command and passed down (issue 28): the report, the run's page,
the item browser, the Inspector's reads and the export take the ``RunInfo`` they are given and
never look the run up again by name. And the results package reads through the store layer
and does not reach up into the arena."""

from __future__ import annotations

import ast
import dataclasses
import io
import json
from pathlib import Path

import pytest

from engine.results.export import export_run
from engine.results.html.items import item_data
from engine.results.html.run_page import run_page
from engine.results.inspector import count_items_for, inspector_facets, item_detail, items_for
from engine.runs.lookup import RunNotFound, load_run
from engine.store.runs import known_runs
from engine.results.report import build_report
from testkit.sql_finder import raw_sql

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def gone(toy):
    """The toy run as loaded, under a name the workspace does not know: any look-up by name
    from here on raises :class:`RunNotFound`."""
    run = dataclasses.replace(load_run(toy, "toy-run"), name="renamed-away")
    assert run.name not in known_runs(toy)
    with pytest.raises(RunNotFound):
        load_run(toy, run.name)
    return run


def test_the_report_and_its_page_use_the_run_they_are_given(toy, gone):
    report = build_report(toy, gone, n_boot=20).as_json()
    assert report["run"] == "renamed-away"
    assert report["items"]["done"] == build_report(toy, load_run(toy, "toy-run"),
                                                   n_boot=20).as_json()["items"]["done"] > 0
    page = run_page(toy, gone, n_boot=20)
    assert "Run renamed-away" in page
    data = item_data(toy, gone)
    assert data["total"] == report["items"]["done"] and data["shown"] == data["total"]


def test_the_inspector_and_the_export_use_the_run_they_are_given(toy, gone):
    rows = items_for(toy, gone, limit=1000)
    assert len(rows) == count_items_for(toy, gone) > 0
    assert inspector_facets(toy, gone)["systems"] == sorted({r.system for r in rows})
    detail = item_detail(toy, gone, rows[0].system, rows[0].query_id)
    assert detail.run == "renamed-away" and detail.settings
    out = io.StringIO()
    export_run(toy, gone, format="jsonl", out=out)
    lines = out.getvalue().splitlines()
    assert json.loads(lines[0])["run"] == "renamed-away" and len(lines) == len(rows) + 1


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_results_does_not_import_the_arena():
    files = sorted((ROOT / "engine" / "results").rglob("*.py"))
    assert files
    reaching = {f.relative_to(ROOT).as_posix(): sorted(m for m in _imports(f)
                                                       if m.startswith("engine.arena"))
                for f in files}
    assert {f: m for f, m in reaching.items() if m} == {}


def test_results_reads_only_through_the_store_layer():
    files = sorted((ROOT / "engine" / "results").rglob("*.py"))
    assert files and raw_sql(files, ROOT) == []

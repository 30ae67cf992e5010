"""Exporting an inspector view (issue 18 item 13): the items matching the view's filters, in
its order, each row the same as in the whole run's export, streamed by keyset pages."""

from __future__ import annotations

import csv
import io
import json

import pytest

import engine.results.export as export
from engine.results.export import export_rows, export_run, header_path
from engine.results.inspector import items_for
from engine.runs.lookup import load_run
from testkit.toy_run import A


def _key(row) -> tuple:
    return (row["system"], row["setting"], row["query_id"])


VIEWS = [
    ({"system": A, "search": "ans"}, "em", True),
    ({"category": "noise_vulnerable"}, None, False),
    ({"language": "de"}, "response", False),
    ({}, "setting", True),
    ({"metric": "f1_mirage", "min_value": 0.5, "max_value": None}, "question", False),
]


@pytest.mark.parametrize("filters,sort,descending", VIEWS)
@pytest.mark.parametrize("page", [2, 500])
def test_a_view_exports_its_items_in_its_order(toy, monkeypatch, filters, sort, descending,
                                               page):
    monkeypatch.setattr(export, "VIEW_PAGE", page)
    shown = items_for(toy, load_run(toy, "toy-run"), limit=10**6, sort=sort, descending=descending,
                      **filters)
    assert shown
    out = io.StringIO()
    export_run(toy, load_run(toy, "toy-run"), format="jsonl", out=out, filters=filters, sort=sort,
               descending=descending)
    header, *items = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [_key(r) for r in items] == [(r.system, r.setting, r.query_id) for r in shown]
    assert header["rows"] == len(shown)
    assert header["view"] == {"filters": {k: v for k, v in filters.items() if v is not None},
                              "sort": sort or "system", "descending": descending}
    # every row as the whole run's export has it (prompt, response, every score and why)
    columns, whole = export_rows(toy, load_run(toy, "toy-run"))
    by_key = {_key(r): r for r in whole}
    for item in items:
        assert item.pop("type") == "item"
        assert item == json.loads(json.dumps(by_key[_key(item)]))
    assert list(items[0]) == columns


def test_a_view_exports_as_csv_with_its_header(toy, tmp_path):
    path = export_run(toy, load_run(toy, "toy-run"), format="csv", out=tmp_path / "view.csv",
                      filters={"search": "do not know", "setting": "base"})
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    expected = items_for(toy, load_run(toy, "toy-run"), limit=10**6, search="do not know", setting="base")
    assert [(r["system"], r["setting"], r["query_id"]) for r in rows] == \
        [(r.system, r.setting, r.query_id) for r in expected]
    assert all(r["response"] == "I do not know." for r in rows)
    header = json.loads(header_path(path).read_text(encoding="utf-8"))
    assert header["rows"] == len(rows) and header["view"]["filters"] == {
        "search": "do not know", "setting": "base"}


def test_no_view_is_the_whole_run(toy):
    out = io.StringIO()
    export_run(toy, load_run(toy, "toy-run"), format="jsonl", out=out, filters={"system": None})
    header, *items = [json.loads(line) for line in out.getvalue().splitlines()]
    assert "view" not in header and len(items) == header["rows"] == 61


def test_a_bad_view_is_named(toy):
    with pytest.raises(ValueError, match="unknown sort 'colour'"):
        export_run(toy, load_run(toy, "toy-run"), format="jsonl", out=io.StringIO(), sort="colour")
    with pytest.raises(ValueError, match="unknown category 'nope'"):
        export_run(toy, load_run(toy, "toy-run"), format="jsonl", out=io.StringIO(),
                   filters={"category": "nope"})

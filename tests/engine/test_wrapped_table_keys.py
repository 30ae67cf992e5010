"""A table too wide for the terminal is split into panels, and every panel repeats the
columns that tell its rows apart (system, context, k, setting): ``report``'s Table 1 once
dropped Context and k after its first panel, so four rows read the same
``gemma3-270m/mirage@1``. Checked on a run whose settings differ only in k, through
``format_report`` and the comparison and summary text, at widths that split them."""

from __future__ import annotations

import pytest
from testkit.runs import BackwardsRetriever, config, run

from engine.datasets.demo_pool import ensure_demo
from engine.results.comparison import (compare_reports, comparison_segments, plain,
                                       summary_segments)
from engine.results.report import build_report
from engine.results.text import format_report
from engine.runs.lookup import load_run
from engine.text_fit import cell_len, fit_table, identifying_columns

LABEL = "backwards#00000000"
TABLE_1_ENDS = ("Patterns", "Overall↑")     # a line under the table may explain Overall


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from engine.store import Store

    store = Store(tmp_path_factory.mktemp("panels") / "w.db")
    ensure_demo(store)
    cfg = config(settings=["base", "oracle", "mixed", "retrieved@1", "retrieved@3",
                           "retrieved@5"], retrievers=[LABEL], name="ks")
    _, summary = run(store, cfg, retrievers={LABEL: BackwardsRetriever(store, stores=True)})
    assert summary.status == "done"
    return build_report(store, load_run(store, "ks"), n_boot=50)


def _section(text: str, start: str, end: str | tuple[str, ...]) -> list[str]:
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    last = next(i for i in range(first + 1, len(lines)) if lines[i].startswith(end))
    return lines[first:last]


def _panels(lines: list[str], head: str) -> list[list[str]]:
    """The panels of a table: each from its header line (starting ``head``) to the next blank
    line; the rows' first lines (a wrapped cell's next lines start with spaces)."""
    panels, current = [], None
    for line in lines:
        if line.startswith(head):
            current = []
            panels.append(current)
        elif not line.strip():
            current = None
        elif current is not None and not line.startswith(" "):
            current.append(line)
    return panels


@pytest.mark.parametrize("width", [40, 60, 80])
def test_table_1_repeats_system_context_and_k_on_every_panel(report, width):
    text = format_report(report, width=width)
    assert max(cell_len(line) for line in text.splitlines()) <= width
    panels = _panels(_section(text, "Table 1.", TABLE_1_ENDS), "System")
    assert len(panels) >= 2, text          # narrow enough to split
    for rows in panels:
        assert len(rows) == 4
        assert len(set(rows)) == 4, rows   # the values alike: only the keys tell them apart
    heads = [line for line in _section(text, "Table 1.", TABLE_1_ENDS)
             if line.startswith("System")]
    assert all(h.split()[1:3] == ["Context", "k"] for h in heads), heads


@pytest.mark.parametrize("width", [40, 60])
def test_retrieval_and_accuracy_tables_keep_their_keys(report, width):
    text = format_report(report, width=width)
    for start, end, head, n in (("Table 2.", "Accuracy per setting", "Retriever", 3),
                                ("Accuracy per setting", "Metrics per setting", "System", 6)):
        panels = _panels(_section(text, start, end), head)
        assert panels, (start, text)
        for rows in panels:
            assert len(rows) == n and len(set(rows)) == n, (start, rows)


@pytest.mark.parametrize("width", [50, 70])
def test_comparison_and_summary_panels_tell_rows_apart(report, width):
    compared = plain(comparison_segments(compare_reports(report, report), width=width))
    accuracy = _panels(_section(compared, "Accuracy", "Adaptability"), "system")
    assert len(accuracy) >= 2, compared
    for rows in accuracy:
        assert len(rows) == 6 and len(set(rows)) == 6, rows   # system and setting on each
    # four systems × five shares; a long system name wraps onto a line of its own
    adaptability = _panels(compared.split("\nAdaptability\n", 1)[1].split("\n"), "system")
    assert len(adaptability) >= 2, compared
    for rows in adaptability:                                 # system and NV/CA/... on each
        panel = "\n".join(rows)
        for share in ("NV↓", "CA↑", "CI↓", "CM↓", "Overall↑"):
            assert panel.count(share) == 4, (share, panel)
        for k in (1, 3, 5):
            assert panel.count(f"retrieved@{k}") == 5, (k, panel)
    summary = plain(summary_segments(report, width=width))
    panels = _panels(_section(summary, "Adaptability", "Overall"), "system")
    assert len(panels) >= 2, summary
    for rows in panels:
        panel = "\n".join(rows)
        assert panel.count("fake-gen/mirage@1") == 4, panel
        assert all(panel.count(f"retrieved@{k}") == 1 for k in (1, 3, 5)), panel


def test_identifying_columns_stop_at_the_first_number():
    rows = [["System", "Context", "k", "n", "NV"],
            ["a", "ret", "1", "6", "0.0"], ["a", "ret", "3", "6", "0.0"],
            ["a", "mixed", "-", "6", "0.0"]]
    assert identifying_columns(rows, right={3}) == 3
    assert identifying_columns(rows[:2], right={3}) == 1          # one row: the first names it
    same = [rows[0], ["a", "ret", "1", "6", "0.0"], ["a", "ret", "1", "7", "1.0"]]
    assert identifying_columns(same, right={3}) == 1              # a number never names a row
    assert identifying_columns(rows, keys=2, right={3}) == 3
    panels = fit_table(rows, {3}, width=24)
    heads = [line for line in panels if line.startswith("System")]
    assert len(heads) >= 2 and all(h.split()[:3] == ["System", "Context", "k"] for h in heads)

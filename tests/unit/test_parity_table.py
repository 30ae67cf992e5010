"""docs/parity.md's parity table is generated from the metric docstrings (engine.metrics.parity):
it fails here when someone edits a docstring or the table without the other."""

import importlib.util
import json
import subprocess
import sys

import pytest

from engine.metrics.answer import METRICS
from engine.metrics.parity import (PARITY, ParityDocError, current_table, declared,
                                   parity_table, replace_table)
from testkit.paths import ROOT

PAGE = ROOT / "docs" / "parity.md"


def test_the_pages_table_is_what_the_docstrings_say():
    page = PAGE.read_text(encoding="utf-8")
    assert current_table(page) is not None, "docs/parity.md lost its parity-table markers"
    assert current_table(page) == parity_table(), (
        "docs/parity.md's parity table is stale: run `.venv/bin/python scripts/parity_table.py`")


def test_every_entry_declares_a_reference_and_a_deviation():
    for entry in PARITY:
        said = declared(entry.function)
        assert said["reference"] and said["deviation"], entry.metric


def test_every_stored_answer_metric_has_a_row():
    table = parity_table()
    for metric in METRICS:
        assert f"`{metric}`" in table, metric


def test_a_docstring_without_its_paragraphs_is_refused():
    def undeclared():
        """A metric with no Reference paragraph.

        Deviation: none.
        """

    with pytest.raises(ParityDocError, match="no Reference:"):
        declared(undeclared)


def test_multi_line_paragraphs_are_joined_and_pipes_escaped():
    def metric():
        """Something.

        Reference: a file ``x.py``
            over two lines.
        Deviation: a | b.

        Not part of it.
        """

    assert declared(metric) == {"reference": "a file ``x.py`` over two lines.",
                                "deviation": "a | b."}


def test_replace_table_keeps_the_rest_of_the_file():
    page = PAGE.read_text(encoding="utf-8")
    replaced = replace_table(page, "| x |")
    assert current_table(replaced) == "| x |"
    assert replace_table(replaced, parity_table()) == replace_table(page, parity_table())


def test_the_script_checks_the_page():
    out = subprocess.run([sys.executable, "scripts/parity_table.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def _benchmark(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_the_langid_table_is_the_committed_benchmark():
    bench = _benchmark("bench_langid")
    results = json.loads((ROOT / "benchmarks" / "results" / "langid_xquad.json").read_text())
    assert set(results["languages"]) == {"ar", "de", "en", "es", "hi", "ru", "th", "zh"}
    page = PAGE.read_text(encoding="utf-8")
    assert bench.BEGIN in page and bench.END in page, "docs/parity.md lost its langid-table markers"
    assert bench.with_table(page, bench.markdown(results)) == page, (
        "docs/parity.md's language-ID table is not benchmarks/results/langid_xquad.json's: run "
        "`.venv/bin/python benchmarks/bench_langid.py --doc`")


def test_the_estimates_table_is_the_committed_benchmark():
    bench = _benchmark("bench_estimates")
    results = json.loads((ROOT / "benchmarks" / "results" / "estimates.json").read_text())
    page = (ROOT / "docs" / "estimates.md").read_text(encoding="utf-8")
    assert f"{bench.BEGIN}\n{bench.table(results)}\n{bench.END}" in page, (
        "docs/estimates.md's table is not benchmarks/results/estimates.json's: run "
        "`.venv/bin/python benchmarks/bench_estimates.py --doc`")

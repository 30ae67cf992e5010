"""README's parity table is generated from the metric docstrings (engine.metrics.parity):
it fails here when someone edits a docstring or the table without the other."""

import subprocess
import sys

import pytest

from engine.metrics.answer import METRICS
from engine.metrics.parity import (PARITY, ParityDocError, current_table, declared,
                                   parity_table, replace_table)
from testkit.paths import ROOT


def test_readme_table_is_what_the_docstrings_say():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert current_table(readme) is not None, "README.md lost its parity-table markers"
    assert current_table(readme) == parity_table(), (
        "README.md's parity table is stale: run `.venv/bin/python scripts/parity_table.py`")


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
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    replaced = replace_table(readme, "| x |")
    assert current_table(replaced) == "| x |"
    assert replace_table(replaced, parity_table()) == replace_table(readme, parity_table())


def test_the_script_checks_the_readme():
    out = subprocess.run([sys.executable, "scripts/parity_table.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_readme_langid_table_is_the_committed_benchmark():
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("bench_langid",
                                                  ROOT / "benchmarks" / "bench_langid.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    results = json.loads((ROOT / "benchmarks" / "results" / "langid_xquad.json").read_text())
    assert set(results["languages"]) == {"ar", "de", "en", "es", "hi", "ru", "th", "zh"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert bench.with_table(readme, bench.markdown(results)) == readme, (
        "README's language-ID table is not benchmarks/results/langid_xquad.json's: run "
        "`.venv/bin/python benchmarks/bench_langid.py --readme`")

"""Each run names the backend its generators ran on (issue 26 item 4): the report's header lines,
the HTML run page's header, the Runs summary's segments. Runs are made by the real engine on
the demo pool, with scripted generators at the edge whose identities say which backend they
are (as a hosted model's identity does)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from testkit.runs import FakeGenerator, config, run

from engine.datasets.demo_pool import ensure_demo
from engine.results.comparison import run_row, summary_segments
from engine.arena.ratings.page import run_page_with_arenas as run_page
from engine.runs.header import RunHeader
from engine.runs.lookup import load_run
from engine.results.report import build_report
from engine.results.text import format_report
from engine.results.text import backend_segments, backend_text
from engine.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("backends") / "w.db")
    ensure_demo(store)
    run(store, config(name="served", sample=2),
        {"fake-gen": FakeGenerator(backend="llama-server")})
    run(store, config(name="both", sample=2, generators=["fake-a", "fake-b"]),
        {"fake-a": FakeGenerator("fake-a", backend="llama.cpp"),
         "fake-b": FakeGenerator("fake-b", backend="llama-server")})
    yield store
    store.close()


def test_the_report_names_the_backend(store):
    text = format_report(build_report(store, load_run(store, "served"), n_boot=20))
    assert "Backend: llama-server." in text.splitlines()[:4]
    mixed = format_report(build_report(store, load_run(store, "both"), n_boot=20))
    assert "Backend: fake-a llama.cpp, fake-b llama-server." in mixed


def test_the_html_run_page_names_the_backend(store):
    page = run_page(store, load_run(store, "served"), n_boot=20)
    assert "<dt>backend</dt><dd>llama-server</dd>" in page
    page = run_page(store, load_run(store, "both"), n_boot=20)
    assert "<dt>backend</dt><dd>fake-a llama.cpp, fake-b llama-server</dd>" in page


def test_the_runs_summary_names_the_backend_under_the_run_line(store):
    report = build_report(store, load_run(store, "served"), n_boot=20, summary_only=True)
    segments = backend_segments(summary_segments(report, run_row(store, load_run(store, "served"))), report)
    assert segments[1][0].startswith("\ncreated")
    assert segments[2] == ("\nbackend llama-server", "")
    # no row line: right under the title; nothing recorded: nothing added
    assert backend_segments(summary_segments(report), report)[1] == (
        "\nbackend llama-server", "")
    bare = replace(report, header=RunHeader.from_json({**report.header.as_dict(), "models": {}}))
    assert backend_text(bare.header) == ""
    assert backend_segments(summary_segments(bare), bare) == summary_segments(bare)

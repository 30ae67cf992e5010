"""End to end on real data, as a user runs it: XQuAD in two languages, SmolLM2 and MiniLM,
a small sample, all four kinds of setting, through the installed CLI; then the same run killed
with SIGKILL half-way and resumed must give the same numbers without regenerating anything."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.store import Store
from testkit.paths import ROOT, SHARED_DATA
from testkit.store import copy_workspace

DATA = SHARED_DATA / "xquad"
SETTINGS = "base,oracle,mixed,retrieved@1,retrieved@3"
SAMPLE = 2                  # one English and one German question: both strata
RUN_ARGS = ("--dataset", "xquad2", "--generator", "smollm2-135m-instruct",
            "--settings", SETTINGS, "--retriever", "minilm-l6-v2", "--sample", str(SAMPLE),
            "--seed", "7", "--max-tokens", "12", "--threads", "2", "--name", "e2e")
PLANNED = SAMPLE * 5
pytestmark = pytest.mark.slow


def _cli(*args, db: Path, check: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "mirage_tui.cli", *args, "--db", str(db)],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    if check and out.returncode != 0:
        raise AssertionError(f"{args[0]} exited {out.returncode}: {out.stderr[-3000:]}")
    return out


ARTICLES = 8                # of XQuAD's 48 per language: 80 paragraphs to index, not 480


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    """A workspace holding XQuAD en + de as one dataset, their first ``ARTICLES`` articles
    each (the real files, cut: MiniLM embedding all 480 paragraphs took half a minute; the
    whole files' import is tests/e2e/test_import_real.py's), indexed with MiniLM."""
    tmp = tmp_path_factory.mktemp("indexed")
    folder = tmp / "xquad2"
    folder.mkdir()
    for lang in ("en", "de"):
        whole = json.loads((DATA / f"xquad.{lang}.json").read_text(encoding="utf-8"))
        cut = {**whole, "data": whole["data"][:ARTICLES]}
        (folder / f"xquad.{lang}.json").write_text(json.dumps(cut), encoding="utf-8")
    db = tmp / "indexed.db"
    _cli("data", "import", folder, "--name", "xquad2", db=db)
    _cli("index", "xquad2", "--embedder", "minilm-l6-v2", db=db)
    return db


def _report(db: Path) -> dict:
    return json.loads(_cli("report", "e2e", "--json", db=db).stdout)


@pytest.fixture(scope="module")
def uninterrupted(indexed, tmp_path_factory):
    db = copy_workspace(indexed, tmp_path_factory.mktemp("whole") / "whole.db")
    _cli("run", *RUN_ARGS, db=db)
    return db, _report(db)


def test_a_whole_run_reports_consistent_adaptability(uninterrupted):
    db, report = uninterrupted
    assert report["status"] == "done"
    assert report["items"]["done"] == report["items"]["total"] == PLANNED
    store = Store(db)
    langs = {r[0] for r in store.query(
        "SELECT DISTINCT q.language FROM run_items i JOIN queries q ON q.id = i.query_rowid")}
    assert langs == {"en", "de"}  # the stratified sample covers both languages
    systems = report["systems"]
    # plain mixed, and each retrieved@k playing "mixed" (MIRAGE's RAG mode)
    assert len(systems) == 3
    for s in systems:
        total = s["nv"] + s["ca"] + s["ci"] + s["cm"]
        assert total == pytest.approx(1.0, abs=1e-9), s["system"]
        assert sum(s["patterns"].values()) == s["n"] == SAMPLE
        assert len(s["patterns"]) == 8
        for key in ("nv", "ca", "ci", "cm", "overall"):
            assert s[f"{key}_lo"] <= s[key] <= s[f"{key}_hi"]
        oracle_acc = s["ca"] + s["nv"]
        assert oracle_acc == pytest.approx(
            sum(v for k, v in s["patterns"].items() if "o1" in k) / SAMPLE)
    # every item has a stored generation with its scores and the exact prompt sent
    assert store.query("SELECT COUNT(DISTINCT generation_key) FROM run_items")[0][0] == PLANNED
    assert store.query("SELECT COUNT(*) FROM scores WHERE metric = 'em_loose'")[0][0] == PLANNED
    assert store.query("SELECT COUNT(*) FROM generations WHERE prompt LIKE "
                       "'%Context : 1. %'")[0][0] == SAMPLE * 3  # mixed, retrieved@1, @3
    text = _cli("report", "e2e", db=db).stdout
    assert "Table 1. RAG adaptability" in text and "Table 2. Retrieval" in text
    assert "NV↓" in text and f"n={SAMPLE}" in text


def test_killed_and_resumed_run_gives_the_same_numbers_without_regenerating(
        uninterrupted, indexed, tmp_path):
    _, whole = uninterrupted
    db = copy_workspace(indexed, tmp_path / "killed.db")
    store = Store(db)
    proc = subprocess.Popen([sys.executable, "-m", "mirage_tui.cli", "run", *RUN_ARGS,
                             "--db", str(db)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while store.query("SELECT COUNT(*) FROM generations")[0][0] < PLANNED // 2:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"run ended or stalled early: {proc.communicate()[1][-2000:]}")
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    before = {r[0]: r[1] for r in store.query("SELECT key, created_at FROM generations")}
    assert PLANNED // 2 <= len(before) < PLANNED

    resumed = _cli("run", *RUN_ARGS, db=db)
    assert f"{len(before)} from the store" in resumed.stdout
    after = {r[0]: r[1] for r in store.query("SELECT key, created_at FROM generations")}
    assert len(after) == PLANNED
    assert all(after[k] == v for k, v in before.items())  # nothing regenerated
    rows = store.query("SELECT system, setting, query_rowid FROM run_items")
    assert len(rows) == len(set(map(tuple, rows))) == PLANNED  # nothing lost or duplicated

    again = _report(db)
    keys = ("system", "n", "nv", "ca", "ci", "cm", "overall", "patterns")
    assert [{k: s[k] for k in keys} for s in again["systems"]] == \
        [{k: s[k] for k in keys} for s in whole["systems"]]
    assert again["retrieval"] == whole["retrieval"]

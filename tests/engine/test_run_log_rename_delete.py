"""A run's log (sessions, loads, retries, errors, ends), renaming and deleting runs
(one transaction, refused while an owner is alive, the shared generation cache kept unless
purged), and "did you mean" for run and dataset names. Real store, real engine; a scripted
generator at the edge."""

from __future__ import annotations

import os
import socket
import threading

import pytest
from testkit.runs import FakeGenerator, config, rows, run

import engine.inflight
from engine.datasets.catalog import DatasetNotFound, resolve
from engine.runs.lookup import RunNotFound, load_run
from engine.runs.manage import delete_run, rename_run, run_log
from engine.runs.owner import RunBusy
from models.base import ModelError, TransientModelError


class Flaky(FakeGenerator):
    """Call 2 fails once with a transient error (retried); call 4 fails for good."""

    def generate(self, messages, params):
        n = len(self.calls) + 1
        if n == 2 and not getattr(self, "_retried", False):
            self._retried = True
            self.calls.append("transient")
            raise TransientModelError("503 from the server")
        return super().generate(messages, params)


def test_run_log_records_sessions_retries_errors_and_ends(demo, monkeypatch):
    monkeypatch.setattr(engine.inflight, "BACKOFF_S", 0.01)
    cancel = threading.Event()
    seen = []

    def stop_after_three(event):
        seen.append(event)
        if event.done >= 3:
            cancel.set()

    gen = Flaky(fail_on=(5,))
    run(demo, config(sample=3), gens={"fake-gen": gen}, progress=stop_after_three,
        cancel=cancel, min_interval=0)
    first = run_log(demo, "t")
    kinds = [line.kind for line in first]
    assert kinds[0] == "session" and "new run" in first[0].message
    assert kinds[-1] == "end" and first[-1].message.startswith("cancelled")
    assert all(line.at[:4].isdigit() and len(line.at) == 19 for line in first)
    # resumed: a second session that says so; a model error fails it, with its message
    run(demo, config(sample=3), gens={"fake-gen": gen})
    log = run_log(demo, "t")
    assert log[-1].kind == "end" and log[-1].message.startswith("failed")
    assert "scripted crash on call 5" in log[-1].message
    run(demo, config(sample=3), gens={"fake-gen": gen})     # a third session finishes it
    log = run_log(demo, "t")
    sessions = [line for line in log if line.kind == "session"]
    assert len(sessions) == 3 and all("resumed" in s.message for s in sessions[1:])
    assert any(line.kind == "retry" and "after 2 attempts" in line.message for line in log)
    errors = [line for line in log if line.kind == "error"]
    assert len(errors) == 1 and "scripted crash" in errors[0].message
    assert [line.kind for line in log].count("end") == 3
    assert log[-1].kind == "end" and log[-1].message.startswith("done: 9/9")


def test_a_generator_that_cannot_load_is_in_the_log(demo, monkeypatch):
    import models.catalog

    def broken(name, **opts):
        raise ModelError(f"{name}: no such model")

    monkeypatch.setattr(models.catalog, "load_generator", broken)
    run(demo, config(sample=2, generators=["nope"]), gens={})
    log = run_log(demo, "t")
    assert [line.kind for line in log] == ["session", "load", "end"]
    assert "could not load generator nope: " in log[1].message and log[2].message.startswith("failed")
    # a load that works says how long it took
    monkeypatch.setattr(models.catalog, "load_generator", lambda name, **opts: FakeGenerator())
    run(demo, config(sample=2, generators=["fake-gen"], name="loads"), gens={})
    loaded = [line.message for line in run_log(demo, "loads") if line.kind == "load"]
    assert len(loaded) == 1 and loaded[0].startswith("loaded generator fake-gen in ")
    assert loaded[0].endswith("s")


def test_rename_keeps_items_and_log_and_refuses_a_taken_name(demo):
    run(demo, config(sample=2, name="a"))
    run(demo, config(sample=2, name="b", seed=3))
    before = rows(demo)
    with pytest.raises(ValueError, match="a run named 'b' exists already"):
        rename_run(demo, "a", "b")
    assert rename_run(demo, "a", " renamed ") == "renamed"
    info = load_run(demo, "renamed")
    assert info.config["name"] == "renamed" and rows(demo) == before
    assert run_log(demo, "renamed")[-1].message == "renamed from a to renamed"
    with pytest.raises(RunNotFound, match="no run named 'a'"):
        load_run(demo, "a")
    with pytest.raises(ValueError, match="cannot be empty"):
        rename_run(demo, "renamed", "  ")
    # the same configuration resumes under the new name
    plan, summary = run(demo, config(sample=2, name="renamed"))
    assert summary.status == "done" and summary.generated == 0


def _counts(store) -> dict:
    return {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0]
            for t in ("runs", "run_items", "generations", "scores", "run_log", "run_counts")}


def test_delete_keeps_the_cache_and_the_other_runs(demo):
    run(demo, config(sample=3, name="keep"))
    run(demo, config(sample=3, name="gone"))              # same items: all from the cache
    run(demo, config(sample=2, name="own", seed=9, max_tokens=32))   # generations of its own
    keep_rows = demo.query("SELECT * FROM run_items ri JOIN runs r ON r.id = ri.run_id "
                           "WHERE r.name = 'keep' ORDER BY system, setting, query_rowid")
    before = _counts(demo)
    deleted = delete_run(demo, "gone")
    after = _counts(demo)
    assert deleted.items == 9 and deleted.generations == 0
    assert after["runs"] == before["runs"] - 1 and after["run_items"] == before["run_items"] - 9
    assert after["generations"] == before["generations"] and after["scores"] == before["scores"]
    assert after["run_counts"] == before["run_counts"] - 1
    assert [tuple(r) for r in demo.query(
        "SELECT * FROM run_items ri JOIN runs r ON r.id = ri.run_id WHERE r.name = 'keep' "
        "ORDER BY system, setting, query_rowid")] == [tuple(r) for r in keep_rows]
    # purging drops only the generations no other run uses (and their scores)
    own = demo.query("SELECT COUNT(DISTINCT generation_key) FROM run_items ri JOIN runs r "
                     "ON r.id = ri.run_id WHERE r.name = 'own'")[0][0]
    deleted = delete_run(demo, "own", purge_generations=True)
    assert deleted.generations == own > 0
    assert _counts(demo)["generations"] == before["generations"] - own
    assert not demo.query("SELECT 1 FROM scores s LEFT JOIN generations g "
                          "ON g.key = s.generation_key WHERE g.key IS NULL")
    assert delete_run(demo, "keep", purge_generations=True).generations == 9
    assert _counts(demo)["runs"] == 0 and _counts(demo)["run_log"] == 0


def test_a_running_run_is_neither_renamed_nor_deleted(demo):
    run(demo, config(sample=2, name="busy"))
    with demo.write() as db:      # this live process owns it and it is running
        db.conn.execute("UPDATE runs SET status = 'running' WHERE name = 'busy'")
        db.conn.execute("INSERT OR REPLACE INTO run_owners (run_id, pid, host, process_start, "
                        "claimed_at) SELECT id, ?, ?, NULL, 'now' FROM runs WHERE name = 'busy'",
                        (os.getpid(), socket.gethostname()))
    before = _counts(demo)
    with pytest.raises(RunBusy, match="cannot delete it"):
        delete_run(demo, "busy", purge_generations=True)
    with pytest.raises(RunBusy, match="cannot rename it"):
        rename_run(demo, "busy", "other")
    assert _counts(demo) == before


def test_did_you_mean_for_runs_and_datasets(demo):
    run(demo, config(sample=2, name="smol-demo"))
    with pytest.raises(RunNotFound, match=r"no run named 'smol-dmeo'; did you mean 'smol-demo'\?"):
        load_run(demo, "smol-dmeo")
    with pytest.raises(RunNotFound, match=r"no run named 'zzz' \(known: smol-demo\)"):
        delete_run(demo, "zzz")
    with pytest.raises(DatasetNotFound, match=r"no dataset named 'dmeo'; did you mean 'demo'\?"):
        resolve(demo, "dmeo")

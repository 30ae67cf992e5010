"""The arena header judging stores (``arenas.header``) is byte for byte what it was before the
header became typed: real judgings (a scripted judge at the edge; the clock, the package
versions, the machine, its load and the judge's timings fixed) record every header text they
write, the new row's first, and the texts equal the golden file ``data/arena_headers.json``,
captured from the code that built the header as a dict.

The scenarios cover every update judging makes: a new pairwise arena, one cancelled and resumed
twice (a session each), a failing judge's message and the resume that drops it, an arena against
a reference contestant, a reference judge (no model identity), and an arena whose stored header
an older version wrote (no timings, counts or contestants; a key and a session key this version
does not know) judged again.

``python tests/engine/test_arena_header_stored.py`` writes the golden file again (only when the
stored header is meant to change)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

GOLDEN = Path(__file__).with_name("data") / "arena_headers.json"

PACKAGES = {"mirage-tui": "0.0.0", "llama-cpp-python": None, "python": "3.x"}
MACHINE = {"platform": "TestOS-1", "machine": "x86_64", "processor": None, "cpu_count": 2}
CLOCKED = ("engine.runs.header", "engine.arena.judging.recording", "engine.arena.header")
"""The modules whose ``now``, ``package_versions`` and ``machine`` the arena header is built
with (each fixed where it is found)."""


def fix_the_world(monkeypatch) -> list[str]:
    """The clock, packages, machine, load and the judge's timings as fixed values; returns the
    list every header text judging stores is appended to (the new row's, then each write)."""
    import importlib

    import engine.arena.judging.job as job
    import engine.arena.judging.recording as recording
    import engine.machine_load

    clock = iter(f"2026-01-01 00:00:{i:02d}" for i in range(60))
    fixed = {"now": lambda: next(clock), "package_versions": lambda: dict(PACKAGES),
             "machine": lambda: dict(MACHINE)}
    for name in CLOCKED:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr, value in fixed.items():
            if hasattr(module, attr):
                monkeypatch.setattr(module, attr, value)
    load = engine.machine_load.MachineLoad(0.5, 2, "fixed")
    monkeypatch.setattr(engine.machine_load, "load_now", lambda wait=True: load)

    close = job.close_session

    def close_session(store, arena_id, header, status, message, session, judge_seconds,
                      judge_calls, counts):
        session = {**session, "seconds": 1.5, "judge_seconds": round(0.1 * judge_calls, 3)}
        return close(store, arena_id, header, status, message, session, 0.1 * judge_calls,
                     judge_calls, counts)

    monkeypatch.setattr(job, "close_session", close_session)
    written: list[str] = []

    def recorder(write, at: int):
        def wrapped(*args):
            header = args[at]
            written.append(header if isinstance(header, str)
                           else json.dumps(header, ensure_ascii=False))
            return write(*args)
        return wrapped

    for name, at in (("insert_arena", 5), ("start_arena", 3), ("end_arena", 2)):
        monkeypatch.setattr(recording, name, recorder(getattr(recording, name), at))
    return written


def _pairwise(store) -> None:
    from testkit.arena import ScriptedJudge

    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run

    assert judge_arena(store, load_run(store, "r"), ScriptedJudge()).status == "done"


def _cancel_then_resume(store) -> None:
    from testkit.arena import ScriptedJudge

    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run

    run, cancel = load_run(store, "r"), threading.Event()

    def progress(event):
        if event.done >= 5:
            cancel.set()

    first = judge_arena(store, run, ScriptedJudge(), progress=progress, cancel=cancel,
                        min_interval=0, concurrency=1)
    assert first.status == "cancelled"
    assert judge_arena(store, run, ScriptedJudge()).status == "done"
    assert judge_arena(store, run, ScriptedJudge()).judged == 0


def _failed_then_resumed(store) -> None:
    from testkit.arena import ScriptedJudge

    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run

    run = load_run(store, "r")
    assert judge_arena(store, run, ScriptedJudge(fail_on={4}), concurrency=1).status == "failed"
    assert judge_arena(store, run, ScriptedJudge()).status == "done"


def _against_a_contestant(store) -> None:
    from testkit.arena import B_ORACLE, ScriptedJudge

    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run

    summary = judge_arena(store, load_run(store, "r"), ScriptedJudge(script=lambda s: "0"),
                          pairs="reference", reference=B_ORACLE, order="both")
    assert summary.status == "done", summary.message


def _reference_judge(store) -> None:
    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run

    summary = judge_arena(store, load_run(store, "r"), "reference:answer-match")
    assert summary.status == "done", summary.message


def _older_header(store) -> None:
    from testkit.arena import ScriptedJudge

    from engine.arena.judging.job import judge_arena
    from engine.runs.lookup import load_run

    run = load_run(store, "r")
    assert judge_arena(store, run, ScriptedJudge(), queries=1, name="old").status == "done"
    older = {"run": {"name": "r"}, "judge": {"name": "fake-judge", "sha256": "j" * 64},
             "template": "mirage_bench_pairwise@1", "notes": ["kept"],
             "sessions": [{"started_at": "2025-01-01 00:00:00", "gpu": "none"}]}
    store.conn.execute("UPDATE arenas SET header = ? WHERE name = 'old'", (json.dumps(older),))
    assert judge_arena(store, run, ScriptedJudge(), queries=2, name="old").status == "done"


SCENARIOS = {"pairwise": _pairwise, "cancel_then_resume": _cancel_then_resume,
             "failed_then_resumed": _failed_then_resumed,
             "against_a_contestant": _against_a_contestant,
             "reference_judge": _reference_judge, "older_header": _older_header}


def scenario_headers(store, monkeypatch, name: str) -> list[str]:
    """Every header text scenario ``name`` stores, in order."""
    written = fix_the_world(monkeypatch)
    SCENARIOS[name](store)
    return written


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_judging_stores_the_header_text_it_stored_before(demo_run, monkeypatch, name):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    written = scenario_headers(demo_run, monkeypatch, name)
    assert len(written) == len(golden[name])
    for i, (now, before) in enumerate(zip(written, golden[name])):
        assert now == before, f"{name}: header write {i} differs"


# --------------------------------------------------------------------------- reading

def test_every_golden_header_reads_and_writes_back_the_same_text():
    from engine.arena.header import ArenaHeader

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for texts in golden.values():
        for text in texts:
            assert ArenaHeader.from_json(text).to_json() == text
            assert ArenaHeader.from_json(json.loads(text)).to_json() == text


def test_an_older_header_reads_with_the_old_defaults_and_keeps_what_it_does_not_know():
    from engine.arena.header import ArenaHeader

    old = {"judge": {"name": "j", "sha256": "s" * 64}, "notes": ["kept"],
           "sessions": [{"started_at": "2025-01-01 00:00:00", "gpu": "none"}],
           "counts": {"planned": 4, "later": 1}}
    header = ArenaHeader.from_json(json.dumps(old))
    assert header.judge.name == "j" and header.judge.key is None and header.judge.chat is True
    assert header.run is None and header.timings is None and header.contestants == ()
    assert header.concurrency is None and header.message is None and header.packages == {}
    assert header.counts.planned == 4 and header.counts.skipped_queries == 0
    assert header.counts.eligible_queries is None
    assert header.sessions[0].load is None and header.sessions[0].status is None
    assert header.extra == {"notes": ("kept",)} and header.sessions[0].extra == {"gpu": "none"}
    assert header.counts.extra == {"later": 1}
    assert header.to_json() == json.dumps(old)              # nothing lost, nothing added
    assert header.judge_problem("a", {"key": "k"}) is None   # no key recorded: any judge
    assert ArenaHeader.from_json("").to_json() == "{}" == ArenaHeader.from_json(None).to_json()
    with pytest.raises(ValueError):
        ArenaHeader.from_json("[1, 2]")
    odd = {"judge": "j", "sessions": {}, "counts": [], "contestants": "a"}
    header = ArenaHeader.from_json(odd)            # parts of another shape: kept, not read
    assert header.judge is None and header.sessions == () and header.counts is None
    assert header.contestants == () and header.to_json() == json.dumps(odd)


def test_a_header_is_frozen_and_each_update_is_a_new_one(monkeypatch):
    import copy
    import dataclasses

    import engine.arena.header as arena_header

    monkeypatch.setattr(arena_header, "now", lambda: "T")
    monkeypatch.setattr(arena_header, "package_versions", lambda: {"p": "1"})
    header = arena_header.ArenaHeader.from_json(
        {"judge": {"name": "j", "key": "k", "sha256": "s" * 64}, "sessions": [],
         "message": "failed"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        header.message = "x"                                   # type: ignore[misc]
    with pytest.raises(TypeError):
        header.packages["a"] = None                            # type: ignore[index]
    assert copy.deepcopy(header) is header
    assert "judged by another 'j' (sha256 ssssssssssss…, now zzzzzzzzzzzz…)" in \
        header.judge_problem("a", {"key": "other", "sha256": "z" * 64})
    started = header.with_session(["x", "y"], 2, None, "cpu", None)
    assert header.message == "failed" and header.sessions == ()
    assert started.message is None and started.contestants == ("x", "y")
    ended = started.with_session_ended("done", "why", {"judge_calls": 3}, 1.5, 3,
                                       {"planned": 3})
    assert started.sessions[0].status is None and ended.sessions[0].status == "done"
    assert ended.sessions[0].judge_calls == 3 and ended.timings.seconds_per_call == 0.5
    assert ended.counts.planned == 3 and ended.message == "why"
    # a key new to the header is written last; one it had stays where it was
    assert list(json.loads(ended.to_json())) == ["judge", "sessions", "contestants",
                                                 "concurrency", "timings", "counts", "message"]


def _write_golden() -> None:           # pragma: no cover - run by hand
    import tempfile

    from testkit.arena import run_workspace
    from testkit.store import copy_workspace

    from engine.store import Store

    out = {}
    with tempfile.TemporaryDirectory() as folder:
        template = run_workspace(Path(folder))
        for name in sorted(SCENARIOS):
            store = Store(copy_workspace(template, Path(folder) / f"{name}.db"))
            with pytest.MonkeyPatch.context() as mp:
                out[name] = scenario_headers(store, mp, name)
            store.close()
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":           # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    _write_golden()

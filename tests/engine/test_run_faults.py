"""A run's faults: a file-size limit mid-run (the resumable disk-full message), a reply that
cannot be stored (no row hidden), one owner per run (a second process is refused; a dead
owner's run is interrupted and resumable), and a cancel that comes when every item is stored
(the run is done)."""

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from engine.runs import owner, plan_named, rows
from engine.runs.lookup import load_run
from engine.store import Store
from models.base import Generation, ReplyError
from models.host.registry import process_start_tick
from testkit.paths import ROOT
from testkit.runs import FakeGenerator, config, run

RUN_UNDER_LIMIT = textwrap.dedent("""
    import resource, sys
    sys.path.insert(0, "tests")
    from engine.store import Store
    from testkit.runs import config, run
    store = Store(sys.argv[1])
    size = store.path.stat().st_size + 4096 * 40
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    _, summary = run(store, config(sample=30))
    print(summary.status, summary.done, summary.message, sep="|")
""")


def test_a_file_size_limit_mid_run_stops_it_resumably(demo, tmp_path):
    path = demo.path
    demo.close()
    out = subprocess.run([sys.executable, "-c", RUN_UNDER_LIMIT, str(path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    status, done, message = out.stdout.strip().split("|", 2)
    assert status == "failed", out.stderr[-2000:]
    assert message.startswith("the disk is full") and "run it again to resume" in message
    assert str(path) in message
    store = Store(path)
    stored = store.query("SELECT COUNT(*) FROM run_items")[0][0]
    assert stored < 90
    _, again = run(store, config(sample=30))
    assert again.status == "done" and again.done == 90


class NullReply(FakeGenerator):
    def generate(self, messages, params):
        g = super().generate(messages, params)
        return Generation(**{**g.__dict__, "text": None})


def test_a_reply_without_text_is_refused_naming_the_model_and_nothing_is_hidden(demo):
    plan = plan_named(demo, config(sample=1, settings=["base"]), check_models=False)
    run_id = rows.save_plan(demo, plan)
    gen = NullReply()
    g = gen.generate([{"role": "user", "content": "q"}], None)
    before = rows_count(demo)
    with pytest.raises(ReplyError, match="^fake-gen: the reply has no text"):
        rows.write_item(demo, run_id, ("fake-gen", "base", plan.items[0].query_rowid), "k",
                        type("P", (), {"text": "q", "context": [], "truncated": False})(), g,
                        None, model_key="mk", model_name="fake-gen")
    assert rows_count(demo) == before


def rows_count(store):
    return tuple(store.query(f"SELECT COUNT(*) FROM {t}")[0][0]
                 for t in ("generations", "run_items", "scores"))


def test_a_second_process_is_refused_and_a_dead_owner_is_interrupted(demo):
    plan = plan_named(demo, config(sample=2), check_models=False)
    run_id = rows.save_plan(demo, plan)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with demo.write() as db:            # another live process holds it
            db.conn.execute("UPDATE run_owners SET pid = ?, process_start = ? WHERE run_id = ?",
                            (other.pid, process_start_tick(other.pid), run_id))
        assert load_run(demo, "t").status == "running"
        with pytest.raises(owner.RunBusy, match=rf"^run t is running \(pid {other.pid}\)"):
            rows.save_plan(demo, plan_named(demo, config(sample=2), check_models=False))
    finally:
        other.kill()
        other.wait()
    assert load_run(demo, "t").status == "interrupted"     # its owner died
    plan, summary = run(demo, config(sample=2))            # and it resumes
    assert summary.status == "done" and load_run(demo, "t").status == "done"


class CancelsOnItsLastCall(FakeGenerator):
    """Sets ``cancel`` while answering its ``last``-th call (the user pressed it then)."""

    def __init__(self, cancel, last, name="fake-gen"):
        super().__init__(name=name)
        self.cancel, self.last = cancel, last

    def generate(self, messages, params):
        generation = super().generate(messages, params)
        if len(self.calls) == self.last:
            self.cancel.set()
        return generation


def test_a_cancel_when_every_item_is_stored_leaves_the_run_done(demo):
    cancel = threading.Event()
    gen = CancelsOnItsLastCall(cancel, last=4)
    _, summary = run(demo, config(sample=2, settings=["base", "oracle"]), {"fake-gen": gen},
                     cancel=cancel)
    assert cancel.is_set() and len(gen.calls) == 4
    assert summary.status == "done" and summary.done == 4 and summary.errors == 0
    assert load_run(demo, "t").status == "done"
    # a cancel with items left still cancels
    early = threading.Event()
    gen = CancelsOnItsLastCall(early, last=1, name="other")    # nothing of it cached
    _, cut = run(demo, config(generators=["other"], sample=3, settings=["base", "oracle"],
                              name="u"), {"other": gen}, cancel=early)
    assert cut.status == "cancelled" and load_run(demo, "u").status == "cancelled"

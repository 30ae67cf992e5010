"""The job base (engine/jobs.py): throttled events and always the last one, cancel between
steps, and the error policy (a full disk, another database error, a model's error, Ctrl-C, a
bug), each leaving whole steps only and a job that resumes.

The job here is a small one on a real store: each step asks a model for an answer and stores
it with its length in one transaction, and the job's row says how it ended. The only fake is
the model.
"""

from __future__ import annotations

import sqlite3
import threading

import pytest

from engine.jobs import Job, JobEvent, Stop, model_errors, model_failed
from models.base import ModelError

STEPS = 10


class FakeModel:
    """Answers step n with a long text; raises ``error`` on the step in ``fail_on``."""

    name = "fake-model"

    def __init__(self, fail_on: int | None = None, error: BaseException | None = None):
        self.fail_on, self.error = fail_on, error
        self.calls: list[int] = []

    def generate(self, step: int) -> str:
        self.calls.append(step)
        if step == self.fail_on:
            raise self.error
        return f"answer {step} " + "x" * 3000


class Echo(Job):
    """``STEPS`` steps, each one model call and one transaction (an answer and its length);
    steps stored before are cached. ``bug_on``: a step where the job itself breaks."""

    kind = "echo"

    def __init__(self, store, model, *, bug_on: int | None = None, **kw):
        super().__init__(**kw)
        self.store, self.model, self.bug_on = store, model, bug_on
        self.done = self.cached = self.new = 0

    def work(self) -> str | None:
        with self.store.write() as db:
            db.conn.execute("INSERT OR REPLACE INTO echo_jobs (name, status) "
                            "VALUES ('echo', 'running')")
        stored = {r[0] for r in self.store.query("SELECT step FROM echo_answers")}
        for step in range(STEPS):
            if step in stored:
                self.done += 1
                self.cached += 1
                continue
            self.check_cancel()
            if step == self.bug_on:
                raise RuntimeError(f"a bug on step {step}")
            with model_errors(self.model.name):
                answer = self.model.generate(step)
            with self.store.write() as db:
                db.conn.execute("INSERT INTO echo_answers VALUES (?, ?)", (step, answer))
                db.conn.execute("INSERT INTO echo_lengths VALUES (?, ?)", (step, len(answer)))
            self.done += 1
            self.new += 1
            self.emit()
        return None

    def event(self, status: str, message: str | None) -> JobEvent:
        return JobEvent(self.kind, "echo", status, self.done, STEPS, unit="steps",
                        cached=self.cached, new=self.new, message=message)

    def record(self, status: str, message: str | None) -> None:
        with self.store.write() as db:
            db.conn.execute("UPDATE echo_jobs SET status = ?, message = ? WHERE name = 'echo'",
                            (status, message))

    def summary(self, status: str, message: str | None):
        return status, message, self.done


@pytest.fixture
def echo_store(store):
    with store.write() as db:
        db.conn.execute("CREATE TABLE echo_jobs (name TEXT PRIMARY KEY, status TEXT, "
                        "message TEXT)")
        db.conn.execute("CREATE TABLE echo_answers (step INTEGER PRIMARY KEY, text TEXT)")
        db.conn.execute("CREATE TABLE echo_lengths (step INTEGER PRIMARY KEY, length INTEGER)")
    return store


def job_row(store) -> tuple:
    return tuple(store.query("SELECT status, message FROM echo_jobs")[0])


def whole_steps(store) -> int:
    """Stored steps, after checking that each has both its rows (nothing half-written)."""
    answers = {r[0]: r[1] for r in store.query("SELECT step, text FROM echo_answers")}
    lengths = {r[0]: r[1] for r in store.query("SELECT step, length FROM echo_lengths")}
    assert answers.keys() == lengths.keys()
    assert all(len(answers[s]) == lengths[s] for s in answers)
    return len(answers)


def resume(store) -> FakeModel:
    """Run the job again to its end; returns the model, to count what it was asked."""
    model = FakeModel()
    status, message, done = Echo(store, model).run()
    assert (status, message, done) == ("done", None, STEPS)
    assert whole_steps(store) == STEPS and job_row(store) == ("done", None)
    return model


# --------------------------------------------------------------------------- progress

def test_events_are_throttled_and_the_last_is_always_sent(echo_store):
    events: list[JobEvent] = []
    Echo(echo_store, FakeModel(), progress=events.append, min_interval=3600).run()
    assert len(events) <= 2                       # perhaps the first step, and the end
    last = events[-1]
    assert (last.kind, last.status, last.done, last.total, last.new) == \
        ("echo", "done", STEPS, STEPS, STEPS)
    assert last.fraction == 1.0

    every: list[JobEvent] = []
    Echo(echo_store, FakeModel(), progress=every.append, min_interval=0).run()
    assert len(every) == 1 and every[0].status == "done" and every[0].cached == STEPS


def test_every_step_reports_without_throttling(echo_store):
    events: list[JobEvent] = []
    Echo(echo_store, FakeModel(), progress=events.append, min_interval=0).run()
    assert [e.done for e in events] == list(range(1, STEPS + 1)) + [STEPS]
    assert [e.status for e in events] == ["running"] * STEPS + ["done"]


# --------------------------------------------------------------------------- cancel

@pytest.mark.parametrize("as_event", [True, False])
def test_cancel_between_steps_then_resume(echo_store, as_event):
    model = FakeModel()
    stop = threading.Event()
    cancel = stop if as_event else (lambda: len(model.calls) >= 3)
    events: list[JobEvent] = []

    def progress(event: JobEvent) -> None:
        events.append(event)
        if event.done >= 3:
            stop.set()

    status, message, done = Echo(echo_store, model, progress=progress, cancel=cancel,
                                 min_interval=0).run()
    assert (status, done) == ("cancelled", 3) and "run it again to resume" in message
    assert model.calls == [0, 1, 2] and whole_steps(echo_store) == 3
    assert job_row(echo_store) == ("cancelled", message)
    assert events[-1].status == "cancelled" and events[-1].message == message
    again = resume(echo_store)
    assert again.calls == list(range(3, STEPS))     # no step is done twice


# --------------------------------------------------------------------------- errors

def test_a_full_disk_fails_with_a_resumable_message_and_nothing_half_written(echo_store):
    conn = echo_store.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 4}")
    events: list[JobEvent] = []
    status, message, done = Echo(echo_store, FakeModel(), progress=events.append).run()
    assert status == "failed" and 0 < done < STEPS
    assert message.startswith("the disk is full") and "run it again to resume" in message
    assert events[-1].status == "failed" and events[-1].message == message
    assert whole_steps(echo_store) == done          # every stored step whole, no other
    conn.execute("PRAGMA max_page_count = 1073741823")
    again = resume(echo_store)
    assert again.calls == list(range(done, STEPS))


def test_a_job_that_raises_its_errors_lets_a_full_disk_through(echo_store):
    class Raising(Echo):
        raises = True

    conn = echo_store.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 4}")
    with pytest.raises(sqlite3.OperationalError, match="full"):
        Raising(echo_store, FakeModel()).run()
    conn.execute("PRAGMA max_page_count = 1073741823")
    assert 0 < whole_steps(echo_store) < STEPS
    resume(echo_store)


def test_another_database_error_is_recorded_and_raised(echo_store):
    with echo_store.write() as db:
        db.conn.execute("DROP TABLE echo_lengths")
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        Echo(echo_store, FakeModel()).run()
    status, message = job_row(echo_store)
    assert status == "failed" and message.startswith("database error: no such table")
    assert not echo_store.query("SELECT * FROM echo_answers")   # its step rolled back


def test_a_model_error_fails_the_job_naming_the_model(echo_store):
    model = FakeModel(fail_on=4, error=ModelError("out of memory"))
    events: list[JobEvent] = []
    status, message, done = Echo(echo_store, model, progress=events.append).run()
    assert (status, done) == ("failed", 4)
    assert message == "fake-model failed: ModelError: out of memory"
    assert job_row(echo_store) == ("failed", message)
    assert events[-1].status == "failed" and events[-1].message == message
    assert whole_steps(echo_store) == 4
    assert resume(echo_store).calls == list(range(4, STEPS))


def test_model_failures_read_as_each_kind_words_them():
    stop = model_failed("judge-x", ValueError("bad reply"),
                        "judge {model!r} failed on query {query}: {type}: {error}", query="q7")
    assert (stop.status, stop.message) == \
        ("failed", "judge 'judge-x' failed on query q7: ValueError: bad reply")
    # database errors and a Stop pass through to the job's own policy
    with pytest.raises(sqlite3.OperationalError):
        with model_errors("m"):
            raise sqlite3.OperationalError("database is locked")
    with pytest.raises(Stop) as caught:
        with model_errors("m"):
            raise Stop("cancelled", "stopped")
    assert caught.value.status == "cancelled"


def test_ctrl_c_cancels_the_job_and_is_raised(echo_store):
    model = FakeModel(fail_on=2, error=KeyboardInterrupt())
    events: list[JobEvent] = []
    with pytest.raises(KeyboardInterrupt):
        Echo(echo_store, model, progress=events.append).run()
    status, message = job_row(echo_store)
    assert status == "cancelled" and message.startswith("interrupted: KeyboardInterrupt")
    assert events[-1].status == "cancelled"
    assert whole_steps(echo_store) == 2
    assert resume(echo_store).calls == list(range(2, STEPS))


def test_a_bug_fails_the_job_and_is_raised(echo_store):
    with pytest.raises(RuntimeError, match="a bug on step 5"):
        Echo(echo_store, FakeModel(), bug_on=5).run()
    assert job_row(echo_store) == ("failed", "interrupted: RuntimeError: a bug on step 5")
    assert whole_steps(echo_store) == 5
    resume(echo_store)


def test_stop_ends_a_job_with_its_status_and_message(echo_store):
    class Refusing(Echo):
        def work(self):
            super().work()
            raise Stop("failed", "the model is not the one this job started with")

    assert Refusing(echo_store, FakeModel()).run() == \
        ("failed", "the model is not the one this job started with", STEPS)
    assert job_row(echo_store) == ("failed", "the model is not the one this job started with")

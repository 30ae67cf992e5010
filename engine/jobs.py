"""Jobs: long engine work that stops cleanly, resumes, and reports progress one way.

A job is work done in steps (a run's items, an arena's battles, an index's batches of texts,
an import's parse and write), each step stored in its own transaction. A job stopped between
two steps (cancelled, failed, killed) has only whole steps stored, and running it again resumes
where it stopped. Its status moves ``planned`` → ``running`` → ``done`` | ``cancelled`` |
``failed``: ``planned`` until it starts, ``running`` while it works, then ``done``;
``cancelled`` when its ``cancel`` (a ``threading.Event`` or a callable, checked between steps)
is set, or on Ctrl-C; ``failed`` on an error.

:class:`Job` holds what every kind of job shares; a subclass says what its steps are
(``work``), what its progress says (``event``), how its row records the end (``record``) and
what it returns (``summary``):

- progress: one :class:`JobEvent` (a frozen dataclass) for every kind, sent to ``progress`` at
  most once per ``min_interval`` seconds, and always the last one;
- the error policy, here and nowhere else:

  - :class:`Stop` ``(status, message)`` ends the job with that status and message;
  - a full disk, however SQLite words it (``SQLITE_FULL``, or ``SQLITE_IOERR`` as a file-size
    limit gives; also as the ``__context__`` or ``__cause__`` of the error that follows it)
    ends it as failed with a message naming the database and saying that it resumes once
    there is space;
  - any other sqlite ``OperationalError`` (a :class:`~engine.store.StorageError`: read-only,
    locked, ...): failed is recorded and the error raised, its message one line;
  - a model's error (:func:`model_errors`, :func:`model_failed`): failed, the message names
    the model;
  - ``KeyboardInterrupt``: cancelled is recorded and the interrupt raised;
  - any other exception: failed is recorded and the exception raised;

- the end: the job records how it ended, sends its last event and returns its summary.

Jobs whose callers expect the errors themselves (indexing, import: ``raises = True``) let a full
disk through as the error it is.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

DISK_FULL = ("the disk is full (database or disk is full): the {kind} stopped; every stored "
             "step is complete. Free some space and run it again to resume.")
DISK_FULL_CODES = ("SQLITE_FULL", "SQLITE_IOERR")
"""SQLite's primary result codes of a write the disk refused: ``SQLITE_IOERR`` is what a
file-size limit (``ulimit -f``) gives, and what some file systems give when full."""
MODEL_FAILED = "{model} failed: {type}: {error}"
CANCELLED = "cancelled; run it again to resume"


@dataclass(frozen=True)
class JobEvent:
    """What a job reports while it works and when it ends, whatever the kind."""

    kind: str                    # 'run', 'arena', 'index', 'import'
    name: str                    # the run, the arena, the dataset, the file
    status: str                  # 'running', 'done', 'cancelled', 'failed'
    done: int                    # steps finished: found stored, or worked now
    total: int | None            # steps planned so far (None: not known yet)
    unit: str = ""               # what done and total count: 'items', 'battles', 'texts'
    cached: int = 0              # finished from the store, without new work
    new: int = 0                 # finished with new work in this session
    errors: int = 0              # finished with an error recorded, or not stored
    rate: float = 0.0            # the pace of the new work, in rate_unit
    rate_unit: str = ""          # 'tok/s', 'battles/s', 'texts/s'
    eta_seconds: float | None = None   # at this session's pace (None before any new work)
    working_on: str | None = None      # what the job is at: a setting, a query, a file
    message: str | None = None
    detail: object = None        # the kind's own numbers, a frozen dataclass (RunProgress, ...)

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


Progress = Callable[[JobEvent], None]
"""What ``progress=`` means everywhere (runs, arenas, calibration, imports, indexing,
retrieval, features): a callback that receives the job's :class:`JobEvent` s."""

StepCount = Callable[[int, "int | None", str], None]
"""``steps(done, total or None, what)``: how a part of a job that is not a job itself (a
dataset parser) tells its job where it is; the job sends it on as its :class:`JobEvent`."""


class Stop(Exception):
    """Raised inside a job to end it with ``status`` (and why, in ``message``)."""

    def __init__(self, status: str, message: str | None = None):
        super().__init__(message or status)
        self.status, self.message = status, message


def is_cancelled(cancel) -> bool:
    """Whether ``cancel`` (a ``threading.Event``, a callable or None) asks to stop."""
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    return bool(is_set() if is_set is not None else cancel())


def is_disk_full(exc: BaseException | None) -> bool:
    """A write the disk refused (:data:`DISK_FULL_CODES`, or "full" in the words of an
    sqlite3 without error codes), also as the context or cause of the error that follows it
    (the "cannot rollback" after SQLite rolled back itself, a :class:`StorageError`)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, sqlite3.OperationalError):
            name = getattr(exc, "sqlite_errorname", None) or ""
            if any(name == c or name.startswith(c + "_") for c in DISK_FULL_CODES):
                return True
            if not name and "full" in str(exc).lower():
                return True
        exc = exc.__cause__ or exc.__context__
    return False


def database_named(exc: BaseException) -> str:
    """``" (database PATH)"`` for a storage error that knows its file, else ``""``."""
    path = getattr(exc, "path", None)
    ok = path is not None and isinstance(exc, sqlite3.OperationalError)
    return f" (database {path})" if ok else ""


def model_failed(model: str, exc: BaseException, template: str = MODEL_FAILED,
                 **fields) -> Stop:
    """The :class:`Stop` of a job whose model raised ``exc``: failed, with ``template``
    filled with ``model``, ``type`` (the error's class name), ``error`` and ``fields``."""
    return Stop("failed", template.format(model=model, type=type(exc).__name__, error=exc,
                                          **fields))


@contextmanager
def model_errors(model: str, template: str = MODEL_FAILED, **fields) -> Iterator[None]:
    """Model calls inside end the job as failed when they raise (see :func:`model_failed`);
    database errors and :class:`Stop` pass through to the job's policy."""
    try:
        yield
    except (Stop, sqlite3.OperationalError):
        raise
    except Exception as exc:  # noqa: BLE001 - ModelError, OSError, a library's own, ...
        raise model_failed(model, exc, template, **fields) from None


def per_second(count: float, seconds: float) -> float:
    return count / seconds if seconds else 0.0


def eta(done: int, total: int, seconds: float, steps: int) -> float | None:
    """Seconds left for ``total - done`` steps when ``steps`` new ones took ``seconds``."""
    return None if not steps else max(0, total - done) * (seconds / steps)


class Job:
    """A job (module docstring). Subclasses set ``kind`` (and ``disk_full``, the message of a
    full disk), write ``work`` and ``event`` and ``summary``, and ``record`` when the job has a
    row that says how it ended."""

    kind = "job"
    disk_full = DISK_FULL
    raises = False      # True: errors reach the caller as they are, a full disk included

    def __init__(self, progress: Progress | None = None, cancel=None,
                 min_interval: float = 0.1):
        self.progress, self.cancel, self.min_interval = progress, cancel, min_interval
        self.started = time.perf_counter()
        self.last_emit = 0.0

    # ----------------------------------------------------------------------- the policy

    def run(self):
        """Do the work and end as the module docstring says; returns ``summary``."""
        status, message = "done", None
        try:
            message = self.work()
        except Stop as stop:
            status, message = stop.status, stop.message
        except sqlite3.OperationalError as exc:
            if self.raises or not is_disk_full(exc):
                self._end("failed", f"database error: {exc}", quiet=True)
                raise
            status = "failed"
            message = self.disk_full.format(kind=self.kind) + database_named(exc)
        except BaseException as exc:      # KeyboardInterrupt, or a bug: leave it resumable
            final = "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed"
            self._end(final, f"interrupted: {type(exc).__name__}: {exc}", quiet=True)
            raise
        self._end(status, message, quiet=status == "failed")
        return self.summary(status, message)

    def _end(self, status: str, message: str | None, quiet: bool = False) -> None:
        """Record the end and send the last event. ``quiet``: the job is failing already, so
        a database error while recording it does not hide the first error."""
        if not self.opened:
            return
        try:
            self.record(status, message)
        except sqlite3.Error:
            if not quiet:
                raise
        self.emit(force=True, status=status, message=message)

    def check_cancel(self, message: str = CANCELLED) -> None:
        """Between steps: end the job as cancelled when it is asked to stop."""
        if self.cancelled():
            raise Stop("cancelled", message)

    def cancelled(self) -> bool:
        return is_cancelled(self.cancel)

    def emit(self, force: bool = False, status: str = "running",
             message: str | None = None) -> None:
        """Send the job's event, unless one went less than ``min_interval`` ago (``force``:
        send it anyway; the last event is always forced)."""
        if self.progress is None:
            return
        moment = time.perf_counter()
        if not force and moment - self.last_emit < self.min_interval:
            return
        self.last_emit = moment
        self.progress(self.event(status, message))

    # ----------------------------------------------------------------------- the kind's part

    @property
    def opened(self) -> bool:
        """Whether the job got as far as its row; one that did not records and sends nothing
        at its end."""
        return True

    def work(self) -> str | None:
        """The steps; returns the message of a job that is done (None: nothing to say)."""
        raise NotImplementedError

    def event(self, status: str, message: str | None) -> JobEvent:
        raise NotImplementedError

    def record(self, status: str, message: str | None) -> None:
        """Write how the job ended into its row (nothing by default)."""

    def summary(self, status: str, message: str | None):
        raise NotImplementedError

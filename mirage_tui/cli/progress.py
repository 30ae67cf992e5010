"""Progress on a terminal: one printer (:class:`ProgressPrinter`) for every job's events
(:class:`engine.jobs.JobEvent`: runs, arenas, calibration, imports, indexing, retrieval,
features).

On a terminal it redraws one line. Elsewhere it writes a line every ``interval`` seconds and
always the last one, or nothing at all when ``interval`` is None (a transient bar, wiped when
the printer closes: imports, indexing, retrieval, features). How the line reads depends on
the kind: a run counts items and tokens per second, an arena battles; the rest show a bar, the
counts and what they are at.
"""

from __future__ import annotations

import shutil
import sys
import time

from engine.jobs import JobEvent
from engine.text_safety import visible_line
from mirage_tui.durations import duration as _duration

LOG_INTERVAL = 10.0
VERBS = {"index": "indexing", "import": "importing", "retrieval": "retrieving"}


def system_name(label: str) -> str:
    """A system label without its template (``GENERATOR/TEMPLATE``: the generator may be a
    URL, ``http://host:port/v1#model``, with slashes of its own), its thinking mode kept."""
    from engine.results.records import system_without_template

    return system_without_template(label)


def accuracy_line(event) -> str:
    parts = []
    for system, by_setting in event.detail.accuracy.items():
        cells = " ".join(f"{setting.split('#')[0]} {hits}/{n}"
                         for setting, (hits, n) in by_setting.items() if n)
        if cells:
            parts.append(f"{system_name(system)}: {cells}")
    return "; ".join(parts)


def progress_bar(e, width: int = 20) -> tuple[str, float | None]:
    """(a ``width``-cell bar of ``e.done / e.total``, the ETA to show: 0 once done)."""
    filled = int(width * e.done / e.total) if e.total else 0
    eta = 0.0 if e.total and e.done >= e.total else e.eta_seconds
    return "█" * filled + "░" * (width - filled), eta


def run_line(e: JobEvent) -> str:
    if e.message and e.status == "running" and not e.done:
        return f"{e.name}: {e.message}"
    bar, eta = progress_bar(e)
    text = (f"{e.name} {bar} {e.done}/{e.total} {e.unit}, {e.cached} cached, "
            f"{e.rate:.0f} {e.rate_unit}, ETA {_duration(eta)}")
    if e.errors:
        text += f", {e.errors} errors"
    if e.working_on and e.status == "running":
        text += f" · {e.working_on.split('#')[0]}"
    return text


def arena_line(e: JobEvent) -> str:
    bar, eta = progress_bar(e)
    text = (f"{e.name} {bar} {e.done}/{e.total} {e.unit}, {e.cached} cached, "
            f"{e.rate:.2f} {e.rate_unit}, ETA {_duration(eta)}")
    if e.detail.parse_failures:
        text += f", {e.detail.parse_failures} parse failures"
    if e.working_on and e.status == "running":
        text += f" · {e.working_on}"
    if e.status != "running":
        text += f" · {e.status}"
    return text


def counts_line(e: JobEvent) -> str:
    label = " ".join(part for part in (VERBS.get(e.kind, e.kind), e.name) if part)
    # a cancel's own words come once, from the command's last line
    what = "cancelled" if e.status == "cancelled" else e.message or e.working_on or ""
    if e.total:
        bar, _ = progress_bar(e, width=24)
        return f"{label} {bar} {e.done}/{e.total} {what}"
    return f"{label} {e.done} {what}"


LINES = {"run": run_line, "arena": arena_line}


class ProgressPrinter:
    """Job events to a stream (module docstring): call it with each event, ``close`` it at
    the end."""

    def __init__(self, stream=None, interval: float | None = LOG_INTERVAL):
        stream = stream if stream is not None else sys.stderr
        # the bar's own carriage returns go to the terminal as they are; the line's text (a
        # query, a file name) is made visible here instead (engine.text_safety)
        self.stream = getattr(stream, "raw", stream)
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval
        self.last: JobEvent | None = None
        self.last_line: float | None = None
        self.drawn = False

    def __call__(self, event: JobEvent) -> None:
        self.last = event
        text = visible_line(self.line(event))
        if self.tty:
            width = self._width()
            self.stream.write("\r" + text[:width].ljust(width))
            self.drawn = True
        elif self.interval is None:
            return
        elif (event.status != "running" or self.last_line is None
              or time.monotonic() - self.last_line >= self.interval):
            self.stream.write(text + "\n")
            self.last_line = time.monotonic()
        self.stream.flush()

    @staticmethod
    def line(e: JobEvent) -> str:
        return LINES.get(e.kind, counts_line)(e)

    def close(self) -> None:
        if not (self.tty and self.drawn):
            return
        if self.interval is None:       # transient: wipe the bar
            width = self._width()
            self.stream.write("\r" + " " * width + "\r")
        else:
            self.stream.write("\n")
        self.stream.flush()

    @staticmethod
    def _width() -> int:
        return max(20, shutil.get_terminal_size((100, 20)).columns - 1)

"""Progress on a terminal: a one-line bar for imports and indexing (:class:`ProgressLine`)
and the redrawn bar or periodic log line of a run (:class:`ProgressPrinter`)."""

from __future__ import annotations

import shutil
import sys
import time

from mirage_tui.cli.common import duration as _duration

LOG_INTERVAL = 10.0


class ProgressLine:
    """A one-line progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, label: str):
        self.label = label
        self.enabled = sys.stderr.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int | None, what: str) -> None:
        if not self.enabled:
            return
        if total:
            width = 24
            filled = int(width * done / total)
            bar = "█" * filled + "░" * (width - filled)
            text = f"{self.label} {bar} {done}/{total} {what}"
        else:
            text = f"{self.label} {done} {what}"
        sys.stderr.write("\r" + text[:100].ljust(100))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def accuracy_line(event) -> str:
    parts = []
    for system, by_setting in event.accuracy.items():
        cells = " ".join(f"{setting.split('#')[0]} {hits}/{n}"
                         for setting, (hits, n) in by_setting.items() if n)
        if cells:
            parts.append(f"{system.split('/')[0]}: {cells}")
    return "; ".join(parts)


def progress_bar(e, width: int = 20) -> tuple[str, float | None]:
    """(a ``width``-cell bar of ``e.done / e.total``, the ETA to show: 0 once done)."""
    filled = int(width * e.done / e.total) if e.total else 0
    eta = 0.0 if e.total and e.done >= e.total else e.eta_seconds
    return "█" * filled + "░" * (width - filled), eta


class ProgressPrinter:
    """ProgressEvents to a stream: a redrawn bar on a terminal, else a line every 10 s."""

    def __init__(self, stream, interval: float = LOG_INTERVAL):
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.interval = interval
        self.last = None
        self.last_line: float | None = None
        self.drawn = False

    def __call__(self, event) -> None:
        self.last = event
        text = self.line(event)
        if self.tty:
            width = max(20, shutil.get_terminal_size((100, 20)).columns - 1)
            self.stream.write("\r" + text[:width].ljust(width))
            self.drawn = True
        elif (event.status != "running" or self.last_line is None
              or time.monotonic() - self.last_line >= self.interval):
            self.stream.write(text + "\n")
            self.last_line = time.monotonic()
        self.stream.flush()

    def line(self, e) -> str:
        if e.message and e.status == "running" and not e.done:
            return f"{e.run}: {e.message}"
        bar, eta = progress_bar(e)
        text = (f"{e.run} {bar} {e.done}/{e.total} items, {e.cached} cached, "
                f"{e.tokens_per_s:.0f} tok/s, ETA {_duration(eta)}")
        if e.errors:
            text += f", {e.errors} errors"
        if e.setting and e.status == "running":
            text += f" · {e.setting.split('#')[0]}"
        return text

    def close(self) -> None:
        if self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()

"""What Live run's workers post: a run's report, computed, and a worker's error as a message of
its own type (the feature widgets' :class:`~mirage_tui.screens.features.Failed`, posted by
``failures_as``), so that each is handled by the part it belongs to: the report's by
:class:`~.report_view.ReportView` (its notes say it), the newest run's by the screen (a
notification)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from mirage_tui.screens.features import Failed

if TYPE_CHECKING:
    from textual.worker import Worker

    from engine.results.report import RunReport
    from engine.runs.lookup import RunInfo


@dataclass
class ReportLoaded(Message):
    """The report of the run asked for by the name ``run``, computed from ``info`` (that run
    as it was stored then)."""
    run: str
    report: RunReport
    info: RunInfo


@dataclass
class LiveReportFailed(Failed):
    """No report of the run asked for by the name ``run`` (not stored yet, deleted, …)."""
    run: str | None = None
    what = "the report"


@dataclass
class NewestRunFailed(Failed):
    """The run list could not be read by ``worker``; told only while no newer look has
    replaced it (the screen looks again each time it is shown)."""
    worker: Worker | None = None
    what = "the newest run"

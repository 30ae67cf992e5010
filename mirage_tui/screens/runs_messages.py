"""What the Runs screen's parts say when a worker fails: one message type each (the feature widgets'
:class:`~mirage_tui.screens.features.Failed`, posted by ``failures_as``), so that
each is handled by the part it belongs to: the list and the comparison's by the screen (the
summary pane says it), the report's by :class:`~.runs_summary.RunSummary`, a rename's or
delete's and the log's by :class:`~.runs_manage.RunManage`, the export's by
:class:`~.runs_keys.RunExportResume`."""

from __future__ import annotations

from mirage_tui.screens.features import Failed

__all__ = ["ChangeFailed", "ComparisonFailed", "LogFailed", "ReportFailed", "RunExportFailed",
           "RunsFailed"]


class RunsFailed(Failed):
    what = "the runs"


class ReportFailed(Failed):
    what = "the report"


class ComparisonFailed(Failed):
    what = "the comparison"


class LogFailed(Failed):
    what = "the log"


class _DoFailed(Failed):
    """A failure of something done to a run, not read: titled "Could not do …"."""

    @property
    def title(self) -> str:
        return f"Could not do {self.what}"


class ChangeFailed(_DoFailed):
    what = "the change"


class RunExportFailed(_DoFailed):
    what = "the export"

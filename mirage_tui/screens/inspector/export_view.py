"""The Inspector's export of the view shown (``E``): the dialog that names the filters and
order it writes, the worker that writes it (:func:`engine.results.export.export_run`) and the
notification. A part of :class:`InspectorScreen` (a mixin; what it uses of the screen:
:class:`ViewExportKeysHost`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual import work
from textual.widgets import Input, Label

from mirage_tui.dialogs.export_run import ExportRunScreen
from mirage_tui.screens.hosts import ScreenHost
from mirage_tui.screens.inspector.filters import Filters
from mirage_tui.screens.inspector.messages import ViewExported


class ViewExportKeysHost(ScreenHost, Protocol):
    """What :class:`ViewExportKeys` uses of its host beyond a screen's own (``ScreenHost``)."""

    run_name: str
    filters: Filters
    sort: str | None
    descending: bool

    def sort_label(self) -> str: ...


if TYPE_CHECKING:
    _Host = ViewExportKeysHost
else:
    _Host = object


class ViewExportKeys(_Host):
    """``E``: export the filtered, sorted view (module docstring)."""

    def action_export_view(self) -> None:
        store = self.store
        if store is None:
            return
        filters, sort, descending = self.filters, self.sort, self.descending

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self.export_view(store, filters, sort, descending,
                                 Path(answer[0]).expanduser(), answer[1])

        self.app.push_screen(ExportViewScreen(self.run_name, filters.describe(),
                                              self.sort_label() if sort else ""), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-export",
          name="export view")
    def export_view(self, store, filters: Filters, sort: str | None, descending: bool,
                    path: Path, fmt: str) -> None:
        from engine.results.export import export_run, header_path
        from engine.runs.lookup import load_run

        with self.worker_errors("the export", store, prefix=f"{path}: "):
            written = export_run(store, load_run(store, self.run_name), format=fmt, out=path,
                                 filters=filters.query_args(), sort=sort,
                                 descending=descending)
            if fmt == "csv":
                header = json.loads(header_path(written).read_text(encoding="utf-8"))
            else:
                with written.open(encoding="utf-8") as fh:
                    header = json.loads(fh.readline())
            self.post_message(ViewExported(str(written), fmt, int(header["rows"]),
                                           filters.describe()))

    def on_view_exported(self, message: ViewExported) -> None:
        from engine.results.export import header_path

        extra = f" (header: {header_path(message.path)})" if message.format == "csv" else ""
        noun = "item" if message.rows == 1 else "items"
        where = f" ({message.view})" if message.view else ""
        self.app.notify(f"Wrote {message.rows} {noun} of this view{where} to "
                        f"{message.path}{extra}",
                        title="Export", markup=False, timeout=10)


class ExportViewScreen(ExportRunScreen):
    """The export dialog, for the inspector's view: says which filters and order it writes."""

    def __init__(self, run_name: str, filters: str, sort: str) -> None:
        super().__init__(run_name)
        self.view = " · ".join(p for p in (filters or "every item", sort and f"sorted by {sort}")
                               if p)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#export-title", Label).update(
            f"Export this view of {self.run_name}: {self.view}")
        self.query_one("#export-path", Input).value = str(
            self.folder / f"{self.run_name}-view.{self.first_format}")

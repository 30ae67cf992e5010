"""The Inspector's export of the view shown (``E``, :class:`ViewExport`): the dialog that names
the filters and order it writes, the worker that writes it
(:func:`engine.results.export.export_run`) and the notification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input, Label

from mirage_tui.dialogs.export_run import ExportRunScreen
from mirage_tui.screens.features import failures_as, store_of
from mirage_tui.screens.inspector.messages import ExportFailed, ViewExported

if TYPE_CHECKING:
    from mirage_tui.screens.inspector.handle import InspectedRun
    from mirage_tui.screens.inspector.list_view import ViewShown


class ViewExport(Widget):
    """``E``: export the filtered, sorted view of the run it holds (module docstring). It
    draws nothing: the dialog and the notification are what is seen of it."""

    KEYS: ClassVar[list[Binding]] = [Binding("E", "export_view", "Export")]
    """Its key; the screen binds it, so that it acts wherever the focus is."""

    DEFAULT_CSS = "ViewExport { display: none; }"

    run: InspectedRun | None = None

    def ask(self, view: ViewShown) -> None:
        """The export dialog for ``view``, then the export to the file it names."""
        store, run = store_of(self), self.run
        if store is None or run is None:
            self.app.notify("The run is still being read; press E again in a moment.",
                            title="Export", timeout=3)
            return

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self.export_view(store, run, view, Path(answer[0]).expanduser(), answer[1])

        self.app.push_screen(ExportViewScreen(run.name, view.filters.describe(), view.label),
                             chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-export",
          name="export view")
    def export_view(self, store, run: InspectedRun, view: ViewShown, path: Path,
                    fmt: str) -> None:
        from engine.results.export import export_run, header_path
        from engine.runs.lookup import run_now

        with failures_as(self, ExportFailed, store, prefix=f"{path}: "):
            # the run as it is now (by its id): its status when the Inspector opened may be over
            written = export_run(store, run_now(store, run.info), format=fmt, out=path,
                                 filters=view.filters.query_args(), sort=view.sort,
                                 descending=view.descending)
            if fmt == "csv":
                header = json.loads(header_path(written).read_text(encoding="utf-8"))
            else:
                with written.open(encoding="utf-8") as fh:
                    header = json.loads(fh.readline())
            self.post_message(ViewExported(str(written), fmt, int(header["rows"]),
                                           view.filters.describe()))

    @on(ViewExported)
    def _exported(self, message: ViewExported) -> None:
        from engine.results.export import header_path

        extra = f" (header: {header_path(message.path)})" if message.format == "csv" else ""
        noun = "item" if message.rows == 1 else "items"
        where = f" ({message.view})" if message.view else ""
        self.app.notify(f"Wrote {message.rows} {noun} of this view{where} to "
                        f"{message.path}{extra}",
                        title="Export", markup=False, timeout=10)

    @on(ExportFailed)
    def _failed(self, message: ExportFailed) -> None:
        message.tell(self.app)


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

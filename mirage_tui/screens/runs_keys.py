"""The Runs screen's keys that act on the highlighted run beyond showing it
(:class:`RunExportResume`): ``e`` exports it (``engine.results.export.export_run``, or the HTML
report: ``engine.results.html.run_page``) to a path and format asked for in a small dialog, and
``u`` resumes it when it stopped before its end (cancelled or interrupted: a launch offers only
runs stopped by quitting or killed, so a run cancelled on purpose is resumed from here or from
Live run)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from mirage_tui.dialogs.export_run import ExportRunScreen
from mirage_tui.run_controller import RESUMABLE
from mirage_tui.screens.features import controller_of, failures_as, store_of
from mirage_tui.screens.runs_messages import RunExportFailed

if TYPE_CHECKING:
    from engine.results.comparison import RunRow


class RunExportResume(Widget):
    """Export and resume of a run (module docstring). It draws nothing: the dialog and the
    notifications are what is seen of it."""

    KEYS: ClassVar[list[Binding]] = [
        Binding("e", "export", "Export"),
        Binding("u", "resume", "Resume"),
        Binding("u", "resume_why", "Resume", show=False),   # says why it cannot
    ]
    """Its keys; the screen binds them, so that they act wherever the focus is (``u`` is in
    the footer only on a run that can resume: :meth:`resumable`)."""

    DEFAULT_CSS = "RunExportResume { display: none; }"

    @dataclass
    class Exported(Message):
        """Run ``run`` written to ``path`` (``format``), ``rows`` items; ``partial``:
        "partial: N of M items (run running)"."""
        run: str
        path: str
        format: str
        rows: int
        partial: str | None = None

    # ------------------------------------------------------------------ resume

    def resumable(self, row: RunRow | None) -> bool:
        """The run of ``row`` stopped before its end, and no run is going."""
        controller = controller_of(self)
        return row is not None and row.status in RESUMABLE and row.done < row.total \
            and controller is not None and not controller.running

    def resume(self, name: str, row: RunRow | None) -> None:
        """Resume ``name`` (``row``: its line in the list), or say why it cannot."""
        controller = controller_of(self)
        if controller is None:
            return
        if controller.running:
            controller.busy()
        elif row is None or row.status not in RESUMABLE or row.done >= row.total:
            status = row.status if row is not None else "unknown"
            self.notify(f"{name} is {status}: only a cancelled or interrupted run with items "
                        "left resumes.", timeout=4, markup=False)
        else:
            controller.resume(name)     # Live run follows it (the app's Started)

    # ------------------------------------------------------------------ export

    def ask(self, name: str) -> None:
        """The export dialog for ``name``, then the export to the file it names."""

        def chosen(answer: tuple[str, str] | None) -> None:
            store = store_of(self)
            if answer is not None and store is not None:
                self.export(store, name, Path(answer[0]).expanduser(), answer[1])

        self.app.push_screen(ExportRunScreen(name), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-export", name="export")
    def export(self, store, name: str, path: Path, fmt: str) -> None:
        import json

        from engine.results.export import export_run, header_path
        from engine.runs.lookup import load_run

        with failures_as(self, RunExportFailed, store, prefix=f"{path}: "):
            run = load_run(store, name)
            if fmt == "html":
                from engine.arena.ratings.page import run_page_with_arenas
                from engine.results import count_items
                from engine.results.html import write_page

                written = write_page(run_page_with_arenas(store, run), path)
                rows = count_items(store, run)
                self.post_message(self.Exported(name, str(written.resolve()), fmt, rows))
                return
            written = export_run(store, run, format=fmt, out=path)
            # the header (a sidecar for csv, the first line of jsonl) says how many rows
            if fmt == "csv":
                header = json.loads(header_path(written).read_text(encoding="utf-8"))
            else:
                with written.open(encoding="utf-8") as fh:
                    header = json.loads(fh.readline())
            self.post_message(self.Exported(name, str(written), fmt, int(header["rows"]),
                                            header.get("partial")))

    @on(Exported)
    def _exported(self, message: Exported) -> None:
        run, path, fmt, rows = message.run, message.path, message.format, message.rows
        extra = ""
        if fmt == "html":
            size = Path(path).stat().st_size
            self.app.notify(f"Wrote the HTML report of {run} ({rows} items) to {path} "
                            f"({max(1, round(size / 1024)):,} KB); open it in any browser, "
                            "offline", title="Export", markup=False, timeout=10)
            return
        if fmt == "csv":
            from engine.results.export import header_path

            extra = f" (header: {header_path(path)})"
        if message.partial:
            extra += f" — {message.partial}"
        self.app.notify(f"Wrote {rows} items of {run} to {path}{extra}", title="Export",
                        markup=False, timeout=10)

    @on(RunExportFailed)
    def _failed(self, message: RunExportFailed) -> None:
        message.tell(self.app)

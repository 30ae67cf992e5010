"""The Runs screen's keys that act on the highlighted run beyond showing it: ``e`` exports it
(``engine.results.export.export_run``, or the HTML report: ``engine.results.html.run_page``) to
a path and format asked for in a small dialog, and ``u`` resumes it when it stopped before its
end (cancelled or interrupted: a launch offers only runs stopped by quitting or killed, so a
run cancelled on purpose is resumed from here or from Live run).

Mixed into :class:`mirage_tui.screens.runs.RunsScreen` (as :mod:`.inspector.human` is into the
Inspector); the export's worker reports back with ``call_from_thread``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual import work

from mirage_tui.dialogs.export_run import ExportRunScreen
from mirage_tui.run_controller import RESUMABLE
from mirage_tui.screens.hosts import ScreenHost

if TYPE_CHECKING:
    from engine.results.comparison import RunRow


class RunExportResumeKeysHost(ScreenHost, Protocol):
    """What :class:`RunExportResumeKeys` uses of the Runs screen."""

    runs: dict[str, RunRow]

    def need_run(self) -> str | None: ...

    def highlighted_run(self) -> str | None: ...


if TYPE_CHECKING:
    _Host = RunExportResumeKeysHost
else:
    _Host = object


class RunExportResumeKeys(_Host):
    """Export and resume of the highlighted run (its host: :class:`RunExportResumeKeysHost`)."""

    # ------------------------------------------------------------------ resume

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``u`` is in the footer only on a run that can resume (a hidden ``u`` says why)."""
        return self.resumable_highlighted() if action == "resume" else True

    def action_resume_why(self) -> None:
        self.action_resume()

    def resumable_highlighted(self) -> bool:
        """The highlighted run stopped before its end, and no run is going."""
        name = self.highlighted_run()
        row = self.runs.get(name) if name else None
        controller = self.run_controller
        return row is not None and row.status in RESUMABLE and row.done < row.total \
            and controller is not None and not controller.running

    def action_resume(self) -> None:
        name = self.need_run()
        controller = self.run_controller
        if name is None or controller is None:
            return
        row = self.runs.get(name)
        if controller.running:
            controller.busy()
        elif row is None or row.status not in RESUMABLE or row.done >= row.total:
            status = row.status if row is not None else "unknown"
            self.notify(f"{name} is {status}: only a cancelled or interrupted run with items "
                        "left resumes.", timeout=4, markup=False)
        else:
            controller.resume(name)     # Live run follows it (the app's Started)

    # ------------------------------------------------------------------ export

    def action_export(self) -> None:
        name = self.need_run()
        if name is None:
            return

        def chosen(answer: tuple[str, str] | None) -> None:
            store = self.store
            if answer is not None and store is not None:
                self.export(store, name, Path(answer[0]).expanduser(), answer[1])

        self.app.push_screen(ExportRunScreen(name), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-export", name="export")
    def export(self, store, name: str, path: Path, fmt: str) -> None:
        import json

        from engine.results.export import export_run, header_path
        from engine.runs.lookup import load_run

        with self.worker_errors("the export", store, prefix=f"{path}: "):
            run = load_run(store, name)
            if fmt == "html":
                from engine.arena.ratings.page import run_page_with_arenas
                from engine.results import count_items
                from engine.results.html import write_page

                written = write_page(run_page_with_arenas(store, run), path)
                rows = count_items(store, run)
                self.app.call_from_thread(self._exported, name, str(written.resolve()), fmt,
                                          rows)
                return
            written = export_run(store, run, format=fmt, out=path)
            # the header (a sidecar for csv, the first line of jsonl) says how many rows
            if fmt == "csv":
                header = json.loads(header_path(written).read_text(encoding="utf-8"))
            else:
                with written.open(encoding="utf-8") as fh:
                    header = json.loads(fh.readline())
            self.app.call_from_thread(self._exported, name, str(written), fmt,
                                      int(header["rows"]), header.get("partial"))

    def _exported(self, run: str, path: str, fmt: str, rows: int,
                  partial: str | None = None) -> None:
        """``partial``: "partial: N of M items (run running)"."""
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
        if partial:
            extra += f" — {partial}"
        self.app.notify(f"Wrote {rows} items of {run} to {path}{extra}", title="Export",
                        markup=False, timeout=10)

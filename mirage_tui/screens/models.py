"""The models screen: what the catalog finds (packaged, on disk, installable), the endpoints
(configured in endpoints.toml, and the models of servers running on the usual loopback ports),
and a one-key check that loads the highlighted model and times a short job.

The catalog is read, and the loopback ports probed, in a thread worker (it scans the usual
model folders, headers only; each port gets at most 0.3 s, all at once); a
check (``c``) is a job of the screen's :class:`~mirage_tui.jobs.JobController`: it loads the
model with :func:`models.check.check_model`, the same function behind ``mirage-tui models
check``, records it, and writes its speed into the row's ``check`` column and the panel below.
The ``backend`` column names what would serve each model (:func:`models.served_by.
planned_backend`: the llama.cpp host, llama-server and its build, an HTTP endpoint, a library
in process; the device a check saw added), and the panel says why. Columns that do not fit are
left out whole and named in the table's title; the panel below shows them all.
``x`` (in the footer while a check runs) cancels it between its steps (load, warm-up, timed
job): nothing is recorded and the row keeps what it showed. A model that fails says why in a
notification.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from mirage_tui.commands import PaletteCommand
from mirage_tui.jobs import JobController
from mirage_tui.screens.base import BaseScreen, WorkerFailed
from mirage_tui.widgets.footer import Footer
from mirage_tui.widgets.safe_text import elided_cell
from mirage_tui.widgets.tables import highlighted_key, refill_fitting, title_naming
from models.catalog import CatalogEntry, endpoint_entries, format_size, list_models
from models.served_by import Serving, planned_backend, with_device

COLUMNS = (("model", "name"), ("kind", "kind"), ("installed", "installed"),
           ("check", "check"), ("backend", "backend"), ("quant", "quant"),
           ("context", "context"), ("size", "size"), ("licence", "license"))
# the most important first: what is left out at a narrow width goes from the end
PRIORITY = ["name", "kind", "installed", "check", "backend", "size", "context", "quant",
            "license"]


def size_text(n: int | None) -> str:
    return format_size(n, "—")


def check_summary(result: dict) -> str:
    """The check column: ``62 tok/s · cpu`` (generators), ``410 items/s`` (embedders)."""
    if not result.get("ok"):
        return "✗ failed"
    if result.get("kind") == "embedder":
        return f"{result['items_per_s']:.0f} items/s · {result.get('device') or '?'}"
    return f"{result['tokens_per_s']:.0f} tok/s · {result.get('device') or '?'}"


def check_details(result: dict) -> str:
    """The panel's account of a check, every number with its unit."""
    name = result.get("name")
    if not result.get("ok"):
        return f"{name}: the check failed: {result.get('error')}"
    head = (f"{name}: works ({result.get('kind')}, {result.get('device')}); loaded in "
            f"{result['load_seconds']:.1f} s")
    if result.get("kind") == "embedder":
        return (f"{head}; {result['items']} passages in {result['seconds']:.2f} s: "
                f"{result['items_per_s']:.0f} items/s, dimension {result['dim']}")
    prompt_tps = result.get("prompt_tokens_per_s")
    prompt = f"{prompt_tps:.0f} tokens/s" if prompt_tps else "?"
    return (f"{head}; prompt {result.get('prompt_tokens')} tokens at {prompt}; generated "
            f"{result.get('completion_tokens')} tokens at {result['tokens_per_s']:.1f} "
            f"tokens/s ({result.get('finish_reason')}).\nSaid: "
            f"{' '.join(str(result.get('text', '')).split())[:160]}")


class ModelsScreen(BaseScreen):
    """The model catalog as a table; ``c`` checks the highlighted model."""

    BINDINGS = [
        Binding("c", "check_model", "Check"),
        Binding("x", "cancel_check", "Cancel check"),
        Binding("x", "cancel_check_why", "Cancel check", show=False),   # says none runs
        Binding("r", "refresh_models", "Refresh"),
        Binding("escape", "app.go_back", "Back", show=False),
    ]

    PALETTE = (
        PaletteCommand("models: check selected",
                       "Load the highlighted model and time a short job", "check_model"),
        PaletteCommand("models: cancel the check", "Stop the model check (x)",
                       "cancel_check"),
        PaletteCommand("models: refresh", "Scan for models again", "refresh_models"),
    )
    PALETTE_AFTER = "show_models"

    DEFAULT_CSS = """
    ModelsScreen #models {
        height: 1fr;
        border: round $primary 50%;
        border-title-color: $text-primary;
        border-subtitle-color: $text-muted;
    }
    ModelsScreen #models:focus {
        border: round $accent;
    }
    ModelsScreen #model-detail {
        height: auto;
        max-height: 12;
        padding: 0 1;
        border: round $panel-lighten-2;
        border-title-color: $text;
        color: $text;
    }
    """

    @dataclass
    class Loaded(Message):
        entries: list[CatalogEntry]
        checks: dict[str, dict]        # each model's latest stored check
        serving: dict[str, Serving]    # what would serve each entry (by its catalog name)

    @dataclass
    class Failed(Message):
        error: str

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[str, CatalogEntry] = {}
        self.checks: dict[str, dict] = {}
        self.checking: str | None = None
        self.check_job = JobController(self, group="model-check")
        self.rows: list[tuple[str, dict]] = []
        self.serving: dict[str, Serving] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        table = DataTable(id="models", cursor_type="row", zebra_stripes=True)
        table.border_title = "Models"
        yield table
        detail = Static("Reading the catalog…", id="model-detail", markup=False)
        detail.border_title = "Selected"
        yield detail
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#models", DataTable)
        self._fill()
        table.focus()
        self.action_refresh_models()

    # ------------------------------------------------------------------ the catalog

    def action_refresh_models(self) -> None:
        self.load_catalog()

    @work(thread=True, exclusive=True, exit_on_error=False, group="catalog",
          name="read the model catalog")
    def load_catalog(self) -> None:
        try:
            entries = list_models() + endpoint_entries()
        except Exception as exc:  # noqa: BLE001 - an unreadable folder must not crash the app
            self.post_message(self.Failed(f"{type(exc).__name__}: {exc}"))
            return
        serving: dict[str, Serving] = {}
        for e in entries:
            try:
                serving[e.name] = planned_backend(e)
            except Exception as exc:  # noqa: BLE001 - the row shows without it
                serving[e.name] = Serving("?", "?", f"{type(exc).__name__}: {exc}")
        checks: dict[str, dict] = {}
        store = self.store
        if store is not None:
            from engine.model_speeds import latest_model_checks

            try:
                checks = latest_model_checks(store)
            except Exception as exc:  # noqa: BLE001 - the catalog shows without them
                self.post_message(self.Failed(f"the stored checks: {type(exc).__name__}: "
                                              f"{exc}"))
            finally:
                store.close()
        self.post_message(self.Loaded(entries, checks, serving))

    def on_models_screen_loaded(self, message: Loaded) -> None:
        table = self.query_one("#models", DataTable)
        keep = self._highlighted()
        self.entries = {}
        self.checks = {**message.checks, **self.checks}    # this session's are as new
        self.rows = []
        self.serving = {}
        for e in message.entries:
            serving = message.serving.get(e.name)
            if e.kind == "endpoint" and e.name in self.entries:   # say which: a spec
                e = replace(e, name=f"endpoint:{e.name}")
            self.entries[e.name] = e
            if serving is not None:
                self.serving[e.name] = serving
            kind = e.kind + (" (chat)" if e.chat else "")
            installed = "yes" if e.installed else ("error" if e.error else "no")
            if e.kind == "endpoint":
                installed = "error" if e.error else {"discovered": "running"}.get(e.source,
                                                                                  e.source)
            self.rows.append((e.name, dict(zip((key for _, key in COLUMNS), (
                Text(e.name), Text(kind), Text(installed), Text(self._check_cell(e.name)),
                Text(self._backend_cell(e.name)), Text(e.quantization or "—"), Text(str(e.context_length or "—"), justify="right"),
                Text(size_text(e.size_bytes), justify="right"),
                elided_cell(e.license or "—", 10, prose=True))))))
        self._fill()
        packaged = sum(e.source == "packaged" for e in message.entries)
        remote = sum(e.kind == "endpoint" for e in message.entries)
        table.border_subtitle = Text(
            f"{packaged} packaged · {len(message.entries) - packaged - remote} found on disk · "
            + (f"{remote} endpoint{'s' if remote != 1 else ''} · " if remote else "")
            + "c checks the highlighted model")
        if keep in self.entries:
            table.move_cursor(row=table.get_row_index(keep))
        self._show_detail()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        # the columns that fit whole, the model and what it is first; the ones left out are
        # named in the title, and the panel below shows every one
        table = self.query_one("#models", DataTable)
        hidden = refill_fitting(table, {k: label for label, k in COLUMNS}, self.rows, PRIORITY)
        table.border_title = title_naming("Models", hidden, "the panel below")

    def on_models_screen_failed(self, message: Failed) -> None:
        self.notify(message.error, title="Could not read the model catalog", severity="error",
                    markup=False, timeout=10)

    def _highlighted(self) -> str | None:
        return highlighted_key(self.query_one("#models", DataTable))

    @on(DataTable.RowHighlighted, "#models")
    def _highlight_changed(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#model-detail", Static)
        name = self._highlighted()
        entry = self.entries.get(name) if name else None
        if entry is None:
            detail.update("No models found.")
            return
        lines = [f"{entry.name} · {entry.kind} · {entry.source}"
                 + (f" · {entry.architecture}" if entry.architecture else "")
                 + (f" · dimension {entry.dim}" if entry.dim else "")]
        facts = [f"{label} {value}" for label, value in (
            ("quant", entry.quantization), ("context", entry.context_length),
            ("size", size_text(entry.size_bytes) if entry.size_bytes else None),
            ("licence", entry.license)) if value]
        if facts:
            lines.append(" · ".join(facts))
        serving = self.serving.get(entry.name)
        if serving is not None:
            lines.append(f"backend: {self._backend_cell(entry.name)}: {serving.reason}")
        if entry.path:
            lines.append(f"file: {entry.path}")
        if entry.url:
            lines.append(f"url: {entry.url} · model: {entry.model or 'the first listed'}"
                         + (f" · key from ${entry.api_key_env}" if entry.api_key_env else ""))
        if not entry.installed and entry.install:
            lines.append(f"not installed: {entry.install}")
        if entry.error:
            lines.append(f"cannot be used: {entry.error}")
        if self.checking == entry.name:
            lines.append("cancelling: the check stops after its current step…"
                         if self.check_job.cancelling else
                         "checking: loading the model and timing a short job… (x cancels)")
        elif entry.name in self.checks:
            check = self.checks[entry.name]
            when = check.get("checked_at")
            lines.append(check_details(check) + (f"\n(checked {when.replace('T', ' ')[:16]} "
                                                 "UTC; c checks again)" if when else ""))
        elif entry.installed:
            lines.append("c loads it and times a short job (speed, load time, device).")
        detail.update("\n".join(lines))

    def _backend_cell(self, name: str) -> str:
        serving = self.serving.get(name)
        return with_device(serving, self.checks.get(name)) if serving is not None else "—"

    def _check_cell(self, name: str) -> str:
        if self.checking == name:
            return "checking…"
        result = self.checks.get(name)
        return check_summary(result) if result else "—"

    # ------------------------------------------------------------------ checks

    def action_check_model(self) -> None:
        name = self._highlighted()
        entry = self.entries.get(name) if name else None
        if entry is None:
            self.notify("No model here to check." if not self.entries
                        else "Highlight a model first.", timeout=3)
            return
        if self.checking is not None:
            self.notify(f"Still checking {self.checking}; one check at a time.", timeout=3)
            return
        if not entry.installed:
            self.notify(entry.error or f"{entry.name} is not installed: {entry.install}",
                        title="Cannot check", severity="warning", markup=False, timeout=10)
            return
        controller = self.run_controller
        if controller is not None and controller.running:
            self.notify("A run is going: the check shares the CPU with it, so its speed "
                        "reads low.", timeout=5)
        name, threads = entry.name, self.threads

        def work(store, progress, cancel) -> dict:
            from engine.runs.estimates import record_model_check
            from models.check import check_model

            result = check_model(name, n_threads=threads, cancel=cancel.is_set)
            if not result.get("cancelled"):
                # kept: the estimates use its speeds; Models shows it again
                with self.worker_errors("the check's record", store):
                    record_model_check(store, result, name)
            return result

        if self.check_job.launch(name, work):
            self.checking = name
            self._set_check_cell(name)
            self._show_detail()
            self.refresh_bindings()

    @on(JobController.Finished)
    def _checked(self, message: JobController.Finished) -> None:
        name, result = self.checking, message.summary
        self.checking = None
        self.refresh_bindings()
        if name is None:
            return
        if result.get("cancelled"):
            self._set_check_cell(name)
            self._show_detail()
            self.notify(f"The check of {name} was cancelled; nothing was recorded.",
                        timeout=4, markup=False)
            return
        self.checks[name] = result
        self._set_check_cell(name)
        self._show_detail()
        # a success is in the row and the panel; a toast would cover the panel's own line
        if not result.get("ok"):
            self.notify(str(result.get("error")), title=f"{name} failed",
                        severity="error", markup=False, timeout=8)

    @on(JobController.Failed)
    def _check_failed(self, message: JobController.Failed) -> None:
        name, self.checking = self.checking, None
        self.refresh_bindings()
        if name is not None:
            self._set_check_cell(name)
            self._show_detail()
        self.notify(message.error, title=f"Could not check {name}", severity="error",
                    markup=False, timeout=8)

    @on(JobController.Progress)
    def _check_progress(self, message: JobController.Progress) -> None:
        self.check_job.progress_handled()
        self._show_detail()         # says "cancelling" once x was pressed

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` is in the footer only while a check runs (a hidden ``x`` says none does)."""
        return self.check_job.running if action == "cancel_check" else True

    def action_cancel_check(self) -> None:
        self.check_job.cancel_key("No model is being checked.",
                                  f"The check of {self.checking} stops after its current step "
                                  "(a model that is loading finishes loading first).")

    def action_cancel_check_why(self) -> None:
        self.action_cancel_check()

    @on(WorkerFailed)
    def _worker_failed(self, message: WorkerFailed) -> None:
        self.notify_failed(message, "store", timeout=8)

    def _set_check_cell(self, name: str) -> None:
        for key, cells in self.rows:
            if key == name:
                cells["check"] = Text(self._check_cell(name))
                cells["backend"] = Text(self._backend_cell(name))   # the device it saw
        self._fill()            # the new cells may be wider: the columns that fit again

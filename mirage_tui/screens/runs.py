"""The runs screen: the workspace's runs, one run's summary, two runs compared, an export.

The list reads each run's row and item counts (``engine.results.records``); Enter computes the run's
report (``engine.results.report.build_report``: accuracy per system × setting and NV/CA/CI/CM, each
with its 95% bootstrap CI and n) in a worker. Space marks a run and ``c`` compares the
highlighted run with it where systems and settings overlap; ``e`` exports the highlighted run
(``engine.results.export.export_run``) to a path and format asked for in a small dialog.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Header, Input, Label, Select, Static
from textual.worker import Worker

from engine.results.text import ADAPTABILITY_COLUMNS, pct, short_setting, table

N_BOOT = 200
EMPTY = ("No runs yet in this workspace. Start one from the command line, e.g.\n"
         "  mirage-tui run --dataset demo --generator smollm2-135m-instruct --sample 20\n"
         "or from the app's New run screen; it appears here as soon as it starts.")
KEYS = ("Enter summary · i inspector · b leaderboard · space mark · c compare with the mark · "
        "e export")


def _report_error(event: Worker.StateChanged) -> None:
    from mirage_tui.app import report_worker_error

    report_worker_error(event)


def _est(e: dict | None) -> str:
    """``33.3 [0.0, 66.7] n=6`` (percent); ``–`` when missing."""
    if not e or e.get("value") is None:
        return "– n=0" if e else "–"
    return f"{pct(e['value'], e.get('lo'), e.get('hi'))} n={e.get('n', 0)}"


def _flat(entry: dict, key: str) -> str:
    return pct(entry.get(key), entry.get(f"{key}_lo"), entry.get(f"{key}_hi"))


def _lines(rows: list[list[str]], right: set[int] = frozenset()) -> Text:
    out = Text()
    for i, line in enumerate(table(rows, right)):
        out.append(line + "\n", style="bold" if i == 0 else "")
    return out


def _heading(text: str) -> Text:
    return Text(f"\n{text}\n", style="bold underline")


@dataclass
class RunRow:
    """What the list shows of one run."""

    name: str
    dataset: str
    status: str
    done: int
    total: int
    generators: list[str]
    settings: list[str]
    seeds: str
    devices: list[str]
    created: str
    updated: str


def run_row(store, name: str) -> RunRow:
    from engine.results.records import item_counts, load_items, load_run

    run = load_run(store, name)
    counts = item_counts(run, load_items(store, run, metrics=()))
    config, header = run.config, run.header
    seeds = header.get("seeds") if isinstance(header.get("seeds"), dict) else {}
    seed_values = list(dict.fromkeys(str(v) for v in seeds.values())) or [
        str(config.get("seed", "—"))]
    devices = header.get("devices") or [m.get("device") for m in
                                        (header.get("models") or {}).values()
                                        if isinstance(m, dict) and m.get("device")]
    return RunRow(run.name, run.dataset, run.status, counts["done"], counts["total"],
                  list(config.get("generators") or []), list(config.get("settings") or []),
                  "/".join(seed_values), list(dict.fromkeys(devices)),
                  run.created_at[:16], run.updated_at[:16])


# --------------------------------------------------------------------------- summaries


def summary_text(report: dict, row: RunRow | None = None) -> Text:
    """One run: title, accuracy per system × setting, adaptability, notes."""
    items = report["items"]
    out = Text(f"{report['run']} · {report['dataset']} · {report['status']} · "
               f"{items['done']}/{items['total']} items", style="bold")
    if row is not None:
        out.append(f"\ncreated {row.created} · updated {row.updated} · seed {row.seeds} · "
                   f"device {', '.join(row.devices) or '—'}\ngenerators "
                   f"{', '.join(row.generators) or '—'} · settings {', '.join(row.settings)}")
    sample = report.get("sample")
    if sample:
        out.append(f"\nA sample of {sample['queries']} of {sample['of']} queries "
                   f"(seed {sample['seed']}).")
    if report.get("partial"):
        out.append(f"\nPARTIAL: {items['pending']} items pending; numbers cover the items "
                   "stored so far.", style="bold")
    out.append(f"\n% with 95% bootstrap CIs ({report['n_boot']} resamples, seed "
               f"{report['seed']}); n = queries.")
    out.append(_heading("Accuracy (EM_loose) per system × setting"))
    settings = list(dict.fromkeys(s for per in report["accuracy"].values() for s in per))
    rows = [["system"] + [short_setting(s) for s in settings]]
    for system, per in report["accuracy"].items():
        rows.append([system] + [_est(per.get(s)) if s in per else "" for s in settings])
    out.append(_lines(rows) if len(rows) > 1 else Text("  (no scored items yet)\n"))
    out.append(_heading("Adaptability (MIRAGE §1; NV+CA+CI+CM = 100)"))
    # Overall in a column of its own would push the table past 100 columns
    shares = [(k, t) for k, t in ADAPTABILITY_COLUMNS if k != "overall"]
    rows = [["system", "n"] + [title for _, title in shares]]
    for entry in report["systems"]:
        rows.append([entry["system"], str(entry["n"])]
                    + [_flat(entry, key) for key, _ in shares])
    if len(rows) == 1:
        out.append("  (no system has base, oracle and a mixed-like setting yet)\n")
    else:
        out.append(_lines(rows, right={1}))
        out.append(_heading("Overall↑ = −NV + CA − CI − CM"))
        out.append(_lines([["system", "overall"]] + [[e["system"], _flat(e, "overall")]
                                                     for e in report["systems"]]))
    for note in report.get("notes", []):
        out.append(f"note: {note}\n", style="italic")
    return out


def _overlap(a: dict | None, b: dict | None) -> str:
    if not a or not b or None in (a.get("lo"), a.get("hi"), b.get("lo"), b.get("hi")):
        return ""
    return "CIs overlap" if a["lo"] <= b["hi"] and b["lo"] <= a["hi"] else "CIs apart"


def _delta(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{100 * (b - a):+.1f}"


def compare_text(left: dict, right: dict) -> Text:
    """Two runs side by side where systems and settings overlap: EM_loose and adaptability
    of each with its CI and n, the difference (right − left, points) and whether the CIs
    overlap."""
    ln, rn = left["run"], right["run"]
    out = Text(f"Comparing {ln} (A) with {rn} (B)", style="bold")
    if left["dataset"] != right["dataset"]:
        out.append(f"\nDifferent datasets: {left['dataset']} vs {right['dataset']}.",
                   style="bold")
    else:
        out.append(f" on {left['dataset']}")
    out.append(f"\nΔ = B − A in points; % with 95% bootstrap CIs, n = queries.")
    out.append(_heading("Accuracy (EM_loose)"))
    rows = [["system", "setting", f"A {ln}", f"B {rn}", "Δ", ""]]
    for system, per in left["accuracy"].items():
        other = right["accuracy"].get(system, {})
        for setting, a in per.items():
            if setting in other:
                b = other[setting]
                rows.append([system, short_setting(setting), _est(a), _est(b),
                             _delta(a.get("value"), b.get("value")), _overlap(a, b)])
    out.append(_lines(rows, right={4}) if len(rows) > 1 else
               Text("  (no system × setting in common)\n"))
    only_left = sorted(set(left["accuracy"]) - set(right["accuracy"]))
    only_right = sorted(set(right["accuracy"]) - set(left["accuracy"]))
    if only_left:
        out.append(f"only in {ln}: {', '.join(only_left)}\n", style="italic")
    if only_right:
        out.append(f"only in {rn}: {', '.join(only_right)}\n", style="italic")
    out.append(_heading("Adaptability"))
    rights = {e["system"]: e for e in right["systems"]}
    rows = [["system", "", f"A {ln}", f"B {rn}", "Δ", ""]]
    for entry in left["systems"]:
        other = rights.get(entry["system"])
        if other is None:
            continue
        for key, title in ADAPTABILITY_COLUMNS:
            a = {"value": entry.get(key), "lo": entry.get(f"{key}_lo"),
                 "hi": entry.get(f"{key}_hi")}
            b = {"value": other.get(key), "lo": other.get(f"{key}_lo"),
                 "hi": other.get(f"{key}_hi")}
            rows.append([entry["system"], title, f"{_flat(entry, key)} n={entry['n']}",
                         f"{_flat(other, key)} n={other['n']}",
                         _delta(a["value"], b["value"]), _overlap(a, b)])
    out.append(_lines(rows, right={4}) if len(rows) > 1 else
               Text("  (no system with adaptability in both runs)\n"))
    return out


# --------------------------------------------------------------------------- export dialog


class ExportRunScreen(ModalScreen[tuple[str, str] | None]):
    """Path and format for an export; dismisses with ``(path, format)``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ExportRunScreen { align: center middle; }
    #export-dialog { width: 76; max-width: 100%; height: auto; padding: 0 1;
                     border: thick $accent; background: $surface; }
    #export-title { text-style: bold; margin-bottom: 1; }
    #export-options { height: 1; margin-top: 1; }
    #export-format { width: 16; }
    #export-hint { margin-top: 1; color: $text-muted; }
    #export-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    #export-buttons Button { margin-left: 1; }
    """

    def __init__(self, run_name: str, folder: Path | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.folder = folder or Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog"):
            yield Label(f"Export run {self.run_name}", id="export-title", markup=False)
            yield Input(str(self.folder / f"{self.run_name}.csv"), id="export-path")
            with Horizontal(id="export-options"):
                yield Label("format ", markup=False)
                yield Select([("CSV (+ header .json)", "csv"), ("JSON lines", "jsonl")],
                             value="csv", allow_blank=False, id="export-format", compact=True)
            yield Static("One row per item with its prompt, response and every score; the "
                         "run's header (config, versions, device) travels with it. Enter "
                         "exports, Esc cancels.", id="export-hint", markup=False)
            with Horizontal(id="export-buttons"):
                yield Button("Export", variant="primary", id="export-go")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @on(Select.Changed, "#export-format")
    def _format_changed(self, event: Select.Changed) -> None:
        path = self.query_one("#export-path", Input)
        current = Path(path.value.strip() or f"{self.run_name}.csv")
        if current.suffix in (".csv", ".jsonl"):
            path.value = str(current.with_suffix(f".{event.value}"))

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-go")
    def _go(self) -> None:
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self.notify("Type where to write the export.", severity="warning")
            return
        self.dismiss((raw, str(self.query_one("#export-format", Select).value)))

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


# --------------------------------------------------------------------------- the screen


class RunsScreen(Screen):
    """The workspace's runs. Escape goes back."""

    AUTO_FOCUS = "#runs"

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("enter", "summary", "Summary", show=False),
        Binding("i", "inspect", "Inspector"),
        Binding("b", "leaderboard", "Leaderboard"),
        Binding("space", "mark", "Mark"),
        Binding("c", "compare", "Compare"),
        Binding("e", "export", "Export"),
        Binding("r", "refresh", "Refresh"),
    ]

    DEFAULT_CSS = """
    RunsScreen #runs { height: auto; max-height: 40%; border-top: round $primary 50%; }
    RunsScreen #runs:focus { border-top: round $accent; }
    RunsScreen #runs-hint { height: 1; padding: 0 1; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis; }
    RunsScreen #summary-pane { height: 1fr; border: round $primary 30%; padding: 0 1;
        overflow-x: auto; }
    RunsScreen #run-summary { width: auto; min-width: 100%; }
    """

    @dataclass
    class RunsLoaded(Message):
        rows: list[RunRow]

    @dataclass
    class SummaryReady(Message):
        generation: int
        text: Text

    @dataclass
    class Exported(Message):
        run: str
        path: str
        format: str
        rows: int

    @dataclass
    class Failed(Message):
        what: str
        error: str

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[str, RunRow] = {}
        self.marked: str | None = None
        self.generation = 0

    def compose(self) -> ComposeResult:
        yield Header()
        runs = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        runs.border_title = "Runs"
        yield runs
        yield Static(KEYS, id="runs-hint", markup=False)
        with VerticalScroll(id="summary-pane"):
            yield Static("Loading the runs…", id="run-summary", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "runs"
        table = self.query_one("#runs", DataTable)
        for label in ("run", "dataset", "status", "items", "generators", "settings",
                      "seed", "device", "created", "updated"):
            table.add_column(label, key=label)
        table.focus()
        self.action_refresh()

    def _store(self):
        return getattr(self.app, "store", None)

    def action_refresh(self) -> None:
        store = self._store()
        if store is None:
            self.set_timer(0.25, self.action_refresh)
            return
        self.load_runs(store)

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs", name="load runs")
    def load_runs(self, store) -> None:
        from engine.results.records import known_runs

        try:
            self.post_message(self.RunsLoaded([run_row(store, n) for n in known_runs(store)]))
        except Exception as exc:
            self.post_message(self.Failed("the runs", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    @on(RunsLoaded)
    def _runs_loaded(self, message: RunsLoaded) -> None:
        table = self.query_one("#runs", DataTable)
        keep = self._highlighted()
        self.runs = {r.name: r for r in message.rows}
        if self.marked not in self.runs:
            self.marked = None
        table.clear()
        for r in message.rows:
            table.add_row(*self._cells(r), key=r.name)
        table.border_subtitle = Text(f"{len(message.rows)} runs")
        if not message.rows:
            self._show(Text(EMPTY))
            return
        if keep in self.runs:
            table.move_cursor(row=table.get_row_index(keep))
        self._show(Text("Enter shows the highlighted run's summary. " + KEYS))

    def _cells(self, r: RunRow) -> list[Text]:
        def clip(text: str, width: int) -> str:
            return text if len(text) <= width else text[: width - 1] + "…"

        # tight: ten columns must fit 100 cells; the summary repeats everything in full
        same_day = r.updated[:10] == r.created[:10]
        return [self._name_cell(r.name), Text(r.dataset), Text(r.status),
                Text(f"{r.done}/{r.total}", justify="right"),
                Text(clip(", ".join(r.generators), 20)),
                Text(clip(" ".join(short_setting(s) for s in r.settings), 22)),
                Text(r.seeds), Text(", ".join(r.devices) or "—"), Text(r.created[:10]),
                Text(r.updated[11:16] if same_day else r.updated[:10])]

    def _name_cell(self, name: str) -> Text:
        return Text(f"● {name}" if name == self.marked else name)

    def _highlighted(self) -> str | None:
        table = self.query_one("#runs", DataTable)
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return row_key.value

    def _show(self, text: Text) -> None:
        self.query_one("#run-summary", Static).update(text)
        self.query_one("#summary-pane", VerticalScroll).scroll_home(animate=False)

    def _need_run(self) -> str | None:
        name = self._highlighted()
        if name is None:
            self.notify("No run here yet.", timeout=3)
        return name

    # ------------------------------------------------------------------ summary / compare

    @on(DataTable.RowSelected, "#runs")
    def action_summary(self) -> None:
        name = self._need_run()
        store = self._store()
        if name is None or store is None:
            return
        self.generation += 1
        self._show(Text(f"Computing the report of {name}…"))
        self.build_summary(store, [name], self.generation)

    def action_mark(self) -> None:
        name = self._need_run()
        if name is None:
            return
        old, self.marked = self.marked, (None if self.marked == name else name)
        table = self.query_one("#runs", DataTable)
        for run in {old, name} - {None}:
            if run in self.runs:
                table.update_cell(run, "run", self._name_cell(run), update_width=True)
        self.notify(f"Marked {name}: highlight another run and press c to compare."
                    if self.marked else "Mark cleared.", timeout=3, markup=False)

    def action_compare(self) -> None:
        name = self._need_run()
        store = self._store()
        if name is None or store is None:
            return
        if self.marked is None or self.marked == name:
            self.notify("Mark a run with space, then highlight another and press c.",
                        timeout=4)
            return
        self.generation += 1
        self._show(Text(f"Comparing {self.marked} with {name}…"))
        self.build_summary(store, [self.marked, name], self.generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-summary",
          name="run report")
    def build_summary(self, store, names: list[str], generation: int) -> None:
        from engine.results.report import build_report

        try:
            reports = [build_report(store, n, n_boot=N_BOOT, seed=0).as_json() for n in names]
            text = summary_text(reports[0], self.runs.get(names[0])) if len(reports) == 1 \
                else compare_text(*reports)
            self.post_message(self.SummaryReady(generation, text))
        except Exception as exc:
            self.post_message(self.Failed("the report", f"{type(exc).__name__}: {exc}"))
        finally:
            store.close()

    @on(SummaryReady)
    def _summary_ready(self, message: SummaryReady) -> None:
        if message.generation == self.generation:
            self._show(message.text)

    # ------------------------------------------------------------------ other screens

    def action_inspect(self) -> None:
        from mirage_tui.screens.inspector import InspectorScreen

        name = self._need_run()
        if name is not None:
            self.app.push_screen(InspectorScreen(name))

    def action_leaderboard(self) -> None:
        from mirage_tui.screens.leaderboard import LeaderboardScreen

        name = self._need_run()
        if name is not None:
            self.app.push_screen(LeaderboardScreen(name))

    # ------------------------------------------------------------------ export

    def action_export(self) -> None:
        name = self._need_run()
        if name is None:
            return

        def chosen(answer: tuple[str, str] | None) -> None:
            store = self._store()
            if answer is not None and store is not None:
                self.export(store, name, Path(answer[0]).expanduser(), answer[1])

        self.app.push_screen(ExportRunScreen(name), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-export", name="export")
    def export(self, store, name: str, path: Path, fmt: str) -> None:
        import json

        from engine.results.export import export_run, header_path

        try:
            written = export_run(store, name, format=fmt, out=path)
            # the header (a sidecar for csv, the first line of jsonl) says how many rows
            if fmt == "csv":
                header = json.loads(header_path(written).read_text(encoding="utf-8"))
            else:
                with written.open(encoding="utf-8") as fh:
                    header = json.loads(fh.readline())
            self.post_message(self.Exported(name, str(written), fmt, int(header["rows"])))
        except Exception as exc:
            self.post_message(self.Failed("the export", f"{path}: {type(exc).__name__}: {exc}"))
        finally:
            store.close()

    @on(Exported)
    def _exported(self, message: Exported) -> None:
        extra = ""
        if message.format == "csv":
            from engine.results.export import header_path

            extra = f" (header: {header_path(message.path)})"
        self.app.notify(f"Wrote {message.rows} items of {message.run} to {message.path}{extra}",
                        title="Export", markup=False, timeout=10)

    # ------------------------------------------------------------------ the rest

    def action_back(self) -> None:
        go_back = getattr(self.app, "action_go_back", None)
        if go_back is not None:     # MirageApp: pop a pushed screen, else the previous mode
            go_back()
        elif len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        if message.what in ("the runs", "the report"):
            self._show(Text(f"Could not load {message.what}: {message.error}"))
        self.app.notify(message.error, title=f"Could not do {message.what}"
                        if message.what == "the export" else f"Could not load {message.what}",
                        severity="error", markup=False, timeout=10)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        _report_error(event)

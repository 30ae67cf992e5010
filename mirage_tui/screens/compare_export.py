"""Compare's export (``x``): the comparison as JSON, its items as CSV and its page as HTML.
It asks where first, as every export of the app does (``compare-A-vs-B.json`` in the current
folder is offered; Esc writes nothing). When one of the three is there already it asks again
(:mod:`mirage_tui.dialogs.overwrite`): replace them, write under another name (asked for, the
first free ``…-2`` suggested), or write nothing. A feature widget of
:class:`~mirage_tui.screens.compare.CompareScreen` (:class:`CompareExport`), which hands it the
comparison once it is computed and binds its key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding
from textual.widget import Widget

from mirage_tui.dialogs.overwrite import ask_before_replacing

if TYPE_CHECKING:
    from engine.results.paired import PairedComparison

SUFFIXES = (".json", ".csv", ".html")


def comparison_files(main: Path) -> list[Path]:
    """The three files of a comparison exported as ``main`` (its ``.json``)."""
    return [main.with_suffix(suffix) for suffix in SUFFIXES]


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


class CompareExport(Widget):
    """``x``: write the comparison's three files where the user says, asking before replacing
    any. It draws nothing: the dialogs and the notification are what is seen of it."""

    KEYS: ClassVar[list[Binding]] = [Binding("x", "export", "Export")]
    """Its key; the screen binds it, so that it acts wherever the focus is."""

    DEFAULT_CSS = "CompareExport { display: none; }"

    comparison: PairedComparison | None = None
    """What it writes: the screen's comparison, once computed (None before)."""

    def ask(self) -> None:
        """Ask where (then whether to replace), and write the comparison there."""
        c = self.comparison
        if c is None:
            return
        self._ask_name(Path.cwd() / f"compare-{_safe(c.a.label)}-vs-{_safe(c.b.label)}.json")

    def _export_as(self, main: Path) -> None:
        c = self.comparison

        def answered(answer: str | None, suggestion: Path) -> None:
            if answer == "replace":
                self._write_comparison(c, main)
            elif answer == "rename":
                self._ask_name(suggestion)
            else:
                self.notify("Nothing written.", timeout=3, markup=False)

        if not ask_before_replacing(self.app, main, comparison_files, answered):
            self._write_comparison(c, main)

    def _ask_name(self, suggestion: Path) -> None:
        from mirage_tui.dialogs.text_prompt import TextPromptScreen

        def named(text: str | None) -> None:
            if text is None:
                self.notify("Nothing written.", timeout=3, markup=False)
                return
            path = Path(text).expanduser()
            if path.is_dir():                              # a folder: the name offered, in it
                path = path / suggestion.name
            if path.suffix not in SUFFIXES:
                path = path.with_name(path.name + ".json")
            self._export_as(path.with_suffix(".json"))     # asks again if that is taken

        self.app.push_screen(TextPromptScreen(
            "Export the comparison as", str(suggestion),
            "Writes the comparison as .json, its items as .csv and its page as .html under "
            "this name. Enter exports, Esc writes nothing.", ok="Export"), named)

    def _write_comparison(self, c, main: Path) -> None:
        from engine.output_files import OutputFileError, write_text
        from engine.results.html import comparison_page, write_page
        from engine.results.paired_text import write_items_csv

        data, items, page = comparison_files(main)
        try:
            write_text(data, json.dumps(c.as_json(), ensure_ascii=False, indent=1))
            write_items_csv(c, items)
            # the comparison is already computed: the page only formats it (no SQL, no
            # resampling)
            write_page(comparison_page(c), page)
        except OutputFileError as exc:
            self.notify(str(exc), title="Export failed", severity="error", markup=False)
            return
        self.notify(f"Wrote {data} and its {items.suffix} and {page.suffix} (one page, opens "
                    "offline)", title="Export", timeout=5, markup=False)

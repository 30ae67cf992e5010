"""The frame that the form dialogs share: a bordered box in the middle of the screen, a bold
title, muted hints, and a row of buttons at the right (the one that does it, primary, then
Cancel). Escape and Cancel dismiss with None.

A dialog gives its box the class ``dialog-frame`` and its own width (``#calib-dialog { width:
84; }``), its title ``dialog-title``, a row of a label and its field ``dialog-row``, its hints
``dialog-hint``, and yields :func:`button_row`.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ScreenResultType
from textual.widgets import Button

from mirage_tui.screens.base import BaseModal


class FramedDialog(BaseModal[ScreenResultType]):
    """A form dialog in the shared frame (module docstring); dismisses None on Escape or
    Cancel."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    FramedDialog { align: center middle; }
    FramedDialog .dialog-frame { max-width: 100%; height: auto; padding: 0 1;
                                 border: thick $accent; background: $surface; }
    FramedDialog .dialog-title { text-style: bold; margin-bottom: 1; }
    FramedDialog .dialog-row { height: 1; margin-top: 1; }
    FramedDialog .dialog-row Label { width: 10; color: $text-muted; }
    FramedDialog .dialog-hint { margin-top: 1; color: $text-muted; }
    FramedDialog .dialog-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    FramedDialog .dialog-buttons Button { margin-left: 1; }
    """

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, ".dialog-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()


def button_row(prefix: str, label: str, go: str = "go") -> Horizontal:
    """The dialog's buttons, ``#PREFIX-buttons``: ``label`` (primary, ``#PREFIX-GO``), then
    Cancel (``#PREFIX-cancel``)."""
    return Horizontal(Button(label, variant="primary", id=f"{prefix}-{go}"),
                      Button("Cancel", id=f"{prefix}-cancel", classes="dialog-cancel"),
                      id=f"{prefix}-buttons", classes="dialog-buttons")

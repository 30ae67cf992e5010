"""The app's footer: Textual's, but a narrow screen drops whole keys, the screen's last ones
first, and always keeps Quit and Keys (issue 36: at 80×24 the footer lost ``q Quit`` and
``? Keys`` past its right edge, and cut the key before them mid-word).

Textual exports no ``FooterKey`` or ``FooterLabel`` class (they live in its private
``textual.widgets._footer``), so the footer's parts are found by their CSS type names, the
public names its own styles (and ``styles.tcss``) select them by."""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Footer as TextualFooter

KEPT = {"quit", "app.quit", "toggle_help", "app.toggle_help"}
"""The actions whose keys a footer keeps at any width."""
MAX_LAYOUT_WAITS = 5
"""Refreshes a footer waits for its keys to be laid out before it gives up until the next
resize or compose."""
KEPT_KEYS = {"question_mark"}
"""Keys a footer keeps whatever a screen binds them to: ``?`` shows the keys everywhere (on
Compare it explains the verdict beside them)."""


def _actions(widget: Widget, is_key: bool) -> set[str]:
    """The actions (and ``key:NAME``) of a footer key, or of the keys of a key group."""
    keys = [widget] if is_key else list(widget.query("FooterKey"))
    return ({getattr(w, "action", "") for w in keys}
            | {f"key:{getattr(w, 'key', '')}" for w in keys})


def _kept(widget: Widget, is_key: bool) -> bool:
    actions = _actions(widget, is_key)
    return bool(actions & KEPT) or any(f"key:{k}" in actions for k in KEPT_KEYS)


class Footer(TextualFooter):
    """Textual's footer that fits its width by leaving keys out whole (:data:`KEPT` never)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._widths: dict[int, int] = {}
        self._waits = 0

    async def recompose(self) -> None:
        await super().recompose()
        self._widths, self._waits = {}, 0
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self._fit()

    def _items(self) -> list[list]:
        """The footer's keys as items that go or stay together (a key group and its label),
        in order, the command palette's key left out (it is docked on the right)."""
        items: list[list] = []
        labels = set(self.query_children("FooterLabel"))
        for widget in self.children:
            if widget.has_class("-command-palette"):
                continue
            if widget in labels and items:
                items[-1].append(widget)
            else:
                items.append([widget])
        return items

    def _width(self, widget) -> int:
        if id(widget) not in self._widths:
            margin = widget.styles.margin
            self._widths[id(widget)] = widget.region.width + margin.left + margin.right
        return self._widths[id(widget)]

    def _fit(self) -> None:
        """Show the keys that fit, leaving out the last ones not :data:`KEPT` first."""
        if not self.is_attached or not self.children:
            return
        items = self._items()
        if any(id(w) not in self._widths and not w.display for item in items for w in item):
            return          # not measured while shown: wait for the next compose
        if any(not w.region.width and w.display for item in items for w in item):
            # not laid out yet: look again after the next refresh, a few times at most (a
            # footer that never gets laid out, on a screen not shown, must not keep the app's
            # message loop busy; the next resize or compose fits it)
            if self._waits < MAX_LAYOUT_WAITS:
                self._waits += 1
                self.call_after_refresh(self._fit)
            return
        self._waits = 0
        palette = [w for w in self.children if w.has_class("-command-palette")]
        room = self.size.width - sum(self._width(w) for w in palette)
        widths = [sum(self._width(w) for w in item) for item in items]
        shown = [True] * len(items)
        keys = set(self.query_children("FooterKey"))
        for i in reversed(range(len(items))):
            if sum(w for w, s in zip(widths, shown) if s) <= room:
                break
            if not any(_kept(w, w in keys) for w in items[i]):
                shown[i] = False
        for i, width in enumerate(widths):      # a shorter key left out may fit after all
            if not shown[i] and sum(w for w, s in zip(widths, shown) if s) + width <= room:
                shown[i] = True
        for item, show in zip(items, shown):
            for widget in item:
                widget.display = show

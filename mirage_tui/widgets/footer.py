"""The app's footer: Textual's, but a narrow screen drops whole keys, the screen's last ones
first, and always keeps Quit and Keys (Textual's, at 80×24, loses ``q Quit`` and
``? Keys`` past its right edge, and cuts the key before them mid-word).

Textual exports no ``FooterKey`` or ``FooterLabel`` class (they live in its private
``textual.widgets._footer``), so the footer's parts are found by their CSS type names, the
public names its own styles (and ``styles.tcss``) select them by."""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter

KEPT = {"quit", "app.quit", "toggle_help", "app.toggle_help"}
"""The actions whose keys a footer keeps at any width."""
KEPT_KEYS = {"question_mark"}
"""Keys a footer keeps whatever a screen binds them to: ``?`` shows the keys everywhere (on
Compare it explains the verdict beside them)."""


def _actions(widget: Widget, is_key: bool) -> set[str]:
    """The actions (and ``key:NAME``) of a footer key, or of the keys of a key group."""
    keys = [widget] if is_key else list(widget.query("FooterKey"))
    # an action's name without its parameters: F1's ``app.toggle_help('field')`` is Keys too
    return ({getattr(w, "action", "").split("(", 1)[0] for w in keys}
            | {f"key:{getattr(w, 'key', '')}" for w in keys})


def _kept(widget: Widget, is_key: bool) -> bool:
    actions = _actions(widget, is_key)
    return bool(actions & KEPT) or any(f"key:{k}" in actions for k in KEPT_KEYS)


def item_width(widget: Widget) -> int:
    """The cells a footer key, key group or label takes, margins included, from its text and
    styles: known as soon as it is mounted, shown or not, laid out or not. (Read from its
    region after a layout, the footer waited for one; where the keys were composed again
    faster than they were laid out, it gave up and Keys and Quit went past the right edge.)"""
    most = Size(10_000, 1)
    margin = widget.styles.margin
    return (widget.get_content_width(most, most) + widget.styles.gutter.width
            + margin.left + margin.right)


class Footer(TextualFooter):
    """Textual's footer that fits its width by leaving keys out whole (:data:`KEPT` never)."""

    async def recompose(self) -> None:
        await super().recompose()
        self._fit()
        self.call_after_refresh(self._fit)      # again once its styles surely apply

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

    def _fit(self) -> None:
        """Show the keys that fit, leaving out the last ones not :data:`KEPT` first."""
        if not self.is_attached or not self.children or not self.size.width:
            return          # not laid out yet: its first resize fits it
        items = self._items()
        palette = [w for w in self.children if w.has_class("-command-palette")]
        room = self.size.width - sum(item_width(w) for w in palette)
        widths = [sum(item_width(w) for w in item) for item in items]
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

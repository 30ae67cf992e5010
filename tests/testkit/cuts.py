"""What a screen shows that is cut (issue 27, "nothing cut"): a line of text whose end is
hidden past its widget's or its container's right edge, a table column past the table's right
edge, a table cell shortened by hand instead of by the one elide helper
(:func:`mirage_tui.widgets.safe_text.elided_cell`), or elided cells that no longer tell rows
apart (ids and names; prose must show whole words).

Text widgets are checked against their full content: what is visible, spaces aside, must be a
stretch of it (wrapped lines join up; a line scrolled out of view below is fine, a line cut
at the right is not), with ``…`` where something was elided on purpose.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.text import Text
from textual.geometry import Region
from textual.widgets import DataTable, Footer, Header, Static

from engine.text_fit import ELLIPSIS, LABEL_FIELDS
from mirage_tui.widgets.safe_text import ElidedText

SKIP = (Header, Footer)      # the app's chrome: its title and keys are Textual's own


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _name(widget) -> str:
    return f"{type(widget).__name__}#{widget.id}" if widget.id else type(widget).__name__


def visible_region(screen, widget) -> Region | None:
    try:
        geometry = screen.find_widget(widget)
    except Exception:      # not on screen (hidden, scrolled away, not laid out)
        return None
    region = geometry.region.intersection(geometry.clip)
    return region if region.area else None


def _full_text(widget) -> str | None:
    if isinstance(widget, Static):
        visual = widget.visual
        plain = getattr(visual, "plain", None)
        if plain is None and isinstance(widget.content, str):
            plain = widget.content
        return plain
    return None


def _lines(widget, visible: Region) -> list[str]:
    """The widget's visible content lines (border and padding left out) as plain text."""
    content = widget.content_region.intersection(visible)
    if not content.area:
        return []
    origin = widget.region.offset
    strips = widget.render_lines(Region(0, 0, widget.region.width, widget.region.height))
    out = []
    for y in range(content.y, content.bottom):
        strip = strips[y - origin.y]
        x0 = content.x - origin.x
        out.append(strip.crop(x0, x0 + content.width).text)
    return out


def _word_ends(full: str) -> tuple[str, list[bool]]:
    """``full`` without spaces, and for each of its characters whether a word ends there."""
    chars, ends = [], []
    for i, ch in enumerate(full):
        if ch.isspace():
            continue
        chars.append(ch)
        ends.append(i + 1 == len(full) or full[i + 1].isspace())
    return "".join(chars), ends


def text_cuts(screen) -> list[str]:
    problems = []
    for widget in screen.query(Static):
        if isinstance(widget, SKIP) or any(isinstance(a, SKIP) for a in widget.ancestors):
            continue
        full = _full_text(widget)
        visible = visible_region(screen, widget)
        if not full or visible is None:
            continue
        lines = [line.rstrip() for line in _lines(widget, visible)]
        shown = _squeeze("".join(lines))
        whole, ends = _word_ends(full)
        if not shown:
            continue
        if ELLIPSIS in shown and ELLIPSIS not in whole:
            if all(part in whole for part in shown.split(ELLIPSIS)):
                continue        # elided on purpose (text-overflow: ellipsis)
        start = whole.find(shown)
        if start < 0:
            problems.append(f"{_name(widget)}: shows {lines!r}")
            continue
        # every line ends where a word ends (wrapped at a space), unless it is one word
        # longer than the line (folded)
        at = start
        for line in lines:
            at += len(_squeeze(line))
            if line.strip() and not ends[at - 1] and " " in line.strip():
                problems.append(f"{_name(widget)}: cut after {line!r}")
                break
    return problems


def _plain(cell) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def _elided_well(shown: str, full: str, prose: bool) -> bool:
    """``shown`` is ``full``, or its head, ``…`` and its tail (for prose: whole words)."""
    if shown == full:
        return True
    head, mark, tail = shown.partition(ELLIPSIS)
    if not mark or not full.startswith(head) or not full.endswith(tail) \
            or len(head) + len(tail) >= len(full):
        return False
    if not prose:
        return True
    rest = full[len(head):len(full) - len(tail)]
    first_word_cut = not tail and " " not in full[:len(head) + 1]   # a first word too long
    return first_word_cut or ((not head or rest.startswith(" "))
                              and (not tail or rest.endswith(" ")))


def _reduced_well(shown: str, reduced: str, full: str) -> bool:
    """A system label shown less the words its column shares (``reduced``): each piece of
    ``reduced`` is in ``full``, in order (words left out, a hash or a URL shortened), and
    ``shown`` is ``reduced`` or each of its `` | `` fields elided (:func:`_elided_well`)."""
    at = 0
    for piece in re.findall(r"[^\s|/#:]+", reduced):
        at = full.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    fields, parts = reduced.split(LABEL_FIELDS), shown.split(LABEL_FIELDS)
    if len(fields) != len(parts):
        return _elided_well(shown, reduced, False)
    return all(_elided_well(p, f, False) for p, f in zip(parts, fields))


def table_cuts(screen) -> list[str]:
    problems = []
    for table in screen.query(DataTable):
        visible = visible_region(screen, table)
        if visible is None or not table.columns:
            continue
        view = table.scrollable_content_region.width
        x = 0
        for column in table.columns.values():
            width = column.get_render_width(table)
            if x + width > view + table.scroll_x:
                problems.append(f"{_name(table)}: column {_plain(column.label)!r} past the "
                                f"right edge ({x + width} > {view} cells)")
                break
            x += width
        header = table.header_height if table.show_header else 0
        first = int(table.scroll_y)
        rows = range(first, min(table.row_count, first + max(0, visible.height - header)))
        for c, column in enumerate(table.columns.values()):
            seen: dict[str, str] = {}
            room = column.get_render_width(table) - 2 * table.cell_padding
            for r in rows:
                cell = table.get_row_at(r)[c]
                shown = _plain(cell)
                if cell_len(shown) > room:
                    problems.append(f"{_name(table)}: column {_plain(column.label)!r} "
                                    f"{room} cells wide cuts {shown!r}")
                if isinstance(cell, ElidedText):
                    if cell.reduced is not None and not _reduced_well(shown, cell.reduced,
                                                                      cell.full):
                        problems.append(f"{_name(table)}: {shown!r} is not {cell.full!r} "
                                        f"less its shared words ({cell.reduced!r})")
                    elif cell.reduced is None and not _elided_well(shown, cell.full,
                                                                   cell.prose):
                        problems.append(f"{_name(table)}: {shown!r} is not {cell.full!r}")
                    elif not cell.prose and seen.setdefault(shown, cell.full) != cell.full:
                        problems.append(f"{_name(table)}: column {_plain(column.label)!r} "
                                        f"shows {shown!r} for {seen[shown]!r} and "
                                        f"{cell.full!r}")
                elif ELLIPSIS in shown:
                    problems.append(f"{_name(table)}: column {_plain(column.label)!r} "
                                    f"cut by hand: {shown!r}")
    return problems


def cuts(screen) -> list[str]:
    """Everything cut on ``screen`` (the app's active screen, a dialog included)."""
    return text_cuts(screen) + table_cuts(screen)

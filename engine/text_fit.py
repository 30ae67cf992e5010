"""Text to a width, with nothing cut mid-word by accident.

One rule per kind of text, used by every table of the TUI and by the CLI's text:

- an id, a path, a name (:func:`elide_middle`): its head and its distinguishing tail, ``…``
  between (``de/demo…-01``), so rows that differ only at the end stay apart;
- prose, a question, a reply (:func:`elide_words`): whole words, then ``…``;
- a table of text (:func:`fit_table`): cells wrapped at spaces, then the columns after the
  first shown in panels that repeat it, so every number stays whole;
- any other line (:func:`wrap_lines`): wrapped at spaces, indented under itself;
- a message with a path in it (:func:`fit_long_words`): every word wider than the width
  elided in the middle, the rest untouched, so it wraps at spaces (a notification); a path's
  file name is never cut: its folder is elided, a long name goes on lines of its own
  (:func:`break_path`).

Widths are terminal cells: East Asian wide characters count two.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

ELLIPSIS = "…"
# a cell's unbreakable pieces: a bracketed interval (``[9.1, 15.8]``) stays on one line
_PIECE = re.compile(r"\[[^\]\s]*(?:\s[^\]\s]*)*\]\S*|\S+")


def cell_len(text: str) -> int:
    """The cells ``text`` takes on a terminal."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _head(text: str, cells: int) -> str:
    out, used = [], 0
    for ch in text:
        used += cell_len(ch)
        if used > cells:
            break
        out.append(ch)
    return "".join(out)


def _tail(text: str, cells: int) -> str:
    return _head(text[::-1], cells)[::-1]


def elide_middle(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole when it fits, else its head, ``…`` and its tail
    (the tail gets the larger half: an id's distinguishing part is at its end)."""
    text = " ".join(str(text).split())
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:max(0, width)]
    room = width - 1
    head = room // 2
    return _head(text, head) + ELLIPSIS + _tail(text, room - head)


def elide_words(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole when it fits, else whole words from its head,
    ``…`` and whole words from its tail when they fit (``¿De qué…del cobre?``), else head
    words and ``…``; a first word longer than the width shows its start and ``…``."""
    text = " ".join(str(text).split())
    if cell_len(text) <= width:
        return text
    words = text.split(" ")
    head = _words(words, (width - 1) * 3 // 5)
    tail = _words(words[len(head):][::-1], width - 1 - cell_len(" ".join(head)))[::-1]
    if head and tail:
        return " ".join(head) + ELLIPSIS + " ".join(tail)
    head = _words(words, width - 1)
    if head:
        return " ".join(head) + ELLIPSIS
    return _head(text, max(0, width - 1)) + ELLIPSIS if width > 0 else ""


def _words(words: list[str], cells: int) -> list[str]:
    """The leading ``words`` that fit ``cells`` with a space between."""
    out: list[str] = []
    used = -1
    for word in words:
        used += 1 + cell_len(word)
        if used > cells:
            break
        out.append(word)
    return out


def elide_apart(values, width: int) -> dict[str, str]:
    """Each distinct value (spaces collapsed) in ``width`` cells, elided in the middle with one
    cut for all, the cut that keeps the most of them apart nearest an even split (the tail
    gets the larger half): ``fake-a/mirage@1`` and ``fake-b/mirage@1`` stay apart as
    ``fake-a…ge@1`` / ``fake-b…ge@1``, ``de/demo-de-01`` and ``-02`` by their tails."""
    distinct = sorted({" ".join(str(v).split()) for v in values})
    if all(cell_len(v) <= width for v in distinct) or width <= 1:
        return {v: elide_middle(v, width) for v in distinct}
    room = width - 1
    best: tuple[int, dict[str, str]] | None = None
    for head in sorted(range(room + 1), key=lambda h: (abs(h - room // 2), h)):
        shown = {v: v if cell_len(v) <= width else _head(v, head) + ELLIPSIS + _tail(
            v, room - head) for v in distinct}
        apart = len(set(shown.values()))
        if best is None or apart > best[0]:
            best = (apart, shown)
        if apart == len(distinct):
            break
    return best[1]


# --------------------------------------------------------------------------- labels apart

LABEL_FIELDS = " | "
"""What joins a label's fields: ``SYSTEM | SETTING`` (an arena contestant, a report row)."""
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^#\s|]*")
_HASH = re.compile(r"^[0-9a-f]{4,}$")
_MARKS = "/#:"                       # what separates a field's words


@dataclass(frozen=True)
class Apart:
    """System labels fitted to a width by :func:`labels_apart`: ``shown`` maps each distinct
    label (spaces collapsed) to what a table shows, ``reduced`` to it before any ``…`` (the
    label less its ``shared`` words, then abbreviated); ``shared``: the words every label
    has in the same place, left out of each row and said once (:meth:`caption`)."""

    shown: dict[str, str]
    reduced: dict[str, str]
    shared: tuple[str, ...] = ()

    def caption(self) -> str:
        """The words left out of every row, said once: ``all on http://127.0.0.1:8082/v1 ·
        mirage@1``; empty when none was."""
        if not self.shared:
            return ""
        first, *rest = self.shared
        head = f"all on {first}" if _URL.fullmatch(first) else f"all: {first}"
        return " · ".join([head, *rest])


def _label_words(label: str) -> list[list[tuple[str, str]]] | None:
    """A label's fields (split at `` | ``), each a list of ``(mark, word)``: the word and the
    mark before it (``/``, ``#``, ``:`` or none); a URL (up to its ``#``) is one word. None
    when the label does not read back from its words (it is then one word)."""
    fields = []
    for field in label.split(LABEL_FIELDS):
        words: list[tuple[str, str]] = []
        url = _URL.match(field)
        rest = field[url.end():] if url else field
        if url:
            words.append(("", url.group(0)))
        mark = ""
        for piece in re.split(f"([{re.escape(_MARKS)}]+)", rest):
            if piece and all(ch in _MARKS for ch in piece):
                mark = piece
            elif piece:
                words.append((mark, piece))
                mark = ""
        if mark or not words:
            return None
        fields.append(words)
    if _joined(fields) != label:
        return None
    return fields


def _joined(fields: list[list[tuple[str, str]]]) -> str:
    """A label from its fields' ``(mark, word)``: a field's first word drops its mark, save a
    ``#`` (an index hash stays marked as one)."""
    out = []
    for words in fields:
        text = "".join(m + w for m, w in words)
        if words and words[0][0] and not _is_hash(*words[0]):
            text = text[len(words[0][0]):]
        out.append(text)
    return LABEL_FIELDS.join(t for t in out if t)


def _is_hash(mark: str, word: str) -> bool:
    """Whether a word is an index hash (``#0a182239``)."""
    return mark == "#" and bool(_HASH.match(word))


def _shared_places(parsed: list[list[list[tuple[str, str]]]]) -> set[tuple[int, int]]:
    """The places ``(field, word)`` (a word counted from the field's start, or from its end
    as a negative index) where every label has the same word."""
    places: set[tuple[int, int]] = set()
    for f in range(min(len(p) for p in parsed)):
        fields = [p[f] for p in parsed]
        for j in range(min(len(w) for w in fields)):
            for place in (j, -j - 1):
                if len({w[place][1] for w in fields}) == 1:
                    places.add((f, place))
    return places


def _dropped(parsed, places) -> tuple[list[str], tuple[str, ...]]:
    """Each label without the words at the shared ``places`` (a label keeps at least one
    word of its own), and the shared words in the first label's order (a hash ``#``-marked)."""
    out = []
    for fields in parsed:
        kept = [[(m, w) for j, (m, w) in enumerate(words)
                 if (f, j) not in places and (f, j - len(words)) not in places]
                for f, words in enumerate(fields)]
        out.append(_joined(kept) if any(kept) else _joined(fields))
    first = parsed[0]
    shared = tuple(("#" if _is_hash(m, w) else "") + w for f, words in enumerate(first)
                   for j, (m, w) in enumerate(words)
                   if (f, j) in places or (f, j - len(words)) in places)
    return out, shared


def _abbreviated(labels: list[str]) -> list[str]:
    """Labels with a URL shortened to its host (``127.0.0.1:8082``) and an index hash to the
    fewest characters (4 or more) that keep the hashes of these labels apart."""
    parsed = [_label_words(v) for v in labels]
    hashes = sorted({w for p in parsed if p for words in p for m, w in words
                     if _is_hash(m, w)})
    size = next((n for n in range(4, 65) if len({h[:n] for h in hashes}) == len(hashes)), 64)
    out = []
    for label, fields in zip(labels, parsed):
        if fields is None:
            out.append(label)
            continue
        out.append(_joined([[(m, w[:size] if _is_hash(m, w) else
                              _URL.sub(lambda u: u.group(0).split("://", 1)[1].split("/")[0],
                                       w))
                             for m, w in words] for words in fields]))
    return out


def _elide_fields(labels: list[str], width: int) -> dict[str, str]:
    """Labels of the same fields (``MODEL | #HASH``) in ``width`` cells: the widest field
    narrowed first, each field elided apart from its own column (:func:`elide_apart`), so
    every field keeps what tells it apart; other labels elided whole."""
    fields = [v.split(LABEL_FIELDS) for v in labels]
    n = len(fields[0])
    if n == 1 or any(len(f) != n for f in fields) or width < 4 * n + 3 * (n - 1):
        return elide_apart(labels, width)
    widths = [max(cell_len(f[j]) for f in fields) for j in range(n)]
    while sum(widths) + 3 * (n - 1) > width:
        widths[widths.index(max(widths))] -= 1
    columns = [elide_apart([f[j] for f in fields], widths[j]) for j in range(n)]
    shown = {v: LABEL_FIELDS.join(columns[j][f[j]] for j in range(n))
             for v, f in zip(labels, fields)}
    return shown if len(set(shown.values())) == len(set(labels)) else \
        elide_apart(labels, width)


def labels_apart(values, width: int) -> Apart:
    """System labels (a column of a table) in ``width`` cells, kept apart by what differs:
    whole when they all fit; else without the words they all share in the same
    place (the endpoint's URL, ``mirage@1``, a retriever's name and index hash; said once,
    :meth:`Apart.caption`), so the word that differs shows whole; then a URL shortened to its
    host and an index hash to its distinguishing start; only then elided in the middle with
    one cut for all (:func:`elide_apart`)."""
    distinct = sorted({" ".join(str(v).split()) for v in values})
    same = {v: v for v in distinct}
    if all(cell_len(v) <= width for v in distinct):
        return Apart(same, same)
    reduced, shared = list(distinct), ()
    parsed = [_label_words(v) for v in distinct]
    if len(distinct) > 1 and all(p is not None for p in parsed):
        dropped, words = _dropped(parsed, _shared_places(parsed))
        if len(set(dropped)) == len(distinct) and words:
            reduced, shared = dropped, words
    if any(cell_len(v) > width for v in reduced):
        shorter = _abbreviated(reduced)
        if len(set(shorter)) == len(distinct):
            reduced = shorter
    shown = _elide_fields(reduced, width)
    return Apart({v: shown[r] for v, r in zip(distinct, reduced)},
                 dict(zip(distinct, reduced)), shared)


def _wrap_cell(text: str, width: int) -> list[str]:
    if cell_len(text) <= width:
        return [text]
    lines: list[str] = []
    for piece in _PIECE.findall(text):
        if lines and cell_len(lines[-1]) + 1 + cell_len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return [elide_middle(line, width) for line in lines] or [""]


def _longest_word(texts: list[str]) -> int:
    return max([cell_len(w) for t in texts for w in _PIECE.findall(t)] + [1])


def _aligned(rows: list[list[str]], widths: list[int], right: set[int]) -> list[str]:
    out = []
    for row in rows:
        cells = [_wrap_cell(c, w) for c, w in zip(row, widths)]
        for k in range(max(len(c) for c in cells)):
            parts = []
            for i, (lines, w) in enumerate(zip(cells, widths)):
                part = lines[k] if k < len(lines) else ""
                pad = " " * (w - cell_len(part))
                parts.append(pad + part if i in right else part + pad)
            out.append("  ".join(parts).rstrip())
    return out


def fit_table(rows: list[list[str]], right: set[int] = frozenset(),
              width: int | None = None, panels: bool = True, keys: int = 1) -> list[str]:
    """Columns two spaces apart (right-aligned where asked), within ``width`` cells when
    given: the widest cells wrap at spaces (down to their longest word; an interval
    ``[lo, hi]`` stays whole); when that is not enough, the columns after the key columns
    (what names a row) go into panels, one under the other, each repeating those; a word
    still too long is elided in the middle. The key columns are the first ``keys``, or more
    of the leading text columns when those are what tell the rows apart
    (:func:`identifying_columns`): no panel shows two rows that read the same."""
    n = len(rows[0])
    keys = identifying_columns(rows, keys, right)
    natural = [max(cell_len(r[i]) for r in rows) for i in range(n)]
    if width is None or _total(natural) <= width:
        return _aligned(rows, natural, right)
    floors = [_longest_word([r[i] for r in rows]) for i in range(n)]
    widths = _narrowed(natural, floors, width)
    if _total(widths) <= width or n <= keys + 1 or not panels:
        if _total(widths) > width:      # still too wide: the first column gives way
            widths[0] = max(4, widths[0] - (_total(widths) - width))
        return _aligned(rows, [min(w, width) for w in widths], right)
    # panels: the key columns (narrowed to leave half the width to the others) beside as
    # many of the others as fit at their own width
    first = _narrowed(natural[:keys], floors[:keys], max(8, width // 2))
    groups: list[list[int]] = []
    for i in range(keys, n):
        if groups and _total(first + [natural[c] for c in groups[-1]] + [natural[i]]) \
                <= width:
            groups[-1].append(i)
        else:
            groups.append([i])
    out: list[str] = []
    for cols in groups:
        if out:
            out.append("")
        shown = list(range(keys)) + cols
        out += fit_table([[r[c] for c in shown] for r in rows],
                         {k for k, c in enumerate(shown) if c in right}, width, panels=False)
    return out


def _total(widths: list[int]) -> int:
    return sum(widths) + 2 * (len(widths) - 1)


def identifying_columns(rows: list[list[str]], keys: int = 1,
                        right: set[int] = frozenset()) -> int:
    """How many leading columns of ``rows`` (the first a header) name a row: ``keys``, or the
    fewest leading columns past it that tell the body rows apart (``System``, ``Context``,
    ``k``), looking no further than the first right-aligned column (a number) and leaving
    one column to show; ``keys`` when no such prefix does."""
    body = [tuple(r) for r in rows[1:]]
    last = len(rows[0]) - 1
    for k in range(keys, last + 1):
        if len({r[:k] for r in body}) == len(body):
            return k
        if k in right:
            break
    return keys


def _narrowed(natural: list[int], floors: list[int], width: int) -> list[int]:
    """Column widths within ``width`` cells as far as the floors allow: the column furthest
    above its floor (its longest word) gives up a cell at a time."""
    widths = list(natural)
    while _total(widths) > width:
        shrinkable = [i for i, w in enumerate(widths) if w > floors[i]]
        if not shrinkable:
            break
        i = max(shrinkable, key=lambda j: widths[j] - floors[j])
        widths[i] -= 1
    return widths


def wrap_lines(text: str, width: int | None) -> str:
    """Each line of ``text`` longer than ``width`` cells wrapped at spaces (an interval
    ``[lo, hi]`` kept whole), its next lines indented two more than its own; a piece longer
    than a line elided in the middle."""
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        if cell_len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")))
        more = indent + "  " if len(indent) + 2 < width // 2 else indent
        current = indent
        for piece in _PIECE.findall(line):
            if current.strip() and cell_len(current) + 1 + cell_len(piece) <= width:
                current += " " + piece
                continue
            if current.strip():
                out.append(current)
                current = more
            current += elide_middle(piece, width - cell_len(current))
        out.append(current)
    return "\n".join(out)


def fit_long_words(text: str, width: int, keep=lambda word: False) -> str:
    """``text`` with every word (run of non-spaces) wider than ``width`` cells elided in the
    middle, spaces and the other words untouched, so the text wraps at spaces and nothing is
    folded mid-word (a notification). A path keeps its whole file name: beside the head of its
    folder when that fits in ``width`` (:func:`elide_path`), else on lines of its own under
    its folder (:func:`break_path`: a written file's name is never cut). Words for
    which ``keep`` is true (markup) are left whole."""

    def fitted(word: str) -> str:
        if cell_len(word) <= width or keep(word):
            return word
        head, _, name = word.rpartition("/")
        if head and cell_len(name) > width - 6:
            return break_path(word, width)
        return elide_path(word, width)

    return re.sub(r"\S+", lambda m: fitted(m.group(0)), text)


def break_path(text: str, width: int) -> str:
    """A path on lines of ``width`` cells with its file name whole: its folder on the first
    line (elided before its last part when wider: ``/home/u…/exports/``), then the name,
    broken after a ``-``, ``_`` or ``.`` where it must be (``compare-quick-comparison_`` /
    ``smollm2-135m-instruct_mirage_1.json``); a piece wider than a line is cut at its end."""
    head, sep, name = text.rpartition("/")
    lines = [elide_path(head, width - 1) + sep] if head else []
    line = ""
    for piece in re.findall(r"[^-_.]+[-_.]*|[-_.]+", name):
        if line and cell_len(line + piece) > width:
            lines.append(line)
            line = ""
        line += piece
        while cell_len(line) > width:
            lines.append(_head(line, width))
            line = line[len(lines[-1]):]
    if line:
        lines.append(line)
    return "\n".join(lines)


def elide_path(text: str, width: int) -> str:
    """A path in ``width`` cells: its head, ``…`` and its whole last part (``/tmp/a…/x.csv``)
    when the last part leaves room for a head of 4 cells, else :func:`elide_middle`."""
    head, sep, name = text.rpartition("/")
    tail = sep + name
    if not head or cell_len(text) <= width or cell_len(tail) > width - 5:
        return elide_middle(text, width)
    return _head(text, width - 1 - cell_len(tail)) + ELLIPSIS + tail

"""The page frame and its small pieces: one self-contained HTML file (styles, script and data
inline; nothing is fetched), escaped tables and the one rule for how a number is written.

Numbers: every 0–1 figure is written as a percentage with one decimal, its 95% CI and n,
``30.0 [10.0, 60.0], n=10`` (:func:`figure`, the text report's :func:`engine.results.text.pct`
plus n); the page's embedded JSON keeps the engine's own numbers. Untrusted text (names,
queries, passages, responses) goes through :func:`engine.text_safety.html_text` on the way
into markup; the embedded JSON is written so that no ``</script>`` or ``<!--`` can end its
element (:func:`json_script`).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

from engine.results.html.assets import REASONING_SCRIPT, SCRIPT, STYLE
from engine.results.html.items import pack
from engine.results.text import est_pct
from engine.stats import Estimate
from engine.text_safety import html_text


def figure(estimate: Estimate | Mapping[str, Any] | None) -> str:
    """``30.0 [10.0, 60.0], n=10`` for an :class:`~engine.stats.Estimate` (or the JSON of one,
    ``{"value", "lo", "hi", "n"}``, as the arena pages have theirs); ``–`` without a value.
    The page's one formatting rule, kept here so it can be swapped."""
    if estimate is None:
        return "–"
    if isinstance(estimate, Mapping):
        estimate = Estimate(estimate.get("value"), estimate.get("lo"), estimate.get("hi"),
                            estimate.get("n"))
    text = est_pct(estimate)
    n = estimate.n
    return text if estimate.value is None or n is None else f"{text}, n={n}"


def esc(text: object) -> str:
    return html_text("" if text is None else text)


def table(head: Sequence[str], rows: Iterable[Sequence[object]],
          numeric: Iterable[int] = (), css: str = "") -> str:
    """An escaped table; columns in ``numeric`` are right-aligned."""
    right = set(numeric)

    def cell(tag: str, i: int, value: object) -> str:
        cls = ' class="num"' if i in right else ""
        return f"<{tag}{cls}>{esc(value)}</{tag}>"

    out = [f'<div class="scroll"><table class="{css}"><thead><tr>'
           + "".join(cell("th", i, h) for i, h in enumerate(head)) + "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def definition_list(pairs: Iterable[tuple[str, object]]) -> str:
    return ('<dl class="header">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>"
                                             for k, v in pairs) + "</dl>")


def notes(lines: Iterable[str]) -> str:
    return "".join(f'<p class="note">{esc(line)}</p>' for line in lines)


def json_script(element_id: str, data: Any) -> str:
    """``<script type="application/json">`` holding ``data``; ``<``, ``>`` and ``&`` are
    written as JSON escapes, so nothing inside can close the element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def item_browser(items: dict | None) -> str:
    """The item browser's controls and its packed data (empty when ``items`` is None)."""
    if items is None:
        return ""
    shown, total = items["shown"], items["total"]
    if items["sample"]:
        s = items["sample"]
        scope = (f"{shown:,} items of {total:,}: every item of {s['queries']:,} of the run's "
                 f"{s['of']:,} queries, sampled with seed {s['seed']} (the numbers above use "
                 "every item)")
    else:
        scope = f"all {shown:,} items of the run"
    selects = "".join(
        f'<label>{label} <select id="f-{key}"><option value="">any</option></select></label>'
        for key, label in (("system", "system"), ("setting", "setting"),
                           ("category", "category"), ("language", "language")))
    return (
        '<section id="browser"><h2>Items</h2>'
        f'<p class="note">{esc(scope)}. Click a row or press Enter to open it; ↑/↓ (or j/k) '
        'move between rows; / searches.</p>'
        f'<div class="filters">{selects}'
        '<label>score <select id="f-score"><option value="">any</option>'
        '<option value="right">EM right</option><option value="wrong">EM wrong</option>'
        '<option value="none">no score</option></select></label>'
        '<label>text <input id="f-text" type="search" placeholder="query id, question or '
        'response"></label></div>'
        '<p class="note count"></p><p class="note loading">Unpacking the items…</p>'
        '<table><thead><tr><th>system</th><th>setting</th><th>query</th><th>language</th>'
        '<th>category</th><th class="num">EM</th><th>response</th></tr></thead><tbody>'
        '</tbody></table><button type="button" class="more" hidden>show more</button>'
        f'<script type="application/gzip+base64" id="item-data">{pack(items)}</script>'
        '</section>')


def tool_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("mirage-tui")
    except Exception:  # running from a checkout that is not installed
        return None


def page(title: str, subtitle: str, sections: Sequence[str], data: dict,
         items: dict | None = None) -> str:
    """The whole document: ``sections`` (already escaped HTML) in order, the item browser,
    ``data`` as ``<script id="report-data" type="application/json">``, the script."""
    made = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        'style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; img-src data:">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><main>"
        f"<h1>{esc(title)}</h1><p class=\"sub\">{esc(subtitle)}</p>"
        + "".join(sections) + item_browser(items)
        + f'<footer>Made by mirage-tui {esc(tool_version() or "(checkout)")} on {esc(made)}. '
        "One file: styles, script and data are inline; nothing is fetched. Percentages with "
        "95% CIs in brackets and n.</footer>"
        + json_script("report-data", data)
        + f"<script>{_script(items)}</script></main></body></html>")


def _script(items: dict | None) -> str:
    """The page's script: with each item's thinking folded under its response when any item
    holds some."""
    thinks = items is not None and any("rs" in i for i in items.get("items", ()))
    return REASONING_SCRIPT if thinks else SCRIPT

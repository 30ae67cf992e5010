"""The HTML pages in a real browser (issue 19): headless Chromium opens each page from a file
with the network blocked and records every request and error (tests/testkit/browser.py).
Zero requests but the file itself, zero console errors or exceptions, a screenshot; the item
browser unpacks, filters, opens items with the keyboard; hostile text runs nothing; dark mode
and print change the page's colours and hide the controls.

Skipped, loudly, only where no Chromium binary exists (``scripts/setup.sh`` installs Debian's
``chromium`` where it can)."""

from __future__ import annotations

import warnings

import pytest

from engine.arena.trust.calibrate import latest_calibration
from engine.arena.trust.page import calibration_page
from engine.arena.ratings.duel import compare
from engine.arena.ratings.page import leaderboard_page
from engine.arena.ratings.page import run_page_with_arenas as run_page
from engine.runs.lookup import load_run
from engine.results.html import comparison_page, write_page
from engine.results.pairing import side_runs
from engine.store import Store
from testkit.browser import chromium_binary, visit
from testkit.html_runs import calibrated, hostile_run
from testkit.scripted_runs import build_workspace

if chromium_binary() is None:
    REASON = ("NO CHROMIUM: the HTML pages were not checked in a browser; install it "
              "(apt-get install chromium, or scripts/setup.sh as root) or set MIRAGE_CHROMIUM")
    warnings.warn(REASON)
    pytest.skip(REASON, allow_module_level=True)

PNG = b"\x89PNG\r\n\x1a\n"
READY = "document.body.hasAttribute('data-items-ready')"
ALPHA = ("alpha:fake-a/mirage@1", "alpha:fake-b/mirage@1")
HOSTILE = ("hostile:evil-a/mirage@1", "hostile:evil-b/mirage@1")


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    store = Store(build_workspace(folder / "w.db")["path"])
    hostile = Store(folder / "h.db")
    hostile_run(hostile)
    calibrated(hostile, folder)
    out = {
        "run": run_page(store, load_run(store, "alpha"), n_boot=200),
        "compare": comparison_page(compare(store, *ALPHA, side_runs(store, *ALPHA),
                                           n_boot=200)),
        "leaderboard": leaderboard_page(store, load_run(store, "alpha"), n_boot=50),
        "hostile": run_page(hostile, load_run(hostile, "hostile"), n_boot=50),
        "hostile-compare": comparison_page(compare(hostile, *HOSTILE,
                                                   side_runs(hostile, *HOSTILE), n_boot=50)),
        "calibration": calibration_page(latest_calibration(hostile)),
    }
    return {name: write_page(page, folder / f"{name}.html") for name, page in out.items()}


def _clean(v) -> None:
    assert v.requests == [v.url], f"requests beyond the file: {v.external_requests}"
    assert v.errors == [], v.errors


def test_run_page_offline_item_browser_and_keyboard(pages, tmp_path):
    nv = "Array.from(document.querySelectorAll('#f-category option')).find(o => o.textContent.startsWith('noise')).value"
    v = visit(pages["run"], actions=[
        # keyboard: focus the first row, Enter opens it, ArrowDown moves to the next row
        "document.querySelector('#browser tr.item').focus()",
        "document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}))",
        "window.__opened = document.querySelectorAll('#browser tr.open').length",
        "document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', bubbles: true}))",
        "window.__next = document.activeElement === document.querySelectorAll('#browser tr.item')[1]",
        "window.__detail = document.querySelector('#browser tr.open').textContent",
        f"const s = document.querySelector('#f-category'); s.value = {nv}; s.dispatchEvent(new Event('change'))",
        # / jumps to the text filter
        "document.body.dispatchEvent(new KeyboardEvent('keydown', {key: '/', bubbles: true}))",
        "window.__search = document.activeElement.id",
    ], probes={"search": "window.__search","ready": "document.body.getAttribute('data-items-ready')",
               "opened": "window.__opened", "next": "window.__next",
               "detail": "window.__detail",
               "rows": "document.querySelectorAll('#browser tr.item').length",
               "count": "document.querySelector('#browser .count').textContent",
               "svgs": "document.querySelectorAll('svg').length"})
    _clean(v)
    assert v.screenshot.startswith(PNG) and len(v.screenshot) > 20_000
    e = v.evaluated
    assert e["ready"] == "36" and e["opened"] == 1 and e["next"] is True
    assert e["search"] == "f-text"
    for part in ("Gold answers", "Pool (oracle marked", "oracle", "Prompt sent (exact)",
                 "Response", "Scores (%)"):
        assert part in e["detail"], part
    # alpha's noise-vulnerable items: fake-a 2 queries, fake-b 1, each with 3 settings
    assert e["rows"] == 9 and e["count"].startswith("9 of 36 items")
    assert e["svgs"] == 3      # adaptability bars, the arena's forest plot and heatmap


@pytest.mark.parametrize("name, charts", [("compare", 1), ("leaderboard", 2), ("calibration", 2)])
def test_compare_leaderboard_and_calibration_pages_offline(pages, name, charts):
    v = visit(pages[name], ready="true", probes={"svgs": "document.querySelectorAll('svg').length"})
    _clean(v)
    assert v.screenshot.startswith(PNG)
    assert v.evaluated["svgs"] == charts


@pytest.mark.parametrize("name", ["hostile", "hostile-compare"])
def test_hostile_text_runs_nothing(pages, name):
    hostile = name == "hostile"
    v = visit(pages[name], ready=READY if hostile else "true", actions=[
        "document.querySelectorAll('#browser tr.item').forEach(r => r.click())",
        "document.querySelectorAll('details').forEach(d => { d.open = true; })",
    ], probes={"pwned": "String(window.__pwned)", "images": "document.images.length",
               "scripts": "document.scripts.length",
               "shown": "document.body.textContent.includes('<img src=x onerror=')"})
    _clean(v)
    assert v.evaluated == {"pwned": "undefined", "images": 0, "scripts": 3 if hostile else 2,
                           "shown": True}


def test_dark_mode_and_print(pages):
    probes = {"bg": "getComputedStyle(document.body).backgroundColor",
              "filters": "getComputedStyle(document.querySelector('#browser .filters')).display"}
    light = visit(pages["run"], probes=probes, screenshot=False)
    dark = visit(pages["run"], probes=probes, dark=True, screenshot=False)
    printed = visit(pages["run"], probes=probes, dark=True, media="print", screenshot=False)
    for v in (light, dark, printed):
        _clean(v)
    assert light.evaluated == {"bg": "rgb(255, 255, 255)", "filters": "flex"}
    assert dark.evaluated == {"bg": "rgb(21, 23, 27)", "filters": "flex"}
    assert printed.evaluated == {"bg": "rgb(255, 255, 255)", "filters": "none"}

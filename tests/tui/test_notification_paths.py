"""Issue 27, "nothing cut": a notification with a long path (an export's file) folded the path
mid-word in the toast. Now a word wider than the toast is elided in the middle, its file name
kept, and the message wraps at spaces; what the app was told (``notes``) stays whole. A file
name too long to sit beside its folder goes on lines of its own, whole (issue 36)."""

from __future__ import annotations

import pytest
from textual.widgets._toast import Toast

from engine.store import Store
from engine.text_fit import ELLIPSIS, fit_long_words
from testkit.tui import RecordingApp, settle, wait_until

PATH = "/tmp/" + "a-rather-deep-folder/" * 6 + "quick-comparison-report.html"
MESSAGE = f"Wrote the HTML report of quick-comparison (30 items) to {PATH} (12 KB)"


def test_fit_long_words_elides_only_the_long_words():
    fitted = fit_long_words(MESSAGE, 40)
    words, original = fitted.split(), MESSAGE.split()
    assert len(words) == len(original)
    for shown, whole in zip(words, original):
        assert shown == whole if len(whole) <= 40 else (
            len(shown) == 40 and whole.startswith(shown.split(ELLIPSIS)[0])
            and whole.endswith(shown.split(ELLIPSIS)[1]))
    assert next(w for w in words if ELLIPSIS in w).endswith("…/quick-comparison-report.html")
    # no room for the name beside the folder: the folder elided on its line, the name whole
    # on lines of its own, broken after a '-' (issue 36: never cut mid-name)
    assert fit_long_words(PATH, 20) == \
        "/tmp/a-ra…ep-folder/\nquick-comparison-\nreport.html"
    assert fit_long_words("[b]" + PATH + "[/b]", 20, keep=lambda w: "[" in w) == \
        "[b]" + PATH + "[/b]"


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_a_long_path_in_a_toast_is_elided_not_folded(db_path, size):
    Store(db_path).close()
    app = RecordingApp(db_path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        app.notify(MESSAGE, title="Export", markup=False)
        await wait_until(pilot, lambda: app.screen.query(Toast), 10, "the toast")
        toast = app.screen.query(Toast).last()
        lines = ["".join(seg.text for seg in strip).strip(" ▌")
                 for strip in toast.render_lines(toast.region.reset_offset)]
        shown = " ".join(line for line in lines if line)
        assert app.notes[-1][0] == MESSAGE                     # told whole
        words = fit_long_words(MESSAGE, max(12, min(60, size[0] // 2) - 4)).split()
        assert shown.split()[-len(words):] == words, lines     # every word whole on a line
        assert "…/quick-comparison-report.html" in shown, shown       # the file name whole
        assert PATH not in shown                               # (too wide for any toast here)

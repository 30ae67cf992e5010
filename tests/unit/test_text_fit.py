"""engine/text_fit.py: ids elided in the middle (their tail kept), prose at a word, tables
and lines within a width with every number whole (issue 27, "nothing cut")."""

from __future__ import annotations

from engine.text_fit import cell_len, elide_middle, elide_words, fit_table, wrap_lines


def test_elide_middle_keeps_the_distinguishing_tail():
    ids = [f"de/demo-de-{i:02d}" for i in range(1, 4)]
    shown = [elide_middle(i, 10) for i in ids]
    assert shown == ["de/d…de-01", "de/d…de-02", "de/d…de-03"]
    assert len(set(shown)) == 3 and all(cell_len(s) == 10 for s in shown)
    assert elide_middle("short", 10) == "short"
    wide = elide_middle("漢字漢字漢字", 7)     # two cells a character: never past the width
    assert wide == "漢…字" and cell_len(wide) <= 7


def test_elide_words_ends_at_a_whole_word():
    # whole words from the head and from the tail, which tells questions apart
    assert elide_words("In welcher Stadt wurde Goethe geboren?", 20) == "In welcher…geboren?"
    assert elide_words("¿De qué isla procede el nombre latino del cobre?", 14) == "¿De qué…cobre?"
    assert elide_words("Welcher Chemiker isolierte 1819 erstmals Koffein?", 6) == "Welch…"
    assert elide_words("In welcher Stadt", 16) == "In welcher Stadt"
    # a first word longer than the width: elided in the middle, still marked
    assert elide_words("Donaudampfschifffahrt ist lang", 10).count("…") >= 1
    assert cell_len(elide_words("Donaudampfschifffahrt ist lang", 10)) <= 10


ROWS = [["Metric", "base", "oracle", "retrieved@5:minilm-l6-v2"]] + [
    ["em_loose", "12.3 [9.1, 15.8] n=30", "45.3 [39.1, 55.8] n=30", "2.0 [0.1, 9.8] n=30"]] * 2


def test_fit_table_as_before_when_it_fits():
    lines = fit_table(ROWS, {1})
    assert lines[1] == "em_loose  12.3 [9.1, 15.8] n=30  45.3 [39.1, 55.8] n=30  " \
                       "2.0 [0.1, 9.8] n=30"


def test_fit_table_wraps_cells_then_panels_keeping_numbers_whole():
    for width in (80, 60, 40):
        lines = fit_table(ROWS, {1}, width)
        text = "\n".join(lines)
        assert max(cell_len(line) for line in lines) <= width, (width, text)
        for interval in ("[9.1, 15.8]", "[39.1, 55.8]", "[0.1, 9.8]"):
            assert text.count(interval) == 2, (width, text)   # never split, never lost
        assert "retrieved@5:minilm-l6-v2" in text
    panels = fit_table(ROWS, {1}, 40)
    assert sum(line.startswith("Metric") for line in panels) == 3   # the first column repeats


def test_wrap_lines_indents_and_elides_only_an_overlong_word():
    text = "  " + "word " * 30 + "\nshort\n" + "x" * 120
    out = wrap_lines(text, 50).split("\n")
    assert max(cell_len(line) for line in out) <= 50
    assert out[0].startswith("  word") and out[1].startswith("    word")
    assert "short" in out and "…" in out[-1] and out[-1].endswith("xxx")
    assert wrap_lines(text, None) == text


def test_panels_repeat_the_key_columns():
    rows = [["metric", "setting", "Δ [95% CI]", "p", "verdict"]] + [
        ["em_loose", s, "+33.3 pp [+0.0, +66.7]", "0.500", "no clear difference"]
        for s in ("base", "oracle")]
    lines = fit_table(rows, width=40, keys=2)
    assert max(cell_len(line) for line in lines) <= 40
    heads = [line for line in lines if line.startswith("metric")]
    assert len(heads) >= 2 and all(h.split()[1] == "setting" for h in heads)
    assert sum("em_loose  oracle" in line for line in lines) == len(heads)

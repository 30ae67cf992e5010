"""Every count a user can type has one range (engine/counts.py): the text typed is a whole
number in decimal or refused in one line with the range (and the number meant, when it was
typed another way); the docs' table lists every count option of the command line with its
range; a resampling step refuses, before it draws, what needs more memory than it may take."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.counts import (RESAMPLES, SEED, TOURNAMENTS, CountError, ResampleMemoryError,
                           check_count, parse_count)
from testkit.paths import ROOT


@pytest.mark.parametrize("text, words", [
    ("0", "0 is out of range: a whole number from 1 to 1,000,000 (bootstrap resamples)"),
    ("-1", "-1 is out of range"),
    ("1000000000", "1000000000 is out of range"),
    ("99999999999999999999999", "is out of range"),
    ("1e9", "'1e9' is not a whole number from 1 to 1,000,000 (bootstrap resamples)"),
    ("1e3", "'1e3' is not a whole number from 1 to 1,000,000 (bootstrap resamples); did you "
            "mean 1000?"),
    ("0x10", "'0x10' is not a whole number from 1 to 1,000,000 (bootstrap resamples); did "
             "you mean 16?"),
    ("2.0", "did you mean 2?"), ("1.5", "'1.5' is not a whole number"),
    ("inf", "'inf' is not"), ("nan", "'nan' is not"), ("-inf", "'-inf' is not"),
    ("", "'' is not"), ("ten", "'ten' is not"), ("١٠", "'١٠' is not"),
    ("1_000", "did you mean 1000?"),
    ("²", "'²' is not"),
])
def test_a_count_typed_out_of_range_or_not_in_decimal_is_one_line(text, words):
    with pytest.raises(CountError) as info:
        parse_count(text, RESAMPLES)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_count_in_range_is_read_as_typed():
    assert parse_count(" 200 ", TOURNAMENTS) == 200
    assert parse_count("+7", RESAMPLES) == 7
    assert parse_count("0", SEED) == 0 and parse_count(str(2**32 - 1), SEED) == 2**32 - 1
    with pytest.raises(CountError, match="out of range"):
        parse_count(str(2**32), SEED)
    with pytest.raises(CountError, match="expected a whole number from 1 to 100,000"):
        check_count(True, TOURNAMENTS)
    with pytest.raises(CountError, match="got 2.0"):
        check_count(2.0, TOURNAMENTS)


def _doc_rows() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "cli-conventions.md").read_text(encoding="utf-8")
    section = text.split("## Every count has a range", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        match = re.match(r"\| `(--[a-z-]+)` \| (.*) \| (.*) \|$", line)
        if match:
            rows.setdefault(match[1], []).append(f"{match[2]} | {match[3]}")
    return rows


def test_every_number_option_has_a_range_and_a_row_in_the_docs():
    """No option of the command line is read with a bare ``int`` or ``float``; each count
    option's range is in docs/cli-conventions.md's table, with the command named."""
    from mirage_tui.cli import build_parser
    from mirage_tui.cli.examples import walk

    rows = _doc_rows()
    seen = 0
    for path, parser in walk(build_parser()):
        for action in parser._actions:
            assert action.type not in (int, float), (path, action.option_strings)
            count = getattr(action.type, "count", None)
            if count is None:
                continue
            seen += 1
            option = action.option_strings[-1]
            spelled = f"{count.low:,} – {count.high:,}"
            fits = [r for r in rows.get(option, []) if spelled in r and
                    (f"`{path}`" in r or r.startswith("every command"))]
            assert fits, (path, option, spelled, rows.get(option))
    assert seen >= 30


def test_a_bootstrap_refuses_what_needs_more_memory_than_it_may_take(monkeypatch):
    """The estimate comes first: nothing is drawn; the line names the size, the formula and
    the most resamples that fit."""
    from engine import paired_stats, stats
    from engine.arena.ratings import tournaments

    monkeypatch.setenv("MIRAGE_RESAMPLE_MEMORY_MB", "1")
    drawn, real = [], stats.resample_indices
    monkeypatch.setattr(stats, "resample_indices", lambda *a, **k: drawn.append(a) or iter(()))
    with pytest.raises(ResampleMemoryError) as info:
        stats.bootstrap_ci([0.0, 1.0, 1.0], n_boot=1_000_000)
    assert str(info.value) == ("1,000,000 resamples needs ~7.6 MiB (resamples × statistics × "
                               "8 bytes); at most 131,072 here (1.0 MiB to give: half the "
                               "available memory, or $MIRAGE_RESAMPLE_MEMORY_MB)")
    assert info.value.line("--n-boot").startswith("--n-boot 1000000 needs ~7.6 MiB")
    assert drawn == []
    with pytest.raises(ResampleMemoryError, match="resamples × columns × 8 bytes"):
        paired_stats.bootstrap_means(np.zeros((10, 2)), n_boot=1_000_000)
    with pytest.raises(ResampleMemoryError, match=r"tournaments × 2 × queries × 8 bytes"):
        tournaments.resample_counts(100, n_boot=100_000)
    monkeypatch.setattr(stats, "resample_indices", real)
    assert stats.bootstrap_ci([0.0, 1.0, 1.0], n_boot=1000).n == 3   # what fits still runs

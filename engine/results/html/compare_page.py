"""A paired comparison's page: what :func:`engine.arena.ratings.duel.compare` computes (the numbers
``mirage-tui compare --json`` prints, embedded as they are): the verdict, Δ = B − A with its
95% CI per metric and setting as a chart and a table with p and Holm's p, the (b, o, m)
pattern transitions, and the items that flipped, each with both responses."""

from __future__ import annotations

from engine.results.html.page import definition_list, esc, notes, page, table
from engine.results.html.svg import Interval, interval_chart
from engine.results.paired import PairedComparison
from engine.results.paired_words import holm_line, p_text, verdict_line
from engine.results.paired_text import pattern_name
from engine.results.text import pct, short_setting

FLIPS_SHOWN = 200
"""Flipped items written out per direction; the counts always cover all of them."""


def delta_chart(c: PairedComparison) -> str:
    rows = [Interval(f"{r.metric} · {short_setting(r.setting)}", r.delta, r.lo, r.hi, r.n)
            for r in c.rows]
    classes = ["better" if r.better > 0 else "worse" if r.better < 0 else "" for r in c.rows]
    return interval_chart(rows, title="B − A with 95% paired-bootstrap CI", scale=100.0,
                          x_title="Δ = B − A (percentage points)", reference=0.0,
                          row_classes=classes)


def _rows_table(c: PairedComparison) -> str:
    rows = [[r.metric, short_setting(r.setting), r.n, pct(r.a), pct(r.b),
             pct(r.delta, r.lo, r.hi), p_text(r.p), p_text(r.p_holm), r.verdict]
            for r in c.rows]
    return table(["metric", "setting", "n", "A %", "B %", "Δ points [95% CI]", "p", "Holm p",
                  "verdict"], rows, numeric=range(2, 8))


def _transitions(c: PairedComparison) -> str:
    out = []
    for setting, table_ in c.transitions.items():
        rows = [[pattern_name(a), pattern_name(b), n] for a, per_b in table_.items()
                for b, n in per_b.items() if a != b and n]
        if rows:
            out.append(f"<h3>Pattern changes with {esc(short_setting(setting))} as mixed "
                       "(queries)</h3>" + table(["A", "B", "queries"], rows, numeric=(2,)))
    return "".join(out)


def _flips(c: PairedComparison) -> str:
    if not c.flips:
        return f'<h2>Item flips</h2><p class="note">No item flipped on {esc(c.flip_metric)}.</p>'
    groups = "".join(
        f"<h3>by {by}</h3>" + table([by, "B right, A wrong", "A right, B wrong"],
                                    [[k, v["better"], v["worse"]] for k, v in
                                     c.flip_groups(by).items()], numeric=(1, 2))
        for by in ("setting", "language"))
    out = [f"<h2>Item flips on {esc(c.flip_metric)}</h2>", groups]
    for way, title in (("better", "B right, A wrong"), ("worse", "A right, B wrong")):
        flips = [f for f in c.flips if f.way == way]
        out.append(f"<h3>{title}: {len(flips)} items"
                   + (f" (first {FLIPS_SHOWN} shown)" if len(flips) > FLIPS_SHOWN else "")
                   + "</h3>")
        for f in flips[:FLIPS_SHOWN]:
            out.append(f"<details><summary>{esc(f.query_id)} · {esc(short_setting(f.setting))}"
                       f" · {esc(f.language or '?')} — {esc(f.query or '')}</summary>"
                       '<div class="detail"><h3>A</h3>'
                       f"<pre>{esc(f.a_response or '(none)')}</pre><h3>B</h3>"
                       f"<pre>{esc(f.b_response or '(none)')}</pre></div></details>")
    return "".join(out)


def comparison_sections(c: PairedComparison) -> list[str]:
    head = definition_list([
        ("A", c.a.label), ("B", c.b.label), ("dataset", c.a.dataset),
        ("shared", f"{c.shared_items} items over {c.shared_queries} queries "
                   f"(only A {c.only_a}, only B {c.only_b})"),
        ("resampling", f"{c.n_boot} paired bootstrap resamples over queries, seed {c.seed}")])
    arena = ""
    if c.arena:
        arena = "<h2>Arena</h2>" + table(
            ["setting", "P(A stronger)", "Elo B − A [95% CI]", "tournaments"],
            [[short_setting(d["setting"]), f"{100 * d['p_a_stronger']:.1f}%",
              f"{d['elo_delta']:.0f} [{d['elo_lo']:.0f}, {d['elo_hi']:.0f}]",
              d["tournaments"]] for d in c.arena], numeric=(1, 2, 3))
    warning = (f'<p class="worse"><strong>Warning: {esc(c.warning)}.</strong></p>'
               if c.warning else "")
    return ["<h2>Comparison</h2>" + head + warning + notes([verdict_line(c), holm_line(c)]),
            "<h2>Differences, paired on the shared items</h2>" + notes([
                "Δ = B − A on the items both answered (not each run on its own items, as "
                "each run's report counts them)"]) + delta_chart(c) + _rows_table(c)
            + notes(["Green: B significantly better (Holm p < 0.05, CI excludes 0); red: B "
                     "significantly worse; NV, CI, CM are better lower."]),
            _transitions(c), arena, _flips(c)]


def comparison_page(c: PairedComparison) -> str:
    """The comparison's page as one HTML string (:func:`engine.arena.ratings.duel.compare` makes
    ``c``)."""
    return page(f"{c.a.label} vs {c.b.label}", verdict_line(c), comparison_sections(c),
                {"kind": "comparison", "comparison": c.as_json()})

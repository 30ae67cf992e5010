"""A paired comparison (:mod:`engine.results.paired`) in words: the power line, the arena
lines, the text of ``mirage-tui compare`` and its per-item CSV. Computing stays in
``paired``; this module only formats what it computed."""

from __future__ import annotations

from pathlib import Path

from engine.output_files import write_csv
from engine.results.paired import PairedComparison
from engine.results.paired_words import holm_line, p_text, verdict_line
from engine.units import fmt_delta, fmt_delta_interval, fmt_points, fmt_value


def power_line(c: PairedComparison) -> str:
    """How many items the headline metric needs for 80% power."""
    r = c.headline()
    if r is None:
        return ""
    text = (f"power: {r.n_for_power:,} items (queries per setting) would give 80% power to "
            f"detect the observed {fmt_delta(r.delta, r.metric)} on {r.metric} ({r.setting}); "
            f"this comparison has {r.n}" if r.n_for_power else
            f"power: no difference observed on {r.metric} ({r.setting}), nothing to size")
    if c.delta is not None and r.n_for_delta:
        text += f"; {r.n_for_delta:,} to detect {fmt_points(c.delta)}"
    return text + "."


def arena_lines(c: PairedComparison) -> list[str]:
    """One line per setting the run's arena judged both in."""
    return [f"arena ({a['setting']}): P(A stronger than B) = {a['p_a_stronger']:.2f} over "
            f"{a['tournaments']} tournaments of {a['queries']} queries; Elo B − A "
            f"{a['elo_delta']:+.0f} [{a['elo_lo']:+.0f}, {a['elo_hi']:+.0f}]"
            for a in c.arena]


def pattern_name(key: str) -> str:
    """``b1o1m0`` → ``110``."""
    return key[1] + key[3] + key[5]


def format_comparison(c, flips: int = 5, width: int | None = None) -> str:
    """The comparison as text: header, table, verdict, power, item diff, transitions; with
    ``width``, no line wider (:mod:`engine.text_fit`)."""
    from engine.results.text import table
    from engine.text_fit import elide_words, wrap_lines

    out = [f"A = {c.a.label}  ({c.a.dataset})", f"B = {c.b.label}  ({c.b.dataset})",
           f"{c.shared_items} shared items ({c.shared_queries} queries); only A: {c.only_a}, "
           f"only B: {c.only_b}. Δ = B − A paired on the shared items (not each run on its own "
           "items), in percentage points (pp), 95% paired bootstrap "
           "CI over queries "
           f"({c.n_boot} resamples, seed {c.seed}); p: McNemar exact (0/1 scores) or sign-flip "
           "permutation; Holm across the rows.", ""]
    if c.warning:
        out[-1:] = [f"Warning: {c.warning}.", ""]
    if c.cut_warning:
        out[-1:] = [f"Warning: {c.cut_warning}.", ""]
    rows = [["metric", "setting", "n", "A", "B", "Δ [95% CI]", "p", "Holm p", "verdict"]]
    for r in c.rows:
        rows.append([r.metric, r.setting, str(r.n), fmt_value(r.a, r.metric),
                     fmt_value(r.b, r.metric), fmt_delta_interval(r.delta, r.lo, r.hi, r.metric),
                     p_text(r.p),
                     p_text(r.p_holm), r.verdict])
    out += table(rows, right={2, 3, 4}, width=width, keys=2)
    out += ["", verdict_line(c), holm_line(c), power_line(c), *arena_lines(c), ""]
    better = [f for f in c.flips if f.way == "better"]
    worse = [f for f in c.flips if f.way == "worse"]
    out.append(f"Item diff on {c.flip_metric}: {len(better)} wrong → right, {len(worse)} "
               "right → wrong")
    for by in ("setting", "language", "source"):
        groups = c.flip_groups(by)
        if groups:
            out.append(f"  by {by}: " + ", ".join(f"{k} +{v['better']}/−{v['worse']}"
                                                 for k, v in groups.items()))
    for title, group in (("wrong → right", better), ("right → wrong", worse)):
        for f in group[:flips]:
            question = elide_words(f.query or "–", 90)
            out.append(f"  {title} [{f.setting}] {f.query_id}: {question}")
            out.append(f"      A: {elide_words(f.a_response or '–', 90)}")
            out.append(f"      B: {elide_words(f.b_response or '–', 90)}")
    for setting, matrix in c.transitions.items():
        moves = sorted(((n, a, b) for a, row in matrix.items() for b, n in row.items()
                        if n and a != b), reverse=True)
        same = sum(matrix[k][k] for k in matrix)
        out.append("")
        out.append(f"(b, o, m) patterns with {setting}: {same} queries unchanged; moves: "
                   + (", ".join(f"{pattern_name(a)} → {pattern_name(b)} ×{n}"
                                for n, a, b in moves[:10]) or "none"))
    return wrap_lines("\n".join(out), width) + "\n"


def write_items_csv(c: PairedComparison, path: Path) -> Path:
    """One row per shared item: setting, query, language, source, then a_/b_ of each score."""
    rows = c.items
    fields = list(rows[0]) if rows else ["setting", "query_id"]
    return write_csv(path, fields, rows)

"""What a paired comparison's verdict line means, in words: the text behind ``?`` on the Compare
screen. It explains the headline row (which metric and setting, and why the mixed setting), the
number of tests and Holm's adjustment, and what "better" needs, for this comparison's numbers
(:class:`engine.results.paired.PairedComparison`).

References: Holm, "A simple sequentially rejective multiple test procedure", Scandinavian
Journal of Statistics 6(2), 1979 (the adjustment, :mod:`engine.paired_stats`); the
settings are MIRAGE's (Park et al., "MIRAGE: A Metric-Intensive Benchmark for RAG Evaluation";
METRICS.md §1: base without context, oracle with the gold chunk, mixed with the query's pool).
"""

from __future__ import annotations

from engine.units import fmt_delta, fmt_delta_interval


def verdict_explained(c) -> list[str]:
    """Lines that explain ``verdict_line(c)`` and the table under it."""
    r = c.headline()
    if r is None:
        return [f"Nothing to explain: the two sides share {c.shared_items} items and no "
                "metric was scored on both."]
    metrics = sorted({row.metric for row in c.rows})
    settings = list(dict.fromkeys(row.setting for row in c.rows))
    if r.setting == "mixed":
        why = ("mixed is the headline: it gives the model the query's pool (the gold chunk "
               "among distractors), the setting closest to real retrieval-augmented use; base "
               "(no context) and oracle (the gold chunk alone) bound it.")
    else:
        why = (f"{r.setting} is the headline because this comparison has no mixed row for "
               f"{r.metric}; with one, mixed (the query's pool: the gold chunk among "
               "distractors, closest to real use) would be.")
    return [
        f"The verdict line is one row of the table: {r.metric} in {r.setting}, the answer "
        f"match the flips are counted on. Δ = B − A = {fmt_delta_interval(r.delta, r.lo, r.hi, r.metric)}"
        f" (95% CI from a paired bootstrap over the {r.n} shared queries).",
        why,
        f"{len(c.rows)} tests: one p-value per row of the table ({len(metrics)} metrics "
        f"and shares over the settings {', '.join(settings)}). "
        f"With that many, some p < 0.05 come by chance; Holm's adjustment raises each p so "
        f"that the chance of any false 'better' or 'worse' among all {len(c.rows)} stays "
        "under 5%.",
        "\"better\" or \"worse\" needs Holm p < 0.05 and a CI that excludes 0; anything else "
        "is \"no clear difference\", and the power line says how many items would settle it.",
    ]


def holm_line(c) -> str:
    """One line on what "no clear difference" and Holm p mean, for this comparison's number
    of tests (Holm 1979; :func:`engine.paired_stats.holm`), shown under every verdict line."""
    n = len(c.rows)
    if not n:
        return ""
    # one line at 80 columns (the Compare screen's; ``?`` there says more)
    return (f"no clear difference = Holm p ≥ 0.05 (p corrected for {n} "
            f"test{'s' if n != 1 else ''}) or 0 in the CI")


def points(x: float | None) -> str:
    """A difference in percentage points, ``+12.5 pp`` (:mod:`engine.units`)."""
    return fmt_delta(x)


def p_text(p: float | None) -> str:
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _eq(p: float | None) -> str:
    return f"= {p_text(p)}" if p is None or p >= 0.001 else "< 0.001"


def verdict_line(c) -> str:
    """The headline in words, e.g. "B is better on em_loose (mixed): +6.2 pp [+2.1,
    +10.4], p = 0.001 (Holm 0.004, 4 tests), 312 shared items"; "better" needs Holm p < 0.05
    and a CI that excludes 0."""
    r = c.headline()
    if r is None:
        return f"Nothing to compare on the {c.shared_items} shared items."
    where = f"{r.metric} ({r.setting})"
    ci = fmt_delta_interval(r.delta, r.lo, r.hi, r.metric)
    p = f"p {_eq(r.p)} (Holm {p_text(r.p_holm)}, {len(c.rows)} tests)"
    tail = f"{ci}, {p}, {c.shared_items} shared items"
    if r.better > 0:
        return f"B is better on {where}: {tail}"
    if r.better < 0:
        return f"B is worse on {where}: {tail}"
    return f"No clear difference on {where}: {tail}"

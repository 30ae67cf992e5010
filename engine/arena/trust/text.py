"""A stored calibration as text: the figures with their CI and n beside the published anchors
(the CLI prints these lines; the Calibration screen shows them). The one line that heads a
rating table is :func:`engine.arena.trust.default_judge.judge_trust`'s."""

from __future__ import annotations

from engine.arena.trust.calibrate import ANCHOR_SOURCE, StoredCalibration
from engine.stats import Estimate

ROWS = (
    # (figure, label, as a percentage, the anchor's name)
    ("sign_accuracy", "sign accuracy (human non-ties)", True, "RAGChecker GPT-4 76%"),
    ("agreement", "3-way agreement", True, None),
    ("kappa", "Cohen's kappa (3-way)", False, None),
    ("weighted_kappa", "weighted kappa (5-point, linear)", False, None),
    ("pearson", "Pearson vs mean human label", False, "RAGChecker GPT-4 0.62"),
    ("spearman", "Spearman vs mean human label", False, "RAGChecker GPT-4 0.61"),
    ("flip_rate", "position flip rate (both orders)", True, None),
    ("first_position_wins", "first-position win share", True, None),
    ("human_sign_agreement", "human-human sign agreement", True, "published 88.6%"),
    ("human_kappa", "human-human kappa (3-way)", False, None),
    ("human_pearson", "human-human Pearson", False, "published 0.70"),
    ("human_spearman", "human-human Spearman", False, "published 0.69"),
)


def _figure(e: Estimate, pct: bool) -> str:
    return e.format_pct() if pct else e.format_num(2)


def calibration_lines(cal: StoredCalibration) -> list[str]:
    """The calibration's header, every figure beside its anchor, and the per-domain and
    per-aspect sign accuracy and Pearson."""
    counts = cal.figures.get("counts", {})
    orders = cal.config.get("orders", "seeded")
    lines = [f"calibration #{cal.id}: judge {cal.judge} · template {cal.template} · labels "
             f"{cal.labels} · aspect {cal.aspect} · {orders} order(s)",
             f"pairs {counts.get('pairs', 0)} · verdicts asked {counts.get('orders', 0)} · "
             f"unparsed {counts.get('unparsed', 0)} · failed {counts.get('failed', 0)} · "
             f"no verdict {counts.get('no_verdict', 0)} (never scored)", ""]
    width = max(len(label) for _, label, _, _ in ROWS)
    for name, label, pct, anchor in ROWS:
        text = f"  {label:<{width}}  {_figure(cal.estimate(name), pct)}"
        lines.append(text + (f"   ({anchor})" if anchor else ""))
    lines.append(f"  anchors: {ANCHOR_SOURCE}")
    for key, title in (("by_domain", "by domain"), ("by_aspect", "by aspect")):
        groups = cal.figures.get(key, {})
        if not groups:
            continue
        lines += ["", f"{title}: sign accuracy · Pearson · human-human sign agreement"]
        gwidth = max(len(g) for g in groups)
        for group in groups:
            lines.append(f"  {group:<{gwidth}}  "
                         f"{_figure(cal.estimate('sign_accuracy', group, key), True)} · "
                         f"{_figure(cal.estimate('pearson', group, key), False)} · "
                         f"{_figure(cal.estimate('human_sign_agreement', group, key), True)}")
    return lines

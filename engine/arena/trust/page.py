"""A judge calibration's page: the stored figures (what ``mirage-tui judge calibration --json``
prints, embedded as they are; :class:`engine.arena.trust.calibrate.StoredCalibration`) beside their
published anchors (:data:`engine.arena.trust.text.ROWS`), as two CI charts (shares
in %, correlations and kappas on −1…1), the table, the confusion matrix of the judge's against
the people's verdicts, and the figures per domain and per aspect."""

from __future__ import annotations

from engine.arena.trust.calibrate import ANCHOR_SOURCE, StoredCalibration
from engine.arena.trust.text import ROWS
from engine.results.html.page import definition_list, esc, figure, page, table
from engine.results.html.svg import Interval, interval_chart


def _num(e: dict) -> str:
    if e.get("value") is None:
        return "–"
    ci = f" [{e['lo']:.2f}, {e['hi']:.2f}]" if e.get("lo") is not None else ""
    return f"{e['value']:.2f}{ci}, n={e.get('n', 0)}"


def _shown(e: dict, pct: bool) -> str:
    return figure(e) if pct else _num(e)


def calibration_sections(cal: StoredCalibration) -> list[str]:
    overall = cal.figures.get("overall", {})
    counts = cal.figures.get("counts", {})
    charts = []
    for pct, title, axis in ((True, "Shares with 95% CI", "share (%)"),
                             (False, "Agreement with 95% CI", "coefficient (−1 to 1)")):
        rows = [Interval(label, (e := overall.get(name) or {}).get("value"), e.get("lo"),
                         e.get("hi"), e.get("n")) for name, label, p, _ in ROWS if p == pct]
        charts.append(interval_chart(rows, title=title, x_title=axis,
                                     scale=100.0 if pct else 1.0, unit="%" if pct else ""))
    rows = [[label, _shown(overall.get(name) or {}, pct), anchor or ""]
            for name, label, pct, anchor in ROWS]
    confusion = cal.figures.get("confusion") or {}
    classes = sorted({k for row in confusion.values() for k in row} | set(confusion))
    out = ["<h2>Calibration</h2>" + definition_list([
        ("calibration", f"#{cal.id}, {cal.created_at}"), ("judge", f"{cal.judge} "
                                                                   f"({cal.judge_key[:16]})"),
        ("template", cal.template), ("labels", cal.labels), ("aspect", cal.aspect),
        ("orders", cal.config.get("orders", "seeded")),
        ("counts", ", ".join(f"{k} {v}" for k, v in counts.items()))]),
        "<h2>Figures</h2>" + "".join(charts)
        + table(["figure", "value (% or coefficient) [95% CI], n", "anchor"], rows,
                numeric=(1,))
        + f'<p class="note">anchors: {esc(ANCHOR_SOURCE)}</p>']
    if confusion:
        out.append("<h3>Confusion: people (rows) against the judge (columns), pairs</h3>"
                   + table(["people \\ judge", *classes],
                           [[h, *((confusion.get(h) or {}).get(j, 0) for j in classes)]
                            for h in classes], numeric=range(1, 1 + len(classes))))
    for key, title in (("by_domain", "domain"), ("by_aspect", "aspect")):
        groups = cal.figures.get(key) or {}
        if groups:
            out.append(f"<h3>Per {title}</h3>" + table(
                [title, "sign accuracy %", "Pearson", "human-human sign agreement %"],
                [[g, figure(v.get("sign_accuracy")), _num(v.get("pearson") or {}),
                  figure(v.get("human_sign_agreement"))] for g, v in groups.items()],
                numeric=(1, 2, 3)))
    return out


def calibration_page(cal: StoredCalibration) -> str:
    return page(f"Judge calibration #{cal.id} · {cal.judge}",
                f"{cal.template} against {cal.labels} ({cal.aspect})",
                calibration_sections(cal), {"kind": "calibration", "calibration": cal.as_json()})

"""Runs side by side: the rows of the run history, one run's summary, and two runs compared
where their systems and settings overlap.

The comparison is data first (:func:`compare_reports` → :class:`RunComparison`: per system ×
setting and per adaptability share, both runs' estimates, the difference in points and
whether the 95% CIs overlap), then text. Text comes as *segments*, ``(text, role)`` pairs,
so that a terminal UI can style each role and the command line can join them
(:func:`plain`). The roles:

- ``title``: the first segment, what the text is about;
- ``heading``: a section's heading;
- ``header``: a table's header line;
- ``strong``: a line that must not be missed (a partial run, different datasets);
- ``note``: an aside (notes, what only one run has);
- ``""``: everything else.

Every number is a percentage with its 95% CI and n, as in :mod:`.text`. Reads the typed
:class:`engine.results.report.RunReport` (never its JSON).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.metrics.adaptability import OVERALL_MEANING
from engine.results.text import (ADAPTABILITY_COLUMNS, concurrency_text, est_pct, short_setting,
                                 table)
from engine.units import fmt_delta

if TYPE_CHECKING:
    from engine.results.report import RunReport
    from engine.stats import Estimate

Segment = tuple[str, str]
"""``(text, role)``; see the module docstring for the roles."""


def plain(segments: list[Segment]) -> str:
    """The segments as one plain string (what the command line prints)."""
    return "".join(text for text, _ in segments)


# --------------------------------------------------------------------------- history rows


@dataclass
class RunRow:
    """What the run history shows of one run."""

    name: str
    dataset: str
    status: str
    done: int
    total: int
    generators: list[str]
    settings: list[str]
    seeds: str
    devices: list[str]
    created: str
    updated: str


def run_row(store, run) -> RunRow:
    """The row of ``run`` (a :class:`~engine.runs.lookup.RunInfo`): item counts (the
    run's counters), configuration, seeds, devices, times to the minute."""
    from engine.results.records import stored_counts

    counts = stored_counts(store, run)
    config, header = run.config, run.header
    seeds = header.seeds.as_dict() if header.seeds else {}
    seed_values = list(dict.fromkeys(str(v) for v in seeds.values())) or [
        str(config.get("seed", "—"))]
    devices = header.devices or [m.device for m in header.models.values() if m.device]
    return RunRow(run.name, run.dataset, run.status, counts.done, counts.total,
                  list(config.get("generators") or []), list(config.get("settings") or []),
                  "/".join(seed_values), list(dict.fromkeys(devices)),
                  run.created_at[:16], run.updated_at[:16])


def run_rows(store) -> list[RunRow]:
    """Every stored run's row, oldest first."""
    from engine.runs.lookup import load_run
    from engine.store.runs import known_runs

    return [run_row(store, load_run(store, name)) for name in known_runs(store)]


# --------------------------------------------------------------------------- two runs as data


@dataclass
class ComparedEstimate:
    """One number of one system in both runs: A (left) and B (right), each an
    :class:`~engine.stats.Estimate`."""

    system: str
    what: str       # a setting (accuracy) or an ADAPTABILITY_COLUMNS key (adaptability)
    a: Estimate
    b: Estimate

    @property
    def delta(self) -> float | None:
        """B − A in percentage points; None when either value is missing."""
        a, b = self.a.value, self.b.value
        return None if a is None or b is None else 100 * (b - a)

    @property
    def overlap(self) -> bool | None:
        """Whether the two 95% CIs overlap; None when either CI is missing."""
        a, b = self.a, self.b
        if None in (a.lo, a.hi, b.lo, b.hi):
            return None
        return a.lo <= b.hi and b.lo <= a.hi


@dataclass
class RunComparison:
    """Run ``left`` (A) and run ``right`` (B) where systems and settings overlap."""

    left: str
    right: str
    left_dataset: str
    right_dataset: str
    accuracy: list[ComparedEstimate] = field(default_factory=list)
    adaptability: list[ComparedEstimate] = field(default_factory=list)
    only_left: list[str] = field(default_factory=list)    # systems only A has
    only_right: list[str] = field(default_factory=list)


def compare_reports(left: RunReport, right: RunReport) -> RunComparison:
    """Two run reports compared: EM_loose per system × setting both have, and the adaptability
    shares (NV, CA, CI, CM, overall) of every system both have, A's order."""
    out = RunComparison(left.run, right.run, left.dataset, right.dataset)
    for system, per in left.accuracy.items():
        other = right.accuracy.get(system, {})
        out.accuracy += [ComparedEstimate(system, setting, a, other[setting])
                         for setting, a in per.items() if setting in other]
    out.only_left = sorted(set(left.accuracy) - set(right.accuracy))
    out.only_right = sorted(set(right.accuracy) - set(left.accuracy))
    rights = {e.system: e for e in right.systems}
    for entry in left.systems:
        other = rights.get(entry.system)
        if other is not None:
            out.adaptability += [ComparedEstimate(entry.system, key, entry.share(key),
                                                  other.share(key))
                                 for key, _ in ADAPTABILITY_COLUMNS]
    return out


# --------------------------------------------------------------------------- text


def _est(e: Estimate) -> str:
    """``33.3 [0.0, 66.7] n=6`` (percent); ``– n=0`` without a value."""
    if e.value is None:
        return "– n=0"
    return f"{est_pct(e)} n={e.n}"


def _table(rows: list[list[str]], right: set[int] = frozenset(),
           width: int | None = None) -> list[Segment]:
    return [(line + "\n", "header" if i == 0 else "") for i, line in
            enumerate(table(rows, right, width))]


def _heading(text: str) -> Segment:
    return (f"\n{text}\n", "heading")


def _delta(c: ComparedEstimate) -> str:
    return fmt_delta(None if c.delta is None else c.delta / 100)   # c.delta is in points


def _overlap(c: ComparedEstimate) -> str:
    return "" if c.overlap is None else ("CIs overlap" if c.overlap else "CIs apart")


def comparison_segments(c: RunComparison, width: int | None = None) -> list[Segment]:
    """Two runs side by side: EM_loose and adaptability of each with its CI and n, the
    difference (B − A, points) and whether the CIs overlap; tables within ``width``."""
    ln, rn = c.left, c.right
    out: list[Segment] = [(f"Comparing {ln} (A) with {rn} (B)", "title")]
    if c.left_dataset != c.right_dataset:
        out.append((f"\nDifferent datasets: {c.left_dataset} vs {c.right_dataset}.",
                    "strong"))
    else:
        out.append((f" on {c.left_dataset}", ""))
    out.append(("\nEach run on its own items (not paired): Δ = B − A in points between the "
                "runs' own figures; % with 95% CIs (Clopper–Pearson for rates), n = queries. "
                "A paired Δ (B − A on the items both answered) can differ.", ""))
    out.append(_heading("Accuracy (EM_loose)"))
    rows = [["system", "setting", f"A {ln}", f"B {rn}", "Δ", ""]]
    rows += [[e.system, short_setting(e.what), _est(e.a), _est(e.b), _delta(e), _overlap(e)]
             for e in c.accuracy]
    out += _table(rows, right={4}, width=width) if len(rows) > 1 else [
        ("  (no system × setting in common)\n", "")]
    if c.only_left:
        out.append((f"only in {ln}: {', '.join(c.only_left)}\n", "note"))
    if c.only_right:
        out.append((f"only in {rn}: {', '.join(c.only_right)}\n", "note"))
    out.append(_heading("Adaptability"))
    titles = dict(ADAPTABILITY_COLUMNS)
    rows = [["system", "", f"A {ln}", f"B {rn}", "Δ", ""]]
    rows += [[e.system, titles[e.what], f"{est_pct(e.a)} n={e.a.n}", f"{est_pct(e.b)} n={e.b.n}",
              _delta(e), _overlap(e)] for e in c.adaptability]
    out += _table(rows, right={4}, width=width) if len(rows) > 1 else [
        ("  (no system with adaptability in both runs)\n", "")]
    return out


def summary_segments(report: RunReport, row: RunRow | None = None,
                     width: int | None = None, cut: str | None = None) -> list[Segment]:
    """One run: title, accuracy per system × setting, adaptability, notes; tables within
    ``width``. ``cut``: its answers cut at the token limit in words
    (:func:`engine.runs.tally.cut_words`), after the item counts."""
    items = report.items
    failed = f" · {items.errors} failed" if items.errors else ""
    cuts = f" · {cut}" if cut else ""
    out: list[Segment] = [(f"{report.run} · {report.dataset} · {report.status} · "
                           f"{items.done}/{items.total} items{failed}{cuts}", "title")]
    if row is not None:
        out.append((f"\ncreated {row.created} · updated {row.updated} · seed {row.seeds} · "
                    f"device {', '.join(row.devices) or '—'}\ngenerators "
                    f"{', '.join(row.generators) or '—'} · settings {', '.join(row.settings)}",
                    ""))
    overlap = concurrency_text(report.header)
    if overlap:
        out.append((f"\nrequests in flight: {overlap}", ""))
    sample = report.sample
    if sample:
        out.append((f"\nA sample of {sample.queries} of {sample.of} queries "
                    f"(seed {sample.seed}).", ""))
    if report.partial:
        out.append((f"\nPARTIAL: {items.pending} items pending; numbers cover the items "
                    "stored so far.", "strong"))
    out.append((f"\n% with 95% CIs (rates: exact; scores: bootstrap, {report.n_boot} "
                f"resamples, seed {report.seed}); n = queries.", ""))
    for line in report.definition_lines():
        out.append((f"\n{line}", ""))
    out.append(_heading("Accuracy (EM_loose) per system × setting"))
    settings = list(dict.fromkeys(s for per in report.accuracy.values() for s in per))
    rows = [["system"] + [short_setting(s) for s in settings]]
    for system, per in report.accuracy.items():
        rows.append([system] + [_est(per[s]) if s in per else "" for s in settings])
    out += _table(rows, width=width) if len(rows) > 1 else [("  (no scored items yet)\n", "")]
    out.append(_heading("Adaptability (MIRAGE §1; NV+CA+CI+CM = 100)"))
    # Overall in a column of its own would push the table past 100 columns
    shares = [(k, t) for k, t in ADAPTABILITY_COLUMNS if k != "overall"]
    rows = [["system", "n"] + [title for _, title in shares]]
    for entry in report.systems:
        rows.append([entry.system, str(entry.n)]
                    + [est_pct(entry.share(key)) for key, _ in shares])
    if len(rows) == 1:
        out.append(("  (no system has base, oracle and a mixed-like setting yet)\n", ""))
    else:
        out += _table(rows, right={1}, width=width)
        out.append(_heading(OVERALL_MEANING))
        out += _table([["system", "overall"]] + [[e.system, est_pct(e.share("overall"))]
                                                 for e in report.systems], width=width)
    for note in report.notes:
        out.append((f"note: {note}\n", "note"))
    return out

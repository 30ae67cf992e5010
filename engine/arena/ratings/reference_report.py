"""Against a reference (RAG-QA Arena, Han et al., LFRQA; docs/METRICS.md §4).

Judging (:func:`engine.arena.judging.job.judge_arena` with ``pairs="reference"``) compares each
contestant's answer with the query's long-form reference answer (``system_b = 'reference'``)
or with a chosen reference contestant (:func:`engine.arena.judging.plan.plan_jobs` plans those
battles).

:func:`reference_report` reads them back, per contestant, per domain (the query's source)
and overall:

- **win rate** = wins / n and **win+tie rate** = (wins + ties) / n, n the contestant's
  battles; each with its Wilson 95% CI and n. As RAG-QA Arena specifies, a battle whose judge
  reply could not be parsed counts as a tie in these rates *and* is counted separately
  (``unparsed``, and ``parse_failures`` for every unparsed reply, including one order of a
  'both' battle that the other order decided);
- **no-answer ratio**: the share of the contestant's judged responses that decline
  (:func:`engine.metrics.no_answer.is_no_answer`, or the run's stored ``no_answer`` score), with
  its Wilson CI.

Queries without a reference answer are skipped when judging and counted in the arena header.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from engine.arena.header import ArenaCounts
from engine.arena.ratings.battles import resolve_arena
from engine.runs.lookup import RunInfo
from engine.stats import Estimate, wilson_interval
from engine.text_fit import cell_len, fit_table, wrap_lines
from engine.store import Store
from engine.store.arenas import reference_battle_rows

NO_DOMAIN = "(none)"


@dataclass
class RateRow:
    """One contestant's results against the reference over some battles."""

    n: int
    wins: int
    ties: int                   # includes the unparsed battles (RAG-QA Arena)
    losses: int
    unparsed: int               # battles without a verdict, counted as ties above
    parse_failures: int         # unparsed judge replies
    win_rate: Estimate
    win_tie_rate: Estimate
    no_answer: Estimate

    def as_json(self) -> dict:
        return {"n": self.n, "wins": self.wins, "ties": self.ties, "losses": self.losses,
                "unparsed": self.unparsed, "parse_failures": self.parse_failures,
                **self.win_rate.as_dict("win_rate"),
                **self.win_tie_rate.as_dict("win_tie_rate"),
                **self.no_answer.as_dict("no_answer")}


@dataclass
class ContestantResult:
    system: str
    overall: RateRow
    by_domain: dict[str, RateRow]

    def as_json(self) -> dict:
        return {"system": self.system, **self.overall.as_json(),
                "by_domain": {d: r.as_json() for d, r in self.by_domain.items()}}


@dataclass
class ReferenceReport:
    run: str
    arena: str
    judge: str | None
    template: str | None
    reference: str              # 'reference' or the reference contestant's name
    order: str | None
    seed: int | None
    contestants: list[ContestantResult]      # best overall win rate first
    domains: list[str]
    queries: int                # queries with battles
    eligible_queries: int | None   # queries the judged ones were drawn from
    skipped_queries: int        # run queries without a reference answer
    parse_failures: int
    status: str
    notes: list[str] = field(default_factory=list)

    @property
    def sampled(self) -> bool:
        return self.eligible_queries is not None and self.queries < self.eligible_queries

    def as_json(self) -> dict:
        return {"run": self.run, "arena": self.arena, "judge": self.judge,
                "template": self.template, "reference": self.reference, "order": self.order,
                "seed": self.seed, "status": self.status, "queries": self.queries,
                "eligible_queries": self.eligible_queries, "sampled": self.sampled,
                "skipped_queries": self.skipped_queries, "parse_failures": self.parse_failures,
                "domains": self.domains, "notes": self.notes,
                "contestants": [c.as_json() for c in self.contestants]}


def _rates(battles: list[tuple]) -> RateRow:
    """``battles``: (winner, parse_failures, declines) of one contestant (as system_a)."""
    n = len(battles)
    wins = sum(1 for w, _, _ in battles if w == "a")
    losses = sum(1 for w, _, _ in battles if w == "b")
    unparsed = sum(1 for w, _, _ in battles if w is None)
    ties = n - wins - losses
    declines = sum(1 for _, _, d in battles if d)
    return RateRow(n, wins, ties, losses, unparsed, sum(p for _, p, _ in battles),
                   wilson_interval(wins, n), wilson_interval(wins + ties, n),
                   wilson_interval(declines, n))


def reference_report(store: Store, run: RunInfo,
                     arena_name: str | None = None) -> ReferenceReport:
    """Win, win+tie and no-answer rates per contestant against the reference (module
    docstring). ``arena_name`` None: the only reference arena, else the latest one."""
    info = resolve_arena(store, run, arena_name, mode="reference")
    if info.mode != "reference":
        raise ValueError(f"arena {info.name!r} is a {info.mode} arena, not a reference arena")
    per: dict[str, list[tuple]] = defaultdict(list)
    per_domain: dict[str, dict[str, list[tuple]]] = defaultdict(lambda: defaultdict(list))
    queries, reference = set(), info.config.get("reference") or "reference"
    for r in reference_battle_rows(store, info.id):
        entry = (r["winner"], r["parse_failures"], bool(r["refusal"] & 1))
        per[r["system_a"]].append(entry)
        per_domain[r["system_a"]][r["source"] or NO_DOMAIN].append(entry)
        queries.add(r["query_rowid"])
    domains = sorted({d for by in per_domain.values() for d in by})
    results = [ContestantResult(s, _rates(per[s]),
                                {d: _rates(per_domain[s][d]) for d in domains
                                 if per_domain[s].get(d)})
               for s in per]
    results.sort(key=lambda c: (-(c.overall.win_rate.value or 0.0),
                                -(c.overall.win_tie_rate.value or 0.0), c.system))
    counts = info.header.counts or ArenaCounts()
    failures = sum(c.overall.parse_failures for c in results)
    notes = ["a battle whose judge reply could not be parsed counts as a tie in the rates "
             "and is counted separately (RAG-QA Arena)"]
    order = info.config.get("order")
    notes.append("answer positions: " + ("both orders judged, disagreements are ties"
                                         if order == "both" else
                                         f"randomised per battle with seed "
                                         f"{info.config.get('seed')}"))
    return ReferenceReport(
        run=run.name, arena=info.name, judge=info.judge, template=info.config.get("template"),
        reference=reference, order=order, seed=info.config.get("seed"), contestants=results,
        domains=domains, queries=len(queries), eligible_queries=counts.eligible_queries,
        skipped_queries=counts.skipped_queries, parse_failures=failures,
        status=info.status, notes=notes)


def format_reference_report(report: ReferenceReport, width: int | None = None) -> str:
    """The report as text: one block per contestant, overall then per domain; within
    ``width`` cells when given (each table's cells wrap, the other lines at words)."""
    against = ("the dataset's reference answers" if report.reference == "reference"
               else f"the reference contestant {report.reference}")
    sample = (f" (a seeded sample of {report.queries} of {report.eligible_queries})"
              if report.sampled else "")
    lines = [f"arena {report.arena} ({report.status}): {report.judge} judged against "
             f"{against}, template {report.template}",
             f"  {report.queries} queries{sample}; {report.skipped_queries} without a "
             f"reference skipped; {report.parse_failures} parse failures"]
    header = f"  {'':<14}{'win rate':<28}{'win+tie rate':<28}{'no-answer':<28}unparsed"
    lines = [wrap_lines(line, width) for line in lines]
    for c in report.contestants:
        lines += ["", wrap_lines(c.system, width)]
        rows = [("overall", c.overall)] + [(d, r) for d, r in c.by_domain.items()]
        if len(c.by_domain) == 1:
            rows = rows[:1]
        table = [header] + [f"  {label[:13]:<14}{r.win_rate.format_pct():<28}"
                            f"{r.win_tie_rate.format_pct():<28}{r.no_answer.format_pct():<28}"
                            f"{r.unparsed}" for label, r in rows]
        if width is not None and max(cell_len(t) for t in table) > width:
            cells = [["", "win rate", "win+tie rate", "no-answer", "unparsed"]]
            cells += [[label[:13], r.win_rate.format_pct(), r.win_tie_rate.format_pct(),
                       r.no_answer.format_pct(), str(r.unparsed)] for label, r in rows]
            table = ["  " + t for t in fit_table(cells, {4}, width - 2)]
        lines += table
    lines += [""] + [wrap_lines(f"note: {n}", width) for n in report.notes]
    return "\n".join(lines) + "\n"

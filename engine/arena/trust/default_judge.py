"""Which judge the arena uses by default, and the lines that head every rating table.

:func:`default_judge` picks the judge of a run's arena when none is named, by what the
battles' queries have (:func:`reference_kind`), and says which rule picked it:

1. **short gold answers** (SQuAD / XQuAD / MIRAGE-style: every query the run answered has gold
   answers and none a long-form reference), pairwise: ``reference:answer-match``, which decides
   as the run's own scorer does (EM_loose, then F1). On such data most pairs are two wrong
   answers, and similarity to a two-word gold rewards a plausible wrong answer (the
   MiniLM judge ranked the quick comparison at Spearman 0.63 against EM_loose). The only
   calibration evidence in the product comes from long-form labels, which say nothing here.
2. **long-form references** (some query has one; every query has reference text), pairwise:
   the best-calibrated judge in the workspace (the top of
   :func:`engine.arena.trust.rankings.judge_rankings`) that can judge this run and measurably beats
   a coin toss (its sign accuracy CI lies wholly above 50%); else :data:`LONG_FORM_JUDGE`,
   the best judge on the shared human labels.
3. **no reference**, or battles against the reference answer (``--pairs reference``, where the
   reference cannot be judged against itself): a calibrated LLM judge that loads here, or a
   fitted judge that reads no reference; else the configured LLM (``judge`` in config.toml) in
   ``debiased`` order (which cancels the small judges' preference for the answer shown first),
   or no judge at all.

:func:`judge_trust` says how far the judge of an arena agrees with people: the newest
calibration of the same judge identity (preferring the arena's order, then its template), as
``judged by J, agrees with people X% [lo, hi] (n=…, labels L)`` or ``judged by J, judge not
calibrated``, with :data:`engine.arena.trust.rankings.WORSE_THAN_REFERENCE` when the rankings say
so. :func:`judge_rule` says whether the arena's judge is the default for its data and by which
rule. The Leaderboard, ``arena ratings`` (text and JSON) and the HTML leaderboard print both
lines, and the cross-check against accuracy (:mod:`engine.arena.trust.cross_check`).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.arena.trust.rankings import WORSE_THAN_REFERENCE, JudgeRanking, judge_rankings
from engine.arena.judges.kinds import kind_of
from engine.arena.types import ArenaError
from engine.arena.judges.reference import ANSWER_MATCH, PREFIX, gold_answers, reference_texts
from engine.runs.lookup import RunInfo
from engine.stats import format_interval
from engine.store import Store
from engine.store.arenas import answered_queries, query_references

SHORT_ANSWER_JUDGE = PREFIX + ANSWER_MATCH
LONG_FORM_JUDGE = "reference:blend"
"""The long-form default without a calibrated judge in the workspace: the best of the packaged
judges on people's labels (:func:`engine.arena.judges.blend.shipped_blend`)."""
CHANCE = 0.5


@dataclass(frozen=True)
class DefaultJudge:
    spec: str | None               # what --judge would name; None: no judge to offer
    order: str                     # random | both | debiased
    why: str                       # one line
    ranking: JudgeRanking | None = None   # the calibration that chose it


def reference_kind(store: Store, run: RunInfo) -> str | None:
    """What the queries the run answered have: ``'short'`` (every one gold answers, none a
    long-form reference), ``'long'`` (every one reference text, some a long-form reference),
    or None (some have neither)."""
    rows = query_references(store, answered_queries(store, run.id))
    if not rows:
        return None
    long_form = [bool((r["reference_answer"] or "").strip()) for r in rows]
    golds = [bool(gold_answers(r["answers"])) for r in rows]
    if not any(long_form) and all(golds):
        return "short"
    if any(long_form) and all(lf or g for lf, g in zip(long_form, golds)):
        return "long"
    return None


def run_has_references(store: Store, run: RunInfo) -> bool:
    """Whether every query the run answered has reference text (a long-form reference answer
    or gold answers), so a reference judge can judge all its battles."""
    rowids = answered_queries(store, run.id)
    return bool(rowids) and all(reference_texts(store, rowids).values())


def _can_judge(store: Store, row: JudgeRanking, references: bool, pairs: str) -> bool:
    """Whether the judge opens here and can judge these battles: one that reads the
    reference only where every query has one and the battles are pairwise
    (:data:`engine.arena.judges.kinds.KINDS`' ``reads_reference``)."""
    reads = kind_of(row.judge).reads_reference(store, row.judge)
    return reads is not None and (not reads or (references and pairs == "all"))


def _agreement(row: JudgeRanking) -> str:
    sign = row.sign_accuracy
    return f"agrees with people {sign.format_pct()} on {row.labels} ({row.order} order)"


def default_judge(store: Store, run: RunInfo, pairs: str = "all") -> DefaultJudge:
    """The arena judge to use when none is named (module docstring)."""
    from engine.app_config import load_app_config

    kind = reference_kind(store, run)
    if kind == "short" and pairs == "all":
        return DefaultJudge(SHORT_ANSWER_JUDGE, "random",
                            "short gold answers: the answer that matches the gold (EM_loose) "
                            "wins, else the higher F1, as the run scores them")
    references = kind is not None           # every query has reference text
    for row in judge_rankings(store):
        lo = row.sign_accuracy.lo
        if lo is None or lo <= CHANCE or row.worse_than_reference:
            continue
        if row.judge == SHORT_ANSWER_JUDGE:
            continue
        if _can_judge(store, row, references, pairs):
            data = "long-form references" if references and pairs == "all" else \
                "no reference to judge against"
            return DefaultJudge(row.judge, row.order,
                                f"{data}: the best-calibrated judge here: {_agreement(row)}",
                                row)
    if references and pairs == "all":
        from engine.arena.judges.blend import shipped_blend

        blend = shipped_blend()
        return DefaultJudge(LONG_FORM_JUDGE, "random",
                            "long-form references and no calibrated judge here that beats a "
                            f"coin toss: {LONG_FORM_JUDGE}, the best packaged judge on people's "
                            f"labels ({blend.leave_one_domain_out.format_pct()} held out by "
                            "domain, RAGChecker)")
    configured = load_app_config().judge
    where = ("the battles are against the reference" if pairs != "all"
             else "the run's queries have no reference answer")
    if configured:
        return DefaultJudge(_judge_name(configured), "debiased",
                            f"no calibrated judge can judge this run and {where}: the "
                            "configured judge (config.toml), both orders debiased")
    return DefaultJudge(None, "debiased",
                        f"no calibrated judge can judge this run and {where}: name an LLM "
                        "judge (--judge MODEL, or judge = ... in config.toml)")


def _judge_name(spec: str) -> str:
    """config.toml's judge by its one spelling (``smollm2`` is the catalog's full name), as
    typed when it matches several models."""
    from engine.arena.judges.names import judge_name
    from models.base import ModelError

    try:
        return judge_name(spec)
    except ModelError:
        return spec


def judge_rule(store: Store, run: RunInfo, info) -> str:
    """One line: whether the arena's judge is the default for this data, and by which rule."""
    try:
        choice = default_judge(store, run, "reference" if info.mode == "reference" else "all")
    except ArenaError:
        return ""
    if choice.spec is not None and info.judge is not None and \
            choice.spec.strip().lower() == info.judge.strip().lower():
        return f"the default judge for this data: {choice.why}"
    if choice.spec is None:
        return f"judge named for this arena ({choice.why})"
    return (f"judge named for this arena; the default for this data would be {choice.spec} "
            f"({choice.why})")


# --------------------------------------------------------------------------- the header line

def _pct(e) -> str:
    """``74.5% [67.1, 81.0]`` of an Estimate."""
    return format_interval(e.value, e.lo, e.hi, digits=1, scale=100, unit="%")


@dataclass(frozen=True)
class JudgeTrust:
    """How far an arena's judge agrees with people (module docstring)."""
    judge: str | None
    calibration: JudgeRanking | None
    notes: tuple[str, ...] = ()    # the calibration's order or template differ from the arena's

    @property
    def line(self) -> str:
        judge = self.judge or "an unknown judge"
        c = self.calibration
        if c is None and judge == SHORT_ANSWER_JUDGE:
            return (f"judged by {judge}: the run's own EM_loose, then F1, against the gold "
                    "answers (no people's labels for short answers; it agrees with accuracy "
                    "by construction)")
        if c is None:
            how = ("mirage-tui judge calibrate --judge "
                   f"{self.judge if self.judge else 'JUDGE'} --labels DATASET")
            return f"judged by {judge}, judge not calibrated ({how})"
        text = (f"judged by {judge}, agrees with people {_pct(c.sign_accuracy)} "
                f"(n={c.sign_accuracy.n}, labels {c.labels})")
        if c.worse_than_reference:
            text += (f"; {WORSE_THAN_REFERENCE} ({c.best_reference} "
                     f"{_pct(c.best_reference_accuracy)})")
        return text + "".join(f"; {note}" for note in self.notes)

    def as_json(self) -> dict:
        return {"judge": self.judge, "line": self.line, "calibrated": self.calibration is not None,
                "calibration": self.calibration.as_json() if self.calibration else None,
                "notes": list(self.notes)}


def judge_trust(store: Store, info) -> JudgeTrust:
    """The calibration of the judge of an arena (``engine.arena.ratings.battles.ArenaInfo``): of the
    same judge identity key (else, for an arena without one, the same judge name), the one in
    the arena's order, then with its template, then the newest."""
    key = info.header.judge.key if info.header.judge else None
    order, template = info.config.get("order"), info.config.get("template")
    rows = [r for r in judge_rankings(store)
            if (r.judge_key == key if key else r.judge == info.judge)]
    if not rows:
        return JudgeTrust(info.judge, None)
    best = max(rows, key=lambda r: (r.order == order, r.template == template,
                                    r.calibration_id))
    notes = []
    if order and best.order != order:
        notes.append(f"calibrated in {best.order} order, the arena judged in {order}")
    if template and best.template != template:
        notes.append(f"calibrated with template {best.template}, the arena used {template}")
    return JudgeTrust(info.judge, best, tuple(notes))


@dataclass(frozen=True)
class ArenaHeading:
    """The lines that head an arena's ratings: who judged and how far people agree with it,
    which rule picked the judge, and the ranking's cross-check against accuracy (None on data
    without gold answers)."""
    trust: JudgeTrust
    rule: str
    cross_check: object | None        # engine.arena.trust.cross_check.CrossCheck

    @property
    def lines(self) -> list[str]:
        return [line for line in (self.trust.line, self.rule,
                                  self.cross_check.line if self.cross_check else "") if line]

    def as_json(self) -> dict:
        return {"judge_trust": self.trust.as_json(), "judge_rule": self.rule,
                "cross_check": self.cross_check.as_json() if self.cross_check else None}


def arena_header(store: Store, run: RunInfo, info, battles, ratings) -> ArenaHeading:
    """The header of the arena ``info`` of ``run``, its ``battles`` rated as ``ratings``."""
    from engine.arena.trust.cross_check import cross_check

    return ArenaHeading(judge_trust(store, info), judge_rule(store, run, info),
                       cross_check(store, run, battles, ratings, info.judge))


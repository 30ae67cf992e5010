"""Which judge the arena uses by default, and the line that heads every rating table (issue 24).

:func:`default_judge` picks the judge of a run's arena when none is named:

1. the best-calibrated judge in the workspace (the top of
   :func:`engine.arena.judge_list.judge_rankings`) that can judge this run and measurably beats
   a coin toss (its sign accuracy CI lies wholly above 50%): a reference judge, or a fitted
   judge that reads the reference, only when the battles have reference text (every query the
   run answered has a long-form reference answer or gold answers,
   :func:`engine.arena.planning.reference_texts`) and the arena is pairwise (in ``--pairs
   reference`` mode the reference cannot be judged against itself); an LLM judge only when its
   name (the calibration stores the judge's identity name) is an installed catalog model or a
   configured endpoint. It is used in the order it was calibrated in.
2. with none: ``reference:minilm-l6-v2`` when the battles have reference text;
3. else the configured LLM (``judge`` in config.toml) in ``debiased`` order (which cancels the
   small judges' preference for the answer shown first), or no judge at all.

:func:`judge_trust` says how far the judge of an arena agrees with people: the newest
calibration of the same judge identity (preferring the arena's order, then its template), as
``judged by J, agrees with people X% [lo, hi] (n=…, labels L)`` or ``judged by J, judge not
calibrated``, with :data:`engine.arena.judge_list.WORSE_THAN_REFERENCE` when the rankings say
so. The Leaderboard, ``arena ratings`` (text and JSON) and the HTML leaderboard print its
:attr:`JudgeTrust.line`.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.arena.judge_list import WORSE_THAN_REFERENCE, JudgeRanking, judge_rankings
from engine.arena.judge_specs import is_fitted_judge
from engine.arena.planning import ArenaError, reference_texts
from engine.arena.reference_judges import is_reference_judge
from engine.stats import format_interval
from engine.store import Store

UNCALIBRATED_REFERENCE_JUDGE = "reference:minilm-l6-v2"
CHANCE = 0.5


@dataclass(frozen=True)
class DefaultJudge:
    spec: str | None               # what --judge would name; None: no judge to offer
    order: str                     # random | both | debiased
    why: str                       # one line
    ranking: JudgeRanking | None = None   # the calibration that chose it


def run_has_references(store: Store, run_name: str) -> bool:
    """Whether every query the run answered has reference text (a long-form reference answer
    or gold answers), so a reference judge can judge all its battles."""
    from engine.runs.lookup import load_run

    run = load_run(store, run_name)
    rowids = [r[0] for r in store.query(
        "SELECT DISTINCT query_rowid FROM run_items WHERE run_id = ? "
        "AND generation_key IS NOT NULL", (run.id,))]
    return bool(rowids) and all(reference_texts(store, rowids).values())


def _loadable_llm(name: str) -> bool:
    """Whether an LLM judge's identity name opens here: an installed catalog model of that
    exact name, or a configured endpoint."""
    from models.catalog import find_endpoint, find_model

    try:
        entry = find_model(name)
        if entry is not None and entry.name == name:
            return bool(entry.installed and not entry.error)
        return find_endpoint(name) is not None
    except Exception:  # noqa: BLE001 - ModelError, a bad endpoints file: not usable
        return False


def _fitted_needs_reference(store: Store, spec: str) -> bool | None:
    """Whether a fitted judge reads the reference; None when it does not open here."""
    from engine.arena.judge_specs import open_judge

    try:
        return bool(getattr(open_judge(spec, "", store=store), "needs_reference", True))
    except (ArenaError, LookupError, ValueError, OSError):
        return None


def _can_judge(store: Store, row: JudgeRanking, references: bool, pairs: str) -> bool:
    if is_reference_judge(row.judge):
        return references and pairs == "all"
    if is_fitted_judge(row.judge):
        needs = _fitted_needs_reference(store, row.judge)
        return needs is not None and (not needs or (references and pairs == "all"))
    return _loadable_llm(row.judge)


def _agreement(row: JudgeRanking) -> str:
    sign = row.sign_accuracy
    return f"agrees with people {sign.format_pct()} on {row.labels} ({row.order} order)"


def default_judge(store: Store, run_name: str, pairs: str = "all") -> DefaultJudge:
    """The arena judge to use when none is named (module docstring)."""
    from engine.app_config import load_app_config

    references = run_has_references(store, run_name)
    for row in judge_rankings(store):
        lo = row.sign_accuracy.lo
        if lo is None or lo <= CHANCE or row.worse_than_reference:
            continue
        if _can_judge(store, row, references, pairs):
            return DefaultJudge(row.judge, row.order,
                                f"the best-calibrated judge here: {_agreement(row)}", row)
    if references and pairs == "all":
        return DefaultJudge(UNCALIBRATED_REFERENCE_JUDGE, "random",
                            "no calibrated judge that beats a coin toss can judge this run, "
                            "and its queries have reference answers: each answer is compared "
                            "with the reference, by MiniLM embeddings")
    configured = load_app_config().judge
    where = ("the battles are against the reference" if pairs != "all"
             else "the run's queries have no reference answer")
    if configured:
        return DefaultJudge(configured, "debiased",
                            f"no calibrated judge can judge this run and {where}: the "
                            "configured judge (config.toml), both orders debiased")
    return DefaultJudge(None, "debiased",
                        f"no calibrated judge can judge this run and {where}: name an LLM "
                        "judge (--judge MODEL, or judge = ... in config.toml)")


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
    """The calibration of the judge of an arena (``engine.arena.battles.ArenaInfo``): of the
    same judge identity key (else, for an arena without one, the same judge name), the one in
    the arena's order, then with its template, then the newest."""
    key = (info.header.get("judge") or {}).get("key")
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

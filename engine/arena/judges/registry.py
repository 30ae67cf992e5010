"""The registry of judge kinds (:class:`JudgeKind`): every place that tells kinds apart asks
the kind a spec belongs to (:func:`kind_of`) rather than testing its prefix. It imports no judge
module, so every judge module can ask it; the built-in kinds (reference, fitted, LLM) are
registered by :mod:`engine.arena.judges.kinds`, which the package imports first, and another
kind is one :func:`register` call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

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
    spelling: str = ""
    """How a help text spells a spec of this kind (``fitted:NAME``); the prefix and NAME when
    empty."""
    detail: str = ""
    """What the kind does, in a help text's brackets (the ``--judge`` help of ``arena judge``)."""
    describe: str = ""
    """The about line's words for a judge of this kind, after its name (:meth:`about`)."""
    hint: tuple[str, ...] = ()
    """Names of this kind an LLM judge that cannot load suggests instead (offline kinds)."""
    canonical: Callable[[str], str] | None = None
    """The name a spec of this kind is stored under; None: :meth:`listed_name`."""
    problem: Callable[[str, Store | None], str | None] | None = None
    """Why a spec cannot be opened, one line; None: :meth:`listed_problem`."""
    note: Callable[[str], str | None] = lambda name: None
    """What a judge of this kind compares, shown beside its name in a list (None: nothing)."""
    offered: Callable[[str], bool] = lambda name: True
    """Whether a name of :attr:`names` can judge here (its model installed)."""
    feature: bool = False
    """Whether a fitted judge may read a judge of this kind as its ``judge:`` feature."""
    baseline: bool = False
    """Whether this kind's best calibrated judge is the bar other judges must clear
    (:data:`engine.arena.trust.rankings.WORSE_THAN_REFERENCE`)."""

    def owns(self, spec) -> bool:
        """Whether ``spec`` (a name, or a ready Generator: an LLM) is of this kind."""
        if not self.prefix:
            return True
        return isinstance(spec, str) and spec.strip().lower().startswith(self.prefix)

    def name_of(self, spec: str) -> str:
        """The name the judge ``spec`` (of this kind) is stored under."""
        return (self.canonical or self.listed_name)(spec.strip())

    def problem_of(self, spec: str, store: Store | None = None) -> str | None:
        """Why the judge ``spec`` (of this kind) cannot be opened, in one line; None when it
        can as far as is known without loading it."""
        return (self.problem or self.listed_problem)(spec.strip(), store)

    def listed_name(self, text: str) -> str:
        """The one of :attr:`names` ``text`` spells in any case, else ``text`` with the prefix
        in lower case."""
        found = [n for n in self.names(None) if n.lower() == text.lower()]
        return found[0] if found else self.prefix + text[len(self.prefix):].strip()

    def listed_problem(self, text: str, store: Store | None) -> str | None:
        """None for a name of :attr:`names`, else one line with a did-you-mean over them."""
        from engine.suggest import did_you_mean

        names = self.names(store)
        if self.listed_name(text) in names:
            return None
        return f"judge {text!r}: no such {self.name} judge{did_you_mean(text, names)}"

    def about(self, name: str) -> str:
        """One line on what the judge ``name`` (of this kind) does."""
        note = self.note(name)
        if note is not None:
            embeds = "embeddings" in note or "MiniLM" in note
            return (f"{name}: {note}" + ("; each text embedded once" if embeds else "")
                    + "; no LLM.")
        return f"{name}: {self.describe}" + ("; no LLM." if self.offline else "")

    def help(self, detail: bool = False) -> str:
        """The kind in a ``--judge`` help text (:func:`judge_help`)."""
        text = self.spelling or f"{self.prefix}NAME"
        return text + (f" ({self.detail})" if detail and self.detail else "")


_KINDS: list[JudgeKind] = []


def kinds() -> tuple[JudgeKind, ...]:
    """Every kind registered, the LLM last (it owns any spec the others do not)."""
    return tuple(_KINDS)


def register(kind: JudgeKind) -> JudgeKind:
    """Adds ``kind`` before the kind without a prefix (the LLM, which owns any other text), or
    last when there is none yet; a kind of the same name is replaced. Returns ``kind``;
    ValueError for a second kind without a prefix."""
    if not kind.prefix and any(not k.prefix and k.name != kind.name for k in _KINDS):
        raise ValueError(f"judge kind {kind.name!r} has no prefix: only one kind (the LLM) "
                         "owns every spec no other kind does")
    _KINDS[:] = [k for k in _KINDS if k.name != kind.name]
    at = next((i for i, k in enumerate(_KINDS) if not k.prefix), len(_KINDS))
    _KINDS.insert(at, kind)
    return kind


def unregister(name: str) -> None:
    """Takes the kind ``name`` out of the registry."""
    _KINDS[:] = [k for k in _KINDS if k.name != name]


def named(name: str) -> JudgeKind:
    """The kind registered as ``name`` (KeyError when none is)."""
    for kind in _KINDS:
        if kind.name == name:
            return kind
    raise KeyError(name)


def kind_of(spec) -> JudgeKind:
    """The kind of the judge ``spec`` names."""
    return next(kind for kind in _KINDS if kind.owns(spec))


def is_offline_judge(spec) -> bool:
    """A judge that scores without a language model."""
    return kind_of(spec).offline


def offline_judge_names(store: Store | None = None) -> list[str]:
    """The names of the offline judges, kind by kind in :func:`kinds`' order (those a workspace
    holds only with ``store``)."""
    return [name for kind in _KINDS if kind.offline for name in kind.names(store)]


def judge_help(detail: bool = False) -> str:
    """The kinds a ``--judge`` takes, for a help text: the LLM first, then the offline kinds
    in :func:`kinds`' order (``detail``: with what each does in brackets)."""
    parts = [k.help(detail) for k in sorted(_KINDS, key=lambda k: k.offline)]
    return ", ".join(parts[:-1]) + ", or " + parts[-1] if len(parts) > 1 else parts[0]


def offline_hint() -> str:
    """The offline judges an LLM judge that cannot load suggests instead."""
    return "offline judges: " + ", ".join(h for k in _KINDS if k.offline for h in k.hint)


def feature_judge(spec: str) -> bool:
    """Whether the judge ``spec`` may be a fitted judge's ``judge:`` feature."""
    return kind_of(spec).feature

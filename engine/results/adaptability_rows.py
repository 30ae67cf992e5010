"""The run report's adaptability rows, typed: one :class:`AdaptabilityRow` per system and
mixed-like setting (the report's ``systems``), with NV, CA, CI, CM, overall and EM_loose
accuracy as :class:`~engine.stats.Estimate` values, the items left out, and the same per query
language and source (:class:`AdaptabilityGroup`). :mod:`engine.results.report` builds them;
``as_json`` writes the report's JSON of them, key for key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.metrics.adaptability import AdaptabilityReport
from engine.stats import Estimate, estimates_json


@dataclass(frozen=True)
class LeftOut:
    """The queries a row does not count: ``errored`` (one of its three items failed) and
    ``missing`` (not run yet, or no score)."""

    missing: int
    errored: int

    @property
    def total(self) -> int:
        return self.missing + self.errored

    def as_json(self) -> dict[str, int]:
        return {"missing": self.missing, "errored": self.errored, "total": self.total}


@dataclass(frozen=True)
class _Shares:
    """What a row and a group share: the adaptability over some queries (``shares``) and
    EM_loose accuracy per setting."""

    shares: AdaptabilityReport
    accuracy: dict[str, Estimate]

    @property
    def n(self) -> int:
        """The queries counted (base, oracle and the mixed-like item all scored)."""
        return self.shares.n

    @property
    def patterns(self) -> dict[str, int]:
        """Each (b, o, m) pattern's count (:data:`engine.metrics.adaptability.PATTERN_KEYS`)."""
        return self.shares.patterns

    def share(self, key: str) -> Estimate:
        """``nv``, ``ca``, ``ci``, ``cm`` or ``overall`` with its interval, n the queries
        counted."""
        return getattr(self.shares, key)

    def _shares_json(self) -> dict[str, Any]:
        out = self.shares.as_json()
        for key in ("n_boot", "seed"):
            out.pop(key)
        return out


@dataclass(frozen=True)
class AdaptabilityGroup(_Shares):
    """A row's queries of one language or source: their shares, and accuracy in base, oracle
    and the row's mixed-like setting."""

    def as_json(self) -> dict[str, Any]:
        return {**self._shares_json(), "accuracy": estimates_json(self.accuracy)}


@dataclass(frozen=True, kw_only=True)
class AdaptabilityRow(_Shares):
    """One system with one mixed-like setting: its names (``system`` is the report's row
    name, ``run_system`` the run's generator/template), the retriever and k of a
    ``retrieved@k`` setting, the shares, the queries left out, accuracy in every setting of
    the system, and (unless the report is a summary) the breakdowns by language and source."""

    system: str
    run_system: str
    generator: str
    template: str
    mixed_setting: str
    retriever: str | None
    retriever_name: str | None
    top_k: int | None
    left_out: LeftOut
    by_language: dict[str, AdaptabilityGroup] | None = None
    by_source: dict[str, AdaptabilityGroup] | None = None

    def by(self, attr: str) -> dict[str, AdaptabilityGroup]:
        """The groups of breakdown ``attr`` (``language`` or ``source``); none in a summary."""
        return (self.by_language if attr == "language" else self.by_source) or {}

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "system": self.system, "run_system": self.run_system, "generator": self.generator,
            "template": self.template, "mixed_setting": self.mixed_setting,
            "retriever": self.retriever, "retriever_name": self.retriever_name,
            "top_k": self.top_k}
        out.update(self._shares_json())
        out["left_out"] = self.left_out.as_json()
        out["accuracy"] = estimates_json(self.accuracy)
        for attr in ("language", "source"):
            groups = getattr(self, f"by_{attr}")
            if groups is not None:
                out[f"by_{attr}"] = {g: group.as_json() for g, group in groups.items()}
        return out

"""What ``--judge`` names, opened as a pairwise judge: an LLM (a catalog name, a GGUF path or
an endpoint, read through a versioned template), a reference judge (``reference:EMBEDDER``,
``reference:f1``, ``reference:char3``: :mod:`engine.arena.judges.reference`;
``reference:blend``: :mod:`engine.arena.judges.blend`) or a judge
fitted to people's labels (``fitted:NAME``: :mod:`engine.arena.judges.fitted`).

Every kind answers the same questions (``generator.identity``, ``template.id``, ``fields``,
``verdict``), so arena judging, calibration and the judgments cache treat them alike.
"""

from __future__ import annotations

from engine.arena.judges.llm import open_llm_judge
from engine.arena.types import ArenaError
from engine.arena.judges.reference import ReferenceJudge, is_blend_judge, is_reference_judge
from engine.store import Store

FITTED_PREFIX = "fitted:"


def is_fitted_judge(spec) -> bool:
    return isinstance(spec, str) and spec.strip().lower().startswith(FITTED_PREFIX)


def is_offline_judge(spec) -> bool:
    """A judge that scores without a language model (reference or fitted)."""
    return is_reference_judge(spec) or is_fitted_judge(spec)


def open_judge(spec, template: str, *, store: Store | None = None,
               n_threads: int | None = None):
    """``spec`` (a name, or a ready Generator) as a pairwise judge; ``template`` is the LLM
    judge's template (offline judges have their own). ArenaError when it cannot open."""
    if is_blend_judge(spec):
        from engine.arena.judges.blend import open_blend_judge

        return open_blend_judge(store, n_threads)
    if is_reference_judge(spec):
        return ReferenceJudge(spec, store)
    if is_fitted_judge(spec):
        if store is None:
            raise ArenaError(f"judge {spec!r} is stored in a workspace: open it with one")
        from engine.arena.judges.fitted import load_fitted_judge

        return load_fitted_judge(store, spec.strip()[len(FITTED_PREFIX):], n_threads)
    return open_llm_judge(spec, template, n_threads)

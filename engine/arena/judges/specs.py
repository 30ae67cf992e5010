"""What ``--judge`` names, opened as a pairwise judge: an LLM (a catalog name, a GGUF path or
an endpoint, read through a versioned template), a reference judge (``reference:EMBEDDER``,
``reference:f1``, ``reference:char3``: :mod:`engine.arena.judges.reference`;
``reference:blend``: :mod:`engine.arena.judges.blend`) or a judge
fitted to people's labels (``fitted:NAME``: :mod:`engine.arena.judges.fitted`).

Every kind answers the same questions (``generator.identity``, ``template.id``, ``fields``,
``verdict``), so arena judging, calibration and the judgments cache treat them alike.
"""

from __future__ import annotations

from engine.arena.judges.kinds import kind_of
from engine.store import Store


def open_judge(spec, template: str, *, store: Store | None = None,
               n_threads: int | None = None):
    """``spec`` (a name, or a ready Generator) as a pairwise judge, opened by its kind
    (:func:`engine.arena.judges.registry.kind_of`); ``template`` is the LLM judge's template
    (offline judges have their own). ArenaError when it cannot open."""
    return kind_of(spec).open(spec, template, store, n_threads)

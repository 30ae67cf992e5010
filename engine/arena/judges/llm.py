"""An LLM opened as a pairwise judge through a versioned template: the one loader that
:mod:`engine.arena.judges.specs` (``--judge``) and the fitted judges' ``judge:LLM`` feature
(:mod:`engine.arena.judges.fitted`) share. It imports no other judge kind, so both can use it
without an import cycle."""

from __future__ import annotations

from engine.arena.types import ArenaError

def load_judge(judge, n_threads):
    """A catalog name, path or endpoint loaded as an LLM judge (a Generator as it is);
    ArenaError when it cannot load, naming the offline judges to use instead
    (:func:`engine.arena.judges.registry.offline_hint`)."""
    if not isinstance(judge, str):
        return judge
    from models.catalog import load_generator
    from models.check import is_local, warm_up

    try:
        model = load_generator(judge, n_threads=n_threads)
        if is_local(model):     # warm: the first battle's pace is then its own, not the load's
            warm_up(model)
        return model
    except Exception as exc:  # noqa: BLE001 - ModelError, OSError, ValueError, ...
        from engine.arena.judges.registry import offline_hint

        raise ArenaError(f"cannot load judge model {judge!r}: {exc} ({offline_hint()})"
                         ) from None


def judge_thinking(judge) -> str:
    """The thinking mode an LLM judge is asked in: ``off`` for a local model whose chat
    template has a thinking switch (a reasoning judge would otherwise spend its few tokens
    thinking; its verdict is read after any thinking all the same), else ``auto`` (the request
    as it always was: an endpoint's server may not take the switch's request field)."""
    if not isinstance(judge, str):
        return "auto"
    from models.catalog import thinking_switch

    try:
        switch = thinking_switch(judge)
    except Exception:  # noqa: BLE001 - a judge that cannot be resolved fails when loaded
        return "auto"
    return "off" if switch.switchable and switch.thinks is not None else "auto"


def open_llm_judge(judge, template: str, n_threads: int | None = None):
    """``judge`` loaded and read through ``template`` as a ``PairwiseJudge`` (thinking off
    for a local reasoning model: :func:`judge_thinking`)."""
    from models.judges import PairwiseJudge

    generator = load_judge(judge, n_threads)
    try:
        return PairwiseJudge(generator, template, thinking=judge_thinking(judge))
    except (KeyError, ValueError) as exc:
        raise ArenaError(f"judge template {template!r}: {exc}") from None

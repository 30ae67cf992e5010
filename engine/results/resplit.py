"""A run stored before replies were split, re-split on request (``mirage-tui runs resplit``):
each of its generations that holds a reasoning model's thinking inline (``<think>…</think>``,
the other tag pairs, harmony channels: :func:`models.reasoning.split_reply`) keeps only the
answer as its text, the thinking goes beside it, and the items are rescored on the answer.

Nothing is re-split unless asked: an earlier run reads as it was stored. The generations are
the shared cache's, so every run that used one sees it re-split (its scores are per generation
and query, as the run stored them). A generation with no tag is left alone, and one re-split
already is not read again (its text holds no tag), so a second resplit changes nothing. The
reasoning's tokens are an estimate (UTF-8 bytes / 3, as for an endpoint without a tokenizer):
the model is not loaded. A template that opened the thinking in the prompt and a reply cut
before it closed cannot be told from an answer afterwards: such a text stays as it is."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from engine.metrics.answer import score_generation
from engine.prompts import get_template
from engine.runs import owner
from engine.runs.lookup import load_run
from engine.runs.rows import SCORER_MARK, SCORER_VERSION
from engine.store import Store
from engine.store.reasoning import replace_scores, save_split, unsplit_generations
from models.reasoning import split_reply

CHARS_PER_TOKEN = 3.0


@dataclass(frozen=True)
class Resplit:
    run: str
    checked: int                # generations without recorded reasoning
    split: int                  # of them, holding thinking inline: re-split
    cut_while_thinking: int     # of those, whose thinking never closed
    rescored: int               # items rescored


def resplit_run(store: Store, name: str) -> Resplit:
    """Re-split run ``name``'s stored texts and rescore its items (module docstring); a
    running run is refused (:class:`engine.runs.owner.RunBusy`)."""
    run = load_run(store, name)
    if run.status == "running":
        raise owner.RunBusy(f"run {name} is running; cannot re-split it until it ends "
                            "(cancel it first)")
    cited = get_template(run.config.get("template") or "mirage").cited
    rows = unsplit_generations(store, run.id)
    splits: dict[str, object] = {}
    for r in rows:
        if r["key"] not in splits:
            split = split_reply(r["text"], finish_reason=r["finish_reason"])
            changed = split.reasoning or split.cut or split.answer != r["text"]
            splits[r["key"]] = split if changed else None
    rescored = 0
    with store.write() as db:
        for key, split in splits.items():
            if split is not None:
                tokens = math.ceil(len(split.reasoning.encode("utf-8")) / CHARS_PER_TOKEN)
                save_split(db, key, split.answer, split.reasoning, tokens, split.cut)
        for r in rows:
            split = splits[r["key"]]
            if split is None:
                continue
            scores = score_generation(split.answer, json.loads(r["answers"]),
                                      language=r["language"], cited=cited)
            replace_scores(db, r["key"], r["query_rowid"],
                           [(s.metric, s.value, s.detail) for s in scores]
                           + [(SCORER_MARK, None, SCORER_VERSION)])
            rescored += 1
    done = [s for s in splits.values() if s is not None]
    return Resplit(run.name, len(splits), len(done), sum(1 for s in done if s.cut), rescored)

"""A response and everything its features need, read from the store.

Every run item with a generation is a *response*: one (generation, query). A MIRAGE-Bench
response is ``##Reason: … ##Answer: …``
(:func:`engine.metrics.response_format.split_reason_answer`): reasoning sentences come from the
Reason part and the answer from the Answer part. A response without an Answer heading is all
answer (its Reason part, or the whole text); one without a Reason part gives its reasoning
sentences from the whole text. Citations ``[n]`` are read from the whole response and name the
n-th context of the item's prompt (``run_items.context``: chunk rowids in prompt order);
numbers that name no context are dropped (the detail counts them).

Reference answer (ROUGE-L, BLEU, judged overlap): the query's ``reference_answer`` when it has
one, else its first gold short answer; with neither those features are NULL.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.metrics.response_format import split_reason_answer
from engine.store import Store, json_column
from engine.store.datasets import chunk_texts
from engine.store.features import response_queries, supporting_chunk_ids
from engine.store.generations import generation_texts


@dataclass(frozen=True)
class ResponseParts:
    reason: str        # where the reasoning sentences come from
    answer: str        # what is judged as the answer (citations still in)


def response_parts(text: str | None) -> ResponseParts:
    """Reason and answer of a response (see the module docstring)."""
    text = (text or "").strip()
    reason, answer = split_reason_answer(text)
    if not answer.strip():
        answer = reason or text
    return ResponseParts(reason or text, answer)


@dataclass
class Response:
    """One (generation, query) with everything its features need."""

    generation_key: str
    query_rowid: int
    text: str
    query: str
    language: str | None
    reference: str | None
    reference_kind: str | None          # 'reference_answer' | 'gold_answer'
    context: list[int]                  # chunk rowids in prompt order
    passages: dict[int, str]            # chunk rowid -> text
    relevant: set[int]                  # supporting chunk rowids among the context

    @property
    def parts(self) -> ResponseParts:
        return response_parts(self.text)


def _reference(reference_answer: str | None, answers: str | None) -> tuple[str | None, str | None]:
    if reference_answer and reference_answer.strip():
        return reference_answer, "reference_answer"
    golds = json_column(answers, [])
    if isinstance(golds, str):
        golds = [golds]
    first = next((str(g) for g in golds if g is not None and str(g).strip()), None)
    return (first, "gold_answer") if first is not None else (None, None)


def load_responses(store: Store, keys: list[tuple[str, int, list[int]]]) -> list[Response]:
    """The :class:`Response` of each ``(generation key, query rowid, context chunk rowids)``,
    in that order: its text, the query's facts and reference, the passages shown and which of
    them support the query."""
    queries = sorted({q for _, q, _ in keys})
    texts = generation_texts(store, (k for k, _, _ in keys))
    facts = response_queries(store, queries)
    relevant = supporting_chunk_ids(store, queries)
    passages = chunk_texts(store, sorted({c for _, _, ctx in keys for c in ctx}))
    out = []
    for key, q, ctx in keys:
        f = facts[q]
        reference, kind = _reference(f["reference_answer"], f["answers"])
        out.append(Response(key, q, texts.get(key, ""), f["text"], f["language"], reference,
                            kind, list(ctx), {c: passages.get(c, "") for c in ctx},
                            relevant.get(q, set()) & set(ctx)))
    return out

"""From a plan item to the exact prompt: its context chunks, the truncation rule, the cache key.

Contexts (chunk rowids, in the order they are written):

- base: none;
- oracle: the query's pool row with ``is_oracle = 1`` (the lowest position if several);
- mixed: the query's pool rows with a position, in position order;
- retrieved@k: the retriever's top k over the whole pool (attached collections included).

Truncation rule. A prompt must satisfy ``prompt tokens + max_tokens <= n_ctx`` (the check
``LlamaGenerator.generate`` makes; tokens are counted on the rendered prompt, special tokens
and BOS included). When it does not, context chunks are dropped from the end (the lowest
ranked, or the last in pool order) until it does, and the item is flagged ``truncated`` with
the chunks actually given in its ``context``. A context setting keeps at least one chunk: when
even its first chunk does not fit (or the base prompt, the bare question, does not), the item
records an error and the run goes on.

Untrusted text. The question and the chunks are data: every control-token marker in them
(the generator's own ``control_tokens`` and the common chat markers) is broken by
:func:`models.control_tokens.neutralise` before the template sees them, whatever the backend.
Ordinary text holds none, so its prompts are byte for byte what they were.

Cache key: ``sha256`` of the JSON list ``[model identity key, exact prompt text, sampling
params JSON]`` (:func:`generation_key`). The exact text is what the generator renders
(``generator.render(messages).text``: its chat template, or the few-shot frame of a base
model); a generator that cannot render (an HTTP endpoint) is keyed on the messages' JSON.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Iterable, Sequence

from engine.prompts import Template
from engine.store import Store
from engine.store.datasets import chunk_texts
from engine.store.run_items import pool_rows, query_rows
from models.base import SamplingParams
from models.control_tokens import markers_of, neutralise


class PromptTooLong(Exception):
    """Even the shortest allowed prompt of an item does not fit the model's context."""


@dataclass(frozen=True)
class QueryFacts:
    text: str
    language: str | None
    answers: list[str]
    oracle: list[int]      # chunk rowids with is_oracle = 1, by position
    pool: list[int]        # chunk rowids with a position, in position order


@dataclass(frozen=True)
class FittedPrompt:
    messages: list[dict]
    text: str              # the exact text sent
    tokens: int
    context: list[int]     # chunk rowids given, in order
    truncated: bool


def load_queries(store: Store, rowids: Sequence[int]) -> dict[int, QueryFacts]:
    rowids = list(rowids)
    pools: dict[int, list] = {q: [] for q in rowids}
    for r in pool_rows(store, rowids):
        pools[r[0]].append((r[1], r[2], r[3]))
    out: dict[int, QueryFacts] = {}
    for r in query_rows(store, rowids):
        rows = pools[r["id"]]
        out[r["id"]] = QueryFacts(
            r["text"], r["language"], json.loads(r["answers"] or "[]"),
            oracle=[c for c, _, o in rows if o], pool=[c for c, p, _ in rows if p is not None])
    return out


def load_chunks(store: Store, rowids: Iterable[int]) -> dict[int, str]:
    return chunk_texts(store, rowids)


def context_rowids(kind: str, facts: QueryFacts, ranked: Sequence[int] | None = None,
                   k: int | None = None) -> list[int] | None:
    """The chunk rowids an item's prompt carries (None for base). Raises LookupError when the
    query has no such context (no oracle chunk, an empty pool, no retrieval)."""
    if kind == "base":
        return None
    if kind == "oracle":
        if not facts.oracle:
            raise LookupError("the query has no oracle chunk (no pool row with is_oracle = 1)")
        return facts.oracle[:1]
    if kind == "mixed":
        if not facts.pool:
            raise LookupError("the query has no pool chunks with a position")
        return list(facts.pool)
    if not ranked:
        raise LookupError("the retriever returned nothing for this query")
    return list(ranked[:k])


def render(generator, messages: list[dict], thinking: str = "auto") -> tuple[str, int]:
    """The exact prompt text and its token count as the generator will see them, in thinking
    mode ``thinking`` (a chat template renders its switch: :mod:`models.thinking`)."""
    if hasattr(generator, "render"):
        rendered = (generator.render(messages) if thinking == "auto"
                    else generator.render(messages, thinking))
        return rendered.text, len(rendered.tokens)
    text = json.dumps(messages, ensure_ascii=False, sort_keys=True)
    return text, generator.count_tokens(text)


def context_length(generator) -> int:
    return getattr(generator, "n_ctx", None) or generator.identity.context_length


def fit_prompt(generator, template: Template, facts: QueryFacts, kind: str,
               context: list[int] | None, chunks: dict[int, str],
               max_tokens: int, n_ctx: int | None = None,
               thinking: str = "auto") -> FittedPrompt:
    """The item's prompt under the truncation rule (module docstring), fitted to ``n_ctx``
    (default: the generator's context), rendered in thinking mode ``thinking``."""
    n_ctx = n_ctx or context_length(generator)
    markers = markers_of(generator)

    def build(n: int | None) -> FittedPrompt:
        kept = None if n is None else context[:n]
        messages = template.messages(
            neutralise(facts.text, markers),
            None if kept is None else [neutralise(chunks[c], markers) for c in kept],
            language=facts.language, oracle=kind == "oracle")
        text, tokens = render(generator, messages, thinking)
        return FittedPrompt(messages, text, tokens, kept or [],
                            kept is not None and len(kept) < len(context))

    def fits(p: FittedPrompt) -> bool:
        return p.tokens + max_tokens <= n_ctx

    if context is None:
        prompt = build(None)
        if not fits(prompt):
            raise PromptTooLong(f"the question alone is {prompt.tokens} tokens; with "
                                f"max_tokens {max_tokens} it exceeds the context of {n_ctx}")
        return prompt
    full = build(len(context))
    if fits(full):
        return full
    lo, hi, best = 1, len(context) - 1, None     # the longest prefix of chunks that fits
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = build(mid)
        if fits(candidate):
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    if best is None:
        one = build(1) if len(context) > 1 else full
        raise PromptTooLong(f"even the first context chunk does not fit: {one.tokens} prompt "
                            f"tokens + max_tokens {max_tokens} > context of {n_ctx}")
    return best


def sampling_params(max_tokens: int, seed: int, thinking: str = "auto") -> SamplingParams:
    """Greedy decoding with the run's seed and token cap (METRICS.md §1: mirage-tui's choice
    instead of the reference's temperature 0.1 / top_p 0.1), in the system's thinking mode
    (part of the cache key unless ``auto``)."""
    return SamplingParams(max_tokens=max_tokens, temperature=0.0, top_p=1.0, top_k=40,
                          seed=seed, stop=(), thinking=thinking)


def params_json(params: SamplingParams) -> str:
    return json.dumps(params.key(), sort_keys=True)


def generation_key(model_key: str, prompt_text: str, params: SamplingParams) -> str:
    """The cache key of a generation (module docstring)."""
    payload = json.dumps([model_key, prompt_text, params_json(params)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()

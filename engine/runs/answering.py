"""One item's answer, on a worker thread of :mod:`engine.inflight`: its prompt fitted to the
model's context, then its generation from the cache (stored by any run) or asked of the model.

A server that refuses a prompt as too long, naming its context (an endpoint that reported
none, fitted to 8,192), teaches the run that context: the item is fitted again and asked once
more, and the context waits in :meth:`ItemAnswers.take_learned` for the job's thread to keep
(:mod:`engine.runs.contexts`); a server that counted more prompt tokens than the run's estimate
did makes later fits leave that much room (the slack)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from engine.runs.prompting import (PromptTooLong, context_length, context_rowids, fit_prompt,
                                   generation_key)
from engine.store import Store
from engine.store.generations import generation_text
from models.base import ContextOverflow, SamplingParams


@dataclass(frozen=True)
class Answer:
    """What a worker found for one item: its prompt and text (stored or new), or why not."""

    prompt: object
    gen_key: str | None
    text: str | None
    generation: object
    error: str | None = None


class ItemAnswers:
    """Prompts and generations of a run's items (module docstring); ``contexts`` holds each
    item's context while it is in flight, for its error row."""

    def __init__(self, store: Store, template, params_of: Callable[[object], SamplingParams]):
        self.store, self.template, self.params_of = store, template, params_of
        #                                               params_of(system): its sampling
        self.contexts: dict[tuple, list[int]] = {}    # item key -> context, while in flight
        self.slack: dict[str, int] = {}               # generator -> tokens its server counted
        #                                               beyond the run's estimate (refusals)
        self.learned: dict[str, tuple] = {}           # context key -> (generator, tokens,
        #                                               refusal), for the job's thread to keep

    def answer(self, item, key: tuple, generator, model_key: str, facts, ranked,
               chunks) -> Answer:
        """The item's prompt, and its generation from the cache or the model. Model errors
        propagate (the in-flight policy retries, records or stops); a refusal of an overlong
        prompt that teaches a smaller fit is fitted again and asked once more."""
        name = item.system.generator
        params = self.params_of(item.system)
        limit = self.limit(generator, name)
        try:
            context = context_rowids(item.kind, facts,
                                     ranked.get(item.retriever, {}).get(item.query_rowid),
                                     item.k)
            prompt = fit_prompt(generator, self.template, facts, item.kind, context, chunks,
                                params.max_tokens, n_ctx=limit, thinking=params.thinking)
        except (LookupError, PromptTooLong) as exc:
            return Answer(None, None, None, None, str(exc))
        self.contexts[key] = prompt.context
        try:
            return self.ask(generator, model_key, prompt, params)
        except ContextOverflow as exc:
            self._learn(generator, name, exc, prompt)
            refit = self.limit(generator, name)
            if refit >= limit:
                raise                       # nothing learned: the same prompt would fail
        try:
            prompt = fit_prompt(generator, self.template, facts, item.kind, context, chunks,
                                params.max_tokens, n_ctx=refit, thinking=params.thinking)
        except PromptTooLong as exc:
            return Answer(None, None, None, None, str(exc))
        self.contexts[key] = prompt.context
        try:
            return self.ask(generator, model_key, prompt, params)
        except ContextOverflow as again:
            raise ContextOverflow(f"{again} (asked again after fitting the prompt to {refit} "
                                  "tokens)", again.prompt_tokens, again.context_length) \
                from again

    def ask(self, generator, model_key: str, prompt, params: SamplingParams) -> Answer:
        """The prompt's generation: stored already (by any run), or asked now. The key holds
        ``params`` (its thinking mode too), so an answer of one mode never serves another."""
        gen_key = generation_key(model_key, prompt.text, params)
        text = generation_text(self.store, gen_key)
        if text is not None:
            return Answer(prompt, gen_key, text, None)
        generation = generator.generate(prompt.messages, params)
        return Answer(prompt, gen_key, generation.text, generation)

    def limit(self, generator, name: str) -> int:
        """The context a prompt of ``name`` is fitted to: its window, less the slack."""
        return context_length(generator) - self.slack.get(name, 0)

    def _learn(self, generator, name: str, exc: ContextOverflow, prompt) -> None:
        """From a refusal: the context it names, when smaller than the generator's (an
        endpoint: ``learn_context``), and the tokens the server counted beyond the prompt's
        estimate."""
        learn = getattr(generator, "learn_context", None)
        if learn is None:
            return                          # a local model: its window is known exactly
        if 0 < exc.context_length < context_length(generator):
            learn(exc.context_length)
            key = getattr(generator, "context_key", None)
            if key is not None:
                self.learned[key] = (name, exc.context_length, str(exc))
        if exc.prompt_tokens > prompt.tokens:
            self.slack[name] = max(self.slack.get(name, 0), exc.prompt_tokens - prompt.tokens)

    def take_learned(self) -> list[tuple[str, str, int, str]]:
        """``(context key, generator, tokens, refusal)`` of each context learned since the
        last call (for the job's thread to keep)."""
        out = []
        for key in list(self.learned):
            name, tokens, message = self.learned.pop(key)
            out.append((key, name, tokens, message))
        return out

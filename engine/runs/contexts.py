"""Contexts learned from a server's refusal of an overlong prompt, kept in the workspace.

An endpoint that reports no context window is fitted to the config's or
``models.http.generator.DEFAULT_CONTEXT``. When it refuses a prompt naming its real window (HTTP 400,
"maximum context length is 2048 tokens"), the run fits every prompt to that from then on
(``generator.learn_context``) and keeps it in ``endpoint_contexts`` under the generator's
``context_key`` (its URL without credentials and the model id), so a later run, of any name,
starts from it. A generator without ``learn_context`` (a local model: its window is known) has
nothing to learn.
"""

from __future__ import annotations

from engine.runs.header import now
from engine.store import Store
from engine.store import speeds as speed_rows


def keep_learned_context(store: Store, key: str, tokens: int, message: str) -> None:
    speed_rows.keep_learned_context(store, key, tokens, message[:1000], now())


def apply_learned_context(store: Store, generator) -> int | None:
    """Fit ``generator``'s prompts to the context learned for it before, if any; returns it."""
    key = getattr(generator, "context_key", None)
    learn = getattr(generator, "learn_context", None)
    if key is None or learn is None:
        return None
    tokens = speed_rows.learned_context(store, key)
    if tokens:
        learn(tokens)
    return tokens

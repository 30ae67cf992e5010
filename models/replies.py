"""A model's reply at the adapter boundary: text the engine can store, or a ``ReplyError``.

Every adapter passes what the backend gave as the reply's text through :func:`checked_text`
(llama.cpp, an HTTP endpoint). ``None``, a number, a missing field or text holding a lone
surrogate (a server's JSON may carry ``"\\ud800"``, which no UTF-8 file or SQLite column can
hold) become a :class:`~models.base.ReplyError` naming the model: the engine records it as the
item's error, counts it, goes on, and a resumed run asks again. An empty string is a reply (a
model may stop at once; it is scored as the wrong answer it is): refusing it would make a
greedy, seeded item fail again on every resume.

A reasoning model's reply is then split (:func:`apart`): the answer stays the generation's
text, the thinking goes to its ``reasoning`` with its token count.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from models.base import Generation, ModelUnusable, ReplyError
from models.reasoning import split_reply

_SURROGATE = re.compile("[\ud800-\udfff]")


def checked_text(model: str, text: object, where: str = "") -> str:
    """``text`` when it is a storable string; otherwise a ReplyError naming ``model`` (and
    ``where``: the URL or field it came from)."""
    origin = f"{model}{f' ({where})' if where else ''}"
    if text is None:
        raise ReplyError(f"{origin}: the reply has no text (null)")
    if not isinstance(text, str):
        raise ReplyError(f"{origin}: the reply's text is a {type(text).__name__}, not a string: "
                         f"{str(text)[:80]!r}")
    bad = _SURROGATE.search(text)
    if bad:
        raise ReplyError(f"{origin}: the reply is not valid Unicode (a lone surrogate "
                         f"\\u{ord(bad.group()):04x} at character {bad.start()})")
    return text


def apart(generation: Generation, model: str, *, opened: bool = False,
          reasoning_field: object = None, reasoning_tokens: object = None,
          count_tokens: Callable[[str], int] | None = None) -> Generation:
    """``generation`` with its text split into the answer and the reasoning
    (:func:`models.reasoning.split_reply`): ``opened`` when the rendered prompt opened a
    thinking block, ``reasoning_field`` the server's own (checked like the text), and the
    reasoning's tokens: ``reasoning_tokens`` when the backend counted them (OpenAI's and
    vLLM's ``usage.completion_tokens_details.reasoning_tokens``), else ``count_tokens`` of the
    reasoning (the generator's tokenizer). A reply with no thinking comes back unchanged."""
    field_text = None if reasoning_field is None else checked_text(model, reasoning_field,
                                                                   "its reasoning")
    try:
        split = split_reply(generation.text, field_text, opened=opened,
                            finish_reason=generation.finish_reason)
    except ValueError as exc:               # $MIRAGE_THINK_TAGS malformed: no item can pass
        raise ModelUnusable(str(exc)) from None
    counted = isinstance(reasoning_tokens, int) and not isinstance(reasoning_tokens, bool) \
        and reasoning_tokens > 0
    if not (split.reasoning or split.cut or counted) and split.answer == generation.text:
        return generation
    if counted:
        tokens = reasoning_tokens           # a hosted API may count thinking it does not show
    elif split.reasoning and count_tokens is not None:
        tokens = int(count_tokens(split.reasoning))
    else:
        tokens = 0
    return replace(generation, text=split.answer, reasoning=split.reasoning,
                   reasoning_tokens=tokens, thinking_cut=split.cut)

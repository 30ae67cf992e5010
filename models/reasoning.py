"""A reasoning model's reply split into the answer (what is scored) and its reasoning.

Every backend hands its reply here (:func:`split_reply`): the content text, the separate
reasoning field when the server sent one (OpenAI-compatible ``message.reasoning_content``;
newer vLLM says ``reasoning``), and whether the rendered prompt itself opened a thinking
block (a chat template that ends in ``<think>``: the reply then holds only the closing tag).

What is recognised, with no setting:

- inline tag pairs, in any letter case: ``<think>…</think>`` (Qwen3, DeepSeek-R1 distills,
  Phi-4-mini-reasoning, SmolLM3), ``<thinking>…</thinking>``, ``[THINK]…[/THINK]``
  (Magistral); more pairs from ``$MIRAGE_THINK_TAGS`` (``OPEN:CLOSE`` pairs separated by
  commas, e.g. ``<reason>:</reason>``);
- gpt-oss's harmony channels: ``<|channel|>analysis<|message|>…<|end|>`` is reasoning, the
  last ``<|channel|>final<|message|>…`` the answer.

The rules (lighteval, olmo-eval and lmms-eval agree on them): the answer is the text after
the LAST closing tag (or the content beside a reasoning field), its leading whitespace
stripped (a reply with no thinking at all is returned as it came, byte for byte); everything
before that tag is the reasoning, its first opening tag dropped, stripped at both ends. A
reply whose thinking opened and never closed (an opening tag with no closing tag after it, a
prompt that opened it and a reply with no closing tag, harmony with no final channel) is
**cut while thinking**: its answer is empty (only text written before the unclosed opening
tag, when there is any, is kept as the answer). The split is a pure function of its inputs:
the same reply gives the same answer and reasoning.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

DEFAULT_TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("[THINK]", "[/THINK]"),
)
ENV_TAGS = "MIRAGE_THINK_TAGS"
"""Extra tag pairs: ``OPEN:CLOSE[,OPEN:CLOSE...]`` (read at each split)."""

_HARMONY_CHANNEL = "<|channel|>"
_HARMONY = re.compile(
    r"<\|channel\|>\s*(?P<channel>[A-Za-z_]+)[^<]*?(?:<\|constrain\|>[^<]*)?<\|message\|>"
    r"(?P<text>.*?)(?=<\|end\|>|<\|return\|>|<\|call\|>|<\|start\|>|<\|channel\|>|\Z)",
    re.S)


@dataclass(frozen=True)
class Split:
    """One reply apart: ``answer`` (what every scorer reads), ``reasoning`` (kept for the
    reader, never scored) and ``cut`` (the thinking never closed: no answer came)."""

    answer: str
    reasoning: str = ""
    cut: bool = False


def configured_tags() -> tuple[tuple[str, str], ...]:
    """The default tag pairs, then those of ``$MIRAGE_THINK_TAGS``; a malformed entry is a
    ``ValueError`` naming the variable and the entry."""
    pairs = list(DEFAULT_TAGS)
    for entry in (os.environ.get(ENV_TAGS) or "").split(","):
        if not entry.strip():
            continue
        open_tag, sep, close_tag = entry.strip().partition(":")
        if not sep or not open_tag.strip() or not close_tag.strip():
            raise ValueError(f"${ENV_TAGS}: {entry.strip()!r} is not OPEN:CLOSE "
                             "(e.g. <reason>:</reason>)")
        pair = (open_tag.strip(), close_tag.strip())
        if pair not in pairs:
            pairs.append(pair)
    return tuple(pairs)


def split_reply(content: str, reasoning_field: str | None = None, *,
                opened: bool = False, finish_reason: str | None = None,
                tags: tuple[tuple[str, str], ...] | None = None) -> Split:
    """``content`` apart (module docstring); ``reasoning_field`` (the server's own) comes
    first in the reasoning; ``opened``: the prompt ended inside a thinking block. With
    ``finish_reason`` ``'length'``, a reply with reasoning and no answer is cut while thinking
    too (a server that returns the thinking in its own field and an empty content)."""
    pairs = configured_tags() if tags is None else tags
    field_text = (reasoning_field or "").strip()
    inline = _split_harmony(content) if _HARMONY_CHANNEL in content else None
    if inline is None:
        inline = _split_tags(content, pairs, opened)
    reasoning = "\n\n".join(part for part in (field_text, inline.reasoning) if part)
    cut = inline.cut or (finish_reason == "length" and bool(reasoning)
                         and not inline.answer.strip())
    # the content after a server's own reasoning field is the text after the thinking: its
    # leading blanks go, as after a closing tag (vLLM's parsers leave "\n\n" there)
    answer = inline.answer.lstrip() if field_text else inline.answer
    return Split(answer, reasoning, cut)


def _split_tags(content: str, pairs, opened: bool) -> Split:
    lower = content.lower()
    close_at, close_end = -1, -1
    for _, close_tag in pairs:
        at = lower.rfind(close_tag.lower())
        if at > close_at or (at == close_at and at >= 0 and at + len(close_tag) > close_end):
            close_at, close_end = at, at + len(close_tag)
    if close_at >= 0:
        # an opening tag after the last closing one: thinking again, never closed
        before, after = _drop_open(content[:close_at], pairs).strip(), content[close_end:]
        reopened = _first_open(after, pairs)
        if reopened is not None:
            return Split(after[:reopened[0]].strip(),
                         _join(before, after[reopened[1]:]), cut=True)
        return Split(after.lstrip(), before)
    found = _first_open(content, pairs)
    if found is not None:
        at, end = found
        return Split(content[:at].strip(), content[end:].strip(), cut=True)
    if opened:
        return Split("", content.strip(), cut=True)
    return Split(content)


def _first_open(text: str, pairs) -> tuple[int, int] | None:
    """Where the first opening tag in ``text`` is: ``(start, end)``, or None."""
    lower = text.lower()
    best = None
    for open_tag, _ in pairs:
        at = lower.find(open_tag.lower())
        if at >= 0 and (best is None or at < best[0]
                        or (at == best[0] and at + len(open_tag) > best[1])):
            best = (at, at + len(open_tag))
    return best


def _drop_open(text: str, pairs) -> str:
    """``text`` less its first opening tag (the reasoning keeps any nested ones)."""
    found = _first_open(text, pairs)
    return text if found is None else text[:found[0]] + text[found[1]:]


def _join(before: str, after: str) -> str:
    return "\n\n".join(p for p in (before.strip(), after.strip()) if p)


def _split_harmony(content: str) -> Split | None:
    """gpt-oss's channels: analysis (and commentary) are reasoning, the last final channel
    the answer; None when no channel parses (then the tags are tried)."""
    parts = [(m.group("channel").lower(), m.group("text")) for m in _HARMONY.finditer(content)]
    if not parts:
        return None
    finals = [text for channel, text in parts if channel == "final"]
    reasoning = "\n\n".join(t.strip() for c, t in parts if c != "final" and t.strip())
    if not finals:
        return Split("", reasoning, cut=True)
    return Split(finals[-1].strip(), reasoning)


def prompt_opens_thinking(prompt_text: str, tags: tuple[tuple[str, str], ...] | None = None
                          ) -> bool:
    """Whether a rendered prompt ends with an opening tag (trailing whitespace aside): the
    chat template opened ``<think>`` for the model (DeepSeek-R1's does), so its reply holds
    only the closing tag. A template that closes an empty block (Qwen3 with thinking off)
    does not."""
    pairs = configured_tags() if tags is None else tags
    tail = prompt_text.rstrip().lower()
    return any(tail.endswith(open_tag.lower()) for open_tag, _ in pairs)

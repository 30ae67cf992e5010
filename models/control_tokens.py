"""Untrusted text into a prompt: data, never chat control tokens.

A prompt is built from trusted parts (a template's wording) and untrusted ones (a dataset's
questions and passages, the answers a judge compares, model replies fed back). Every backend
this project talks to turns the text into tokens with special tokens parsed: llama.cpp here
(``special=True``, so that the chat template's own markers become the control tokens the
model was trained on), a llama.cpp server, and any OpenAI-compatible endpoint rendering the
chat template on its side. A passage holding ``<|im_start|>system ...`` would open a real turn
and give the data the voice of the system prompt.

The one rule, for every backend: before a prompt is built, each untrusted part goes through
:func:`neutralise`, which breaks every marker it holds by putting a ZERO WIDTH SPACE (U+200B)
after the marker's first character: ``<|im_start|>`` becomes ``<\\u200b|im_start|>``. A human
reads the same text; no tokenizer matches the control token any more (special-token matching
is on the exact string), and the rest of the text tokenizes as before. U+200B is chosen over
rewriting the brackets (``<|`` → ``‹|``) because it works for every marker shape (``[INST]``,
``<<SYS>>``, ``<s>``) with one rule and leaves the visible characters as they were.

The markers are the model's own control tokens where they are known (a GGUF's vocabulary,
``LlamaGenerator.control_tokens``) plus :data:`GENERIC_MARKERS`, the chat markers of the common
model families, for endpoints whose vocabulary is not known. Ordinary text holds none of them,
so its prompts are byte for byte what they were (the cache keys, and the parity with MIRAGE's
reference prompts, depend on it).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Mapping

ZWSP = "\u200b"

GENERIC_MARKERS: tuple[str, ...] = (
    # ChatML (Qwen, SmolLM, Hermes, ...)
    "<|im_start|>", "<|im_end|>", "<|im_sep|>", "<|endoftext|>",
    # Gemma
    "<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>",
    # Llama 3
    "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|eot_id|>", "<|eom_id|>", "<|python_tag|>", "<|finetune_right_pad_id|>",
    # Llama 2, Mistral
    "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "<s>", "</s>", "<unk>",
    "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[TOOL_CALLS]",
    # Phi
    "<|system|>", "<|user|>", "<|assistant|>", "<|end|>",
    # DeepSeek, GLM, Command-R, Granite, OLMo
    "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
    "[gMASK]", "<sop>", "<eop>", "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
    "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|SYSTEM_TOKEN|>",
    "<|start_of_role|>", "<|end_of_role|>",
)


def usable_markers(markers: Iterable[str]) -> tuple[str, ...]:
    """Markers worth matching: at least two characters and not blank (a vocabulary may mark
    an empty or one-byte token as control; breaking those would change ordinary text)."""
    return tuple(sorted({m for m in markers if len(m) >= 2 and m.strip()},
                        key=lambda m: (-len(m), m)))


@lru_cache(maxsize=16)
def _pattern(markers: tuple[str, ...]) -> re.Pattern | None:
    # longest first, so that a marker inside a longer one cannot break the longer one wrongly
    usable = usable_markers(markers)
    return re.compile("|".join(map(re.escape, usable))) if usable else None


def neutralise(text: str, markers: Iterable[str] = GENERIC_MARKERS) -> str:
    """``text`` with every marker broken by a ZERO WIDTH SPACE after its first character
    (module docstring); text without markers comes back as it is."""
    if not text:
        return text
    pattern = _pattern(tuple(markers))
    if pattern is None:
        return text
    return pattern.sub(lambda m: m.group()[0] + ZWSP + m.group()[1:], text)


def markers_of(generator: object) -> tuple[str, ...]:
    """The markers to break for ``generator``: its own ``control_tokens`` (when it declares
    them) with :data:`GENERIC_MARKERS`."""
    own = tuple(getattr(generator, "control_tokens", ()) or ())
    return tuple(dict.fromkeys(own + GENERIC_MARKERS))


def neutralise_fields(fields: Mapping[str, object], markers: Iterable[str]) -> dict:
    """``fields`` with every string value neutralised (other values as they are)."""
    markers = tuple(markers)
    return {k: neutralise(v, markers) if isinstance(v, str) else v for k, v in fields.items()}

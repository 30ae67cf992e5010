"""The few-shot frame: chat messages as a completion prompt for a base model (one without a
chat template), versioned so that a change to it changes every cache key that holds its text.
"""

from __future__ import annotations

import re
from typing import Sequence

FEW_SHOT_VERSION = "qa-few-shot-v1"
FEW_SHOT_HEADER = ("Answer each question with a short, factual answer. When a context is "
                   "given, answer from the context.")
FEW_SHOT_EXAMPLES: tuple[tuple[str, str | None, str], ...] = (
    ("What is the capital of Japan?", None, "Tokyo"),
    ("Who wrote the novel Pride and Prejudice?", None, "Jane Austen"),
    ("Which metal is liquid at room temperature?",
     "Mercury is a chemical element with the symbol Hg. It is the only metal that is liquid "
     "at standard temperature and pressure.", "Mercury"),
)
FEW_SHOT_STOP = ("\nQuestion:",)
"""Where a base model, having answered, starts the next example of the frame."""

_LEADING_QUESTION = re.compile(r"^\s*question\s*:\s*", re.IGNORECASE)
_TRAILING_ANSWER = re.compile(r"\s*answer\s*:\s*$", re.IGNORECASE)


def _question_text(content: str) -> str:
    # Prompts written for chat models often carry their own "Question:" ... "Answer:" cue;
    # keep one of each so the frame does not say "Question: Question : ...".
    return _TRAILING_ANSWER.sub("", _LEADING_QUESTION.sub("", content)).strip()


def render_few_shot(messages: Sequence[dict]) -> str:
    """Chat messages as a completion prompt for a base model (frame ``FEW_SHOT_VERSION``).

    The system messages, then the fixed header and examples, then earlier user/assistant turns
    as Question/Answer pairs, then the last user message as the open question::

        {system}
        {FEW_SHOT_HEADER}

        Question: ...
        Answer: ...

        Question: {the last user message}
        Answer:
    """
    system = [m["content"].strip() for m in messages if m.get("role") == "system"]
    turns = [m for m in messages if m.get("role") != "system"]
    parts = ["\n".join(system + [FEW_SHOT_HEADER]), "\n\n"]
    for question, context, answer in FEW_SHOT_EXAMPLES:
        parts.append(f"Question: {question}\n")
        if context:
            parts.append(f"Context: {context}\n")
        parts.append(f"Answer: {answer}\n\n")
    for m in turns:
        if m.get("role") == "assistant":
            parts.append(f"Answer: {m['content'].strip()}\n\n")
        else:
            parts.append(f"Question: {_question_text(m['content'])}\n")
    if not turns or turns[-1].get("role") == "assistant":
        parts.append("Question: \n")
    parts.append("Answer:")
    return "".join(parts)


def few_shot_prompt(question: str, system: str | None = None) -> str:
    """The few-shot frame around one question (what a base model is sent for it)."""
    messages = ([{"role": "system", "content": system}] if system else [])
    return render_few_shot(messages + [{"role": "user", "content": question}])

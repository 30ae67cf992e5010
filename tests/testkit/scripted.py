"""The models at the engine's edge in every test: one scripted generator and one scripted judge.

:class:`ScriptedGenerator` answers ``answer(prompt text)`` (by default the start of the first
context chunk, ``"I don't know"`` without one); its options make the variants the tests need:
``delay`` or ``speed`` (a timed model that sleeps as a real one of that speed would and
reports those seconds), ``gate`` with ``open_calls`` (calls after the first ``open_calls``
wait until the test opens the gate, so a test can act mid-run however slow the machine is),
``fail_on`` (calls that crash), ``usage`` (the token counts and seconds it reports).

:class:`ScriptedJudge` replies ``script(sections of the prompt)`` and reads label
probabilities from ``probs(sections, labels)``; either may be a list, answered in turn.
Both log every call in ``calls``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Callable, NamedTuple

from models.base import Generation, ModelIdentity, ModelUnusable

Usage = tuple[int, int, int, float]   # prompt tokens, completion tokens, evaluated, seconds


class Rendered:
    def __init__(self, text: str):
        self.text = text
        self.tokens = list(range(len(text) // 4 + 1))


class ScriptedModel:
    """A chat model with no model behind it: its identity is its name and ``sha``, it renders
    messages as ``<role>content`` and counts a token per four characters."""

    chat = True
    supports_label_probs = False
    device = "cpu"
    n_ctx = 8192
    backend = "scripted"

    def __init__(self, name: str, sha: str, *, n_ctx: int | None = None,
                 backend: str | None = None) -> None:
        self.name, self.sha = name, sha
        if n_ctx is not None:
            self.n_ctx = n_ctx
        if backend is not None:
            self.backend = backend

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, self.sha, None, self.n_ctx, self.backend)

    def render(self, messages) -> Rendered:
        return Rendered("".join(f"<{m['role']}>{m['content']}" for m in messages))

    def count_tokens(self, text: str) -> int:
        return len(text) // 4


# --------------------------------------------------------------------------- generator

def context_start(text: str, cut: int = 60) -> str:
    """The start of the prompt's first context chunk, or "I don't know" without context."""
    _, _, context = text.partition("Context : ")
    return context.lstrip("1. ")[:cut] if context else "I don't know"


def half_evaluated(text: str) -> Usage:
    """A token per four characters of the prompt, half of them evaluated (as if the rest
    were a cached prefix); seven generated in a millisecond."""
    return len(text) // 4 + 1, 7, len(text) // 8, 0.001


class ScriptedGenerator(ScriptedModel):
    """A generator that answers ``answer(prompt text)`` (module docstring for the options).
    ``calls`` holds the text of every prompt, in order. With ``renders=False`` it has no
    ``render`` (the engine then counts tokens of the messages' JSON) and reads the messages'
    contents joined."""

    def __init__(self, name: str = "scripted-fake", answer: Callable[[str], str] = context_start,
                 *, sha: str = "a" * 64, n_ctx: int | None = None, backend: str | None = None,
                 usage: Callable[[str], Usage] = half_evaluated, delay: float = 0.0,
                 speed: tuple[float, float] | None = None,
                 gate: threading.Event | None = None, open_calls: int = 0,
                 fail_on=(), renders: bool = True) -> None:
        super().__init__(name, sha, n_ctx=n_ctx, backend=backend)
        self.answer, self.usage, self.delay, self.speed = answer, usage, delay, speed
        self.gate, self.open_calls = gate, open_calls
        self.fail_on, self.renders = set(fail_on), renders
        self.calls: list[str] = []
        self.lock = threading.Lock()

    @property
    def render(self):
        if not self.renders:        # hasattr(model, "render") is then false, as the engine asks
            raise AttributeError("render")
        return super().render

    def _text(self, messages) -> str:
        if self.renders:
            return self.render(messages).text
        return "".join(m["content"] for m in messages)

    def generate(self, messages, params) -> Generation:
        text = self._text(messages)
        with self.lock:
            self.calls.append(text)
            call = len(self.calls)
        if call in self.fail_on:
            raise ModelUnusable(f"{self.name}: scripted crash on call {call}")
        if self.gate is not None and call > self.open_calls:
            self.gate.wait(60)
        time.sleep(self.delay)
        answer = self.answer(text)
        prompt_tokens, completion_tokens, evaluated, seconds = self.usage(text)
        extra = {}
        if self.speed is not None:                 # as llama.cpp reports its timings
            prompt_s, gen_s = evaluated / self.speed[0], completion_tokens / self.speed[1]
            time.sleep(prompt_s + gen_s)
            seconds = prompt_s + gen_s
            extra = {"prompt_seconds": prompt_s, "generation_seconds": gen_s}
        return Generation(text=answer, prompt_tokens=prompt_tokens,
                          completion_tokens=completion_tokens,
                          prompt_tokens_evaluated=evaluated, seconds=seconds,
                          finish_reason="stop", device="cpu", prompt_text=text, extra=extra)


# --------------------------------------------------------------------------- judge

def sections(prompt) -> dict[str, str]:
    """The template's ``[Header]`` sections of a judge prompt (chat messages or text), and the
    system message, if any, under ``System``."""
    text = prompt[-1]["content"] if not isinstance(prompt, str) else prompt
    parts = re.split(r"^\[([^\]\n]+)\]\n", text, flags=re.M)
    found = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if not isinstance(prompt, str) and prompt[0]["role"] == "system":
        found.setdefault("System", prompt[0]["content"])
    return found


def strength(answer: str) -> int:
    return 2 * ("gen-b" in answer) + ("I don't know" not in answer)


def prefer_stronger(s: dict[str, str]) -> str:
    """The arena tests' judge: gen-b's answers beat gen-a's, an answer beats a decline."""
    a, b = s.get("Answer A", s.get("Answer 1")), s.get("Answer B", s.get("Answer 2"))
    first, second, tie = ("A", "B", "C") if "Answer A" in s else ("1", "2", "0")
    if strength(a) == strength(b):
        return tie
    return f"{first if strength(a) > strength(b) else second} - it is better."


class JudgeCall(NamedTuple):
    what: str            # 'generate' or 'label_probs'
    prompt: object       # the chat messages or the text
    detail: object       # the labels asked for, or the sampling params


def _in_turn(script):
    """A script that is a list answers with its items in turn."""
    if isinstance(script, list):
        return lambda *args: script.pop(0)
    return script


class ScriptedJudge(ScriptedModel):
    """A judge model: replies ``script(sections)`` (``None``: it never generates) and, with
    ``probs``, reads label probabilities ``probs(sections, labels)`` (a list item that is an
    exception is raised; a dict is read for the labels asked, 0 for a missing one). The
    calls listed in ``fail_on`` crash. Every call is logged in ``calls``."""

    def __init__(self, script=prefer_stronger, *, probs=None, name: str = "fake-judge",
                 sha: str = "j" * 64, n_ctx: int = 4096, backend: str = "fake",
                 chat: bool = True, supports_label_probs: bool | None = None,
                 fail_on=()) -> None:
        super().__init__(name, sha, n_ctx=n_ctx, backend=backend)
        self.script, self.probs = _in_turn(script), _in_turn(probs)
        self.chat = chat
        self.supports_label_probs = (probs is not None if supports_label_probs is None
                                     else supports_label_probs)
        self.fail_on = set(fail_on)
        self.calls: list[JudgeCall] = []

    def _log(self, what: str, prompt, detail) -> None:
        self.calls.append(JudgeCall(what, prompt, detail))
        if len(self.calls) in self.fail_on:
            raise ModelUnusable(f"{self.name}: scripted crash on call {len(self.calls)}")

    def label_probs(self, prompt, labels):
        self._log("label_probs", prompt, tuple(labels))
        if self.probs is None:
            raise NotImplementedError("this judge reads no probabilities")
        result = self.probs(sections(prompt), list(labels))
        if isinstance(result, BaseException):
            raise result
        return {label: result.get(label, 0.0) for label in labels}

    def generate(self, prompt, params=None) -> Generation:
        self._log("generate", prompt, params)
        if self.script is None:
            raise AssertionError("this judge reads probabilities, it never generates")
        return Generation(self.script(sections(prompt)), 100, 3, 100, 0.001, "stop", "cpu", "")

    def prompts(self) -> list[str]:
        """Every prompt it was given, as JSON."""
        return [json.dumps(c.prompt, sort_keys=True) for c in self.calls]


def passage_judge(p_yes: dict[str, float], *, capital: float = 0.7, **options) -> ScriptedJudge:
    """A yes/no judge (a judge reranker's model) that never generates: P(yes) for a passage is
    that of the first key of ``p_yes`` the passage holds, ``capital`` of each label's mass on
    its capitalised spelling (as a chat model puts it), normalised over the labels asked."""

    def probs(s: dict[str, str], labels) -> dict[str, float]:
        p = next(v for key, v in p_yes.items() if key in s["Passage"])
        mass = {"Yes": capital * p, "yes": (1 - capital) * p,
                "No": capital * (1 - p), "no": (1 - capital) * (1 - p)}
        total = sum(mass[label] for label in labels)
        return {label: mass[label] / total for label in labels}

    return ScriptedJudge(None, probs=probs, **{"name": "scripted", "sha": "0" * 64,
                                               "n_ctx": 2048, **options})

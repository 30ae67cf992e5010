"""A generator with a known speed, for the time-estimate tests: it sleeps for every prompt token
it evaluates and every token it generates, so a run of it takes a time that can be worked out
from the plan (``prompt_tokens / prompt_tps + completion_tokens / gen_tps`` an item)."""

from __future__ import annotations

import threading
import time

from models.base import Generation
from testkit.scripted_runs import ScriptedModel


class TimedGenerator(ScriptedModel):
    """Answers with the start of its first context chunk (``"I don't know"`` without one),
    generating ``answer_tokens`` tokens; it sleeps ``prompt/prompt_tps + answer/gen_tps``
    seconds a call, and reports those seconds (split into prompt and generation) as llama.cpp
    would. With a ``gate``, calls after the first ``open_calls`` wait until the gate opens."""

    def __init__(self, name: str, *, prompt_tps: float = 4000.0, gen_tps: float = 400.0,
                 answer_tokens: int = 8, gate: threading.Event | None = None,
                 open_calls: int = 0, sha: str = "7" * 64) -> None:
        super().__init__(name, sha)      # another sha: another model to the generation cache
        self.prompt_tps, self.gen_tps, self.answer_tokens = prompt_tps, gen_tps, answer_tokens
        self.gate, self.open_calls = gate, open_calls
        self.calls = 0
        self.lock = threading.Lock()

    def generate(self, messages, params) -> Generation:
        with self.lock:
            self.calls += 1
            call = self.calls
        if self.gate is not None and call > self.open_calls:
            self.gate.wait(60)
        text = self.render(messages).text
        prompt_tokens = self.count_tokens(text) + 1
        prompt_s, gen_s = prompt_tokens / self.prompt_tps, self.answer_tokens / self.gen_tps
        time.sleep(prompt_s + gen_s)
        _, _, context = text.partition("Context : ")
        answer = context.lstrip("1. ")[:60] if context else "I don't know"
        return Generation(text=answer, prompt_tokens=prompt_tokens,
                          completion_tokens=self.answer_tokens,
                          prompt_tokens_evaluated=prompt_tokens, seconds=prompt_s + gen_s,
                          finish_reason="stop", device="cpu", prompt_text=text,
                          extra={"prompt_seconds": prompt_s, "generation_seconds": gen_s})

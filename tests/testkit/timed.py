"""A generator with a known speed, for the time-estimate tests: it sleeps for every prompt token
it evaluates and every token it generates, so a run of it takes a time that can be worked out
from the plan (``prompt_tokens / prompt_tps + completion_tokens / gen_tps`` an item)."""

from __future__ import annotations

import threading

from testkit.scripted import ScriptedGenerator


class TimedGenerator(ScriptedGenerator):
    """The scripted generator, timed (``speed``): the start of its first context chunk
    (``"I don't know"`` without one) in ``answer_tokens`` tokens; it sleeps
    ``prompt/prompt_tps + answer/gen_tps`` seconds a call and reports those seconds (split
    into prompt and generation) as llama.cpp would. With a ``gate``, calls after the first
    ``open_calls`` wait until the gate opens."""

    def __init__(self, name: str, *, prompt_tps: float = 4000.0, gen_tps: float = 400.0,
                 answer_tokens: int = 8, gate: threading.Event | None = None,
                 open_calls: int = 0, sha: str = "7" * 64) -> None:
        def usage(text: str):
            n = self.count_tokens(text) + 1
            return n, answer_tokens, n, 0.0

        # another sha: another model to the generation cache
        super().__init__(name, sha=sha, usage=usage, speed=(prompt_tps, gen_tps), gate=gate,
                         open_calls=open_calls)


class Clock:
    """A clock a test moves by hand (``clock.now += 5``), for the estimators' ``clock=``."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

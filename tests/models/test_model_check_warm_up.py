"""A model check times a warm generation. The first call after a load
pages the weights in and starts the threads (on a busy 2-core machine SmolLM2's first call ran
4× slower than its second), and the run estimates start from the check's speeds."""

from __future__ import annotations

from models.base import Generation
from models.check import CHECK_MESSAGES, check_model


class FirstCallSlow:
    """A generator at the edge: its first call reports 1 generated token a second, every
    later one 40."""

    name, chat, device = "first-call-slow", True, "cpu"

    def __init__(self) -> None:
        self.calls: list[tuple[list, int]] = []

    def generate(self, messages, params) -> Generation:
        self.calls.append((messages, params.max_tokens))
        rate = 1.0 if len(self.calls) == 1 else 40.0
        tokens = params.max_tokens
        return Generation(text="Jupiter", prompt_tokens=20, completion_tokens=tokens,
                          prompt_tokens_evaluated=20, seconds=tokens / rate,
                          finish_reason="length", device="cpu",
                          extra={"generation_tokens_per_s": rate, "prompt_tokens_per_s": rate})


def test_the_check_times_a_generation_after_a_warm_up(monkeypatch):
    import models.catalog

    model = FirstCallSlow()
    monkeypatch.setattr(models.catalog, "resolve_model",
                        lambda name, folders=None: models.catalog.ModelRef(name, "unknown"))
    monkeypatch.setattr(models.catalog, "load_generator", lambda name, **kw: model)
    result = check_model("first-call-slow", max_tokens=8)
    assert result["ok"], result
    assert [tokens for _, tokens in model.calls] == [1, 8]
    assert model.calls[0][0] != CHECK_MESSAGES and model.calls[1][0] == CHECK_MESSAGES
    assert result["tokens_per_s"] == 40.0 and result["prompt_tokens_per_s"] == 40.0


def test_the_check_times_a_prompt_as_long_as_a_run_item():
    """A one-line prompt's per-token rate is mostly fixed costs: it made the estimate before a
    run's first item several times long. The check's prompt is a passage and a question, a
    few hundred tokens (about 4 characters a token), like a MIRAGE item's."""
    content = CHECK_MESSAGES[0]["content"]
    assert len(content) >= 1000 and "Context: " in content and "Question: " in content

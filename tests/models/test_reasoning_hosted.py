"""A local GGUF model's thinking is split where it is generated and crosses the model host's
HTTP hop intact: a raw prompt that opens ``<think>`` (as a reasoning model's chat template
does) gives the packaged SmolLM2 a reply that is all thinking, cut at the token limit."""

from __future__ import annotations

from testkit.hosts import hosting  # noqa: F401 - a fixture

from models.base import SamplingParams
from models.catalog import load_generator
from models.host.client import HostedGenerator

SMOL = "smollm2-135m-instruct"
OPENED = "Question: what is the capital of France?\n<think>\n"


def test_hosted_thinking_is_the_in_process_thinking(hosting):
    hosted = load_generator(SMOL, n_threads=1)
    assert isinstance(hosted, HostedGenerator)
    hosting.append(hosted.host.pid)
    local = load_generator(SMOL, hosted=False, n_threads=1)
    params = SamplingParams(max_tokens=8)
    a, b = hosted.generate(OPENED, params), local.generate(OPENED, params)
    assert (a.text, a.reasoning, a.reasoning_tokens, a.thinking_cut, a.finish_reason) == \
        (b.text, b.reasoning, b.reasoning_tokens, b.thinking_cut, b.finish_reason)
    assert a.text == "" and a.thinking_cut and a.finish_reason == "length"
    assert a.reasoning and 0 < a.reasoning_tokens <= 8
    assert a.reasoning_tokens == local.count_tokens(a.reasoning)
    # a prompt that opens nothing: a plain answer, no reasoning
    plain = hosted.generate("The capital of France is", params)
    assert (plain.reasoning, plain.reasoning_tokens, plain.thinking_cut) == ("", 0, False)

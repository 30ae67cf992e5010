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


def test_a_host_of_an_earlier_version_is_split_on_the_client():
    from models.host.client import generation_from_host

    sent = {"text": "<think>\nhmm\n</think>\n\nParis", "prompt_tokens": 5,
            "completion_tokens": 9, "prompt_tokens_evaluated": 5, "seconds": 0.1,
            "finish_reason": "stop", "device": "cpu", "prompt_text": "Q?", "extra": {}}
    old = generation_from_host(dict(sent), "m", lambda text: len(text.split()))
    assert (old.text, old.reasoning, old.reasoning_tokens) == ("Paris", "hmm", 1)
    # a host of this version split already: its answer is taken as sent (never split twice)
    new = generation_from_host({**sent, "text": "Paris", "reasoning": "hmm",
                                "reasoning_tokens": 1, "thinking_cut": False,
                                "from_a_newer_host": 1}, "m", None)
    assert (new.text, new.reasoning, new.reasoning_tokens) == ("Paris", "hmm", 1)
    opened = generation_from_host({**sent, "text": "hmm", "prompt_text": "Q?<think>\n",
                                   "finish_reason": "length"}, "m", lambda text: 1)
    assert (opened.text, opened.reasoning, opened.thinking_cut) == ("", "hmm", True)

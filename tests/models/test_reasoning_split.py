"""A reasoning model's reply split into the answer and its reasoning (models/reasoning.py):
every shape servers and chat templates give, and the neighbours of each."""

from __future__ import annotations

import pytest

from models.reasoning import Split, prompt_opens_thinking, split_reply


@pytest.mark.parametrize("content, expected", [
    # a reply with no tag is returned byte for byte (whitespace too)
    ("Paris", Split("Paris")),
    ("  Paris \n", Split("  Paris \n")),
    ("", Split("")),
    # the default pair, the answer's leading whitespace stripped, its trailing kept
    ("<think>\nThe capital is Paris.\n</think>\n\nParis", Split("Paris", "The capital is Paris.")),
    ("<think>x</think>Paris \n", Split("Paris \n", "x")),
    # upper case and mixed case tags
    ("<THINK>x</THINK> Paris", Split("Paris", "x")),
    ("<Think>x</tHiNk> Paris", Split("Paris", "x")),
    # the other pairs recognised with no setting
    ("<thinking>x</thinking>\nParis", Split("Paris", "x")),
    ("[THINK]x[/THINK]Paris", Split("Paris", "x")),
    ("[think]x[/think]Paris", Split("Paris", "x")),
    # an empty think block (Qwen3 with thinking off echoes it)
    ("<think>\n\n</think>\n\nParis", Split("Paris", "")),
    # text before <think> is reasoning's, not the answer's
    ("Let me see. <think>x</think> Paris", Split("Paris", "Let me see. x")),
    # nested: the answer is after the LAST closing tag
    ("<think>a <think>b</think> c</think> Paris", Split("Paris", "a <think>b</think> c")),
    # two blocks: after the last one
    ("<think>a</think> draft <think>b</think> Paris", Split("Paris", "a</think> draft <think>b")),
    # a closing tag alone (the template opened the block)
    ("reasoning here</think>\n\nParis", Split("Paris", "reasoning here")),
    # thinking that never closed: empty answer, cut
    ("<think>The capital of France is", Split("", "The capital of France is", cut=True)),
    ("<think>", Split("", "", cut=True)),
    # an answer, then thinking again that never closed: the answer before it, cut
    ("<think>a</think> Paris <think>more", Split("Paris", "a\n\nmore", cut=True)),
    # a tag word without brackets is text
    ("I think Paris", Split("I think Paris")),
    ("think> Paris", Split("think> Paris")),
])
def test_inline_tags(content, expected):
    assert split_reply(content) == expected


def test_prompt_opened_thinking():
    assert split_reply("I recall Paris.\n</think>\n\nParis", opened=True) == \
        Split("Paris", "I recall Paris.")
    assert split_reply("I recall the capital", opened=True) == \
        Split("", "I recall the capital", cut=True)
    # the same words without the prompt's opening tag are an answer
    assert split_reply("I recall the capital") == Split("I recall the capital")


def test_reasoning_field():
    # vLLM / llama-server --reasoning-format / LM Studio: the field and the content apart
    assert split_reply("Paris", "The capital is Paris.") == Split("Paris", "The capital is Paris.")
    assert split_reply("", "  thinking...  ") == Split("", "thinking...")
    assert split_reply("Paris", None) == Split("Paris")
    assert split_reply("Paris", "") == Split("Paris")
    # the content after the thinking loses its leading blanks, as after a closing tag
    assert split_reply("\n\nParis \n", "x") == Split("Paris \n", "x")
    assert split_reply("\n\nParis", "  ") == Split("\n\nParis")   # no thinking: as it came
    # a field and inline tags both: the field first
    assert split_reply("<think>b</think>Paris", "a") == Split("Paris", "a\n\nb")


def test_harmony_channels():
    reply = ("<|channel|>analysis<|message|>User asks capital. It's Paris.<|end|>"
             "<|start|>assistant<|channel|>final<|message|>Paris<|return|>")
    assert split_reply(reply) == Split("Paris", "User asks capital. It's Paris.")
    assert split_reply("<|start|>assistant<|channel|>final<|message|> Paris") == Split("Paris")
    cut = "<|channel|>analysis<|message|>User asks capital"
    assert split_reply(cut) == Split("", "User asks capital", cut=True)
    tool = ("<|channel|>commentary to=functions.x <|constrain|>json<|message|>{}<|call|>"
            "<|channel|>final<|message|>Paris<|end|>")
    assert split_reply(tool) == Split("Paris", "{}")


def test_configured_pairs(monkeypatch):
    monkeypatch.setenv("MIRAGE_THINK_TAGS", "<reason>:</reason>, <<:>>")
    assert split_reply("<reason>x</reason> Paris") == Split("Paris", "x")
    assert split_reply("<<x>>Paris") == Split("Paris", "x")
    assert split_reply("<think>x</think>Paris") == Split("Paris", "x")
    monkeypatch.setenv("MIRAGE_THINK_TAGS", "<reason>")
    with pytest.raises(ValueError, match=r"\$MIRAGE_THINK_TAGS: '<reason>' is not OPEN:CLOSE"):
        split_reply("Paris")
    assert split_reply("<r>x</r>Paris", tags=(("<r>", "</r>"),)) == Split("Paris", "x")


def test_same_reply_same_split():
    reply = "<think>\nx y\n</think>\n\nParis"
    assert split_reply(reply) == split_reply(reply)
    # splitting an answer again changes nothing (a resplit of a split run is a no-op)
    once = split_reply(reply)
    assert split_reply(once.answer) == Split(once.answer)


@pytest.mark.parametrize("prompt, opened", [
    ("<|im_start|>assistant\n<think>\n", True),
    ("<｜Assistant｜><think>", True),
    ("<|im_start|>assistant\n<THINK>  \n", True),
    ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),     # Qwen3, thinking off
    ("<|im_start|>assistant\n", False),
    ("Context: a <think> b\nAnswer:", False),                      # a tag in the context
])
def test_prompt_opens_thinking(prompt, opened):
    assert prompt_opens_thinking(prompt) is opened

"""Thinking on or off: a reasoning model's own switch, found in its chat template and used.

A run asks each generator for a *thinking mode*: ``auto`` (the model's default: nothing is
sent, so every prompt and request is byte for byte what it was before modes existed), ``on``
or ``off``. How a mode reaches the model depends on the switch the model has
(:func:`template_switch` reads it from the GGUF's ``tokenizer.chat_template``):

- ``enable_thinking`` (Qwen3, SmolLM3, ...): the chat-template variable
  ``enable_thinking`` (false for ``off``, true for ``on``) when the template is rendered;
- ``reasoning_effort`` (gpt-oss): the template variable ``reasoning_effort``, ``"low"`` for
  ``off`` (gpt-oss cannot stop reasoning; low is the closest) and ``"high"`` for ``on``;
- ``/no_think`` (templates that mention the soft switch but take no variable): ``/no_think``
  or ``/think`` appended to the last user message;
- ``none``: the template has no switch (a model that never thinks, or one that always does:
  an R1 distill whose template opens ``<think>``); the mode changes nothing sent, and the
  plan says so.

An endpoint's template is not visible from here: ``on``/``off`` send
``chat_template_kwargs: {"enable_thinking": ...}`` (the convention of vLLM, llama-server and
SGLang, which pass it to the template), and for a gpt-oss model id also ``reasoning_effort``
(:func:`endpoint_fields`). Whether an endpoint thinks by default is learned from its replies.

Nothing here imports the engine; the engine records the mode with every generation.
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("auto", "on", "off")
"""The thinking modes a run may ask for."""

LABELS = {"on": "think", "off": "no-think"}
"""The word a system's name carries for a mode (``qwen3/mirage@1 | no-think``); ``auto``
adds none, so names of runs that ask for no mode stay as they were."""

SWITCHES = ("enable_thinking", "reasoning_effort", "/no_think", "none", "endpoint")


@dataclass(frozen=True)
class ThinkingSwitch:
    """How a model's thinking is switched (``kind``, one of :data:`SWITCHES`) and whether it
    thinks when nothing is asked (``thinks``: True, False, or None when not known before its
    first replies: an endpoint)."""

    kind: str
    thinks: bool | None

    @property
    def switchable(self) -> bool:
        return self.kind != "none"

    def thinks_in(self, mode: str) -> bool | None:
        """Whether the model thinks under ``mode`` (None: not known)."""
        if mode == "on" and self.switchable:
            return True
        if mode == "off" and self.kind in ("enable_thinking", "/no_think", "endpoint"):
            return False
        return self.thinks          # auto, no switch, or gpt-oss's low effort (still thinks)

    def describe(self) -> str:
        """The switch in words, for the plan."""
        return {"enable_thinking": "chat-template variable enable_thinking",
                "reasoning_effort": "chat-template variable reasoning_effort (off = low: "
                                    "gpt-oss always reasons a little)",
                "/no_think": "the /no_think soft switch in the last user message",
                "endpoint": "chat_template_kwargs.enable_thinking in each request; "
                            "reasoning_effort too for a gpt-oss model, off = low",
                "none": "no thinking switch"}[self.kind]


NO_SWITCH = ThinkingSwitch("none", False)
ENDPOINT = ThinkingSwitch("endpoint", None)


def template_switch(template: str | None) -> ThinkingSwitch:
    """The switch a chat template offers and whether it thinks by default: a template that
    writes ``<think>`` (or gpt-oss's analysis channel) thinks unless switched off."""
    if not template:
        return NO_SWITCH
    thinks = "<think>" in template or "reasoning_effort" in template
    if "enable_thinking" in template:
        return ThinkingSwitch("enable_thinking", thinks)
    if "reasoning_effort" in template:
        return ThinkingSwitch("reasoning_effort", True)
    if "/no_think" in template:
        return ThinkingSwitch("/no_think", thinks)
    return ThinkingSwitch("none", thinks)


def template_variables(switch: ThinkingSwitch, mode: str) -> dict:
    """The extra variables the chat template is rendered with under ``mode`` (none for
    ``auto``: the template's own default)."""
    check_mode(mode)
    if mode == "auto":
        return {}
    if switch.kind == "enable_thinking":
        return {"enable_thinking": mode == "on"}
    if switch.kind == "reasoning_effort":
        return {"reasoning_effort": "high" if mode == "on" else "low"}
    return {}


def soft_switched(messages: list[dict], switch: ThinkingSwitch, mode: str) -> list[dict]:
    """``messages`` with ``/think`` or ``/no_think`` at the end of the last user message, for
    a template whose switch is the soft one; the messages as given otherwise."""
    check_mode(mode)
    if mode == "auto" or switch.kind != "/no_think":
        return messages
    out = [dict(m) for m in messages]
    for message in reversed(out):
        if message.get("role") == "user":
            word = "/think" if mode == "on" else "/no_think"
            message["content"] = f"{message.get('content', '')} {word}"
            break
    return out


def endpoint_fields(mode: str, model_id: str) -> dict:
    """What an OpenAI-compatible request adds under ``mode``: nothing for ``auto``;
    ``chat_template_kwargs.enable_thinking``, and ``reasoning_effort`` for a gpt-oss model."""
    check_mode(mode)
    if mode == "auto":
        return {}
    fields: dict = {"chat_template_kwargs": {"enable_thinking": mode == "on"}}
    if "gpt-oss" in model_id.lower():
        fields["reasoning_effort"] = "high" if mode == "on" else "low"
    return fields


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"thinking: unknown mode {mode!r} (use {', '.join(MODES)})")

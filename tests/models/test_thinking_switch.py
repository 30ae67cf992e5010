"""A model's thinking switch read from its chat template, and what each mode sends: template
variables, the soft switch, an endpoint's request fields; ``auto`` sends nothing and keeps the
sampling key as it was; the model host refuses a mode it does not know, naming the field."""

from __future__ import annotations

import pytest

from models.base import SamplingParams
from models.host.edge import sampling_params, thinking_mode
from models.thinking import (ENDPOINT, NO_SWITCH, endpoint_fields, soft_switched,
                             template_switch, template_variables)

QWEN3 = ("{%- if enable_thinking is defined and enable_thinking is false %}"
         "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}")
R1 = "{{ '<｜Assistant｜><think>\\n' }}"
GPT_OSS = "{%- if reasoning_effort is defined %}Reasoning: {{ reasoning_effort }}{%- endif %}"
SOFT = "{%- if '/no_think' in messages[0].content %}<think>\\n\\n</think>{%- endif %}"
CHATML = "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}"


@pytest.mark.parametrize("template, kind, thinks", [
    (QWEN3, "enable_thinking", True), (GPT_OSS, "reasoning_effort", True),
    (SOFT, "/no_think", True), (R1, "none", True), (CHATML, "none", False),
    (None, "none", False), ("", "none", False)])
def test_the_switch_and_the_default_come_from_the_template(template, kind, thinks):
    switch = template_switch(template)
    assert (switch.kind, switch.thinks) == (kind, thinks)


def test_each_mode_uses_the_models_own_switch():
    qwen, oss, soft = (template_switch(t) for t in (QWEN3, GPT_OSS, SOFT))
    assert template_variables(qwen, "auto") == {}
    assert template_variables(qwen, "off") == {"enable_thinking": False}
    assert template_variables(qwen, "on") == {"enable_thinking": True}
    assert template_variables(oss, "off") == {"reasoning_effort": "low"}
    assert template_variables(oss, "on") == {"reasoning_effort": "high"}
    assert template_variables(soft, "off") == {} == template_variables(NO_SWITCH, "off")
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q?"}]
    assert soft_switched(messages, soft, "off")[-1]["content"] == "Q? /no_think"
    assert soft_switched(messages, soft, "on")[-1]["content"] == "Q? /think"
    assert soft_switched(messages, soft, "auto") is messages
    assert soft_switched(messages, qwen, "off") is messages       # the variable does it
    assert messages[-1]["content"] == "Q?"                          # never changed in place
    # whether each thinks in each mode; gpt-oss's low effort still reasons
    assert (qwen.thinks_in("off"), qwen.thinks_in("on"), qwen.thinks_in("auto")) == \
        (False, True, True)
    assert oss.thinks_in("off") is True
    assert (NO_SWITCH.thinks_in("on"), ENDPOINT.thinks_in("auto")) == (False, None)


def test_an_endpoint_request_gains_the_switch_only_when_a_mode_is_asked():
    assert endpoint_fields("auto", "qwen3") == {}
    assert endpoint_fields("off", "qwen3") == {"chat_template_kwargs":
                                               {"enable_thinking": False}}
    assert endpoint_fields("on", "openai/gpt-oss-20b") == {
        "chat_template_kwargs": {"enable_thinking": True}, "reasoning_effort": "high"}
    with pytest.raises(ValueError, match="thinking: unknown mode 'maybe'"):
        endpoint_fields("maybe", "qwen3")


def test_auto_keeps_the_sampling_key_and_the_host_checks_the_mode():
    assert "thinking" not in SamplingParams().key()
    assert SamplingParams(thinking="off").key()["thinking"] == "off"
    assert SamplingParams(thinking="off").key() != SamplingParams().key()
    assert sampling_params({"max_tokens": 4, "thinking": "on"}).thinking == "on"
    assert sampling_params({"max_tokens": 4}).thinking == "auto"
    with pytest.raises(ValueError, match="'thinking' must be one of auto, on, off"):
        sampling_params({"thinking": "OFF!"})
    assert thinking_mode({}) == "auto"
    with pytest.raises(ValueError, match="'thinking'"):
        thinking_mode({"thinking": 3})

"""Thinking in a run's configuration: ``auto`` and no budget leave the name, the identity, the
stored JSON and the run file as they were; a mode or a budget is part of the identity (a resume
with another is refused), read from a run file and written back; each generator is planned
once per mode with its own budget and sampling; a resumed run keeps the budget it recorded."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from testkit.runs import config

from engine.runs import ConfigError, RunConfig
from engine.runs.config import IDENTITY_FIELDS, config_toml, run_name
from engine.runs.header import RunHeader
from engine.runs.plan import Plan, System
from models.thinking import ENDPOINT, template_switch


def test_auto_is_named_and_stored_as_before_modes_existed():
    c = config()
    before = {name: getattr(c, name) for name in IDENTITY_FIELDS}
    assert c.identity() == before and c.name == "t"
    assert config(name=None).name == run_name(before)
    assert "thinking" not in c.as_json() and "thinking_budget" not in c.as_json()
    assert "thinking" not in config_toml(c)


def test_a_mode_or_a_budget_is_part_of_the_identity_and_round_trips(tmp_path):
    off = config(name=None, thinking="Off")
    assert off.thinking == "off" and off.identity()["thinking"] == "off"
    assert off.name != config(name=None).name
    both = config(thinking="on, off,on", thinking_budget=300)
    assert both.thinking_modes == ["on", "off"]
    assert config(name=None, thinking="off,ON").name == config(name=None, thinking="on,off").name
    assert both.differences(config().as_json()) == ["thinking", "thinking_budget"]
    assert config().differences(both.as_json()) == ["thinking", "thinking_budget"]
    path = tmp_path / "run.toml"
    path.write_text(config_toml(both), encoding="utf-8")
    assert RunConfig.from_toml(path) == both
    assert 'thinking = "on,off"' in path.read_text() and "thinking_budget = 300" in \
        path.read_text()


@pytest.mark.parametrize("value, words", [
    ("of", "did you mean 'off'?"), ("on,nope", "unknown mode 'nope'"), ([3], "expected auto"),
    ("", "got nothing")])
def test_a_wrong_mode_names_the_key(value, words):
    with pytest.raises(ConfigError, match="^thinking: ") as caught:
        config(thinking=value)
    assert words in str(caught.value)


def test_each_generator_runs_once_per_mode_with_its_budget():
    c = config(generators=["qwen", "ep", "plain"], thinking="auto,off,on")
    plan = Plan(config=c, dataset_id=1, dataset="demo@1", dataset_hash="x",
                dataset_queries=1, systems=[System(g, "mirage@1", m) for g in c.generators
                                            for m in c.thinking_modes],
                queries=[1], first_batch=1, batch_size=1,
                switches={"qwen": template_switch("{{ enable_thinking }}<think>"),
                          "ep": ENDPOINT, "plain": template_switch("chatml")})
    budgets = {s.label: (plan.thinks(s), plan.max_tokens(s), plan.params(s).thinking)
               for s in plan.systems}
    assert budgets == {
        "qwen/mirage@1": (True, 1024, "auto"), "qwen/mirage@1 | no-think": (False, 64, "off"),
        "qwen/mirage@1 | think": (True, 1024, "on"),
        "ep/mirage@1": (None, 64, "auto"), "ep/mirage@1 | no-think": (False, 64, "off"),
        "ep/mirage@1 | think": (True, 1024, "on"),
        "plain/mirage@1": (False, 64, "auto"), "plain/mirage@1 | no-think": (False, 64, "off"),
        "plain/mirage@1 | think": (False, 64, "on")}
    bigger = Plan(**{**plan.__dict__, "config": config(generators=["qwen"], max_tokens=2000)})
    assert bigger.max_tokens(System("qwen", "mirage@1")) == 2000
    chosen = Plan(**{**plan.__dict__, "config": config(generators=["qwen"],
                                                        thinking_budget=100)})
    assert chosen.max_tokens(System("qwen", "mirage@1")) == 100


def test_a_resumed_run_keeps_the_budget_its_header_recorded():
    c = config(generators=["qwen"])
    thinker = {"qwen": template_switch("{{ enable_thinking }}<think>")}
    system = System("qwen", "mirage@1")

    def plan_of(header: dict, replace: bool = False) -> Plan:
        run = SimpleNamespace(header=RunHeader.from_json(header))
        return Plan(config=c, dataset_id=1, dataset="demo@1", dataset_hash="x",
                    dataset_queries=1, systems=[system], queries=[1], first_batch=1,
                    batch_size=1, switches=thinker, existing_run=run, replace_existing=replace)

    older = {"sampling": {"max_tokens": 64}}        # written before thinking budgets
    assert plan_of(older).max_tokens(system) == 64
    assert plan_of(older, replace=True).max_tokens(system) == 1024      # --force-new
    recorded = {**older, "thinking": {system.label: {"mode": "auto", "max_tokens": 1024}}}
    assert plan_of(recorded).max_tokens(system) == 1024

"""A local GGUF model that thinks, for real: the packaged SmolLM2 with its chat template
rewritten into a Qwen3-like one (``enable_thinking``; the generation prompt opens ``<think>``
unless thinking is off). Its switch is read from the file, ``--thinking off`` changes the
rendered prompt (asserted on the stored prompt text), and a reply that never closes the
thinking the template opened is split as cut while thinking."""

from __future__ import annotations

import json

import pytest
from testkit.gguf_template import with_chat_template
from testkit.runs import cli_run

from engine.datasets.demo_pool import ensure_demo
from engine.store import Store
from models import packaged
from models.catalog import thinking_switch
from models.llama.generator import LlamaGenerator

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module")
def thinker(tmp_path_factory):
    source, _ = packaged.resolve_model_path("smollm2-135m-instruct")
    return with_chat_template(source, tmp_path_factory.mktemp("thinker") / "thinker.gguf")


def test_its_switch_is_read_from_the_file_and_each_mode_renders_its_prompt(thinker):
    switch = thinking_switch(str(thinker))
    assert (switch.kind, switch.thinks) == ("enable_thinking", True)
    model = LlamaGenerator(thinker, n_ctx=512, n_threads=1)
    try:
        auto, on, off = (model.render(MESSAGES, mode).text for mode in ("auto", "on", "off"))
    finally:
        model.close()
    assert auto == on and auto.endswith("<|im_start|>assistant\n<think>\n")
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert off.startswith(auto[:-len("<think>\n")])


def test_a_run_thinks_on_and_off_and_a_cut_thought_is_no_answer(thinker, tmp_path):
    db = tmp_path / "w.db"
    store = Store(db)
    ensure_demo(store)
    store.close()
    args = ("--dataset", "demo", "--generator", str(thinker), "--settings", "base",
            "--sample", "1", "--thinking", "on,off", "--thinking-budget", "6", "--threads",
            "1", "--name", "thinker")
    plan = cli_run(*args, "--dry-run", db=db)
    assert plan.returncode == 0, plan.stderr
    assert (f"{thinker}/mirage@1 | think: thinks; mode on (chat-template variable "
            "enable_thinking); budget 6 tokens") in plan.stdout
    assert f"{thinker}/mirage@1 | no-think: does not think; mode off" in plan.stdout
    assert "likely too small to finish thinking" in plan.stdout
    done = cli_run(*args, "--json", db=db)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["generated"] == 2
    store = Store(db)
    try:
        rows = {r[0]: r for r in store.query(
            "SELECT i.system, g.prompt, g.text, g.thinking_cut, g.params FROM run_items i "
            "JOIN generations g ON g.key = i.generation_key")}
    finally:
        store.close()
    on, off = rows[f"{thinker}/mirage@1 | think"], rows[f"{thinker}/mirage@1 | no-think"]
    assert on[1].endswith("<think>\n") and off[1].endswith("<think>\n\n</think>\n\n")
    assert on[1] != off[1]
    assert '"thinking": "on"' in on[4] and '"thinking": "off"' in off[4]
    assert (on[2], on[3]) == ("", 1)             # 6 tokens of thinking, never closed
    assert off[3] == 0

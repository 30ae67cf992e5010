"""``run --thinking auto|on|off`` (and ``on,off``): the mode reaches an endpoint as
``chat_template_kwargs``, names the systems, is recorded in the run header and the generation
cache key (an answer of one mode never serves the other), and the plan says who thinks, what
budget each gets and warns when it is likely too small. ``auto`` sends and records nothing."""

from __future__ import annotations

import json

from testkit.openai_server import fake_openai_server
from testkit.reasoning_server import DEMO_SQUAD, ReasoningState, reasoning_server, squad_answers
from testkit.runs import cli_main, cli_run

from engine.datasets.demo_pool import ensure_demo
from engine.runs.header import RunHeader
from engine.store import Store


def _workspace(tmp_path):
    db = tmp_path / "w.db"
    store = Store(db)
    ensure_demo(store)
    store.close()
    return db


def _header(db, name: str) -> RunHeader:
    store = Store(db)
    try:
        return RunHeader.from_json(store.query("SELECT header FROM runs WHERE name = ?",
                                               (name,))[0][0])
    finally:
        store.close()


def _systems(db, name: str) -> dict[str, int]:
    store = Store(db)
    try:
        return {r[0]: r[1] for r in store.query(
            "SELECT i.system, COUNT(*) FROM run_items i JOIN runs r ON r.id = i.run_id "
            "WHERE r.name = ? AND i.error IS NULL GROUP BY i.system", (name,))}
    finally:
        store.close()


def test_on_and_off_are_two_systems_sent_their_switch_and_never_share_a_cached_answer(
        tmp_path):
    db = _workspace(tmp_path)
    with reasoning_server() as server:
        model = f"{server.url}#think-inline"
        both = cli_run("--dataset", "demo", "--generator", model, "--settings", "oracle",
                       "--sample", "2", "--thinking", "on,off", "--name", "both", db=db)
        assert both.returncode == 0, both.stderr
        # the summary's accuracy names each system by its generator and mode
        assert f"{model} | think: oracle " in both.stdout
        assert f"{model} | no-think: oracle " in both.stdout
        sent = [b.get("chat_template_kwargs") for b in server.bodies]
        assert sorted(map(json.dumps, sent)) == sorted(
            [json.dumps({"enable_thinking": True})] * 2
            + [json.dumps({"enable_thinking": False})] * 2)
        thinking_budgets = {b["max_tokens"] for b in server.bodies
                            if b["chat_template_kwargs"]["enable_thinking"]}
        assert thinking_budgets == {1024}           # on: the thinking budget, not 64
        assert {b["max_tokens"] for b in server.bodies
                if not b["chat_template_kwargs"]["enable_thinking"]} == {64}
        server.bodies.clear()
        # the same model in auto: nothing switched is sent, nothing cached is served
        auto = cli_run("--dataset", "demo", "--generator", model, "--settings", "oracle",
                       "--sample", "2", "--name", "auto", db=db)
        assert auto.returncode == 0, auto.stderr
        assert len(server.bodies) == 2
        assert all("chat_template_kwargs" not in b for b in server.bodies)
        server.bodies.clear()
        # off again in another run: served from the cache, the model not asked
        again = cli_run("--dataset", "demo", "--generator", model, "--settings", "oracle",
                        "--sample", "2", "--thinking", "OFF", "--name", "off", "--json", db=db)
        assert again.returncode == 0, again.stderr
        assert server.bodies == []
        assert json.loads(again.stdout)["cached"] == 2
    assert _systems(db, "both") == {f"{model}/mirage@1 | think": 2,
                                    f"{model}/mirage@1 | no-think": 2}
    assert _systems(db, "auto") == {f"{model}/mirage@1": 2}
    header = _header(db, "both")
    on = header.thinking_of(f"{model}/mirage@1 | think")
    off = header.thinking_of(f"{model}/mirage@1 | no-think")
    assert (on.mode, on.switch, on.thinks, on.max_tokens) == ("on", "endpoint", True, 1024)
    assert (off.mode, off.thinks, off.max_tokens) == ("off", False, 64)
    # a run that asks for no mode records none: its header reads the old default
    assert _header(db, "auto").thinking == {}
    assert _header(db, "auto").thinking_of(f"{model}/mirage@1").mode == "auto"
    store = Store(db)
    try:
        config = json.loads(store.query("SELECT config FROM runs WHERE name = 'auto'")[0][0])
        params = {r[0] for r in store.query("SELECT params FROM generations")}
    finally:
        store.close()
    assert "thinking" not in config and "thinking_budget" not in config
    assert sum('"thinking"' not in p for p in params) == 1     # auto's: as before modes
    assert any('"thinking": "on"' in p for p in params)


def test_a_wrong_mode_is_one_line_with_a_did_you_mean(tmp_path, capsys):
    db = _workspace(tmp_path)
    for typed, near in (("of", "off"), ("on,nope", None), ("think", None), ("Auot", "auto")):
        code, _, err = cli_main(capsys, "run", "--db", db, "--dataset", "demo", "--generator",
                                "smollm2-135m-instruct", "--thinking", typed, "--dry-run")
        assert code != 0
        assert err.count("\n") == 1, err
        assert "thinking: unknown mode" in err and "Traceback" not in err
        if near:
            assert f"did you mean {near!r}?" in err
    code, _, err = cli_main(capsys, "run", "--db", db, "--dataset", "demo", "--generator",
                            "smollm2-135m-instruct", "--thinking-budget", "0", "--dry-run")
    assert code != 0 and "thinking_budget" in err.replace("-", "_") and err.count("\n") == 1


def test_the_plan_says_who_thinks_its_budget_and_warns_when_too_small(tmp_path):
    db = _workspace(tmp_path)
    with reasoning_server() as server:
        model = f"{server.url}#think-field"
        small = cli_run("--dataset", "demo", "--generator", model, "--sample", "2",
                        "--thinking", "on", "--thinking-budget", "40", "--dry-run", db=db)
        assert small.returncode == 0, small.stderr
        assert f"{model}/mirage@1 | think: thinks; mode on (chat_template_kwargs" in small.stdout
        assert "budget 40 tokens" in small.stdout
        assert "warning:" in small.stdout and "likely too small to finish thinking" in \
            small.stdout
        as_json = json.loads(cli_run("--dataset", "demo", "--generator", model, "--sample",
                                     "2", "--thinking", "on", "--thinking-budget", "40",
                                     "--dry-run", "--json", db=db).stdout)
        (note,) = as_json["thinking"]
        assert (note["mode"], note["thinks"], note["max_tokens"]) == ("on", True, 40)
        assert "too small" in note["warning"]
        # auto, an endpoint never asked: nothing is known, the plan says nothing of thinking
        unknown = cli_run("--dataset", "demo", "--generator", model, "--sample", "2",
                          "--dry-run", "--json", db=db)
        assert "thinking" not in json.loads(unknown.stdout)
        first = cli_run("--dataset", "demo", "--generator", model, "--sample", "2",
                        "--settings", "oracle", "--max-tokens", "30", "--name", "seen",
                        db=db)
        assert first.returncode == 0, first.stderr
        # its replies thought: the next plan of that model says so, and warns at 30 tokens
        after = cli_run("--dataset", "demo", "--generator", model, "--sample", "2",
                        "--max-tokens", "30", "--dry-run", db=db)
        # thinking on, its budget: the estimate counts the reasoning measured in that mode
        on = cli_run("--dataset", "demo", "--generator", model, "--sample", "2",
                     "--settings", "oracle", "--thinking", "on", "--name", "on", db=db)
        assert on.returncode == 0, on.stderr
        planned = json.loads(cli_run("--dataset", "demo", "--generator", model, "--sample",
                                     "2", "--settings", "base", "--thinking", "on", "--dry-run",
                                     "--json", db=db).stdout)
    assert "thinks; budget 30 tokens; 2 of 2 stored replies thought" in after.stdout
    assert "warning:" in after.stdout
    (note,) = planned["thinking"]
    assert note["measured_thinking"] == 2 and 50 < note["mean_reasoning_tokens"] < 300
    assert planned["estimate"][model]["answer_tokens"] == note["mean_reasoning_tokens"] + 32
    assert note["warning"] is None                   # 1024 holds what it thought


def test_a_model_without_a_switch_says_so_and_auto_plans_say_nothing(tmp_path, capsys):
    db = _workspace(tmp_path)
    code, out, err = cli_main(capsys, "run", "--db", db, "--dataset", "demo", "--generator",
                              "smollm2-135m-instruct", "--sample", "2", "--thinking", "off",
                              "--dry-run")
    assert code == 0, err
    assert "systems: smollm2-135m-instruct/mirage@1 | no-think" in out
    assert ("smollm2-135m-instruct: no thinking switch in its chat template; --thinking off "
            "has no effect") in out
    _, auto, _ = cli_main(capsys, "run", "--db", db, "--dataset", "demo", "--generator",
                          "smollm2-135m-instruct", "--sample", "2", "--dry-run", "--json")
    assert "thinking" not in json.loads(auto)


def test_config_toml_sets_the_default_mode_and_a_flag_overrides_it(tmp_path, capsys,
                                                                  monkeypatch):
    db = _workspace(tmp_path)
    (tmp_path / "config.toml").write_text('thinking = "on,off"\n', encoding="utf-8")
    monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(tmp_path))

    def planned(*args) -> dict:
        code, out, err = cli_main(capsys, "run", "--db", db, *args, "--dry-run", "--json")
        assert code == 0, err
        return json.loads(out)

    from_file = planned("--dataset", "demo", "--generator", "smollm2-135m-instruct",
                        "--sample", "2")
    assert from_file["systems"] == [
        "smollm2-135m-instruct/mirage@1 | think", "smollm2-135m-instruct/mirage@1 | no-think"]
    flag = planned("--dataset", "demo", "--generator", "smollm2-135m-instruct", "--sample",
                   "2", "--thinking", "auto")
    assert flag["systems"] == ["smollm2-135m-instruct/mirage@1"]
    run_file = tmp_path / "run.toml"
    run_file.write_text('dataset = "demo"\ngenerators = ["smollm2-135m-instruct"]\n'
                        'thinking = "off"\nthinking_budget = 300\nsample = 2\n',
                        encoding="utf-8")
    from_run_file = planned("--config", run_file)
    assert from_run_file["systems"] == ["smollm2-135m-instruct/mirage@1 | no-think"]
    # a wrong mode in config.toml: one problem line naming the key, never fatal (auto)
    (tmp_path / "config.toml").write_text('thinking = "of"\n', encoding="utf-8")
    code, out, err = cli_main(capsys, "config")
    assert code == 1
    assert "thinking: unknown mode 'of'; did you mean 'off'?" in out + err
    still = planned("--dataset", "demo", "--generator", "smollm2-135m-instruct", "--sample",
                    "2")
    assert still["systems"] == ["smollm2-135m-instruct/mirage@1"]


class _IgnoresTheSwitch(ReasoningState):
    """A server that passes no chat_template_kwargs to its template (it thinks anyway)."""

    def completion(self, body: dict, prompt: str, chat: bool) -> dict:
        return super().completion({k: v for k, v in body.items()
                                   if k != "chat_template_kwargs"}, prompt, chat)


def test_replies_that_think_despite_off_are_warned_about(tmp_path):
    db = _workspace(tmp_path)
    state = _IgnoresTheSwitch(["think-field"], answers=squad_answers(DEMO_SQUAD))
    with fake_openai_server(state=state) as server:
        model = f"{server.url}#think-field"
        args = ("--dataset", "demo", "--generator", model, "--settings", "oracle", "--sample",
                "2", "--thinking", "off")
        done = cli_run(*args, "--name", "deaf", db=db)
        assert done.returncode == 0, done.stderr
        plan = json.loads(cli_run(*args, "--dry-run", "--json", db=db).stdout)
    (note,) = plan["thinking"]
    assert (note["thinks"], note["max_tokens"], note["measured_thinking"]) == (True, 64, 2)
    assert "although --thinking off should stop it (its server may ignore the switch)" in \
        note["warning"]
    assert "raise --max-tokens" in note["warning"]

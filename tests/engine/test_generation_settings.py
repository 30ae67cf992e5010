"""Where two compared systems were generated differently (engine/results/generation_settings.py):
read from each run's header (else its config), named in words, nothing claimed for a setting
one side did not record."""

from __future__ import annotations

from engine.results.generation_settings import differences_warning, setting_differences
from engine.runs.header import RunHeader
from engine.runs.lookup import RunInfo


def _run(name: str, max_tokens: int = 64, backend: str | None = "llama.cpp",
         temperature: float = 0.0, seed: int = 0, template: str = "mirage") -> RunInfo:
    header = {"sampling": {"max_tokens": max_tokens, "temperature": temperature,
                           "top_p": 1.0, "top_k": 40, "seed": seed, "stop": []},
              "models": {"smol": {"backend": backend}} if backend else {}}
    config = {"max_tokens": max_tokens, "template": template, "seed": seed}
    return RunInfo(1, name, 1, "demo@1", "h", 10, config, "done", "", "",
                   header=RunHeader.from_json(header))


def test_the_briefs_example_word_for_word():
    diffs = setting_differences(_run("quick", max_tokens=32), "smol/mirage@1",
                                _run("new", backend="llama-server"), "smol/mirage@1")
    assert [d.setting for d in diffs] == ["max_tokens", "backend"]
    assert differences_warning(diffs, same_runs=False, same_generator=True) == (
        "the two runs differ in max tokens (32 vs 64) and backend (llama.cpp vs "
        "llama-server): their answers are not comparable as like for like")


def test_template_sampling_and_seed_are_named_and_alike_runs_are_not():
    a = _run("a")
    b = _run("b", temperature=0.7, seed=3)
    diffs = setting_differences(a, "smol/mirage@1", b, "smol/bergen@1")
    assert [d.words for d in diffs] == ["prompt template (mirage@1 vs bergen@1)",
                                        "temperature (0 vs 0.7)", "seed (0 vs 3)"]
    assert setting_differences(a, "smol/mirage@1", _run("c"), "smol/mirage@1") == []
    assert differences_warning([], same_runs=False, same_generator=True) is None
    other_model = differences_warning(diffs[:1], same_runs=True, same_generator=False)
    assert other_model == ("the two systems differ in prompt template (mirage@1 vs bergen@1): "
                           "B − A measures these as well as the change of model")


def test_a_setting_one_side_did_not_record_is_not_compared():
    old = _run("old", backend=None)        # a run from before backends were recorded
    assert setting_differences(old, "smol/mirage@1", _run("new", backend="llama-server"),
                               "smol/mirage@1") == []


def test_a_header_of_another_shape_is_read_as_not_recorded():
    odd = RunInfo(1, "odd", 1, "demo@1", "h", 10, {"max_tokens": 64}, "done", "", "",
                  header=RunHeader.from_json({"models": {"smol": "llama.cpp"}, "sampling": None}))
    assert setting_differences(odd, "smol/mirage@1", _run("new", max_tokens=32),
                               "smol/mirage@1")[0].words == "max tokens (64 vs 32)"

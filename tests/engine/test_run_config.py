"""A run's configuration: read from TOML with overrides, every bad value refused with a message
naming it, and the name a run gets when none is given (from what decides its results). The run
engine's other topics are in tests/engine/test_run_*.py."""

from __future__ import annotations

import pytest
from testkit.runs import config

from engine.runs import ConfigError, RunConfig


def test_config_from_toml_with_overrides_and_checks(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('name = "x"\ndataset = "demo"\ngenerators = ["a", "b"]\n'
                    'settings = ["base", "retrieved@3", "retrieved@1"]\n'
                    'retrievers = "minilm-l6-v2"\nsample = 10\n', encoding="utf-8")
    cfg = RunConfig.from_toml(path, seed=7, max_tokens=None)
    assert cfg.generators == ["a", "b"] and cfg.retrievers == ["minilm-l6-v2"]
    assert cfg.top_k == [1, 3] and cfg.seed == 7 and cfg.max_tokens == 64
    assert cfg.template == "mirage@1"
    bad = [
        ({"settings": ["retrieved@3"]}, "needs at least one retriever"),
        ({"settings": ["nope"]}, "unknown setting 'nope'"),
        ({"retrievers": ["m"]}, "no retrieved@k setting"),
        ({"sample": 0}, "sample: expected a positive integer"),
        ({"adaptive_target": 2.0}, "adaptive_target"),
        ({"template": "nope"}, "no prompt template"),
        ({"settings": ["retrieved@5"], "retrievers": ["m"], "reranker": "judge:x",
          "rerank_depth": 3}, "rerank_depth 3 is smaller"),
        ({"reranker": "x"}, "reranker 'x': expected 'judge:GENERATOR' or 'cross-encoder:FOLDER'"),
        ({"settings": ["retrieved@1"], "retrievers": ["m"], "reranker": "cross:x"},
         "reranker 'cross:x': unknown kind 'cross'"),
    ]
    for changes, message in bad:
        with pytest.raises(ValueError, match=message):
            config(**changes)
    with pytest.raises(ConfigError, match="unknown key.*colour"):
        RunConfig.from_dict({"dataset": "demo", "generators": "a", "colour": 1})
    path.write_text("dataset = [", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        RunConfig.from_toml(path)
    # no name: derived from what decides the results, so the same command finds the run again
    a = RunConfig(dataset="demo", generators=["g"], threads=1)
    b = RunConfig(dataset="demo", generators=["g"], threads=2, budget=9)
    assert a.name == b.name and a.name.startswith("demo-g-")
    assert RunConfig(dataset="demo", generators=["g"], seed=1).name != a.name

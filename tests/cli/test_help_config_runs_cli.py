"""The CLI's help and names: Examples in every ``--help`` (each one parses), "did you mean" for
commands, actions, choices and run/dataset/model names, ``runs list/rename/delete/log``, and
``config`` (config.toml: print, ``--init``, problems in one line, precedence flag > env > file
> default). Through ``cli.main`` in process; the workspace is made by the real run engine with
scripted generators (:mod:`testkit.scripted_runs`)."""

from __future__ import annotations

import json
import shlex

import pytest

from engine.store import Store
from mirage_tui import cli
from mirage_tui.cli.examples import EXAMPLES, walk
from testkit.runs import cli_main as main

SMOL = "smollm2-135m-instruct"


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cfg"
    monkeypatch.setenv("MIRAGE_CONFIG_DIR", str(folder))
    monkeypatch.delenv("MIRAGE_DB", raising=False)
    return folder


@pytest.fixture
def db(workspace, config_dir):
    return workspace["path"]


# --------------------------------------------------------------------------- --help examples


def test_every_command_has_examples_and_each_example_parses(capsys):
    parser = cli.build_parser()
    paths = dict(walk(parser))
    assert set(EXAMPLES) == set(paths), "every command and subcommand, and no other"
    for path, sub in paths.items():
        text = sub.format_help()
        assert "\nExamples:\n  mirage-tui" in text, path
        for argv, what in EXAMPLES[path]:
            if argv.startswith("COMMAND") or not argv:
                continue
            args = cli.build_parser().parse_args(shlex.split(argv))
            words = argv.split()
            # the example runs the command it illustrates (or, on a group, one of its own)
            assert words[:len(path.split())] == path.split(), (path, argv)
            assert args.command == words[0], argv
            assert text.count(f"  mirage-tui {argv}\n      {what}\n") == 1
            assert len(f"  mirage-tui {argv}") <= 100, argv
    # descriptions still wrap; only the examples keep their lines
    assert max(len(line) for line in parser.format_help().splitlines()) <= 100
    code, out, _ = main(capsys, "runs", "delete", "--help")
    assert code == 0 and "mirage-tui runs delete demo-smol --purge-generations" in out


# --------------------------------------------------------------------------- did you mean


@pytest.mark.parametrize("args, line", [
    (("reprot", "x"), "mirage-tui: unknown command 'reprot'; did you mean 'report'?"),
    (("rn",), "mirage-tui: unknown command 'rn'; did you mean 'run'?"),
    (("data", "lst"), "mirage-tui data: unknown action 'lst'; did you mean 'list'?"),
    (("runs", "delet", "x"), "mirage-tui runs: unknown action 'delet'; did you mean 'delete'?"),
    (("export", "r", "--format", "cvs"),
     "mirage-tui export: --format 'cvs' is not allowed; did you mean 'csv'?"),
    (("xyzzy",), "mirage-tui: unknown command 'xyzzy'; choose from data, models"),
    (("data", "list", "--jsn"), "mirage-tui: unknown option '--jsn'; did you mean '--json'?"),
    # an option of other commands is never offered as its own correction
    (("index", "--dataset", "demo"), "mirage-tui index: no option '--dataset' (an option of "),
    (("index", "demo", "--dataset=demo"), "mirage-tui index: no option '--dataset' (an option "),
    (("index", "demo", "--embeder", "x"),
     "mirage-tui: unknown option '--embeder'; did you mean '--embedder'?"),
])
def test_misspelt_commands_get_one_line_with_the_nearest(capsys, args, line):
    code, out, err = main(capsys, *args)
    assert code == 2 and err.startswith(line) and len(err.strip().splitlines()) == 1


def test_misspelt_run_dataset_and_model_names(db, capsys):
    code, _, err = main(capsys, "report", "alpah", "--db", db)
    assert code == 1 and "no run named 'alpah'; did you mean 'alpha'?" in err
    code, _, err = main(capsys, "runs", "log", "bta", "--db", db)
    assert code == 1 and "did you mean 'beta'?" in err
    code, _, err = main(capsys, "data", "show", "dmeo", "--db", db)
    assert code == 1 and "no dataset named 'dmeo'; did you mean 'demo'?" in err
    code, _, err = main(capsys, "run", "--dataset", "demo", "--generator",
                        "smollm2-135m-instrct", "--dry-run", "--db", db)
    assert code == 1 and f"no such model; did you mean '{SMOL}'?" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = main(capsys, "index", "demo", "--embedder", "minlm-l6-v2", "--db", db)
    assert code == 1 and "no such folder; did you mean 'minilm-l6-v2'?" in err


# --------------------------------------------------------------------------- runs


def _table_counts(path) -> dict:
    store = Store(path)
    try:
        return {t: store.query(f"SELECT COUNT(*) FROM {t}")[0][0]
                for t in ("runs", "run_items", "generations", "scores", "arenas")}
    finally:
        store.close()


def test_runs_list_rename_log_and_delete(db, capsys):
    code, out, _ = main(capsys, "runs", "list", "--db", db)
    assert code == 0 and out.splitlines()[0].split()[:4] == ["RUN", "DATASET", "STATUS", "ITEMS"]
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["alpha", "beta"]

    code, out, _ = main(capsys, "runs", "rename", "alpha", "alpha-2", "--db", db)
    assert code == 0 and out.strip() == "renamed run alpha to alpha-2"
    code, _, err = main(capsys, "runs", "rename", "alpha-2", "beta", "--db", db)
    assert code == 1 and "a run named 'beta' exists already" in err
    code, out, _ = main(capsys, "report", "alpha-2", "--json", "--db", db)
    assert code == 0 and json.loads(out)

    code, out, _ = main(capsys, "runs", "log", "alpha-2", "--json", "--db", db)
    lines = [json.loads(line) for line in out.splitlines()]
    assert [x["kind"] for x in lines] == ["session", "end", "rename"]
    assert lines[1]["message"].startswith("done: ") and lines[2]["message"] == \
        "renamed from alpha to alpha-2"
    code, out, _ = main(capsys, "runs", "log", "alpha-2", "--db", db)
    assert out.splitlines()[0][19:].split()[0] == "session"

    store = Store(db)
    only_beta = {r[0] for r in store.query(
        "SELECT generation_key FROM run_items WHERE run_id = (SELECT id FROM runs WHERE name = "
        "'beta') EXCEPT SELECT generation_key FROM run_items WHERE run_id = (SELECT id FROM "
        "runs WHERE name = 'alpha-2')")}
    store.close()
    before = _table_counts(db)
    code, out, _ = main(capsys, "runs", "delete", "beta", "--db", db)
    assert code == 0 and out.startswith("deleted run beta (18 items); its cached generations stay")
    after = _table_counts(db)
    assert after == {**before, "runs": before["runs"] - 1,
                     "run_items": before["run_items"] - 18}
    code, out, _ = main(capsys, "runs", "list", "--json", "--db", db)
    assert [r["name"] for r in json.loads(out)] == ["alpha-2"]
    code, out, _ = main(capsys, "runs", "delete", "alpha-2", "--purge-generations", "--db", db)
    dropped = before["generations"] - len(only_beta)
    assert code == 0 and f"{dropped} cached generations no other run used were dropped" in out
    # what is left is beta's cache: deleting beta kept it, and purging alpha left it alone
    store = Store(db)
    assert {r[0] for r in store.query("SELECT key FROM generations")} == only_beta
    store.close()
    assert _table_counts(db)["runs"] == 0 and _table_counts(db)["arenas"] == 0


def test_a_running_run_is_not_deleted_from_the_cli(db, capsys):
    import os

    store = Store(db)
    with store.write() as w:
        w.conn.execute("UPDATE runs SET status = 'running' WHERE name = 'beta'")
        w.conn.execute("INSERT OR REPLACE INTO run_owners (run_id, pid, host, process_start, "
                       "claimed_at) SELECT id, ?, ?, NULL, 'now' FROM runs WHERE name = 'beta'",
                       (os.getpid(), __import__("socket").gethostname()))
    store.close()
    before = _table_counts(db)
    code, _, err = main(capsys, "runs", "delete", "beta", "--db", db)
    assert code == 1 and f"run beta is running (pid {os.getpid()}); cannot delete it" in err
    assert _table_counts(db) == before


# --------------------------------------------------------------------------- config


def test_config_init_print_and_refuse_to_overwrite(config_dir, capsys, tmp_path):
    code, out, err = main(capsys, "config")
    assert code == 0 and f"config file: {config_dir / 'config.toml'} (not there" in out
    assert "theme       textual-dark   (default)" in out
    code, out, _ = main(capsys, "config", "--init")
    path = config_dir / "config.toml"
    assert code == 0 and out.startswith(f"wrote {path}") and "# theme = " in path.read_text()
    text = path.read_text()
    code, _, err = main(capsys, "config", "--init")
    assert code == 1 and err.strip() == (f"mirage-tui: error: {path} exists already; edit it, "
                                         "or move it away first")
    assert path.read_text() == text
    # the commented file, with the "# " removed from its settings, is valid as it stands
    path.write_text("\n".join(line[2:] if line.startswith("# ") and "=" in line
                              or line.startswith("# [keys") else line
                              for line in text.splitlines()), encoding="utf-8")
    code, out, err = main(capsys, "config", "--json")
    shown = json.loads(out)
    assert code == 0 and shown["problems"] == [], err
    assert shown["settings"]["generators"] == {"value": SMOL, "from": str(path)}
    assert shown["keys"] == {"*": {"quit": "ctrl+q"}, "runs": {"rename": "ctrl+r"}}


def test_config_problems_are_one_line_each_and_commands_still_run(config_dir, capsys, tmp_path):
    config_dir.mkdir()
    path = config_dir / "config.toml"
    path.write_text('colour = "blue"\ngenerators = 3\ntheme = "nrod"\n'
                    '[keys]\nquti = "ctrl+q"\n[keys.rnus]\nrename = "x"\n', encoding="utf-8")
    code, out, err = main(capsys, "config")
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 5
    assert all(line.startswith(f"mirage-tui: warning: {path}: ") for line in lines)
    assert "unknown key 'colour' (known: database, dataset, generators" in err
    assert "generators: expected a list of model names" in err
    assert "theme 'nrod': no such theme; did you mean 'nord'?" in err
    assert "keys.quti: no such action on any screen; did you mean 'quit'?" in err
    assert "[keys.rnus]: no such screen; did you mean 'runs'?" in err
    # any other command warns and goes on with the defaults
    code, out, err = main(capsys, "data", "demo", "--db", tmp_path / "w.db")
    assert code == 0 and "imported demo@1" in out and "unknown key 'colour'" in err
    path.write_text("database = [", encoding="utf-8")
    code, out, err = main(capsys, "data", "list", "--db", tmp_path / "w.db")
    assert code == 0 and "demo" in out
    assert err.startswith(f"mirage-tui: warning: {path}: not valid TOML (")
    assert err.strip().endswith("using the built-in defaults")


def test_database_precedence_flag_then_env_then_file(config_dir, capsys, tmp_path, monkeypatch):
    config_dir.mkdir()
    (config_dir / "config.toml").write_text(f'database = "{tmp_path / "file.db"}"\n'
                                            'dataset = "demo"\n', encoding="utf-8")
    assert main(capsys, "data", "demo")[0] == 0
    assert (tmp_path / "file.db").exists()
    code, out, _ = main(capsys, "config")
    assert f"database    {tmp_path / 'file.db'}   ({config_dir / 'config.toml'})" in out
    monkeypatch.setenv("MIRAGE_DB", str(tmp_path / "env.db"))
    assert main(capsys, "data", "demo")[0] == 0 and (tmp_path / "env.db").exists()
    assert "($MIRAGE_DB)" in main(capsys, "config")[1]
    assert main(capsys, "data", "demo", "--db", tmp_path / "flag.db")[0] == 0
    assert (tmp_path / "flag.db").exists()
    assert "(--db)" in main(capsys, "config", "--db", tmp_path / "flag.db")[1]
    # a database from the file whose folder is missing is refused, as a typed one is
    monkeypatch.delenv("MIRAGE_DB")
    (config_dir / "config.toml").write_text(f'database = "{tmp_path / "nope" / "w.db"}"\n')
    code, _, err = main(capsys, "data", "list")
    assert code == 1 and "nope" in err


def test_run_takes_its_dataset_and_generators_from_the_config(config_dir, db, capsys):
    code, _, err = main(capsys, "run", "--dry-run", "--db", db)
    assert code == 1 and "run needs --dataset and --generator (or --config FILE, or dataset " \
                         "and generators in config.toml)" in err
    config_dir.mkdir()
    (config_dir / "config.toml").write_text('dataset = "demo"\ngenerators = ["smollm2"]\n')
    code, out, err = main(capsys, "run", "--dry-run", "--json", "--sample", "2", "--db", db)
    plan = json.loads(out)
    assert code == 0, err
    assert plan["dataset"].startswith("demo@") and plan["systems"] == [f"{SMOL}/mirage@1"]
    # no --judge and none in config.toml: the default judge, named with why (issues 24, 34:
    # the demo pool's short gold answers get the run's own scorer)
    code, out, err = main(capsys, "arena", "judge", "alpha", "--db", db)
    assert code == 0 and "pairwise:reference:answer-match" in out, (out, err)
    assert "reference:answer-match" in err and "short gold answers" in err
    code, out, err = main(capsys, "index", "demo", "--db", db)
    assert code == 1 and "index needs --embedder NAME (or embedder = ... in " in err

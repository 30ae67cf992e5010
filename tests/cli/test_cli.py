"""The headless CLI, run as the installed `mirage-tui` command would be."""

import json
import os
import subprocess
import sys

import pytest

from testkit.paths import ROOT, SHARED_DATA


def cli(*args, env=None, check=True):
    full_env = {**os.environ, **(env or {})}
    out = subprocess.run([sys.executable, "-m", "mirage_tui.cli", *map(str, args)], cwd=ROOT,
                         capture_output=True, text=True, env=full_env, timeout=600)
    if check and out.returncode != 0:
        raise AssertionError(f"exit {out.returncode}: {out.stderr}")
    return out


def test_import_list_show_round_trip(tmp_path):
    db = tmp_path / "w.db"
    out = cli("data", "import", SHARED_DATA / "xquad" / "xquad.en.json", "--db", db)
    assert "imported xquad.en@1" in out.stdout
    assert "1,190 queries" in out.stdout and "240 chunks" in out.stdout

    again = cli("data", "import", SHARED_DATA / "xquad" / "xquad.en.json", "--db", db)
    assert "already imported" in again.stdout

    listed = json.loads(cli("--db", db, "data", "list", "--json").stdout)
    assert [(d["name"], d["queries"], d["chunks"], d["languages"]) for d in listed] == [
        ("xquad.en", 1190, 240, {"en": 1190})]

    shown = cli("data", "show", "xquad.en", "--db", db, "--limit", "3").stdout
    assert "1,190 queries, 240 chunks" in shown
    first_id = shown.split("\n")[4].split()[0]
    detail = json.loads(cli("data", "show", "xquad.en", first_id, "--json", "--db", db).stdout)
    assert len(detail["pool"]) == 5
    assert sum(e["is_oracle"] for e in detail["pool"]) == 1
    text_view = cli("data", "show", "xquad.en", first_id, "--db", db).stdout
    assert text_view.count("★ oracle") == 1


def test_db_from_environment_variable(tmp_path):
    db = tmp_path / "env.db"
    cli("data", "demo", env={"MIRAGE_DB": str(db)})
    assert db.exists()
    listed = json.loads(cli("data", "list", "--json", env={"MIRAGE_DB": str(db)}).stdout)
    assert listed[0]["name"] == "demo" and listed[0]["queries"] >= 60
    assert len(listed[0]["languages"]) >= 3


@pytest.mark.parametrize("args, message", [
    (("data", "show", "nope"), "no dataset named 'nope'"),
    (("data", "import", "/nonexistent/file.json"), "/nonexistent/file.json: no such file"),
])
def test_failures_exit_non_zero_with_a_message(tmp_path, args, message):
    out = cli(*args, "--db", tmp_path / "w.db", check=False)
    assert out.returncode == 1
    assert message in out.stderr


def test_bad_file_exits_non_zero_and_keeps_what_is_stored(tmp_path):
    db = tmp_path / "w.db"
    cli("data", "demo", "--db", db)
    bad = tmp_path / "broken.json"
    bad.write_text('{"data": [{"title": "x", "paragraphs": [{"context": "abc", "qas": [')
    out = cli("data", "import", bad, "--format", "squad", "--db", db, check=False)
    assert out.returncode == 1
    assert "broken.json" in out.stderr and "truncated JSON" in out.stderr
    listed = json.loads(cli("data", "list", "--json", "--db", db).stdout)
    assert [d["name"] for d in listed] == ["demo"]


def test_run_labels_use_the_catalog_name_of_a_short_generator_name(tmp_path):
    db = str(tmp_path / "w.db")
    cli("data", "demo", "--db", db)
    plans = [json.loads(cli("run", "--db", db, "--dataset", "demo", "--generator", name,
                            "--sample", "2", "--dry-run", "--json").stdout)
             for name in ("smollm2", "smollm2-135m-instruct")]
    assert plans[0]["systems"] == plans[1]["systems"] == ["smollm2-135m-instruct/mirage@1"]
    assert plans[0]["name"] == plans[1]["name"]

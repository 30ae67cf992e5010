"""The shadowing guard: when ``engine`` or ``models`` resolves to a namesake (a folder in the
current directory, a package earlier on the path), the command and the app stop at once with a
one-line error naming the file, and exit 2; our own packages pass unnoticed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import mirage_tui.cli as cli
from mirage_tui.guard import MARKER, shadowing_problem
from testkit.paths import ROOT

HOME = ROOT / "mirage_tui"


def run_cli(*args, cwd, pythonpath):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, pythonpath))}
    return subprocess.run([sys.executable, "-m", "mirage_tui.cli", *map(str, args)], cwd=cwd,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


def shadowed(name: str, file) -> str:
    return (f"mirage-tui: error: the module '{name}' is {file.resolve()}, not mirage-tui's own "
            f"(expected beside {HOME}); rename or remove it, or run from another directory")


def package(folder, text: str = "") -> None:
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- the command

@pytest.mark.parametrize("argv", [["data", "list"], []], ids=["data-list", "the-app"])
def test_a_models_package_first_on_the_path_stops_the_command(tmp_path, argv):
    package(tmp_path / "site" / "models", "x = 1\n")
    work = tmp_path / "work"
    work.mkdir()
    out = run_cli(*argv, *(["--db", work / "w.db"] if argv else []), cwd=work,
                  pythonpath=[tmp_path / "site", ROOT])
    assert out.returncode == 2
    assert out.stderr.splitlines() == [shadowed("models", tmp_path / "site/models/__init__.py")]
    assert out.stdout == ""
    assert not (work / "w.db").exists()  # stopped before opening the store


def test_an_engine_folder_in_the_current_directory_stops_the_command(tmp_path):
    package(tmp_path / "engine")
    out = run_cli("data", "list", "--db", tmp_path / "w.db", cwd=tmp_path, pythonpath=[ROOT])
    assert out.returncode == 2
    assert out.stderr.splitlines() == [shadowed("engine", tmp_path / "engine/__init__.py")]


def test_a_normal_run_is_unaffected(tmp_path):
    out = run_cli("data", "list", "--db", tmp_path / "w.db", cwd=tmp_path, pythonpath=[ROOT])
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "no datasets yet" in out.stdout


def test_main_reports_the_problem_in_one_line_and_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(cli, "shadowing_problem", lambda: "the module 'models' is elsewhere")
    assert cli.main(["data", "list"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "mirage-tui: error: the module 'models' is "
                                                "elsewhere\n")


# --------------------------------------------------------------------------- the guard itself

def test_our_own_packages_pass_and_carry_the_marker():
    assert shadowing_problem() is None
    for name in ("engine", "models"):
        assert f'{MARKER} = "{name}"' in (ROOT / name / "__init__.py").read_text()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder first on sys.path with its own mirage_tui/ (the guard's home)."""
    root = tmp_path / "proj"
    (root / "mirage_tui").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(root))
    return root


def test_a_marked_sibling_is_ours(project):
    package(project / "gd_engine", f'{MARKER} = "gd_engine"\n')
    assert shadowing_problem(("gd_engine",), home=project / "mirage_tui") is None


def test_a_sibling_without_the_marker_is_not_ours(project):
    package(project / "gd_plain", "x = 1\n")
    package(project / "gd_other", f'{MARKER} = "engine"\n')  # another package's marker
    for name in ("gd_plain", "gd_other"):
        problem = shadowing_problem((name,), home=project / "mirage_tui")
        assert problem == (f"the module '{name}' is {project / name / '__init__.py'}, not "
                           f"mirage-tui's own (it lacks the {MARKER} line: another package may "
                           "have been installed over it); reinstall mirage-tui")


def test_a_namesake_earlier_on_the_path_is_named(project, tmp_path, monkeypatch):
    package(project / "gd_models", f'{MARKER} = "gd_models"\n')
    package(tmp_path / "earlier" / "gd_models", f'{MARKER} = "gd_models"\n')  # marker is not enough
    monkeypatch.syspath_prepend(str(tmp_path / "earlier"))
    problem = shadowing_problem(("gd_models",), home=project / "mirage_tui")
    assert problem == (f"the module 'gd_models' is {tmp_path / 'earlier/gd_models/__init__.py'}, "
                       f"not mirage-tui's own (expected beside {project / 'mirage_tui'}); rename "
                       "or remove it, or run from another directory")


def test_a_single_file_module_or_a_bare_folder_is_named(project, tmp_path, monkeypatch):
    (tmp_path / "earlier").mkdir()
    (tmp_path / "earlier" / "gd_single.py").write_text("", encoding="utf-8")
    (project / "gd_bare").mkdir()  # a namespace package: no __init__.py
    monkeypatch.syspath_prepend(str(tmp_path / "earlier"))
    home = project / "mirage_tui"
    assert f"'gd_single' is {tmp_path / 'earlier/gd_single.py'}, not" in \
        shadowing_problem(("gd_single",), home=home)
    assert f"'gd_bare' is {project / 'gd_bare'}, not" in shadowing_problem(("gd_bare",), home=home)


def test_a_missing_package_is_said(project):
    assert shadowing_problem(("gd_nowhere_at_all",), home=project / "mirage_tui") == (
        f"the module 'gd_nowhere_at_all' is missing (expected beside {project / 'mirage_tui'}); "
        "reinstall mirage-tui")


def test_the_first_problem_of_several_is_reported(project):
    package(project / "gd_first", f'{MARKER} = "gd_first"\n')
    problem = shadowing_problem(("gd_first", "gd_second_missing"), home=project / "mirage_tui")
    assert problem.startswith("the module 'gd_second_missing' is missing")


def test_the_guard_imports_nothing_of_engine_or_models():
    code = ("import sys\nfrom mirage_tui.guard import shadowing_problem\n"
            "import mirage_tui.cli\nassert shadowing_problem() is None\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('engine', 'models')))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"

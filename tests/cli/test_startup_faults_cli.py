"""What the program reads before it does anything, made hostile: the settings file, the folder
variables, the workspace name and set-up's own variables and files. Each is one line naming the
file or the variable, never a traceback: a broken ``config.toml`` is reported and the command
goes on with the defaults (engine/app_config.py's rule), a folder variable naming a file or a
workspace name the system refuses stops the command with exit 1, and set-up stops with exit 2
before it installs anything. Through the real CLI, as a user types it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit.paths import ROOT
from testkit.runs import mirage_cli, run_together

LONG = "x" * 300


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MIRAGE_ENDPOINT_PORTS": "",
           "MIRAGE_CONFIG_DIR": str(tmp_path / "config"), "MIRAGE_DB": str(tmp_path / "w.db"),
           "MIRAGE_DATA_DIR": str(tmp_path / "data"),
           "MIRAGE_THREAD_BUDGET_DIR": str(tmp_path / "budget")}
    env.update(extra)
    return env


def _one_line(out: subprocess.CompletedProcess, *words: str) -> str:
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


BROKEN_CONFIGS = {
    "not UTF-8": (lambda p: p.write_bytes(b'database = "\xff\xfe"\n'),
                  "not UTF-8 text (byte 0xff at offset 12)"),
    "nested too deeply": (lambda p: p.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n"),
                          "not valid TOML (nested too deeply)"),
    "a folder": (lambda p: p.mkdir(), "cannot read it (not a regular file)"),
    "a FIFO": (lambda p: os.mkfifo(p), "cannot read it (not a regular file)"),
}


def test_a_broken_config_file_is_one_warning_and_every_command_goes_on(tmp_path):
    """Even ``data list``: the file is named, the built-in defaults are used, exit 0; ``config``
    shows the same line and exits 1."""
    commands, envs = [], []
    for name, (make, _) in BROKEN_CONFIGS.items():
        folder = tmp_path / name.replace(" ", "-")
        (folder / "config").mkdir(parents=True)
        make(folder / "config" / "config.toml")
        env = _env(folder)
        commands += [[*mirage_cli(), "data", "list"], [*mirage_cli(), "config"]]
        envs += [env, env]
    outs = run_together(*commands, envs=envs, cwd=ROOT, timeout=120)
    for index, (name, (_, words)) in enumerate(BROKEN_CONFIGS.items()):
        listed, shown = outs[2 * index], outs[2 * index + 1]
        path = tmp_path / name.replace(" ", "-") / "config" / "config.toml"
        line = _one_line(listed, f"mirage-tui: warning: {path}: {words}; using the built-in "
                                 "defaults")
        assert listed.returncode == 0 and "no datasets" in listed.stdout.lower(), \
            (name, listed.stdout)
        assert shown.returncode == 1 and line in shown.stderr, (name, shown.stderr)


@pytest.mark.parametrize("variable", ["MIRAGE_DATA_DIR", "MIRAGE_THREAD_BUDGET_DIR"])
def test_a_folder_variable_naming_a_file_is_one_line_naming_the_variable(tmp_path, variable):
    """``models check`` used to say ``[Errno 17] File exists``, and other commands a
    FileExistsError traceback; now each names the variable, its value and why."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    cases = {"a file": (str(a_file), "it is a file, not a folder"),
             "under a file": (str(a_file / "sub"), "a part of it is a file, not a folder"),
             "too long": (str(tmp_path / LONG), "File name too long")}
    commands = [[*mirage_cli(), "models", "check", "smollm2-135m-instruct", "--max-tokens",
                 "1"] for _ in cases]
    envs = [_env(tmp_path, **{variable: value, "MIRAGE_HOSTING": "hosted"})
            for value, _ in cases.values()]
    if variable == "MIRAGE_DATA_DIR":                   # the registry's own command too
        commands += [[*mirage_cli(), "models", "hosts"] for _ in cases]
        envs += envs
    outs = run_together(*commands, envs=envs, cwd=ROOT, timeout=240)
    for out, (value, why) in zip(outs, [*cases.values(), *cases.values()]):
        assert out.returncode == 1, out.stdout + out.stderr
        text = out.stdout + out.stderr
        assert "Traceback" not in text and "[Errno" not in text, text
        assert f"${variable}={value!r}: cannot use it as a folder ({why}); set it to a " \
               "folder, or unset it" in text, text
    assert a_file.read_text() == "mine\n"


def test_a_workspace_name_the_system_refuses_is_one_line(tmp_path):
    db = tmp_path / f"{LONG}.db"
    outs = run_together([*mirage_cli(), "data", "list", "--db", str(db)],
                        [*mirage_cli(), "data", "list"],
                        envs=[_env(tmp_path), _env(tmp_path, MIRAGE_DB=str(db))], cwd=ROOT)
    for out in outs:
        assert out.returncode == 1
        _one_line(out, f"mirage-tui: error: {db}: File name too long")


def test_a_dataset_path_the_system_refuses_is_one_line(tmp_path):
    """Too long, a FIFO (reading it would wait forever), a path under a FIFO, a name that is
    not UTF-8 (it could not be stored as the dataset's source)."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    latin1 = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.en.json"))
    latin1.write_text('{"data": []}', encoding="utf-8")
    cases = {tmp_path / f"{LONG}.json": "cannot read it (File name too long)",
             fifo: "neither a file nor a folder",
             tmp_path / "pipe.json" / "x": "no such file or folder",
             latin1: "the name is not UTF-8 text (byte 0xe9); rename it to import it"}
    outs = run_together(*[[*mirage_cli(), "data", "import", str(path), "--db",
                           str(tmp_path / f"w{i}.db")] for i, path in enumerate(cases)],
                        envs=[_env(tmp_path)] * len(cases), cwd=ROOT, timeout=120)
    for out, (path, words) in zip(outs, cases.items()):
        assert out.returncode == 1, out.stderr
        shown = str(path).encode("utf-8", "backslashreplace").decode()
        _one_line(out, f"mirage-tui: error: {shown}: {words}")


# ------------------------------------------------------------------ set-up

def _setup_check(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "llama_check.py"), *args],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-5", "0", "1e9", "5 minutes"])
def test_set_ups_check_timeout_set_to_nonsense_is_one_line(value):
    out = _setup_check("settings", MIRAGE_LLAMA_CHECK_TIMEOUT=value)
    assert out.returncode == 2
    _one_line(out, f"setup: error: $MIRAGE_LLAMA_CHECK_TIMEOUT={value!r}: expected a number of "
                   "seconds from 1 to 86400")
    for fine in ("", "30", " 600 "):
        assert _setup_check("settings", MIRAGE_LLAMA_CHECK_TIMEOUT=fine).returncode == 0


def test_set_up_stops_on_a_bad_variable_before_installing_anything(tmp_path):
    venv = tmp_path / "venv"
    out = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), str(venv)],
                         env={**os.environ, "MIRAGE_LLAMA_CHECK_TIMEOUT": "abc"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    _one_line(out, "$MIRAGE_LLAMA_CHECK_TIMEOUT='abc'")
    assert not venv.exists()


def _load_llama_check():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_llama_check_under_test",
                                                  ROOT / "scripts" / "llama_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("stamp", ['["key"]', '"key"', "42", "null", "[" * 5000, "\xff"])
def test_a_stamp_that_is_not_an_object_is_not_trusted(tmp_path, stamp):
    check = _load_llama_check()
    (tmp_path / check.STAMP).write_bytes(stamp.encode("latin-1"))
    assert check.read_stamp(tmp_path) == {}


def test_a_stray_wheel_in_set_ups_cache_is_never_picked(tmp_path, monkeypatch):
    check = _load_llama_check()
    monkeypatch.setenv("MIRAGE_WHEEL_CACHE", str(tmp_path))
    folder = tmp_path / "key"
    folder.mkdir()
    real = folder / f"{check.WHEEL_PREFIX}cp311-cp311-linux_x86_64.whl"
    real.write_bytes(b"real")
    for stray in ("aaa-0.1-py3-none-any.whl", "llama_cpp_python-0.0.1-py3-none-any.whl"):
        (folder / stray).write_bytes(b"stray")
    assert check.cached_wheel("key") == real            # by the pinned version
    (folder / "build.json").write_text('{"wheel": "%s"}' % real.name)
    (folder / f"{check.WHEEL_PREFIX}zzz-stray.whl").write_bytes(b"stray")
    assert check.cached_wheel("key") == real            # by the name set-up recorded
    (folder / "build.json").write_text('{"wheel": "../../etc/passwd"}')
    assert check.cached_wheel("key") is None            # two candidates, no record: rebuilt


def test_a_run_file_that_cannot_be_read_is_one_line_naming_it(tmp_path):
    """``run --config FILE``: not UTF-8, nested too deeply, a FIFO (reading it would wait
    forever), a folder."""
    cases = {tmp_path / "latin1.toml": "not UTF-8 text (byte 0xe9 at offset 14)",
             tmp_path / "deep.toml": "not valid TOML (nested too deeply)",
             tmp_path / "pipe.toml": "cannot read the run file (not a regular file)",
             tmp_path: "cannot read the run file (not a regular file)"}
    (tmp_path / "latin1.toml").write_bytes(b'dataset = "caf\xe9"\n')
    (tmp_path / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    os.mkfifo(tmp_path / "pipe.toml")
    outs = run_together(*[[*mirage_cli(), "run", "--config", str(path), "--db",
                           str(tmp_path / f"w{i}.db")] for i, path in enumerate(cases)],
                        envs=[_env(tmp_path)] * len(cases), cwd=ROOT, timeout=120)
    for out, (path, words) in zip(outs, cases.items()):
        assert out.returncode == 1, out.stderr
        _one_line(out, f"mirage-tui: error: {path}: {words}")


def test_config_names_every_folder_or_program_variable_it_cannot_use(tmp_path):
    """``mirage-tui config`` (and a run, before its row exists: the same check) says it before
    anything needs the folder: a file where a folder belongs, a llama-server that is a
    folder."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    cases = {"MIRAGE_DATA_DIR": (str(a_file), "cannot use it as a folder (it is a file, not "
                                 "a folder)"),
             "MIRAGE_THREAD_BUDGET_DIR": (str(a_file / "sub"), "cannot use it as a folder (a "
                                          "part of it is a file, not a folder)"),
             "MIRAGE_LLAMA_SERVER": (str(tmp_path), "expected an executable file, or empty "
                                     "for none")}
    outs = run_together(*[[*mirage_cli(), "config"] for _ in cases],
                        envs=[_env(tmp_path, **{name: value})
                              for name, (value, _) in cases.items()], cwd=ROOT)
    for out, (name, (value, words)) in zip(outs, cases.items()):
        assert out.returncode == 1
        _one_line(out, f"mirage-tui: warning: ${name}={value!r}: {words}")

"""A claim is keyed on what the names resolve to, not on how they were typed: ``judge
calibrate --labels people`` and ``--labels people@1`` (with the judge named ``smollm2`` and
``smollm2-135m-instruct``, the template with or without its ``@1``) are one calibration, and ``arena judge --reference 'gen-a | oracle'``
and ``--reference 'gen-a/mirage@1 | oracle'`` one arena: run at once, the second is refused in
one line naming the first's pid, and no judge call is made twice.

Two real CLI processes. The first one's judge (the kit's scripted judge, loaded as the catalog
would load the model the name resolves to) stalls inside its first call after saying
``stalled`` on stdout: the test waits on that line, not on a clock."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from testkit.labels import write_labels
from testkit.paths import ROOT

CLI_WITH_SCRIPTED_JUDGE = textwrap.dedent("""
    import sys
    sys.path.insert(0, "tests")
    import models.catalog
    from testkit.arena import ScriptedJudge, StallingJudge

    stall, name = sys.argv[1] == "stall", sys.argv[2]
    models.catalog.load_generator = lambda spec, **opts: (
        StallingJudge(name=name, after=0) if stall else ScriptedJudge(name=name))
    from mirage_tui.cli import main
    sys.exit(main(sys.argv[3:]))
""")
MODEL = "smollm2-135m-instruct"       # what the catalog loads for "smollm2"


def _command(stall: bool, *args) -> list[str]:
    return [sys.executable, "-c", CLI_WITH_SCRIPTED_JUDGE, "stall" if stall else "answer",
            MODEL, *args]


@pytest.fixture
def first_holds(request):
    """Start ``first`` (a CLI command) with a stalling judge; yield it once it stalls."""
    children = []

    def start(*args):
        child = subprocess.Popen(_command(True, *args), cwd=ROOT, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        children.append(child)
        assert child.stdout.readline().strip() == "stalled", child.stderr.read()
        return child

    yield start
    for child in children:
        child.kill()
        child.wait()


def _second(*args) -> subprocess.CompletedProcess:
    return subprocess.run(_command(False, *args), cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_one_calibration_however_its_labels_and_judge_are_spelled(tmp_path, first_holds):
    from engine.store import Store

    db = tmp_path / "w.db"
    store = Store(db)
    write_labels(store, tmp_path, "people", n=8)
    store.close()
    first = first_holds("judge", "calibrate", "--db", str(db), "--judge", "smollm2",
                        "--labels", "people", "--boot", "20", "--concurrency", "1")
    for labels, template in (("people@1", []), ("people", []),
                             ("people", ["--template", "ragqa_arena_pairwise@1"])):
        second = _second("judge", "calibrate", "--db", str(db), "--judge", MODEL,
                         "--labels", labels, "--boot", "20", *template)
        assert second.returncode == 1, second.stderr
        [line] = second.stderr.strip().splitlines()
        assert line == (f"mirage-tui: error: calibration of {MODEL} on people@1 (overall, "
                        "random order, ragqa_arena_pairwise) is running "
                        f"(pid {first.pid}); wait for it to end, or stop that process first")


def test_one_reference_arena_however_the_reference_is_spelled(answered_path, first_holds):
    db = str(answered_path)
    first = first_holds("arena", "judge", "r", "--db", db, "--judge", "fake", "--pairs",
                        "reference", "--reference", "gen-a | oracle", "--concurrency", "1")
    second = _second("arena", "judge", "r", "--db", db, "--judge", "fake", "--pairs",
                     "reference", "--reference", "gen-a/mirage@1 | oracle")
    assert second.returncode == 1, second.stderr
    [line] = second.stderr.strip().splitlines()
    assert line.startswith("mirage-tui: error: arena reference:") and \
        f"is being judged (pid {first.pid})" in line, line

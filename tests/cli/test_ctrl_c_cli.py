"""Issue 35, item 7: Ctrl-C twice ends a long command at once, with exit 130 and one line,
even while a judge call hangs (the interpreter would otherwise wait for it at exit). And
``judge fit --judge LLM``: one Ctrl-C cuts the judge's call in flight (its ``abort``) and
ends the fit with 130, nothing stored, after its progress.

The command runs in a real process whose judge stalls inside a call after saying so on stdout;
the test presses Ctrl-C, waits for the "cancelling" line, presses it again (or not) and reads
how the process ended."""

from __future__ import annotations

import signal
import textwrap

import pytest

from engine.store import Store
from testkit.labels import write_labels
from testkit.signals import stopped_by

STALLING_CLI = textwrap.dedent("""
    import sys
    sys.path.insert(0, "tests")
    import models.catalog
    from mirage_tui import cli
    from testkit.arena import StallingJudge

    models.catalog.load_generator = lambda name, **opts: StallingJudge()
    sys.exit(cli.main(sys.argv[1:]))
""")

ABORTABLE_CLI = STALLING_CLI.replace("StallingJudge()", "AbortableJudge()").replace(
    "from testkit.arena import StallingJudge", textwrap.dedent("""
    import threading
    from models.base import RequestCancelled
    from testkit.arena import StallingJudge

    class AbortableJudge(StallingJudge):
        # stalls as StallingJudge does, until abort() cuts the call (a model host's cancel)
        cut = threading.Event()

        def generate(self, prompt, params=None):
            if len(self.calls) >= self.after:
                print("stalled", flush=True)
                self.cut.wait()
                raise RequestCancelled("fake: the request was cancelled after 0 of 8 tokens")
            return super().generate(prompt, params)

        def abort(self):
            self.cut.set()
    """))

INTERRUPTED = "mirage-tui: interrupted; run the same command again to resume"


@pytest.fixture
def db(answered_path, tmp_path):
    path = answered_path
    store = Store(path)
    write_labels(store, tmp_path, "people", n=8)
    write_labels(store, tmp_path, "many", n=24)        # enough pairs for a fit
    store.close()
    return path


FIT = ["judge", "fit", "mine", "--labels", "many", "--features", "length", "--judge", "fake"]


def _interrupted(script: str, command: list[str], db, twice: bool) -> tuple[int, str]:
    """Run ``command`` with ``script``'s judge; once it says ``stalled``, Ctrl-C (``twice``:
    again once it said it is cancelling); its exit status and stderr."""
    return stopped_by(script, [*command, "--db", str(db)], signal.SIGINT, twice=twice,
                      marker="mirage-tui: cancelling")


@pytest.mark.parametrize("command", [
    ["arena", "judge", "r", "--judge", "fake"],
    ["judge", "calibrate", "--judge", "fake", "--labels", "people", "--boot", "20"],
    FIT,
], ids=["arena judge", "judge calibrate", "judge fit"])
def test_a_second_ctrl_c_ends_a_hung_judging_at_once_with_130(db, command):
    code, err = _interrupted(STALLING_CLI, command, db, twice=True)
    assert code == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == INTERRUPTED and err.count("interrupted") == 1, err
    assert "Traceback" not in err


def test_one_ctrl_c_cuts_the_judge_of_a_fit_which_stores_nothing_and_exits_130(db):
    code, err = _interrupted(ABORTABLE_CLI, FIT, db, twice=False)
    assert code == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "mirage-tui: cancelling" in err and "Traceback" not in err
    assert lines[-2].startswith("fit mine ") and "/24 cancelled" in lines[-2], err  # progress
    assert lines[-1].startswith("mirage-tui: judge fit cancelled; nothing stored"), err
    store = Store(db)
    assert store.query("SELECT COUNT(*) FROM fitted_judges")[0][0] == 0
    store.close()

"""Stop and quit, in order and in words: ``s`` in the quit dialog cancels the run (stopped by
quitting, resumable), says so on screen with how long the model host the app used stays up for
other runs, and the app ends after the run has stopped; ``run_app`` prints the host's line on
the terminal once the screen is gone. A stand-in host process (a sleeping child) and a scripted
model; nothing is timed."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from engine.runs import RunConfig
from engine.store import Store
from mirage_tui import app as app_module
from mirage_tui.dialogs.choice import ChoiceModal
from models.host import registry, supervisor
from testkit.scripted import ScriptedGenerator
from testkit.tui import RecordingApp, wait_for_workers, wait_until

FAKE = "scripted-fake"
KEY = "d" * 32


@pytest.fixture
def leased_host(tmp_path, monkeypatch):
    """A host entry (a sleeping child stands in for the host) this process leases."""
    monkeypatch.setenv(registry.DATA_DIR_ENV, str(tmp_path / "data"))
    registry.hosts_dir()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    registry.write_entry(registry.HostEntry(
        key=KEY, name="smollm2-135m-instruct", model="m.gguf", url="http://127.0.0.1:1",
        pid=child.pid, pid_started=registry.process_start_time(child.pid), threads=2,
        n_ctx=2048, backend="llama.cpp", started=time.time(), log="host.log",
        extra={"grace": 10.0, "idle_since": None}))
    monkeypatch.setattr(supervisor, "_LEASED", {KEY: registry.add_lease(KEY)})
    yield child.pid
    child.kill()
    child.wait()


class OrderedApp(RecordingApp):
    """Remembers, in order, what it said and when the run ended and the app exited."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.events: list[str] = []

    def notify(self, message, **kwargs) -> None:
        self.events.append(f"said: {message}")
        super().notify(message, **kwargs)

    def _run_ended(self) -> None:
        self.events.append("run ended")
        super()._run_ended()

    def exit(self, *args, **kwargs) -> None:
        self.events.append("exit")
        super().exit(*args, **kwargs)


@pytest.mark.asyncio
async def test_stop_and_quit_says_how_long_the_host_stays_up_then_ends_after_the_run(
        db_path, leased_host):
    slow = ScriptedGenerator(gate=threading.Event(), open_calls=1)
    app = OrderedApp(db_path, generators={FAKE: slow})
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_workers(pilot)
        app.start_run(RunConfig(dataset="demo", generators=[FAKE], sample=4, seed=0,
                                settings=["base", "oracle", "mixed"], name="quitting"))
        await wait_until(pilot, lambda: len(slow.calls) >= 2, 60, "the second item")
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceModal) and app.screen.id == "quit-modal"
        app.events.clear()
        await pilot.press("s")
        slow.gate.set()
        await wait_until(pilot, lambda: not app.is_running, 60, "the app to quit")
    said = [e for e in app.events if e.startswith("said: Stopping the run")]
    assert said == [
        "said: Stopping the run, then quitting. It stays resumable: the next launch offers "
        "it. The model host smollm2-135m-instruct stays up 10 s for other runs "
        f"(pid {leased_host}; mirage-tui models hosts --stop ends it now)."]
    order = [e if not e.startswith("said:") else "said" for e in app.events]
    assert order.index("said") < order.index("run ended") < order.index("exit")
    assert app.hosts_left == [
        f"model host smollm2-135m-instruct stays up 10 s for other runs (pid {leased_host}; "
        "mirage-tui models hosts --stop ends it now)"]
    store = Store(db_path)
    assert store.query("SELECT status FROM runs WHERE name = 'quitting'")[0][0] == "cancelled"
    store.close()


def test_run_app_prints_the_hosts_line_once_the_screen_is_gone(monkeypatch, capsys):
    class Ended:
        hosts_left = ["model host x stays up 10 s for other runs (pid 1; …)"]

        def __init__(self, *args, **kwargs) -> None:
            pass

        def run(self) -> None:
            print("app ran")

    monkeypatch.setattr(app_module, "MirageApp", Ended)
    app_module.run_app("unused.db")
    assert capsys.readouterr().out.splitlines() == [
        "app ran", "mirage-tui: model host x stays up 10 s for other runs (pid 1; …)"]


def test_the_process_ends_after_its_threads_and_exit_handlers_without_the_interpreters_teardown(
        tmp_path):
    """What ``mirage-tui`` does once the app has closed (``cli._end_after_app``): a thread
    quitting waits for finishes, then the exit handlers run (the model hosts' leases), the
    output is flushed, and the process ends with status 0 without the interpreter's own
    teardown (no object's finaliser runs: it took 0.7-1.7 s on a loaded machine)."""
    events = tmp_path / "events.txt"
    script = f"""
import atexit, sys, threading, time
sys.path.insert(0, {str(app_module.__file__).rsplit('/mirage_tui/', 1)[0]!r})
from mirage_tui import cli
def note(what):
    with open({str(events)!r}, "a") as f:
        f.write(what + "\\n")
class Finaliser:
    def __del__(self):
        note("finaliser")
kept = Finaliser()
atexit.register(note, "exit handler")
threading.Thread(target=lambda: (time.sleep(0.2), note("thread"))).start()
print("printed", end="")
cli._end_after_app()
note("after")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout == "printed", out.stderr
    assert events.read_text().splitlines() == ["thread", "exit handler"]

"""Pilot helpers for the TUI tests (after harlequin's functional tests): the real app that
remembers its notifications, and waits that settle the thread workers (and the messages they
post, which may start the next worker) before an assertion."""

from __future__ import annotations

import time

from textual.widgets import DataTable, Input, Static
from textual.worker import WorkerState

from mirage_tui.app import MirageApp


class RecordingApp(MirageApp):
    """The real app, remembering every notification it showed."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[tuple[str, str]] = []

    def notify(self, message, *, severity="information", **kwargs) -> None:
        self.notes.append((str(message), severity))
        super().notify(message, severity=severity, **kwargs)

    def errors(self) -> list[str]:
        return [m for m, sev in self.notes if sev == "error"]


async def _complete(pilot) -> None:
    """Wait for the workers running now; one cancelled meanwhile (an exclusive worker that a
    newer one replaced) is done as far as waiting goes."""
    from textual.worker import WorkerCancelled

    try:
        await pilot.app.workers.wait_for_complete()
    except WorkerCancelled:
        pass


def _busy(pilot) -> list:
    return [w for w in pilot.app.workers
            if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]


async def wait_for_workers(pilot, rounds: int = 40) -> None:
    """Wait until no worker is pending or running and the messages they posted are handled."""
    for _ in range(rounds):
        await _complete(pilot)
        await pilot.pause()
        busy = _busy(pilot)
        if not busy:
            await pilot.pause()
            return
    raise AssertionError(f"workers still busy: {busy}")


async def settle(pilot, rounds: int = 60, quiet: int = 3) -> None:
    """Wait until no worker is pending or running, ``quiet`` times in a row: a worker's
    message may start the next worker only when it is handled, a pause later."""
    idle = 0
    for _ in range(rounds):
        await _complete(pilot)
        await pilot.pause()
        busy = _busy(pilot)
        idle = 0 if busy else idle + 1
        if idle >= quiet:
            return
    raise AssertionError(f"workers still busy: {busy}")


async def tables_laid_out(pilot, rounds: int = 50) -> None:
    """Wait until every DataTable on the screen has sized its columns to its rows: a table
    does that on its next Idle event, which a loaded machine may deliver after the rows
    arrive, so that a snapshot could show columns as wide as their headers only."""
    from textual.widgets import DataTable

    for _ in range(rounds):
        pending = [t for t in pilot.app.screen.query(DataTable)
                   if getattr(t, "_require_update_dimensions", False)]
        if not pending:
            return
        await pilot.pause(0.02)
    raise AssertionError(f"tables still sizing their columns: {pending}")


async def screen_stable(pilot, rounds: int = 60, gap: float = 0.15) -> None:
    """Wait until two renders of the screen ``gap`` seconds apart are the same, workers idle
    and tables sized: what a snapshot needs. A late message (a page of rows, a refill after a
    filter settles) can change the screen after the workers look done; a loaded machine
    delivers it later still (the Inspector was caught mid-refill 2 runs in 3 under load)."""
    before = None
    for _ in range(rounds):
        await tables_laid_out(pilot)
        now = pilot.app.export_screenshot()
        if now == before and not _busy(pilot):
            return
        before = now
        await pilot.pause(gap)
    raise AssertionError("the screen kept changing")


async def open_screen(pilot, screen) -> None:
    """Push ``screen`` once the app has settled, and settle again."""
    await settle(pilot)
    await pilot.app.push_screen(screen)
    await settle(pilot)


async def palette(pilot, command: str) -> None:
    """Open the command palette, type ``command``, run the first match, and settle."""
    await pilot.press("ctrl+p")
    await pilot.press(*command)
    await wait_for_workers(pilot)
    await pilot.press("enter")
    await wait_for_workers(pilot)


async def wait_until(pilot, condition, timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.05)


async def wait_for_run(pilot, timeout: float = 120.0) -> None:
    """Until the run controller's run has ended and the screens have caught up."""
    controller = pilot.app.run_controller
    await wait_until(pilot, lambda: not controller.running and (
        controller.summary is not None or controller.error is not None), timeout, "the run")
    await wait_for_workers(pilot)


async def start_sampled_run(pilot, sample: int, items: int) -> Static:
    """From a fresh app: New run (``n``), a sample of ``sample`` queries, wait for the plan of
    ``items`` items, start it (``ctrl+s``); returns the form's plan line."""
    await wait_for_workers(pilot)
    await pilot.press("n")
    await wait_for_workers(pilot)
    form = pilot.app.screen
    form.query_one("#run-sample", Input).value = str(sample)
    plan = form.query_one("#run-plan", Static)
    await wait_until(pilot, lambda: f"Plan: {items} items" in text_of(plan), 30, "the plan")
    await pilot.press("ctrl+s")
    return plan


async def open_live(pilot):
    """Live run (``l``) once the app has settled, after its report is drawn; returns it."""
    from mirage_tui.screens.live_run import LiveRunScreen

    await settle(pilot)
    await pilot.press("l")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, LiveRunScreen)
    await wait_until(pilot, lambda: screen.report is not None, what="the live report")
    await settle(pilot)
    return screen


async def open_judge_dialog(pilot, run_name: str):
    """The Leaderboard of ``run_name``, then its judge dialog (``j``); returns the dialog."""
    from mirage_tui.dialogs.judge_arena import JudgeArenaScreen
    from mirage_tui.screens.leaderboard import LeaderboardScreen

    await open_screen(pilot, LeaderboardScreen(run_name))
    await pilot.press("j")
    await settle(pilot)
    assert isinstance(pilot.app.screen, JudgeArenaScreen), pilot.app.screen
    return pilot.app.screen


def text_of(widget: Static) -> str:
    content = widget.content
    return getattr(content, "plain", None) or str(content)


def cells(table: DataTable, key: str) -> list[str]:
    return [getattr(c, "plain", None) or str(c) for c in table.get_row(key)]

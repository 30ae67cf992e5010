"""A feature widget's worker error is told as its own message type, once: a worker that a
newer one of its exclusive group cancelled tells nothing (its error is stale)."""

from __future__ import annotations

import threading

import pytest
from textual import on, work
from textual.app import App
from textual.widgets import Static

from mirage_tui.screens.features import Failed, failures_as
from testkit.tui import settle

pytestmark = pytest.mark.asyncio


class PartFailed(Failed):
    what = "the part"


class _Store:
    """Only what failures_as touches: it closes the thread's connection."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


class _Part(Static):
    def __init__(self) -> None:
        super().__init__()
        self.told: list[str] = []
        self.store = _Store()
        self.release = threading.Event()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load(self, label: str, wait: bool) -> None:
        with failures_as(self, PartFailed, self.store):
            if wait:
                self.release.wait(10)
            raise OSError(f"disk gone ({label})")

    @on(PartFailed)
    def _failed(self, message: PartFailed) -> None:
        self.told.append(message.error)


class _App(App):
    def compose(self):
        yield _Part()


async def test_a_cancelled_worker_tells_nothing_and_the_newer_one_tells_once():
    app = _App()
    async with app.run_test() as pilot:
        part = app.query_one(_Part)
        first = part.load("old", wait=True)
        await pilot.pause()
        part.load("new", wait=False)           # exclusive: the first is cancelled
        assert first.is_cancelled
        part.release.set()                     # the old one fails only now
        await settle(pilot)
        assert part.told == ["OSError: disk gone (new)"]
        assert part.store.closed == 2          # each thread's connection closed all the same


async def test_a_worker_that_fails_alone_is_told_with_its_prefix_and_type():
    app = _App()
    async with app.run_test() as pilot:
        part = app.query_one(_Part)
        part.load("only", wait=False)
        await settle(pilot)
        assert part.told == ["OSError: disk gone (only)"]

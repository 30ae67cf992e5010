"""Moving between the app's screens: each screen is a Textual *mode* (one stack each), so
moving between them never piles screens up.

:class:`ScreenNavigation` is the app's base: ``go_to(mode)`` shows a mode's screen as it was
left, remembering where it came from; Escape (``action_go_back``) pops a pushed screen, else
goes back to the previous mode. A mode's module is imported when the mode is first shown, so
a screen that cannot be imported is a notification, not a crash.
"""

from __future__ import annotations

import asyncio
import time
from importlib import import_module
from typing import TypeVar

from textual.app import App
from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen, Screen
from textual.worker import WorkerState

# mode -> (the module that holds its screen, the screen's class, what to call it in messages)
MODE_SCREENS = {"datasets": ("mirage_tui.screens.datasets", "DatasetsScreen", "Datasets"),
                "models": ("mirage_tui.screens.models", "ModelsScreen", "Models"),
                "runs": ("mirage_tui.screens.runs", "RunsScreen", "Runs"),
                "leaderboard": ("mirage_tui.screens.leaderboard", "LeaderboardScreen",
                                "Leaderboard"),
                "new_run": ("mirage_tui.screens.new_run", "NewRunScreen", "New run"),
                "live": ("mirage_tui.screens.live_run", "LiveRunScreen", "Live run")}

LOAD_WAIT = 5.0
"""The longest a palette command of another screen waits for that screen's first loads."""

ScreenType = TypeVar("ScreenType", bound=Screen)


def mode_screen_factory(mode: str):
    """What Textual's ``MODES`` calls to make ``mode``'s screen, importing it then."""
    module, name, _ = MODE_SCREENS[mode]
    return lambda: getattr(import_module(module), name)()


class ScreenNavigation(App):
    """An app whose screens are the modes of :data:`MODE_SCREENS`."""

    MODES = {mode: mode_screen_factory(mode) for mode in MODE_SCREENS}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._mode_history: list[str] = []
        self._switching: AwaitComplete | None = None   # the last switch_mode

    def mode_screens(self, mode: str) -> list:
        """The screens of a mode's stack (empty until the mode was first shown)."""
        return list(self._screen_stacks.get(mode, []))

    def mode_screen(self, mode: str, kind: type[ScreenType]) -> ScreenType | None:
        """The ``kind`` screen of a mode's stack; None until the mode was first shown."""
        return next((s for s in self.mode_screens(mode) if isinstance(s, kind)), None)

    def go_to(self, mode: str) -> bool:
        """Show a mode's screen (its stack as it was left); False when it is not available."""
        if mode == self.current_mode:
            return True
        if mode not in self._screen_stacks:
            module, _, title = MODE_SCREENS.get(mode, (None, None, mode))
            try:
                if module is not None:
                    __import__(module)
            except ImportError as exc:
                self.notify(f"The {title} screen is not available in this build ({exc}).",
                            severity="warning", markup=False)
                return False
        self._mode_history = [m for m in self._mode_history if m != self.current_mode]
        self._mode_history.append(self.current_mode)
        self._switching = self.switch_mode(mode)
        return True

    async def show_mode(self, mode: str) -> Screen | None:
        """Show ``mode``'s own screen: its stack as it was left, less the screens pushed over
        it (an Inspector opened from a bar, a query opened from the list), so that a screen's
        key always shows that screen; a dialog waiting for an answer stays. None when the
        mode is not available."""
        if mode != self.current_mode:
            if not self.go_to(mode):
                return None
            if self._switching is not None:   # a screen never shown is made and mounted
                await self._switching
        stack = self.mode_screens(mode)
        if not stack:
            return None
        while len(self.screen_stack) > 1 and not isinstance(self.screen, ModalScreen):
            await super().pop_screen()
        return stack[0]

    async def run_in_mode(self, mode: str, action: str) -> None:
        """Go to ``mode``'s screen and run ``action`` there (a palette command of a screen
        that is not shown)."""
        base = await self.show_mode(mode)
        if base is None:
            return
        # what the screen is loading first (its rows: the command acts on the highlighted
        # one), then the command, queued behind the messages those loads posted
        deadline = time.monotonic() + LOAD_WAIT
        while time.monotonic() < deadline and any(
                w.node is base and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                for w in self.workers):
            await asyncio.sleep(0.02)
        base.call_later(base.run_action, action)

    def action_go_back(self) -> None:
        """Escape: pop a pushed screen, else return to the previous mode."""
        if len(self.screen_stack) > 1:
            self.pop_screen()
            return
        while self._mode_history:
            mode = self._mode_history.pop()
            if mode != self.current_mode and mode in self._modes:
                self.switch_mode(mode)
                return

    def pop_screen(self) -> AwaitComplete:
        # a mode's base screen that pops itself on Escape goes back to the previous mode
        if len(self._screen_stack) <= 1 and self._mode_history:
            self.action_go_back()
            return AwaitComplete.nothing()
        return super().pop_screen()

    # the screen keys (1 2 3 4 n l) show that screen itself, whatever was opened over it
    async def action_show_datasets(self) -> None:
        await self.show_mode("datasets")

    async def action_show_models(self) -> None:
        await self.show_mode("models")

    async def action_show_runs(self) -> None:
        await self.show_mode("runs")

    async def action_show_leaderboard(self) -> None:
        await self.show_mode("leaderboard")

    async def action_new_run(self) -> None:
        await self.show_mode("new_run")

    async def action_live_run(self) -> None:
        await self.show_mode("live")

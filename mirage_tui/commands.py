"""The command palette: verb-first commands (``noun: verb``) for everything the keys do,
after posting's; every command of the app, from any screen, each with the screen it opens or
belongs to ("runs: export… — Runs").

Commands are declared beside what owns them, as class data (:class:`PaletteCommand`): the
app's ``PALETTE`` holds the global ones, a screen's ``PALETTE`` those of that screen. The
palette lists the app's commands, every main screen's (the modes of
:data:`mirage_tui.navigation.MODE_SCREENS`, whether shown yet or not) and the current
screen's own when it is a pushed one (a query, the Inspector: they need what opened them).
A main screen's commands follow the app command whose action the screen names in
``PALETTE_AFTER`` (at the end when it names none), so the list reads noun by noun. Running a
main screen's command from another screen goes to that screen first (``run_in_mode``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from importlib import import_module
from typing import Awaitable, Callable, Protocol

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode

APP = "app"
"""Where a command that belongs to no screen (quit, the theme, the keys) says it runs."""

ACTION_SCREEN = {"show_datasets": "Datasets", "show_models": "Models", "show_runs": "Runs",
                 "show_leaderboard": "Leaderboard", "new_run": "New run",
                 "live_run": "Live run", "quick_comparison": "Live run",
                 "cancel_run": "Live run", "resume_run": "Live run"}
"""The screen each of the app's own commands opens (or acts on); the rest say :data:`APP`."""


@dataclass(frozen=True)
class PaletteCommand:
    """One palette entry: ``noun: verb`` title, a line of help, the action it runs."""

    title: str
    help: str
    action: str


@dataclass(frozen=True)
class PaletteEntry:
    """A command as the palette offers it: where it belongs, and how it runs."""

    command: PaletteCommand
    where: str                  # the screen's name ("Runs"), or APP
    run: Callable[[], object]

    @property
    def title(self) -> str:
        return f"{self.command.title} — {self.where}"


def _has(node, action: str) -> bool:
    """Whether ``node`` (a screen, its class, the app) has ``action`` (``step(1)``: step)."""
    return hasattr(node, f"action_{action.partition('(')[0]}")


def _mode_classes() -> list[tuple[str, str, type]]:
    """(mode, the screen's name, its class) of every main screen that can be imported."""
    from mirage_tui.navigation import MODE_SCREENS

    out = []
    for mode, (module, name, title) in MODE_SCREENS.items():
        try:
            out.append((mode, title, getattr(import_module(module), name)))
        except (ImportError, AttributeError):   # not in this build: its commands neither
            continue
    return out


class PaletteApp(Protocol):
    """What the palette uses of the app: running an action, here or on another mode's screen
    (:meth:`mirage_tui.navigation.ScreenNavigation.run_in_mode`)."""

    def run_action(self, action: str) -> Awaitable[bool]: ...

    async def run_in_mode(self, mode: str, action: str) -> None: ...


def palette_entries(screen: DOMNode, app: PaletteApp) -> list[PaletteEntry]:
    """Every command the palette offers on ``screen``, in order."""
    modes = _mode_classes()
    current_mode = next((m for m, _, kind in modes if type(screen) is kind), None)
    groups: dict[str, list[PaletteEntry]] = {}

    def add(after: str, entry: PaletteEntry) -> None:
        groups.setdefault(after, []).append(entry)

    for mode, title, kind in modes:
        for command in getattr(kind, "PALETTE", ()):
            if not _has(kind, command.action):
                continue
            if mode == current_mode:
                run = partial(screen.run_action, command.action)
            else:
                run = partial(app.run_in_mode, mode, command.action)
            add(getattr(kind, "PALETTE_AFTER", ""), PaletteEntry(command, title, run))
    if current_mode is None:      # a pushed screen's own (a query, the Inspector …)
        where = getattr(screen, "PALETTE_NAME", "") or type(screen).__name__.removesuffix(
            "Screen")
        for command in getattr(screen, "PALETTE", ()):
            if _has(screen, command.action):
                add(getattr(screen, "PALETTE_AFTER", ""),
                    PaletteEntry(command, where, partial(screen.run_action, command.action)))
    entries: list[PaletteEntry] = []
    for command in getattr(app, "PALETTE", ()):
        node = screen if _has(screen, command.action) else app
        if _has(node, command.action):
            entries.append(PaletteEntry(command, ACTION_SCREEN.get(command.action, APP),
                                        partial(node.run_action, command.action)))
        entries += groups.pop(command.action, [])
    return entries + [e for group in groups.values() for e in group]


class MirageCommands(Provider):
    """The palette's provider: :func:`palette_entries` of the screen it was opened on."""

    def _available(self):
        for entry in palette_entries(self.screen, self.app):
            yield entry.title, entry.command.help, entry.run

    async def discover(self) -> Hits:
        for title, help_text, callback in self._available():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._available():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)

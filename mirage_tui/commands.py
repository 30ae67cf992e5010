"""The command palette: verb-first commands (``noun: verb``) for everything the keys do,
after posting's.

Commands are declared beside what owns them, as class data (:class:`PaletteCommand`): the
app's ``PALETTE`` holds the global ones, a screen's ``PALETTE`` those that make sense only on
that screen. The palette lists the app's commands, each run on the current screen when the
screen has the action itself (Live run cancels and resumes its own run), else on the app;
the current screen's own commands follow the app command whose action the screen names in
``PALETTE_AFTER`` (at the end when it names none), so the list reads noun by noun.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode


@dataclass(frozen=True)
class PaletteCommand:
    """One palette entry: ``noun: verb`` title, a line of help, the action it runs."""

    title: str
    help: str
    action: str


def palette_entries(screen: DOMNode, app: DOMNode) -> list[tuple[PaletteCommand, DOMNode]]:
    """The commands offered on ``screen``, in order, each with the node that runs it."""
    own = [c for c in getattr(screen, "PALETTE", ())
           if hasattr(screen, f"action_{c.action}")]
    after = getattr(screen, "PALETTE_AFTER", "")
    entries: list[tuple[PaletteCommand, DOMNode]] = []
    for command in getattr(app, "PALETTE", ()):
        if hasattr(screen, f"action_{command.action}"):
            entries.append((command, screen))
        elif hasattr(app, f"action_{command.action}"):
            entries.append((command, app))
        if command.action == after:
            entries += [(c, screen) for c in own]
            own = []
    return entries + [(c, screen) for c in own]


class MirageCommands(Provider):
    """The palette's provider: :func:`palette_entries` of the screen it was opened on."""

    def _available(self):
        for command, node in palette_entries(self.screen, self.app):
            yield command.title, command.help, partial(node.run_action, command.action)

    async def discover(self) -> Hits:
        for title, help_text, callback in self._available():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._available():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)

"""A screen that asks the footer to refresh many times (Live does, a few times a second for the
whole run) must not make it recompose each time: every recompose leaves its keys' watchers on
the Footer for good, and a long run slowed to a freeze. A real change still reaches it."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from mirage_tui.screens.base import BaseScreen


class _Screen(BaseScreen):
    BINDINGS = [Binding("c", "cancel", "Cancel", id="t.cancel"), Binding("r", "resume", "Resume"),
                Binding("i", "inspect", "Inspect")]

    def __init__(self) -> None:
        super().__init__()
        self.running = True

    def compose(self) -> ComposeResult:
        yield Static("live")
        yield Footer()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "cancel":
            return self.running
        if action == "resume":
            return not self.running
        return True


class _App(App):
    ENABLE_COMMAND_PALETTE = False

    def on_mount(self) -> None:
        self.push_screen(_Screen())


def _watchers(footer: Footer) -> int:
    return len(getattr(footer, "__watchers", {}).get("compact", []))


def _shown(footer: Footer) -> list[str]:
    return sorted(str(key.description) for key in footer.query("FooterKey"))


@pytest.mark.asyncio
async def test_refreshing_unchanged_bindings_leaves_the_footer_as_it_is():
    app = _App()
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        footer = screen.query_one(Footer)
        await pilot.pause()
        before = _watchers(footer)
        assert _shown(footer) == ["Cancel", "Inspect"]
        for _ in range(60):                 # Live's redraws, nothing the footer shows changed
            screen.refresh_bindings()
            await pilot.pause()
        assert _watchers(footer) == before

        screen.running = False              # the run ended: cancel goes, resume comes
        screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert _shown(footer) == ["Inspect", "Resume"]
        assert _watchers(footer) <= before + 3


@pytest.mark.asyncio
async def test_the_footer_follows_a_key_map_change():
    app = _App()
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert [k.key for k in footer.query("FooterKey") if k.description == "Cancel"] == ["c"]
        app.update_keymap({"t.cancel": "x"})
        await pilot.pause()
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert [k.key for k in footer.query("FooterKey") if k.description == "Cancel"] == ["x"]

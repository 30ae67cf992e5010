"""Issue 18, finding 10: the palette lists every command of the app from any screen, each
with the screen it opens or belongs to, and a command of another screen goes there first."""

from __future__ import annotations

from importlib import import_module

import pytest

from mirage_tui.commands import APP, palette_entries
from mirage_tui.dialogs.export_run import ExportRunScreen
from mirage_tui.navigation import MODE_SCREENS
from mirage_tui.screens.models import ModelsScreen
from mirage_tui.screens.runs import RunsScreen
from testkit.tui import RecordingApp, palette, settle

NOT_COMMANDS = {"back", "go_back", "app.go_back"}      # Escape is a key, not a command


def _mode_class(mode: str):
    module, name, _ = MODE_SCREENS[mode]
    return getattr(import_module(module), name)


@pytest.mark.asyncio
async def test_every_footer_key_of_every_main_screen_is_in_the_palette_everywhere(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        for key in ("1", "3"):                 # from two screens, one never shown before
            await pilot.press(key)
            await settle(pilot)
            entries = palette_entries(app.screen, app)
            titles = [e.title for e in entries]
            assert len(titles) == len(set(titles)), "a command is listed twice"
            names = {title for _, _, title in MODE_SCREENS.values()} | {APP}
            assert all(e.where in names for e in entries), titles
            listed = {(e.where, e.command.action) for e in entries}
            for mode, (_, _, title) in MODE_SCREENS.items():
                for binding in _mode_class(mode).BINDINGS:
                    if binding.show and binding.action not in NOT_COMMANDS:
                        assert (title, binding.action) in listed, (title, binding.action)
            assert "runs: export selected… — Runs" in titles
            assert "datasets: import file… — Datasets" in titles
            assert "models: check selected — Models" in titles
            assert "app: quit — app" in titles


@pytest.mark.asyncio
async def test_a_command_of_another_screen_goes_there_first(workspace):
    app = RecordingApp(workspace["path"])
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await palette(pilot, "runs: export selected")      # from Datasets
        await settle(pilot)
        assert isinstance(app.screen, ExportRunScreen)
        assert app.current_mode == "runs" and isinstance(app.screen_stack[0], RunsScreen)
        await pilot.press("escape")
        await settle(pilot)
        await palette(pilot, "models: refresh")
        assert isinstance(app.screen, ModelsScreen)

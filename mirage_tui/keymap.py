"""Key overrides from the app config (``[keys]`` in config.toml: :mod:`engine.app_config`).

Textual rebinds keys by binding id (``App.set_keymap``); the project's bindings carry none, so
:func:`name_bindings` gives each binding of the app and of the main screens (``MODE_SCREENS``)
the id ``SCOPE.ACTION`` (``app.quit``, ``runs.rename``). :func:`keymap` turns the config's
overrides into Textual's keymap: a ``[keys]`` entry rebinds that action wherever it is bound,
a ``[keys.SCREEN]`` entry only on that screen.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import import_module

from engine.app_config import GLOBAL_KEYS, AppConfig
from mirage_tui.navigation import MODE_SCREENS

APP_SCOPE = "app"


def _classes(app_class) -> dict[str, type]:
    out = {APP_SCOPE: app_class}
    for mode, (module, name, _) in MODE_SCREENS.items():
        out[mode] = getattr(import_module(module), name)
    return out


def name_bindings(app_class) -> dict[str, list[str]]:
    """Give every binding of the app and its main screens an id (module docstring); returns
    each scope's actions (the app's under :data:`engine.app_config.GLOBAL_KEYS` as well)."""
    actions: dict[str, list[str]] = {}
    for scope, cls in _classes(app_class).items():
        merged = cls._merged_bindings
        if merged is None:
            continue
        for key, bindings in merged.key_to_bindings.items():
            merged.key_to_bindings[key] = [
                b if b.id is not None else replace(b, id=f"{scope}.{b.action}")
                for b in bindings]
            for b in bindings:
                actions.setdefault(scope, [])
                # namespaced actions (app.focus_next) are Textual's own, not the screen's
                if "." not in b.action and b.action not in actions[scope]:
                    actions[scope].append(b.action)
    actions[GLOBAL_KEYS] = actions.pop(APP_SCOPE, [])
    return actions


def keymap(config: AppConfig, actions: dict[str, list[str]]) -> dict[str, str]:
    """Textual's keymap (binding id → keys) for the config's checked overrides."""
    out: dict[str, str] = {}
    for action, key in config.keys.get(GLOBAL_KEYS, {}).items():
        for scope, names in actions.items():
            if action in names:
                out[f"{APP_SCOPE if scope == GLOBAL_KEYS else scope}.{action}"] = key
    for scope, overrides in config.keys.items():
        if scope == GLOBAL_KEYS:
            continue
        for action, key in overrides.items():
            owner = scope if action in actions.get(scope, ()) else APP_SCOPE
            out[f"{owner}.{action}"] = key
    return out


def checked(config: AppConfig, app_class, themes, everything: bool = False
            ) -> dict[str, list[str]]:
    """Check the config's theme and keys against the app's (problems added to the config);
    returns the actions of each scope (``everything``: even when no key is overridden)."""
    from engine.app_config import check_keys, check_theme

    check_theme(config, themes)
    if not config.keys and not everything:
        return {}       # nothing to rebind: the screens stay unimported until shown
    actions = name_bindings(app_class)
    check_keys(config, actions)
    return actions

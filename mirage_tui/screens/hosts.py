"""What a mixin of the app needs from the node it is mixed into, as Protocols.

A mixin (a plain class mixed into a screen or the app beside its other ideas: the app's runs,
the screens' workbench access …) names what it uses of its host in a Protocol beside it
(``…Host``), built on :class:`NodeHost` here (what it uses of the Textual node itself). For
the type checker, and only there, the mixin derives from its Protocol::

    if TYPE_CHECKING:
        _Host = AppRunsHost
    else:
        _Host = object

    class AppRuns(_Host): ...

so that ``self.store`` type-checks only when the Protocol declares ``store``, and a name
it does not declare is an error (``tests/unit/test_screen_protocols.py`` runs mypy on every
mixin module). At run time the base is ``object``: a Protocol in a screen's bases would take
over its ``__init__``.

A host attribute the mixin assigns is declared with a default (or as a property with a
setter): mypy takes an assignment to a bare declaration of a Protocol it subclasses for the
mixin's own new attribute, of whatever type is assigned. State only the mixin uses is the
mixin's own (a class attribute with its default), not its host's. A part with state,
workers or keys of its own is no mixin but a feature widget of its screen
(:mod:`mirage_tui.screens.features`).

This module imports nothing of the project or of Textual at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message
    from textual.timer import Timer


class NodeHost(Protocol):
    """What mixins use of the Textual node (a screen) they are mixed into."""

    @property
    def app(self) -> App[Any]: ...

    def notify(self, message: str, *, title: str = "", severity: str = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def query_one(self, selector: Any, expect_type: Any = None) -> Any: ...

    def refresh_bindings(self) -> None: ...

    def set_timer(self, delay: float, callback: Callable[[], object] | None = None) -> Timer: ...

    def post_message(self, message: Message) -> bool: ...


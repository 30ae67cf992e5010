"""What a screen's feature widgets share (the Inspector's, the Runs screen's, the Leaderboard's
parts): a worker's error as a message of its own type (:class:`Failed`, posted by
:func:`failures_as`), handled by the part it belongs to, and the workbench's store as a part
reaches it (:func:`store_of`)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, Iterator

from textual.message import Message

if TYPE_CHECKING:
    from textual.app import App
    from textual.binding import Binding
    from textual.dom import DOMNode
    from textual.message_pump import MessagePump

    from engine.store import Store


@dataclass
class Failed(Message):
    """A worker could not do its part; ``error``: ``Type: message`` (an output file's fault:
    its own one line, which names the path). Each kind says what failed (``what``)."""
    error: str
    what: ClassVar[str] = "it"

    @property
    def title(self) -> str:
        return f"Could not load {self.what}"

    def tell(self, app: App) -> None:
        """Say it: an error notification titled with what failed."""
        app.notify(self.error, title=self.title, severity="error", markup=False, timeout=10)


@contextmanager
def failures_as(node: MessagePump, failed: Callable[[str], Message], store: Store,
                prefix: str = "") -> Iterator[None]:
    """In a thread worker of ``node`` that reads ``store``: an error becomes ``failed(error)``
    (a :class:`Failed` kind; ``error``: ``prefix + "Type: message"``, an output file's fault
    its own one line) posted to ``node``, and the thread's connection is closed at the end,
    whatever happened."""
    from engine.output_files import OutputFileError

    try:
        yield
    except Exception as exc:
        node.post_message(failed(str(exc) if isinstance(exc, OutputFileError)
                                 else f"{prefix}{type(exc).__name__}: {exc}"))
    finally:
        store.close()


def store_of(node: DOMNode) -> Store | None:
    """The workbench's store, as a part of the Inspector reaches it (None under an app that is
    no workbench, or while the workspace opens)."""
    from mirage_tui.workbench import workbench_of

    workbench = workbench_of(node.app)
    return workbench.store if workbench is not None else None


def in_footer_order(order: tuple[str, ...], *keys: list[Binding]) -> list[Binding]:
    """The bindings of a screen and its parts (each group one part's ``KEYS``), sorted by their
    action's place in ``order``: the footer's order, whichever part declares a key."""
    return sorted((b for group in keys for b in group),
                  key=lambda b: order.index(b.action.split("(")[0]))

"""What a screen's feature widgets share (the Inspector's, the Runs screen's, Live run's and the
Leaderboard's parts): a worker's error as a message of its own type (:class:`Failed`, posted by
:func:`failures_as`), handled by the part it belongs to, and the workbench's store and run
controller as a part reaches them (:func:`store_of`, :func:`controller_of`,
:func:`running_now`)."""

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
    from mirage_tui.run_controller import RunController


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
    whatever happened. A worker cancelled meanwhile (a newer one of its exclusive group took
    over) tells nothing: its error is stale, and the newer one tells its own."""
    from engine.output_files import OutputFileError

    try:
        yield
    except Exception as exc:
        if not _cancelled():
            node.post_message(failed(str(exc) if isinstance(exc, OutputFileError)
                                     else f"{prefix}{type(exc).__name__}: {exc}"))
    finally:
        store.close()


def _cancelled() -> bool:
    """Whether the worker running this code was cancelled (False outside a worker)."""
    from textual.worker import NoActiveWorker, get_current_worker

    try:
        return get_current_worker().is_cancelled
    except NoActiveWorker:
        return False


def store_of(node: DOMNode) -> Store | None:
    """The workbench's store, as a part of the Inspector reaches it (None under an app that is
    no workbench, or while the workspace opens)."""
    from mirage_tui.workbench import workbench_of

    workbench = workbench_of(node.app)
    return workbench.store if workbench is not None else None


def controller_of(node: DOMNode) -> RunController | None:
    """The workbench's run controller, as a part reaches it (None under an app that is no
    workbench)."""
    from mirage_tui.workbench import workbench_of

    workbench = workbench_of(node.app)
    return workbench.run_controller if workbench is not None else None


def running_now(node: DOMNode, run_name: str | None) -> bool:
    """The workbench's run controller is running ``run_name`` now."""
    controller = controller_of(node)
    return controller is not None and controller.running \
        and controller.run_name is not None and controller.run_name == run_name


def in_footer_order(order: tuple[str, ...], *keys: list[Binding]) -> list[Binding]:
    """The bindings of a screen and its parts (each group one part's ``KEYS``), sorted by their
    action's place in ``order``: the footer's order, whichever part declares a key."""
    return sorted((b for group in keys for b in group),
                  key=lambda b: order.index(b.action.split("(")[0]))

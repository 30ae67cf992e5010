"""What the inspector's parts post (after toolong's messages): small dataclasses; a page or an
item carries the generation it was asked for, so one that arrives after the filters (or the
item shown) changed is dropped. A worker's error is a message of its own type
(:class:`Failed`'s kinds, posted by :func:`failures_as`), so each is handled where it belongs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

from mirage_tui.screens.features import Failed

if TYPE_CHECKING:
    from mirage_tui.screens.inspector.handle import InspectedRun


@dataclass
class RunOpened(Message):
    """The run, looked up once, and what its items offer to filter by
    (``filters.run_facets``)."""
    run: InspectedRun
    facets: dict


@dataclass
class ItemsLoaded(Message):
    """A page of ``ItemRow``; ``exhausted``: no page follows."""
    generation: int
    offset: int
    rows: list
    exhausted: bool


@dataclass
class Counted(Message):
    """How many items match the filters of ``generation``."""
    generation: int
    total: int


@dataclass
class DetailLoaded(Message):
    """One query's items, one per system shown, and the judge's verdicts on it."""
    generation: int
    details: list
    verdicts: list
    human: dict = field(default_factory=dict)   # (system_a, system_b) -> people's verdicts


@dataclass
class ViewExported(Message):
    """The list's items written to ``path`` (``format``), ``rows`` of them, under the
    filters ``view`` describes."""
    path: str
    format: str
    rows: int
    view: str = ""


class RunFailed(Failed):
    what = "the run"


class ItemsFailed(Failed):
    what = "items"


class ItemFailed(Failed):
    what = "the item"


class VerdictsFailed(Failed):
    what = "judge verdicts"


class ExportFailed(Failed):
    what = "the export"

    @property
    def title(self) -> str:
        return "Could not export this view"


class YourVerdictFailed(Failed):
    what = "your verdict"

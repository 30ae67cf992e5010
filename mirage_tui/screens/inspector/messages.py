"""What the inspector's workers post back to the screen (after toolong's messages): small
dataclasses; a page or an item carries the generation it was asked for, so one that arrives
after the filters (or the item shown) changed is dropped. An error is the screens'
:class:`~mirage_tui.screens.base.WorkerFailed`."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message


@dataclass
class FacetsLoaded(Message):
    """What the run offers to filter by (``filters.run_facets``)."""
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

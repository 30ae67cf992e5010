"""The run the Inspector shows, looked up once: :class:`InspectedRun`, which the screen reads
when it opens (:func:`inspected_run`) and hands to each of its parts; their workers pass its
:class:`~engine.runs.lookup.RunInfo` to the engine instead of looking the run up again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.store import Store
    from engine.runs.lookup import RunInfo


@dataclass(frozen=True)
class InspectedRun:
    """One run as the Inspector holds it: its name, its id and the stored run (with its
    header) the engine's readers take."""
    name: str
    id: int
    info: RunInfo


def inspected_run(store: Store, name: str) -> InspectedRun:
    """The run called ``name`` (:func:`engine.runs.lookup.load_run`: ``RunNotFound`` names
    the known runs when there is none)."""
    from engine.runs.lookup import load_run

    info = load_run(store, name)
    return InspectedRun(info.name, info.id, info)

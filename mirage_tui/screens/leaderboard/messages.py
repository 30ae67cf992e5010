"""What the leaderboard's workers post back to the screen: small dataclasses; the board and the
surrogate carry the generation they were asked for, so one that arrives after the run or the
arena changed is dropped. An error is the screens' :class:`~mirage_tui.screens.base.WorkerFailed`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message

if TYPE_CHECKING:
    from engine.store.runs import RunInfo


@dataclass
class ChoicesLoaded(Message):
    """The runs' names, the run picked (its ``RunInfo``, looked up once) and its arenas
    (``engine.arena.ratings.battles.ArenaInfo``)."""
    runs: list[str]
    run: RunInfo | None
    arenas: list
    arena: str | None


@dataclass
class BoardLoaded(Message):
    """The arena's ratings (``engine.arena.types.Ratings``), or None and why not."""
    generation: int
    ratings: object | None
    error: str | None
    judge_line: Text | str = ""  # who judged it, how far people agree, the cross-check


@dataclass
class SurrogateLoaded(Message):
    """The surrogate judge's text (:func:`.board.surrogate_text`, or why there is none)."""
    generation: int
    text: Text


@dataclass
class PageExported(Message):
    """The leaderboard's HTML page was written: where, and how big (bytes)."""
    arena: str
    path: str
    size: int

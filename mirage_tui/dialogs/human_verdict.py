"""Your own verdict on two answers to one query (the Inspector's ``a`` / ``e`` / ``b``): which
two (A and B, any two of the run's answers to it; at first the pair on screen), which is better,
which arena's judge to read it beside (at first the Leaderboard's), and an optional note.

One line says what that arena's judge said of the pair, or that the arena holds no battle
between them (naming the arenas that do, and the command that has a judge read them); the
verdict is stored on the two answers either way (``engine.arena.trust.human_verdicts``). Enter in
the note saves, Escape cancels (nothing is stored)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, Select, Static

from engine.arena.types import split_arena_system
from mirage_tui.screens.base import BaseModal
from mirage_tui.widgets.safe_text import safe_text

if TYPE_CHECKING:
    from engine.arena.ratings.verdicts import VerdictChoices

VERDICT_CHOICES = (("a", "A is better"), ("tie", "a tie"), ("b", "B is better"))


@dataclass(frozen=True)
class VerdictEntry:
    """What the dialog answers: the verdict ('a', 'tie', 'b') on ``system_a`` vs ``system_b``,
    read beside ``arena`` (None: the run has none), with a note ('' for none)."""

    system_a: str
    system_b: str
    verdict: str
    arena: str | None
    note: str


def verdict_words(verdict: str, a: str, b: str) -> str:
    """The verdict with the names in it, so that it cannot be read against the wrong pair."""
    return {"a": f"{a} is better than {b}", "b": f"{b} is better than {a}"}.get(
        verdict, f"{a} and {b} are as good (a tie)")


def judge_command(run: str, judge: str | None, a: str, b: str) -> str:
    """The command that has ``judge`` (default: the arena's default judge) read both answers'
    settings of the run."""
    settings = ",".join(dict.fromkeys(split_arena_system(c)[1] or c for c in (a, b)))
    return " ".join(["mirage-tui arena judge", shlex.quote(run)] +
                    (["--judge", shlex.quote(judge)] if judge else []) +
                    ["--settings", shlex.quote(settings)])


def judge_said(choices: VerdictChoices, arena: str | None, a: str, b: str) -> str:
    """One line: what ``arena``'s judge said of the pair, or why it said nothing and what
    storing the verdict does then."""
    if a == b:
        return "A and B are the same answer: pick two different ones."
    info = next((x for x in choices.arenas if x.name == arena), None)
    command = judge_command(choices.run, info.judge if info else None, a, b)
    if info is None:
        return (f"Run {choices.run} has no arena yet: Enter stores your verdict on these two "
                f"answers; `{command}` has a judge read them.")
    battle = choices.battle(arena, a, b)
    if battle is None:
        others = [x for x in choices.arenas_holding(a, b) if x != arena]
        held = f" (arena {', '.join(others)} has one)" if others else ""
        return (f"Arena {arena} has no battle between these two answers on this query{held}: "
                f"Enter stores your verdict on them anyway; `{command}` has a judge read them.")
    winner = battle.winner_name
    said = ("its reply could not be parsed" if winner is None else
            "it called a tie" if winner == "tie" else f"it chose {winner}")
    return f"Arena {arena} (judge {info.judge or 'unknown'}): {said}."


class HumanVerdictModal(BaseModal[VerdictEntry | None]):
    """Dismisses with a :class:`VerdictEntry`, or None when cancelled."""

    DEFAULT_CSS = """
    HumanVerdictModal { align: center middle; }
    HumanVerdictModal > #hv-dialog { width: 90; max-width: 100%; height: auto; padding: 0 1;
        border: thick $accent; background: $surface; }
    HumanVerdictModal #hv-title { text-style: bold; margin-bottom: 1; }
    HumanVerdictModal .hv-row { height: 1; }
    HumanVerdictModal .hv-row Label { width: 9; color: $text-muted; }
    HumanVerdictModal .hv-row Select { width: 1fr; }
    HumanVerdictModal #hv-pair { margin-top: 1; text-style: bold; }
    HumanVerdictModal #hv-judge { color: $text-muted; margin-bottom: 1; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, choices: VerdictChoices, pair: tuple[str, str], arena: str | None,
                 verdict: str) -> None:
        super().__init__()
        self.choices = choices
        self.pair = pair
        self.arena = arena
        self.verdict = verdict

    def compose(self) -> ComposeResult:
        answers = [(safe_text(c), c) for c in self.choices.contestants]
        arenas = [(safe_text(f"{a.name} ({a.mode}, judge {a.judge or 'unknown'})"), a.name)
                  for a in self.choices.arenas]
        with Vertical(id="hv-dialog"):
            yield Label(f"Your verdict on two answers to this query (run {self.choices.run})",
                        id="hv-title", markup=False)
            with Horizontal(classes="hv-row"):
                yield Label("A")
                yield Select(answers, value=self.pair[0], allow_blank=False, id="hv-a",
                             compact=True)
            with Horizontal(classes="hv-row"):
                yield Label("B")
                yield Select(answers, value=self.pair[1], allow_blank=False, id="hv-b",
                             compact=True)
            with Horizontal(classes="hv-row"):
                yield Label("verdict")
                yield Select([(Text(t), v) for v, t in VERDICT_CHOICES], value=self.verdict,
                             allow_blank=False, id="hv-verdict", compact=True)
            with Horizontal(classes="hv-row"):
                yield Label("arena")
                yield Select(arenas, prompt="no arena", value=self.arena or Select.NULL,
                             allow_blank=not arenas, id="hv-arena", compact=True)
            yield Static("", id="hv-pair", markup=False)
            yield Static("", id="hv-judge", markup=False)
            yield Input(placeholder="note (optional); Enter saves, Escape cancels",
                        id="hv-note")

    def on_mount(self) -> None:
        self._describe()
        self.query_one("#hv-note", Input).focus()

    def entry(self, note: str = "") -> VerdictEntry:
        """What the dialog shows now."""
        arena = self.query_one("#hv-arena", Select).value
        return VerdictEntry(str(self.query_one("#hv-a", Select).value),
                            str(self.query_one("#hv-b", Select).value),
                            str(self.query_one("#hv-verdict", Select).value),
                            None if arena == Select.NULL else str(arena), note)

    @on(Select.Changed)
    def _describe(self) -> None:
        e = self.entry()
        self.query_one("#hv-pair", Static).update(
            safe_text("Your verdict: " + verdict_words(e.verdict, e.system_a, e.system_b)))
        self.query_one("#hv-judge", Static).update(
            safe_text(judge_said(self.choices, e.arena, e.system_a, e.system_b)))

    @on(Input.Submitted, "#hv-note")
    def _save(self, event: Input.Submitted) -> None:
        e = self.entry(event.value)
        if e.system_a == e.system_b:
            self.notify("A and B are the same answer: pick two different ones.",
                        severity="warning", timeout=3)
            return
        self.dismiss(e)

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Your own verdict in the Inspector: on the item's judged battle, ``a`` (answer A better),
``b`` (answer B better) or ``e`` (a tie, "even"), with an optional note, stored beside the
judge's verdict (``engine.arena.human_verdicts``), never over it.

The battle is the one between the two systems shown side by side, else the first battle on
this query that the shown system took part in (A is the battle's ``system_a``). The three keys
are in the footer while an item with a judged battle is open (:data:`VERDICT_BINDINGS`); pressed
otherwise, a hidden binding of the same key says why."""

from __future__ import annotations

from textual import work
from textual.binding import Binding

from mirage_tui.dialogs.human_verdict import HumanVerdictModal

WORDS = {"a": "A better", "tie": "a tie", "b": "B better"}

VERDICT_BINDINGS = [
    Binding("a", "human_verdict('a')", "Mine: A"),
    Binding("e", "human_verdict('tie')", "Mine: tie"),
    Binding("b", "human_verdict('b')", "Mine: B"),
    # when they cannot act (no item open, no judged battle): the same keys say why
    Binding("a", "verdict_why('a')", "Mine: A", show=False),
    Binding("e", "verdict_why('tie')", "Mine: tie", show=False),
    Binding("b", "verdict_why('b')", "Mine: B", show=False),
]


class HumanVerdictKeys:
    """Mixed into the InspectorScreen: the ``human_verdict`` action and its worker."""

    shown_verdicts: list = []

    def _verdict_battle(self):
        systems = [self.current[0]] + ([self.second] if self.second else [])
        both = [v for v in self.shown_verdicts if all(v.involves(s) for s in systems)]
        some = [v for v in self.shown_verdicts if any(v.involves(s) for s in systems)]
        return (both or some or [None])[0]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "human_verdict":
            return self.current is not None and self.detail_shown and \
                self._verdict_battle() is not None
        return True

    def action_verdict_why(self, verdict: str) -> None:
        self.action_human_verdict(verdict)

    def action_human_verdict(self, verdict: str) -> None:
        if self.current is None or not self.detail_shown:
            self.notify("Open an item first (Enter on a row).", timeout=3)
            return
        battle = self._verdict_battle()
        if battle is None:
            self.notify("No judged battle on this item: judge the run in the Leaderboard "
                        "first.", timeout=4)
            return
        summary = (f"{WORDS[verdict]} · A: {battle.system_a}  vs  B: {battle.system_b} "
                   f"(arena {battle.arena}, judge says {battle.winner_name or 'unparsed'})")

        def save(note: str | None) -> None:
            if note is not None and self.store is not None:
                self.save_human_verdict(self.store, battle.system_a, battle.system_b,
                                        verdict, note, self.current)

        self.app.push_screen(HumanVerdictModal(summary), save)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector-human",
          name="save verdict")
    def save_human_verdict(self, store, system_a: str, system_b: str, verdict: str, note: str,
                           current: tuple[str, int]) -> None:
        from engine.arena.human_verdicts import record_human_verdict
        from engine.runs.lookup import load_run

        with self.worker_errors("your verdict", store):
            name = record_human_verdict(store, load_run(store, self.run_name), current[1],
                                        system_a, system_b, verdict, note)
            self.app.call_from_thread(self._human_verdict_saved, name, current)

    def _human_verdict_saved(self, dataset: str, current: tuple[str, int]) -> None:
        self.notify(f"Your verdict is stored in labels dataset {dataset} (use it with "
                    f"`mirage-tui judge calibrate --labels '{dataset}'`).", timeout=5)
        if self.current == current:
            self.show_item(*current)

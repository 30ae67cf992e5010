"""What a run has done so far, as its job counts it: items (done, cached, generated, errors,
truncated), tokens and model seconds, devices, and EM_loose per system and setting (the Live
screen's accuracy). Read by the run's progress events and its summary."""

from __future__ import annotations

from collections import defaultdict

from engine.jobs import per_second
from engine.store import Store
from engine.store.items import cut_counts


class RunTally:
    def __init__(self):
        self.counts = dict(done=0, total=0, cached=0, generated=0, errors=0, truncated=0)
        self.tokens = dict(prompt=0, evaluated=0, completion=0)
        self.gen_seconds = self.prompt_seconds = self.item_seconds = 0.0
        self.devices: set[str] = set()
        self.accuracy: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))

    def stored_before(self, n: int) -> None:
        """``n`` items the run had finished already: done, nothing to ask."""
        self.counts["done"] += n
        self.counts["cached"] += n

    def item(self, generation, truncated: bool, seconds: float) -> None:
        """One item stored: ``generation`` new (None: from the cache), taking ``seconds``."""
        self.counts["done"] += 1
        self.counts["truncated"] += truncated
        if generation is None:
            self.counts["cached"] += 1
            return
        extra = generation.extra or {}
        self.counts["generated"] += 1
        self.tokens["prompt"] += generation.prompt_tokens
        self.tokens["evaluated"] += generation.prompt_tokens_evaluated
        self.tokens["completion"] += generation.completion_tokens
        self.gen_seconds += extra.get("generation_seconds", generation.seconds)
        self.prompt_seconds += extra.get("prompt_seconds", 0.0)
        self.item_seconds += seconds
        if generation.device:
            self.devices.add(generation.device)

    def error(self) -> None:
        self.counts["done"] += 1
        self.counts["errors"] += 1

    def label(self, system: str, setting: str, value) -> None:
        """An item's EM_loose (None: not scored on it)."""
        if value is not None:
            cell = self.accuracy[system][setting]
            cell[0] += int(round(value))
            cell[1] += 1

    def accuracy_pairs(self) -> dict:
        """``{system: {setting: (correct, n)}}``."""
        return {s: {k: (v[0], v[1]) for k, v in by.items()} for s, by in self.accuracy.items()}

    @property
    def tokens_per_s(self) -> float:
        return per_second(self.tokens["completion"], self.gen_seconds)

    @property
    def prompt_tokens_per_s(self) -> float:
        return per_second(self.tokens["evaluated"], self.prompt_seconds)


def cut_totals(store: Store, run_id: int) -> tuple[int, int]:
    """``(answers cut at the token limit, of them cut while thinking)`` over the run's stored
    items, those taken from the cache too (the run's summary, Live, the Runs summary).
    Prompts cut to fit the context are another count (``truncated``)."""
    counts = cut_counts(store, run_id).values()
    return sum(c[1] for c in counts), sum(c[2] for c in counts)


def cut_words(cut: int, thinking: int) -> str:
    """``3 cut at the token limit (2 while thinking)``; the bracket only when some were."""
    return f"{cut} cut at the token limit" + (f" ({thinking} while thinking)" if thinking
                                                 else "")

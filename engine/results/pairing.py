"""Which two systems a comparison pairs, and on which items (:func:`pair`).

A side is ``RUN`` or ``RUN:SYSTEM`` (:func:`parse_side`). SYSTEM is found as ``--generator``
finds a model (:func:`find_system`): the label itself (``gemma3-270m/mirage@1``), its
generator (``gemma3-270m``), else the only label that contains the text (``gemma3``);
text that several labels contain is refused, listing them. Without SYSTEM a side takes the
run's only system, or the other side's when its run has it too; two systems of one run pair
with each other. The pairing keeps the (setting, query) items both sides generated
(:class:`PairingError` when there are none, naming how many each side has), and notes where
the two sides' generation settings differ (:mod:`engine.results.generation_settings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from engine.results.generation_settings import SettingDifference, setting_differences
from engine.results.records import ItemRecord, load_items, setting_order, split_system
from engine.runs.lookup import RunInfo, load_run
from engine.suggest import did_you_mean, pick_one


class PairingError(ValueError):
    """The two sides cannot be paired (no shared items, an ambiguous or unknown system)."""


@dataclass
class Side:
    run: str
    system: str
    dataset: str

    @property
    def label(self) -> str:
        return f"{self.run}:{self.system}"


def parse_side(spec: str) -> tuple[str, str | None]:
    """``RUN`` → (RUN, None); ``RUN:SYSTEM`` → (RUN, SYSTEM)."""
    run, sep, system = spec.partition(":")
    return (run, system or None) if sep else (spec, None)


def find_system(run: RunInfo, systems: list[str], wanted: str) -> str:
    """The system of ``run`` that ``wanted`` names (module docstring); PairingError when none
    or several do, with the nearest label or the matches."""
    found = pick_one(wanted, systems, what="systems", where=f"run {run.name!r}",
                     error=PairingError, part=lambda s: split_system(s)[0])
    if found is not None:
        return found
    raise PairingError(f"run {run.name!r} has no system {wanted!r}"
                       f"{did_you_mean(wanted, systems)} (it has: "
                       f"{', '.join(systems) or 'none'})")


def _systems(items: Iterable[ItemRecord]) -> list[str]:
    return sorted({i.system for i in items})


def _default_system(systems: list[str], wanted: str | None, other: str | None) -> str | None:
    """The side's system when it need not be asked for: the named one, the other side's when
    this run has it too, the only one; None when it must be chosen."""
    if wanted is not None:
        return wanted
    if other in systems:
        return other
    return systems[0] if len(systems) == 1 else None


def _choose(run: RunInfo, systems: list[str], wanted: str | None, other: str | None) -> str:
    if wanted is not None:
        return find_system(run, systems, wanted)
    chosen = _default_system(systems, wanted, other)
    if chosen is None:
        raise PairingError(f"run {run.name!r} has {len(systems)} systems; say which as "
                           f"{run.name}:SYSTEM ({', '.join(systems)})")
    return chosen


def _sides(a_spec: str, b_spec: str, run_a: RunInfo, run_b: RunInfo, sys_a: list[str],
           sys_b: list[str]):
    """Both sides' (run, wanted system: its label when it names one, else as typed, for
    :func:`_choose` to refuse) and what each side's default depends on (pair's rule: two
    systems of one run pair with each other; a side takes the other side's system when it
    has it)."""
    (ra, sa), (rb, sb) = parse_side(a_spec), parse_side(b_spec)
    sa, sb = _label(run_a, sys_a, sa), _label(run_b, sys_b, sb)
    if rb == ra and sa is None and sb is None and len(sys_a) == 2:
        sa, sb = sys_a
    return ra, sa, rb, sb


def _label(run: RunInfo, systems: list[str], wanted: str | None) -> str | None:
    try:
        return None if wanted is None else find_system(run, systems, wanted)
    except PairingError:
        return wanted


def side_runs(store, a_spec: str, b_spec: str) -> tuple[RunInfo, RunInfo]:
    """The runs sides A and B name, each looked up once (:func:`engine.runs.lookup.load_run`;
    two sides of one run share one look-up): what :func:`system_choice`, :func:`pair` and the
    sides' reports take, so that a comparison looks its runs up once."""
    (ra, _), (rb, _) = parse_side(a_spec), parse_side(b_spec)
    run_a = load_run(store, ra)
    return run_a, run_a if rb == ra else load_run(store, rb)


def system_choice(store, a_spec: str, b_spec: str,
                  runs: tuple[RunInfo, RunInfo]) -> tuple[str, str, list[str]] | None:
    """What must be asked before A and B can be paired: ``("a" or "b", run, its systems)``
    for the first side whose run has several systems and none that follows from the other
    side; None when :func:`pair` can go ahead (it may still fail, e.g. on no shared items).
    ``runs``: the sides' runs as the caller looked them up (:func:`side_runs`). Reads only
    the runs' systems (one aggregate query each)."""
    from engine.results.records import run_settings

    run_a, run_b = runs
    sys_a = sorted(run_settings(store, run_a.id))
    sys_b = sys_a if run_b.id == run_a.id else sorted(run_settings(store, run_b.id))
    ra, sa, rb, sb = _sides(a_spec, b_spec, run_a, run_b, sys_a, sys_b)
    a_system = _default_system(sys_a, sa, sb or (sys_b[0] if len(sys_b) == 1 else None))
    if a_system is None:
        return "a", ra, sys_a
    b_system = _default_system(sys_b, sb, a_system if sa is not None or len(sys_a) == 1
                               else None)
    if b_system is None:
        others = [s for s in sys_b if not (run_b.id == run_a.id and s == a_system)]
        return "b", rb, others
    return None


@dataclass
class Pairing:
    """Two sides and their items on the (setting, query) keys both generated."""

    a: Side
    b: Side
    items_a: dict[tuple[str, int], ItemRecord]
    items_b: dict[tuple[str, int], ItemRecord]
    shared: list[tuple[str, int]]
    only_a: int
    only_b: int
    run_a: RunInfo                      # the sides' runs, as the caller looked them up
    run_b: RunInfo
    differences: list[SettingDifference] = field(default_factory=list)

    @property
    def settings(self) -> list[str]:
        return sorted({s for s, _ in self.shared}, key=setting_order)

    @property
    def queries(self) -> list[int]:
        return sorted({q for _, q in self.shared})


def pair(store, a_spec: str, b_spec: str, runs: tuple[RunInfo, RunInfo]) -> Pairing:
    """Both sides' items, keeping those both generated (not failed, not pending). ``runs``:
    the sides' runs as the caller looked them up (:func:`side_runs`); none is looked up
    here."""
    run_a, run_b = runs
    all_a = load_items(store, run_a)
    all_b = all_a if run_b.id == run_a.id else load_items(store, run_b)
    sys_a, sys_b = _systems(all_a), _systems(all_b)
    ra, sa, rb, sb = _sides(a_spec, b_spec, run_a, run_b, sys_a, sys_b)
    a_system = _choose(run_a, sys_a, sa, sb or (sys_b[0] if len(sys_b) == 1 else None))
    b_system = _choose(run_b, sys_b, sb, a_system if sa is not None or len(sys_a) == 1 else None)
    if run_a.id == run_b.id and a_system == b_system:
        raise PairingError(f"A and B are the same system ({a_system} in run {ra}); name two")
    ia = {(i.setting, i.query_rowid): i for i in all_a
          if i.system == a_system and i.generation_key is not None}
    ib = {(i.setting, i.query_rowid): i for i in all_b
          if i.system == b_system and i.generation_key is not None}
    shared = sorted(set(ia) & set(ib), key=lambda k: (k[1], setting_order(k[0])))
    a = Side(ra, a_system, run_a.dataset)
    b = Side(rb, b_system, run_b.dataset)
    if not shared:
        why = (f" (datasets differ: {a.dataset} vs {b.dataset})" if a.dataset != b.dataset
               else "")
        raise PairingError(f"{a.label} and {b.label} share no items{why}: A has {len(ia)} "
                           f"generated items, B {len(ib)}; 0 (setting, query) in common")
    return Pairing(a, b, ia, ib, shared, len(ia) - len(shared), len(ib) - len(shared),
                   run_a, run_b, setting_differences(run_a, a_system, run_b, b_system))

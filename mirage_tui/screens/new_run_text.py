"""The New-run form's words both ways: its fields read into numbers (a ConfigError naming a
field that is not one) and the plan it would start put into text (the plan line, the name
hint). Pure functions: :class:`mirage_tui.screens.new_run.NewRunScreen` calls them."""

from __future__ import annotations

from engine.runs import ConfigError, RunConfig
from mirage_tui.widgets.estimates import estimate_line


def parse_ks(text: str) -> list[int]:
    """``"1,3,5"`` → [1, 3, 5]; a ConfigError names what is not a positive integer."""
    ks = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise ConfigError(f"top-k: {part!r} is not a positive integer (e.g. 1,3,5)")
        ks.append(int(part))
    return sorted(set(ks))


def optional_int(text: str, what: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{what}: {text!r} is not a whole number") from None


def optional_float(text: str, what: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"{what}: {text!r} is not a number (e.g. 0.05)") from None


def name_hint(store, config: RunConfig) -> str:
    """A line for a typed run name that is no stored run but close to one (else "")."""
    from engine.store.runs import known_runs
    from engine.suggest import close_to

    if config.name == config.default_name():
        return ""                       # derived, not typed
    known = known_runs(store)
    if config.name in known:
        return ""
    near = close_to(config.name or "", known)
    return (f"\nNo run is named {config.name}; did you mean {near[0]}? (the same name and "
            "configuration resumes a run)" if near else "")


def plan_summary(plan, guess: dict) -> str:
    """``Plan: 30 items = 10 queries × 1 system × 3 settings · about 1m20s …``"""
    c = plan.config
    systems, settings = len(plan.systems), len(plan.settings)
    selection = (f"{plan.first_batch} of {plan.dataset_queries} queries (seeded sample, "
                 f"seed {c.seed})" if plan.first_batch < plan.dataset_queries
                 else f"all {plan.dataset_queries} queries")
    lines = [f"Plan: {plan.count} items = {plan.first_batch} queries × {systems} "
             f"system{'s' if systems != 1 else ''} × {settings} "
             f"setting{'s' if settings != 1 else ''} · {selection}"]
    if c.adaptive:
        until = ("the paired CI of the second generator's EM minus the first's excludes 0"
                 if c.adaptive_until == "difference"
                 else f"every 95% CI half-width is below {c.adaptive_target}")
        lines.append(f"Adaptive: batches of {plan.batch_size} queries until {until}, at most "
                     f"{len(plan.queries)} queries ({plan.max_count} items)")
    lines.append(estimate_line(guess))
    if plan.existing_run:
        lines.append(f"Run {c.name} exists ({plan.existing_run.status}): starting resumes "
                     f"it; its {guess['finished']} finished items are skipped")
    return "\n".join(lines)


def thinking_text(store, plan) -> str:
    """The plan's thinking lines (:func:`engine.runs.plan.thinking_notes`: who thinks, the
    budget each gets, a warning when it is likely too small), or "" when no system thinks or
    asks a mode."""
    from engine.runs.plan import thinking_notes
    from mirage_tui.thinking_text import thinking_lines

    lines = thinking_lines(thinking_notes(store, plan))
    return "".join(f"\n{line}" for line in lines)

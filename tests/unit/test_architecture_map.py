"""ARCHITECTURE.md's run path is checked against the code: a small run (plan_named: the run
looked up and planned, then execute, with a scripted generator at the model's edge) is traced,
and the project modules whose functions it calls must be exactly the ones the map lists
between its run-path markers."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

from testkit.paths import ROOT

MAP = ROOT / "ARCHITECTURE.md"
BEGIN = "<!-- run-path:begin (tests/unit/test_architecture_map.py) -->"
END = "<!-- run-path:end -->"
PACKAGES = ("engine", "models", "mirage_tui")


def _scripted_run(store, traced: bool, profile=None):
    from engine.runs import RunConfig, execute, plan_named
    from testkit.scripted import ScriptedGenerator

    config = RunConfig(dataset="demo", generators=["traced"], sample=2, name="traced",
                       settings=["base", "oracle", "mixed"])
    generator = ScriptedGenerator("traced")
    if traced:
        sys.setprofile(profile)
        threading.setprofile(profile)
    try:
        plan = plan_named(store, config, check_models=False)
        summary = execute(store, plan, generators={"traced": generator})
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    assert summary.status == "done", summary


def traced_run_modules(tmp_path: Path) -> set[str]:
    """The project modules whose functions a scripted run of the demo pool calls, from
    ``plan_named`` to the stored rows. The same run goes once untraced in another workspace
    first, so that what the path imports is imported: a module body run by an import is no
    step of the path."""
    from engine.datasets.demo_pool import ensure_demo
    from engine.store import Store

    stores = [Store(tmp_path / f"{name}.db") for name in ("first", "traced")]
    for store in stores:
        ensure_demo(store)
    _scripted_run(stores[0], traced=False)
    seen: set[str] = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name != "<module>":
            name = frame.f_globals.get("__name__", "")
            if name.split(".", 1)[0] in PACKAGES:
                seen.add(name)

    _scripted_run(stores[1], traced=True, profile=profile)
    return seen


def run_path_block(modules: set[str]) -> str:
    """The map's list: one line per package, its modules by name."""
    groups: dict[str, list[str]] = {}
    for name in sorted(modules):
        package, _, module = name.rpartition(".")
        groups.setdefault(package, []).append(module)
    lines = [f"- `{package.replace('.', '/')}/`: {', '.join(names)}"
             for package, names in sorted(groups.items())]
    return "\n".join(lines)


def listed_modules(text: str) -> set[str]:
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    out = set()
    for package, names in re.findall(r"^- `([^`]+)/`: (.+)$", block, flags=re.M):
        out |= {f"{package.replace('/', '.')}.{n.strip()}" for n in names.split(",")}
    return out


def test_the_maps_run_path_is_the_modules_a_run_enters(tmp_path, monkeypatch):
    monkeypatch.delenv("MIRAGE_HOSTING", raising=False)    # the product's default: hosted
    traced = traced_run_modules(tmp_path)
    text = MAP.read_text()
    assert BEGIN in text and END in text, f"{MAP} has no run-path markers"
    listed = listed_modules(text)
    assert listed == traced, (
        f"ARCHITECTURE.md's run path and the traced run differ: listed, not entered: "
        f"{sorted(listed - traced)}; entered, not listed: {sorted(traced - listed)}. "
        f"The list as traced ({len(traced)} modules):\n{run_path_block(traced)}")
    count = re.search(r"enters these (\d+) project modules", text)
    assert count and int(count.group(1)) == len(traced), "the map's module count is stale"

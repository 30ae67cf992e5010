"""Where things are: the repository root and the real public datasets beside it."""

from __future__ import annotations

from pathlib import Path

# tests/testkit/paths.py -> the repository root
ROOT = Path(__file__).resolve().parents[2]


def _shared_data() -> Path:
    """``shared/data`` beside the repository (``../shared/data`` from the root, as in CI), or
    beside the nearest folder above it that has one (a git worktree nested deeper)."""
    for folder in ROOT.parents:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return ROOT.parent / "shared" / "data"


# The real public datasets are never copied into the project, and CI always has them.
SHARED_DATA = _shared_data()


def sources(folders: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(path from the root, text)`` of every Python module under ``folders`` (from the
    root), in path order: what the hygiene scans read."""
    paths = sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))
    return [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in paths]

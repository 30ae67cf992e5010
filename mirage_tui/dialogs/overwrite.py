"""Before an export replaces a file: the app asks, as the command line refuses without
``--force`` (:mod:`engine.output_files`).

:func:`ask_before_replacing` looks at every file an export would write (``files(path)``: a CSV
and its header, a comparison's JSON, CSV and page); when one is there it asks
:func:`overwrite_question` — ``replace`` (write over them), ``rename`` (choose another name:
the first free ``NAME-2``, ``NAME-3``, ... is suggested, :func:`engine.output_files.free_path`)
or ``cancel`` (write nothing); Escape answers None — and hands the answer to the caller. Every
TUI export goes through it: Compare ``x``, the Inspector's ``E``, Runs' ``e``, the
Leaderboard's ``e`` (the last three in :class:`~mirage_tui.dialogs.export_run.ExportRunScreen`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from engine.output_files import OutputFileError, existing_outputs, free_path, link_target
from mirage_tui.dialogs.choice import Choice, ChoiceModal

Files = Callable[[Path], list[Path]]
"""``files(path)``: every file an export to ``path`` writes, ``path`` first."""


def overwrite_question(existing: list[Path], suggestion: Path) -> ChoiceModal:
    """Replace the files in ``existing``, choose another name (``suggestion`` is offered),
    or cancel; Enter answers cancel, the safe choice."""
    names = ", ".join(p.name + (f" (a link to {pointed}: the link is replaced, never what it "
                                f"points to)" if (pointed := link_target(p)) else "")
                      for p in existing)
    folder = existing[0].parent
    these = "This file is" if len(existing) == 1 else f"These {len(existing)} files are"
    return ChoiceModal(
        "Replace the existing file?" if len(existing) == 1 else "Replace the existing files?",
        f"{these} there already: {names} (in {folder}). Replace writes over "
        f"{'it' if len(existing) == 1 else 'them'}; another name suggests "
        f"{suggestion.name}; cancel writes nothing.",
        [Choice("replace", "Replace", "r", "error"),
         Choice("rename", "Another name", "n"),
         Choice("cancel", "Cancel", "c", "primary")], id="overwrite-modal")


def ask_before_replacing(app, path: Path, files: Files,
                         answered: Callable[[str | None, Path], None]) -> bool:
    """Whether a file is at any of ``files(path)``; if so, asks :func:`overwrite_question`
    over the current screen and calls ``answered(answer, suggestion)`` with ``replace``,
    ``rename``, ``cancel`` or None (Escape) and the free name for ``path``. A path where no
    file can go (a folder, a device, a missing folder) is not asked about: the write says
    why."""
    try:
        found = existing_outputs(files(path))
    except OutputFileError:
        return False
    if not found:
        return False
    suggestion = free_path(path, lambda p: files(p)[1:])
    app.push_screen(overwrite_question(found, suggestion),
                    lambda answer: answered(answer, suggestion))
    return True

"""The app's questions about its run, each a :class:`~.choice.ChoiceModal` that answers with
the id of the chosen :class:`~.choice.Choice` (None on Escape: nothing happens).

- :func:`cancel_run_question`: ``stop`` or ``keep``;
- :func:`quit_question`: ``stop`` (and quit), ``wait`` (quit when done) or ``keep``;
- :func:`resume_question`: the next launch after a run stopped by quitting (or killed):
  ``resume``, ``open``, ``later`` (ask again at the next launch) or ``never`` (never ask about
  this run again).
"""

from __future__ import annotations

from mirage_tui.dialogs.choice import Choice, ChoiceModal


def cancel_run_question(run_name: str | None) -> ChoiceModal:
    return ChoiceModal(
        f"Cancel run {run_name}?",
        "The run stops now: the item it is working on is cut, and asked again when it "
        "resumes. Every finished item is stored, so nothing is lost: resume it later with r "
        "on Live run or u on Runs (or by running the same configuration again). Since you "
        "cancel it on purpose, launches do not ask about it.",
        [Choice("stop", "Cancel run", "c", "error"),
         Choice("keep", "Keep running", "k", "primary")], id="cancel-run-modal")


def quit_question(run_name: str | None) -> ChoiceModal:
    return ChoiceModal(
        f"Run {run_name} is going",
        "Stop it and quit? It stops now (the item in progress is asked again when it "
        "resumes); every finished item is stored and it stays resumable: the next launch "
        "offers to resume it (or u on Runs, r on Live run).",
        [Choice("stop", "Stop and quit", "s", "error"),
         Choice("wait", "Quit when done", "w"),
         Choice("keep", "Keep running", "k", "primary")], id="quit-modal")


def resume_question(run: dict, stopped: int = 1) -> ChoiceModal:
    """``run``: a row of :func:`mirage_tui.run_controller.resumable_runs`; ``stopped``: how
    many runs a launch offers in all."""
    total = run["total"] if run["total"] is not None else "?"
    if run["status"] in ("running", "interrupted"):
        how = "was still running when mirage-tui stopped"
    elif run.get("stopped_by") == "quit":
        how = "was stopped when you quit mirage-tui"
    else:
        how = "was cancelled"
    more = f" ({stopped - 1} other stopped run(s) in Runs.)" if stopped > 1 else ""
    return ChoiceModal(
        f"Resume run {run['name']}?",
        f"It {how} with {run['done']} of {total} items finished. Resuming skips the "
        f"finished items and reuses stored generations. Later asks again at the next launch; "
        f"Never ask leaves it to u on Runs.{more}",
        [Choice("resume", "Resume", "r", "primary"), Choice("open", "Open", "o"),
         Choice("later", "Later", "l"), Choice("never", "Never ask", "n")],
        id="resume-modal")

"""``mirage-tui runs``: the workspace's runs: list, rename, delete, and what one did.

    mirage-tui runs list [--json]
    mirage-tui runs rename OLD NEW
    mirage-tui runs delete NAME [--purge-generations]
    mirage-tui runs log NAME [--json]
    mirage-tui runs resplit NAME [--json]

``rename`` and ``delete`` refuse a run that is running (its owner process is alive) and work
in one transaction (:mod:`engine.runs.manage`). ``delete`` keeps the run's generations in the
shared generation cache (another run, or the same configuration run again, finds them there)
unless ``--purge-generations`` asks to drop those no other run uses. ``log`` prints the run's
log: sessions, model loads, retries, item errors and how each session ended. ``resplit``
re-splits a run stored before a reasoning model's thinking was kept apart (its texts hold
``<think>…</think>`` inline) and rescores its items on the answers
(:mod:`engine.results.resplit`).
"""

from __future__ import annotations

import json
from dataclasses import asdict

from engine.text_safety import visible_line
from mirage_tui.cli.common import db_option, json_option, print_table


def add_parsers(sub) -> None:
    runs = sub.add_parser("runs", help="list, rename and delete runs; a run's log",
                          description="The workspace's runs: list them, rename or delete "
                                      "one, and read what one did (its log).")
    rsub = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)

    p = rsub.add_parser("list", help="every run: dataset, status, items, generators")
    db_option(p)
    json_option(p, "print a JSON array")

    p = rsub.add_parser("rename", help="give a run a new name")
    db_option(p)
    p.add_argument("old", metavar="OLD", help="the run's name")
    p.add_argument("new", metavar="NEW", help="its new name")

    p = rsub.add_parser("delete", help="delete a run (its cached generations stay)")
    db_option(p)
    p.add_argument("name", metavar="NAME", help="the run's name")
    p.add_argument("--purge-generations", action="store_true",
                   help="also drop the cached generations (and their scores) that no other "
                        "run uses")

    p = rsub.add_parser("log", help="what a run did: sessions, model loads, retries, errors")
    db_option(p)
    p.add_argument("name", metavar="NAME", help="the run's name")
    json_option(p, "one JSON object a line")

    p = rsub.add_parser("resplit", help="keep an older run's inline <think> apart from its "
                                        "answers, and rescore them")
    db_option(p)
    p.add_argument("name", metavar="NAME", help="the run's name")
    json_option(p, "print the counts as a JSON object")


def run(args, store) -> int:
    return {"list": _list, "rename": _rename, "delete": _delete,
            "log": _log, "resplit": _resplit}[args.runs_command](args, store)


def _list(args, store) -> int:
    from engine.results.comparison import run_rows

    rows = run_rows(store)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], ensure_ascii=False))
        return 0
    if not rows:
        print("no runs yet: `mirage-tui run --dataset demo --generator smollm2-135m-instruct`")
        return 0
    table = [("RUN", "DATASET", "STATUS", "ITEMS", "GENERATORS", "UPDATED")]
    # a line break in a name would forge a row: every cell is shown on one line
    table += [tuple(map(visible_line, (r.name, r.dataset, r.status, f"{r.done}/{r.total}",
                                       ", ".join(r.generators), r.updated))) for r in rows]
    print_table(table)
    return 0


def _rename(args, store) -> int:
    from engine.runs.manage import rename_run

    new = rename_run(store, args.old, args.new)
    print(f"renamed run {args.old} to {new}")
    return 0


def _delete(args, store) -> int:
    from engine.runs.manage import delete_run

    gone = delete_run(store, args.name, purge_generations=args.purge_generations)
    cache = (f"; {gone.generations:,} cached generations no other run used were dropped"
             if args.purge_generations else "; its cached generations stay")
    print(f"deleted run {gone.run} ({gone.items:,} items){cache}")
    return 0


def _log(args, store) -> int:
    from engine.runs.manage import run_log

    lines = run_log(store, args.name)
    for line in lines:
        if args.json:
            print(json.dumps(asdict(line), ensure_ascii=False))
        else:
            print(f"{line.at}  {line.kind:<7}  {line.message}")
    if not lines and not args.json:
        print(f"run {args.name} has no log yet (runs from before the log was kept have none)")
    return 0


def _resplit(args, store) -> int:
    from engine.results.resplit import resplit_run

    done = resplit_run(store, args.name)
    if args.json:
        print(json.dumps(asdict(done), ensure_ascii=False))
        return 0
    if not done.split:
        print(f"run {visible_line(done.run)}: none of its {done.checked:,} stored answers "
              "holds thinking inline; nothing changed")
        return 0
    cut = f" ({done.cut_while_thinking:,} cut while thinking)" if done.cut_while_thinking else ""
    print(f"run {visible_line(done.run)}: {done.split:,} of {done.checked:,} stored answers "
          f"held thinking inline{cut}: re-split, and {done.rescored:,} items rescored on the "
          "answers (`mirage-tui report` shows the new numbers)")
    return 0

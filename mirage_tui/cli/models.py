"""``mirage-tui models``: list what can be used now, and check that one model runs.

    mirage-tui models list [--json]
    mirage-tui models check NAME [--json] [--max-tokens N]
    mirage-tui models hosts [--json] [--stop [NAME]]

``hosts`` lists the live model hosts of this machine (``models/host/``: one process per loaded
model, shared by the TUI and the CLI) with their model, URL, pid, threads, client processes,
idle grace (how long a host lives on once no process uses it, and what is left of it) and log
file; ``--stop`` stops them all, or those whose name contains NAME.

``list`` also shows the configured endpoints (endpoints.toml; the name of a key's environment
variable, never the key) and the models of servers running on the usual loopback ports
(Ollama 11434, LM Studio 1234, vLLM 8000, llama.cpp 8080), probed in parallel for at most
0.3 s, as specs ready for ``--generator`` or ``--judge``. ``check`` loads the model and runs one short generation (prompt and generated tokens/s) or one
small embedding batch (items/s) with :func:`models.check.check_model` (the TUI's Models screen
uses the same) and says which backend a generator runs on and why
(:mod:`models.host.backend_choice`); it exits 1 with the reason when the model does not work. The model code is
imported only when a models command runs.
"""

from __future__ import annotations

import json
import sys

from engine import counts
from mirage_tui.cli.common import (count_type, db_option, json_option, print_table, print_wrapped,
                                   without_key)


def add_parsers(sub) -> None:
    models = sub.add_parser("models", help="list local models and check that one runs")
    models_sub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)

    p = models_sub.add_parser("list", help="packaged and local models, installed or not, and "
                                           "endpoints (configured, and running on loopback)")
    db_option(p)
    json_option(p, "print a JSON array")

    p = models_sub.add_parser("check", help="load a model and time one short run")
    db_option(p)
    p.add_argument("name", help="a name from `models list`, a GGUF path or an endpoint spec")
    p.add_argument("--max-tokens", type=count_type(counts.MAX_TOKENS),
                   default=16, help="tokens to generate (default 16)")
    json_option(p, "print the result as JSON")


    p = models_sub.add_parser("hosts", help="the live model hosts (one process per model)")
    db_option(p)
    p.add_argument("--stop", nargs="?", const="", metavar="NAME",
                   help="stop every host, or those whose model name contains NAME")
    json_option(p, "print a JSON array")


def run(args, store=None) -> int:
    if args.models_command == "list":
        return _list(args)
    if args.models_command == "hosts":
        return _hosts(args)
    return _check(args)


def _hosts(args) -> int:
    from models.host import data_dir, list_hosts, stop_hosts

    if args.stop is not None:
        stopped = stop_hosts(args.stop or None)
        for e in stopped:
            print(f"stopped {e.name} (pid {e.pid}, {e.url})")
        if not stopped:
            print("no model host to stop" + (f" matches {args.stop!r}" if args.stop else ""))
        return 0
    hosts = list_hosts()
    if args.json:
        print(json.dumps(hosts, ensure_ascii=False))
        return 0
    if not hosts:
        print(f"no model host is running (registry: {data_dir() / 'hosts'})")
        return 0
    print_table([("MODEL", "URL", "PID", "THREADS", "BACKEND", "CLIENTS", "IDLE GRACE",
                   "LOG")] + [
        (h["name"], h["url"], str(h["pid"]), str(h["threads"]), h["backend"],
         ",".join(map(str, h["clients"])) or "-", _grace_cell(h), h["log"]) for h in hosts])
    return 0


def _grace_cell(host: dict) -> str:
    """``in use (10 s once idle)``, ``7 s left of 10 s``; ``?`` for a host that does not say."""
    grace, left = host.get("grace_s"), host.get("grace_left_s")
    if grace is None:
        return "?"
    if host["clients"]:
        return f"in use ({grace:g} s once idle)"
    return f"{left:.0f} s left of {grace:g} s"


def _list(args) -> int:
    from models.catalog import endpoint_entries, format_size, list_models

    entries = list_models() + offline_judges(args)
    remote = endpoint_entries()
    if args.json:
        print(json.dumps([e.as_json() for e in entries + remote], ensure_ascii=False))
        return 0
    rows = [("NAME", "KIND", "INSTALLED", "QUANT", "CONTEXT", "SIZE", "LICENSE")]
    for e in entries:
        rows.append((e.name, e.kind + (" (chat)" if e.chat else "")
                     + (f" ({e.source})" if e.kind == "judge" else ""),
                     "yes" if e.installed else "no", e.quantization or "-",
                     str(e.context_length or "-"), format_size(e.size_bytes), e.license or "-"))
    print_table(rows)
    for e in entries:
        if not e.installed and e.install:
            print_wrapped(f"  {e.name}: not installed; `{e.install}`")
        if e.error:
            print_wrapped(f"  {e.name}: {e.error}")
    _print_endpoints(remote)
    return 0


def offline_judges(args) -> list:
    """The judges that need no language model, as catalog entries of kind 'judge', kind by kind
    (:data:`engine.arena.judges.kinds.KINDS`: the reference judges, then the fitted judges of the
    workspace: ``--db``, else the default one when it exists; listing never creates one)."""
    from pathlib import Path

    from engine.arena.judges.kinds import KINDS
    from engine.store import Store, default_db_path
    from models.catalog import CatalogEntry

    def entry(name: str, source: str) -> CatalogEntry:
        return CatalogEntry(name=name, kind="judge", path=None, installed=True, install=None,
                            size_bytes=None, quantization=None, context_length=None,
                            license=None, chat=False, source=source)

    db = getattr(args, "db", None)
    path = Path(db) if db else default_db_path()
    store = Store(path) if path.exists() else None
    try:
        return [entry(name, kind.name) for kind in KINDS if kind.offline
                for name in kind.names(store)]
    finally:
        if store is not None:
            store.close()


def _print_endpoints(remote) -> None:
    from models.base import ModelError
    from models.endpoints import config_path, probe_ports

    print()
    usable = [e for e in remote if not e.error]
    if usable:
        print_table([("ENDPOINT", "SOURCE", "URL", "MODEL", "KEY ENV")] + [
            (e.name, e.source, e.url or "-", e.model or "(first listed)", e.api_key_env or "-")
            for e in usable])
    else:
        try:
            ports = ", ".join(map(str, probe_ports())) or "none"
        except ModelError:
            ports = "(see below)"
        print_wrapped(f"endpoints: none configured in {config_path()}, and no server answers "
                      f"on 127.0.0.1 ports {ports}")
    for e in remote:
        if e.error:
            print_wrapped(f"  endpoints ({e.source}): {e.error}")


def _check(args) -> int:
    from models.check import check_model

    args.name = without_key(args.name)
    result = check_model(args.name, max_tokens=args.max_tokens)
    _keep_check(args, result)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif result["ok"]:
        _print_check(result)
    if not result["ok"]:
        if not args.json:
            print(f"mirage-tui: error: {result['error']}", file=sys.stderr)
        return 1
    return 0


def _keep_check(args, result: dict) -> None:
    """Record the check in the workspace (``--db``, else the default one when it exists), so
    run estimates use its speed; a check never creates a workspace."""
    from pathlib import Path

    from engine.runs.estimates import record_model_check
    from engine.store import Store, default_db_path

    db = getattr(args, "db", None)              # the models parser alone has no --db
    path = Path(db) if db else default_db_path()
    if path.exists():
        store = Store(path)
        try:
            record_model_check(store, result, args.name)
        finally:
            store.close()


def _print_check(r: dict) -> None:
    print(f"{r['name']}: ok ({r['kind']}, {r['device']}, loaded in {r['load_seconds']:.1f}s)")
    if r["kind"] == "embedder":
        print(f"  {r['items']} passages in {r['seconds']:.2f}s: {r['items_per_s']:.1f} items/s, "
              f"dim {r['dim']}")
        return
    if r.get("backend"):
        print(f"  backend: {r['backend']}: {r['backend_reason']}")
    print(f"  prompt: {r['prompt_tokens']} tokens, {_speed(r['prompt_tokens_per_s'], 0)}")
    print(f"  generated: {r['completion_tokens']} tokens, {_speed(r['tokens_per_s'], 1)} "
          f"({r['finish_reason']})")
    print(f"  text: {' '.join(r['text'].split())[:200]}")


def _speed(value, decimals: int) -> str:
    """Tokens per second, or why there is no figure (an endpoint reports no prompt speed)."""
    return "speed not reported" if value is None else f"{value:.{decimals}f} tokens/s"

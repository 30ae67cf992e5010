"""Run-engine test helpers: the scripted generator with their defaults (:class:`FakeGenerator`),
a retriever that ranks a query's own pool backwards, a small run configuration, running it,
everything a run stores (for equality), and the ``mirage-tui run`` command as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from engine.runs import RunConfig, execute, plan_named
from testkit.paths import ROOT
from testkit.scripted import ScriptedGenerator

SMOL = "smollm2-135m-instruct"


class FakeGenerator(ScriptedGenerator):
    """The run-engine tests' scripted generator: the start of its first context chunk (or
    "I don't know"), half the prompt evaluated, a crash (ModelUnusable: it stops the run) on
    the calls listed in ``fail_on``; its identity names ``backend`` (``fake`` unless told)."""

    def __init__(self, name: str = "fake-gen", n_ctx: int = 8192, fail_on=(),
                 backend: str = "fake"):
        super().__init__(name, sha="f" * 64, n_ctx=n_ctx, backend=backend, fail_on=fail_on)


class BackwardsRetriever:
    """Ranks a query's own pool backwards (enough to give retrieved@k real chunks); with
    ``stores``, stores each ranking as the real retriever does (what Live run reads back)."""

    def __init__(self, store, label="backwards#00000000", stores: bool = False):
        self.store, self.label, self.stores, self.calls = store, label, stores, 0

    def retrieve(self, query_rowids, depth=5, progress=None, cancel=None):
        self.calls += 1
        out = {}
        for q in query_rowids:
            rows = self.store.query("SELECT chunk_rowid FROM pool WHERE query_rowid = ? AND "
                                    "position IS NOT NULL ORDER BY position DESC", (q,))
            out[q] = [(r[0], 1.0 - i / 10) for i, r in enumerate(rows)][:depth]
        if self.stores:
            with self.store.write() as db:
                db.conn.executemany(
                    "INSERT OR REPLACE INTO retrievals (retriever, query_rowid, ranked) "
                    "VALUES (?, ?, ?)",
                    ((self.label, q, json.dumps(hits)) for q, hits in out.items()))
        return out


def config(**kw) -> RunConfig:
    base = dict(dataset="demo", generators=["fake-gen"], settings=["base", "oracle", "mixed"],
                sample=6, name="t")
    return RunConfig(**{**base, **kw})


def run(store, cfg, gens=None, **kw):
    gens = gens if gens is not None else {"fake-gen": FakeGenerator()}
    plan = plan_named(store, cfg, check_models=False)
    return plan, execute(store, plan, generators=gens, **kw)


def rows(store) -> dict:
    """Everything a run stores, minus timings and timestamps (for equality)."""
    return {
        "items": sorted(tuple(r) for r in store.query(
            "SELECT system, setting, query_rowid, generation_key, context, truncated, error "
            "FROM run_items")),
        "generations": sorted(tuple(r) for r in store.query(
            "SELECT key, model_key, prompt, params, text FROM generations")),
        "scores": sorted(tuple(r) for r in store.query(
            "SELECT generation_key, query_rowid, metric, value, detail FROM scores")),
    }


def mirage_cli() -> list[str]:
    """``python -m mirage_tui.cli``: the command a user types."""
    return [sys.executable, "-m", "mirage_tui.cli"]


# the command line, its engine's first retry waiting ``backoff`` seconds (then 2×, 4×, ... up
# to 4 × backoff) instead of engine.inflight's 0.5 s doubling up to 30 s
_QUICK_RETRIES = ("import sys; import engine.inflight as inflight; "
                  "inflight.BACKOFF_S = float(sys.argv.pop(1)); "
                  "inflight.MAX_BACKOFF_S = 4 * inflight.BACKOFF_S; "
                  "from mirage_tui.cli import main; sys.exit(main())")


def run_together(*commands, envs=None, timeout: float = 120,
                 **kw) -> list[subprocess.CompletedProcess]:
    """Each command (an argument list) as a subprocess, all started at once and waited for in
    order: independent commands (reads of one workspace, or writes to their own files) that a
    second core runs side by side; ``envs``: each one's environment; ``kw``: Popen's
    (``cwd``). What each would have returned from ``subprocess.run(..., capture_output=True,
    text=True)``."""
    envs = envs or [None] * len(commands)
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env, **kw) for command, env in zip(commands, envs)]
    done = []
    try:
        for command, proc in zip(commands, procs):
            out, err = proc.communicate(timeout=timeout)
            done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return done


def cli_main(capsys, *args) -> tuple[int, str, str]:
    """``mirage-tui ARGS`` in this process (its exit status, standard output and error, read
    through ``capsys``): a usage error's ``SystemExit`` is its status, as the command's would
    be. For a test of what a command says that does not depend on a fresh process."""
    from mirage_tui import cli

    try:
        code = cli.main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def cli_done(capsys, *args) -> subprocess.CompletedProcess:
    """:func:`cli_main` as the ``CompletedProcess`` that ``subprocess.run`` would give."""
    return subprocess.CompletedProcess(list(args), *cli_main(capsys, *args))


def cli_run(*args, db, timeout=180, backoff: float | None = None, **kw):
    """``mirage-tui run --db DB ARGS`` in a subprocess, from the repository root; with
    ``backoff``, the command's retries wait that long first (a test of a faulty server that
    asserts what is stored, not how long the waits were)."""
    command = [*mirage_cli()] if backoff is None else [sys.executable, "-c", _QUICK_RETRIES,
                                                        str(backoff)]
    return subprocess.run([*command, "run", "--db", str(db), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kw)

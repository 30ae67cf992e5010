"""Issue 35, item 1: a fit under a name is claimed by one process at a time, and without
``--force`` a name stored meanwhile is refused in the writing transaction.

Two real processes: one holds the claim (the engine's own :func:`engine.runs.owner.held`, and
says so on stdout before the test goes on) while ``judge fit`` runs; then two ``judge fit
race2`` at once, where whichever is second must fail, never both report a stored fit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import engine.arena.judges.fitted as fitted_judges
from engine.arena.judges.fit_features import FitError
from engine.arena.judges.fitted import fit_judge, fitted_judge
from engine.store import Store
from engine.store.fitted_judges import fitted_row, save_fitted
from mirage_tui import cli
from testkit.labels import write_labels
from testkit.paths import ROOT
from testkit.runs import mirage_cli

HOLDER = textwrap.dedent("""
    import sys
    from engine.runs import owner
    from engine.store import Store

    store = Store(sys.argv[1])
    with owner.held(store, owner.FIT, "race2", "fitted judge race2 is being fitted"):
        print("held", flush=True)
        sys.stdin.read()                 # until the test closes it
""")


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "w.db"
    store = Store(path)
    write_labels(store, tmp_path, "rc", n=24, queries=lambda i: f"t{i}")
    store.close()
    return path


def fit_cli(db, *args) -> list[str]:
    return [*mirage_cli(), "judge", "fit", "race2", "--db", str(db), "--labels", "rc", *args]


def test_a_fit_under_a_claimed_name_is_refused_naming_the_owner(db, capsys):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for force in ((), ("--force",)):
            code = cli.main(["judge", "fit", "race2", "--db", str(db), "--labels", "rc",
                             "--features", "f1,length", *force])
            err = capsys.readouterr().err
            assert code == 1 and len(err.strip().splitlines()) == 1, err
            assert f"fitted judge race2 is being fitted (pid {holder.pid})" in err
    finally:
        holder.stdin.close()
        assert holder.wait() == 0
    assert cli.main(["judge", "fit", "race2", "--db", str(db), "--labels", "rc",
                     "--features", "f1,length"]) == 0       # released: it is free again


def test_a_name_stored_while_fitting_is_refused_when_writing(db, monkeypatch):
    store = Store(db)
    try:
        other = fit_judge(store, "other", "rc", features=["f1", "length"])
        real_pairs = fitted_judges.fit_pairs

        def stored_meanwhile(*args, **kwargs):
            row = dict(fitted_row(store, "other"))
            row.update(name="race2", **{c: json.loads(row[c]) for c in (
                "features", "coefficients", "scale", "labels_datasets", "config", "cv")})
            save_fitted(Store(db), row)              # another connection, after the check
            return real_pairs(*args, **kwargs)

        monkeypatch.setattr(fitted_judges, "fit_pairs", stored_meanwhile)
        with pytest.raises(FitError, match="a fitted judge 'race2' already exists"):
            fit_judge(store, "race2", "rc", features=["f1", "char3"])
        assert fitted_judge(store, "race2").sha256 == other.sha256     # not overwritten
    finally:
        store.close()


def test_two_fits_of_one_name_at_once_never_both_report_a_stored_fit(db):
    procs = [subprocess.Popen(fit_cli(db, "--features", features, "--json"), cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for features in ("f1,length", "f1,char3")]
    outputs = [p.communicate() for p in procs]
    results = [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs)]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 1], results
    [(_, out, _)] = [r for r in results if r[0] == 0]
    [(_, _, err)] = [r for r in results if r[0] == 1]
    assert len(err.strip().splitlines()) == 1, err
    assert "is being fitted (pid" in err or "already exists" in err
    store = Store(db)
    try:
        assert fitted_judge(store, "race2").sha256 == json.loads(out)["sha256"]
    finally:
        store.close()

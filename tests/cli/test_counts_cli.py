"""Every count a user can type, as a user types it (the command's ``main``, in process): huge,
zero, negative, not a number, ``1e9``, ``0x10``, ``inf``, ``nan`` are one line naming the
option and its range, before any work (the workspace is not even created), never a traceback;
a run file's counts have the same ranges; a bootstrap that would need more memory than it may
take says so in one line, naming the option, before it draws."""

from __future__ import annotations

import pytest

from testkit.runs import cli_main
from testkit.toy_run import A, B

BOOT_RANGE = ("a whole number from 1 to 100,000 (bootstrap tournaments, each fitted on its "
              "own)")
RESAMPLES = "a whole number from 1 to 1,000,000 (bootstrap resamples)"

CASES = [
    # (command words, option, value typed, the words the line must hold)
    (["arena", "ratings", "r"], "--boot", "1000000000",
     f"1000000000 is out of range: {BOOT_RANGE}"),
    (["arena", "ratings", "r"], "--boot", "0", f"0 is out of range: {BOOT_RANGE}"),
    (["arena", "ratings", "r"], "--boot", "-1", f"-1 is out of range: {BOOT_RANGE}"),
    (["arena", "ratings", "r"], "--boot", "many", f"'many' is not {BOOT_RANGE}"),
    (["arena", "ratings", "r"], "--boot", "1e9", f"'1e9' is not {BOOT_RANGE}"),
    (["arena", "ratings", "r"], "--boot", "0x10",
     f"'0x10' is not {BOOT_RANGE}; did you mean 16?"),
    (["arena", "ratings", "r"], "--boot", "inf", f"'inf' is not {BOOT_RANGE}"),
    (["arena", "ratings", "r"], "--boot", "nan", f"'nan' is not {BOOT_RANGE}"),
    (["judge", "calibrate", "--judge", "j", "--labels", "l"], "--boot", "1000000000",
     f"1000000000 is out of range: {RESAMPLES}"),
    (["judge", "compare", "1", "2"], "--boot", "1e3",
     f"'1e3' is not {RESAMPLES}; did you mean 1000?"),
    (["compare", "a", "b"], "--n-boot", "1000000000",
     f"1000000000 is out of range: {RESAMPLES}"),
    (["report", "r"], "--n-boot", "nan", f"'nan' is not {RESAMPLES}"),
    (["retrieve", "d", "--embedder", "e"], "--n-boot", "-5", "-5 is out of range"),
    (["run", "--dataset", "d", "--generator", "g"], "--sample", "0",
     "0 is out of range: a whole number from 1 to 10,000,000 (items sampled)"),
    (["run", "--dataset", "d", "--generator", "g"], "--seed", "-1",
     "-1 is out of range: a whole number from 0 to 4,294,967,295 (a random seed, 32 bits)"),
    (["run", "--dataset", "d", "--generator", "g"], "--concurrency", "100000",
     "100000 is out of range: a whole number from 1 to 1,024 (requests in flight at once)"),
    (["run", "--dataset", "d", "--generator", "g"], "--threads", "1.5", "'1.5' is not"),
    (["run", "--dataset", "d", "--generator", "g"], "--max-tokens", "inf", "'inf' is not"),
    (["run", "--dataset", "d", "--generator", "g"], "--budget", "99999999999",
     "99999999999 is out of range"),
    (["run", "--dataset", "d", "--generator", "g"], "--adaptive-target", "nan",
     "'nan' is not a CI half-width between 0 and 1"),
    (["run", "--dataset", "d", "--generator", "g"], "--n-ctx", "0", "0 is out of range"),
    (["arena", "judge", "r", "--judge", "j"], "--queries", "0", "0 is out of range"),
    (["compare", "a", "b"], "--delta", "inf", "'inf' is not a difference in points"),
    (["compare", "a", "b"], "--flips", "-1", "-1 is out of range"),
    (["data", "show", "d"], "--limit", "1e9", "'1e9' is not"),
    (["index", "d", "--embedder", "e"], "--batch-size", "0", "0 is out of range"),
    (["models", "check", "m"], "--max-tokens", "-5", "-5 is out of range"),
]


def test_every_count_typed_out_of_range_is_one_line_before_any_work(tmp_path, capsys):
    """In process: the command line is read before anything runs, as in a new process."""
    db = tmp_path / "never-made.db"
    for words, option, value, says in CASES:
        code, out, err = cli_main(capsys, *words, option, value, "--db", db)
        assert code == 2, (words, option, value, err)
        assert "Traceback" not in err and err.count("\n") == 1, err
        assert err.startswith(f"mirage-tui {words[0]}"), err
        assert f": {option} {says}" in err, (option, value, err)
        assert out == ""
    assert not db.exists()


def test_a_run_file_count_out_of_range_is_refused_naming_the_key(tmp_path, capsys):
    cases = {"sample = 20000000": "sample: 20000000 is out of range: a whole number from 1 to "
                                  "10,000,000 (items sampled)",
             "seed = -1": "seed: -1 is out of range",
             "max_tokens = 1000000": "max_tokens: 1000000 is out of range",
             "concurrency = 5000": "concurrency: 5000 is out of range"}
    files = []
    for n, line in enumerate(cases):
        path = tmp_path / f"run{n}.toml"
        path.write_text(f'dataset = "demo"\ngenerators = ["fake"]\n{line}\n')
        files.append(path)
    for says, path in zip(cases.values(), files):
        code, _, err = cli_main(capsys, "run", "--config", path, "--db", tmp_path / "w.db")
        assert code == 1, err
        assert err.count("\n") == 1 and says in err, err


@pytest.fixture
def db(toy):
    return toy.path


def test_a_bootstrap_beyond_the_memory_it_may_take_is_one_line_naming_the_option(
        db, tmp_path, capsys, monkeypatch):
    """``$MIRAGE_RESAMPLE_MEMORY_MB`` stands for a small machine: the estimate refuses before
    anything is drawn, with the most resamples that fit; a value that fits still runs."""
    monkeypatch.setenv("MIRAGE_RESAMPLE_MEMORY_MB", "1")
    page = tmp_path / "page.html"
    report = cli_main(capsys, "report", "toy-run", "--n-boot", "1000000", "--html", page,
                      "--db", db)
    compare = cli_main(capsys, "compare", f"toy-run:{A}", f"toy-run:{B}", "--n-boot",
                       "1000000", "--db", db)
    for code, _, err in (report, compare):
        assert code == 1, err
        assert err.startswith("mirage-tui: error: --n-boot 1000000 needs ~"), err
        assert err.count("\n") == 1 and "; at most " in err and "MEMORY_MB" in err, err
    assert "resamples × statistics × 8 bytes" in report[2] and not page.exists()
    fits = cli_main(capsys, "compare", f"toy-run:{A}", f"toy-run:{B}", "--n-boot", "200",
                    "--db", db)
    assert fits[0] == 0, fits[2]
    monkeypatch.setenv("MIRAGE_RESAMPLE_MEMORY_MB", "lots")
    code, _, err = cli_main(capsys, "report", "toy-run", "--n-boot", "200", "--db", db)
    assert code == 1 and err.count("\n") == 1
    assert "$MIRAGE_RESAMPLE_MEMORY_MB='lots': expected a whole number from 1 to" in err


def test_a_calibration_checks_its_resamples_memory_before_any_judge_call(tmp_path, capsys,
                                                                          monkeypatch):
    """The figures are drawn after every pair is judged: their memory is checked first, so a
    refused --boot costs no judge call (the judge named here does not even exist)."""
    monkeypatch.setenv("MIRAGE_RESAMPLE_MEMORY_MB", "1")
    code, _, err = cli_main(capsys, "judge", "calibrate", "--judge", "no-such-judge",
                            "--labels", "no-such-labels", "--boot", "1000000", "--db",
                            tmp_path / "w.db")
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith("mirage-tui: error: --boot 1000000 needs ~"), err
    assert "resamples × figures × 8 bytes" in err

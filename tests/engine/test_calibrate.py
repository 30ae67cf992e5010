"""Calibrating a judge against human labels: every pair judged through the judgments cache,
resumable, the result stored with the judge's identity and template."""

import json

import pytest

from engine.arena.trust.calibrate import (CalibrationError, calibrate_judge, latest_calibration,
                                          shown_first)
from engine.datasets.importing import import_path
from engine.runs.lookup import load_run
from testkit.arena import ScriptedJudge


def longer_wins(s):
    """Prefers the longer answer, ties on equal length; 'unsure' on one query."""
    one, two = s["Answer 1"], s["Answer 2"].split("\n\n")[0]   # the reply cue follows
    if "q-unparsed" in s["Question"]:
        return "I cannot decide."
    if len(one) == len(two):
        return "0"
    return "1" if len(one) > len(two) else "2"


@pytest.fixture
def labels(store, tmp_path):
    rows = []
    for i in range(8):
        a, b = "short", "a much longer answer"
        if i % 2:
            a, b = b, a
        human = 2 if len(b) > len(a) else -1          # people prefer the longer one too
        for annotator, label in (("ann", human), ("bob", human if i != 3 else 0)):
            rows.append({"query": f"q{i}", "answer_a": a, "answer_b": b, "label": label,
                         "annotator": annotator, "domain": "x" if i < 4 else "y",
                         "reference": "ref"})
    rows.append({"query": "q-unparsed", "answer_a": "a", "answer_b": "bb", "label": 1})
    path = tmp_path / "people.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, path)
    return "people"


def test_calibrate_both_orders_cached_and_stored(store, labels):
    judge = ScriptedJudge(longer_wins, name="fake-judge")
    result = calibrate_judge(store, labels, judge, both_orders=True, n_boot=100)
    assert result.status == "done" and result.pairs == 9
    assert result.judge_calls == 18 and len(judge.calls) == 18
    assert result.figures["sign_accuracy"].value == 1.0
    assert result.figures["sign_accuracy"].n == 8            # q-unparsed has no verdict
    assert result.figures["flip_rate"].value == 0.0
    assert result.counts == {"pairs": 9, "orders": 18, "unparsed": 2, "failed": 0,
                             "no_verdict": 1}
    stored = latest_calibration(store, "fake-judge")
    assert stored.template == "ragqa_arena_pairwise@1" and stored.labels == "people@1"
    assert stored.estimate("sign_accuracy").value == 1.0
    assert set(stored.figures["by_domain"]) == {"x", "y", "(none)"}
    assert stored.figures["confusion"]["b"]["b"] == 4
    # the reference answer was shown
    assert "ref" in judge.prompts()[0]
    # again: every verdict from the cache, no judge call
    again = calibrate_judge(store, labels, judge, both_orders=True, n_boot=100)
    assert len(judge.calls) == 18 and again.cached == 9 and again.judge_calls == 0
    assert again.figures == result.figures


def test_seeded_single_order_and_sample(store, labels):
    judge = ScriptedJudge(longer_wins)
    result = calibrate_judge(store, labels, judge, sample=4, seed=1, n_boot=50)
    assert result.pairs == 4 and len(judge.calls) == 4
    assert result.figures["flip_rate"].n == 0 and result.figures["flip_rate"].value is None
    assert {shown_first(1, str(i)) for i in range(20)} == {"ab", "ba"}


def test_a_judge_that_breaks_stops_and_resumes_from_the_cache(store, labels):
    judge = ScriptedJudge(longer_wins, fail_on=(3,))
    result = calibrate_judge(store, labels, judge, n_boot=50)
    # a judge that cannot be used (ModelUnusable) is fatal: the job stops, nothing half-stored
    assert result.status == "failed" and "fake-judge" in result.message
    assert latest_calibration(store) is None
    judge.fail_on = set()
    good = calibrate_judge(store, labels, judge, n_boot=50)
    assert good.status == "done" and good.counts["failed"] == 0
    assert good.cached == 2 and len(judge.calls) == 3 + 7     # two from the first session


def test_bad_options(store, labels):
    with pytest.raises(CalibrationError, match="no labels on aspect 'completeness'"):
        calibrate_judge(store, labels, ScriptedJudge(), aspect="completeness")
    with pytest.raises(CalibrationError, match="template"):
        calibrate_judge(store, labels, ScriptedJudge(), template="no_such_template")


def test_the_leaderboard_line_names_the_arena_judges_calibration(demo_run, tmp_path):
    from engine.arena.ratings.battles import resolve_arena
    from engine.arena.judging.job import judge_arena
    from engine.arena.trust.default_judge import judge_trust

    store = demo_run
    judge = ScriptedJudge(name="fake-judge")
    run = load_run(store, "r")
    assert judge_arena(store, run, judge).status == "done"
    info = resolve_arena(store, run)
    assert judge_trust(store, info).line.startswith("judged by fake-judge, judge not calibrated")
    path = tmp_path / "l.jsonl"
    path.write_text("\n".join(json.dumps({"query": f"q{i}", "answer_a": "x", "answer_b": "yy",
                                          "label": 1}) for i in range(3)))
    import_path(store, path)
    # another judge's calibration is not this arena's
    calibrate_judge(store, "l", ScriptedJudge(longer_wins, name="other", sha="o" * 64),
                    n_boot=20)
    assert "not calibrated" in judge_trust(store, info).line
    calibrate_judge(store, "l", ScriptedJudge(longer_wins, name="fake-judge"), n_boot=20)
    line = judge_trust(store, info).line
    assert line.startswith("judged by fake-judge, agrees with people 100.0% [")
    assert "(n=3, labels l@1)" in line
    # the arena used mirage_bench_pairwise, the calibration ragqa_arena_pairwise: said so
    assert "calibrated with template ragqa_arena_pairwise@1, the arena used " \
           "mirage_bench_pairwise@1" in line
    same = calibrate_judge(store, "l", ScriptedJudge(name="fake-judge"),
                           template="mirage_bench_pairwise", n_boot=20)
    assert same.status == "done" and same.template == "mirage_bench_pairwise@1"
    assert "the arena used" not in judge_trust(store, info).line


def test_two_templates_compared_paired_through_the_cli(store, labels, capsys):
    from mirage_tui import cli

    def both_schemes(s):
        if "Answer A" in s:       # mirage_bench_pairwise: always the first shown
            return "A"
        return longer_wins(s)

    a = calibrate_judge(store, labels, ScriptedJudge(both_schemes), both_orders=True,
                        template="mirage_bench_pairwise", n_boot=50)
    b = calibrate_judge(store, labels, ScriptedJudge(both_schemes), both_orders=True,
                        n_boot=50)
    assert cli.main(["judge", "compare", str(a.calibration_id), str(b.calibration_id),
                     "--db", str(store.path), "--boot", "50", "--json"]) == 0
    diff = json.loads(capsys.readouterr().out)["difference"]
    assert diff["flip_rate"]["value"] == -1.0 and diff["flip_rate"]["n"] == 9
    assert diff["sign_accuracy"]["value"] == 1.0
    assert cli.main(["judge", "compare", str(a.calibration_id), str(b.calibration_id),
                     "--db", str(store.path), "--boot", "50"]) == 0
    out = capsys.readouterr().out
    assert "paired on 9 common pairs" in out and "mirage_bench_pairwise@1" in out
    assert cli.main(["judge", "compare", "1", "99", "--db", str(store.path)]) == 1


def test_compare_refuses_two_aspects(store, tmp_path, capsys):
    """Agreement on fluency and agreement overall are different questions: not paired."""
    from mirage_tui import cli

    rows = [{"query": f"q{i}", "answer_a": "short", "answer_b": "a much longer answer",
             "label": 2, "annotator": "ann", "aspect": aspect}
            for i in range(4) for aspect in ("overall", "fluency")]
    path = tmp_path / "two-aspects.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    import_path(store, path)
    a = calibrate_judge(store, "two-aspects", ScriptedJudge(longer_wins), n_boot=20)
    b = calibrate_judge(store, "two-aspects", ScriptedJudge(longer_wins), aspect="fluency",
                        n_boot=20)
    assert cli.main(["judge", "compare", str(a.calibration_id), str(b.calibration_id),
                     "--db", str(store.path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and (
        f"#{a.calibration_id} is on the aspect overall and #{b.calibration_id} on fluency"
        in err), err


def test_compare_refuses_other_labels_the_same_calibration_and_no_resamples(
        store, labels, tmp_path, capsys):
    """Pairs are matched by ``pair_id``: two labels datasets, or one calibration twice, would
    pair what is not the same question; --boot follows compare's --n-boot rule."""
    from mirage_tui import cli

    other = tmp_path / "others.jsonl"
    other.write_text((tmp_path / "people.jsonl").read_text())   # the same pairs, another set
    import_path(store, other)
    a = calibrate_judge(store, labels, ScriptedJudge(longer_wins), n_boot=20)
    b = calibrate_judge(store, "others", ScriptedJudge(longer_wins), n_boot=20)
    db = str(store.path)
    cases = [((str(a.calibration_id), str(b.calibration_id)),
              f"#{a.calibration_id} was made on the labels people@1 and #{b.calibration_id} "
              "on others@1; only calibrations on the same labels dataset pair up"),
             ((str(a.calibration_id), str(a.calibration_id)),
              f"#{a.calibration_id} is the same calibration twice")]
    for extra, words in cases:
        assert cli.main(["judge", "compare", *extra, "--db", db]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err
    # --boot 0 is refused as the command line is read, before any work (exit 2, as a usage
    # error), naming the range
    for command in (["judge", "compare", str(a.calibration_id), str(b.calibration_id)],
                    ["judge", "calibrate", "--judge", "nowhere", "--labels", labels]):
        with pytest.raises(SystemExit) as exit_:
            cli.main([*command, "--db", db, "--boot", "0"])
        assert exit_.value.code == 2
        assert capsys.readouterr().err == (
            f"mirage-tui {' '.join(command[:2])}: --boot 0 is out of range: a whole number "
            "from 1 to 1,000,000 (bootstrap resamples)\n")

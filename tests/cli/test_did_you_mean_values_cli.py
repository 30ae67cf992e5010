"""A misspelt value of an option with a fixed set of values, one or in a comma list, is one line
with the nearest value: ``--settings orcale`` (``run`` and ``arena judge``), ``--metric`` and
``--fail-if-worse`` of ``compare``, ``--template``, ``--aspect``, as ``choices=`` options
(``--gold``, ``--format``, ``--order``) already were."""

from __future__ import annotations

from testkit.runs import cli_main


def one_line(done) -> str:
    code, out, err = done
    assert code != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_misspelt_values_get_the_nearest(workspace, capsys):
    db = workspace["path"]
    cases = [
        (("run", "--dataset", "demo", "--generator", "smollm2-135m-instruct", "--settings",
          "base,orcale", "--dry-run"), "did you mean 'oracle'?"),
        (("run", "--dataset", "demo", "--generator", "smollm2-135m-instruct", "--settings",
          "Mixd", "--dry-run"), "did you mean 'mixed'?"),
        (("arena", "judge", "alpha", "--judge", "reference:f1", "--settings", "orcale"),
         "did you mean 'oracle'?"),
        (("compare", "alpha:fake-a", "alpha:fake-b", "--metric", "em_lose"),
         "did you mean 'em_loose'?"),
        (("compare", "alpha:fake-a", "alpha:fake-b", "--fail-if-worse", "em_lose:1"),
         "did you mean 'em_loose'?"),
        (("run", "--dataset", "demo", "--generator", "smollm2-135m-instruct", "--template",
          "mirag", "--dry-run"), "did you mean 'mirage'?"),
        (("report", "alpha", "--gold", "orcale"), "did you mean 'oracle'?"),
        (("arena", "export", "alpha", "--format", "jsnl"), "did you mean 'jsonl'?"),
    ]
    for argv, hint in cases:
        line = one_line(cli_main(capsys, *argv, "--db", db))
        assert hint in line, (argv, line)
    # a retrieved@k with a bad k is told the rule, not offered another k
    line = one_line(cli_main(capsys, "run", "--dataset", "demo", "--generator",
                             "smollm2-135m-instruct", "--settings", "retrieved@0", "--dry-run",
                             "--db", db))
    assert "did you mean" not in line and "retrieved@k with k >= 1" in line


def test_a_misspelt_aspect_gets_the_nearest(workspace, tmp_path, capsys):
    db, labels = workspace["path"], tmp_path / "people.jsonl"
    labels.write_text('{"query": "q", "answer_a": "a", "answer_b": "b", "label": 1, '
                      '"annotator": "alice"}\n', encoding="utf-8")
    assert cli_main(capsys, "data", "import", labels, "--db", db)[0] == 0
    line = one_line(cli_main(capsys, "judge", "calibrate", "--judge", "reference:f1",
                             "--labels", "people", "--aspect", "overal", "--db", db))
    assert "no labels on aspect 'overal' in 'people'; did you mean 'overall'?" in line, line

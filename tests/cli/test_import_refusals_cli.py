"""Bad dataset input is refused, never taken silently: a labels CSV whose header names a column
twice, a row with more or fewer cells than its header, a misspelt column or aspect (did you
mean), a file with no labelled pair, and a SQuAD answer that is not in its paragraph. Each is
one line naming the file, the record and the field, exit 1, and nothing is stored; the
neighbours that are fine (an aspect of one's own, an answer_start that is off) import with a
warning. Through the command's ``main`` in process, as a user types it."""

from __future__ import annotations

import json
from pathlib import Path

from testkit.runs import cli_done
from testkit.store import row_counts

from engine.store import Store

HEADER = "query,answer_a,answer_b,label,annotator,aspect\n"
ROW = "q1,first answer,second answer,{label},{who},{aspect}\n"


def _labels(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _squad(folder: Path, name: str, answer: str, start: int = 0) -> Path:
    path = folder / name
    path.write_text(json.dumps({"data": [{"title": "T", "paragraphs": [{
        "context": "Paris is the capital of France.", "qas": [
            {"id": "q1", "question": "Which city?", "answers": [{"text": "Paris",
                                                                "answer_start": 0}]},
            {"id": "q2", "question": "Which country?",
             "answers": [{"text": answer, "answer_start": start}]}]}]}]}), encoding="utf-8")
    return path


def _import_all(capsys, tmp_path: Path, paths: list[Path]):
    """``data import`` of each file into a workspace of its own, through the command's
    ``main`` in process: each one's exit status, stdout and stderr."""
    return [cli_done(capsys, "data", "import", path, "--db", tmp_path / f"w{i}.db")
            for i, path in enumerate(paths)]


def _refused(out, path: Path, record: str | None, field: str | None, *words: str) -> None:
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 1 and len(lines) == 1 and "Traceback" not in out.stderr, \
        out.stderr
    where = f"mirage-tui: error: {path}"
    if record is not None:
        where += f": record {record}"
    if field is not None:
        where += f", field '{field}'"
    assert lines[0].startswith(where + ": "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]


def test_bad_labels_and_answers_are_refused_naming_file_record_and_field(tmp_path, capsys):
    row = ROW.format(label=1, who="ann", aspect="overall")
    cases = {
        "twice.csv": ("header", "label", "the column is there twice (columns 4 and 7)",
                      HEADER.strip() + ",label\n" + row.strip() + ",-2\n"),
        "extra.csv": ("at line 3", "column 7", "7 cells, the header has 6 columns",
                      HEADER + row + "q2,a,b,1,bob,overall,extra\n"),
        "short.csv": ("at line 2", "aspect", "5 cells, the header has 6 columns",
                      HEADER + "q1,a,b,1,ann\n"),
        "typo.csv": ("at line 2", "aspect", "unknown aspect 'overal'; did you mean 'overall'?",
                     HEADER + ROW.format(label=1, who="ann", aspect="Overal")),
        "column.csv": ("at line 2", "annotater", "did you mean 'annotator'?",
                       HEADER.replace("annotator", "annotater") + row),
        "header.csv": (None, None, "no labelled pair in the file", HEADER),
        "huge.csv": ("after line 1", None, "not readable as CSV (field larger than field "
                     "limit (131072))", HEADER + "q1," + "a" * 200_000 + ",b,1,ann,overall\n"),
        "typo.jsonl": ("at line 1", "aspect", "did you mean 'correctness'?", json.dumps(
            {"query": "q", "answer_a": "a", "answer_b": "b", "label": 1,
             "aspect": "correctnes"}) + "\n"),
        "twice.jsonl": ("at line 1", "label", "the key is there twice in one object",
                        '{"query": "q", "answer_a": "a", "answer_b": "b", "label": 1, '
                        '"label": -2}\n'),
    }
    paths = [_labels(tmp_path, name, text) for name, (*_, text) in cases.items()]
    squad = {"nowhere.en.json": _squad(tmp_path, "nowhere.en.json", "Lyon"),
             "other.en.json": _squad(tmp_path, "other.en.json", "Londres", 24)}
    outs = _import_all(capsys, tmp_path, [*paths, *squad.values()])
    for out, path, (record, field, words, _) in zip(outs, paths, cases.values()):
        _refused(out, path, record, field, words)
    for out, path in zip(outs[len(paths):], squad.values()):
        _refused(out, path, "data[0].paragraphs[0].qas[1] (id q2)", "answers[0].text",
                 "is not in the paragraph it was asked on")
    # atomic: none of the refused files left a row behind
    for index in range(len(outs)):
        store = Store(tmp_path / f"w{index}.db")
        assert set(row_counts(store).values()) == {0}, index
        store.close()


def test_the_fine_neighbours_import_with_a_warning(tmp_path, capsys):
    """An aspect of one's own (``fluency``), a column nobody reads, and a SQuAD answer_start
    that is off while its text is in the paragraph (case and blanks forgiven)."""
    own = _labels(tmp_path, "own.csv", HEADER.strip() + ",source\n"
                  + ROW.format(label=1, who="ann", aspect="Fluency").strip() + ",sheet 2\n")
    off = _squad(tmp_path, "off.en.json", "FRANCE", 3)
    outs = _import_all(capsys, tmp_path, [own, off])
    assert all(out.returncode == 0 for out in outs), [out.stderr for out in outs]
    assert "aspect(s) of their own: fluency" in outs[0].stdout + outs[0].stderr
    assert "column(s) not read: source" in outs[0].stdout + outs[0].stderr
    assert "1 answer(s) whose answer_start does not point at their text" in \
        outs[1].stdout + outs[1].stderr

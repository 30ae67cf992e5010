"""Fuzzing the importers: malformed JSON, JSON lines, CSV, MIRAGE and BEIR folders and Parquet,
made by mutating valid files of every format in engine/datasets/formats/ or from random bytes
(hypothesis, derandomised so CI sees the same few hundred cases). Each case either imports or
is refused with a one-line DatasetFormatError naming the file, and a refused import writes
nothing (the store's dataset, label, query, chunk and pool counts stay). The settings readers
(config.toml, endpoints.toml) get the same bytes: a config problem is one line and never an
exception, an endpoints problem one ModelError line."""

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.app_config import DEFAULT_FILE, load_app_config
from engine.datasets.formats.base import DatasetFormatError
from engine.datasets.formats.pairwise_labels import ASPECTS
from engine.datasets.importing import import_path
from models.base import ModelError
from models.endpoints import configured
from testkit.mirage import mirage_records, write_mirage, write_mirage_parquet
from testkit.store import row_counts

JUNK = [b"\x00", b"\xff\xfe", b'"\\ud800"', b"\\ud800", b"{", b"]", b"\n", b",", b"null",
        b'{"a": 1}', b"\x1b[2J", b"\xe2\x80\xae", b'"', b"[]", b"1e999", b"NaN",
        b",label", b"Overal", b"\r\n", b"[" * 3000]

mutation = st.lists(st.tuples(st.sampled_from(["cut", "insert", "flip", "drop"]),
                              st.floats(0, 1), st.sampled_from(JUNK)),
                    min_size=1, max_size=4)


def mutate(data: bytes, steps) -> bytes:
    for kind, where, junk in steps:
        i = int(where * len(data))
        if kind == "cut":
            data = data[:i]
        elif kind == "insert":
            data = data[:i] + junk + data[i:]
        elif kind == "flip" and data:
            i = min(i, len(data) - 1)
            data = data[:i] + bytes([data[i] ^ 0x5A]) + data[i + 1:]
        elif kind == "drop":
            data = data[:i] + data[i + len(junk):]
    return data


def check(store, path, fmt, origin):
    before = row_counts(store)
    try:
        import_path(store, path, format=fmt)
    except DatasetFormatError as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith(str(origin)), message
        assert row_counts(store) == before


def _sample_json(tmp, name):
    records = mirage_records(3)
    squad = {"data": [{"title": "T", "paragraphs": [{"context": f"Context {i}: {r['answer']}",
             "qas": [{"id": f"q{i}", "question": r["query"] if "query" in r else "q?",
                      "answers": [{"text": "Context", "answer_start": 0}]}]}]}
             for i, r in enumerate(records)]}
    return json.dumps(squad).encode()


def _label_rows() -> list[dict]:
    return [{"query": f"q{i // 2}", "answer_a": f"a{i // 2}", "answer_b": "b, quoted",
             "label": i % 5 - 2, "annotator": ["ann", "bob"][i % 2], "aspect": ASPECTS[i % 3],
             "pair_id": f"p{i // 2}"} for i in range(6)]


def _labels_csv(tmp) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(_label_rows()[0]))
    writer.writeheader()
    writer.writerows(_label_rows())
    return out.getvalue().encode()


CASES = {
    "squad": lambda tmp: _sample_json(tmp, "s"),
    "lfrqa": lambda tmp: b"".join(json.dumps({
        "qid": f"d-{i}", "question": f"question {i}?", "answer": f"answer {i}.",
        "citation_numbers": [[1]], "gold_doc_ids": [i],
        "faithful_answer_w_citation": f"answer {i}. [1]"}).encode() + b"\n" for i in range(4)),
    "wiki-summaries": lambda tmp: json.dumps({f"K{i}": {
        "title": f"Title {i}", "extract": f"Extract {i}.", "description": "d",
        "topic": "t"} for i in range(3)}).encode(),
    "ragchecker-meta": lambda tmp: json.dumps([{
        "instance_id": i // 2, "dataset": "robustqa/fiqa", "query_id": str(i // 2),
        "query": f"q{i // 2}", "gt_answer": "g", "model1": {"model_name": "m1", "response": "x"},
        "model2": {"model_name": "m2", "response": "y"}, "correctness_label": i % 5 - 2,
        "completeness_label": 0, "overall_label": 1} for i in range(4)]).encode(),
    "pairwise-labels csv": _labels_csv,
    "pairwise-labels jsonl": lambda tmp: "\n".join(json.dumps(r) for r in _label_rows()).encode(),
}
FILE_NAMES = {"squad": "s.json", "lfrqa": "annotations_x_with_citation.jsonl",
              "wiki-summaries": "summaries_en-us.json", "ragchecker-meta": "meta.json",
              "pairwise-labels csv": "labels.csv", "pairwise-labels jsonl": "labels.jsonl"}

FUZZ = settings(max_examples=70, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("case_name", sorted(CASES))
def test_single_file_formats(store, tmp_path, case_name):
    seed = CASES[case_name](tmp_path)
    fmt = case_name.split()[0]
    import_path(store, _written(tmp_path / "seed" / FILE_NAMES[case_name], seed), format=fmt)

    @FUZZ
    @given(steps=mutation, random=st.binary(max_size=64), whole=st.booleans())
    def case(steps, random, whole):
        path = tmp_path / FILE_NAMES[case_name]
        path.write_bytes(random if whole else mutate(seed, steps))
        check(store, path, fmt, path)
        check(store, path, None, path)            # by detection, as `data import` does

    case()


def _written(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_beir_folders(store, tmp_path):
    clean = tmp_path / "clean"
    seeds = {"corpus.jsonl": "".join(json.dumps({"_id": f"d{i}", "title": "T", "text": f"text {i}"})
                                     + "\n" for i in range(3)).encode(),
             "queries.jsonl": "".join(json.dumps({"_id": f"q{i}", "text": f"query {i}?"}) + "\n"
                                      for i in range(2)).encode(),
             "qrels/test.tsv": b"query-id\tcorpus-id\tscore\nq0\td0\t1\nq1\td2\t1\n"}
    for name, data in seeds.items():
        _written(clean / name, data)
    import_path(store, clean, format="beir")
    # fewer cases: each import detects the corpus's language
    fuzz_folder(store, clean, seeds, "beir", settings(FUZZ, max_examples=20))


def fuzz_folder(store, clean: Path, seeds: dict[str, bytes], fmt: str, fuzz) -> None:
    """A copy of the ``clean`` folder with one of its files (``seeds``: name → bytes)
    mutated, imported as ``fmt``, case after case."""
    @fuzz
    @given(which=st.sampled_from(sorted(seeds)), steps=mutation)
    def case(which, steps):
        folder = clean.with_name(f"{clean.name}-mutated")
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(clean, folder)
        (folder / which).write_bytes(mutate(seeds[which], steps))
        check(store, folder, fmt, folder)

    case()


def _one_line(problem: str) -> None:
    assert problem and "\n" not in problem, problem


def test_the_settings_readers(tmp_path):
    """config.toml: every problem one line naming the file, never an exception (the command
    goes on with the defaults); endpoints.toml: one ModelError line naming the file."""
    seed = (DEFAULT_FILE.replace("# database", "database").replace("# [keys]", "[keys]")
            .replace("# quit", "quit") + '[endpoints.lab]\nurl = "http://10.0.0.5:8000/v1"\n'
            ).encode()

    @FUZZ
    @given(steps=mutation, random=st.binary(max_size=64), whole=st.booleans())
    def case(steps, random, whole):
        path = tmp_path / "config.toml"
        path.write_bytes(random if whole else mutate(seed, steps))
        config = load_app_config(path)
        for problem in config.problems:
            _one_line(problem)
            assert problem.startswith(str(path)), problem
        try:
            configured(path)
        except ModelError as exc:
            _one_line(str(exc))
            assert str(exc).startswith(str(path)), exc

    case()


def test_mirage_folders(store, tmp_path):
    clean = write_mirage(tmp_path / "clean")
    names = ["dataset.json", "doc_pool.json", "oracle.json"]
    seeds = {n: (clean / n).read_bytes() for n in names}
    fuzz_folder(store, clean, seeds, "mirage", FUZZ)


def test_parquet(store, tmp_path):
    seed = write_mirage_parquet(tmp_path / "seed.parquet").read_bytes()

    @FUZZ
    @given(steps=mutation)
    def case(steps):
        path = tmp_path / "m.parquet"
        path.write_bytes(mutate(seed, steps))
        check(store, path, "mirage-parquet", path)

    case()

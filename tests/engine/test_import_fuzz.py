"""Fuzzing the importers: malformed JSON, JSON lines, MIRAGE folders and Parquet, made by
mutating valid files (hypothesis, derandomised so CI sees the same few hundred cases). Each
case either imports or is refused with a one-line DatasetFormatError naming the file, and a
refused import writes nothing (the store's dataset, query, chunk and pool counts stay)."""

import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.datasets.formats.base import DatasetFormatError
from engine.datasets.importing import import_path
from testkit.mirage import mirage_records, write_mirage, write_mirage_parquet
from testkit.store import row_counts

JUNK = [b"\x00", b"\xff\xfe", b'"\\ud800"', b"\\ud800", b"{", b"]", b"\n", b",", b"null",
        b'{"a": 1}', b"\x1b[2J", b"\xe2\x80\xae", b'"', b"[]", b"1e999", b"NaN"]

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


CASES = {
    "squad": lambda tmp: _sample_json(tmp, "s"),
    "lfrqa": lambda tmp: b"".join(json.dumps({
        "qid": f"d-{i}", "question": f"question {i}?", "answer": f"answer {i}.",
        "citation_numbers": [[1]], "gold_doc_ids": [i],
        "faithful_answer_w_citation": f"answer {i}. [1]"}).encode() + b"\n" for i in range(4)),
}
FILE_NAMES = {"squad": "s.json", "lfrqa": "annotations_x_with_citation.jsonl"}

FUZZ = settings(max_examples=70, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_single_file_formats(store, tmp_path, fmt):
    seed = CASES[fmt](tmp_path)

    @FUZZ
    @given(steps=mutation)
    def case(steps):
        path = tmp_path / FILE_NAMES[fmt]
        path.write_bytes(mutate(seed, steps))
        check(store, path, fmt, path)

    case()


def test_mirage_folders(store, tmp_path):
    clean = write_mirage(tmp_path / "clean")
    names = ["dataset.json", "doc_pool.json", "oracle.json"]
    seeds = {n: (clean / n).read_bytes() for n in names}

    @FUZZ
    @given(which=st.sampled_from(names), steps=mutation)
    def case(which, steps):
        folder = tmp_path / "m"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(clean, folder)
        (folder / which).write_bytes(mutate(seeds[which], steps))
        check(store, folder, "mirage", folder)

    case()


def test_parquet(store, tmp_path):
    seed = write_mirage_parquet(tmp_path / "seed.parquet").read_bytes()

    @FUZZ
    @given(steps=mutation)
    def case(steps):
        path = tmp_path / "m.parquet"
        path.write_bytes(mutate(seed, steps))
        check(store, path, "mirage-parquet", path)

    case()

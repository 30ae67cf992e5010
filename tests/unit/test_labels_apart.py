"""System labels kept apart by what differs (issue 36, :func:`engine.text_fit.labels_apart`):
the words every label shares in the same place are left out and said once, what differs stays
whole, then a URL is shortened to its host and an index hash to its distinguishing start, and
only then is anything elided."""

from __future__ import annotations

import pytest

from engine.text_fit import ELLIPSIS, cell_len, labels_apart

HOST = "http://127.0.0.1:8082/v1"
MODELS = ["gemma3-270m", "gemma3-1b", "qwen2.5-0.5b-instruct", "smollm2-135m-instruct"]
HASHES = ["0a182239", "1b282239", "2c382239"]      # three indexes, one tail
CONTESTANTS = [f"{HOST}#{m}/mirage@1 | retrieved@3:minilm-l6-v2#{h}"
               for m in MODELS for h in HASHES]
SETTINGS = ["base", "oracle", "mixed"] + [f"retrieved@3:minilm-l6-v2#{h}" for h in HASHES]


def test_labels_that_fit_stay_whole_and_nothing_is_said():
    apart = labels_apart(["fake-a/mirage@1", "fake-b/mirage@1"], 20)
    assert apart.shown == {"fake-a/mirage@1": "fake-a/mirage@1",
                           "fake-b/mirage@1": "fake-b/mirage@1"}
    assert apart.shared == () and apart.caption() == ""


def test_the_shared_host_template_retriever_go_and_the_model_stays_whole():
    apart = labels_apart(CONTESTANTS, 40)
    assert apart.caption() == (f"all on {HOST} · mirage@1 · retrieved@3 · minilm-l6-v2")
    assert apart.shown[CONTESTANTS[0]] == "gemma3-270m | #0a182239"
    assert apart.shown[CONTESTANTS[-1]] == "smollm2-135m-instruct | #2c382239"
    assert len(set(apart.shown.values())) == len(CONTESTANTS)


@pytest.mark.parametrize("width", [80, 40, 30, 24, 20, 16, 12])
def test_every_width_keeps_the_contestants_apart_and_within_it(width):
    """The issue's "http…82239" four times: a head and a tail that every label shares."""
    apart = labels_apart(CONTESTANTS, width)
    shown = list(apart.shown.values())
    assert len(set(shown)) == len(CONTESTANTS), shown
    assert all(cell_len(s) <= width for s in shown), shown
    assert not any(s.startswith("http") for s in shown), shown


def test_a_hash_is_shortened_before_a_model_is_elided():
    apart = labels_apart(CONTESTANTS, 30)
    assert apart.shown[CONTESTANTS[0]] == "gemma3-270m | #0a18"
    assert apart.shown[CONTESTANTS[-1]] == "smollm2-135m-instruct | #2c38"
    narrow = labels_apart(CONTESTANTS, 20)
    # each field elided apart from its own column: every one keeps its hash
    assert all(s.endswith(("#0a18", "#1b28", "#2c38")) for s in narrow.shown.values())


def test_settings_that_differ_by_index_read_apart_in_a_narrow_column():
    """The Inspector's "re…239" for three retrieved settings at 80×24."""
    for width in (6, 8, 12):
        shown = labels_apart(SETTINGS, width).shown
        assert len(set(shown.values())) == len(SETTINGS), shown
        assert shown["base"] == "base" and shown["oracle"] == "oracle"
    assert labels_apart(SETTINGS, 8).shown[SETTINGS[3]] == f"ret{ELLIPSIS}0a18"


def test_only_the_retrieved_ones_drop_what_they_share():
    retrieved = SETTINGS[3:]
    apart = labels_apart(retrieved, 8)
    assert apart.shown == dict(zip(retrieved, ["#0a18", "#1b28", "#2c38"]))
    assert apart.caption() == "all: retrieved@3 · minilm-l6-v2"


def test_hosts_that_differ_are_shortened_to_the_host():
    labels = [f"http://127.0.0.1:{port}/v1#gemma3-270m/mirage@1" for port in (8082, 8083)]
    apart = labels_apart(labels, 16)
    assert list(apart.shown.values()) == ["127.0.0.1:8082", "127.0.0.1:8083"]
    assert apart.caption() == "all: gemma3-270m · mirage@1"


def test_a_label_never_loses_all_its_words_and_odd_labels_are_one_word():
    labels = ["gemma3-270m/mirage@1", "gemma3-270m/mirage@1 | retrieved@3:e5#68b194a2",
              "a//b:", "x"]
    apart = labels_apart(labels, 12)
    assert all(apart.shown[v] for v in labels)
    assert len(set(apart.shown.values())) == len(labels), apart.shown
    assert all(cell_len(s) <= 12 for s in apart.shown.values())


def test_wide_characters_count_two():
    labels = [f"{HOST}#模型{i}/mirage@1" for i in range(3)]
    apart = labels_apart(labels, 6)
    assert sorted(apart.shown.values()) == ["模型0", "模型1", "模型2"]

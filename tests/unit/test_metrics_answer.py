"""engine.metrics.answer (with language, no_answer and response_format) against hand-worked
cases, including every quirk in METRICS.md."""

import json
import threading
import time

import pytest

from engine.metrics import language
from engine.metrics.answer import (
    ANSWER_MATCH_METRICS,
    LANGUAGE_VARIANTS,
    METRICS,
    SCORER_VERSION,
    Score,
    bergen_em,
    bergen_f1,
    bergen_match,
    bergen_normalize,
    bergen_token_overlap,
    char3_recall,
    char3grams,
    em_loose,
    em_strict,
    mirage_f1,
    score_generation,
)
from engine.metrics.language import (
    correct_language,
    detect_language,
    language_probability,
    primary_language,
)
from engine.metrics.no_answer import decline_reason, is_no_answer
from engine.metrics.response_format import parse_citations, split_reason_answer, strip_citations

# ------------------------------------------------------------------------------ MIRAGE EM


def test_em_loose_is_a_lowercased_substring():
    assert em_loose("The capital is PARIS.", ["paris"]) == 1.0
    assert em_loose("Lyon", ["Paris", "lyon"]) == 1.0
    assert em_loose("London", ["Paris"]) == 0.0
    assert em_loose("Paris", "Paris") == 1.0  # a lone gold string


def test_em_loose_has_no_other_normalisation():
    assert em_loose("the US", ["U.S."]) == 0.0  # punctuation is not stripped
    assert em_loose("Eiffel  Tower", ["Eiffel Tower"]) == 0.0  # whitespace is not collapsed
    assert em_loose("1,000 people", ["1000"]) == 0.0


def test_em_loose_ignores_empty_golds():
    """Fix: the reference would count "" as contained in every prediction."""
    assert em_loose("anything", ["", "  "]) == 0.0
    assert em_loose(None, ["Paris"]) == 0.0


def test_em_strict_equals_after_lowercase_and_strip():
    assert em_strict("  Paris \n", ["paris"]) == 1.0
    assert em_strict("Paris.", ["paris"]) == 0.0
    assert em_strict("The Paris", ["Paris"]) == 0.0


def test_mirage_f1_hand_worked():
    # P = {the, capital, is, paris}; A = {paris} | {paris, france} = {paris, france}
    # TP = 1, precision 1/4, recall 1/2, F1 = 2 * 1/8 / (3/4) = 1/3
    assert mirage_f1("The capital is Paris", ["Paris", "Paris France"]) == pytest.approx(1 / 3)


def test_mirage_f1_is_set_based_and_pools_golds():
    # a multiset F1 would give 2/3 for the repeated token; the set version gives 1
    assert mirage_f1("paris paris", ["Paris"]) == 1.0
    # the golds' tokens are pooled: matching one gold fully still loses recall
    assert mirage_f1("paris", ["paris", "lyon"]) == pytest.approx(2 * 1 * 0.5 / 1.5)
    # tokens keep their punctuation
    assert mirage_f1("paris.", ["paris"]) == 0.0
    assert mirage_f1("", ["paris"]) == 0.0


# ------------------------------------------------------------------------------ BERGEN

def test_bergen_normalize_follows_squad_order():
    assert bergen_normalize("The  Eiffel-Tower, a landmark!") == "eiffeltower landmark"
    # punctuation goes before articles: "the-end" becomes one word and keeps its "the"
    assert bergen_normalize("The-End") == "theend"
    assert bergen_normalize("An apple\tand\nthe pear") == "apple and pear"
    assert bergen_normalize(None) == ""


def test_bergen_normalize_strips_only_ascii_punctuation():
    assert bergen_normalize("¿Dónde está?") == "¿dónde está"
    assert bergen_normalize("巴黎。") == "巴黎。"


def test_bergen_match_and_em():
    assert bergen_match("It was the Eiffel Tower.", ["eiffel tower"]) == 1.0
    assert bergen_match("It was Big Ben.", ["eiffel tower"]) == 0.0
    assert bergen_em("The Eiffel Tower!", ["eiffel tower"]) == 1.0
    assert bergen_em("It was the Eiffel Tower.", ["eiffel tower"]) == 0.0


def test_bergen_ignores_golds_empty_after_normalisation():
    """Fix: the gold "The" normalises to "", which the reference finds in every prediction."""
    assert bergen_match("Paris", ["The"]) == 0.0
    assert bergen_em("", ["the"]) == 0.0


def test_bergen_f1_is_multiset():
    # pred tokens [paris, paris], gold [paris]: overlap 1, P 1/2, R 1, F1 2/3
    assert bergen_f1("paris paris", ["Paris"]) == pytest.approx(2 / 3)


def test_bergen_token_overlap_maximises_each_over_golds_separately():
    # pred [x, y, z]; gold 1 [y, z, u, v]: P 2/3, R 1/2, F1 4/7; gold 2 [x]: P 1/3, R 1, F1 1/2
    overlap = bergen_token_overlap("x y z", ["y z u v", "x"])
    assert overlap.f1 == pytest.approx(4 / 7)
    assert overlap.precision == pytest.approx(2 / 3)
    assert overlap.recall == 1.0
    assert bergen_token_overlap("x", []) == (0.0, 0.0, 0.0)


def test_char3grams_within_words_and_short_words_whole():
    assert char3grams("ab cdef") == ["ab", "cde", "def"]
    assert char3grams("abc") == ["abc"]
    assert char3grams("") == []


def test_char3_recall_worked_example_from_bergen():
    """METRICS.md §3: gold "sofya kovalevskaya" vs "sofia kovalevskaia" -> 9/13."""
    # gold: sof ofy fya + kov ova val ale lev evs vsk ska kay aya = 13 3-grams
    # shared: sof + kov ova val ale lev evs vsk ska = 9
    assert char3_recall("sofia kovalevskaia", ["sofya kovalevskaya"]) == pytest.approx(9 / 13)


def test_char3_recall_details():
    assert char3_recall("Gore, Al", ["Al Gore"]) == 1.0  # "al" counts whole
    assert char3_recall("aaa", ["aaaa"]) == 0.5  # multiset: [aaa] vs [aaa, aaa]
    assert char3_recall("sofia kovalevskaia", ["nobody", "Sofya Kovalevskaya"]) == (
        pytest.approx(9 / 13))
    assert char3_recall("x", []) == 0.0


# ---------------------------------------------------------------------------- language

GERMAN = "Die Hauptstadt von Deutschland ist Berlin, eine große Stadt an der Spree."
ENGLISH = "The capital of Germany is Berlin, a large city on the river Spree."
CHINESE = "德国的首都是柏林，它是施普雷河畔的一座大城市。"


def test_detect_language_with_normalised_probability():
    lang, prob = detect_language(GERMAN)
    assert lang == "de" and 0.9 < prob <= 1.0
    assert detect_language(ENGLISH)[0] == "en"
    assert detect_language(CHINESE)[0] == "zh"


def test_detect_language_removes_citations_first():
    assert detect_language("[1] [2, 3]") == (None, 0.0)
    assert detect_language("") == (None, 0.0)
    assert detect_language(GERMAN.replace(",", " [1][2],"))[0] == "de"


def test_language_probability():
    assert language_probability(ENGLISH, "en") > 0.9
    assert language_probability(ENGLISH, "de") < 0.1
    assert language_probability("", "en") == 0.0


def test_primary_language_subtag():
    assert primary_language("zh-CN") == "zh"
    assert primary_language("pt_BR") == "pt"
    assert primary_language("nb") == primary_language("no") == "no"
    assert primary_language(" ") is None


def test_correct_language():
    assert correct_language(GERMAN, "de") is True
    assert correct_language(GERMAN, "de-DE") is True
    assert correct_language(ENGLISH, "de") is False
    assert correct_language(CHINESE, "zh-cn") is True


def test_correct_language_leaves_short_responses_out():
    assert correct_language("Berlin", "de") is None
    assert correct_language("x" * 20, "de") is None  # 20 characters: still left out
    assert correct_language("Berlin ist die Stadt.", "de") is not None  # 21 characters
    assert correct_language("Berlin [1][2][3][4][5]", "de") is None  # citations do not count
    assert correct_language(GERMAN, None) is None
    assert correct_language(GERMAN, "") is None


def test_identifier_is_built_once_across_threads(monkeypatch):
    from langid.langid import LanguageIdentifier

    calls = []

    def slow_build(*args, **kwargs):
        calls.append(1)
        time.sleep(0.05)
        return object()

    monkeypatch.setattr(language, "_IDENTIFIER", None)
    monkeypatch.setattr(LanguageIdentifier, "from_modelstring", slow_build)
    results = []
    threads = [threading.Thread(target=lambda: results.append(language._identifier()))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len({id(r) for r in results}) == 1


# --------------------------------------------------------------------------- no-answer

@pytest.mark.parametrize("text", [
    "I couldn't find an answer.",
    "I couldn’t find an answer to the question.",
    "I don't know.",
    "**I do not know**",
    "Sorry, I cannot answer this question.",
    "There is no information about his birthplace.",
    "The answer is not mentioned in the context.",
    "This is not mentioned in the provided context.",
    "The question is unanswerable.",
    "",
    "   \n",
    "[1]",
    "No lo sé.",
    "No se menciona en el contexto.",
    "Ich weiß nicht.",
    "Ich weiss nicht, tut mir leid.",
    "Dazu gibt es keine Informationen.",
    "Je ne sais pas.",
    "Je n’ai pas trouvé de réponse.",
    "لا أعرف",
    "我不知道。",
    "抱歉，无法回答这个问题。",
    "मुझे नहीं पता।",
    "Я не знаю.",
    "Нет информации.",
    "ไม่ทราบครับ",
    "ไม่พบคำตอบ",
])
def test_is_no_answer_declines(text):
    assert is_no_answer(text)


@pytest.mark.parametrize("text", [
    "I know that Paris is the capital of France.",
    "Paris",
    "Yes, I do know: it was 1723.",
    "The Information Age began in the 20th century.",
    "Unknown Pleasures is the debut album of Joy Division.",
    "Yo sé que es París.",
    "Je sais que c'est Paris.",
    "Ich weiß, dass es Berlin ist.",
    "柏林是德国的首都。",
    "The novel 'Unanswerables' was published in 1999.",
])
def test_is_no_answer_false_positives(text):
    assert not is_no_answer(text)


def test_decline_reason_names_the_phrase():
    assert decline_reason("I don't know.") == "declined: \"i don't know\""
    assert decline_reason("") == "empty response"
    assert decline_reason(None) == "empty response"
    assert decline_reason("Paris") is None


# --------------------------------------------------------------------- citations, format

def test_parse_citations_ieee_forms():
    assert parse_citations("Paris [1].") == [1]
    assert parse_citations("Paris [1, 3].") == [1, 3]
    assert parse_citations("Paris [2][4].") == [2, 4]
    assert parse_citations("Paris [ 5 ; 6 ].") == [5, 6]


def test_parse_citations_order_of_first_appearance_deduplicated():
    assert parse_citations("x [3] y [1][3] z [2, 1]") == [3, 1, 2]


def test_parse_citations_ignores_non_citations():
    assert parse_citations("a[i] [a] [1a] [] [1-3] (1)") == []
    assert parse_citations(None) == []


def test_strip_citations():
    assert strip_citations("Paris [1][2] is big [3, 4].") == "Paris is big."
    assert strip_citations(None) == ""


def test_split_reason_answer_standard():
    text = "##Reason: Passage [1] says so. ##Answer: Paris [1]."
    assert split_reason_answer(text) == ("Passage [1] says so.", "Paris [1].")


def test_split_reason_answer_is_case_tolerant_and_multiline():
    text = "## reason:\nIt is stated in [2].\n\n## ANSWER:\nBerlin [2]"
    assert split_reason_answer(text) == ("It is stated in [2].", "Berlin [2]")


@pytest.mark.parametrize("text", [
    "**Reason:** stated in [1]\n**Answer:** Paris",
    "**Reason**: stated in [1]\n**Answer**: Paris",
    "## **Reason:** stated in [1]\n## **Answer:** Paris",
    "##Reason: stated in [1]\n### Final Answer: Paris",
    "Reason: stated in [1]\nAnswer: Paris",
])
def test_split_reason_answer_markdown_variants(text):
    assert split_reason_answer(text) == ("stated in [1]", "Paris")


def test_split_reason_answer_missing_parts():
    assert split_reason_answer("##Answer: Paris") == ("", "Paris")
    assert split_reason_answer("Thinking first.\n##Answer: Paris") == ("Thinking first.", "Paris")
    assert split_reason_answer("##Reason: cut short because") == ("cut short because", "")
    assert split_reason_answer("Just Paris.") == ("", "Just Paris.")
    assert split_reason_answer("The answer: Paris") == ("", "The answer: Paris")
    assert split_reason_answer(None) == ("", "")


def test_split_reason_answer_in_either_order():
    assert split_reason_answer("##Answer: Paris ##Reason: see [1]") == ("see [1]", "Paris")


# ----------------------------------------------------------------------- score_generation

def _by_name(scores):
    return {s.metric: s for s in scores}


def test_score_generation_names_and_order():
    scores = score_generation("The capital is Paris.", ["Paris"])
    assert all(isinstance(s, Score) for s in scores)
    assert [s.metric for s in scores] == list(METRICS) + list(LANGUAGE_VARIANTS)
    assert METRICS == ("em_loose", "em_strict", "f1_mirage", "bergen_match", "bergen_em",
                       "bergen_f1", "char3_recall", "correct_language", "no_answer")
    assert LANGUAGE_VARIANTS == ("correct_language:langid:bergen",
                                 "correct_language:fasttext:mirage-tui",
                                 "correct_language:fasttext:bergen")
    assert isinstance(SCORER_VERSION, str) and SCORER_VERSION


def test_score_generation_values_and_details():
    s = _by_name(score_generation("Sofia Kovalevskaia", ["Sofya Kovalevskaya"], language="en"))
    assert s["em_loose"].value == 0.0
    assert s["char3_recall"].value == pytest.approx(9 / 13)
    assert "9/13" in s["char3_recall"].detail
    assert s["correct_language"].value is None  # 18 characters
    assert s["no_answer"].value == 0.0
    s = _by_name(score_generation("It was the Eiffel Tower.", ["Eiffel Tower"]))
    assert s["em_loose"].value == 1.0 and "'Eiffel Tower'" in s["em_loose"].detail
    assert s["bergen_match"].value == 1.0
    assert s["em_strict"].value == 0.0


def test_score_generation_language_detail():
    s = _by_name(score_generation(GERMAN, ["Berlin"], language="de"))
    assert s["correct_language"].value == 1.0
    assert "detected de" in s["correct_language"].detail


def test_score_generation_without_gold_leaves_answer_match_out():
    s = _by_name(score_generation("I don't know.", [], language="en"))
    for name in ANSWER_MATCH_METRICS:
        assert s[name].value is None
    assert s["no_answer"].value == 1.0
    assert "i don't know" in s["no_answer"].detail


def test_score_generation_cited_scores_the_answer_part():
    text = ("##Reason: Passage [2] says Berlin is the capital [2][5]. "
            "##Answer: Die Hauptstadt von Deutschland ist Berlin [2][1].")
    s = _by_name(score_generation(text, ["Berlin"], language="de", cited=True))
    assert s["citations"].value == 2.0
    assert json.loads(s["citations"].detail) == [2, 1]
    assert s["correct_language"].value == 1.0
    assert s["em_loose"].value == 1.0
    assert list(s)[-1] == "citations"
    s = _by_name(score_generation("Berlin [1]", ["Berlin"], cited=True))
    assert s["em_strict"].value == 1.0  # citations removed before matching
    assert "citations" not in _by_name(score_generation("Berlin [1]", ["Berlin"]))

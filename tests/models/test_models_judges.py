"""Judges: the reply parsers, the logits / parsed / failed paths on a scripted judge model, the
versioned templates, and one real end-to-end verdict with the packaged SmolLM2 (llama.cpp)."""

from __future__ import annotations

import math

import pytest

from models.base import ContextOverflow, ModelError
from models.judge_templates import TEMPLATES, get_template
from models.judges import (PairwiseJudge, PointwiseJudge, Verdict, format_documents,
                           parse_grade, parse_pairwise, parse_yes_no)
from testkit.scripted import ScriptedJudge

# --------------------------------------------------------------------------- parsers

PAIRWISE_ABC = [
    ("A", "A"), ("B", "B"), ("C", "tie"), ("[[A]]", "A"), ("[[B]]", "B"), ("[[C]]", "tie"),
    ("[[a]]", "A"), ("**A**", "A"), ('"B"', "B"), ("(B)", "B"), ("B)", "B"), ("A.", "A"),
    ("Tie", "tie"), ("tie.", "tie"), ("Answer: B", "B"), ("Verdict: A", "A"),
    ("Answer: [[C]]", "tie"), ("C: tie", "tie"),
    ("My final verdict is [[B]].", "B"), ("Final verdict: [[A]]", "A"),
    ("The answer is A", "A"), ("The better answer is Answer B.", "B"),
    ("A\nAnswer A cites the documents it relies on.", "A"),
    ("B - it cites [1] and stays on topic.", "B"),
    ("Verdict: A. Answer B is wrong.", "A"),
    ("Answer A is better because it cites the documents.", "A"),
    ("Assistant B is more accurate.", "B"),
    ("Answer A is better than answer B.", "A"),
    ("I prefer Answer B.", "B"),
    ("Both answers are equally good.", "tie"), ("It's a tie.", "tie"),
    ("Neither answer is better.", "tie"),
    ("Answer B is not better than answer A; it's a tie", "tie"),
    # missing, refusals, ambiguity: never a guess, never a tie
    ("", None), ("   ", None), (None, None),
    ("I'm sorry, but I cannot compare these answers.", None),
    ("A good answer should cite its sources.", None),      # 'A' the article
    ("[[A]] or [[B]]", None), ("Verdict: A\nVerdict: B", None),
    ("Answer A is good. Answer B is bad.", None), ("Both A and B are wrong", None),
]

PAIRWISE_120 = [
    ("1", "A"), ("2", "B"), ("0", "tie"), ("[[1]]", "A"), ("Output: 2", "B"), ("1.", "A"),
    ("Answer 1 is better.", "A"), ("2\nAnswer 2 is more truthful.", "B"),
    ("Answer 2 is more complete than answer 1", "B"), ("I would choose answer 1.", "A"),
    ("0 - not sure", "tie"), ("I am not sure.", "tie"),
    ("Both answers are equally good", "tie"),
    # the rubric echoed back as a numbered list is not a verdict
    ("1. Truthfulness: an answer that states something false loses", None),
    ("1 or 2", None), ("", None), ("I cannot judge this.", None),
]

GRADES = [
    ("4", 4), ("3.", 3), ("[[3]]", 3), ("Rating: [[2]]", 2), ("Rating: 4/5", 4), ("4/5", 4),
    ("Score: 3 out of 5", 3), ("**Rating:** 5", 5), ("Grade: 2", 2), ("Grade 5", 5),
    ("I would rate this a 4.", 4), ("I give it a 3", 3), ("The answer is 4.", 4),
    ("5 - fully accurate", 5), ("4\nThe answer is accurate.", 4),
    # off scale, ambiguous, decimals, lists, refusals: missing
    ("Rating: 7", None), ("0", None), ("6", None), ("8/10", None), ("Rating: 4.5", None),
    ("between 3 and 4", None), ("[[4]] ... [[5]]", None), ("1. Truthfulness", None),
    ("1] 2, 3, 4", None), ("4. The answer is accurate.", None),
    ("The answer mentions 3 facts.", None), ("I can't grade this.", None), ("", None),
    (None, None),
]

YES_NO = [
    ("yes", "yes"), ("Yes.", "yes"), ("YES", "yes"), ("No", "no"), ("**No**", "no"),
    ("[[yes]]", "yes"), ("Answer: yes", "yes"), ("Supported: no", "no"),
    ("Yes, the passage states that Paris is the capital.", "yes"),
    ("Yes. There is no mention of Lyon.", "yes"),
    ("No. The passage does not mention it.", "no"),
    ("The passage does not support the sentence.", "no"),
    ("The passage supports the sentence.", "yes"), ("not supported", "no"),
    ("The sentence is unsupported.", "no"),
    ("The passage is consistent with the sentence.", "yes"),
    ("The passage is inconsistent with the sentence.", "no"),
    ("Yes and no.", None), ("[[yes]] [[no]]", None), ("", None), (None, None),
    ("I cannot determine that.", None), ("Nope", None),
    ("The passage does not provide any information about the sentence.", None),
]


@pytest.mark.parametrize("reply,expected", PAIRWISE_ABC)
def test_parse_pairwise_letters(reply, expected):
    assert parse_pairwise(reply) == expected


@pytest.mark.parametrize("reply,expected", PAIRWISE_120)
def test_parse_pairwise_ragqa_digits(reply, expected):
    assert parse_pairwise(reply, scheme="120") == expected


@pytest.mark.parametrize("reply,expected", GRADES)
def test_parse_grade(reply, expected):
    assert parse_grade(reply) == expected


@pytest.mark.parametrize("reply,expected", YES_NO)
def test_parse_yes_no(reply, expected):
    assert parse_yes_no(reply) == expected


# --------------------------------------------------------------------------- scripted judge

def scripted_judge(*, chat=True, label_probs=None, replies=(), supports=True) -> ScriptedJudge:
    """The kit's scripted judge with label_probs results (or exceptions) and replies, in turn."""
    return ScriptedJudge(list(replies), probs=list(label_probs or []), chat=chat,
                         supports_label_probs=supports, name="scripted-judge", sha="0" * 64,
                         n_ctx=2048)


ARGS = ("What is the capital of France?", "Paris [1].", "Berlin.")
DOCS = ["Paris is the capital of France."]


def test_label_probs_path_is_one_forward_pass():
    gen = scripted_judge(label_probs=[{"A": 0.2, "B": 0.5, "C": 0.3}])
    v = PairwiseJudge(gen).judge(*ARGS, documents=DOCS)
    assert v == Verdict(label="B", probs={"A": 0.2, "B": 0.5, "tie": 0.3}, method="logits",
                        raw=None, parse_failed=False, template="mirage_bench_pairwise@1",
                        judge="scripted-judge")
    assert [c[0] for c in gen.calls] == ["label_probs"]
    assert gen.calls[0][2] == ("A", "B", "C")


def test_label_probs_are_renormalised_and_spellings_summed():
    # "Yes" alone (0.3) would lose to "no" (0.35); summed with "yes" it wins.
    gen = scripted_judge(label_probs=[{"yes": 0.1, "Yes": 0.3, "no": 0.35, "No": 0.0}])
    v = PointwiseJudge(gen, "support_yes_no").judge(passage="p", sentence="s")
    assert set(gen.calls[0][2]) == {"yes", "Yes", "no", "No"}
    assert v.label == "yes"
    assert v.probs == pytest.approx({"yes": 0.4 / 0.75, "no": 0.35 / 0.75})

    gen = scripted_judge(label_probs=[{"1": 0.05, "2": 0.05, "3": 0.1, "4": 0.2, "5": 0.1}])
    v = PointwiseJudge(gen).judge(query="q", reference="r", answer="a")
    assert gen.calls[0][2] == ("1", "2", "3", "4", "5")
    assert v.label == 4 and v.method == "logits" and v.template == "answer_overlap_grade@1"
    assert v.probs == pytest.approx({1: .1, 2: .1, 3: .2, 4: .4, 5: .2})
    assert v.expected == pytest.approx(1 * .1 + 2 * .1 + 3 * .2 + 4 * .4 + 5 * .2)


@pytest.mark.parametrize("error", [NotImplementedError("no logprobs"),
                                   ModelError("none of the labels in the top 20"),
                                   ValueError("labels '1' and '2' start with the same token"),
                                   {"A": 0.0, "B": 0.0, "C": 0.0}])
def test_falls_back_to_parsing_when_label_probs_fails(error):
    gen = scripted_judge(label_probs=[error], replies=["B\nIt says Paris."])
    v = PairwiseJudge(gen).judge(*ARGS, documents=DOCS)
    assert (v.label, v.method, v.raw, v.parse_failed, v.probs) == \
        ("B", "parsed", "B\nIt says Paris.", False, None)
    assert v.fallback_reason and ("Error" in v.fallback_reason)
    assert [c[0] for c in gen.calls] == ["label_probs", "generate"]
    params = gen.calls[1][2]
    assert params.temperature == 0.0 and params.max_tokens == 32 and params.stop == ()


def test_unsupported_generator_is_parsed_without_trying_label_probs():
    gen = scripted_judge(supports=False, replies=["[[2]] Answer 2 is more truthful."])
    v = PairwiseJudge(gen, "ragqa_arena_pairwise").judge(*ARGS, reference="Paris.")
    assert (v.label, v.method, v.fallback_reason) == ("B", "parsed", None)
    assert v.template == "ragqa_arena_pairwise@1"
    assert [c[0] for c in gen.calls] == ["generate"]


@pytest.mark.parametrize("reply", ["", "I'm sorry, I can't help with that.", "[[A]] [[B]]"])
def test_unparseable_reply_is_a_parse_failure_not_a_tie(reply):
    gen = scripted_judge(supports=False, replies=[reply])
    v = PairwiseJudge(gen).judge(*ARGS, documents=DOCS)
    assert v.parse_failed and v.label is None and v.probs is None and v.raw == reply
    gen = scripted_judge(supports=False, replies=[reply])
    v = PointwiseJudge(gen, "fluency_grade").judge(answer="Paris.")
    assert v.parse_failed and v.label is None and v.expected is None


def test_context_overflow_is_not_swallowed():
    gen = scripted_judge(label_probs=[ContextOverflow("too long", 5000, 2048)])
    with pytest.raises(ContextOverflow):
        PairwiseJudge(gen).judge(*ARGS, documents=DOCS)


def test_chat_gets_messages_and_base_gets_a_frame_ending_at_the_label():
    chat = scripted_judge(label_probs=[{"A": 1.0}])
    PairwiseJudge(chat).judge(*ARGS, documents=DOCS)
    messages = chat.calls[0][1]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "impartial judge" in messages[0]["content"]
    user = messages[1]["content"]
    assert "[Reference documents]\n[1] Paris is the capital of France." in user
    assert user.index("[Answer A]\nParis [1].") < user.index("[Answer B]\nBerlin.")
    assert user.rstrip().endswith("then at most one sentence of explanation.")

    base = scripted_judge(chat=False, supports=False, replies=["A"])
    v = PairwiseJudge(base).judge(*ARGS, documents=DOCS)
    frame, params = base.calls[0][1], base.calls[0][2]
    assert isinstance(frame, str) and frame.endswith("\n\nVerdict: [[")
    assert "]" in params.stop and "\n" in params.stop
    assert v.label == "A"
    base = scripted_judge(chat=False, label_probs=[{"yes": 0.9, "no": 0.1}])
    PointwiseJudge(base, "support_yes_no").judge(passage="p", sentence="s")
    assert base.calls[0][1].endswith("[Sentence]\ns\n\nAnswer: [[")


def test_fields_are_checked_against_the_template():
    gen = scripted_judge(supports=False, replies=["A"] * 4)
    with pytest.raises(ValueError, match="needs documents"):
        PairwiseJudge(gen).judge(*ARGS)
    with pytest.raises(ValueError, match="shows no reference"):
        PairwiseJudge(gen).judge(*ARGS, documents=DOCS, reference="Paris")
    with pytest.raises(ValueError, match="shows no documents"):
        PairwiseJudge(gen, "ragqa_arena_pairwise").judge(*ARGS, documents=DOCS)
    with pytest.raises(ValueError, match="needs reference"):
        PointwiseJudge(gen, "answer_overlap_grade").judge(query="q", answer="a")
    with pytest.raises(ValueError, match="no field passage"):
        PointwiseJudge(gen, "fluency_grade").judge(answer="a", passage="p")
    with pytest.raises(ValueError, match="cannot use a grade template"):
        PairwiseJudge(gen, "fluency_grade")
    with pytest.raises(ValueError, match="cannot use a pairwise template"):
        PointwiseJudge(gen, "mirage_bench_pairwise")
    # the arena's reference is optional: shown when given, absent otherwise
    prompt = PairwiseJudge(gen, "ragqa_arena_pairwise").prompt(
        query="q", answer_a="a", answer_b="b", reference=None)
    assert "[Reference answer]" not in prompt[1]["content"]
    assert "[Answer 1]\na\n\n[Answer 2]\nb" in prompt[1]["content"]


def test_templates_are_versioned():
    assert set(TEMPLATES) == {"mirage_bench_pairwise", "ragqa_arena_pairwise",
                              "answer_overlap_grade", "fluency_grade", "support_yes_no"}
    for name, t in TEMPLATES.items():
        assert t.version and t.id == f"{name}@{t.version}" and t.source
        assert get_template(t.id) is t and get_template(name) is t
        labels = t.written_labels
        assert len(set(labels)) == len(labels) >= 2
        for written in labels:              # the rubric names every label it accepts
            assert written in t.instructions or written in t.chat_reply
    assert [v for _, v in TEMPLATES["ragqa_arena_pairwise"].labels] == ["A", "B", "tie"]
    assert [v for _, v in TEMPLATES["mirage_bench_pairwise"].labels] == ["A", "B", "tie"]
    with pytest.raises(KeyError, match="has version 1, not 0"):
        get_template("mirage_bench_pairwise@0")
    with pytest.raises(KeyError, match="no judge template"):
        get_template("mt_bench")


def test_format_documents():
    assert format_documents(None) is None
    assert format_documents([]) == "(no documents)"
    assert format_documents(["one\n two", ("d7", "seven"),
                             {"docid": "x", "title": "T", "text": "body"}]) == \
        "[1] one two\n[d7] seven\n[x] T body"


# --------------------------------------------------------------------------- the real thing

def test_real_verdicts_with_packaged_smollm2():
    from models.llama.generator import LlamaGenerator

    gen = LlamaGenerator.load("smollm2-135m-instruct", n_ctx=2048)
    assert gen.chat and gen.supports_label_probs
    docs = ["Paris is the capital and largest city of France.",
            ("d2", "Lyon is a city in the Auvergne-Rhône-Alpes region of France.")]

    v = PairwiseJudge(gen).judge("What is the capital of France?",
                                 "The capital of France is Paris [1].",
                                 "The capital of France is Berlin.", documents=docs)
    assert v.method == "logits" and not v.parse_failed and v.fallback_reason is None
    assert set(v.probs) == {"A", "B", "tie"}
    assert all(0.0 <= p <= 1.0 for p in v.probs.values())
    assert math.isclose(sum(v.probs.values()), 1.0, rel_tol=1e-9)
    assert v.label == max(v.probs, key=v.probs.get)
    assert v.template == "mirage_bench_pairwise@1" and v.judge == gen.identity.name

    s = PointwiseJudge(gen, "support_yes_no").judge(
        passage=docs[0], sentence="Paris is the capital of France.")
    assert s.method == "logits" and set(s.probs) == {"yes", "no"}
    assert all(0.0 <= p <= 1.0 for p in s.probs.values())
    assert math.isclose(sum(s.probs.values()), 1.0, rel_tol=1e-9)
    assert s.label == max(s.probs, key=s.probs.get)

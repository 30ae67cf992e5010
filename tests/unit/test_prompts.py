"""Prompt templates: MIRAGE's exactly as METRICS.md §1 gives them, BERGEN's user-language
prompting (§3), MIRAGE-Bench's citation prompt (§2), and how generators render them."""

from __future__ import annotations

import pytest

from engine.metrics.answer import score_generation
from engine.prompts import (BERGEN_SYSTEM, SYSTEM_PROMPT, TEMPLATES, bergen_system_prompt,
                            get_template, language_name, numbered_context)

MIRAGE = get_template("mirage")
BERGEN = get_template("bergen")
BENCH = get_template("mirage-bench")


def test_template_ids_are_versioned():
    assert (MIRAGE.id, BERGEN.id, BENCH.id) == ("mirage@1", "bergen@1", "mirage-bench@1")
    assert get_template("mirage@1") is MIRAGE
    assert set(TEMPLATES) == {"mirage@1", "bergen@1", "mirage-bench@1"}
    assert BENCH.cited and not MIRAGE.cited and not BERGEN.cited
    with pytest.raises(ValueError, match="no prompt template 'nope'.*mirage-bench"):
        get_template("nope")
    with pytest.raises(ValueError):
        get_template("mirage@9")


# --------------------------------------------------------------------------- MIRAGE

def test_mirage_base_prompt_is_the_reference_text():
    assert SYSTEM_PROMPT == "You are a helpful assistant."
    assert MIRAGE.messages("Who wrote Hamlet?") == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Question: Who wrote Hamlet?\n\nAnswer : \n"},
    ]


def test_mirage_oracle_prompt_writes_the_chunk_as_it_is():
    messages = MIRAGE.messages("Who wrote Hamlet?", ["Hamlet is a play by Shakespeare."],
                               oracle=True)
    assert messages == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Question : Who wrote Hamlet?\n\nContext : "
                                    "Hamlet is a play by Shakespeare.\n\nAnswer :\n"},
    ]


def test_mirage_mixed_prompt_numbers_chunks_one_per_line():
    chunks = ["first chunk.", "second chunk.", "third chunk."]
    messages = MIRAGE.messages("Q?", chunks)
    assert messages[1]["content"] == (
        "Question : Q?\n\nContext : 1. first chunk.\n2. second chunk.\n3. third chunk."
        "\n\nAnswer :\n")
    assert numbered_context(chunks) == "1. first chunk.\n2. second chunk.\n3. third chunk."
    # a one-chunk list (retrieved@1) is numbered too, so retrieved@1 ⊂ @3 share their prefix
    one = MIRAGE.messages("Q?", chunks[:1])[1]["content"]
    three = messages[1]["content"]
    assert one == "Question : Q?\n\nContext : 1. first chunk.\n\nAnswer :\n"
    assert three.startswith(one.split("\n\nAnswer")[0] + "\n")


def test_mirage_ignores_the_language_and_keeps_braces_in_text():
    a = MIRAGE.messages("¿Quién {x}?", ["{chunk}"], language="es")
    assert a[1]["content"] == "Question : ¿Quién {x}?\n\nContext : 1. {chunk}\n\nAnswer :\n"


# --------------------------------------------------------------------------- BERGEN

XQUAD_LANGUAGES = ("ar", "de", "en", "es", "hi", "ru", "th", "zh")


def test_bergen_has_a_system_prompt_in_every_xquad_language_and_french():
    assert set(BERGEN_SYSTEM) == set(XQUAD_LANGUAGES) | {"fr"}
    for code, (with_docs, without) in BERGEN_SYSTEM.items():
        assert with_docs != without and with_docs.strip() and without.strip()
        assert bergen_system_prompt(code, True) == with_docs
        assert bergen_system_prompt(code.upper() + "-XX", False) == without
    # each prompt names its own language in that language
    assert "auf Deutsch" in BERGEN_SYSTEM["de"][0]
    assert "en español" in BERGEN_SYSTEM["es"][0]
    assert "en français" in BERGEN_SYSTEM["fr"][1]
    assert "中文" in BERGEN_SYSTEM["zh"][0]
    assert "русском" in BERGEN_SYSTEM["ru"][0]
    assert "العربية" in BERGEN_SYSTEM["ar"][0]
    assert "हिंदी" in BERGEN_SYSTEM["hi"][0]
    assert "ภาษาไทย" in BERGEN_SYSTEM["th"][0]
    assert BERGEN_SYSTEM["en"][1].endswith("Answer in English.")


def test_bergen_other_languages_get_english_naming_the_language():
    assert bergen_system_prompt("pt", False).endswith("Answer in Portuguese.")
    assert bergen_system_prompt(None, True).endswith("Answer in the language of the question.")
    assert bergen_system_prompt("xx", True).endswith("Answer in the language of the question.")
    assert language_name("zh-CN") == "Chinese" and language_name(None) is None


def test_bergen_messages_with_and_without_documents():
    assert BERGEN.messages("Wer?", language="de") == [
        {"role": "system", "content": BERGEN_SYSTEM["de"][1]},
        {"role": "user", "content": "Question: Wer?"},
    ]
    long_doc = " ".join(f"w{i}" for i in range(150))
    messages = BERGEN.messages("Wer?", ["Ein  kurzes\nDokument.", long_doc], language="de")
    assert messages[0] == {"role": "system", "content": BERGEN_SYSTEM["de"][0]}
    cut = " ".join(f"w{i}" for i in range(100))
    assert messages[1]["content"] == (
        f"Background:\nDocument 1: Ein kurzes Dokument.\nDocument 2: {cut}\n\nQuestion: Wer?")


# --------------------------------------------------------------------------- MIRAGE-Bench

def test_mirage_bench_prompt_numbers_contexts_and_asks_for_cited_reasoning():
    messages = BENCH.messages("¿Quién?", ["alpha", "beta"], language="es")
    assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    user = messages[1]["content"]
    assert user.startswith("Question: ¿Quién?\n\nContexts:\n[1] alpha\n[2] beta\n\n")
    assert "Instruction: Answer the question in Spanish" in user
    assert "IEEE" in user and "[1]" in user and "step by step" in user
    assert "##Reason:" in user and "##Answer:" in user
    base = BENCH.messages("¿Quién?", language="es")[1]["content"]
    assert "Contexts" not in base and "in Spanish" in base and "##Answer:" in base
    assert "the language of the question" in BENCH.messages("Q?", ["a"])[1]["content"]


def test_a_response_in_the_requested_format_scores_with_its_citations():
    reply = "##Reason: The context says so [2]. ##Answer: Miguel de Cervantes [2][1]."
    scores = {s.metric: s for s in score_generation(reply, ["Cervantes"], language="es",
                                                    cited=True)}
    assert scores["em_loose"].value == 1.0
    assert scores["citations"].value == 2.0 and scores["citations"].detail == "[2, 1]"


# --------------------------------------------------------------------------- rendering

@pytest.mark.slow
def test_generators_render_the_messages_exactly():
    from models.few_shot import FEW_SHOT_VERSION
    from models.llama.generator import LlamaGenerator

    smol = LlamaGenerator.load("smollm2-135m-instruct", n_threads=1)
    messages = MIRAGE.messages("Who wrote Hamlet?", ["A play.", "A poem."])
    rendered = smol.render(messages)
    assert rendered.mode == "chat-template"
    assert rendered.text == ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                             "<|im_start|>user\n" + messages[1]["content"] + "<|im_end|>\n"
                             "<|im_start|>assistant\n")
    gemma = LlamaGenerator.load("gemma3-270m", n_threads=1)
    framed = gemma.render(messages)
    assert framed.mode == FEW_SHOT_VERSION
    assert framed.text.startswith("You are a helpful assistant.\n")
    assert "Who wrote Hamlet?\n\nContext : 1. A play.\n2. A poem." in framed.text
    assert framed.text.endswith("Answer:")

"""Versioned prompt templates for runs: MIRAGE, BERGEN mRAG and MIRAGE-Bench.

A template turns (query, context chunks, user language) into chat messages. Its id
(``mirage@1``) is recorded in every run header and, through the exact prompt text, in every
generation's cache key: changing a template's wording means a new version, never an edit.
Base (non-chat) generators get the same messages rendered into their few-shot frame by the
generator adapter (``LlamaGenerator.render``); the run stores the exact text that was sent.

- ``mirage@1`` (MIRAGE, Park et al., reference ``config.yaml``; METRICS.md §1): system prompt
  "You are a helpful assistant."; base ``Question: {query}\\n\\nAnswer : \\n``; with context
  ``Question : {query}\\n\\nContext : {context}\\n\\nAnswer :\\n``. The oracle chunk is the
  context as it is (as in the reference code); a list of chunks (mixed, retrieved@k, even for
  k = 1) is written ``1. {chunk}\\n2. {chunk}…``. Two deliberate differences from the
  reference: chunks are separated by a newline (the reference writes ``1. {a}2. {b}`` with no
  separator), and the system prompt has no trailing newline (the reference's YAML block
  scalar leaves one: "You are a helpful assistant.\\n"); METRICS.md's wording is followed.
- ``bergen@1`` (BERGEN mRAG, Chirkova et al.; METRICS.md §3): a system prompt in the user's
  language that asks for a short answer in that language; the user message is
  ``Background:\\nDocument 1: {d1}\\nDocument 2: {d2}\\n\\nQuestion: {query}`` (or
  ``Question: {query}`` without documents), each document cut to its first 100
  whitespace-separated words as BERGEN does. The system prompts for ar, de, en, es, fr, hi,
  ru, th and zh are mirage-tui's own short translations, not BERGEN's text; other languages
  get the English prompt naming the language.
- ``mirage-bench@1`` (MIRAGE-Bench, Thakur et al.; METRICS.md §2): the question, the
  contexts numbered ``[1] text``, then an English instruction asking for an answer in the
  user's language with step-by-step reasoning and IEEE citations, in the format
  ``##Reason: … ##Answer: …``. Responses are scored with ``cited=True``. Unlike the paper,
  contexts keep their pool or rank order (not shuffled), so runs stay deterministic and
  prompts share prefixes; the wording of the instruction is ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

SYSTEM_PROMPT = "You are a helpful assistant."

MIRAGE_BASE = "Question: {query}\n\nAnswer : \n"
MIRAGE_RAG = "Question : {query}\n\nContext : {context}\n\nAnswer :\n"

LANGUAGE_NAMES = {
    "ar": "Arabic", "bn": "Bengali", "de": "German", "el": "Greek", "en": "English",
    "es": "Spanish", "fa": "Persian", "fi": "Finnish", "fr": "French", "he": "Hebrew",
    "hi": "Hindi", "id": "Indonesian", "it": "Italian", "ja": "Japanese", "ko": "Korean",
    "nl": "Dutch", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian",
    "sv": "Swedish", "sw": "Swahili", "te": "Telugu", "th": "Thai", "tr": "Turkish",
    "uk": "Ukrainian", "vi": "Vietnamese", "yo": "Yoruba", "zh": "Chinese",
}

# mirage-tui's own translations (not BERGEN's text) of two short English system prompts:
# with documents: "You are a helpful assistant. Use the documents provided to answer the
# question as briefly as possible. Answer in {language}."; without: "You are a helpful
# assistant. Answer the question as briefly as possible. Answer in {language}."
BERGEN_SYSTEM: dict[str, tuple[str, str]] = {
    "en": ("You are a helpful assistant. Use the documents provided to answer the question as "
           "briefly as possible. Answer in English.",
           "You are a helpful assistant. Answer the question as briefly as possible. "
           "Answer in English."),
    "de": ("Du bist ein hilfreicher Assistent. Nutze die bereitgestellten Dokumente, um die "
           "Frage so kurz wie möglich zu beantworten. Antworte auf Deutsch.",
           "Du bist ein hilfreicher Assistent. Beantworte die Frage so kurz wie möglich. "
           "Antworte auf Deutsch."),
    "es": ("Eres un asistente útil. Usa los documentos proporcionados para responder a la "
           "pregunta de la forma más breve posible. Responde en español.",
           "Eres un asistente útil. Responde a la pregunta de la forma más breve posible. "
           "Responde en español."),
    "fr": ("Tu es un assistant serviable. Utilise les documents fournis pour répondre à la "
           "question le plus brièvement possible. Réponds en français.",
           "Tu es un assistant serviable. Réponds à la question le plus brièvement possible. "
           "Réponds en français."),
    "ru": ("Ты полезный ассистент. Используй предоставленные документы, чтобы ответить на "
           "вопрос как можно короче. Отвечай на русском языке.",
           "Ты полезный ассистент. Ответь на вопрос как можно короче. "
           "Отвечай на русском языке."),
    "zh": ("你是一个乐于助人的助手。请根据所提供的文档，尽可能简短地回答问题。请用中文回答。",
           "你是一个乐于助人的助手。请尽可能简短地回答问题。请用中文回答。"),
    "ar": ("أنت مساعد مفيد. استخدم المستندات المقدمة للإجابة عن السؤال بأكبر قدر ممكن من "
           "الإيجاز. أجب باللغة العربية.",
           "أنت مساعد مفيد. أجب عن السؤال بأكبر قدر ممكن من الإيجاز. أجب باللغة العربية."),
    "hi": ("आप एक मददगार सहायक हैं। दिए गए दस्तावेज़ों का उपयोग करके प्रश्न का उत्तर यथासंभव "
           "संक्षेप में दें। हिंदी में उत्तर दें।",
           "आप एक मददगार सहायक हैं। प्रश्न का उत्तर यथासंभव संक्षेप में दें। हिंदी में उत्तर दें।"),
    "th": ("คุณเป็นผู้ช่วยที่มีประโยชน์ ใช้เอกสารที่ให้มาเพื่อตอบคำถามให้สั้นที่สุดเท่าที่จะทำได้ "
           "ตอบเป็นภาษาไทย",
           "คุณเป็นผู้ช่วยที่มีประโยชน์ ตอบคำถามให้สั้นที่สุดเท่าที่จะทำได้ ตอบเป็นภาษาไทย"),
}
BERGEN_MAX_DOC_WORDS = 100

BENCH_INSTRUCTION = (
    "Instruction: Answer the question in {language} using the contexts above. Think step by "
    "step and cite the contexts you rely on in IEEE format, e.g. [1] or [1][2]. Write your "
    "response in this format: ##Reason: your step-by-step reasoning, with citations "
    "##Answer: your answer, with citations")
BENCH_INSTRUCTION_NO_CONTEXT = (
    "Instruction: Answer the question in {language}. Think step by step. Write your response "
    "in this format: ##Reason: your step-by-step reasoning ##Answer: your answer")

Message = dict


def primary_language(code: str | None) -> str | None:
    """``zh-CN`` -> ``zh``; None or blank -> None."""
    if not code or not code.strip():
        return None
    return code.strip().lower().replace("_", "-").split("-", 1)[0]


def language_name(code: str | None) -> str | None:
    """The English name of a language code (``de`` -> ``German``), None when unknown."""
    primary = primary_language(code)
    return LANGUAGE_NAMES.get(primary) if primary else None


def numbered_context(chunks: Sequence[str]) -> str:
    """MIRAGE's list of chunks, ``1. {a}\\n2. {b}`` (the reference puts no newline between)."""
    return "\n".join(f"{i}. {chunk}" for i, chunk in enumerate(chunks, start=1))


@dataclass(frozen=True)
class Template:
    """A versioned prompt template. ``messages(query, context)`` with ``context=None`` is the
    base (no context) prompt; with a list of chunk texts it is the context prompt. ``oracle``
    says the one chunk is the oracle (MIRAGE writes it without a number)."""

    family: str
    version: int
    cited: bool
    description: str
    build: Callable[..., list[Message]]

    @property
    def id(self) -> str:
        return f"{self.family}@{self.version}"

    def messages(self, query: str, context: Sequence[str] | None = None, *,
                 language: str | None = None, oracle: bool = False) -> list[Message]:
        return self.build(query, None if context is None else list(context), language, oracle)


def _chat(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def mirage_messages(query: str, context: list[str] | None, language: str | None = None,
                    oracle: bool = False) -> list[Message]:
    """MIRAGE's chat messages (``mirage@1``); the language is not used (MIRAGE is English)."""
    if context is None:
        return _chat(SYSTEM_PROMPT, MIRAGE_BASE.format(query=query))
    text = context[0] if oracle and len(context) == 1 else numbered_context(context)
    return _chat(SYSTEM_PROMPT, MIRAGE_RAG.format(query=query, context=text))


def bergen_system_prompt(language: str | None, with_documents: bool) -> str:
    """The system prompt in the user's language (our translations; English naming the
    language, or asking for the question's language, when there is none)."""
    primary = primary_language(language)
    if primary in BERGEN_SYSTEM:
        return BERGEN_SYSTEM[primary][0 if with_documents else 1]
    english = BERGEN_SYSTEM["en"][0 if with_documents else 1]
    name = language_name(language)
    return english.replace("Answer in English.", f"Answer in {name}." if name else
                           "Answer in the language of the question.")


def _cut_words(text: str, max_words: int = BERGEN_MAX_DOC_WORDS) -> str:
    """The first ``max_words`` whitespace-separated words, joined by single spaces (BERGEN's
    document cut, which also collapses the text's whitespace)."""
    return " ".join(text.split()[:max_words])


def bergen_messages(query: str, context: list[str] | None, language: str | None = None,
                    oracle: bool = False) -> list[Message]:
    """BERGEN-style chat messages (``bergen@1``)."""
    if not context:
        return _chat(bergen_system_prompt(language, False), f"Question: {query}")
    docs = "\n".join(f"Document {i}: {_cut_words(chunk)}" for i, chunk in enumerate(context, 1))
    return _chat(bergen_system_prompt(language, True),
                 f"Background:\n{docs}\n\nQuestion: {query}")


def mirage_bench_messages(query: str, context: list[str] | None, language: str | None = None,
                          oracle: bool = False) -> list[Message]:
    """MIRAGE-Bench-style chat messages with citations (``mirage-bench@1``)."""
    name = language_name(language) or "the language of the question"
    if context is None:
        return _chat(SYSTEM_PROMPT, f"Question: {query}\n\n"
                     + BENCH_INSTRUCTION_NO_CONTEXT.format(language=name))
    contexts = "\n".join(f"[{i}] {chunk}" for i, chunk in enumerate(context, start=1))
    return _chat(SYSTEM_PROMPT, f"Question: {query}\n\nContexts:\n{contexts}\n\n"
                 + BENCH_INSTRUCTION.format(language=name))


TEMPLATES: dict[str, Template] = {t.id: t for t in (
    Template("mirage", 1, False, "MIRAGE reference prompts (English)", mirage_messages),
    Template("bergen", 1, False, "BERGEN mRAG: system prompt in the user's language",
             bergen_messages),
    Template("mirage-bench", 1, True, "MIRAGE-Bench: answer in the user's language with "
             "reasoning and IEEE citations", mirage_bench_messages),
)}


def latest(family: str) -> Template | None:
    versions = [t for t in TEMPLATES.values() if t.family == family]
    return max(versions, key=lambda t: t.version) if versions else None


def get_template(name: str) -> Template:
    """A template by id (``mirage@1``) or by family (``mirage``: its newest version)."""
    found = TEMPLATES.get(name) or (latest(name) if "@" not in name else None)
    if found is None:
        known = ", ".join(sorted({t.family for t in TEMPLATES.values()} | set(TEMPLATES)))
        from engine.suggest import did_you_mean

        near = did_you_mean(name, sorted({t.family for t in TEMPLATES.values()}))
        raise ValueError(f"no prompt template {name!r}{near} (known: {known})")
    return found

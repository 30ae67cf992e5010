"""No-answer: does a response decline to answer (RAG-QA Arena, Han et al., no-answer ratio)?
A per-language phrase list, matched on case-folded, NFKC-normalised text.
"""

from __future__ import annotations

import re
import unicodedata

from engine.metrics.response_format import strip_citations

_CONTEXT_NOUNS = ("context", "provided context", "given context", "passages", "provided passages",
                  "documents", "provided documents", "text", "provided text")

DECLINE_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (
        "couldn't find an answer", "could not find an answer", "couldn't find the answer",
        "could not find the answer", "can't find the answer", "cannot find the answer",
        "unable to find an answer", "unable to find the answer",
        "couldn't find any information", "could not find any information",
        "i don't know", "i do not know",
        "cannot answer", "can't answer", "can not answer", "unable to answer",
        "cannot be answered", "can't be answered", "cannot be determined", "unable to determine",
        "no information", "no relevant information", "not enough information",
        "insufficient information", "does not contain the answer", "doesn't contain the answer",
        "does not provide the answer", "doesn't provide the answer",
        "does not provide enough information", "doesn't provide enough information",
        "unanswerable", "there is no answer",
        *(f"not {verb} in the {noun}" for verb in ("mentioned", "stated", "specified", "provided")
          for noun in _CONTEXT_NOUNS),
    ),
    "es": (
        "no lo sé", "no sé", "no puedo responder", "no puedo contestar", "no se puede responder",
        "no encontré una respuesta", "no encontré la respuesta", "no pude encontrar una respuesta",
        "no pude encontrar la respuesta", "no he encontrado una respuesta", "no hay información",
        "no tengo información", "no se menciona en el contexto", "información insuficiente",
    ),
    "de": (
        "ich weiß nicht", "weiß ich nicht", "keine antwort gefunden", "keine antwort finden",
        "kann die frage nicht beantworten", "kann ich nicht beantworten",
        "kann nicht beantwortet werden", "keine informationen", "keine information",
        "im kontext nicht erwähnt", "nicht im kontext erwähnt",
    ),
    "fr": (
        "je ne sais pas", "je n'ai pas trouvé de réponse", "je n'ai pas pu trouver de réponse",
        "je n'ai pas trouvé la réponse", "je ne peux pas répondre", "impossible de répondre",
        "aucune information", "pas d'information", "pas d'informations",
        "n'est pas mentionné dans le contexte",
    ),
    "ar": (
        "لا أعرف", "لا اعرف", "لا أعلم", "لا اعلم", "لم أجد إجابة",
        "لم أتمكن من العثور على إجابة", "لا يمكنني الإجابة", "لا أستطيع الإجابة",
        "لا توجد معلومات", "لا تتوفر معلومات",
    ),
    "zh": (
        "我不知道", "不知道答案", "无法回答", "無法回答", "找不到答案", "没有找到答案", "沒有找到答案",
        "未找到答案", "没有相关信息", "沒有相關信息", "上下文中没有提到", "上下文没有提到",
    ),
    "hi": (
        "मुझे नहीं पता", "मैं नहीं जानता", "मैं नहीं जानती", "उत्तर नहीं मिला", "जवाब नहीं मिला",
        "उत्तर नहीं दे सकता", "उत्तर नहीं दे सकती", "कोई जानकारी नहीं",
    ),
    "ru": (
        "не знаю", "не могу ответить", "не удалось найти ответ", "не нашёл ответа",
        "не нашел ответа", "не нашла ответа", "нет информации", "не упоминается в контексте",
        "в контексте не упоминается",
    ),
    "th": ("ไม่ทราบ", "ไม่รู้", "ไม่สามารถตอบ", "ไม่พบคำตอบ", "ไม่มีข้อมูล"),
}
"""Declining phrases per language, matched case-insensitively; in languages written with spaces
only as whole words ("i know that …" does not contain "i don't know")."""

_NO_WORD_SPACES = {"zh", "th"}


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("’", "'").replace("‘", "'").replace("ʼ", "'").replace("*", "")
    return " ".join(text.split())


def _decline_pattern() -> re.Pattern[str]:
    alternatives = []
    for lang, phrases in DECLINE_PHRASES.items():
        for phrase in phrases:
            body = re.escape(_fold(phrase))
            alternatives.append(body if lang in _NO_WORD_SPACES else rf"(?<!\w){body}(?!\w)")
    alternatives.sort(key=len, reverse=True)
    return re.compile("|".join(alternatives))


_DECLINE = _decline_pattern()


def decline_reason(prediction: str | None) -> str | None:
    """Why a response counts as declining: ``"empty response"``, the phrase it matched, or None."""
    text = strip_citations(prediction)
    if not any(ch.isalnum() for ch in text):
        return "empty response"
    match = _DECLINE.search(_fold(text))
    return f"declined: {match.group(0)!r}" if match else None


def is_no_answer(prediction: str | None) -> bool:
    """No-answer (RAG-QA Arena, Han et al., no-answer ratio): the response declines ("I couldn't
    find an answer", "I don't know", "not mentioned in the context", and the main equivalents in
    es/de/fr/ar/zh/hi/ru/th, see :data:`DECLINE_PHRASES`) or is empty.

    A phrase list is a heuristic: a response that hedges with "I don't know exactly, but …"
    counts as declining.

    Reference: RAG-QA Arena (Han et al.), the no-answer ratio (the paper; no reference code is
    followed).
    Deviation: what declines is decided by a per-language phrase list (nine languages), a
    heuristic.
    """
    return decline_reason(prediction) is not None

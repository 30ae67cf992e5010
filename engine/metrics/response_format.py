"""Reading a MIRAGE-Bench-style response: its ``[n]`` citations and its ``##Reason: …
##Answer: …`` headings (Thakur et al., MIRAGE-Bench). The answer metrics, the language and
no-answer checks and the arena's heuristic features all read responses through these.
"""

from __future__ import annotations

import re

_CITATION = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_CITATION_WITH_SPACE = re.compile(r"[ \t]*\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")


def parse_citations(text: str | None) -> list[int]:
    """IEEE-style citations (MIRAGE-Bench, Thakur et al., §heuristic features: citation quality):
    ``[1]``, ``[1, 3]``, ``[2][4]``, as passage numbers in order of first appearance, each once.

    Any bracketed integer counts (a bracketed year would too); the caller drops numbers that
    name no passage it showed.

    Reference: MIRAGE-Bench (Thakur et al.), heuristic features, citation quality (the paper;
    no reference code is followed).
    Deviation: any bracketed integer counts as a citation (a bracketed year would too).
    """
    seen: dict[int, None] = {}
    for match in _CITATION.finditer(text or ""):
        for number in re.split(r"\s*[,;]\s*", match.group(1)):
            seen.setdefault(int(number), None)
    return list(seen)


def strip_citations(text: str | None) -> str:
    """The text with its ``[n]`` / ``[n, m]`` citations (and the spaces before them) removed."""
    return _CITATION_WITH_SPACE.sub("", text or "")


def _heading(word: str) -> str:
    bold = r"(?:\*\*|__)"
    colon = r"[:：]"
    return (rf"(?:#{{1,6}}[ \t]*{bold}?[ \t]*{word}\b[ \t]*{bold}?[ \t]*{colon}?"
            rf"|{bold}[ \t]*{word}\b[ \t]*{bold}?[ \t]*{colon}"
            rf"|^[ \t]*{word}[ \t]*{colon})[ \t]*{bold}?")


_REASON_WORD = r"reason(?:ing)?"
_ANSWER_WORD = r"(?:final[ \t]+)?answer"
_HEADINGS = re.compile(
    f"(?P<reason>{_heading(_REASON_WORD)})|(?P<answer>{_heading(_ANSWER_WORD)})",
    re.IGNORECASE | re.MULTILINE)


def _clean_part(text: str) -> str:
    return text.strip().strip("*").strip()


def split_reason_answer(text: str | None) -> tuple[str, str]:
    """Split MIRAGE-Bench's ``##Reason: … ##Answer: …`` response into (reason, answer).

    Tolerant of case, of markdown bold (``**Answer:**``), of headings without ``#`` at a line
    start (``Answer: …``) and of a missing Reason (the reason is then what precedes the answer).
    With no Answer heading: a response with a Reason heading has answer "" (it was cut short);
    one with neither is all answer.
    """
    text = text or ""
    headings = list(_HEADINGS.finditer(text))
    first = {kind: next((i for i, h in enumerate(headings) if h.group(kind)), None)
             for kind in ("reason", "answer")}

    def segment(i: int) -> str:
        end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
        return _clean_part(text[headings[i].end():end])

    if first["answer"] is None:
        return (segment(first["reason"]), "") if first["reason"] is not None else ("", text.strip())
    answer = segment(first["answer"])
    if first["reason"] is not None:
        return segment(first["reason"]), answer
    return _clean_part(text[:headings[first["answer"]].start()]), answer

"""Versioned prompts for LLM judges (pairwise, 1–5 grades, yes/no support).

Each template is identified by ``name@version``; the version is part of every cache key that
holds a verdict, so any change to a template's wording, sections, labels or cue must bump its
version (old verdicts then stay valid for the old text and are never mixed with new ones).

The wording is ours, written from the papers' descriptions (see docs/METRICS.md), not copied
from their code:

- ``mirage_bench_pairwise``: MIRAGE-Bench (Thakur et al.), paper Figure 13: an impartial RAG
  judge that sees the question, the reference documents and two answers; verdict A, B or tie.
- ``ragqa_arena_pairwise``: RAG-QA Arena (Han et al., LFRQA): two answers compared
  truthfulness first, then helpfulness and completeness; output 1, 2 or 0 (tie / not sure).
  In the arena one of the two answers is the LFRQA reference answer itself; a separate
  reference answer may also be shown when two system answers are compared.
- ``answer_overlap_grade``, ``fluency_grade``: MIRAGE-Bench's judged features, 1–5.
- ``support_yes_no``: does a passage support a sentence (stands in for an NLI model offline).

Two renderings share one text. Chat models get a system and a user message whose last line
asks for the verdict *first*, bare, so that the first generated token is the label (that is
what one forward pass of ``label_probs`` reads). Base models get a completion frame ending in
``<cue>: [[`` so the next token is the label itself with no leading space, whatever the
tokenizer does with spaces before digits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .base import Message


@dataclass(frozen=True)
class Section:
    field: str          # the argument it shows
    header: str         # shown as "[header]"
    required: bool = True


@dataclass(frozen=True)
class JudgeTemplate:
    name: str
    version: str
    kind: str                            # 'pairwise' | 'grade' | 'yes_no'
    system: str
    instructions: str                    # the task, the rubric, what each label means
    sections: tuple[Section, ...]
    chat_reply: str                      # last line for chat models: verdict first, bare
    cue: str                             # the completion frame ends with f"{cue}: [["
    labels: tuple[tuple[str, object], ...]  # (what the judge writes, the verdict label)
    scheme: str = ""                     # pairwise only: 'ABC' or '120' (see judges.parse_pairwise)
    source: str = ""

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def written_labels(self) -> tuple[str, ...]:
        return tuple(w for w, _ in self.labels)

    def verdict_label(self, written: str) -> object:
        return dict(self.labels)[written]

    def _body(self, fields: Mapping[str, str | None]) -> str:
        missing = [s.field for s in self.sections
                   if s.required and (fields.get(s.field) is None)]
        if missing:
            raise ValueError(f"judge template {self.id} needs {', '.join(missing)}")
        unknown = set(fields) - {s.field for s in self.sections}
        if unknown:
            raise ValueError(f"judge template {self.id} has no field {', '.join(sorted(unknown))}")
        parts = [self.instructions.strip()]
        for s in self.sections:
            value = fields.get(s.field)
            if value is not None:
                parts.append(f"[{s.header}]\n{str(value).strip()}")
        return "\n\n".join(parts)

    def chat_messages(self, fields: Mapping[str, str | None]) -> list[Message]:
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": f"{self._body(fields)}\n\n{self.chat_reply}"}]

    def completion_text(self, fields: Mapping[str, str | None]) -> str:
        return f"{self.system}\n\n{self._body(fields)}\n\n{self.cue}: [["


_PAIRWISE_AB = (("A", "A"), ("B", "B"), ("C", "tie"))
_PAIRWISE_120 = (("1", "A"), ("2", "B"), ("0", "tie"))
_GRADES = tuple((str(g), g) for g in range(1, 6))
_YES_NO = (("yes", "yes"), ("no", "no"))
_GRADE_REPLY = ("Reply with the grade first, as a single digit from 1 to 5, then at most one "
                "sentence of explanation.")

MIRAGE_BENCH_PAIRWISE = JudgeTemplate(
    name="mirage_bench_pairwise",
    version="1",
    kind="pairwise",
    scheme="ABC",
    source="MIRAGE-Bench (Thakur et al.), Figure 13: impartial RAG judge with reference documents",
    system="You are an impartial judge of answers written by retrieval-augmented generation "
           "(RAG) systems.",
    instructions=(
        "Two systems answered the same question using the reference documents shown below. "
        "Decide which answer serves the person who asked better. A good answer responds to the "
        "question, states only what the reference documents support, cites the documents it "
        "relies on, is written in the language of the question, and is clear and concise. "
        "Do not let the order of the answers, their length or their style sway you.\n"
        "Write A if Answer A is better, B if Answer B is better, and C if they are equally "
        "good or equally poor (a tie)."),
    sections=(Section("query", "Question"), Section("documents", "Reference documents"),
              Section("answer_a", "Answer A"), Section("answer_b", "Answer B")),
    chat_reply="Reply with your verdict first, as a single letter (A, B or C), then at most "
               "one sentence of explanation.",
    cue="Verdict",
    labels=_PAIRWISE_AB,
)

RAGQA_ARENA_PAIRWISE = JudgeTemplate(
    name="ragqa_arena_pairwise",
    version="1",
    kind="pairwise",
    scheme="120",
    source="RAG-QA Arena (Han et al., LFRQA): truthfulness first, then helpfulness and "
           "completeness; 1, 2 or 0",
    system="You are a careful evaluator of long-form answers to questions.",
    instructions=(
        "Compare two answers to the question below and decide which is better, in this order "
        "of importance:\n"
        "1. Truthfulness: an answer that states something false, or something that neither the "
        "reference answer (when one is shown, treat it as correct) nor common knowledge "
        "supports, loses to one that does not, however helpful it looks.\n"
        "2. Helpfulness: among truthful answers, prefer the one that actually answers the "
        "question.\n"
        "3. Completeness: then prefer the one that covers more of what matters, without "
        "padding.\n"
        "Write 1 if Answer 1 is better, 2 if Answer 2 is better, and 0 if they are equally "
        "good or you are not sure."),
    sections=(Section("query", "Question"),
              Section("reference", "Reference answer", required=False),
              Section("answer_a", "Answer 1"), Section("answer_b", "Answer 2")),
    chat_reply="Reply with your verdict first, as a single digit (1, 2 or 0), then at most one "
               "sentence of explanation.",
    cue="Verdict",
    labels=_PAIRWISE_120,
)

ANSWER_OVERLAP_GRADE = JudgeTemplate(
    name="answer_overlap_grade",
    version="1",
    kind="grade",
    source="MIRAGE-Bench (Thakur et al.): answer overlap judged 1-5 against a reference answer",
    system="You are a strict grader comparing an answer with a reference answer.",
    instructions=(
        "Grade how well the answer agrees with the reference answer, on this scale:\n"
        "1 = off-topic, or contains claims that contradict the reference or are made up;\n"
        "2 = says honestly that it cannot answer;\n"
        "3 = on topic, but with notable discrepancies from the reference;\n"
        "4 = acceptable: agrees with the reference, with minor omissions or extra detail;\n"
        "5 = fully accurate: conveys everything that matters in the reference."),
    sections=(Section("query", "Question"), Section("reference", "Reference answer"),
              Section("answer", "Answer")),
    chat_reply=_GRADE_REPLY,
    cue="Grade",
    labels=_GRADES,
)

FLUENCY_GRADE = JudgeTemplate(
    name="fluency_grade",
    version="1",
    kind="grade",
    source="MIRAGE-Bench (Thakur et al.): fluency judged 1-5",
    system="You are a strict grader of writing quality.",
    instructions=(
        "Grade the fluency of the answer (not its correctness), on this scale:\n"
        "1 = incomprehensible or not in a natural language;\n"
        "2 = hard to follow, with many errors;\n"
        "3 = understandable, with noticeable errors or awkward phrasing;\n"
        "4 = fluent, with minor slips;\n"
        "5 = fully fluent, natural and well organised."),
    sections=(Section("query", "Question", required=False), Section("answer", "Answer")),
    chat_reply=_GRADE_REPLY,
    cue="Grade",
    labels=_GRADES,
)

SUPPORT_YES_NO = JudgeTemplate(
    name="support_yes_no",
    version="1",
    kind="yes_no",
    source="MIRAGE-Bench (Thakur et al.): support of a reasoning sentence by its cited passage "
           "(an NLI model in the paper; a yes/no judge here)",
    system="You check whether a passage supports a sentence.",
    instructions=(
        "Does the passage support the sentence? Answer yes if everything the sentence claims "
        "is stated in the passage or follows from it; answer no if the passage contradicts it "
        "or does not say it."),
    sections=(Section("passage", "Passage"), Section("sentence", "Sentence")),
    chat_reply="Reply with yes or no first, then at most one sentence of explanation.",
    cue="Answer",
    labels=_YES_NO,
)

TEMPLATES: dict[str, JudgeTemplate] = {
    t.name: t for t in (MIRAGE_BENCH_PAIRWISE, RAGQA_ARENA_PAIRWISE, ANSWER_OVERLAP_GRADE,
                        FLUENCY_GRADE, SUPPORT_YES_NO)
}


def get_template(name: str | JudgeTemplate) -> JudgeTemplate:
    """A template by ``name`` or ``name@version`` (only the current version is kept here)."""
    if isinstance(name, JudgeTemplate):
        return name
    base, _, version = name.partition("@")
    if base not in TEMPLATES:
        raise KeyError(f"no judge template {base!r}; known: {', '.join(sorted(TEMPLATES))}")
    template = TEMPLATES[base]
    if version and version != template.version:
        raise KeyError(f"judge template {base} has version {template.version}, not {version}")
    return template

"""LLM judges: pairwise (A / B / tie), 1–5 grades, and yes/no support, on any Generator.

A verdict is read one of two ways, and says which:

- ``logits``: when the generator can (``supports_label_probs``), one forward pass; the
  probability of each label as the next token is read from the next-token distribution and
  the label is the argmax. A word label is asked for in its common spellings (``"yes"``,
  ``"Yes"``) and their probabilities are summed, so a chat model's capital does not hide it.
- ``parsed``: otherwise, or when the backend's ``label_probs`` raises NotImplementedError,
  ModelError or ValueError (the verdict's ``fallback_reason`` says which), a short greedy
  reply is generated and parsed by ``parse_pairwise`` / ``parse_grade`` / ``parse_yes_no``.
  A reply that cannot be parsed gives ``parse_failed=True`` and ``label=None``: the judge
  never turns it into a tie or a score (RAG-QA Arena counts parse failures separately, and
  the arena decides what they count as; MIRAGE-Bench records a failed grade as missing).

Prompts come from versioned templates (``models.judge_templates``); a verdict names its
template as ``name@version``. The fields (query, answers, documents, reference) are untrusted:
their control-token markers are broken before the template sees them
(:mod:`models.control_tokens`), so an answer cannot speak as the system or end the judge's turn.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from .base import ContextOverflow, Generator, ModelError, Prompt, SamplingParams
from .control_tokens import markers_of, neutralise_fields
from .judge_templates import JudgeTemplate, get_template
from .reasoning import split_reply

Label = str | int


@dataclass
class Verdict:
    label: Label | None            # 'A' / 'B' / 'tie', 1..5, or 'yes' / 'no'; None if unparsed
    probs: dict | None             # label -> probability (sums to 1), logits method only
    method: str                    # 'logits' | 'parsed'
    raw: str | None                # the generated reply (parsed method)
    parse_failed: bool
    template: str                  # 'name@version'
    judge: str                     # the generator's identity name
    fallback_reason: str | None = None   # why label_probs was not used, when it was tried

    @property
    def expected(self) -> float | None:
        """The probability-weighted mean grade (grades read from logits only)."""
        if not self.probs or not all(isinstance(k, int) for k in self.probs):
            return None
        return sum(k * p for k, p in self.probs.items())


# --------------------------------------------------------------------------- parsing

_OPEN = r"[\s*\"'`(\[]*"       # decoration a reply may put around a bare label
_CLOSE = r"[\s*\"'`)\].!]*"
_PAIR_SCHEMES = {"ABC": {"A": "A", "B": "B", "C": "tie"},
                 "120": {"1": "A", "2": "B", "0": "tie"}}
_VERDICT_WORDS = (r"(?:final\s+)?"
                  r"(?:verdict|answer|decision|winner|choice|output|judg(?:e)?ment|result)")
_SIDE_WORDS = r"(?:(?:answer|assistant|response|option|system|output)\s+)?"
_TIE_WORDS = (r"\b(?:tie|a draw|equally\s+(?:good|bad|poor|helpful|accurate|correct|valid)|"
              r"both\s+(?:answers\s+|responses\s+)?are\s+(?:equally|just\s+as)|"
              r"neither\s+(?:answer\s+|response\s+)?is\s+better|no\s+clear\s+winner)\b")


def _only(found: set) -> object | None:
    return next(iter(found)) if len(found) == 1 else None


def parse_pairwise(text: str | None, scheme: str = "ABC") -> str | None:
    """'A', 'B' or 'tie' from a judge's reply, or None when it is missing or ambiguous.

    ``scheme`` is what the template asked for: 'ABC' (A, B, C = tie; MT-Bench style) or '120'
    (RAG-QA Arena: 1, 2, 0 = tie / not sure). Checked in order: a bracketed label (``[[A]]``);
    a verdict phrase (``Verdict: B``, ``the better answer is Answer 1``); a bare label as the
    whole reply or at its start (``A``, ``**B**``, ``2 - because ...``); a winner phrase
    (``Answer B is better``, ``I prefer 1``); tie words. Two different labels at the same
    step make the reply ambiguous (None), never a tie.
    """
    if text is None or not text.strip():
        return None
    labels = _PAIR_SCHEMES[scheme]
    t = text.strip()
    alt = "|".join(labels)
    flags = re.I if scheme == "120" else 0   # 'a' lower-case is an article, not a label

    found = {m.group(1).upper() for m in re.finditer(rf"\[\[\s*({alt})\s*\]\]", t, re.I)}
    if found:
        one = _only(found)
        return labels[one] if one else None

    found = {m.group(1) for m in re.finditer(
        rf"(?i:{_VERDICT_WORDS})\s*(?i:is|:|=|-)\s*{_OPEN}(?i:{_SIDE_WORDS}){_OPEN}({alt})(?!\w)",
        t, flags)}
    if found:
        one = _only(found)
        return labels[one.upper()] if one else None

    m = re.fullmatch(rf"{_OPEN}({alt}){_CLOSE}", t, flags)
    if m:
        return labels[m.group(1).upper()]
    if re.fullmatch(rf"{_OPEN}(?:tie|draw){_CLOSE}", t, re.I):
        return "tie"
    # "1. Truthfulness: ..." is a numbered list (often the rubric echoed back), not a verdict.
    after = r"\s*[.):,;\n]" if scheme == "ABC" else r"\s*[):,;\n]|\.\s*(?:\n|$)"
    m = re.match(rf"{_OPEN}({alt})(?={after}|\s+[-–—]|\s*$)", t, flags)
    if m:
        return labels[m.group(1).upper()]

    found = {m.group(1).upper() for m in re.finditer(
        rf"(?i:{_SIDE_WORDS})\b({alt})\s+(?i:is|was|seems|appears)\s+(?:(?!not\b|no\b)\w+\s+)?"
        rf"(?i:better|superior|preferable|the\s+better|the\s+winner|more\s+\w+)", t, flags)}
    found |= {m.group(1).upper() for m in re.finditer(
        rf"(?i:prefer|choose|pick|select)\s+(?i:{_SIDE_WORDS})({alt})(?!\w)", t, flags)}
    if found:
        one = _only(found)
        return labels[one] if one else None

    if re.search(_TIE_WORDS, t, re.I):
        return "tie"
    if scheme == "120" and re.search(r"\bnot\s+sure\b", t, re.I):
        return "tie"
    return None


def parse_grade(text: str | None, low: int = 1, high: int = 5) -> int | None:
    """An integer grade in [low, high] from a reply, or None (missing, ambiguous, off scale).

    Accepts ``[[4]]``, ``4/5``, ``4 out of 5``, ``Rating: 4``, ``I would rate it a 4``, a bare
    ``4`` or a reply starting with the grade (``4 - accurate``). Decimals (``4.5``), other
    scales (``8/10``), grades out of range and a leading ``1. ...`` (a numbered list, often
    the rubric echoed back) give None.
    """
    if text is None or not text.strip():
        return None
    t = text.strip()

    def pick(values: set[str]) -> int | None:
        one = _only(values)
        if one is None or not re.fullmatch(r"\d+", one):
            return None
        g = int(one)
        return g if low <= g <= high else None

    number = r"(\d+(?:\.\d+)?)"
    for pattern in (rf"\[\[\s*{number}\s*\]\]",
                    rf"(?<![\d.]){number}\s*(?:/|out\s+of)\s*{high}(?![\d.])",
                    rf"(?i:rating|score|grade|mark)\s*(?i:is|:|=|of|-)\s*{_OPEN}(?i:an?\s+)?"
                    rf"{number}(?![\d.]*\d)",
                    rf"(?i:rate|grade|score|give)\s+(?i:it|this|the\s+answer|this\s+answer)?"
                    rf"\s*(?i:an?|as|as\s+an?)?\s*{_OPEN}{number}(?![\d.]*\d)",
                    rf"(?i:grade|rating|score|answer|verdict)\s+(?i:is|would\s+be|should\s+be)"
                    rf"\s+{_OPEN}(?i:an?\s+)?{number}(?=\s*[.)!,;\n*]|\s*$)"):
        found = set(re.findall(pattern, t))
        if found:
            return pick(found)
    if re.search(rf"\d+\s*(?:/|out\s+of)\s*\d+", t):
        return None   # a grade on another scale: not ours to rescale
    m = re.fullmatch(rf"{_OPEN}{number}{_CLOSE}", t)
    if m:
        return pick({m.group(1)})
    # A leading "1. ..." reads as a numbered list, not a grade; "4 - ...", "4\n..." are grades.
    m = re.match(rf"{_OPEN}{number}(?=\s*[):,;\n]|\.\s*(?:\n|$)|\s+[-–—]|\s*$)", t)
    if m:
        return pick({m.group(1)})
    return None


def parse_yes_no(text: str | None) -> str | None:
    """'yes' or 'no' from a reply, or None (missing, refusal, or both in the first sentence).

    Accepts ``[[yes]]``, ``Answer: no``, a reply starting with yes/no (``Yes, the passage
    says ...``), and support phrasing (``The passage does not support the sentence``).
    """
    if text is None or not text.strip():
        return None
    t = text.strip()
    found = {m.lower() for m in re.findall(r"\[\[\s*(yes|no)\s*\]\]", t, re.I)}
    if found:
        return _only(found)
    found = {m.lower() for m in re.findall(
        rf"(?:answer|verdict|supported|support|entailed|entailment|result)\s*[:=]\s*{_OPEN}"
        rf"(yes|no)\b", t, re.I)}
    if found:
        return _only(found)
    m = re.match(rf"{_OPEN}(yes|no)\b", t, re.I)
    if m:
        first_sentence = re.split(r"[.!?\n]", t, maxsplit=1)[0]
        both = {w.lower() for w in re.findall(r"\b(yes|no)\b", first_sentence, re.I)}
        return m.group(1).lower() if len(both) == 1 else None
    polarity = set()
    for m in re.finditer(r"\b(un|in)?(support(?:s|ed|ing)?|entail(?:s|ed)?|consistent)\b",
                         t, re.I):
        before = t[max(0, m.start() - 24):m.start()].lower()
        negated = m.group(1) or re.search(
            r"\b(not|no|never|doesn't|isn't|cannot|can't|fails\s+to)\W+(\w+\W+)?$", before)
        polarity.add("no" if negated else "yes")
    return _only(polarity)


# --------------------------------------------------------------------------- judges

def format_documents(documents: Sequence | None) -> str | None:
    """Numbered contexts, ``[docid] text`` (MIRAGE-Bench) or ``[1] text`` for bare strings.

    A document is a string, a ``(docid, text)`` pair, or a mapping with ``text`` and
    optionally ``docid`` / ``id`` and ``title``.
    """
    if documents is None:
        return None
    lines = []
    for i, doc in enumerate(documents, start=1):
        if isinstance(doc, str):
            docid, text = str(i), doc
        elif isinstance(doc, Mapping):
            docid = str(doc.get("docid", doc.get("id", i)))
            text = doc["text"] if not doc.get("title") else f"{doc['title']}\n{doc['text']}"
        else:
            docid, text = str(doc[0]), str(doc[1])
        lines.append(f"[{docid}] {' '.join(str(text).split())}")
    return "\n".join(lines) if lines else "(no documents)"


def _spellings(written: str) -> list[str]:
    # No leading-space forms: both renderings end right where the label goes (a chat reply's
    # first token, or after "[["), and a backend that takes a label's first token would read
    # " 4" as the bare space for every grade on tokenizers that split digits from spaces.
    forms = [written]
    if len(written) > 1 and written.isalpha():   # words, not single letters ('a' is an article)
        forms += [written.lower(), written.capitalize()]
    return list(dict.fromkeys(forms))


class _Judge:
    kinds: tuple[str, ...] = ()

    def __init__(self, generator: Generator, template: str | JudgeTemplate, *,
                 max_tokens: int = 32, seed: int = 0, use_label_probs: bool = True,
                 thinking: str = "auto"):
        self.generator = generator
        # the judge model's thinking mode (models.thinking) when its verdict is generated:
        # a reasoning judge asked with thinking off answers within max_tokens
        self.thinking = thinking
        self.template = get_template(template)
        if self.template.kind not in self.kinds:
            raise ValueError(f"{type(self).__name__} cannot use a {self.template.kind} "
                             f"template ({self.template.id})")
        self.max_tokens = max_tokens
        self.seed = seed
        self.use_label_probs = use_label_probs
        self._judge_name: str | None = None

    @property
    def judge_name(self) -> str:
        if self._judge_name is None:
            self._judge_name = self.generator.identity.name
        return self._judge_name

    def prompt(self, **fields) -> Prompt:
        """What the generator is sent: chat messages, or a completion frame for a base model,
        the fields' control-token markers broken (module docstring)."""
        fields = neutralise_fields(fields, markers_of(self.generator))
        if self.generator.chat:
            return self.template.chat_messages(fields)
        return self.template.completion_text(fields)

    def verdict(self, fields: Mapping[str, object]) -> Verdict:
        """The verdict on the template's ``fields`` as given (a cache calls this with the
        exact fields it keys on)."""
        return self._verdict(fields)

    def _verdict(self, fields: Mapping[str, object]) -> Verdict:
        prompt = self.prompt(**fields)
        reason = None
        if self.thinking != "auto":
            # label probabilities are read after the prompt as the template renders it by
            # default, inside a reasoning model's open think block: the verdict is generated
            # in the judge's thinking mode instead
            reason = f"thinking {self.thinking}: the verdict is generated"
        elif self.use_label_probs and getattr(self.generator, "supports_label_probs", False):
            try:
                return self._by_logits(prompt)
            except ContextOverflow:
                raise       # generating would overflow just the same
            except (NotImplementedError, ModelError, ValueError) as e:
                # ValueError: a backend that cannot tell these labels apart in one pass
                # (e.g. their first tokens collide in its vocabulary).
                reason = f"{type(e).__name__}: {e}"
        return self._by_parsing(prompt, reason)

    def _by_logits(self, prompt: Prompt) -> Verdict:
        spelled = {form: w for w in self.template.written_labels for form in _spellings(w)}
        raw = self.generator.label_probs(prompt, list(spelled))
        mass = dict.fromkeys(self.template.written_labels, 0.0)
        for form, p in raw.items():
            if form in spelled:
                mass[spelled[form]] += float(p)
        total = sum(mass.values())
        if not math.isfinite(total) or total <= 0:
            raise ModelError(f"label_probs gave no probability to any of "
                             f"{list(mass)} ({self.template.id})")
        probs = {self.template.verdict_label(w): m / total for w, m in mass.items()}
        label = max(probs, key=probs.get)       # first of equals, in template order
        return Verdict(label=label, probs=probs, method="logits", raw=None, parse_failed=False,
                       template=self.template.id, judge=self.judge_name)

    def _by_parsing(self, prompt: Prompt, reason: str | None) -> Verdict:
        # A completion frame ends in "[[": stop at a closing bracket or the line's end.
        stop = () if self.generator.chat else ("]", "\n")
        params = SamplingParams(max_tokens=self.max_tokens, temperature=0.0, seed=self.seed,
                                stop=stop, thinking=self.thinking)
        reply = self.generator.generate(prompt, params)
        # a judge that is itself a reasoning model: its verdict is read after its thinking
        # (the adapters split already; a generator that did not is split here), never from
        # the first token of <think>; a judge cut while thinking gave no verdict
        text = reply.text if getattr(reply, "thinking_cut", False) \
            else split_reply(reply.text).answer
        label = self._parse(text)
        return Verdict(label=label, probs=None, method="parsed", raw=text,
                       parse_failed=label is None, template=self.template.id,
                       judge=self.judge_name, fallback_reason=reason)

    def _parse(self, text: str) -> Label | None:
        kind = self.template.kind
        if kind == "pairwise":
            return parse_pairwise(text, self.template.scheme)
        if kind == "grade":
            return parse_grade(text)
        return parse_yes_no(text)


class PairwiseJudge(_Judge):
    """A / B / tie between two answers to one query (MIRAGE-Bench or RAG-QA Arena rubric).

    The caller owns position bias: randomise the A/B order with a recorded seed, or judge both
    orders and call disagreements ties (docs/METRICS.md §2, §4).
    """

    kinds = ("pairwise",)

    def __init__(self, generator: Generator, template: str | JudgeTemplate =
                 "mirage_bench_pairwise", **options):
        super().__init__(generator, template, **options)

    def fields(self, query: str, answer_a: str, answer_b: str, documents: Sequence | None = None,
               reference: str | None = None) -> dict:
        names = {s.field for s in self.template.sections}
        out = {"query": query, "answer_a": answer_a, "answer_b": answer_b}
        if "documents" in names:
            out["documents"] = format_documents(documents)
        elif documents is not None:
            raise ValueError(f"judge template {self.template.id} shows no documents")
        if "reference" in names:
            out["reference"] = reference
        elif reference is not None:
            raise ValueError(f"judge template {self.template.id} shows no reference answer")
        return out

    def judge(self, query: str, answer_a: str, answer_b: str, documents: Sequence | None = None,
              reference: str | None = None) -> Verdict:
        return self._verdict(self.fields(query, answer_a, answer_b, documents, reference))


class PointwiseJudge(_Judge):
    """A 1–5 grade (answer overlap, fluency) or a yes/no (support) for one item.

    ``judge(**fields)`` takes the template's fields: ``query``, ``reference``, ``answer`` for
    ``answer_overlap_grade``; ``answer`` (and optionally ``query``) for ``fluency_grade``;
    ``passage`` and ``sentence`` for ``support_yes_no``.
    """

    kinds = ("grade", "yes_no")

    def __init__(self, generator: Generator, template: str | JudgeTemplate =
                 "answer_overlap_grade", **options):
        super().__init__(generator, template, **options)

    def judge(self, **fields: str | None) -> Verdict:
        return self._verdict(fields)

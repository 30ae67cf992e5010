"""Rerankers: a sentence-transformers cross-encoder when a user has one, a local LLM judge
otherwise.

No reranker model is installable offline here, so ``JudgeReranker`` stands in: it asks a
generator whether the passage answers the query and scores by the probability of "yes" read
from the next-token distribution (one forward pass per passage, ``label_probs``). The two
scores are different quantities; every reranker's ``name`` says which produced a score
(``cross-encoder:<folder>``, ``judge:<generator>``), and callers record it with the score.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .base import Generator, ModelError, ModelIdentity
from .judge_templates import JudgeTemplate, Section

RELEVANCE_YES_NO = JudgeTemplate(
    name="relevance_yes_no",
    version="1",
    kind="yes_no",
    source="stands in for a cross-encoder reranker (MIRAGE-Bench's reranker feature; "
           "BERGEN's rerank step) when none is installed",
    system="You judge whether a passage answers a search query.",
    instructions=("Does the passage answer the query? Answer yes if the passage contains the "
                  "answer to the query, no otherwise."),
    sections=(Section("query", "Query"), Section("passage", "Passage")),
    chat_reply="Reply with yes or no.",
    cue="Answer",
    labels=(("yes", "yes"), ("no", "no")),
)


RERANKER_KINDS = {"judge": "GENERATOR", "cross-encoder": "FOLDER"}
"""The reranker kinds a spec may name, and what follows the colon."""


@dataclass(frozen=True)
class RerankerSpec:
    """A reranker as a user writes it: ``judge:GENERATOR`` or ``cross-encoder:FOLDER``.

    The one reader of that text (``--reranker`` of ``run`` and ``retrieve``, a run's
    ``reranker =``, the run engine): :meth:`parse` refuses an unknown kind or an empty target
    with one message naming both kinds, and every caller shows that message."""

    kind: str
    target: str

    @classmethod
    def parse(cls, text: str) -> "RerankerSpec":
        if not isinstance(text, str):
            raise ValueError(f"reranker: expected 'judge:GENERATOR' or 'cross-encoder:FOLDER', "
                             f"got {text!r}")
        kind, colon, target = text.strip().partition(":")
        kind, target = kind.strip(), target.strip()
        wanted = " or ".join(f"'{k}:{v}'" for k, v in RERANKER_KINDS.items())
        if not colon or not target:
            raise ValueError(f"reranker {text!r}: expected {wanted}")
        if kind not in RERANKER_KINDS:
            raise ValueError(f"reranker {text!r}: unknown kind {kind!r}; expected {wanted}")
        return cls(kind, target)

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}"

    @property
    def label(self) -> str:
        """The reranker's part of a system label: a cross-encoder by its folder's name (the
        same whichever path reached it), a judge by the generator as given."""
        if self.kind == "cross-encoder":
            return f"cross-encoder:{Path(self.target).name}"
        return str(self)

    def open(self, **generator_opts) -> "CrossEncoderReranker | JudgeReranker":
        """The reranker itself; a judge's generator is loaded with ``generator_opts``."""
        if self.kind == "cross-encoder":
            return CrossEncoderReranker(self.target)
        from .catalog import load_generator

        return JudgeReranker(load_generator(self.target, **generator_opts))


def _check_query_passages(query: str, passages: Sequence[str]) -> list[str]:
    if not isinstance(query, str):
        raise TypeError(f"query is {type(query).__name__}, not str")
    if isinstance(passages, (str, bytes)):
        raise TypeError("passages must be a list of texts, not a single str; wrap it in a list")
    passages = list(passages)
    for i, p in enumerate(passages):
        if not isinstance(p, str):
            raise TypeError(f"passage {i} is {type(p).__name__}, not str")
    return passages


def rank_by_scores(scores: Sequence[float], top_k: int | None = None) -> list[tuple[int, float]]:
    """(index, score) pairs, best first; equal scores keep passage order."""
    if top_k is not None and (not isinstance(top_k, int) or top_k < 0):
        raise ValueError(f"top_k must be a non-negative int or None, not {top_k!r}")
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    if top_k is not None:
        order = order[:top_k]
    return [(i, float(scores[i])) for i in order]


class _RerankerBase:
    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        raise NotImplementedError

    def rerank(self, query: str, passages: Sequence[str],
               top_k: int | None = None) -> list[tuple[int, float]]:
        """The passages' indices and scores, best first (the top ``top_k`` when given)."""
        return rank_by_scores(self.score(query, passages), top_k)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class CrossEncoderReranker(_RerankerBase):
    """A sentence-transformers CrossEncoder from a local folder, loaded offline."""

    backend = "sentence-transformers"

    def __init__(self, folder: str | os.PathLike, batch_size: int = 32, device: str = "cpu"):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
        from .embedders.sentence_transformer import check_model_folder, import_sentence_transformers

        self.folder = Path(folder).expanduser().resolve()
        check_model_folder(self.folder, kind="cross-encoder model")
        st = import_sentence_transformers()
        try:
            self._model = st.CrossEncoder(str(self.folder), device=device,
                                          local_files_only=True)
        except Exception as exc:
            raise ModelError(f"{self.folder}: cannot load as a cross-encoder "
                             f"({type(exc).__name__}: {exc})") from exc
        num_labels = getattr(self._model, "num_labels", None)
        if num_labels is None:
            num_labels = getattr(getattr(self._model, "config", None), "num_labels", 1)
        if num_labels != 1:
            raise ModelError(f"{self.folder}: a cross-encoder with {num_labels} labels, not a "
                             f"relevance scorer (expected num_labels=1)")
        self.name = f"cross-encoder:{self.folder.name}"
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._identity: ModelIdentity | None = None

    @property
    def identity(self) -> ModelIdentity:
        if self._identity is None:
            from .embedders.sentence_transformer import folder_identity

            self._identity = folder_identity(
                self.folder, self.name, None,
                int(getattr(self._model, "max_seq_length", None) or 0), self.backend)
        return self._identity

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        passages = _check_query_passages(query, passages)
        if not passages:
            return []
        with self._lock:
            out = self._model.predict([(query, p) for p in passages], batch_size=self.batch_size,
                                      show_progress_bar=False, convert_to_numpy=True)
        return [float(x) for x in out]


class JudgeReranker(_RerankerBase):
    """P("yes") from a local LLM asked whether the passage answers the query.

    The label is asked for in its common spellings ("yes", "Yes"; "no", "No") and their
    probabilities are summed before normalising, so a chat model's capital does not hide it.
    The prompt is the versioned ``relevance_yes_no`` template (``template_id``).
    """

    def __init__(self, generator: Generator, template: JudgeTemplate = RELEVANCE_YES_NO):
        if not getattr(generator, "supports_label_probs", False):
            raise ModelError(f"{getattr(generator, 'name', generator)!r} cannot read next-token "
                             f"probabilities (supports_label_probs is false): a judge reranker "
                             f"needs them")
        if template.kind != "yes_no":
            raise ValueError(f"JudgeReranker needs a yes_no template, not {template.id}")
        self.generator = generator
        self.template = template
        self.template_id = template.id
        self.name = f"judge:{generator.name}"
        self._forms = {}
        for written, verdict in template.labels:
            for form in dict.fromkeys((written, written.lower(), written.capitalize())):
                self._forms[form] = verdict

    @property
    def identity(self) -> ModelIdentity:
        return self.generator.identity

    def prompt(self, query: str, passage: str):
        fields = {"query": query, "passage": passage}
        if self.generator.chat:
            return self.template.chat_messages(fields)
        return self.template.completion_text(fields)

    def score_one(self, query: str, passage: str) -> float:
        raw = self.generator.label_probs(self.prompt(query, passage), list(self._forms))
        mass = {"yes": 0.0, "no": 0.0}
        for form, p in raw.items():
            if form in self._forms:
                mass[self._forms[form]] += float(p)
        total = mass["yes"] + mass["no"]
        if not math.isfinite(total) or total <= 0:
            raise ModelError(f"{self.name}: label_probs gave no probability to yes or no "
                             f"({self.template_id})")
        return mass["yes"] / total

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        passages = _check_query_passages(query, passages)
        return [self.score_one(query, p) for p in passages]

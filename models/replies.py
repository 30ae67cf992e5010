"""A model's reply at the adapter boundary: text the engine can store, or a ``ReplyError``.

Every adapter passes what the backend gave as the reply's text through :func:`checked_text`
(llama.cpp, an HTTP endpoint). ``None``, a number, a missing field or text holding a lone
surrogate (a server's JSON may carry ``"\\ud800"``, which no UTF-8 file or SQLite column can
hold) become a :class:`~models.base.ReplyError` naming the model: the engine records it as the
item's error, counts it, goes on, and a resumed run asks again. An empty string is a reply (a
model may stop at once; it is scored as the wrong answer it is): refusing it would make a
greedy, seeded item fail again on every resume.
"""

from __future__ import annotations

import re

from models.base import ReplyError

_SURROGATE = re.compile("[\ud800-\udfff]")


def checked_text(model: str, text: object, where: str = "") -> str:
    """``text`` when it is a storable string; otherwise a ReplyError naming ``model`` (and
    ``where``: the URL or field it came from)."""
    origin = f"{model}{f' ({where})' if where else ''}"
    if text is None:
        raise ReplyError(f"{origin}: the reply has no text (null)")
    if not isinstance(text, str):
        raise ReplyError(f"{origin}: the reply's text is a {type(text).__name__}, not a string: "
                         f"{str(text)[:80]!r}")
    bad = _SURROGATE.search(text)
    if bad:
        raise ReplyError(f"{origin}: the reply is not valid Unicode (a lone surrogate "
                         f"\\u{ord(bad.group()):04x} at character {bad.start()})")
    return text

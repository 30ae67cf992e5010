"""The source's comments and docstrings say what the code does, not which issue asked for it:
history belongs in git. A comment or docstring of ``engine/``, ``models/``, ``mirage_tui/``,
``scripts/`` or ``benchmarks/`` that cites a number of this project's issues ("issue 23",
"issues 24, 34", "(#31)", "stop 38's", "finding 3") fails; a citation of another project's
tracker (``llama-cpp-python issue #1581``) is a reference, and stays.

:data:`ALLOWED` names the files that may still hold one, each with why; a file is only ever
taken out of it."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("engine", "models", "mirage_tui", "scripts", "benchmarks")
ISSUE = re.compile(r"(?i)(?<![\w.-])(?:issues?|stop|finding|goal)\s*#?\d+|\(#\d+\)"
                   r"|(?<![\w`#&/])#\d{1,4}(?![\w-])")
"""``issue 23``, ``issues\\n24, 34``, ``issues 18/27``, ``stop 38's``, ``(#31)``, ``see #31``
(an id written ``#12`` in backquotes, an HTML entity and a six-digit colour are not
citations)."""
UPSTREAM = re.compile(r"(?i)[\w.]+(?:-[\w.]+)+\s+issue\s*#\d+|[\w.-]+/[\w.-]+#\d+")
"""Another project's tracker: ``llama-cpp-python issue #1581``, ``owner/repo#12``."""
ALLOWED: dict[str, str] = {}
"""Files that may still cite an issue number, each with why; take a file out once it is clean
(:func:`test_the_allowed_files_still_need_it` says when)."""


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """Every comment and every docstring (a string standing as a statement: a module's,
    a class's, a function's, an attribute's) of ``source``, with its first line."""
    found = [(tok.start[0], tok.string)
             for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        for statement in body if isinstance(body, list) else []:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
                    and isinstance(statement.value.value, str):
                found.append((statement.lineno, statement.value.value))
    return found


def issue_citations(text: str) -> list[str]:
    """The citations of this project's issues in ``text`` (another tracker's left out)."""
    text = UPSTREAM.sub("", text)
    return [m.group(0) for m in ISSUE.finditer(text)]


def source_files() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")
                  if "__pycache__" not in p.parts)


def test_the_rule_finds_issue_numbers_and_spares_the_rest():
    for text in ("the default judge (issue 34)", "(issues\n24, 34)", "stop 38's prompt",
                 "as in (#31)", "Issue #7 said so", "finding 3 of the review",
                 "issues 18/27", "fixed by #27", "see #4 and #5"):
        assert issue_citations(text), text
    for text in ("llama-cpp-python issue #1581", "owner/repo#12 upstream",
                 "a calibration by its id (``12`` or ``#12``)", "the first 3 issues",
                 "tissue 12", "item 6 of the list", "reissue 3 times", "&#39; quoted",
                 "colour #333333 or #00ff00", "run ``#3``"):
        assert not issue_citations(text), text


def test_no_source_comment_or_docstring_cites_an_issue_number():
    cited = []
    for path in source_files():
        name = str(path.relative_to(ROOT))
        if name in ALLOWED:
            continue
        for line, text in comments_and_docstrings(path.read_text(encoding="utf-8")):
            cited += [f"{name}:{line}: {c!r}" for c in issue_citations(text)]
    assert cited == [], ("say what the code does; the history is in git:\n"
                         + "\n".join(cited))


def test_the_allowed_files_still_need_it():
    stale = [name for name in ALLOWED if not any(
        issue_citations(text) for _, text in
        comments_and_docstrings((ROOT / name).read_text(encoding="utf-8")))]
    assert stale == [], f"take these out of ALLOWED: {stale}"

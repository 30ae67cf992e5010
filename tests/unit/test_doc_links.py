"""Every relative link in README.md and docs/*.md leads somewhere: to a file of the repository
and, when it names an anchor, to a heading of that page (GitHub's heading ids, read with
markdown-it-py's anchors plugin, which makes them the same way)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin
from testkit.paths import ROOT

_MD = MarkdownIt("commonmark").enable("table").use(anchors_plugin, min_level=1, max_level=6)


def _tokens(page: Path):
    return _MD.parse(page.read_text(encoding="utf-8"))


def anchors(page: Path) -> set[str]:
    """The ids of a page's headings, as GitHub gives them (duplicates get -1, -2, ...)."""
    return {t.attrs["id"] for t in _tokens(page) if t.type == "heading_open" and "id" in t.attrs}


def links(page: Path) -> list[str]:
    """Every link and image target of a page, code spans and blocks left out."""
    found = []
    for token in _tokens(page):
        for child in token.children or ():
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
            elif child.type == "image":
                found.append(str(child.attrs["src"]))
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """``page: target: why`` for each relative link that leads nowhere (or out of ``root``)."""
    broken = []
    for target in links(page):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue                                   # http(s), mailto: not ours to check
        path = unquote(parts.path)
        dest = (page.parent / path).resolve() if path else page.resolve()
        where = f"{page.relative_to(root)}: {target}"
        if not dest.is_relative_to(root.resolve()):
            broken.append(f"{where}: leaves the repository")
        elif not dest.exists():
            broken.append(f"{where}: no such file")
        elif parts.fragment:
            if dest.suffix != ".md":
                broken.append(f"{where}: an anchor into a file that is not markdown")
            elif unquote(parts.fragment) not in anchors(dest):
                broken.append(f"{where}: no heading with that anchor")
    return broken


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_leads_to_a_file_and_heading():
    problems = [p for page in _pages() for p in broken_links(page)]
    assert not problems, "\n".join(problems)


def test_the_readme_links_every_docs_page():
    readme = {(ROOT / unquote(urlsplit(t).path)).resolve()
              for t in links(ROOT / "README.md") if not urlsplit(t).scheme}
    unlinked = [p.name for p in _pages()[1:] if p.resolve() not in readme]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A `code` heading\n")
    page = tmp_path / "README.md"
    page.write_text(
        "# Title\n\n"
        "[ok](docs/other.md) [ok](docs/other.md#a-code-heading) [ok](#title) "
        "[ok](https://example.org/x) `[not a link](nowhere.md)`\n\n"
        "[gone](docs/missing.md) [bad anchor](docs/other.md#nope) [out](../elsewhere.md)\n\n"
        "![picture](docs/missing.png) [self](#no-such)\n\n"
        "```\n[in a code block](nowhere.md)\n```\n")
    assert broken_links(page, tmp_path) == [
        "README.md: docs/missing.md: no such file",
        "README.md: docs/other.md#nope: no heading with that anchor",
        "README.md: ../elsewhere.md: leaves the repository",
        "README.md: docs/missing.png: no such file",
        "README.md: #no-such: no heading with that anchor",
    ]

"""The pages hold together: every relative link of README.md and docs/*.md reaches a file
(and, with ``#anchor``, a heading of it), and the README stays a page a newcomer reads.

Links are markdown's ``[text](target)``; code (fenced blocks, inline backticks) is not
searched, and links to a web address are not followed. An anchor is GitHub's: the
heading in lower case, punctuation other than ``-`` and ``_`` dropped, spaces as ``-``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 250

FENCE = re.compile(r"^[ \t]*(```+).*?^[ \t]*\1[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def prose(text: str) -> str:
    """`text` without fenced blocks and inline code, where a ``[x](y)`` is no link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: ``Save and load`` -> ``save-and-load``."""
    text = re.sub(r"`([^`]*)`", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of `page`; a repeated heading gets ``-1``, ``-2``, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = anchor(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not followed
            continue
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no file {shown(linked)}")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {shown(linked)}")
    return broken


def test_anchors_follow_githubs_rule(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n## Save and load\n\n```text\n# not a heading\n```\n\n"
        "## `zoo.train`, from Python\n\n## Save and load\n"
    )
    assert anchors(page) == {"a-page", "save-and-load", "zootrain-from-python", "save-and-load-1"}


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "there.md").write_text("# There\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](there.md) [ok](#page) [ok](there.md#there) [web](https://example.org/x.md)\n"
        "`[code](nowhere.md)`\n\n```text\n[code](nowhere.md)\n```\n\n"
        "[bad](missing.md) [bad](there.md#nowhere) [bad](#nowhere)\n"
    )
    assert [b.split(":")[0] for b in broken_links(page)] == ["missing.md", "there.md#nowhere", "#nowhere"]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page):
    broken = broken_links(page)
    assert not broken, f"{shown(page)}: broken links:\n" + "\n".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    linked = {
        (ROOT / target.partition("#")[0]).resolve() for target in LINK.findall(prose((ROOT / "README.md").read_text()))
    }
    unlinked = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert not unlinked, f"README.md links no docs page {unlinked}: add it to its Documentation list"


def test_the_readme_fits_on_a_screen_or_two():
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines, over {README_MAX_LINES}: move the detail to a page of docs/ and link it"
    )

"""Every Python block in README.md and docs/*.md runs as written.

A reader follows a page from the top, so a page's ```python blocks run in order in
one namespace, in an empty working directory: what a block uses, an earlier block
of the same page defines (a few sentences written to a file, a model trained for a
few steps). Blocks indented inside list items are dedented. Each block is compiled
with the markdown file as its filename and its own line numbers, so a traceback
points at the doc line that failed.

Every fence names its language; only ```python runs. Signatures, listings and
printed output are ```text, shell commands ```bash.

The "Writing a plugin" section of docs/plugins.md is left out: its blocks are the files of a
plugin package (its module, its entry module, its pyproject.toml, each headed by its
path), not a script a reader runs top to bottom; `tests/test_plugin_guide.py` writes
them out as a package, installs it and holds it to the conformance kit.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Sections whose blocks another test runs, by page and heading.
EXCLUDED_SECTIONS = {
    "plugins.md": {
        "Writing a plugin",
        "Worked examples: an encoder and a strategy",
        "Worked examples: an embedder, a cell, a decoder and an architecture",
    }
}

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>```+)(?P<info>[^`]*)$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, the line of its first code line (1-based), its dedented code."""

    language: str
    line: int
    code: str
    section: str


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block of a markdown text, with the top-level section it is in."""
    blocks: list[Block] = []
    lines = text.splitlines()
    sections: list[tuple[int, str]] = []  # open headings: (level, title)
    index = 0
    while index < len(lines):
        line = lines[index]
        heading = HEADING.match(line)
        if heading:
            level = len(heading["hashes"])
            sections = [(lvl, title) for lvl, title in sections if lvl < level]
            sections.append((level, heading["title"]))
        fence = FENCE.match(line)
        if fence is None:
            index += 1
            continue
        indent, ticks = fence["indent"], fence["ticks"]
        start = index + 1
        end = start
        while end < len(lines) and not re.match(rf"^[ \t]*{ticks}\s*$", lines[end]):
            end += 1
        if end == len(lines):
            raise AssertionError(f"line {index + 1}: a fence that never closes")
        body = [ln[len(indent) :] if ln.startswith(indent) else ln for ln in lines[start:end]]
        language = fence["info"].strip().split(" ")[0] if fence["info"].strip() else ""
        blocks.append(Block(language, start + 1, textwrap.dedent("\n".join(body)) + "\n", _path(sections)))
        index = end + 1
    return blocks


def _path(sections: list[tuple[int, str]]) -> str:
    return " > ".join(title for _, title in sections)


def _excluded(page: Path, block: Block) -> bool:
    titles = set(block.section.split(" > "))
    return bool(titles & EXCLUDED_SECTIONS.get(page.name, set()))


def test_the_extractor_reads_indented_blocks_and_sections():
    text = (
        "# Page\n\n## One\n\n```python\nx = 1\n```\n\n"
        "1. A step:\n\n   ```python\n   if x:\n       y = 2\n   ```\n\n"
        "## Two\n\n```text\nout\n```\n"
    )
    blocks = fenced_blocks(text)
    assert [(b.language, b.line, b.code, b.section) for b in blocks] == [
        ("python", 6, "x = 1\n", "Page > One"),
        ("python", 12, "if x:\n    y = 2\n", "Page > One"),
        ("text", 19, "out\n", "Page > Two"),
    ]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_fence_names_its_language(page):
    unnamed = [b.line - 1 for b in fenced_blocks(page.read_text(encoding="utf-8")) if not b.language]
    assert not unnamed, f"{page.name}: fences without a language at lines {unnamed} (python, bash or text)"


TRAINING_PAGES = {
    "docs/seq2seq.md",
    "docs/tagging.md",
    "docs/language-models.md",
    "docs/fasttext-classifier.md",
    "docs/training.md",
}
"""Pages whose blocks train models for a minute or more: they run in the slow tier (``pytest -m slow``)."""


def _page_param(page: Path):
    name = str(page.relative_to(ROOT))
    return pytest.param(page, id=name, marks=[pytest.mark.slow] if name in TRAINING_PAGES else [])


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES])
def test_python_blocks_run(page, tmp_path, monkeypatch):
    """The page's Python blocks, top to bottom in one namespace, in an empty directory."""
    blocks = [
        b for b in fenced_blocks(page.read_text(encoding="utf-8")) if b.language == "python" and not _excluded(page, b)
    ]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZOO_HOME", str(tmp_path / "zoo-home"))  # the model store, never the user's
    namespace: dict = {"__name__": "__main__"}
    for block in blocks:
        # Leading newlines put every line at its own line number of the page.
        try:
            exec(compile("\n" * (block.line - 1) + block.code, str(page), "exec"), namespace)
        except Exception as error:
            error.add_note(f"in the Python block at {page.name}:{block.line} ({block.section})")
            raise

"""No dead helpers: what the core defines is used, and tables declare no field nothing reads."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import zoo.data.batching
import zoo.data.chars
import zoo.nn
from zoo.errors import RegistryError
from zoo.naming.tables import ArchitectureEntry, read_tables

ROOT = Path(__file__).resolve().parent.parent


def texts(*folders: str) -> dict[Path, str]:
    files = [p for d in folders for p in (ROOT / d).rglob("*") if p.suffix in {".py", ".md"}]
    return {p.resolve(): p.read_text() for p in files if p.resolve() != Path(__file__).resolve()}


def texts_of_readme() -> dict[Path, str]:
    return {(ROOT / "README.md").resolve(): (ROOT / "README.md").read_text()}


def unused_names(module, users: dict[Path, str]) -> list[str]:
    """The public top-level functions and classes of `module` that no code in `users` names.

    Its own module counts as a user when it calls the name (its definition and
    its `__all__` entry do not).
    """
    path = Path(module.__file__).resolve()
    own = path.read_text()
    tree = ast.parse(own)
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name[0] != "_"]
    unused = []
    for name in defined:
        word = re.compile(rf"\b{name}\b")
        inside = len(word.findall(own)) - 1 - (f'"{name}"' in own)
        outside = any(word.search(text) for p, text in users.items() if p != path)
        if inside <= 0 and not outside:
            unused.append(name)
    return unused


def test_every_zoo_nn_helper_serves_a_plugin_or_the_core():
    unused = unused_names(zoo.nn, texts("zoo", "plugins"))
    assert unused == [], f"zoo.nn defines {unused}, which no code in zoo/ or plugins/ uses: remove them"


@pytest.mark.parametrize("module", [zoo.data.batching, zoo.data.chars], ids=lambda m: m.__name__)
def test_every_public_data_helper_is_used_tested_or_documented(module):
    unused = unused_names(module, texts("zoo", "plugins", "tests", "docs", "bench") | texts_of_readme())
    assert unused == [], f"{module.__name__} defines {unused}, which nothing uses, tests or documents: remove them"


def test_an_architecture_table_declares_no_provides_field():
    assert "provides" not in ArchitectureEntry.__dataclass_fields__
    table = """
    [architectures.mine]
    factory = "mine:Model"
    provides = "embedder"
    """
    with pytest.raises(RegistryError, match=r"unknown keys \['provides'\]"):
        read_tables(table, plugin="mine")

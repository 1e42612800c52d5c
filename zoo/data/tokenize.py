"""Tokenisers: text -> list of tokens, by name, extensible by plugins.

A tokeniser is any callable ``str -> list[str]``. zoo ships these, by name:

- ``words`` (the default): lowercase, then the words of the line, where a word
  is a run of letters optionally followed by one apostrophe and more letters:
  ``[^\\W\\d_]+(?:'[^\\W\\d_]+)?`` (Unicode letters, so ``"Señor"`` is
  ``"señor"``). Digits and punctuation separate words and are dropped;
  ``"Don't stop!"`` gives ``["don't", "stop"]`` and ``"the game 's"`` gives
  ``["the", "game", "s"]``. Curly apostrophes (U+2019) count as ``'``.
- ``ascii-words``: lowercase, then ``[a-z]+(?:'[a-z]+)?``: the word definition
  used to count the shared English corpora (non-ASCII letters split words).
- ``whitespace``: ``str.split()``, case kept (pre-tokenised corpora).
- ``whitespace-lower``: lowercase, then ``str.split()``.
- ``punct``: lowercase, words, numbers and each punctuation mark as a token
  (`zoo.data.text.tokenize`; translation data: ``"¿Qué?"`` -> ``["¿", "qué", "?"]``).

Plugins add tokenisers through the ``zoo_register_tokenizers`` hook (see
`zoo.naming.hookspecs`); `get_tokenizer` finds them by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from zoo.data.text import tokenize as punct
from zoo.errors import PluginConflictError, UnknownNameError, close_matches

if TYPE_CHECKING:
    from zoo.naming.registry import Registry

__all__ = [
    "BUILTIN_TOKENIZERS",
    "DEFAULT_TOKENIZER",
    "Tokenizer",
    "ascii_words",
    "get_tokenizer",
    "plugin_tokenizers",
    "punct",
    "tokenizer_conflicts",
    "tokenizer_names",
    "whitespace",
    "whitespace_lower",
    "words",
]

Tokenizer = Callable[[str], list[str]]

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_ASCII_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lowercased Unicode words with at most one inner apostrophe (the default)."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def ascii_words(text: str) -> list[str]:
    """Lowercased ``[a-z]+('[a-z]+)?`` words; every other character separates."""
    return _ASCII_WORD.findall(text.lower())


def whitespace(text: str) -> list[str]:
    """Whitespace-separated tokens, case kept."""
    return text.split()


def whitespace_lower(text: str) -> list[str]:
    """Whitespace-separated tokens, lowercased."""
    return text.lower().split()


DEFAULT_TOKENIZER = "words"

BUILTIN_TOKENIZERS: Mapping[str, Tokenizer] = {
    "words": words,
    "ascii-words": ascii_words,
    "whitespace": whitespace,
    "whitespace-lower": whitespace_lower,
    "punct": punct,
}


def _registered(registry: Registry | None) -> tuple[dict[str, tuple[str, Tokenizer]], dict[str, str]]:
    """``(tokenisers, conflicts)``: what plugins register, ``name -> (plugin, tokenizer)``, and
    ``name -> why it is refused`` for every contested name (claimed twice, reserved, unusable)."""
    from zoo.naming.registry import default_registry

    registry = registry if registry is not None else default_registry()
    found: dict[str, tuple[str, Tokenizer]] = {}
    conflicts: dict[str, str] = {}
    for impl in registry.manager.hook.zoo_register_tokenizers.get_hookimpls():
        owner = impl.plugin_name

        def register(name: str, tokenizer: Tokenizer, owner: str = owner) -> None:
            if not isinstance(name, str) or not name:
                conflicts[repr(name)] = f"plugin {owner!r} registered a tokeniser with a bad name {name!r}"
            elif not callable(tokenizer):
                conflicts[name] = f"plugin {owner!r} registered tokeniser {name!r} that is not callable"
            elif name in BUILTIN_TOKENIZERS:
                conflicts[name] = f"plugin {owner!r} registers tokeniser {name!r}, a name zoo reserves (zoo's is used)"
            elif name in found or name in conflicts:
                first = found.pop(name)[0] if name in found else None
                others = f"{first!r} and {owner!r}" if first else f"several, {owner!r} among them"
                conflicts[name] = (
                    f"tokeniser {name!r} is registered by plugins {others}; disable one (ZOO_DISABLE_PLUGINS={owner})"
                )
            else:
                found[name] = (owner, tokenizer)

        impl.function(register=register)
    return found, conflicts


def plugin_tokenizers(registry: Registry | None = None) -> dict[str, tuple[str, Tokenizer]]:
    """Tokenisers registered by plugins: ``name -> (plugin, tokenizer)``.

    Each plugin's ``zoo_register_tokenizers`` hook is called on its own. A contested name (claimed
    by two plugins, or a built-in name claimed by one) is left out, and only that name fails
    (`get_tokenizer` raises `PluginConflictError` naming both owners; `tokenizer_conflicts` lists them):
    every other tokeniser keeps working.
    """
    return _registered(registry)[0]


def tokenizer_conflicts(registry: Registry | None = None) -> dict[str, str]:
    """``name -> what is wrong`` for each tokeniser name plugins contest (see `plugin_tokenizers`)."""
    return _registered(registry)[1]


def tokenizer_names(registry: Registry | None = None) -> list[str]:
    """Every tokeniser name: built-in ones and those plugins register."""
    return sorted([*BUILTIN_TOKENIZERS, *plugin_tokenizers(registry)])


def get_tokenizer(tokenizer: str | Tokenizer | None = None, *, registry: Registry | None = None) -> Tokenizer:
    """Resolve `tokenizer`: None (the default ``words``), a name, or a callable (returned as is).

    Built-in names resolve without loading any plugin; other names are looked
    up among the tokenisers plugins register. An unknown name raises
    `UnknownNameError` listing the known ones.
    """
    if tokenizer is None:
        return BUILTIN_TOKENIZERS[DEFAULT_TOKENIZER]
    if callable(tokenizer):
        return tokenizer
    if not isinstance(tokenizer, str):
        raise UnknownNameError(f"a tokeniser is a name or a callable str -> list[str], got {type(tokenizer).__name__}")
    if tokenizer in BUILTIN_TOKENIZERS:
        return BUILTIN_TOKENIZERS[tokenizer]
    registered, conflicts = _registered(registry)
    if tokenizer in registered:
        return registered[tokenizer][1]
    if tokenizer in conflicts:
        raise PluginConflictError(conflicts[tokenizer])
    known = sorted([*BUILTIN_TOKENIZERS, *registered])
    raise UnknownNameError(f"unknown tokeniser {tokenizer!r}; known: {known}.{close_matches(tokenizer, known)}")

"""The hooks a zoo plugin may implement.

A plugin is any object registered under the entry-point group ``zoo.plugins``;
it implements hooks by name, marked with `hookimpl`::

    from zoo.naming.hookspecs import hookimpl

    @hookimpl
    def zoo_register_tables(register):
        register(TABLES_TOML)

zoo calls the registration hooks one plugin at a time, so it always knows which
plugin registered which name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pluggy

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "zoo"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def zoo_register_tables(register: Callable[[str | Path | Mapping[str, Any]], None]) -> None:
    """Register this plugin's registry tables.

    Call ``register(tables)`` with TOML text, a `pathlib.Path` to a TOML file, or
    an already parsed mapping, holding ``[components.*]``, ``[architectures.*]``
    and ``[presets.*]`` tables in the format of zoo's ``registry.toml`` (and
    ``[demos.*]``, and the word-vector ``[formats.*]``, ``[subwords.*]`` and
    ``[exports.*]`` of `zoo.vectors.extensions`). Every
    name registered belongs to the calling plugin; a name another plugin already
    holds becomes contested (building it raises `PluginConflictError` naming both).
    Factories are lazy ``"module:attr"`` strings: keep this hook light and import
    nothing heavy (no JAX) at module level of the entry point.
    """


@hookspec(firstresult=True)
def zoo_resolve_weights(name: str, tag: str) -> str | Path | None:
    """Return a local path to the weights file for ``name.tag``, or None.

    `name` is the model name without its tag. The first plugin that returns a
    path wins; the file must be a zoo safetensors file (see `zoo.save`).
    """


@hookspec
def zoo_register_tokenizers(register: Callable[[str, Callable[[str], list[str]]], None]) -> None:
    """Register this plugin's tokenisers.

    Call ``register(name, tokenizer)`` once per tokeniser, where `tokenizer` is
    a callable taking one line of text and returning its tokens
    (``str -> list[str]``). The name is then accepted wherever zoo takes a
    tokeniser (``zoo.data.corpus.iter_sentences(path, tokenizer=name)``,
    ``--tokenizer`` in training recipes). A name that zoo ships (``words``,
    ``ascii-words``, ``whitespace``, ``whitespace-lower``) or that another
    plugin registers raises `PluginConflictError` naming both owners when
    tokenisers are looked up. Called lazily, the first time a name that is not
    built in is looked up.
    """


@hookspec
def zoo_migrate_weights(metadata: dict[str, str], tensors: dict[str, Any]) -> None:
    """Upgrade a weights file written by an older plugin version, in place.

    Called on load before any check, with the file's string metadata
    (``zoo.name``, ``zoo.spec``, ``zoo.versions``, ...) and its tensors as NumPy
    arrays keyed by dotted path. Rename or reshape tensors and rewrite
    ``zoo.spec`` so that the file matches what the current version builds; leave
    files you do not own untouched.
    """

"""A path or a name to the file it means: what `zoo.load`, `KeyedVectors.load` and every command
that reads a model take.

A path that exists always wins: ``zoo.load("glove.mine")`` reads ``./glove.mine``
if there is such a file. Otherwise a text without directories that is a tagged
model name (``NAME.TAG``, or ``seq2seq+bahdanau.rev``) is asked of the weights
resolvers, exactly as ``zoo.build("NAME.TAG")`` asks them: the model store
first (`zoo.building.store`), then every plugin's ``zoo_resolve_weights``. Any
other text is returned as the path it is, for the caller to report missing.
``hf://OWNER/REPO/PATH`` is a file in the Hugging Face hub's cache (`zoo.building.hub`).
"""

from __future__ import annotations

import os
from pathlib import Path

from zoo.building import hub
from zoo.building.store import default_store
from zoo.errors import NameSyntaxError, UnknownNameError
from zoo.naming.names import parse_name
from zoo.naming.registry import Registry, default_registry

__all__ = ["as_name", "locate"]


def as_name(path: str | os.PathLike) -> tuple[str, str] | None:
    """``(name, tag)`` when `path` reads as a tagged model name (no directory, a ``.tag``), else None."""
    text = os.fspath(path)
    if not isinstance(text, str) or any(sep and sep in text for sep in (os.sep, os.altsep, "/")):
        return None
    try:
        parsed = parse_name(text)
    except NameSyntaxError:
        return None
    if parsed.tag is None or text != text.strip():
        return None
    return str(parsed)[: -len(parsed.tag) - 1], parsed.tag


def locate(path: str | os.PathLike, *, registry: Registry | None = None) -> Path:
    """The file `path` names: itself when something exists there, else the file the weights
    resolvers give for it as ``NAME.TAG``, else `path` unchanged when it is no such name.

    Raises `UnknownNameError` for a name no resolver knows, naming the close stored names.
    """
    if os.path.lexists(path):
        return Path(path)
    if hub.is_address(os.fspath(path)):
        return hub.hub_file(os.fspath(path))
    name = as_name(path)
    if name is None:
        return Path(path)
    registry = registry or default_registry()
    try:
        return registry.resolve_weights(*name)
    except UnknownNameError:
        text = ".".join(name)
        raise UnknownNameError(
            f"there is no file {os.fspath(path)!r}, and no plugin provides weights named {text!r}: "
            + default_store().describe_missing(text)
        ) from None

"""Model files in formats plugins read: what `zoo.load` and ``zoo import`` take besides zoo's own.

A plugin's ``[formats.NAME]`` table (`zoo.vectors.extensions`) may name, beside the codec
that reads its files' word vectors, a ``model_codec``: a `ModelFormat` that turns a file of
that format into the zoo model it holds (a classifier trained by another tool, say). Then
`zoo.load` and every command that takes a model file accept such a file, and ``zoo import``
stores it as a zoo model file; a file of the format that holds only vectors is still read as
vectors (`ModelFormat.holds_model` tells them apart from the file's header).

The file chooses no code: its first bytes are matched against the magic bytes the installed
plugins declare (`zoo.vectors.extensions.sniff`), and the codec of the format they name reads
the rest as data, checking every size against the file before allocating.
"""

from __future__ import annotations

import abc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zoo.errors import WeightsError

if TYPE_CHECKING:
    from zoo.naming.registry import Registry
    from zoo.naming.tables import FormatEntry

__all__ = ["ModelFormat", "model_format", "read_foreign_model"]


class ModelFormat(abc.ABC):
    """How a plugin's file format becomes a zoo model (a ``[formats.NAME]`` table's ``model_codec``)."""

    @abc.abstractmethod
    def holds_model(self, path: Path) -> bool:
        """Whether the file at `path` (one of this format) holds a model `read_model` reads, rather
        than only word vectors; read from its header, cheaply."""

    @abc.abstractmethod
    def read_model(self, path: Path) -> Any:
        """The zoo model the file holds (built from the installed registry, as `zoo.build` builds
        models); `zoo.errors.DataError` naming the file and what is wrong with it."""


def model_format(
    path: str | os.PathLike, *, format: str = "auto", registry: Registry | None = None
) -> tuple[FormatEntry, ModelFormat] | None:
    """The plugin format of the file at `path` and its model codec, when the file holds a model;
    None for any other file (zoo's own, word vectors, unknown). `format` names the format
    (``"auto"``: told by the file's first bytes)."""
    from zoo.naming.registry import default_registry
    from zoo.vectors.extensions import plugin_codec, sniff

    registry = registry or default_registry()
    path = Path(path)
    if not path.is_file():
        return None
    if format == "auto":
        entry = sniff(path, registry)
    elif format in registry.formats:
        entry = registry.extension("formats", format)
    else:
        return None
    if entry is None or not entry.model_codec:
        return None
    codec = plugin_codec(entry, ModelFormat, target=entry.model_codec)
    return (entry, codec) if codec.holds_model(path) else None


def read_foreign_model(path: str | os.PathLike, *, registry: Registry | None = None) -> Any | None:
    """The model in the file at `path` when it is in a plugin's format that holds one (read by the
    format's model codec); None for a file in no plugin's format (a zoo file, say). A file of a
    plugin's format that holds only word vectors is a `WeightsError` saying how to read them."""
    from zoo.vectors.extensions import sniff

    path = Path(path)
    found = model_format(path, registry=registry)
    if found is not None:
        return found[1].read_model(path)
    entry = sniff(path, registry) if path.is_file() else None
    if entry is not None:
        raise WeightsError(
            f"{path} is a {entry.title} file of word vectors, not a model zoo builds: read them with "
            f"zoo.vectors.KeyedVectors.load, or store them with `zoo import {path.name} --as NAME.TAG`"
        )
    return None

"""Word-vector formats, subword models and names of `zoo.vectors` that plugins provide.

The core reads and writes the exchange formats every tool knows (`zoo.vectors.formats`: word2vec
text and binary, GloVe text) and zoo's own files (`zoo.vectors.zoo_file`). Every other file
format, and every model that gives vectors to words outside a vocabulary (subwords), comes from a
plugin: its tables declare it, and its code is imported only when a file needs it::

    [formats.NAME]    codec = "module:attr"  (a `VectorFormat`), summary,
                      magic = ["hex", ...]   (its files' first bytes, after gzip), suffixes, writable
    [subwords.NAME]   codec = "module:attr"  (a `SubwordModel`), summary
    [exports.NAME]    target = "module:attr", module = "zoo.vectors", summary

- `KeyedVectors.load` and ``zoo import`` tell a plugin's format by its magic bytes, read from a
  bounded prefix of the file (`sniff`), and read it with the codec (`read_format`);
  ``zoo import --format NAME`` and ``zoo vectors export --format NAME`` name one outright.
- A zoo vectors file keeps the subword model behind a `KeyedVectors`' ``oov`` when a plugin's
  `SubwordModel` owns it, under the metadata entry ``zoo.NAME`` and the tensors ``__zoo__.NAME.*``;
  reading finds the codec by that name among the installed plugins (the file names data, never code).
- ``from zoo.vectors import X`` serves a plugin's export ``X`` (`exported`), so a family's API is
  imported from where users expect it while its code stays in the family's package.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zoo.errors import DataError, PluginError

if TYPE_CHECKING:
    from zoo.naming.registry import Registry
    from zoo.naming.tables import FormatEntry, SubwordEntry

KeyedVectors = Any
"""A `zoo.vectors.KeyedVectors` (named here without importing it: `zoo.vectors.keyed` reads files
through this module)."""

__all__ = [
    "SNIFF_BYTES",
    "SubwordModel",
    "VectorFormat",
    "exported",
    "exported_names",
    "format_entries",
    "match_magic",
    "plugin_codec",
    "read_format",
    "sniff",
    "subword_codec",
    "subword_owner",
    "writable_format",
    "write_format",
]

SNIFF_BYTES = 16
"""How many first bytes (after gzip) tell a plugin's format: a magic is at most this long."""


class VectorFormat(abc.ABC):
    """A word-vector file format, as a plugin's ``[formats.NAME]`` codec provides it.

    `read` is required; a format declared ``writable = true`` implements `write`, and may
    implement `export` where converting a file can keep more than its vectors (a model's output
    layer, say). Each raises `zoo.errors.DataError` naming the file and what is wrong with it.
    """

    @abc.abstractmethod
    def read(
        self, path: Path, *, limit: int | None = None, encoding: str = "utf-8", unicode_errors: str = "strict"
    ) -> KeyedVectors:
        """The vectors of the file at `path` (the first `limit` words of the vocabulary searched)."""

    def write(self, keyed: KeyedVectors, path: Path) -> Path:
        """Write `keyed` to `path` in this format; return the path."""
        raise DataError(f"{type(self).__name__} reads its format but does not write it")

    def export(self, source: Path, out: Path, *, limit: int | None = None) -> str | None:
        """Convert the file `source` (any format zoo reads) to this format at `out` and return a line
        saying what was written; or None (the default) to have `write` write the vectors zoo reads
        from `source` (``zoo vectors export``, `zoo.vectors.convert.export_vectors`)."""
        return None


class SubwordModel(abc.ABC):
    """A subword model (``KeyedVectors.oov``: vectors for words outside a vocabulary) that zoo
    vectors files keep, as a plugin's ``[subwords.NAME]`` codec provides it."""

    @abc.abstractmethod
    def owns(self, oov: Any) -> bool:
        """Whether `oov` (a `KeyedVectors`' ``oov``) is a model this codec keeps."""

    def keyed_class(self) -> type[KeyedVectors] | None:
        """The `KeyedVectors` subclass of vectors whose `oov` this codec owns (one that adds the
        model's own methods, a file writer, say); None (the default) for `KeyedVectors` itself."""
        return None

    @abc.abstractmethod
    def pack(self, oov: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """`oov` as JSON-able settings and named arrays (stored as ``__zoo__.NAME.<key>``)."""

    def tables(self, oov: Any) -> dict[str, np.ndarray]:
        """The float tables ``[rows, dim]`` of `oov` that words' vectors are built from, by name (checked
        for NaN and infinity on load); by default the 2-D float arrays of `pack`. A codec whose `pack`
        does more work than handing over its arrays (encoding words, say) returns them directly."""
        _, tensors = self.pack(oov)
        arrays = {name: np.asarray(values) for name, values in tensors.items()}
        return {name: a for name, a in arrays.items() if a.dtype.kind == "f" and a.ndim == 2}

    @abc.abstractmethod
    def unpack(self, settings: Mapping[str, Any], tensors: Mapping[str, np.ndarray], dim: int) -> Any:
        """The model `pack` packed, checked against the vectors' dimension `dim`; `DataError` when
        the settings or arrays are not what `pack` writes (the file may have been crafted)."""


def _registry(registry: Registry | None) -> Registry:
    from zoo.naming.registry import default_registry

    return registry or default_registry()


def plugin_codec(entry: FormatEntry | SubwordEntry, base: type, *, target: str | None = None) -> Any:
    """The codec `entry` names (its ``codec``, or `target`: another ``"module:attr"`` of its table),
    instantiated when it is a class, and checked to be a `base`; `PluginError` naming the plugin if not."""
    from zoo.naming.spec import import_factory

    target = target or entry.codec
    codec = import_factory(target, plugin=entry.plugin)
    if isinstance(codec, type):
        codec = codec()
    if not isinstance(codec, base):
        raise PluginError(
            f"plugin {entry.plugin!r}: codec {target!r} of {entry.name!r} is a {type(codec).__name__}, "
            f"not a {base.__module__}.{base.__name__}"
        )
    return codec


# -- formats -----------------------------------------------------------------------------------


def format_entries(registry: Registry | None = None) -> dict[str, FormatEntry]:
    """The formats the installed plugins provide, by name."""
    return dict(_registry(registry).formats)


def _head(path: Path) -> bytes:
    from zoo.vectors.reading import CORRUPT_GZIP, corrupt_gzip, open_binary

    with open_binary(path, "vectors file") as handle:
        try:
            return handle.read(SNIFF_BYTES)
        except CORRUPT_GZIP as error:
            raise corrupt_gzip(path, error) from None


def match_magic(head: bytes, registry: Registry | None = None) -> FormatEntry | None:
    """The plugin format whose magic `head` (a file's first bytes, gzip undone) starts with; None if none."""
    reg = _registry(registry)
    for name in sorted(reg.formats):
        entry = reg.formats[name]
        if any(head.startswith(magic) for magic in entry.magic):
            return reg.extension("formats", name)  # a contested format raises here
    return None


def sniff(path: str | os.PathLike, registry: Registry | None = None) -> FormatEntry | None:
    """The plugin format of the file at `path`, told by its first `SNIFF_BYTES` bytes; None when no
    installed plugin's magic matches (a word2vec, GloVe or zoo file, or an unknown one)."""
    return match_magic(_head(Path(path)), registry)


def _format(name: str, registry: Registry | None) -> VectorFormat:
    return plugin_codec(_registry(registry).extension("formats", name), VectorFormat)


def read_format(
    path: str | os.PathLike,
    name: str,
    *,
    limit: int | None = None,
    encoding: str = "utf-8",
    unicode_errors: str = "strict",
    registry: Registry | None = None,
) -> KeyedVectors:
    """The vectors of `path` read by the plugin format `name`."""
    return _format(name, registry).read(Path(path), limit=limit, encoding=encoding, unicode_errors=unicode_errors)


def writable_format(name: str, registry: Registry | None = None) -> VectorFormat:
    """The codec of the plugin format `name`, which must be declared writable."""
    entry = _registry(registry).extension("formats", name)
    if not entry.writable:
        raise DataError(f"the {name!r} format ({entry.summary or entry.plugin}) is read, not written, by its plugin")
    return plugin_codec(entry, VectorFormat)


def write_format(keyed: KeyedVectors, path: str | os.PathLike, name: str, *, registry: Registry | None = None) -> Path:
    """Write `keyed` to `path` in the plugin format `name` (one declared writable)."""
    return writable_format(name, registry).write(keyed, Path(path))


# -- subword models ------------------------------------------------------------------------------


def subword_owner(oov: Any, registry: Registry | None = None) -> tuple[str, SubwordModel] | None:
    """The installed subword codec that keeps `oov`, with its name; None for none (or no `oov`)."""
    if oov is None:
        return None
    reg = _registry(registry)
    for name in sorted(reg.subwords):
        codec = subword_codec(name, reg)
        if codec.owns(oov):
            return name, codec
    return None


def subword_codec(name: str, registry: Registry | None = None) -> SubwordModel:
    """The subword codec `name` (as a vectors file records it); `DataError` when no installed plugin has it."""
    reg = _registry(registry)
    if name not in reg.subwords:
        known = ", ".join(sorted(reg.subwords)) or "none"
        raise DataError(
            f"these vectors keep a {name!r} subword model, which no installed plugin provides (installed: {known}); "
            "install the plugin that wrote them"
        )
    return plugin_codec(reg.extension("subwords", name), SubwordModel)


# -- exports -------------------------------------------------------------------------------------


def exported_names(module: str, registry: Registry | None = None) -> list[str]:
    """The names plugins export under the core module `module`."""
    return sorted(n for n, e in _registry(registry).exports.items() if e.module == module)


def exported(module: str, name: str, registry: Registry | None = None) -> Any:
    """The object a plugin exports as `module`.`name`; `AttributeError` when none does (so Python's
    import machinery goes on to look for a submodule of that name)."""
    reg = _registry(registry)
    entry = reg.exports.get(name)
    if entry is None or entry.module != module:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    from zoo.naming.spec import import_factory

    return import_factory(reg.extension("exports", name).target, plugin=entry.plugin)

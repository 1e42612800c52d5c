"""What enters the model store: every file checked as `zoo.load` checks it, vectors converted.

`import_file(FILE, "NAME.TAG")` (``zoo import FILE --as NAME.TAG``) stores:

- a zoo model file (``zoo.save``): loaded once exactly as `zoo.load` loads it
  (format, checksum over every tensor and metadata entry, the spec resolved by
  the installed plugins, every tensor fitting the model), so a damaged, altered
  or unusable file is refused with `zoo.load`'s own message; then written to the
  store from what was checked;
- a zoo vectors file (`zoo.vectors.zoo_file`): checked the same way (checksum,
  then every tensor against its metadata);
- word vectors in another format: a word2vec text or binary file, a GloVe text
  file (no header) or a ``.vec`` (word2vec text), read by the `KeyedVectors`
  readers; or a file in a format an installed plugin reads
  (`zoo.vectors.extensions`), whose subword model comes along so that words
  outside the vocabulary keep their vectors. They become a zoo vectors file,
  which `KeyedVectors.load` and ``zoo vectors`` read;
- a file in a plugin's format that holds a whole model (`zoo.building.foreign`: a
  fastText classifier, say): read by the plugin's model codec and stored as the zoo
  model file `zoo.save` writes.

The file is read and checked before the store is touched; the store's lock is
then held only to write it (atomically, `zoo.building.files.write_atomic`) and
record it (`zoo.building.store`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from zoo.building.files import is_safetensors
from zoo.building.foreign import model_format
from zoo.building.hub import canonical, hub_file, is_address
from zoo.building.store import Store, StoreEntry, check_name, default_store
from zoo.errors import DataError, WeightsError, close_matches
from zoo.naming.registry import Registry  # light: no JAX until a file is read

__all__ = ["CORE_FORMATS", "formats", "import_file"]


class _TextFormat(NamedTuple):
    what: str  # what it is, for --help
    title: str  # its short name, for listings
    binary: bool  # `KeyedVectors.load_word2vec_format`'s arguments that read it
    no_header: bool


_TEXT_FORMATS = {
    "word2vec": _TextFormat(
        "word2vec text, with a '<count> <dim>' header (.vec files too)", "word2vec text", False, False
    ),
    "word2vec-binary": _TextFormat("word2vec's binary format", "word2vec binary", True, False),
    "glove": _TextFormat("GloVe text: a word and its numbers per line, no header", "GloVe text", False, True),
}
"""The exchange formats the core reads."""

CORE_FORMATS = {
    "auto": "told apart by the first bytes",
    "zoo": "a zoo model or vectors file (.safetensors)",
    **{name: text.what for name, text in _TEXT_FORMATS.items()},
}
"""The formats `import_file` reads without a plugin, with what each is."""


def formats(registry: Registry | None = None) -> dict[str, str]:
    """Every format `import_file` reads, with what each is: the core's, then the installed plugins'."""
    from zoo.vectors.extensions import format_entries

    plugged = {name: entry.summary or name for name, entry in format_entries(registry).items()}
    return {**CORE_FORMATS, **{k: v for k, v in plugged.items() if k not in CORE_FORMATS}}


def import_file(
    source: str | os.PathLike,
    name: str,
    *,
    format: str = "auto",
    replace: bool = False,
    limit: int | None = None,
    store: Store | None = None,
    registry: Registry | None = None,
    allow_nonfinite: bool = False,
) -> StoreEntry:
    """Check or convert the file `source` and store it as `name` (``NAME.TAG``); return its entry.

    `source` is a path, or ``hf://OWNER/REPO/PATH`` for a file in the Hugging Face
    hub's cache (`zoo.building.hub`; nothing is downloaded).

    **Arguments:**

    - `format`: one of `formats()` (``"auto"`` tells them apart).
    - `replace`: store over an entry of that name (else it is refused).
    - `limit`: keep only the first (most frequent) words of a vectors file.
    - `store`: the store (default: `default_store`, ``$ZOO_HOME``).
    - `registry`: the plugins a model file is checked against.
    - `allow_nonfinite`: store vectors holding NaN or infinity (refused by default).

    Raises `NameSyntaxError` for a bad name, `WeightsError` for a file a zoo file
    must not be (damaged, altered, unusable) and `DataError` for an unreadable
    vectors file, before anything is written.
    """
    check_name(name)
    store = store or default_store()
    known = formats(registry)
    if format not in known:
        raise DataError(f"unknown format {format!r}; choose one of {sorted(known)}." + close_matches(format, known))
    text = os.fspath(source)
    cached = is_address(text) and not os.path.lexists(text)
    path = hub_file(text) if cached else Path(source)
    if not path.is_file():
        raise DataError(f"no file to import at {path}")
    if not replace and store.find(name) is not None:  # checked again under the lock
        raise WeightsError(
            f"the model store already holds {name!r}; choose another name, replace it (--replace), "
            f"or remove it first (zoo models --remove {name})"
        )
    where = canonical(text) if cached else str(path.absolute())
    if format == "zoo" or (format == "auto" and is_safetensors(path)):
        return _import_zoo(path, name, where, store, replace, limit, registry)
    plugged = format == "auto" or format not in CORE_FORMATS
    found = model_format(path, format=format, registry=registry) if plugged else None
    if found is not None:
        if limit is not None:
            raise DataError("--limit keeps the first words of word vectors; a model file is stored whole")
        entry, codec = found
        return _store_model(codec.read_model(path), name, f"{where} ({entry.title})", store, replace)
    return _import_vectors(path, name, where, store, replace, limit, format, allow_nonfinite)


def _store_model(model: object, name: str, source: str, store: Store, replace: bool) -> StoreEntry:
    """Store `model` (read from a plugin's format) as the zoo model file `zoo.save` writes."""
    from zoo.building.weights import file_contents, write_atomic

    tensors, metadata = file_contents(model)
    return store.add(
        name,
        lambda target: write_atomic(target, tensors, metadata),
        kind="model",
        architecture=model.spec.name,
        source=source,
        checksum=metadata["zoo.checksum"],
        replace=replace,
    )


def _import_zoo(
    path: Path, name: str, where: str, store: Store, replace: bool, limit: int | None, registry: Registry | None
) -> StoreEntry:
    from zoo.building.weights import read_file, rebuild, write_atomic
    from zoo.vectors.zoo_file import is_vectors_file, read_vectors_contents

    metadata, tensors = read_file(path)
    if is_vectors_file(metadata):
        if limit is not None:
            return _import_vectors(path, name, where, store, replace, limit, "zoo")
        parts = read_vectors_contents(metadata, tensors, path)
        kind, what = "vectors", _describe_vectors(len(parts["words"]), parts["vectors"].shape[1], parts["oov"])
    else:
        if limit is not None:
            raise DataError("--limit keeps the first words of word vectors; a model file is stored whole")
        # every check zoo.load makes, on what is stored (copies: a migration hook may rewrite its inputs)
        model = rebuild(dict(metadata), dict(tensors), path, registry=registry)
        kind, what = "model", model.spec.name
        del model
    return store.add(
        name,
        lambda target: write_atomic(target, tensors, metadata),
        kind=kind,
        architecture=what,
        source=f"{where} (zoo file)",
        checksum=metadata["zoo.checksum"],
        replace=replace,
    )


def _import_vectors(
    path: Path,
    name: str,
    where: str,
    store: Store,
    replace: bool,
    limit: int | None,
    format: str,
    allow_nonfinite: bool = False,
) -> StoreEntry:
    from zoo.building.weights import seal, write_atomic
    from zoo.vectors.extensions import format_entries, read_format
    from zoo.vectors.formats import check_finite_vectors
    from zoo.vectors.keyed import KeyedVectors
    from zoo.vectors.zoo_file import vectors_tensors

    allow = {"allow_nonfinite": allow_nonfinite}
    if format == "auto":
        keyed, described = KeyedVectors.load(path, limit=limit, **allow), _describe_format(path)
    elif format == "zoo":
        keyed, described = KeyedVectors.load(path, limit=limit, **allow), "zoo vectors file"
    elif format in _TEXT_FORMATS:
        text = _TEXT_FORMATS[format]
        keyed = KeyedVectors.load_word2vec_format(
            path, binary=text.binary, limit=limit, no_header=text.no_header, **allow
        )
        described = text.title
    else:
        keyed, described = read_format(path, format, limit=limit), format_entries()[format].title
    if not allow_nonfinite:
        check_finite_vectors(keyed, path)
    if len(keyed) == 0:
        raise DataError(f"{path} holds no word vectors")
    source = f"{where} ({described})"
    metadata, tensors = vectors_tensors(keyed, source=source)
    metadata = seal(metadata, tensors)
    return store.add(
        name,
        lambda target: write_atomic(target, tensors, metadata),
        kind="vectors",
        architecture=_describe_vectors(len(keyed), keyed.vector_size, keyed.oov),
        source=source,
        checksum=metadata["zoo.checksum"],
        replace=replace,
    )


def _describe_vectors(words: int, dim: int, oov: object) -> str:
    from zoo.naming.registry import default_registry
    from zoo.vectors.extensions import subword_owner

    owner = subword_owner(oov)
    kept = "" if owner is None else f", {default_registry().subwords[owner[0]].title}"
    return f"{words} words, dim {dim}{kept}"


def _describe_format(path: Path) -> str:
    """What `KeyedVectors.load` took `path` for, in words."""
    from zoo.vectors.extensions import sniff
    from zoo.vectors.formats import detect_binary
    from zoo.vectors.reading import open_binary

    if is_safetensors(path):
        return "zoo file"
    plugged = sniff(path)
    if plugged is not None:
        return plugged.title
    if detect_binary(path):
        return _TEXT_FORMATS["word2vec-binary"].title
    with open_binary(path, "vectors file") as handle:
        first = handle.readline(1 << 16).split()
    header = len(first) == 2 and all(part.isdigit() for part in first)
    return next(text.title for text in _TEXT_FORMATS.values() if not text.binary and text.no_header != header)

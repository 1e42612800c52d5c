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
  file (no header) or a fastText ``.vec`` (word2vec text), read by the
  `KeyedVectors` readers; or a fastText ``.bin`` model, whose n-gram buckets
  come along so that words outside the vocabulary keep fastText's vectors. They
  become a zoo vectors file, which `KeyedVectors.load` and ``zoo vectors`` read.

The file is read and checked before the store is touched; the store's lock is
then held only to write it (atomically, `zoo.building.files.write_atomic`) and
record it (`zoo.building.store`).
"""

from __future__ import annotations

import os
from pathlib import Path

from zoo.building.files import is_safetensors
from zoo.building.hub import canonical, hub_file, is_address
from zoo.building.store import Store, StoreEntry, check_name, default_store
from zoo.errors import DataError, WeightsError
from zoo.naming.registry import Registry  # light: no JAX until a file is read

__all__ = ["FORMATS", "import_file"]

FORMATS = {
    "auto": "told apart by the first bytes",
    "zoo": "a zoo model or vectors file (.safetensors)",
    "word2vec": "word2vec text, with a '<count> <dim>' header (fastText's .vec too)",
    "word2vec-binary": "word2vec's binary format",
    "glove": "GloVe text: a word and its numbers per line, no header",
    "fasttext": "a fastText .bin model (its n-gram buckets come along)",
}
"""The formats `import_file` reads, with what each is."""


def import_file(
    source: str | os.PathLike,
    name: str,
    *,
    format: str = "auto",
    replace: bool = False,
    limit: int | None = None,
    store: Store | None = None,
    registry: Registry | None = None,
) -> StoreEntry:
    """Check or convert the file `source` and store it as `name` (``NAME.TAG``); return its entry.

    `source` is a path, or ``hf://OWNER/REPO/PATH`` for a file in the Hugging Face
    hub's cache (`zoo.building.hub`; nothing is downloaded).

    **Arguments:**

    - `format`: one of `FORMATS` (``"auto"`` tells them apart).
    - `replace`: store over an entry of that name (else it is refused).
    - `limit`: keep only the first (most frequent) words of a vectors file.
    - `store`: the store (default: `default_store`, ``$ZOO_HOME``).
    - `registry`: the plugins a model file is checked against.

    Raises `NameSyntaxError` for a bad name, `WeightsError` for a file a zoo file
    must not be (damaged, altered, unusable) and `DataError` for an unreadable
    vectors file, before anything is written.
    """
    check_name(name)
    store = store or default_store()
    if format not in FORMATS:
        raise DataError(f"unknown format {format!r}; choose one of {sorted(FORMATS)}")
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
    return _import_vectors(path, name, where, store, replace, limit, format)


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
    path: Path, name: str, where: str, store: Store, replace: bool, limit: int | None, format: str
) -> StoreEntry:
    from zoo.building.weights import seal, write_atomic
    from zoo.vectors.keyed import KeyedVectors
    from zoo.vectors.zoo_file import vectors_tensors

    if format == "auto":
        keyed, described = KeyedVectors.load(path, limit=limit), _describe_format(path)
    elif format == "zoo":
        keyed, described = KeyedVectors.load(path, limit=limit), "zoo vectors file"
    elif format == "fasttext":
        keyed, described = KeyedVectors.load_fasttext_bin(path, limit=limit), "fastText .bin"
    else:
        binary, no_header = format == "word2vec-binary", format == "glove"
        keyed = KeyedVectors.load_word2vec_format(path, binary=binary, limit=limit, no_header=no_header)
        described = {"word2vec": "word2vec text", "word2vec-binary": "word2vec binary", "glove": "GloVe text"}[format]
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
    return f"{words} words, dim {dim}" + (", fastText subwords" if oov is not None else "")


def _describe_format(path: Path) -> str:
    """What `KeyedVectors.load` took `path` for, in words."""
    from zoo.vectors.fasttext_bin import is_fasttext_bin
    from zoo.vectors.formats import detect_binary, open_binary

    if is_safetensors(path):
        return "zoo file"
    if is_fasttext_bin(path):
        return "fastText .bin"
    if detect_binary(path):
        return "word2vec binary"
    with open_binary(path, "vectors file") as handle:
        first = handle.readline(1 << 16).split()
    header = len(first) == 2 and all(part.isdigit() for part in first)
    return "word2vec text" if header else "GloVe text"

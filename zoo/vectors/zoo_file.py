"""Word vectors as a zoo file: words, vectors and counts (and a fastText model's subwords) in one
sealed safetensors file, so imported vectors get the checks every zoo file gets.

A vectors file is a zoo file (``zoo.format``, ``zoo.checksum`` over every
tensor and metadata entry, written atomically) marked ``zoo.kind = "vectors"``;
it holds no model, so `zoo.load` refuses it with a message pointing here, and
`zoo.vectors.KeyedVectors.load` reads it. Tensors:

- ``__zoo__.vectors``: ``[V, D]`` float32, the rows in vocabulary order;
- ``__zoo__.words.bytes`` / ``.offsets``: the V words, UTF-8, end to end, and
  ``[V + 1]`` int64 offsets into them; ``__zoo__.words.counts`` ``[V]`` int64 if known;
- the subword model behind the vectors' `oov`, when an installed plugin's
  `zoo.vectors.extensions.SubwordModel` named NAME keeps it (a fastText
  ``.bin``'s n-gram buckets, say): its arrays as ``__zoo__.NAME.<key>`` and its
  settings as the metadata entry ``zoo.NAME``. Words outside the vocabulary then
  get the same vectors after the round trip.

`metadata` entry ``zoo.vectors`` records ``{"words": V, "dim": D, "subwords":
NAME or false, "source": str}`` (files of earlier versions record ``true``: the
model is the one whose ``zoo.NAME`` entry the file holds). Reading checks the
checksum first, then every shape, dtype and offset against these, before
anything is built; the subword model is rebuilt by the installed plugin that
provides NAME, a name the file gives as data, never code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zoo.building.weights import FORMAT_VERSION, read_file, seal, write_atomic
from zoo.errors import DataError, WeightsError

__all__ = [
    "KIND",
    "is_vectors_file",
    "read_if_vectors",
    "read_vectors",
    "read_vectors_contents",
    "vectors_tensors",
    "write_vectors",
]

KIND = "vectors"
"""The ``zoo.kind`` of a vectors file (a model file has none)."""

_PREFIX = "__zoo__."
_VECTORS = _PREFIX + "vectors"
_WORDS = _PREFIX + "words."


def _pack(items: Sequence[bytes], key: str) -> dict[str, np.ndarray]:
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in items])
    return {key + "bytes": np.frombuffer(b"".join(items), dtype=np.uint8).copy(), key + "offsets": offsets}


def _encode(words: Sequence[str]) -> list[bytes]:
    try:
        return [w.encode("utf-8") for w in words]
    except UnicodeEncodeError as error:
        raise DataError(
            f"a word cannot be written as UTF-8 ({error}); read the file with unicode_errors='replace'"
        ) from None


def write_vectors(keyed: Any, path: str | os.PathLike, *, source: str = "") -> Path:
    """Write `keyed` (a `KeyedVectors`) to `path` as a sealed zoo vectors file; return the path.

    A subword model behind its `oov` that an installed plugin keeps (`zoo.vectors.extensions`)
    is kept with it.
    `source` says where the vectors came from (kept in the metadata).
    """
    metadata, tensors = vectors_tensors(keyed, source=source)
    write_atomic(Path(path), tensors, seal(metadata, tensors))
    return Path(path)


def vectors_tensors(keyed: Any, *, source: str = "") -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """The unsealed metadata and the tensors `write_vectors` writes for `keyed`."""
    from zoo import __version__

    words = list(keyed.index_to_key)
    vectors = np.ascontiguousarray(keyed.vectors, dtype=np.float32)
    tensors = {_VECTORS: vectors, **_pack(_encode(words), _WORDS)}
    if keyed.counts is not None:
        tensors[_WORDS + "counts"] = np.asarray(keyed.counts, dtype=np.int64)
    from zoo.vectors.extensions import subword_owner

    owner = subword_owner(keyed.oov)
    info = {"words": len(words), "dim": int(vectors.shape[1]), "subwords": owner[0] if owner else False}
    metadata = {
        "zoo.format": str(FORMAT_VERSION),
        "zoo.version": __version__,
        "zoo.kind": KIND,
        "zoo.vectors": json.dumps({**info, "source": source}),
    }
    if owner is not None:
        name, codec = owner
        settings, arrays = codec.pack(keyed.oov)
        metadata[f"zoo.{name}"] = json.dumps(settings)
        tensors |= {f"{_PREFIX}{name}.{key}": np.ascontiguousarray(value) for key, value in arrays.items()}
    return metadata, tensors


def is_vectors_file(metadata: Mapping[str, str]) -> bool:
    """Whether a zoo file's metadata marks it as word vectors."""
    return metadata.get("zoo.kind") == KIND


def read_if_vectors(path: str | os.PathLike, *, verify: bool = True) -> dict[str, Any] | None:
    """`read_vectors` of `path` if its header marks it as vectors; None for any other file (a model
    file, or one whose header cannot be read: `zoo.load` then says what is wrong with it)."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = dict(handle.metadata() or {})
    except Exception:
        return None
    return read_vectors(path, verify=verify) if is_vectors_file(metadata) else None


def read_vectors(path: str | os.PathLike, *, verify: bool = True) -> dict[str, Any]:
    """The words, vectors, counts and `oov` of the zoo vectors file at `path`, as keyword
    arguments of `KeyedVectors`; `WeightsError` naming what is wrong with a damaged file.

    The file is checked as `zoo.load` checks a model file (format, checksum over
    everything; ``verify=False`` reads a mismatching one with a warning), then its
    every tensor against its metadata.
    """
    path = Path(path)
    metadata, tensors = read_file(path, verify=verify)
    return read_vectors_contents(metadata, tensors, path)


def read_vectors_contents(metadata: Mapping[str, str], tensors: Mapping[str, np.ndarray], path: Path) -> dict[str, Any]:
    """`read_vectors` of a file's `metadata` and `tensors` as `read_file` returned them."""
    if not is_vectors_file(metadata):
        raise WeightsError(f"{path} is a zoo model file, not word vectors: read it with KeyedVectors.load")
    try:
        return _parts(metadata, tensors)
    except (DataError, KeyError, ValueError, TypeError, LookupError, RecursionError) as error:
        raise WeightsError(f"{path}: its word vectors are damaged: {error}") from error


def _unpack(tensors: Mapping[str, np.ndarray], key: str, count: int) -> list[bytes]:
    raw, offsets = tensors[key + "bytes"], tensors[key + "offsets"]
    if raw.dtype != np.uint8 or raw.ndim != 1 or offsets.dtype != np.int64 or offsets.shape != (count + 1,):
        raise DataError(f"{key}bytes/offsets must be uint8 bytes and {count + 1} int64 offsets")
    data = raw.tobytes()
    if offsets[0] != 0 or offsets[-1] != len(data) or np.any(np.diff(offsets) < 0):
        raise DataError(f"{key}offsets are inconsistent with its bytes")
    return [data[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]


def _counts(tensors: Mapping[str, np.ndarray], key: str, count: int) -> np.ndarray:
    counts = tensors[key]
    if counts.dtype != np.int64 or counts.shape != (count,):
        raise DataError(f"{key} must be {count} int64 counts, got {counts.dtype} {counts.shape}")
    return counts


def _parts(metadata: Mapping[str, str], tensors: Mapping[str, np.ndarray]) -> dict[str, Any]:
    info = json.loads(metadata.get("zoo.vectors", "null"))
    if not isinstance(info, dict) or not all(isinstance(info.get(k), int) for k in ("words", "dim")):
        raise DataError("metadata 'zoo.vectors' must record the number of words and the dimension")
    size, dim = info["words"], info["dim"]
    vectors = tensors[_VECTORS]
    if vectors.dtype != np.float32 or vectors.shape != (size, dim):
        raise DataError(f"{_VECTORS} must be float32 of shape {(size, dim)}, got {vectors.dtype} {vectors.shape}")
    words = [b.decode("utf-8") for b in _unpack(tensors, _WORDS, size)]
    counts = _counts(tensors, _WORDS + "counts", size) if _WORDS + "counts" in tensors else None
    known = {_VECTORS, _WORDS + "bytes", _WORDS + "offsets", _WORDS + "counts"}
    oov = None
    name = _subword_name(info.get("subwords", False), metadata)
    if name is not None:
        prefix = f"{_PREFIX}{name}."
        own = {key[len(prefix) :]: value for key, value in tensors.items() if key.startswith(prefix)}
        known |= {prefix + key for key in own}
        oov = _subwords(name, metadata, own, dim)
    stray = sorted(set(tensors) - known)
    if stray:
        raise DataError(f"tensors {stray[:5]} belong to no part of a vectors file")
    return {"words": words, "vectors": vectors, "counts": counts, "oov": oov}


def _subword_name(recorded: Any, metadata: Mapping[str, str]) -> str | None:
    """The name of the subword model a file keeps: as recorded, or (``true``, earlier files) the one
    whose ``zoo.NAME`` settings it holds; None for none."""
    from zoo.naming.names import IDENTIFIER

    if recorded is False:
        return None
    if recorded is True:
        held = [key[4:] for key in metadata if key.startswith("zoo.") and key[4:] not in _CORE_ENTRIES]
        if len(held) != 1:
            raise DataError(f"'zoo.vectors' records a subword model, but the metadata holds {len(held)} of them")
        recorded = held[0]
    if not isinstance(recorded, str) or not IDENTIFIER.fullmatch(recorded):
        raise DataError(f"'zoo.vectors' records subwords {recorded!r}; expected a name or false")
    return recorded


_CORE_ENTRIES = {"format", "version", "kind", "vectors", "checksum"}
"""The ``zoo.*`` metadata entries of a vectors file that are not a subword model's settings."""


def _subwords(name: str, metadata: Mapping[str, str], tensors: Mapping[str, np.ndarray], dim: int) -> Any:
    from zoo.vectors.extensions import subword_codec

    settings = json.loads(metadata.get(f"zoo.{name}", "null"))
    if not isinstance(settings, dict):
        raise DataError(f"metadata 'zoo.{name}' (the settings of its {name!r} subword model) is missing")
    return subword_codec(name).unpack(settings, tensors, dim)

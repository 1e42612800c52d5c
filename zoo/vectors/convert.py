"""Convert a word-vectors file to a format a plugin writes (``zoo vectors export --format NAME``)."""

from __future__ import annotations

import os
from pathlib import Path

from zoo.vectors.extensions import writable_format
from zoo.vectors.keyed import KeyedVectors

__all__ = ["export_vectors"]


def export_vectors(source: str | os.PathLike, out: str | os.PathLike, format: str, *, limit: int | None = None) -> str:
    """Write the vectors of `source` (any file `KeyedVectors.load` reads, or a stored name) to `out` in
    the plugin format `format`, the first `limit` words only if given; a line saying what was written."""
    codec = writable_format(format)
    said = codec.export(Path(source), Path(out), limit=limit)
    if said is not None:
        return said
    keyed = KeyedVectors.load(source, limit=limit)
    path = codec.write(keyed, Path(out))
    return f"wrote {len(keyed)} vectors of dim {keyed.vector_size} to {path}"

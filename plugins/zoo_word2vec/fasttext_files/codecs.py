"""fastText's ``.bin`` as a zoo vector format, and its subword model kept in zoo vectors files.

Declared in registry.toml (``[formats.fasttext]``, ``[subwords.fasttext]``): ``KeyedVectors.load``
and ``zoo import`` read a ``.bin`` by its magic number, ``zoo vectors export --format fasttext``
writes one, and a zoo vectors file of a ``.bin`` keeps its n-gram buckets, so that words outside
the vocabulary keep fastText's vectors after the round trip.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from zoo.plugin_api import DataError, KeyedVectors, SubwordModel, VectorFormat
from zoo_word2vec.fasttext_files.bin import load_fasttext_model, write_fasttext_bin
from zoo_word2vec.fasttext_files.keyed import FastTextKeyedVectors, fasttext_behind, is_fasttext_oov, write_keyed_bin
from zoo_word2vec.fasttext_files.model import FastTextArgs, FastTextModel

__all__ = ["FastTextBin", "FastTextSubwords"]


class FastTextBin(VectorFormat):
    """A fastText ``.bin`` model file (plain or gzipped)."""

    def read(
        self, path: Path, *, limit: int | None = None, encoding: str = "utf-8", unicode_errors: str = "strict"
    ) -> KeyedVectors:
        # the caller (KeyedVectors.load, zoo import) refuses non-finite rows or allows them
        return FastTextKeyedVectors.load_fasttext_bin(
            path, limit=limit, encoding=encoding, unicode_errors=unicode_errors, allow_nonfinite=True
        )

    def write(self, keyed: KeyedVectors, path: Path) -> Path:
        return write_keyed_bin(keyed, path)

    def export(self, source: Path, out: Path, *, limit: int | None = None) -> str:
        """The whole model behind `source` (a ``.bin``, a zoo fasttext model or a zoo vectors file of a
        ``.bin``), its output matrix included, so fastText can go on training the file written."""
        model = load_fasttext_model(source)
        if limit is not None:
            model = model.restrict(limit)
        path = write_fasttext_bin(out, model)
        a = model.args
        buckets = f"{a.bucket} n-gram buckets (n = {a.minn}..{a.maxn})"
        return f"wrote {model.nwords} words and {buckets} of dim {a.dim} to {path}"


def _pack_bytes(items: list[bytes], key: str) -> dict[str, np.ndarray]:
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in items])
    return {key + "bytes": np.frombuffer(b"".join(items), dtype=np.uint8).copy(), key + "offsets": offsets}


def _unpack_bytes(tensors: Mapping[str, np.ndarray], key: str) -> list[bytes]:
    raw, offsets = tensors[key + "bytes"], tensors[key + "offsets"]
    if raw.dtype != np.uint8 or raw.ndim != 1 or offsets.dtype != np.int64 or offsets.ndim != 1 or not offsets.size:
        raise DataError(f"{key}bytes/offsets must be uint8 bytes and int64 offsets")
    data = raw.tobytes()
    if offsets[0] != 0 or offsets[-1] != len(data) or np.any(np.diff(offsets) < 0):
        raise DataError(f"{key}offsets are inconsistent with its bytes")
    return [data[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]


_TENSORS = {"words.bytes", "words.offsets", "words.counts", "spellings.bytes", "spellings.offsets", "input"}


class FastTextSubwords(SubwordModel):
    """fastText's subword model (its words, the bytes it hashes, its input matrix and Args)."""

    def owns(self, oov: Any) -> bool:
        return is_fasttext_oov(oov)

    def keyed_class(self) -> type[KeyedVectors]:
        return FastTextKeyedVectors

    def pack(self, oov: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        model = fasttext_behind(oov)
        tensors = _pack_bytes([w.encode("utf-8") for w in model.words], "words.")
        tensors |= _pack_bytes(list(model.spellings[: model.nwords]), "spellings.")
        tensors["words.counts"] = np.asarray(model.counts, dtype=np.int64)
        tensors["input"] = np.ascontiguousarray(model.input, dtype=np.float32)
        return {**dataclasses.asdict(model.args), "encoding": model.encoding}, tensors

    def tables(self, oov: Any) -> dict[str, np.ndarray]:
        return {"input": fasttext_behind(oov).input}  # words' and n-grams' rows, without packing the words

    def unpack(self, settings: Mapping[str, Any], tensors: Mapping[str, np.ndarray], dim: int) -> FastTextModel:
        raw = dict(settings)
        encoding = raw.pop("encoding", "utf-8")
        fields = {f.name for f in dataclasses.fields(FastTextArgs)}
        if set(raw) != fields or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in raw.values()):
            raise DataError(f"the fastText Args block must give the numbers {sorted(fields)}")
        if set(tensors) != _TENSORS:
            raise DataError(f"a fastText subword model holds the tensors {sorted(_TENSORS)}, got {sorted(tensors)}")
        args = FastTextArgs(**raw)
        if args.dim != dim or not isinstance(encoding, str):
            raise DataError(f"the fastText model has dim {args.dim}, the vectors {dim}")
        words = _unpack_bytes(tensors, "words.")
        spellings = _unpack_bytes(tensors, "spellings.")
        counts = tensors["words.counts"]
        if counts.dtype != np.int64 or counts.shape != (len(words),) or len(spellings) != len(words):
            raise DataError(f"{len(words)} words need {len(words)} spellings and int64 counts")
        matrix = tensors["input"]
        if matrix.dtype != np.float32:
            raise DataError(f"the fastText input matrix must be float32, got {matrix.dtype}")
        decoded = [w.decode("utf-8") for w in words]
        return FastTextModel(args, decoded, counts, matrix, spellings=spellings, encoding=encoding)

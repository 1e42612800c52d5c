"""The word2vec file formats, text and binary, as the C tool and gensim write them.

Both start with a header line ``"<count> <dim>\\n"``. Then, per word:

- text: ``word v1 v2 ... vD\\n``, each value written as NumPy prints a float32
  (the shortest decimal that reads back to the same float32);
- binary: ``word `` then D little-endian float32 (4·D bytes); gensim writes
  nothing after the vector, the C tool a ``\\n``, which the reader skips.

`write_word2vec` produces files byte-identical to gensim's
``KeyedVectors.save_word2vec_format`` for the same words and vectors (in
the same order); `read_word2vec` reads files from either tool. A path ending
in ``.gz`` is written gzipped; gzip is detected from its first bytes on read.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np

from zoo.errors import DataError

__all__ = ["detect_binary", "read_word2vec", "write_word2vec"]

_GZIP_MAGIC = b"\x1f\x8b"
_HEADER_BYTES = 256  # "<count> <dim>\n" is far shorter: a longer first line is not a header
_CORRUPT = (EOFError, zlib.error, gzip.BadGzipFile)
_MAX_WORD_BYTES = 1 << 16


def _open_read(path: Path) -> BinaryIO:
    if not path.is_file():
        raise DataError(f"no word2vec file at {path}")
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == _GZIP_MAGIC
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def write_word2vec(
    path: str | os.PathLike,
    words: Sequence[str],
    vectors: np.ndarray,
    *,
    binary: bool = False,
    write_header: bool = True,
    prefix: str = "",
) -> Path:
    """Write `vectors` ``[V, D]`` (as float32) for `words` in order; return the path.

    A word may not contain whitespace: readers split on it. `prefix` is put
    before every word (as in gensim).
    """
    path = Path(path)
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise DataError(f"{len(words)} words but vectors of shape {vectors.shape}; expected ({len(words)}, dim)")
    bad = next((w for w in words if not w or any(ch.isspace() for ch in w)), None)
    if bad is not None:
        raise DataError(f"word {bad!r} is empty or contains whitespace: the word2vec formats cannot store it")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as out:
        if write_header:
            out.write(f"{len(words)} {vectors.shape[1]}\n".encode())
        for word, row in zip(words, vectors, strict=True):
            if binary:
                out.write(f"{prefix}{word} ".encode() + row.astype("<f4").tobytes())
            else:
                out.write(f"{prefix}{word} {' '.join(str(value) for value in row)}\n".encode())
    return path


def detect_binary(path: str | os.PathLike) -> bool:
    """Guess whether a word2vec file (with a header) is binary: its first record is
    not a text line of exactly `dim` numbers."""
    with _open_read(Path(path)) as handle:
        try:
            header = handle.readline(_HEADER_BYTES)
            dim = _parse_header(header, Path(path))[1]
            start = handle.read(64 + 40 * dim)
        except _CORRUPT as error:
            raise _corrupt(Path(path), error) from None
    line = start.split(b"\n", 1)[0]
    try:
        fields = line.decode("utf-8").rstrip().split(" ")
        [float(x) for x in fields[1:]]
    except (UnicodeDecodeError, ValueError):
        return True
    return len(fields) != dim + 1


def _parse_header(line: bytes, path: Path) -> tuple[int, int]:
    try:
        count, dim = (int(x) for x in line.decode("utf-8").split())
    except ValueError as error:
        raise DataError(
            f"{path}: the first line should be '<count> <dim>', got {line[:80]!r} (not a word2vec file?)"
        ) from error
    if count < 0 or dim < 1:
        raise DataError(f"{path}: bad header {line!r}")
    return count, dim


def read_word2vec(
    path: str | os.PathLike,
    *,
    binary: bool | None = None,
    limit: int | None = None,
    encoding: str = "utf-8",
    unicode_errors: str = "strict",
) -> tuple[list[str], np.ndarray]:
    """Read a word2vec text or binary file: ``(words, vectors [V, D] float32)``.

    **Arguments:**

    - `binary`: the format; None detects it (`detect_binary`).
    - `limit`: read only the first `limit` vectors (files are usually most frequent first).
    - `encoding`, `unicode_errors`: how words are decoded (``"replace"`` or
      ``"ignore"`` for files whose words were cut inside a multibyte character).

    A repeated word keeps its first vector. A truncated file raises `DataError`.
    """
    path = Path(path)
    if binary is None:
        binary = detect_binary(path)
    with _open_read(path) as handle:
        try:
            count, dim = _parse_header(handle.readline(_HEADER_BYTES), path)
            count = count if limit is None else min(count, limit)
            read = _read_binary if binary else _read_text
            words, vectors = read(handle, count, dim, path, encoding, unicode_errors)
        except _CORRUPT as error:
            raise _corrupt(path, error) from None
    seen: dict[str, int] = {}
    for i, word in enumerate(words):
        seen.setdefault(word, i)
    if len(seen) != len(words):
        keep = sorted(seen.values())
        words, vectors = [words[i] for i in keep], vectors[keep]
    return words, vectors


def _corrupt(path: Path, error: BaseException) -> DataError:
    return DataError(
        f"{path}: the gzip stream is truncated or corrupt ({error}); "
        "the file was probably cut short while downloading or copying: fetch or compress it again"
    )


def _decode(raw: bytes, path: Path, row: int, encoding: str, unicode_errors: str) -> str:
    try:
        return raw.decode(encoding, errors=unicode_errors)
    except UnicodeDecodeError as error:
        raise DataError(
            f"{path}: vector {row}: byte {raw[error.start : error.end][:4].hex(' ')} is not valid {encoding} "
            f"({error.reason}); pass the file's encoding (encoding='latin-1', say), or unicode_errors='replace' "
            "for words cut inside a multibyte character"
        ) from None


def _read_text(handle, count, dim, path, encoding, unicode_errors):
    words = []
    vectors = np.empty((count, dim), dtype=np.float32)
    longest = 1024 + 64 * dim  # bytes: a word and dim numbers; a longer line is not a vector
    for row in range(count):
        line = handle.readline(longest)
        if not line:
            raise DataError(f"{path}: the header promises {count} vectors but the file ends after {row}")
        if len(line) == longest and not line.endswith(b"\n"):
            raise DataError(
                f"{path}: vector {row} is on a line longer than {longest} bytes; expected 'word' + {dim} numbers"
            )
        fields = _decode(line, path, row, encoding, unicode_errors).rstrip().split(" ")
        if len(fields) != dim + 1:
            raise DataError(f"{path}: vector {row} ({fields[0]!r}) has {len(fields) - 1} values, expected {dim}")
        words.append(fields[0])
        vectors[row] = np.asarray(fields[1:], dtype=np.float64)
    return words, vectors


def _read_binary(handle, count, dim, path, encoding, unicode_errors):
    words = []
    vectors = np.empty((count, dim), dtype=np.float32)
    width = 4 * dim
    buffer, pos = b"", 0

    def refill(row: int, what: str) -> None:
        nonlocal buffer, pos
        more = handle.read(max(1 << 16, 2 * width))
        if not more:
            raise DataError(f"{path}: the header promises {count} vectors but the file ends inside {what} {row}")
        buffer, pos = buffer[pos:] + more, 0

    for row in range(count):
        while (space := buffer.find(b" ", pos)) < 0:
            if len(buffer) - pos > _MAX_WORD_BYTES:
                raise DataError(f"{path}: word {row} is longer than {_MAX_WORD_BYTES} bytes: not a word2vec file?")
            refill(row, "word")
        while len(buffer) < space + 1 + width:
            space -= pos  # refill drops the consumed prefix
            refill(row, "vector")
        word = _decode(buffer[pos:space], path, row, encoding, unicode_errors).lstrip("\n")
        vectors[row] = np.frombuffer(buffer, dtype="<f4", count=dim, offset=space + 1)
        words.append(word)
        pos = space + 1 + width
    return words, vectors

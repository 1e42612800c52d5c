"""Word-vector text and binary files: word2vec's (the C tool's and gensim's) and GloVe's.

word2vec files start with a header line ``"<count> <dim>\\n"``. Then, per word:

- text: ``word v1 v2 ... vD\\n``, each value written as NumPy prints a float32
  (the shortest decimal that reads back to the same float32);
- binary: ``word `` then D little-endian float32 (4·D bytes); gensim writes
  nothing after the vector, the C tool a ``\\n``, which the reader skips.

`write_word2vec` produces files byte-identical to gensim's
``KeyedVectors.save_word2vec_format`` for the same words and vectors (in
the same order); `read_word2vec` reads files from either tool. A path ending
in ``.gz`` is written gzipped; gzip is detected from its first bytes on read.

GloVe's text files (and ``write_header=False``) have no header: the first line
is already a vector, ``word v1 ... vD``. `read_word2vec` tells them apart by the
first line: two integers are a header, a word and D >= 2 numbers are a vector
(and so is ``"12 34"`` when the next line is ``word value``: a file of
one-dimensional vectors); ``no_header=True`` (gensim's spelling) says so
outright. A word there may hold spaces (GloVe's 840B file has a few): it is
what precedes the last D numbers.

A file in another format is named as such (a format a plugin reads, a pickle, a
zip archive, ...) with what to do, never shown as raw bytes.
"""

from __future__ import annotations

import gzip
import numbers
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import numpy as np

from zoo.errors import DataError, TruncatedFileError
from zoo.vectors.reading import CORRUPT_GZIP, MAX_WORD_BYTES, corrupt_gzip, decode_word, open_binary

__all__ = ["check_finite", "check_limit", "describe_format", "detect_binary", "read_word2vec", "write_word2vec"]

_FIRST_LINE_BYTES = 1 << 20  # a header, or a GloVe vector of up to ~16k numbers
_SAMPLE_BYTES = 1 << 24  # the most read to tell text from binary

_PICKLE = (
    "this is a Python pickle (gensim's own .model/.kv format?), which zoo never loads: unpickling runs code. "
    "In gensim, write the vectors as text: KeyedVectors.load(path).save_word2vec_format('vectors.txt')"
)
_SIGNATURES = [
    (b"\x93NUMPY", "this is a NumPy .npy array (gensim keeps a model's large arrays beside its pickle as .npy); "
     "write the vectors from gensim with save_word2vec_format"),
    (b"PK\x03\x04", "this is a zip archive (GloVe's downloads are zipped): unzip it and read the .txt inside"),
    (b"\xfd7zXZ\x00", "this is xz-compressed: decompress it (unxz), or recompress it with gzip, which zoo reads"),
    (b"\x89HDF\r\n\x1a\n", "this is an HDF5 file, which zoo does not read; export the vectors as word2vec text"),
]  # fmt: skip


def describe_format(head: bytes) -> str | None:
    """Name the format of a file that starts with `head` (at least 16 bytes, gzip already
    undone) when it is one zoo recognises but is not a word2vec/GloVe file; None otherwise."""
    from zoo.vectors.extensions import match_magic

    plugged = match_magic(head)
    if plugged is not None:
        return (
            f"this is {plugged.summary or 'a file'} (format {plugged.name!r}, read by plugin {plugged.plugin!r}): "
            "read it with KeyedVectors.load(path)"
        )
    for signature, description in _SIGNATURES:
        if head.startswith(signature):
            return description
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return _PICKLE
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == b"1AY&SY":  # not a word starting "BZh"
        return "this is bzip2-compressed: decompress it (bunzip2), or recompress it with gzip, which zoo reads"
    if len(head) >= 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < (1 << 30):
        return "this is a safetensors file (a zoo model?): read it with KeyedVectors.load(path)"
    return None


def _open_read(path: Path) -> BinaryIO:
    return open_binary(path, "word-vectors file")


def write_word2vec(
    path: str | os.PathLike,
    words: Sequence[str],
    vectors: np.ndarray,
    *,
    binary: bool = False,
    write_header: bool = True,
    prefix: str = "",
    total_vec: int | None = None,
    append: bool = False,
) -> Path:
    """Write `vectors` ``[V, D]`` for `words` in order (binary: as float32); return the path.

    A word may not contain whitespace: readers split on it. `prefix` is put
    before every word (as in gensim). `total_vec` is the count the header states (default V:
    more when other vectors are appended after, as gensim's Doc2Vec does); `append` adds to the
    end of an existing file.
    """
    path = Path(path)
    vectors = np.asarray(vectors)
    if not np.issubdtype(vectors.dtype, np.floating):
        vectors = vectors.astype(np.float32)  # text shows each value as its own float type prints it, as gensim
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise DataError(f"{len(words)} words but vectors of shape {vectors.shape}; expected ({len(words)}, dim)")
    bad = next((w for w in words if not w or any(ch.isspace() for ch in w)), None)
    if bad is not None:
        raise DataError(f"word {bad!r} is empty or contains whitespace: the word2vec formats cannot store it")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "ab" if append else "wb") as out:
        if write_header:
            out.write(f"{len(words) if total_vec is None else total_vec} {vectors.shape[1]}\n".encode())
        for word, row in zip(words, vectors, strict=True):
            if binary:
                out.write(f"{prefix}{word} ".encode() + row.astype("<f4").tobytes())
            else:
                out.write(f"{prefix}{word} {' '.join(str(value) for value in row)}\n".encode())
    return path


class _Layout(NamedTuple):
    """What the first lines of a file say: its header's count (None: no header, read to the
    end), the vectors' dimension, and whether the vectors are binary."""

    count: int | None
    dim: int
    binary: bool


def detect_binary(path: str | os.PathLike) -> bool:
    """Guess whether a word2vec file is binary: its first record is not a text line of
    exactly `dim` numbers (a file without a header is text)."""
    return _detect(Path(path), None, None).binary


def _detect(path: Path, binary: bool | None, no_header: bool | None) -> _Layout:
    with _open_read(path) as handle:
        try:
            first = handle.readline(_FIRST_LINE_BYTES)
            after = handle.read(2 * len(first) + 4096)
            if (named := describe_format(first + after)) is not None:
                raise DataError(f"{path}: {named}")
            header = _header(first)
            if header is not None and (header[0] < 0 or header[1] < 1):
                raise _not_a_header(first, path)
            if header is not None and b"\n" not in after:  # the rest of the first record, if it is a line
                after += handle.readline(min(1024 + 64 * header[1], _SAMPLE_BYTES))
        except CORRUPT_GZIP as error:
            raise corrupt_gzip(path, error) from None
    if not first:
        raise DataError(f"{path} is empty; expected word vectors")
    if len(first) == _FIRST_LINE_BYTES and not first.endswith(b"\n"):
        raise DataError(f"{path}: the first line is longer than {_FIRST_LINE_BYTES} bytes: not a word-vectors file")
    second = _fields(after.split(b"\n", 1)[0])
    if no_header is False or (no_header is None and header is not None and not _one_dimensional(header, second)):
        if header is None:
            raise _not_a_header(first, path)
        layout = _Layout(*header, binary if binary is not None else _looks_binary(after, header[1]))
        _check_claims(path, layout, after, binary)
        return layout
    if binary:
        raise DataError(f"{path}: a file without a header is read as text only (as gensim does); drop binary=True")
    dim = _vector_width(_fields(first))
    if dim < (1 if no_header or header is not None else 2):  # one number after a word: only when sure
        raise _not_a_header(first, path)
    return _Layout(None, dim, False)


def _text_width(after: bytes) -> int:
    """How many numbers the record after the header holds when it is a text vector line, else 0."""
    line, newline, _ = after.partition(b"\n")
    try:
        fields = line.decode("utf-8").rstrip().split(" ")
    except UnicodeDecodeError:
        return 0
    return _vector_width(fields) if newline else 0


def _check_claims(path: Path, layout: _Layout, after: bytes, binary: bool | None) -> None:
    """Refuse a header the file cannot be, before anything is allocated from it: a text file read
    as binary, a dimension the first record contradicts or a plain file is too small to hold, a
    table over the memory budget."""
    count, dim = layout.count or 0, layout.dim
    width = _text_width(after)
    if layout.binary and width == dim:
        raise DataError(
            f"{path}: read as binary, but it is a text file (its first vector is a line of {dim} numbers): "
            "drop binary=True (or pass binary=False)"
        )
    if layout.binary and binary and len(after) >= 4 * dim + 2 and _is_text(after):  # a whole record and more
        raise DataError(
            f"{path}: read as binary, but it is a text file (its first {len(after)} bytes after the header are "
            "lines of text): drop binary=True (or pass binary=False)"
        )
    if (binary is None or not layout.binary) and 1 <= width != dim:
        raise DataError(
            f"{path}: the header says dimension {dim} but the first vector is a text line of {width} numbers: "
            "a damaged header? Fix the header line ('<count> <dim>')"
        )
    row = (4 * dim + 1) if layout.binary else (2 * dim + 1)  # a binary row; the shortest text row ("0 " each)
    if not path.name.endswith(".gz") and _is_plain(path):
        size = path.stat().st_size
        if row > size:
            raise DataError(
                f"{path}: the header says vectors of dimension {dim}, at least {row} bytes each, but the whole file "
                f"is {size} bytes: a damaged or crafted header"
            )
        count = min(count, size // row)
    from zoo.budget import check_memory

    check_memory(2 * 4 * dim * max(count, 1), f"{path}: {count} vectors of dimension {dim} (float32, while growing)")


def _is_text(sample: bytes) -> bool:
    """Whether `sample` (what follows a header) reads as text lines: UTF-8 with line feeds and no
    control characters but tab and carriage return. Binary float32 vectors never do: each
    of their bytes is printable with odds of about 3 in 8, and a sample holds thousands (a record's
    ``4 * dim`` bytes at least)."""
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason != "unexpected end of data":
            return False
        text = sample[: error.start].decode("utf-8")  # a character cut at the sample's end
    return "\n" in text and not any((ch < " " and ch not in "\t\r\n") or ch == "\x7f" for ch in text)


def _is_plain(path: Path) -> bool:
    with open(path, "rb") as probe:
        return probe.read(2) != b"\x1f\x8b"


def _fields(line: bytes) -> list[str]:
    return line.decode("utf-8", errors="replace").rstrip().split(" ")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _vector_width(fields: list[str]) -> int:
    """How many numbers follow the first field (the word): 0 when `fields` is not a vector line."""
    if len(fields) < 2 or not all(_is_number(x) for x in fields[1:]):
        return 0
    return len(fields) - 1


def _header(line: bytes) -> tuple[int, int] | None:
    """``(count, dim)`` when `line` is two integers, else None."""
    fields = line.decode("utf-8", errors="replace").split()
    if len(fields) != 2 or not all(x.isascii() and x.lstrip("-").isdigit() for x in fields):
        return None
    return int(fields[0]), int(fields[1])


def _one_dimensional(header: tuple[int, int], second: list[str]) -> bool:
    """Whether a first line of two integers is rather a one-dimensional vector whose word is a
    number: the next line is ``word value`` while the "header" says another dimension."""
    return _vector_width(second) == 1 and header[1] != 1


def _looks_binary(after: bytes, dim: int) -> bool:
    """Whether the records after a header are binary: not text (`_is_text`; a damaged text line,
    "cat 0x10 0.2", is then an error naming it, never bytes read as floats of 1e-19), and the first
    is not a line of `dim` numbers."""
    if _is_text(after):
        return False
    try:
        fields = after.split(b"\n", 1)[0].decode("utf-8").rstrip().split(" ")
    except UnicodeDecodeError:
        return True
    return _vector_width(fields) != dim


def _not_a_header(line: bytes, path: Path) -> DataError:
    """The error for a first line that should have been ``<count> <dim>``, saying what it is."""
    expected = "the first line should be '<count> <dim>' (word2vec) or a word and its numbers (GloVe)"
    header = _header(line)
    if header is not None:
        return DataError(
            f"{path}: the header says {header[0]} vectors of dimension {header[1]}; expected a count of at least 0 "
            "and a dimension of at least 1"
        )
    fields = _fields(line)
    if (width := _vector_width(fields)) >= 1:
        return DataError(
            f"{path}: {expected}; it is a vector ({fields[0][:40]!r} and {width} numbers): a file without a header? "
            "Leave no_header unset to detect it, or pass no_header=True"
        )
    text = line.decode("utf-8", errors="replace").rstrip("\r\n")
    if any(ch == "\ufffd" or (ch < " " and ch != "\t") for ch in text):
        return DataError(
            f"{path}: {expected}, but the file starts with binary data in no format zoo knows; zoo reads "
            "word2vec text and binary, GloVe text, zoo files and the formats of its plugins (zoo import --help)"
        )
    return DataError(f"{path}: {expected}; got {text[:60]!r}: not a word-vectors file?")


def read_word2vec(
    path: str | os.PathLike,
    *,
    binary: bool | None = None,
    limit: int | None = None,
    encoding: str = "utf-8",
    unicode_errors: str = "strict",
    no_header: bool | None = None,
    allow_nonfinite: bool = False,
) -> tuple[list[str], np.ndarray]:
    """Read a word2vec text or binary file, or a GloVe text file: ``(words, vectors [V, D] float32)``.

    **Arguments:**

    - `binary`: the format; None detects it (`detect_binary`).
    - `limit`: read only the first `limit` vectors (files are usually most frequent first).
    - `encoding`, `unicode_errors`: how words are decoded (``"replace"`` or
      ``"ignore"`` for files whose words were cut inside a multibyte character).
    - `no_header`: True for a text file without the ``<count> <dim>`` line (GloVe's),
      False to demand one, None (the default) to tell from the first lines.
    - `allow_nonfinite`: load vectors holding NaN or infinity (or a number past float32's
      range) instead of refusing the file; searches never rank such a row.

    A repeated word keeps its first vector. A truncated file raises `zoo.errors.TruncatedFileError`
    (a `DataError` that is also the `EOFError` gensim raises).
    """
    from zoo.data.textfile import check_codec

    path = Path(path)
    check_limit(limit)
    check_codec(encoding, unicode_errors)
    layout = _detect(path, binary, no_header)
    with _open_read(path) as handle:
        try:
            if layout.count is None:
                words, vectors = _read_headerless(handle, layout.dim, limit, path, encoding, unicode_errors)
            else:
                handle.readline(_FIRST_LINE_BYTES)
                count = layout.count if limit is None else min(layout.count, limit)
                read = _read_binary if layout.binary else _read_text
                words, vectors = read(handle, count, layout.dim, path, encoding, unicode_errors)
        except CORRUPT_GZIP as error:
            raise corrupt_gzip(path, error) from None
    if not allow_nonfinite:
        first_line = 1 if layout.count is None else 2
        where = "vector {row}" if layout.binary else "line {line}"
        check_finite(vectors, words, path, lambda row: where.format(row=row, line=row + first_line))
    seen: dict[str, int] = {}
    for i, word in enumerate(words):
        seen.setdefault(word, i)
    if len(seen) != len(words):
        keep = sorted(seen.values())
        words, vectors = [words[i] for i in keep], vectors[keep]
    return words, vectors


def check_limit(limit: Any) -> None:
    """`DataError` unless `limit` (how many vectors to read) is None or an integer of at least 0."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 0):
        raise DataError(f"limit={limit!r}: how many vectors to read must be an integer of at least 0 (None: all)")


def _first_nonfinite(values: np.ndarray) -> tuple[int, float, int] | None:
    """``(row, its first non-finite value, how many rows hold one)`` of `values` ``[R, D]``; None if all are finite."""
    finite = np.isfinite(values).all(axis=1) if values.size else np.ones(len(values), bool)
    if finite.all():
        return None
    row = int(np.argmin(finite))
    return row, values[row][~np.isfinite(values[row])][0], int((~finite).sum())


_ALLOW_HINT = "a damaged file? Pass allow_nonfinite=True (zoo: --allow-nonfinite) to load it anyway"


def check_finite(vectors: np.ndarray, words: Sequence[str], path: Path, where: Callable[[int], str]) -> None:
    """Raise `DataError` naming the first row of `vectors` ``[V, D]`` that holds NaN or infinity
    (a text value past float32's range, 1e39 say, reads as infinity): its file, word and place."""
    found = _first_nonfinite(vectors)
    if found is not None:
        row, bad, count = found
        raise DataError(
            f"{path}: {where(row)} ({words[row][:40]!r}) holds {bad} (NaN, infinity or a number past float32's "
            f"range; {count} such vectors in all): {_ALLOW_HINT}"
        )


def check_finite_vectors(keyed: Any, path: Path) -> None:
    """`check_finite` over a `KeyedVectors`' rows and over the float tables of its subword model
    (`SubwordModel.tables`: the rows that give words outside the vocabulary their vectors);
    `DataError` naming the first bad row and its table."""
    from zoo.vectors.extensions import subword_owner

    check_finite(keyed.vectors, keyed.index_to_key, path, lambda row: f"word {row + 1}")
    owner = subword_owner(keyed.oov)
    if owner is None:
        return
    name, codec = owner
    for table, values in sorted(codec.tables(keyed.oov).items()):
        found = _first_nonfinite(np.asarray(values))
        if found is not None:
            row, bad, count = found
            raise DataError(
                f"{path}: row {row} of the {name} subword model's {table!r} table (the vectors of words outside "
                f"the vocabulary are built from it) holds {bad} ({count} such rows in all): {_ALLOW_HINT}"
            )


def _numbers(values: list[str], path: Path, where: str, word: str) -> np.ndarray:
    try:
        with np.errstate(over="ignore"):  # past float32's range: infinity, which `check_finite` reports
            return np.asarray(values, dtype=np.float64).astype(np.float32)
    except ValueError:
        bad = next(v for v in values if not _is_number(v))
        raise DataError(f"{path}: {where} ({word[:40]!r}): {bad[:40]!r} is not a number") from None


def _room(vectors: np.ndarray, row: int) -> np.ndarray:
    """`vectors` with room for row `row`, which has just been read: doubled when full, so what is
    allocated follows what the file holds, never the count or dimension its header claims."""
    if row < len(vectors):
        return vectors
    return np.concatenate([vectors, np.empty((max(len(vectors), 1), vectors.shape[1]), vectors.dtype)])


def _rows(dim: int) -> np.ndarray:
    return np.empty((0, dim), dtype=np.float32)  # nothing until a row has been read


def _read_text(handle, count, dim, path, encoding, unicode_errors):
    words = []
    vectors = _rows(dim)
    longest = 1024 + 64 * dim  # bytes: a word and dim numbers; a longer line is not a vector
    for row in range(count):
        line = handle.readline(longest)
        if not line:
            raise TruncatedFileError(f"{path}: the header promises {count} vectors but the file ends after {row}")
        if len(line) == longest and not line.endswith(b"\n"):
            raise DataError(
                f"{path}: vector {row} is on a line longer than {longest} bytes; expected 'word' + {dim} numbers"
            )
        fields = decode_word(line, path, f"vector {row}", encoding, unicode_errors).rstrip().split(" ")
        if len(fields) != dim + 1:
            raise DataError(f"{path}: vector {row} ({fields[0]!r}) has {len(fields) - 1} values, expected {dim}")
        vectors = _room(vectors, row)
        vectors[row] = _numbers(fields[1:], path, f"vector {row}", fields[0])
        words.append(fields[0])
    return words, vectors if len(vectors) == count else vectors[:count].copy()


def _read_headerless(handle, dim, limit, path, encoding, unicode_errors):
    """Text vectors to the end of the file (or `limit`), one per line, `dim` numbers each."""
    words: list[str] = []
    vectors = _rows(dim)
    longest = 1024 + 64 * dim
    while limit is None or len(words) < limit:
        line = handle.readline(longest)
        if not line:
            break
        where = f"line {len(words) + 1}"
        if len(line) == longest and not line.endswith(b"\n"):
            raise DataError(f"{path}: {where} is longer than {longest} bytes; expected a word and {dim} numbers")
        fields = decode_word(line, path, where, encoding, unicode_errors).rstrip().split(" ")
        word = " ".join(fields[:-dim])  # GloVe's words may hold spaces: the word is what precedes the numbers
        if len(fields) < dim + 1 or not word or (len(fields) > dim + 1 and _is_number(fields[-dim - 1])):
            raise DataError(f"{path}: {where} ({fields[0][:40]!r}) has {len(fields) - 1} values, expected {dim}")
        vectors = _room(vectors, len(words))
        vectors[len(words)] = _numbers(fields[-dim:], path, where, word)
        words.append(word)
    if not words:
        raise DataError(f"{path}: no vectors in the file")
    return words, vectors[: len(words)].copy()


def _read_binary(handle, count, dim, path, encoding, unicode_errors):
    words = []
    vectors = _rows(dim)
    width = 4 * dim
    buffer, pos = bytearray(), 0

    def refill(row: int, what: str, wanted: int) -> None:
        """Read at least the bytes still missing for `wanted` (what the row needs), in one read:
        the buffer grows in place, so a long row costs its length, not its length squared."""
        nonlocal pos
        del buffer[:pos]
        pos = 0
        more = handle.read(max(1 << 16, min(wanted - len(buffer), 1 << 26)))
        if not more:
            raise TruncatedFileError(
                f"{path}: the header promises {count} vectors but the file ends inside {what} {row}"
            )
        buffer.extend(more)

    for row in range(count):
        while (space := buffer.find(b" ", pos)) < 0:
            if len(buffer) - pos > MAX_WORD_BYTES:
                raise DataError(f"{path}: word {row} is longer than {MAX_WORD_BYTES} bytes: not a word2vec file?")
            refill(row, "word", 0)
        while len(buffer) < space + 1 + width:
            space -= pos  # refill drops the consumed prefix
            refill(row, "vector", space + 1 + width)
        word = decode_word(bytes(buffer[pos:space]), path, f"vector {row}", encoding, unicode_errors).lstrip("\n")
        vectors = _room(vectors, row)
        vectors[row] = np.frombuffer(buffer, dtype="<f4", count=dim, offset=space + 1)
        words.append(word)
        pos = space + 1 + width
    return words, vectors if len(vectors) == count else vectors[:count].copy()

"""Reading word-vector files as bytes: plain or gzipped, every failure a `DataError` naming the file.

Shared by the core's formats (`zoo.vectors.formats`) and every plugin's (`zoo.vectors.extensions`).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import BinaryIO

from zoo.data.inputs import open_input
from zoo.errors import DataError, TruncatedFileError

__all__ = ["CORRUPT_GZIP", "MAX_WORD_BYTES", "UndecodableWordError", "corrupt_gzip", "decode_word", "open_binary"]

_GZIP_MAGIC = b"\x1f\x8b"
CORRUPT_GZIP = (EOFError, zlib.error, gzip.BadGzipFile)
"""What reading a truncated or corrupt gzip stream raises."""
MAX_WORD_BYTES = 1 << 16
"""The longest word the binary readers accept."""


def open_binary(path: Path, what: str) -> BinaryIO:
    """`path` opened for reading bytes, gunzipped when its first bytes say gzip; a FIFO, device
    or directory is a `DataError` at once (`zoo.data.inputs.open_input`)."""
    raw = open_input(path, what)
    gzipped = raw.read(2) == _GZIP_MAGIC
    raw.seek(0)
    if not gzipped:
        return raw
    unzipped = gzip.GzipFile(fileobj=raw, mode="rb")
    unzipped.myfileobj = raw  # closed with it, as gzip.open(path) closes the file it opened
    return unzipped


def corrupt_gzip(path: Path, error: BaseException) -> DataError:
    """The `DataError` for a gzip stream that ended or broke while reading `path` (a
    `TruncatedFileError`, which is also an `EOFError`, for one that ended); a file that ended
    before its header's count keeps its own error."""
    if isinstance(error, TruncatedFileError):
        return error
    kind = TruncatedFileError if isinstance(error, EOFError) else DataError
    return kind(
        f"{path}: the gzip stream is truncated or corrupt ({error}); "
        "the file was probably cut short while downloading or copying: fetch or compress it again"
    )


class UndecodableWordError(DataError, UnicodeDecodeError):
    """A word whose bytes are not valid in the file's encoding: also the `UnicodeDecodeError`
    gensim raises there (with its ``encoding``, ``object``, ``start``, ``end``, ``reason``)."""

    def __init__(self, message: str, error: UnicodeDecodeError) -> None:
        UnicodeDecodeError.__init__(self, error.encoding, error.object, error.start, error.end, error.reason)
        self.message = message

    def __str__(self) -> str:
        return self.message


def decode_word(raw: bytes, path: Path, where: str, encoding: str, unicode_errors: str) -> str:
    """`raw` decoded, or an `UndecodableWordError` naming `path`, `where` (a row, an entry) and the bad byte."""
    try:
        return raw.decode(encoding, errors=unicode_errors)
    except UnicodeDecodeError as error:
        raise UndecodableWordError(
            f"{path}: {where}: byte {raw[error.start : error.end][:4].hex(' ')} is not valid {encoding} "
            f"({error.reason}); pass the file's encoding (encoding='latin-1', say), or unicode_errors='replace' "
            "for words cut inside a multibyte character",
            error,
        ) from None

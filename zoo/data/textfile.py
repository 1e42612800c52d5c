"""Reading text files: one checked, bounded reader behind every text input.

Corpora, sentence pairs, tagged and labelled files, language-model text and
``--file`` inputs are all read through `open_text`:

- plain or gzip, told apart by the file's first bytes, not its name;
- decoded strictly with `encoding` (UTF-8 by default): an undecodable byte is a
  `DataError` naming the file, the line and the byte offset, and saying how to
  read the file anyway (``--encoding latin-1`` on the command line, or
  ``errors="replace"`` in Python for U+FFFD in place of bad bytes);
- a NUL character marks a binary file, which is refused;
- a truncated or corrupt gzip stream is a `DataError` at the point of reading;
- at most `max_chars` characters are read at a time, so no line is ever held
  whole: `TextFile.lines` skips (and counts) lines over the limit, and a corpus
  reader can cut them instead (`zoo.data.corpus.iter_lines`).

::

    for number, line in read_lines("pairs.tsv", max_chars=10_000):
        ...                                 # a warning at the end counts skipped lines
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import os
import warnings
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from zoo.data.inputs import open_input
from zoo.errors import DataError

__all__ = ["MAX_LINE_CHARS", "LongLinesWarning", "TextFile", "check_codec", "decode_bytes", "open_text", "read_lines"]

MAX_LINE_CHARS = 1 << 20
"""Characters read at a time, and the longest line the line readers keep."""

_GZIP_MAGIC = b"\x1f\x8b"
_NUL = "a NUL byte"
_SCAN_BYTES = 1 << 16
_SNIFF_BYTES = 1 << 13  # a NUL among the first bytes marks a binary file before any line is read
_CORRUPT = (EOFError, zlib.error, gzip.BadGzipFile)
_FIX = (
    "if the file is text in another encoding, name it with --encoding (e.g. --encoding latin-1; "
    "encoding='latin-1' in Python), or pass errors='replace' in Python to read bad bytes as U+FFFD"
)


class LongLinesWarning(UserWarning):
    """Lines longer than the reader's limit were skipped."""


class _Fault(NamedTuple):
    line: int
    offset: int
    what: str


def check_codec(encoding: str, errors: str) -> None:
    """`DataError` unless Python knows the text `encoding` and the `errors` handler."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise DataError(
            f"unknown text encoding {encoding!r}; use one Python knows (utf-8, latin-1, cp1252, utf-16, ...)"
        ) from None
    try:
        codecs.lookup_error(errors)
    except LookupError:
        raise DataError(f"unknown errors={errors!r}; use 'strict' (the default), 'replace' or 'ignore'") from None


def _open_binary(path: Path, gzipped: bool) -> BinaryIO:
    raw = open_input(path, "text file")  # a FIFO, device or directory: refused at once
    if not gzipped:
        return raw
    unzipped = gzip.GzipFile(fileobj=raw, mode="rb")
    unzipped.myfileobj = raw  # closed with it, as gzip.open(path) closes the file it opened
    return unzipped


class _ByteRange(io.RawIOBase):
    """Bytes ``[start, stop)`` of a plain file, read as a stream of their own."""

    def __init__(self, path: Path, start: int, stop: int) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 (closed with the stream)
        self._file.seek(start)
        self._left = max(0, stop - start)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = min(len(buffer), self._left)
        if size <= 0:
            return 0
        got = self._file.readinto(memoryview(buffer)[:size]) or 0
        self._left -= got
        return got

    def close(self) -> None:
        self._file.close()
        super().close()


def _text_head(head: bytes, gzipped: bool) -> bytes:
    """The first bytes of the text in a file that starts with `head` (decompressed if gzipped)."""
    if not gzipped:
        return head
    try:
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS).decompress(head, _SNIFF_BYTES)
    except zlib.error:
        return b""  # a corrupt stream: reading says so, at the point where it fails


def _ascii_compatible(encoding: str) -> bool:
    return "\x00a\n".encode(encoding, "replace") == b"\x00a\n"


def _chunks(path: Path, gzipped: bool) -> Iterator[bytes]:
    with _open_binary(path, gzipped) as raw:
        while chunk := raw.read(_SCAN_BYTES):
            yield chunk


def _first_fault(chunks: Iterable[bytes], encoding: str, errors: str) -> _Fault | None:
    """Find the first undecodable byte or NUL character in `chunks` (error path only: files are read again)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    line, consumed = 1, 0
    try:
        for chunk in chunks:
            pending = decoder.getstate()[0]
            start = consumed - len(pending)  # offset of the bytes this call decodes
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError as error:
                before = error.object[: error.start].decode(encoding, "replace")
                bad = error.object[error.start : error.end]
                what = f"byte {bad[:4].hex(' ')!s} is not valid {encoding} ({error.reason})"
                if b"\x00" in chunk and _ascii_compatible(encoding):
                    what += ", and the input holds NUL bytes: it is probably binary, not text"
                return _Fault(line + before.count("\n"), start + error.start, what)
            except UnicodeError as error:  # a codec's own complaint, e.g. UTF-16 without a byte-order mark
                return _Fault(line, start, f"the text is not valid {encoding} ({error})")
            nul = text.find("\x00")
            if nul >= 0:
                head = text[:nul]
                offset = start + len(head.encode(encoding, "replace"))
                return _Fault(line + head.count("\n"), offset, _NUL)
            line += text.count("\n")
            consumed += len(chunk)
    except _CORRUPT:
        return None
    return None


def _fault_error(name: str, fault: _Fault) -> DataError:
    where = f"{name}:{fault.line}: at byte offset {fault.offset}"
    if fault.what == _NUL:
        return DataError(f"{where}, a NUL byte: this is binary data, not text; give a text file (plain or gzip)")
    return DataError(f"{where}, {fault.what}; {_FIX}")


def decode_bytes(data: bytes, *, encoding: str = "utf-8", errors: str = "strict", name: str = "input") -> str:
    """`data` decoded with the checks `TextFile` makes (for text that is not a file, such as
    standard input): an undecodable byte or a NUL is a `DataError` naming `name`, line and offset."""
    check_codec(encoding, errors)
    try:
        text = data.decode(encoding, errors)
    except UnicodeError:
        text = None
    if text is None or "\x00" in text:
        fault = _first_fault([data], encoding, errors)
        if fault is None:  # cannot happen: the same bytes failed above
            raise DataError(f"{name}: the text cannot be decoded as {encoding}; {_FIX}")
        raise _fault_error(name, fault)
    return text


def _range(path: Path, start: int, stop: int | None) -> BinaryIO:
    size = path.stat().st_size
    return io.BufferedReader(_ByteRange(path, start, size if stop is None else min(stop, size)))  # type: ignore[return-value]


class TextFile:
    """A text file open for checked, bounded reading (see the module's description).

    **Arguments:**

    - `path`: the file, plain or gzip.
    - `encoding`: its text encoding (default UTF-8); `errors`: ``"strict"`` (the
      default: a bad byte is a `DataError`), ``"replace"`` or ``"ignore"``.
    - `max_chars`: the most characters read at once (and the longest line `lines` keeps).
    - `what`: how messages name the file (``"corpus file"``, ``"pairs file"``, ...).
    - `start`, `stop`: read only the bytes ``[start, stop)`` of a plain file (a part
      of a corpus cut at line ends, `zoo.data.corpus_files.split_corpus`); a gzip
      stream cannot be entered midway, so it is read whole.

    Use it as a context manager. `line` is the number of the line the last piece
    came from; `skipped` counts the lines `lines` dropped for their length.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        encoding: str = "utf-8",
        errors: str = "strict",
        max_chars: int = MAX_LINE_CHARS,
        what: str = "text file",
        start: int = 0,
        stop: int | None = None,
    ) -> None:
        check_codec(encoding, errors)
        if max_chars < 1:
            raise DataError(f"max_chars must be positive, got {max_chars}")
        self.path, self.encoding, self.errors, self.max_chars = Path(path), encoding, errors, max_chars
        self.line, self.skipped = 0, 0
        with open_input(self.path, what) as probe:  # a missing file, a FIFO, a device: a DataError saying so
            head = probe.read(_SNIFF_BYTES)
        self.gzipped = head[:2] == _GZIP_MAGIC
        if b"\x00" in _text_head(head, self.gzipped) and _ascii_compatible(encoding):
            raise self._fault_error(1)  # binary: say so before any line is read
        if self.gzipped and (start or stop is not None):
            raise DataError(f"{self.path} is gzip, which cannot be read from a byte offset: read it whole")
        raw = _open_binary(self.path, self.gzipped) if (start, stop) == (0, None) else _range(self.path, start, stop)
        self._handle = io.TextIOWrapper(raw, encoding=encoding, errors=errors, newline=None)
        # a byte-order mark opening a UTF-8 file (as Windows editors write) is not text: left in,
        # it would glue itself to the first word or hide the first line's label
        self._bom = start == 0 and codecs.lookup(encoding).name == "utf-8"

    def __enter__(self) -> TextFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(*_CORRUPT):  # the reads already said what was wrong with a gzip stream
            self._handle.close()

    def pieces(self) -> Iterator[str]:
        """The text in pieces of at most `max_chars` characters; a piece ending in ``"\\n"`` ends a line."""
        number = 1
        while True:
            try:
                piece = self._handle.readline(self.max_chars)
            except UnicodeError:
                raise self._fault_error(number) from None
            except _CORRUPT as error:
                raise self._corrupt_error(number, error) from None
            if not piece:
                return
            if self._bom:
                self._bom, piece = False, piece.removeprefix("\ufeff")
                if not piece:
                    continue
            if "\x00" in piece:
                raise self._fault_error(number)
            self.line = number
            yield piece
            if piece.endswith("\n"):
                number += 1

    def lines(self) -> Iterator[tuple[int, str]]:
        """``(line number, line)`` without its line end; a line over `max_chars` is skipped
        and counted in `skipped`, and never more than `max_chars` of it is held."""
        parts: list[str] = []
        size, too_long = 0, False
        for piece in self.pieces():
            ends = piece.endswith("\n")
            if not too_long:
                text = piece[:-1] if ends else piece
                size += len(text)
                if size > self.max_chars:
                    too_long, parts = True, []
                    self.skipped += 1
                else:
                    parts.append(text)
            if ends:
                if not too_long:
                    yield self.line, "".join(parts)
                parts, size, too_long = [], 0, False
        if parts:
            yield self.line, "".join(parts)

    def warn_skipped(self) -> None:
        """Warn (`LongLinesWarning`) if `lines` skipped any line for its length."""
        if self.skipped:
            warnings.warn(
                f"{self.path}: skipped {self.skipped} line(s) longer than {self.max_chars:,} characters "
                "(raise the limit with max_line_chars=... to keep them)",
                LongLinesWarning,
                stacklevel=2,
            )

    def _fault_error(self, number: int) -> DataError:
        fault = _first_fault(_chunks(self.path, self.gzipped), self.encoding, self.errors)
        if fault is None:  # only if the file changed while it was read: say what is known
            return DataError(f"{self.path}:{number}: the text cannot be decoded as {self.encoding}; {_FIX}")
        return _fault_error(str(self.path), fault)

    def _corrupt_error(self, number: int, error: BaseException) -> DataError:
        return DataError(
            f"{self.path}: the gzip stream is truncated or corrupt (at line {number}: {error}); "
            "the file was probably cut short while downloading or copying: fetch or compress it again"
        )


def open_text(
    path: str | os.PathLike,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_chars: int = MAX_LINE_CHARS,
    what: str = "text file",
    start: int = 0,
    stop: int | None = None,
) -> TextFile:
    """Open `path` for checked, bounded reading: a `TextFile` (use it in a ``with`` block);
    `start` and `stop` read a byte range of a plain file."""
    return TextFile(path, encoding=encoding, errors=errors, max_chars=max_chars, what=what, start=start, stop=stop)


def read_lines(
    path: str | os.PathLike,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_chars: int = MAX_LINE_CHARS,
    what: str = "text file",
) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each line of `path` (see `TextFile.lines`); after the last
    line, a `LongLinesWarning` says how many lines over `max_chars` were skipped."""
    with open_text(path, encoding=encoding, errors=errors, max_chars=max_chars, what=what) as text:
        yield from text.lines()
    text.warn_skipped()

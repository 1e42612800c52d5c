"""gensim.models.word2vec's corpus readers: `LineSentence`, `PathLineSentences`, `Text8Corpus`.

Each is a restartable iterable of token lists (``Word2Vec(LineSentence(path))`` reads it once
for the vocabulary and once per epoch). Lines are split on whitespace with their case kept,
as gensim splits them; a line longer than `max_sentence_length` words is cut into sentences
of that many, and a line without words gives none. Files ending in ``.gz``, ``.bz2`` or
``.xz`` are decompressed, as gensim's ``utils.open`` does. Files are read as every zoo text
input is, in bounded pieces (a 3 GB line is never held whole): regular files only, UTF-8 (a bad
byte is a `DataError` naming its line), no NUL byte, a damaged stream an error, and a line ends at
``\n``, ``\r\n`` or a lone ``\r`` (gensim ends one at ``\n`` only).
"""

from __future__ import annotations

import bz2
import io
import lzma
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from zoo.plugin_api import DataError, open_input, open_text

__all__ = ["LineSentence", "PathLineSentences", "Text8Corpus"]

_OPENERS = {".bz2": bz2.BZ2File, ".xz": lzma.LZMAFile}
"""Decompressing readers by file suffix (gensim's ``utils.open`` opens these too); plain and gzip
files are read by zoo's text reader (`open_text`), which tells gzip by its first bytes."""

_PIECE = 1 << 20
"""Characters read at a time; also the longest word (a longer run without whitespace is no text)."""


def _pieces(path: str | os.PathLike) -> Iterator[str]:
    """The text of the corpus file `path` in pieces of at most `_PIECE` characters, checked as every
    text input is: a regular file (a FIFO or a device is refused, never waited on), UTF-8 (a bad
    byte names its place), no NUL byte, a truncated or corrupt compressed stream a `DataError`."""
    path = Path(path)
    opener = _OPENERS.get(path.suffix.lower())
    if opener is None:
        with open_text(path, what="corpus file", max_chars=_PIECE) as text:
            yield from text.pieces()
        return
    with open_input(path, "corpus file") as raw, opener(raw) as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8", newline=None)  # line ends as open_text's
        number = 1
        while True:
            try:
                piece = text.readline(_PIECE)
            except UnicodeDecodeError as error:
                raise DataError(f"{path}:{number}: {error.reason}: not UTF-8 text") from None
            except (OSError, EOFError, lzma.LZMAError) as error:
                raise DataError(
                    f"{path}: the {path.suffix[1:]} stream is truncated or corrupt ({error}): "
                    "fetch or compress it again"
                ) from None
            if not piece:
                return
            if "\x00" in piece:
                raise DataError(f"{path}:{number}: a NUL byte: this is binary data, not text")
            yield piece
            number += piece.endswith("\n")


def _words(pieces: Iterable[str], lines: bool) -> Iterator[list[str] | None]:
    """The words of `pieces`, a list at a time, and None at each line end (with `lines`; else line
    ends are spaces); a word cut between two pieces is joined, and never longer than `_PIECE`."""
    tail = ""
    for piece in pieces:
        parts = (tail + piece).split("\n") if lines else [tail + piece]
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            words = part.split()
            tail = words.pop() if last and words and not part[-1].isspace() else ""
            if len(tail) > _PIECE:
                raise DataError(f"a word of more than {_PIECE} characters: not a text corpus?")
            if words:
                yield words
            if not last:
                yield None
    if tail:
        yield [tail]


def _sentences(lines: Any, max_sentence_length: int, limit: int | None) -> Iterator[list[str]]:
    """The token lists of `lines` (bytes or str), each cut into pieces of `max_sentence_length`
    tokens; `limit` lines at most (None: all)."""
    for number, line in enumerate(lines):
        if limit is not None and number >= limit:
            return
        words = _text(line).split()
        for start in range(0, len(words), max_sentence_length):
            yield words[start : start + max_sentence_length]  # an empty line gives none, as in gensim


def _file_sentences(path: str | os.PathLike, max_sentence_length: int, limit: int | None) -> Iterator[list[str]]:
    """`_sentences` of the lines of the file `path`, read in bounded pieces (`_pieces`)."""
    sentence: list[str] = []
    number = 0
    for words in _words(_pieces(path), lines=True):
        if limit is not None and number >= limit:
            return
        if words is None:
            number += 1
            if sentence:
                yield sentence
            sentence = []
            continue
        sentence += words
        while len(sentence) > max_sentence_length:
            yield sentence[:max_sentence_length]
            sentence = sentence[max_sentence_length:]
    if sentence and (limit is None or number < limit):
        yield sentence


def _text(line: bytes | str) -> str:
    return line if isinstance(line, str) else line.decode("utf-8")


class LineSentence:
    """One sentence a line of `source`: a file path (plain, ``.gz``, ``.bz2`` or ``.xz``) or an
    open file object (bytes or text; read again from its start on every pass), words split on
    whitespace. `max_sentence_length` cuts longer lines; `limit` reads that many lines."""

    def __init__(self, source: Any, max_sentence_length: int = 10000, limit: int | None = None) -> None:
        if isinstance(max_sentence_length, bool) or not isinstance(max_sentence_length, int) or max_sentence_length < 1:
            raise DataError(f"max_sentence_length must be an integer >= 1, got {max_sentence_length!r}")
        self.source, self.max_sentence_length, self.limit = source, max_sentence_length, limit

    def __iter__(self) -> Iterator[list[str]]:
        if isinstance(self.source, str | os.PathLike):
            yield from _file_sentences(self.source, self.max_sentence_length, self.limit)
            return
        if not hasattr(self.source, "read"):
            raise DataError(f"LineSentence reads a path or an open file, got {type(self.source).__name__}")
        self.source.seek(0)  # a file object is read from its start on every pass
        yield from _sentences(self.source, self.max_sentence_length, self.limit)


class PathLineSentences:
    """`LineSentence` over every file of the folder `source` (sorted by name; subfolders and
    hidden files left out), or over `source` itself when it is a file."""

    def __init__(self, source: str | os.PathLike, max_sentence_length: int = 10000, limit: int | None = None) -> None:
        path = Path(source)
        if path.is_file():
            self.input_files = [str(path)]
        elif path.is_dir():
            self.input_files = sorted(str(p) for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            if not self.input_files:
                raise DataError(f"{path}: the folder holds no files")
        else:
            raise DataError(f"{path}: no such file or folder")
        self.source, self.max_sentence_length, self.limit = str(path), max_sentence_length, limit

    def __iter__(self) -> Iterator[list[str]]:
        for name in self.input_files:
            yield from LineSentence(name, self.max_sentence_length, self.limit)


class Text8Corpus:
    """The text8 file `fname` (one line of words, or several) as sentences of
    `max_sentence_length` words each, the words running on across line ends."""

    def __init__(self, fname: str | os.PathLike, max_sentence_length: int = 10000) -> None:
        self.fname, self.max_sentence_length = fname, max_sentence_length

    def __iter__(self) -> Iterator[list[str]]:
        sentence: list[str] = []
        for words in _words(_pieces(self.fname), lines=False):
            sentence.extend(words or ())
            while len(sentence) >= self.max_sentence_length:
                yield sentence[: self.max_sentence_length]
                sentence = sentence[self.max_sentence_length :]
        if sentence:
            yield sentence

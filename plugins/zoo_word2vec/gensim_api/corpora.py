"""gensim.models.word2vec's corpus readers: `LineSentence`, `PathLineSentences`, `Text8Corpus`.

Each is a restartable iterable of token lists (``Word2Vec(LineSentence(path))`` reads it once
for the vocabulary and once per epoch). Lines are split on whitespace with their case kept,
as gensim splits them; a line longer than `max_sentence_length` words is cut into sentences
of that many, and a line without words gives none. Files ending in ``.gz``, ``.bz2`` or
``.xz`` are decompressed, as gensim's ``utils.open`` does.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from zoo.plugin_api import DataError

__all__ = ["LineSentence", "PathLineSentences", "Text8Corpus"]

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
"""Decompressing openers by file suffix (gensim's ``utils.open`` opens these too)."""


def _open_bytes(path: str | os.PathLike) -> IO[bytes]:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"no corpus file at {path}")
    return _OPENERS.get(path.suffix.lower(), open)(path, "rb")


def _text(line: bytes | str) -> str:
    return line if isinstance(line, str) else line.decode("utf-8")


def _sentences(lines: Any, max_sentence_length: int, limit: int | None) -> Iterator[list[str]]:
    """The token lists of `lines` (bytes or str), each cut into pieces of `max_sentence_length`
    tokens; `limit` lines at most (None: all)."""
    for number, line in enumerate(lines):
        if limit is not None and number >= limit:
            return
        words = _text(line).split()
        for start in range(0, len(words), max_sentence_length):
            yield words[start : start + max_sentence_length]  # an empty line gives none, as in gensim


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
            with _open_bytes(self.source) as handle:
                yield from _sentences(handle, self.max_sentence_length, self.limit)
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
        with _open_bytes(self.fname) as handle:
            for line in handle:
                sentence.extend(_text(line).split())
                while len(sentence) >= self.max_sentence_length:
                    yield sentence[: self.max_sentence_length]
                    sentence = sentence[self.max_sentence_length :]
        if sentence:
            yield sentence

"""Which files a corpus names, and how it is cut into parts that can be read apart.

A corpus is one path or several, read one after the other; each may be a file
(plain text or gzip), a folder (its files, sorted by name, hidden ones left out)
or a glob pattern (``"corpus/*.txt.gz"``, ``"data/**/*.txt"``: the files it
matches, sorted by name), so the order, and everything counted or trained from
it, is the same on every run and every machine::

    corpus_files(["news/", "wiki-*.txt.gz"])    # [Path("news/a.txt"), ..., Path("wiki-00.txt.gz"), ...]

`split_corpus` cuts a corpus into `CorpusPart` s for workers that read it at
the same time (`zoo.data.corpus_pool`): a plain-text file into byte ranges that
begin and end at line ends, a gzip file whole (a gzip stream cannot be entered
midway). Read one after the other, the parts give exactly the lines of the
corpus read whole: a line is never cut, a file's end is a line's end.
"""

from __future__ import annotations

import codecs
import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zoo.errors import DataError

__all__ = ["MIN_PART_BYTES", "CorpusPart", "corpus_files", "split_corpus"]

MIN_PART_BYTES = 1 << 20
"""The smallest part `split_corpus` cuts a plain-text file into (1 MiB)."""

_GLOB_CHARS = frozenset("*?[")
_GZIP_MAGIC = b"\x1f\x8b"
_SCAN = 1 << 16


@dataclass(frozen=True)
class CorpusPart:
    """The bytes ``[start, stop)`` of one corpus file (`stop` None: to its end), which begin a line and end one.

    A corpus may be given as a list of parts (`split_corpus`); the corpus readers
    (`zoo.data.corpus.iter_lines` and the functions built on it) read each part as a file.
    """

    path: Path
    start: int = 0
    stop: int | None = None

    @property
    def whole(self) -> bool:
        """Whether the part is its whole file."""
        return self.start == 0 and self.stop is None


def _expand(entry: str | os.PathLike) -> list[Path]:
    """The files one corpus entry names: itself, a folder's files, or a pattern's matches."""
    path = Path(entry)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise DataError(f"the corpus folder {path} holds no files; put text files (plain or .gz) in it")
        return files
    text = os.fspath(entry)
    if _GLOB_CHARS & set(text):
        matches = sorted(Path(m) for m in glob.glob(text, recursive=True) if os.path.isfile(m))
        if not matches:
            raise DataError(
                f"the corpus pattern {text!r} matches no file; check the folder and the pattern "
                "(quote it on the command line so that zoo, not the shell, expands it)"
            )
        return matches
    raise DataError(f"no corpus file at {path} (a corpus is files, folders or glob patterns such as 'dir/*.txt')")


def corpus_files(corpus: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Path]:
    """The files of `corpus` (a path, a folder, a glob pattern, or a sequence of them), in reading order.

    Each entry keeps its place; a folder gives its files (not its subfolders, not
    hidden files) and a pattern its matches (``**`` spans folders), each sorted by
    name. A missing file, an empty folder or a pattern matching nothing is a
    `DataError` naming it.
    """
    entries = [corpus] if isinstance(corpus, str | os.PathLike) else list(corpus)
    if not entries:
        raise DataError("an empty list of corpus files")
    return [path for entry in entries for path in _expand(entry)]


def _splittable(path: Path, encoding: str) -> bool:
    """Whether `path` can be cut at ``b"\\n"`` bytes: plain text in an encoding where that byte is always
    a line feed and where decoding may start after any line feed (UTF-8, ASCII, one-byte code pages)."""
    with open(path, "rb") as probe:
        if probe.read(2) == _GZIP_MAGIC:
            return False
    name = codecs.lookup(encoding).name
    return name in ("utf-8", "ascii") or name.startswith(("iso8859", "latin", "cp12", "koi8", "mac-"))


def _line_start(handle, at: int, size: int) -> int:
    """The first offset at or after `at` that begins a line (just after a ``b"\\n"``; `size` if none)."""
    if at <= 0:
        return 0
    handle.seek(at - 1)
    position = at - 1
    while position < size:
        block = handle.read(_SCAN)
        if not block:
            break
        found = block.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(block)
    return size


def _file_parts(path: Path, pieces: int) -> list[CorpusPart]:
    """`path` cut into at most `pieces` byte ranges of about equal size, each ending at a line end."""
    size = path.stat().st_size
    if pieces <= 1 or size == 0:
        return [CorpusPart(path)]
    starts = [0]
    with open(path, "rb") as handle:
        for k in range(1, pieces):
            start = _line_start(handle, max(k * size // pieces, starts[-1] + 1), size)
            if start >= size:
                break
            if start > starts[-1]:
                starts.append(start)
    if len(starts) == 1:
        return [CorpusPart(path)]
    stops = [*starts[1:], None]
    return [CorpusPart(path, a, b) for a, b in zip(starts, stops, strict=True)]


def split_corpus(
    corpus: str | os.PathLike | Sequence[str | os.PathLike],
    parts: int,
    *,
    encoding: str = "utf-8",
    min_bytes: int = MIN_PART_BYTES,
) -> list[CorpusPart]:
    """Cut the files of `corpus` (`corpus_files`) into about `parts` parts, in reading order.

    The bytes of the corpus are shared out evenly: a plain-text file (decoded with
    `encoding`, one where a ``b"\\n"`` byte is always a line end) is cut into byte
    ranges of at least `min_bytes` that begin after a line feed; a gzip file, a file
    in another encoding (UTF-16, ...) or a small one is one part. How a corpus is cut
    changes how it can be shared among workers, never what is read.
    """
    if parts < 1:
        raise DataError(f"parts must be at least 1, got {parts}")
    if min_bytes < 1:
        raise DataError(f"min_bytes must be positive, got {min_bytes}")
    files = corpus_files(corpus)
    sizes = [path.stat().st_size for path in files]
    target = max(sum(sizes) / parts, min_bytes)
    found: list[CorpusPart] = []
    for path, size in zip(files, sizes, strict=True):
        pieces = max(1, round(size / target)) if _splittable(path, encoding) else 1
        found.extend(_file_parts(path, pieces))
    return found

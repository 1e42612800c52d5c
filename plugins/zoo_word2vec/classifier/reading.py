"""fastText-format files (``__label__X text`` lines) read as fastText reads them, in compiled code.

fastText splits a line into tokens at the bytes ``' ' '\\t' '\\v' '\\f' '\\r'`` (and ends it at
``'\\n'``); a token that starts with the label prefix is a label, any other a word of the text.
`read_fasttext_lines` reads the file in chunks of whole lines: one compiled pass per chunk
finds the tokens, hashes them and gives each distinct one an id (an open-addressing table
keyed by its bytes), so Python only decodes each distinct token of a chunk once. Lines without
a token are skipped. A NUL byte marks a binary file and is refused, as zoo's text readers
refuse it. A line is read whole when it ends within a chunk (4 MiB) of where it starts; one that
runs on for more than `MAX_LINE_CHARS` bytes past a chunk is skipped, with a `LongLinesWarning`.
"""

from __future__ import annotations

import codecs
import warnings
from pathlib import Path

import numpy as np
from numba import njit

from zoo.plugin_api import CORRUPT_GZIP, MAX_LINE_CHARS, DataError, LongLinesWarning, corrupt_gzip, open_binary
from zoo_word2vec.classifier.encoded import EncodedLines
from zoo_word2vec.classifier.hashing import hash_spans, hash_strings
from zoo_word2vec.classifier.splitting import SEPARATORS

__all__ = ["FAST_ENCODINGS", "read_fasttext_lines"]

FAST_ENCODINGS = frozenset({"utf-8", "ascii", "iso8859-1", "cp1252"})
"""Encodings in which every separator byte is the character itself (read here; others in Python)."""

_CHUNK = 1 << 22  # bytes read at a time
_SEPARATORS = np.zeros(256, dtype=np.bool_)
_SEPARATORS[[ord(c) for c in SEPARATORS if c not in "\n\0"]] = True  # '\n' ends a line, NUL is refused


@njit(nogil=True, cache=True)
def _scan(buf, separators):
    """Tokens of the whole lines in `buf` (it ends after a ``'\\n'``, or at the file's end).

    **Returns:** ``(ids [T] int32, line_sizes [L] int64, starts [U], ends [U], nul)``: each
    token's id among the chunk's distinct tokens (first seen first), the tokens of each line
    that has any, where each distinct token's bytes are, and the offset of the first NUL (-1: none).
    """
    n = buf.shape[0]
    starts = np.empty(n // 2 + 1, dtype=np.int64)
    ends = np.empty(n // 2 + 1, dtype=np.int64)
    tokens, nul = 0, -1
    for p in range(n):  # pass 1: token boundaries
        b = buf[p]
        if b == 0 and nul < 0:
            nul = p
        inside = not (separators[b] or b == 10 or b == 0)
        if inside and (p == 0 or separators[buf[p - 1]] or buf[p - 1] == 10 or buf[p - 1] == 0):
            starts[tokens] = p
        if inside and (p == n - 1 or separators[buf[p + 1]] or buf[p + 1] == 10 or buf[p + 1] == 0):
            ends[tokens] = p + 1
            tokens += 1
    hashes = np.empty(tokens, dtype=np.uint32)
    size = 1
    while size < 2 * tokens + 2:
        size *= 2
    table = np.full(size, -1, dtype=np.int32)
    ids = np.empty(tokens, dtype=np.int32)
    u_starts = np.empty(tokens, dtype=np.int64)
    u_ends = np.empty(tokens, dtype=np.int64)
    distinct = 0
    line_sizes = np.zeros(n // 2 + 1, dtype=np.int64)
    lines, in_line, newline = 0, 0, 0
    own = hash_spans(buf, starts[:tokens], ends[:tokens])
    for t in range(tokens):  # pass 2: distinct tokens, lines
        a, b = starts[t], ends[t]
        while newline < a:  # line ends before this token
            if buf[newline] == 10 and in_line:
                line_sizes[lines] = in_line
                lines += 1
                in_line = 0
            newline += 1
        h = own[t]
        slot = np.int64(h) & (size - 1)
        while True:
            u = table[slot]
            if u < 0:
                table[slot] = distinct
                u_starts[distinct], u_ends[distinct], hashes[distinct] = a, b, h
                u = distinct
                distinct += 1
                break
            if hashes[u] == h and u_ends[u] - u_starts[u] == b - a:
                same = True
                for k in range(b - a):
                    if buf[u_starts[u] + k] != buf[a + k]:
                        same = False
                        break
                if same:
                    break
            slot = (slot + 1) & (size - 1)
        ids[t] = u
        in_line += 1
    if in_line:
        line_sizes[lines] = in_line
        lines += 1
    return ids, line_sizes[:lines], u_starts[:distinct], u_ends[:distinct], nul


def _line_number(chunk: bytes, offset: int, before: int) -> int:
    return before + chunk.count(b"\n", 0, offset) + 1


class _Merge:
    """The distinct tokens of all chunks so far, and each chunk's ids mapped onto them."""

    def __init__(self, path: Path, encoding: str, label_prefix: str) -> None:
        self.path, self.encoding, self.prefix = path, encoding, label_prefix
        self.index: dict[str, int] = {}
        self.ids: list[np.ndarray] = []
        self.sizes: list[np.ndarray] = []

    def add(self, chunk: bytes, before: int) -> int:
        """Add the whole lines of `chunk` (lines `before` + 1 on); return how many lines it holds."""
        buf = np.frombuffer(chunk, dtype=np.uint8)
        ids, sizes, starts, ends, nul = _scan(buf, _SEPARATORS)
        if nul >= 0:
            raise DataError(
                f"{self.path}:{_line_number(chunk, nul, before)}: a NUL byte: this is binary data, not text; "
                "give a text file (plain or gzip)"
            )
        local = np.empty(starts.size, dtype=np.int32)
        index = self.index
        for u, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            try:
                token = chunk[a:b].decode(self.encoding)
            except UnicodeDecodeError as error:
                bad = chunk[a + error.start : a + error.end].hex()
                raise DataError(
                    f"{self.path}:{_line_number(chunk, a, before)}: byte {bad} "
                    f"is not valid {self.encoding} ({error.reason}); name the file's encoding (--encoding latin-1)"
                ) from None
            local[u] = index.setdefault(token, len(index))
        self.ids.append(local[ids])
        self.sizes.append(sizes)
        return chunk.count(b"\n")

    def lines(self) -> EncodedLines:
        tokens = list(self.index)
        is_label = np.fromiter((t.startswith(self.prefix) for t in tokens), dtype=bool, count=len(tokens))
        ids = np.concatenate(self.ids) if self.ids else np.zeros(0, np.int32)
        sizes = np.concatenate(self.sizes) if self.sizes else np.zeros(0, np.int64)
        line_of = np.repeat(np.arange(sizes.size), sizes)
        labelled = is_label[ids]
        words = np.flatnonzero(~is_label)
        labels = np.flatnonzero(is_label)
        renumber = np.empty(len(tokens), dtype=np.int32)  # word ids and label ids, each first seen first
        renumber[words], renumber[labels] = np.arange(words.size), np.arange(labels.size)
        offsets = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(line_of[~labelled], minlength=sizes.size), out=offsets[1:])
        label_offsets = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(line_of[labelled], minlength=sizes.size), out=label_offsets[1:])
        word_tokens = [tokens[i] for i in words.tolist()]
        return EncodedLines(
            word_tokens, hash_strings(word_tokens), renumber[ids[~labelled]], offsets,
            [tokens[i] for i in labels.tolist()], renumber[ids[labelled]], label_offsets,
        )  # fmt: skip


def read_fasttext_lines(path: str | Path, *, label_prefix: str = "__label__", encoding: str = "utf-8") -> EncodedLines:
    """The lines of a fastText-format file (plain or gzip) as `EncodedLines`, split as fastText splits them."""
    path = Path(path)
    if codecs.lookup(encoding).name not in FAST_ENCODINGS:
        raise DataError(f"{encoding!r} is not an encoding read here; read the file with read_labelled")
    merge = _Merge(path, encoding, label_prefix)
    rest, before, skipped = b"", 0, 0
    bom = codecs.BOM_UTF8 if codecs.lookup(encoding).name == "utf-8" else None  # not text: see zoo's TextFile
    with open_binary(path, "labelled file") as handle:
        try:
            while more := handle.read(_CHUNK):
                if bom is not None:
                    more, bom = more.removeprefix(bom), None
                data = rest + more
                cut = data.rfind(b"\n") + 1
                before += merge.add(data[:cut], before) if cut else 0
                rest = data[cut:]
                if len(rest) > MAX_LINE_CHARS:  # a line carried over too long: skip it
                    rest, skipped, before = _skip_line(handle), skipped + 1, before + 1
            merge.add(rest, before)
        except CORRUPT_GZIP as error:
            raise corrupt_gzip(path, error) from None
    if skipped:
        warnings.warn(f"{path}: skipped {skipped} lines over {MAX_LINE_CHARS} bytes", LongLinesWarning, stacklevel=2)
    return merge.lines()


def _skip_line(handle) -> bytes:
    """Read on to the end of the current line; return what follows it."""
    while True:
        more = handle.read(_CHUNK)
        if not more:
            return b""
        cut = more.find(b"\n")
        if cut >= 0:
            return more[cut + 1 :]

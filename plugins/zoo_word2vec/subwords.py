"""fastText's character n-grams, computed over the bytes of words as the fastText tool does.

A word is wrapped in ``<`` and ``>``. A *character* is a byte that is not a UTF-8
continuation byte (``b & 0xC0 != 0x80``) together with the continuation bytes
that follow it, so valid UTF-8 splits into Unicode characters and any other
bytes split the same way fastText splits them. From each character, fastText
takes the runs of 1 to `maxn` characters that fit in the wrapped word and
keeps those of at least `minn`, except a run of one character that is the
``<`` or the ``>`` alone. Runs are listed by start position, shortest first.

Each run is hashed with 32-bit FNV-1a, each byte sign-extended before the XOR
(fastText XORs ``uint32_t(int8_t(byte))``, so bytes >= 0x80 flip the top 24
bits too). fastText's row for a run is ``nwords + hash % bucket`` in its input
matrix. The word ``</s>`` (fastText's end of line) has no n-grams.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

__all__ = ["EOS", "count_ngrams", "fnv1a", "ngram_hashes"]

EOS = b"</s>"
"""fastText's end-of-line token: in its vocabulary with its own row only, never n-grams."""

_FNV_OFFSET = np.uint32(2166136261)
_FNV_PRIME = np.uint32(16777619)


def fnv1a(data: bytes) -> int:
    """fastText's 32-bit FNV-1a of `data` (each byte sign-extended to 32 bits before the XOR)."""
    h = int(_FNV_OFFSET)
    for byte in data:
        h = ((h ^ (byte | 0xFFFFFF00 if byte >= 0x80 else byte)) * int(_FNV_PRIME)) & 0xFFFFFFFF
    return h


class _Layout(NamedTuple):
    """The wrapped words ``<w>`` concatenated, and where their characters start."""

    flat: np.ndarray  # [B] uint8: every wrapped word's bytes
    ends: np.ndarray  # [W] int64: where each wrapped word ends in `flat`
    is_start: np.ndarray  # [B + 1] bool: a character starts at byte p (True at the very end)
    starts: np.ndarray  # [C] int64: the byte where each character starts
    word_of: np.ndarray  # [C] int64: the word each character belongs to


def _layout(words: Sequence[bytes]) -> _Layout:
    flat = np.frombuffer(b"".join(b"<" + w + b">" for w in words), dtype=np.uint8)
    ends = np.cumsum(np.fromiter((len(w) + 2 for w in words), dtype=np.int64, count=len(words)))
    is_start = np.ones(flat.size + 1, dtype=bool)
    is_start[:-1] = (flat & 0xC0) != 0x80  # '<' is ASCII: every word starts a character
    starts = np.flatnonzero(is_start[:-1])
    return _Layout(flat, ends, is_start, starts, np.searchsorted(ends, starts, side="right"))


def _start_ranks(word_of: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per character start: its index within its word, and how many characters remain from it."""
    chars = np.bincount(word_of, minlength=size)
    first = np.cumsum(chars) - chars
    rank = np.arange(word_of.size) - first[word_of]
    return rank, chars[word_of] - rank


def count_ngrams(words: Sequence[bytes], minn: int, maxn: int) -> np.ndarray:
    """How many n-grams each word has ``[W]`` int64, without listing them (cheap: one pass over the bytes)."""
    low = max(minn, 1)
    if maxn < low or not words:
        return np.zeros(len(words), dtype=np.int64)
    word_of = _layout(words).word_of
    rank, left = _start_ranks(word_of, len(words))
    per_start = np.maximum(np.minimum(left, maxn) - low + 1, 0)
    if low == 1:  # the '<' alone and the '>' alone are left out
        per_start -= (rank == 0) | (left == 1)
    return np.bincount(word_of, weights=per_start, minlength=len(words)).astype(np.int64)


def ngram_hashes(words: Sequence[bytes], minn: int, maxn: int) -> tuple[np.ndarray, np.ndarray]:
    """The hashes of every word's n-grams, in fastText's order (`fnv1a`, before ``% bucket``).

    **Returns:** ``(offsets [W + 1] int64, hashes [N] uint32)``; word i's hashes are
    ``hashes[offsets[i]:offsets[i + 1]]``. The work is one pass per byte of the longest
    n-gram, over all words at once; the caller bounds the total (`count_ngrams`).
    """
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    low = max(minn, 1)
    if maxn < low or not words:
        return offsets, np.zeros(0, dtype=np.uint32)
    flat, ends, is_start, starts, word_of = _layout(words)
    rank, left = _start_ranks(word_of, len(words))
    signed = flat.astype(np.int8).astype(np.int32).astype(np.uint32)
    # one running hash per start character, extended a byte at a time; finished starts drop out
    alive = np.arange(starts.size)
    pos, end = starts.copy(), ends[word_of]
    h = np.full(starts.size, _FNV_OFFSET, dtype=np.uint32)
    n = np.zeros(starts.size, dtype=np.int64)
    alone_ok = (rank != 0) & (left != 1)  # may a one-character run start here?
    found_start, found_n, found_hash = [], [], []
    while alive.size:
        h = (h ^ signed[pos]) * _FNV_PRIME
        pos += 1
        done_char = is_start[pos]
        n += done_char
        emit = done_char & (n >= low) & ((n > 1) | alone_ok[alive])
        found_start.append(alive[emit])
        found_n.append(n[emit])
        found_hash.append(h[emit])
        keep = (pos < end) & ~(done_char & (n >= maxn))
        alive, pos, end, h, n = alive[keep], pos[keep], end[keep], h[keep], n[keep]
    start_of, length = np.concatenate(found_start), np.concatenate(found_n)
    order = np.lexsort((length, start_of))
    hashes = np.concatenate(found_hash)[order]
    offsets[1:] = np.cumsum(np.bincount(word_of[start_of], minlength=len(words)))
    return offsets, hashes

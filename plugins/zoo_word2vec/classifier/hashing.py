"""fastText's input rows of a line: word ids, character n-grams and hashed word n-grams.

fastText (``Dictionary::getLine`` and ``addWordNgrams``) keeps, per token of a line, its
32-bit FNV-1a hash as an ``int32``; a word n-gram of tokens ``t_i .. t_j`` is hashed as

    h = uint64(int64(hash_i));  h = h * 116049371 + uint64(int64(hash_k))  for k = i+1 .. j

in 64-bit unsigned arithmetic (each int32 hash sign-extended), and its input row is
``nwords + h % bucket``. Every token counts here, words out of the vocabulary included
(they have no row of their own, but their hash joins the n-grams), and so does the
end-of-line token ``</s>`` that closes every line.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from zoo_word2vec import subwords

__all__ = ["NGRAM_MULTIPLIER", "hash_spans", "hash_strings", "token_hash", "token_hashes", "word_ngram_rows"]

NGRAM_MULTIPLIER = 116049371
"""fastText's multiplier combining the hashes of a word n-gram."""


def token_hash(token: str) -> int:
    """fastText's hash of a token as the signed 32-bit integer it keeps (``int32_t(fnv1a(utf8))``)."""
    h = subwords.fnv1a(token.encode("utf-8"))
    return h - (1 << 32) if h >= 1 << 31 else h


def token_hashes(tokens: Sequence[str]) -> np.ndarray:
    """`token_hash` of each token ``[n]`` int32."""
    return np.fromiter((token_hash(t) for t in tokens), dtype=np.int32, count=len(tokens))


@njit(nogil=True, cache=True)
def hash_spans(flat: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """fastText's hash of each byte span ``flat[starts[i]:ends[i]]`` ``[n]`` uint32 (`token_hash`
    before the int32 view): FNV-1a, each byte sign-extended before the XOR."""
    out = np.empty(starts.shape[0], dtype=np.uint32)
    for i in range(starts.shape[0]):
        h = np.uint32(2166136261)
        for p in range(starts[i], ends[i]):
            byte = np.uint32(flat[p])
            if byte >= 128:
                byte |= np.uint32(0xFFFFFF00)
            h = np.uint32((h ^ byte) * np.uint32(16777619))
        out[i] = h
    return out


def hash_strings(tokens: Sequence[str]) -> np.ndarray:
    """`token_hash` of each token ``[n]`` int32, computed over their UTF-8 bytes at once."""
    encoded = [t.encode("utf-8") for t in tokens]
    ends = np.cumsum(np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded)))
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return hash_spans(flat, ends - np.diff(ends, prepend=0), ends).view(np.int32)


@njit(nogil=True, cache=True)
def _count_ngrams(offsets: np.ndarray, n: int) -> np.ndarray:
    counts = np.zeros(offsets.shape[0] - 1, dtype=np.int64)
    for line in range(counts.shape[0]):
        size = offsets[line + 1] - offsets[line]
        for i in range(size):
            counts[line] += min(n - 1, size - 1 - i)
    return counts


@njit(nogil=True, cache=True)
def _fill_ngrams(offsets, hashes, n, bucket, nwords, out_offsets, out):
    multiplier = np.uint64(NGRAM_MULTIPLIER)
    modulus = np.uint64(bucket)
    for line in range(offsets.shape[0] - 1):
        a, b = offsets[line], offsets[line + 1]
        k = out_offsets[line]
        for i in range(a, b):
            h = np.uint64(np.int64(hashes[i]))
            for j in range(i + 1, min(b, i + n)):
                h = h * multiplier + np.uint64(np.int64(hashes[j]))
                out[k] = nwords + np.int64(h % modulus)
                k += 1


def word_ngram_rows(
    offsets: np.ndarray, hashes: np.ndarray, *, n: int, bucket: int, nwords: int
) -> tuple[np.ndarray, np.ndarray]:
    """The input rows of the word n-grams (2 to `n` tokens) of many lines, in fastText's order.

    `offsets` ``[L + 1]`` int64 and `hashes` ``[T]`` int32 (`token_hashes`) hold the lines'
    tokens; line l's are ``hashes[offsets[l]:offsets[l + 1]]``. **Returns:** ``(offsets [L + 1],
    rows [R] int64)``, each row in ``[nwords, nwords + bucket)``. No n-grams when ``n < 2`` or
    ``bucket == 0``.
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    hashes = np.ascontiguousarray(hashes, dtype=np.int32)
    if n < 2 or bucket <= 0:
        return np.zeros_like(offsets), np.zeros(0, dtype=np.int64)
    out_offsets = np.zeros_like(offsets)
    np.cumsum(_count_ngrams(offsets, n), out=out_offsets[1:])
    out = np.empty(int(out_offsets[-1]), dtype=np.int64)
    _fill_ngrams(offsets, hashes, n, bucket, nwords, out_offsets, out)
    return out_offsets, out

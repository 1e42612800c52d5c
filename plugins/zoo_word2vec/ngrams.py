"""Character n-grams of words, hashed into buckets as fastText does (Bojanowski et al. 2017).

A word is wrapped in ``<`` and ``>``; its n-grams are all runs of `min_n` to
`max_n` characters (Unicode characters, not bytes) of the wrapped word, each
hashed with 32-bit FNV-1a over its UTF-8 bytes (bytes sign-extended, as in
fastText's ``Dictionary::hash``) into one of `buckets` rows. The n-gram equal to
the whole wrapped word is kept, as fastText keeps it; its word id is separate.

??? cite "Bojanowski, Grave, Joulin & Mikolov 2017, Enriching Word Vectors with Subword Information"
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zoo_word2vec import subwords

__all__ = ["fnv1a", "fnv1a_many", "ngram_buckets", "ngrams", "subword_table"]

_FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619


def fnv1a(text: str) -> int:
    """fastText's 32-bit FNV-1a of the UTF-8 bytes of `text` (each byte sign-extended first;
    `zoo_word2vec.subwords.fnv1a`, which a fastText ``.bin`` file's n-grams use too)."""
    return subwords.fnv1a(text.encode("utf-8"))


def ngrams(word: str, min_n: int = 3, max_n: int = 6) -> list[str]:
    """The character n-grams of ``<word>``, shortest first from each position, as fastText lists them.

    Single characters that are a boundary (``<`` or ``>``) alone are left out.
    """
    wrapped = f"<{word}>"
    found = []
    for start in range(len(wrapped)):
        for n in range(min_n, max_n + 1):
            end = start + n
            if end > len(wrapped):
                break
            if n == 1 and (start == 0 or end == len(wrapped)):
                continue
            found.append(wrapped[start:end])
    return found


def fnv1a_many(texts: Sequence[str]) -> np.ndarray:
    """`fnv1a` of many strings at once (vectorised over strings, looping over byte positions)."""
    encoded = [t.encode("utf-8") for t in texts]
    if not encoded:
        return np.zeros(0, dtype=np.uint32)
    lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
    width = int(lengths.max())
    table = np.zeros((len(encoded), width), dtype=np.uint8)
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    table[np.arange(width)[None, :] < lengths[:, None]] = flat
    signed = table.astype(np.int8).astype(np.int32).astype(np.uint32)  # sign-extend, as fastText
    h = np.full(len(encoded), _FNV_OFFSET, dtype=np.uint32)
    prime = np.uint32(_FNV_PRIME)
    for j in range(width):
        h = np.where(j < lengths, (h ^ signed[:, j]) * prime, h)
    return h


def ngram_buckets(word: str, min_n: int, max_n: int, buckets: int) -> list[int]:
    """Bucket index (``0 <= b < buckets``) of each n-gram of `word`; none when `buckets` is 0."""
    if buckets <= 0 or max_n < min_n or max_n <= 0:
        return []
    return [fnv1a(g) % buckets for g in ngrams(word, max(min_n, 1), max_n)]


def subword_table(words: Sequence[str], min_n: int, max_n: int, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The input rows of each vocabulary word, in CSR form: its own row ``i``, then
    ``len(words) + bucket`` for each n-gram (none when `buckets` is 0).

    **Returns:** ``(offsets [V + 1] int32, rows [N] int32)``; word i's rows are
    ``rows[offsets[i]:offsets[i + 1]]``.
    """
    size = len(words)
    use = buckets > 0 and max_n >= max(min_n, 1)
    grams = [ngrams(w, max(min_n, 1), max_n) if use else [] for w in words]
    per_word = np.fromiter((1 + len(g) for g in grams), dtype=np.int64, count=size)
    offsets = np.zeros(size + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(per_word)
    if offsets[-1] >= 2**31:
        raise ValueError("too many subwords for int32 indices; use a smaller vocabulary")
    rows = np.empty(int(offsets[-1]), dtype=np.int64)
    rows[offsets[:-1]] = np.arange(size)
    if use:
        hashed = size + fnv1a_many([g for word in grams for g in word]).astype(np.int64) % buckets
        is_gram = np.ones(rows.size, dtype=bool)
        is_gram[offsets[:-1]] = False
        rows[is_gram] = hashed
    return offsets.astype(np.int32), rows.astype(np.int32)

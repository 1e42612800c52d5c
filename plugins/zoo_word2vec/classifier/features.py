"""Lines of tokens to fastText's input rows (`Featurizer`), as ``Dictionary::getLine`` builds them.

A line's inputs, in order: for each token its own row (if it is in the vocabulary) and,
with ``maxn > 0``, the rows of its character n-grams (``nwords + hash % bucket``; a word
out of the vocabulary keeps its n-grams, ``</s>`` has none); then the rows of its word
n-grams (`zoo_word2vec.classifier.hashing`). Every line ends with ``</s>``, fastText's end-of-line token.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from zoo.plugin_api import Vocab
from zoo_word2vec import subwords
from zoo_word2vec.classifier.hashing import token_hash, word_ngram_rows

__all__ = ["EOS", "Featurizer"]

EOS = "</s>"
"""fastText's end-of-line token, appended to every line."""


@njit(nogil=True, cache=True)
def _gather(token_of, unique_offsets, unique_rows, line_offsets, extra_offsets, extra_rows):
    """Per line: the rows of its tokens (from the unique tokens' CSR), then its `extra_rows`."""
    lines = line_offsets.shape[0] - 1
    out_offsets = np.zeros(lines + 1, dtype=np.int64)
    for line in range(lines):
        size = extra_offsets[line + 1] - extra_offsets[line]
        for t in range(line_offsets[line], line_offsets[line + 1]):
            u = token_of[t]
            size += unique_offsets[u + 1] - unique_offsets[u]
        out_offsets[line + 1] = out_offsets[line] + size
    out = np.empty(out_offsets[lines], dtype=np.int64)
    for line in range(lines):
        k = out_offsets[line]
        for t in range(line_offsets[line], line_offsets[line + 1]):
            u = token_of[t]
            for r in range(unique_offsets[u], unique_offsets[u + 1]):
                out[k] = unique_rows[r]
                k += 1
        for r in range(extra_offsets[line], extra_offsets[line + 1]):
            out[k] = extra_rows[r]
            k += 1
    return out_offsets, out


class Featurizer:
    """Input rows of lines for a vocabulary of ``nwords`` words and `bucket` hashed rows.

    `word_ngrams` (fastText's ``-wordNgrams``: 1 is words alone), `minn`/`maxn` (character
    n-gram lengths; ``maxn = 0``: none). With ``bucket = 0`` there are no n-grams of either kind.
    """

    def __init__(self, words: Vocab, *, bucket: int, word_ngrams: int, minn: int, maxn: int) -> None:
        self.words, self.nwords = words, len(words)
        self.bucket, self.word_ngrams, self.minn, self.maxn = bucket, word_ngrams, minn, maxn
        self._hashes: dict[str, int] = {}
        self._unique: dict[str, np.ndarray] = {}

    def _rows_of_new(self, tokens: list[str]) -> None:
        """Fill the per-token caches (hash; own row and character n-gram rows) for `tokens`."""
        for t in tokens:
            self._hashes[t] = token_hash(t)
        index, nwords = self.words.index, self.nwords
        ids = [index.get(t, -1) for t in tokens]
        chars = self.maxn > 0 and self.bucket > 0
        if chars:
            offsets, hashes = subwords.ngram_hashes([t.encode("utf-8") for t in tokens], self.minn, self.maxn)
            ngram_rows = nwords + (hashes % np.uint32(self.bucket)).astype(np.int64)
        for i, (t, wid) in enumerate(zip(tokens, ids, strict=True)):
            own = [wid] if wid >= 0 else []
            extra = ngram_rows[offsets[i] : offsets[i + 1]] if chars and t != EOS else ()
            self._unique[t] = np.asarray([*own, *extra], dtype=np.int64)

    def rows(self, lines: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """The input rows of each line (``</s>`` appended): ``(offsets [L + 1] int64, rows [R] int64)``."""
        flat = [t for line in lines for t in (*line, EOS)]
        new = list(dict.fromkeys(t for t in flat if t not in self._unique))
        if new:
            self._rows_of_new(new)
        line_offsets = np.zeros(len(lines) + 1, dtype=np.int64)
        np.cumsum([len(line) + 1 for line in lines], out=line_offsets[1:])
        position: dict[str, int] = {}
        token_of = np.fromiter((position.setdefault(t, len(position)) for t in flat), dtype=np.int64, count=len(flat))
        unique = list(position)
        unique_offsets = np.zeros(len(unique) + 1, dtype=np.int64)
        np.cumsum([self._unique[t].size for t in unique], out=unique_offsets[1:])
        unique_rows = np.concatenate([self._unique[t] for t in unique] or [np.zeros(0, dtype=np.int64)])
        if self.word_ngrams > 1 and self.bucket > 0:
            hashes = np.asarray([self._hashes[t] for t in unique], dtype=np.int64).astype(np.int32)[token_of]
            extra_offsets, extra = word_ngram_rows(
                line_offsets, hashes, n=self.word_ngrams, bucket=self.bucket, nwords=self.nwords
            )
        else:
            extra_offsets, extra = np.zeros_like(line_offsets), np.zeros(0, dtype=np.int64)
        return _gather(token_of, unique_offsets, unique_rows, line_offsets, extra_offsets, extra)

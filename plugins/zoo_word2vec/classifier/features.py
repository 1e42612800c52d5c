"""Lines of tokens to fastText's input rows (`Featurizer`), as ``Dictionary::getLine`` builds them.

A line's inputs, in order: for each token its own row (if it is in the vocabulary) and,
with ``maxn > 0``, the rows of its character n-grams (``nwords + hash % bucket``; a word
out of the vocabulary keeps its n-grams, ``</s>`` has none); then the rows of its word
n-grams (`zoo_word2vec.classifier.hashing`). Every line ends with ``</s>``, fastText's
end-of-line token. Rows are given in fastText's layout, ``[0, nwords)`` the words and
``nwords + b`` bucket ``b``; a model that stores only some buckets maps them
(`FastTextClassifier.input_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from zoo.plugin_api import Vocab
from zoo_word2vec import subwords
from zoo_word2vec.classifier.encoded import EncodedLines
from zoo_word2vec.classifier.hashing import NGRAM_MULTIPLIER, hash_strings

__all__ = ["EOS", "Featurizer"]

EOS = "</s>"
"""fastText's end-of-line token, appended to every line."""


@njit(nogil=True, inline="always")
def _ngrams_in(size, n):
    """Word n-grams (2 to `n` tokens) of a line of `size` tokens."""
    count = 0
    for i in range(size):
        count += min(n - 1, size - 1 - i)
    return count


@njit(nogil=True, cache=True)
def _line_rows(ids, offsets, token_offsets, token_rows, hashes, eos_rows, eos_hash, n, bucket, nwords):
    """Per line: each token's rows (from the distinct tokens' CSR), ``</s>``'s, then the word n-grams'
    over the tokens' hashes and ``</s>``'s. **Returns:** ``(offsets [L + 1], rows [R] int64)``."""
    lines = offsets.shape[0] - 1
    grams = n > 1 and bucket > 0
    out_offsets = np.zeros(lines + 1, dtype=np.int64)
    for line in range(lines):
        size = eos_rows.shape[0]
        for t in range(offsets[line], offsets[line + 1]):
            size += token_offsets[ids[t] + 1] - token_offsets[ids[t]]
        if grams:
            size += _ngrams_in(offsets[line + 1] - offsets[line] + 1, n)
        out_offsets[line + 1] = out_offsets[line] + size
    out = np.empty(out_offsets[lines], dtype=np.int64)
    multiplier, modulus = np.uint64(NGRAM_MULTIPLIER), np.uint64(max(bucket, 1))
    for line in range(lines):
        k = out_offsets[line]
        a, b = offsets[line], offsets[line + 1]
        for t in range(a, b):
            for r in range(token_offsets[ids[t]], token_offsets[ids[t] + 1]):
                out[k] = token_rows[r]
                k += 1
        for r in range(eos_rows.shape[0]):
            out[k] = eos_rows[r]
            k += 1
        if grams:
            for i in range(a, b + 1):
                h = np.uint64(np.int64(hashes[ids[i]] if i < b else eos_hash))
                for j in range(i + 1, min(b + 1, i + n)):
                    h = h * multiplier + np.uint64(np.int64(hashes[ids[j]] if j < b else eos_hash))
                    out[k] = nwords + np.int64(h % modulus)
                    k += 1
    return out_offsets, out


@njit(nogil=True, cache=True)
def _own_then_grams(own, found, gram_rows, offsets):
    """Each token's rows: its own (when ``own >= 0``), then its n-grams' up to ``offsets[i + 1]``."""
    rows = np.empty(offsets[-1], dtype=np.int64)
    for i in range(own.shape[0]):
        k = offsets[i]
        if own[i] >= 0:
            rows[k] = own[i]
            k += 1
        g = found[i]
        while k < offsets[i + 1]:
            rows[k] = gram_rows[g]
            k += 1
            g += 1
    return rows


class Featurizer:
    """Input rows of lines for a vocabulary of ``nwords`` words and `bucket` hashed rows.

    `word_ngrams` (fastText's ``-wordNgrams``: 1 is words alone), `minn`/`maxn` (character
    n-gram lengths; ``maxn = 0``: none). With ``bucket = 0`` there are no n-grams of either kind.
    """

    def __init__(self, words: Vocab, *, bucket: int, word_ngrams: int, minn: int, maxn: int) -> None:
        self.words, self.nwords = words, len(words)
        self.bucket, self.word_ngrams, self.minn, self.maxn = bucket, word_ngrams, minn, maxn
        self._eos = self._token_rows([EOS])[1]

    def _token_rows(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each token's own row (if in the vocabulary) and its character n-grams' rows, as CSR."""
        index = self.words.index
        own = np.fromiter((index.get(t, -1) for t in tokens), dtype=np.int64, count=len(tokens))
        if not (self.maxn > 0 and self.bucket > 0):
            known = own >= 0
            offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
            np.cumsum(known, out=offsets[1:])
            return offsets, own[known]
        spellings = [t.encode("utf-8") for t in tokens]
        found, hashes = subwords.ngram_hashes(spellings, self.minn, self.maxn)
        grams = np.diff(found)
        grams[[i for i, t in enumerate(tokens) if t == EOS]] = 0  # '</s>' has no n-grams
        sizes = (own >= 0) + grams
        offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        gram_rows = self.nwords + (hashes % np.uint32(self.bucket)).astype(np.int64)
        return offsets, _own_then_grams(own, found, gram_rows, offsets)

    def encoded_rows(self, lines: EncodedLines) -> tuple[np.ndarray, np.ndarray]:
        """The input rows of each line of `lines` (``</s>`` appended): ``(offsets [L + 1], rows [R] int64)``."""
        token_offsets, token_rows = self._token_rows(lines.tokens)
        eos_hash = int(hash_strings([EOS])[0])
        return _line_rows(
            lines.ids, lines.offsets, token_offsets, token_rows, lines.hashes, self._eos, eos_hash,
            self.word_ngrams, self.bucket, self.nwords,
        )  # fmt: skip

    def rows(self, lines: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """The input rows of each line of tokens (``</s>`` appended): ``(offsets [L + 1], rows [R] int64)``."""
        return self.encoded_rows(EncodedLines.from_lists(lines, [()] * len(lines)))

"""Compiled CPU kernel for FastText training (numba, the optional ``fast`` extra).

Built from the word2vec kernels' pieces (`zoo_word2vec.kernels`): the same
subsampling, dynamic window, alias-table noise and random stream. Per center
word its composed vector (the mean of its word and n-gram rows) is computed
once; each context word in the window is then a positive against K noise words,
updating the output rows; the accumulated input gradient goes, whole, to every
one of the center's rows at the end, as fastText applies it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from zoo_word2vec.kernels import _negative_sampling, _next_sentence, splitmix64

__all__ = ["fasttext_job"]


@njit(nogil=True, fastmath=True, cache=True)
def fasttext_job(
    syn0,
    syn1,
    subwords,
    subword_counts,
    words,
    keep_threshold,
    alias_threshold,
    alias_index,
    window,
    negative,
    alpha_start,
    alpha_end,
    seed,
):
    """FastText skip-gram over one job; returns ``(loss_sum, pairs, raw_words)``.

    **Arguments:**

    - `syn0`: ``[V + buckets, D]`` input rows; `syn1`: ``[V, D]`` output rows (in place).
    - `subwords`: ``[V, S]`` each word's input rows (padded); `subword_counts`: ``[V]``.
    - the rest as `zoo_word2vec.kernels.skipgram_job`.
    """
    state = np.uint64(seed)
    dim = syn0.shape[1]
    kept = np.empty(words.shape[0], dtype=np.int64)
    hidden = np.empty(dim, dtype=np.float32)
    grad = np.empty(dim, dtype=np.float32)
    n = words.shape[0]
    loss, pairs, raw, start = 0.0, 0, 0, 0
    while start < n:
        alpha = alpha_start + (alpha_end - alpha_start) * (start / n)
        end, n_kept, state, n_raw = _next_sentence(words, start, keep_threshold, state, kept)
        raw += n_raw
        start = end + 1
        for i in range(n_kept):
            state, bits = splitmix64(state)
            reach = window - np.int64(bits % np.uint64(window))
            lo, hi = max(0, i - reach), min(n_kept, i + reach + 1)
            if hi - lo < 2:
                continue
            word = kept[i]
            count = subword_counts[word]
            hidden[:] = 0.0
            for s in range(count):
                row = syn0[subwords[word, s]]
                for k in range(dim):
                    hidden[k] += row[k]
            scale = np.float32(1.0 / count)
            for k in range(dim):
                hidden[k] *= scale
            grad[:] = 0.0
            for j in range(lo, hi):
                if j == i:
                    continue
                state, pair_loss = _negative_sampling(
                    hidden, grad, syn1, kept[j], negative, alpha, state, alias_threshold, alias_index
                )
                loss += pair_loss
                pairs += 1
            for s in range(count):
                row = syn0[subwords[word, s]]
                for k in range(dim):
                    row[k] += grad[k]
    return loss, pairs, raw

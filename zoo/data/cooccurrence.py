"""Word-context co-occurrence counts, streamed into a sparse matrix.

``X[i, j]`` sums, over every position where word j appears within `window`
tokens of word i in the same sentence (line), a weight that depends on the
distance d = 1..window:

- ``harmonic``: 1/d (GloVe, Pennington et al. 2014);
- ``linear``: (window + 1 - d) / window, the expected weight of word2vec's
  dynamic window, which samples a window size uniformly in 1..window
  (Levy, Goldberg & Dagan 2015);
- ``uniform``: 1.

Out-of-vocabulary words are dropped before windowing (as word2vec and GloVe
do). The corpus is read once, a block of sentences at a time; each block is
reduced to a sparse matrix and added to the total, so memory follows the
number of distinct pairs (bounded by the vocabulary), not the corpus size.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from zoo.budget import check_memory
from zoo.data.corpus import iter_ids
from zoo.data.tokenize import Tokenizer
from zoo.data.vocab import Vocab
from zoo.errors import DataError

__all__ = ["WEIGHTINGS", "cooccurrence_matrix", "distance_weights", "pmi_matrix"]

WEIGHTINGS = ("harmonic", "linear", "uniform")


def distance_weights(window: int, weighting: str, upto: int | None = None) -> np.ndarray:
    """``[min(window, upto)]`` weights for distances 1..window (only the first `upto` of them:
    no pair of words is further apart than the longest sentence, whatever the window)."""
    if window < 1:
        raise DataError(f"window must be at least 1, got {window}")
    d = np.arange(1, min(window, window if upto is None else max(upto, 0)) + 1, dtype=np.float64)
    if weighting == "harmonic":
        return 1.0 / d
    if weighting == "linear":
        return (window + 1 - d) / window
    if weighting == "uniform":
        return np.ones(len(d))
    raise DataError(f"unknown co-occurrence weighting {weighting!r}; choose one of {WEIGHTINGS}")


def _blocks(sentences: Iterable[np.ndarray], block_tokens: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(ids, sentence_number)`` arrays of about `block_tokens` tokens each."""
    batch: list[np.ndarray] = []
    size = 0
    for ids in sentences:
        if len(ids) < 2:
            continue
        batch.append(ids)
        size += len(ids)
        if size >= block_tokens:
            yield _concat(batch)
            batch, size = [], 0
    if batch:
        yield _concat(batch)


def _concat(batch: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(s) for s in batch), dtype=np.int64, count=len(batch))
    return np.concatenate(batch), np.repeat(np.arange(len(batch)), lengths)


def _block_matrix(ids: np.ndarray, sentence: np.ndarray, weights: np.ndarray, size: int, symmetric: bool):
    rows, cols, values = [], [], []
    for d, weight in enumerate(weights, start=1):
        same = sentence[:-d] == sentence[d:]
        left, right = ids[:-d][same], ids[d:][same]
        rows += [left, right] if symmetric else [right]
        cols += [right, left] if symmetric else [left]
        values += [np.full(len(left), weight, dtype=np.float64)] * (2 if symmetric else 1)
    coo = sp.coo_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size))
    return coo.tocsr()  # sums duplicate pairs


def cooccurrence_matrix(
    source: str | os.PathLike | Iterable[Sequence[str]],
    vocab: Vocab,
    *,
    window: int = 5,
    weighting: str = "harmonic",
    symmetric: bool = True,
    tokenizer: str | Tokenizer | None = None,
    block_tokens: int = 1 << 20,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> sp.csr_matrix:
    """Count weighted co-occurrences of vocabulary words, streaming over `source`.

    **Arguments:**

    - `source`: a corpus path (or paths) or an iterable of token lists.
    - `vocab`: the words to count (ids are its ids); others are dropped.
    - `window`: the largest distance counted; `weighting`: see the module doc.
    - `symmetric`: count contexts on both sides (else only words to the left,
      i.e. ``X[i, j]`` for j before i).
    - `block_tokens`: tokens reduced together (memory per block ~ 50 bytes × window × block).
    - `encoding`, `errors`: how corpus files are decoded (see `zoo.data.corpus.iter_lines`).

    **Returns:** ``[V, V]`` float64 CSR matrix, rows = words, columns = contexts.
    """
    distance_weights(1, weighting)  # an unknown weighting: refused before the corpus is read
    size = len(vocab)
    total = sp.csr_matrix((size, size), dtype=np.float64)
    for ids, sentence in _blocks(iter_ids(source, vocab, tokenizer, encoding=encoding, errors=errors), block_tokens):
        longest = int(np.bincount(sentence).max())  # distances up to the longest sentence's: a window of 10^9 too
        weights = distance_weights(window, weighting, upto=longest - 1)
        lengths = np.bincount(sentence)
        reach = np.minimum(lengths - 1, len(weights))
        pairs = int((reach * lengths - reach * (reach + 1) // 2).sum()) * (2 if symmetric else 1)
        check_memory(50 * pairs, f"counting co-occurrences in a window of {window} ({pairs} pairs in a block)")
        total = total + _block_matrix(ids, sentence, weights, size, symmetric)
    total.sum_duplicates()
    return total


def pmi_matrix(counts: sp.spmatrix, *, cds: float = 1.0, shift: float = 1.0, positive: bool = True) -> sp.csr_matrix:
    """Shifted (positive) pointwise mutual information of a co-occurrence matrix.

    ``PMI(w, c) = log X_wc − log X_w* − log P_cds(c)``, with ``P_cds(c) = X_*c^cds / Σ X_*c'^cds``
    (``cds=1``: ``log (X_wc X_** / (X_w* X_*c))``; 0.75 smooths the context
    distribution as word2vec's noise does), minus ``log shift`` (the number of
    negative samples k in Levy & Goldberg's SGNS analysis). With `positive`,
    only entries above zero are kept (SPPMI); otherwise every non-zero count's
    PMI is returned (zero counts, whose PMI is −∞, stay absent).

    **Returns:** ``[V, V]`` float64 CSR matrix.
    """
    if shift <= 0 or cds <= 0:
        raise DataError(f"shift and cds must be positive, got shift={shift}, cds={cds}")
    coo = sp.coo_matrix(counts, dtype=np.float64)
    coo.sum_duplicates()
    row = np.asarray(coo.sum(axis=1)).ravel()
    col = np.asarray(coo.sum(axis=0)).ravel() ** cds
    log_context = np.log(col, where=col > 0, out=np.full_like(col, -np.inf)) - np.log(col.sum())
    values = np.log(coo.data) - np.log(row[coo.row]) - log_context[coo.col] - np.log(shift)
    keep = values > 0 if positive else np.ones(len(values), dtype=bool)
    return sp.csr_matrix((values[keep], (coo.row[keep], coo.col[keep])), shape=coo.shape)

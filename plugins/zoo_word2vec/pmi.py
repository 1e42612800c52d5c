"""The PMI view of word vectors: does ``v_w · v_c`` track ``PMI(w, c) − log k``?

Levy & Goldberg (2014) showed that skip-gram with k negative samples, at its
optimum, sets ``v_w · v_c = PMI(w, c) − log k`` for every word-context pair,
with the context distribution of the noise (unigram^0.75 in word2vec). This
module measures how closely trained vectors follow that: over the most
frequent co-occurring pairs, the correlation and the least-squares line
between the dot products and the shifted PMI.

??? cite

    Levy & Goldberg 2014, Neural Word Embedding as Implicit Matrix
    Factorization (NeurIPS).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from zoo.plugin_api import DataError, pearson, pmi_matrix, spearman

__all__ = ["PMICheck", "levy_goldberg_check"]


class PMICheck(NamedTuple):
    """How well ``v_w · v_c`` follows ``PMI(w, c) − log k`` over `pairs` frequent pairs.

    - `pearson`, `spearman`: correlations between dot products and shifted PMI.
    - `slope`, `intercept`: least-squares line ``dot ≈ slope · (PMI − log k) + intercept``
      (the theory says 1 and 0 at the optimum).
    - `mean_abs_error`: mean ``|dot − (PMI − log k)|``.
    - `dots`, `shifted_pmi`: the ``[pairs]`` values themselves, for plotting.
    """

    pearson: float
    spearman: float
    slope: float
    intercept: float
    mean_abs_error: float
    pairs: int
    dots: np.ndarray
    shifted_pmi: np.ndarray


def levy_goldberg_check(
    word_vectors: np.ndarray,
    context_vectors: np.ndarray,
    counts: sp.spmatrix,
    *,
    negative: float = 5.0,
    cds: float = 0.75,
    pairs: int = 20000,
    min_count: float = 0.0,
) -> PMICheck:
    """Compare ``v_w · v_c`` with ``PMI(w, c) − log k`` on the most frequent pairs.

    **Arguments:**

    - `word_vectors`, `context_vectors`: ``[V, D]`` input (word) and output
      (context) vectors, rows in the order of the counts' vocabulary.
    - `counts`: ``[V, V]`` co-occurrences (``zoo.data.cooccurrence.cooccurrence_matrix``;
      ``weighting="linear"`` matches word2vec's dynamic window).
    - `negative`: k, the number of negative samples (the shift is log k).
    - `cds`: context-distribution exponent of the PMI (0.75: word2vec's noise).
    - `pairs`: how many of the most frequent pairs to use; `min_count`: ignore
      pairs co-occurring less than this.
    """
    words = np.asarray(word_vectors, dtype=np.float64)
    contexts = np.asarray(context_vectors, dtype=np.float64)
    if words.shape != contexts.shape or words.shape[0] != counts.shape[0]:
        raise DataError(
            f"word vectors {words.shape}, context vectors {contexts.shape} and counts {counts.shape} disagree"
        )
    coo = sp.coo_matrix(counts)
    shifted = sp.coo_matrix(pmi_matrix(coo, cds=cds, shift=negative, positive=False))
    order = np.lexsort((shifted.col, shifted.row))
    shifted_rows, shifted_cols, shifted_values = shifted.row[order], shifted.col[order], shifted.data[order]
    coo.sum_duplicates()
    frequent = np.argsort(-coo.data, kind="stable")
    frequent = frequent[coo.data[frequent] >= min_count][:pairs]
    if len(frequent) < 2:
        raise DataError(f"only {len(frequent)} pairs co-occur at least {min_count} times; need two")
    rows, cols = coo.row[frequent], coo.col[frequent]
    keys = rows.astype(np.int64) * counts.shape[1] + cols
    table = shifted_rows.astype(np.int64) * counts.shape[1] + shifted_cols
    pmi = shifted_values[np.searchsorted(table, keys)]
    dots = np.einsum("nd,nd->n", words[rows], contexts[cols])
    slope, intercept = np.polyfit(pmi, dots, 1)
    return PMICheck(
        pearson=pearson(dots, pmi),
        spearman=spearman(dots, pmi),
        slope=float(slope),
        intercept=float(intercept),
        mean_abs_error=float(np.mean(np.abs(dots - pmi))),
        pairs=len(frequent),
        dots=dots,
        shifted_pmi=pmi,
    )

"""Streaming co-occurrence counts and (shifted, positive) PMI."""

from __future__ import annotations

import numpy as np
import pytest

from zoo.data.cooccurrence import cooccurrence_matrix, distance_weights, pmi_matrix
from zoo.data.vocab import Vocab
from zoo.errors import DataError

VOCAB = Vocab(["a", "b", "c", "d"])


def dense(sentences, **kwargs):
    return cooccurrence_matrix(sentences, VOCAB, **kwargs).toarray()


def test_distance_weightings():
    np.testing.assert_allclose(distance_weights(4, "harmonic"), [1, 1 / 2, 1 / 3, 1 / 4])
    np.testing.assert_allclose(distance_weights(4, "linear"), [1, 3 / 4, 1 / 2, 1 / 4])
    np.testing.assert_allclose(distance_weights(2, "uniform"), [1, 1])
    with pytest.raises(DataError, match="harmonic"):
        distance_weights(2, "gaussian")


def test_counts_by_hand():
    x = dense([["a", "b", "c"]], window=2, weighting="harmonic")
    expected = np.zeros((4, 4))
    expected[0, 1] = expected[1, 0] = expected[1, 2] = expected[2, 1] = 1.0
    expected[0, 2] = expected[2, 0] = 0.5
    np.testing.assert_allclose(x, expected)
    left_only = dense([["a", "b", "c"]], window=2, symmetric=False)
    assert left_only[1, 0] == 1.0 and left_only[0, 1] == 0.0 and left_only[2, 0] == 0.5
    assert dense([["a", "b", "c"]], window=1)[0, 2] == 0.0


def test_windows_stay_inside_sentences_and_skip_unknown_words():
    assert dense([["a"], ["b"]], window=5).sum() == 0
    assert dense([["a", "zzz", "b"]], window=1)[0, 1] == 1.0  # unknown words are dropped first


def test_blocks_do_not_change_the_counts():
    rng = np.random.default_rng(0)
    sentences = [list(rng.choice(list("abcd"), size=rng.integers(1, 9))) for _ in range(200)]
    whole = dense(sentences, window=3)
    np.testing.assert_allclose(dense(sentences, window=3, block_tokens=7), whole)
    assert whole.sum() > 0 and np.allclose(whole, whole.T)


def test_pmi_matches_its_definition():
    counts = np.array([[0, 4, 1, 0], [4, 0, 2, 3], [1, 2, 0, 6], [0, 3, 6, 0]], dtype=float)
    import scipy.sparse as sp

    matrix = sp.csr_matrix(counts)
    rows, cols, total = counts.sum(1), counts.sum(0), counts.sum()
    with np.errstate(divide="ignore"):
        plain = np.log(counts * total / np.outer(rows, cols))
    got = pmi_matrix(matrix, positive=False).toarray()
    np.testing.assert_allclose(got[counts > 0], plain[counts > 0])
    positive = pmi_matrix(matrix).toarray()
    np.testing.assert_allclose(positive, np.where(counts > 0, np.maximum(plain, 0), 0))
    shifted = pmi_matrix(matrix, shift=2.0).toarray()
    np.testing.assert_allclose(shifted, np.where(counts > 0, np.maximum(plain - np.log(2), 0), 0))
    smoothed = pmi_matrix(matrix, cds=0.75, positive=False).toarray()
    p_context = cols**0.75 / (cols**0.75).sum()
    with np.errstate(divide="ignore"):
        expected = np.log(counts / rows[:, None] / p_context[None, :])
    np.testing.assert_allclose(smoothed[counts > 0], expected[counts > 0])

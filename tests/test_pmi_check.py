"""The Levy-Goldberg check: dot products of trained vectors against shifted PMI."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from word_corpora import country_sentences

import zoo
from zoo.data.cooccurrence import cooccurrence_matrix, pmi_matrix
from zoo.data.corpus import build_word_vocab, count_tokens
from zoo.errors import DataError
from zoo_ppmi.svd import fit_ppmi_svd
from zoo_word2vec.pmi import levy_goldberg_check


@pytest.fixture(scope="module")
def counts():
    sentences = country_sentences()
    vocab = build_word_vocab(count_tokens(sentences), min_count=1)
    return vocab, cooccurrence_matrix(sentences, vocab, window=5, weighting="linear")


def test_exact_factors_follow_shifted_pmi(counts):
    _, matrix = counts
    shifted = pmi_matrix(matrix, cds=0.75, shift=5.0, positive=False).toarray()
    u, s, vt = np.linalg.svd(shifted)
    check = levy_goldberg_check(u * s, vt.T, matrix, negative=5.0, cds=0.75, pairs=100)
    assert check.pairs == 100 and check.pearson == pytest.approx(1.0, abs=1e-9)
    assert check.slope == pytest.approx(1.0, abs=1e-6) and check.mean_abs_error < 1e-9
    wrong_shift = levy_goldberg_check(u * s, vt.T, matrix, negative=1.0, cds=0.75, pairs=100)
    assert wrong_shift.intercept == pytest.approx(-np.log(5.0), abs=1e-6) and wrong_shift.mean_abs_error > 1.0


def test_ppmi_svd_vectors_track_pmi_on_frequent_pairs(counts):
    vocab, matrix = counts
    model = zoo.build("ppmi-svd", key=jax.random.key(0), vocab=vocab, embedding_size=12, shift=2.0)
    model = fit_ppmi_svd(model, matrix)
    check = levy_goldberg_check(np.asarray(model.word), np.asarray(model.context), matrix, negative=2.0, pairs=60)
    assert check.pearson > 0.7 and check.spearman > 0.7  # SPPMI clips the negative ones
    unrelated = np.random.default_rng(0).standard_normal(np.asarray(model.word).shape)
    noise = levy_goldberg_check(unrelated, np.asarray(model.context), matrix, negative=2.0, pairs=60)
    assert abs(noise.pearson) < 0.5


def test_check_rejects_mismatched_inputs(counts):
    vocab, matrix = counts
    with pytest.raises(DataError, match="disagree"):
        levy_goldberg_check(np.zeros((3, 2)), np.zeros((3, 2)), matrix)
    with pytest.raises(DataError, match="need two"):
        levy_goldberg_check(np.zeros((len(vocab), 2)), np.zeros((len(vocab), 2)), matrix, min_count=1e9)

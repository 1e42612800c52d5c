"""PPMI-SVD: the factorisation, its options, analogies on a generated corpus, the recipe."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from word_corpora import country_questions, country_sentences, neighbour_accuracy, topic_sentences

import zoo
from zoo.cli.main import main
from zoo.data.cooccurrence import cooccurrence_matrix, pmi_matrix
from zoo.data.corpus import build_word_vocab, count_tokens
from zoo.errors import DataError
from zoo.vectors import KeyedVectors
from zoo_ppmi.svd import fit_ppmi_svd, truncated_svd


@pytest.fixture(scope="module")
def countries():
    sentences = country_sentences()
    vocab = build_word_vocab(count_tokens(sentences), min_count=1)
    return vocab, cooccurrence_matrix(sentences, vocab, window=5, weighting="linear")


def fit(vocab, counts, **params):
    model = zoo.build("ppmi-svd", key=jax.random.key(0), vocab=vocab, **{"embedding_size": 10, **params})
    return fit_ppmi_svd(model, counts)


def test_factors_are_the_best_low_rank_fit(countries):
    vocab, counts = countries
    model = fit(vocab, counts)
    target = pmi_matrix(counts, cds=0.75).toarray()
    u, s, vt = np.linalg.svd(target)
    best = (u[:, :10] * s[:10]) @ vt[:10]
    fitted = np.asarray(model.word) @ np.asarray(model.context).T
    np.testing.assert_allclose(fitted, best, atol=1e-4)
    rows, cols = np.nonzero(target)
    batch = {"rows": rows.astype(np.int32), "cols": cols.astype(np.int32), "values": target[rows, cols]}
    assert float(model.loss(batch)) == pytest.approx(np.mean((fitted[rows, cols] - target[rows, cols]) ** 2), rel=1e-3)


def test_solvers_agree(countries):
    _, counts = countries
    matrix = pmi_matrix(counts)
    _, exact, _ = truncated_svd(matrix, 6, solver="arpack")
    u, fast, _ = truncated_svd(matrix, 6, solver="randomized")
    np.testing.assert_allclose(fast, exact, rtol=1e-6)
    assert np.all(np.diff(exact) <= 0) and np.abs(u).max(axis=0).min() > 0
    with pytest.raises(DataError, match="arpack"):
        truncated_svd(matrix, 6, solver="lanczos")


def test_options_change_the_vectors(countries):
    vocab, counts = countries
    base = np.asarray(fit(vocab, counts).vectors())
    for params in [{"eig": 0.0}, {"cds": 1.0}, {"shift": 2.0}, {"add_context": True}]:
        assert not np.allclose(np.asarray(fit(vocab, counts, **params).vectors()), base), params
    unit = np.asarray(fit(vocab, counts, eig=0.0).vectors())
    np.testing.assert_allclose(unit.T @ unit, np.eye(10), atol=1e-5)  # eig 0: orthonormal columns


def test_analogies_and_topics_are_learned(countries, tmp_path):
    vocab, counts = countries
    kv = KeyedVectors.from_model(fit(vocab, counts))
    questions = tmp_path / "countries.txt"
    questions.write_text(country_questions())
    result = kv.analogy_report(questions)
    assert result.covered == 112 and result.score >= 0.9
    sentences = topic_sentences()
    topic_vocab = build_word_vocab(count_tokens(sentences), min_count=1)
    topic_counts = cooccurrence_matrix(sentences, topic_vocab, window=3)
    assert neighbour_accuracy(KeyedVectors.from_model(fit(topic_vocab, topic_counts, embedding_size=8))) == 1.0


def test_bad_hyperparameters_are_rejected(countries):
    vocab, _ = countries
    with pytest.raises(DataError, match="exceeds vocab_size"):
        zoo.build("ppmi-svd", key=jax.random.key(0), vocab=vocab, embedding_size=500)
    with pytest.raises(DataError, match="shift"):
        zoo.build("ppmi-svd", key=jax.random.key(0), vocab=vocab, shift=0.5, embedding_size=4)


def test_recipe_trains_from_the_command_line(tmp_path):
    corpus = tmp_path / "corpus.txt.gz"
    import gzip

    corpus.write_bytes(gzip.compress("\n".join(" ".join(s) for s in country_sentences()).encode()))
    out = tmp_path / "p.safetensors"
    args = [
        "train",
        "ppmi-svd",
        "--data",
        str(corpus),
        "--out",
        str(out),
        "--dim",
        "8",
        "--tokenizer",
        "whitespace",
        "--quiet",
    ]
    assert main([*args, "--solver", "randomized", "--eig", "1.0"]) == 0
    model = zoo.load(out)
    assert model.spec.params["eig"] == 1.0 and model.embedding_size == 8
    assert KeyedVectors.load(out).most_similar("lang3", topn=1)[0][0] in {"city3", "food3", "lang3"} | {
        f"lang{i}" for i in range(8)
    }


def test_counts_that_are_not_finite_are_refused(countries):
    vocab, counts = countries
    bad = counts.copy()
    bad.data[3] = np.nan
    with pytest.raises(DataError, match="NaN or infinite"):
        fit(vocab, bad)

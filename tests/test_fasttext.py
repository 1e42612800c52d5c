"""FastText: n-grams and hashes as fastText computes them, vectors for unseen words, both backends."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import zoo
from zoo.errors import TrainingDiverged
from zoo.vectors import KeyedVectors
from zoo_word2vec.backends import numba_available
from zoo_word2vec.fit import build_vocab, fit
from zoo_word2vec.ngrams import fnv1a, fnv1a_many, ngram_buckets, ngrams, subword_table

needs_numba = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")


def test_ngrams_of_where_as_in_the_paper():
    assert ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]
    assert len(ngrams("where", 3, 6)) == 5 + 4 + 3 + 2  # 7 characters with the boundaries
    assert ngrams("naïve", 3, 3)[:2] == ["<na", "naï"]  # characters, not bytes
    assert ngrams("a", 3, 6) == ["<a>"]


def test_hash_is_fasttexts_fnv1a():
    # Values as the fastText package (0.9.3) computes them, including the sign
    # extension of UTF-8 bytes >= 0x80.
    assert [fnv1a(g) for g in ["<wh", "whe", "her", "ere", "re>"]] == [
        1048167652, 888420941, 4105473420, 2073529033, 2062867498
    ]  # fmt: skip
    assert fnv1a("café") == 1970454601 and fnv1a("日本") == 4164387409
    grams = ["<wh", "café", "日本", "", "a"]
    assert list(fnv1a_many(grams)) == [fnv1a(g) for g in grams]
    assert ngram_buckets("where", 3, 3, 2_000_000) == [167652, 420941, 1473420, 1529033, 867498]


def test_subword_table_lists_the_word_then_its_buckets():
    words = ["where", "a", "naïve"]
    offsets, rows = subword_table(words, 3, 6, 1000)
    for i, word in enumerate(words):
        assert list(rows[offsets[i] : offsets[i + 1]]) == [i] + [3 + b for b in ngram_buckets(word, 3, 6, 1000)]
    offsets, rows = subword_table(words, 3, 6, 0)  # no buckets: words alone
    assert list(offsets) == [0, 1, 2, 3] and list(rows) == [0, 1, 2]


STEMS = ["walk", "jump", "paint", "clean", "climb", "watch", "cook", "fish"]
PLACES = ["river", "garden", "field", "forest", "market", "school", "kitchen", "lake"]


def morphology_sentences(n: int = 2000, seed: int = 0) -> list[list[str]]:
    """``<name> <stem><suffix> in the <place>``, each stem mostly at its own place:
    the forms of a stem share n-grams and contexts."""
    rng = np.random.default_rng(seed)
    names = ["anna", "bob", "carl", "dina"]
    sentences = []
    for _ in range(n):
        k = rng.integers(len(STEMS))
        suffix = ["", "s", "ed", "ing"][rng.integers(4)]
        place = PLACES[k] if rng.random() < 0.8 else PLACES[rng.integers(len(PLACES))]
        sentences.append([names[rng.integers(4)], STEMS[k] + suffix, "in", "the", place])
    return sentences


@pytest.fixture(scope="module")
def corpus():
    sentences = morphology_sentences()
    return sentences, build_vocab(sentences, min_count=1)


@pytest.fixture(scope="module", params=[pytest.param("numba", marks=needs_numba), "jax"])
def trained(request, corpus):
    sentences, vocab = corpus
    model = zoo.build(
        "fasttext", vocab=vocab, key=jax.random.key(0), embedding_size=24, buckets=5000, epochs=5, sample=0.0
    )
    return fit(model, sentences, backend=request.param, threads=1, progress=False, job_words=2000)


def test_a_made_up_word_lands_next_to_its_stem(trained):
    model, stats = trained
    kv = KeyedVectors.from_model(model)
    assert "walkers" not in kv
    for stem in STEMS:
        made_up = stem + "ers"  # never in the corpus: only its n-grams know it
        nearest = [w for w, _ in kv.most_similar(made_up, topn=4)]
        assert any(w.startswith(stem) for w in nearest[:2]), (made_up, nearest)
    assert stats.history[-1]["loss"] < 0.6 * 6 * np.log(2.0)


def test_inflected_forms_are_each_others_neighbours(trained):
    model, _ = trained
    kv = KeyedVectors.from_model(model)
    hits = sum(kv.most_similar(stem + "ing", topn=1)[0][0].startswith(stem) for stem in STEMS)
    assert hits >= len(STEMS) - 1


def test_vectors_are_the_mean_of_word_and_ngram_rows(corpus):
    model = zoo.build("fasttext", vocab=corpus[1], key=jax.random.key(0), embedding_size=8, buckets=300)
    index = corpus[1].index["walking"]
    rows = [index] + [len(corpus[1]) + b for b in ngram_buckets("walking", 3, 6, 300)]
    np.testing.assert_allclose(model.vectors()[index], np.asarray(model.input)[rows].mean(0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(model(np.array([index]))[0], model.vectors()[index], rtol=1e-6)
    oov_rows = [len(corpus[1]) + b for b in ngram_buckets("walkers", 3, 6, 300)]
    np.testing.assert_allclose(model.oov_vector("walkers"), np.asarray(model.input)[oov_rows].mean(0), rtol=1e-5)
    no_subwords = zoo.build("fasttext", vocab=corpus[1], key=jax.random.key(0), embedding_size=8, buckets=300, max_n=0)
    assert not np.any(no_subwords.oov_vector("walkers"))


def test_oov_vectors_survive_save_and_load(corpus, tmp_path):
    model = zoo.build("fasttext", vocab=corpus[1], key=jax.random.key(0), embedding_size=8, buckets=300)
    loaded = zoo.load(zoo.save(model, tmp_path / "ft.safetensors"))
    np.testing.assert_array_equal(loaded.oov_vector("walkers"), model.oov_vector("walkers"))
    np.testing.assert_array_equal(np.asarray(loaded.vectors()), np.asarray(model.vectors()))


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "jax"])
def test_a_diverging_run_stops_with_training_diverged(corpus, backend):
    sentences, vocab = corpus
    model = zoo.build("fasttext", vocab=vocab, key=jax.random.key(0), embedding_size=8, buckets=500, alpha=1e30)
    with pytest.raises(TrainingDiverged, match=r"the loss became NaN or infinite in epoch 1 .*alpha=1e\+30"):
        fit(model, sentences[:300], backend=backend, threads=1, progress=False, job_words=2000)

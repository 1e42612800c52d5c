"""gensim's lock factors on zoo's Word2Vec and FastText: ``wv.vectors_lockf`` (FastText:
``wv.vectors_vocab_lockf`` and ``wv.vectors_ngrams_lockf``) scale each input row's updates,
so a row at 0 stays bit for bit as it was and the others train; the JAX step refuses them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from zoo.errors import DataError, InvalidParameterError
from zoo.vectors import FastText, Word2Vec
from zoo_word2vec.backends import numba_available
from zoo_word2vec.fit import fit

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")

LAYERS = [{"hs": 1, "negative": 5}, {"hs": 1, "negative": 0}, {"hs": 0, "negative": 5}]


@pytest.fixture(scope="module")
def corpus():
    """300 sentences of 12 Zipf-distributed words among ``w1``..``w39``."""
    rng = np.random.default_rng(4)
    sentences = [[f"w{int(x)}" for x in rng.zipf(1.3, 12) if x < 40] for _ in range(300)]
    return [s for s in sentences if len(s) > 1]


def built(cls, corpus, **settings):
    """A model with its vocabulary built, not trained yet."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gensim's warning about hs and negative together
        model = cls(vector_size=8, min_count=1, workers=1, seed=3, **settings)
    model.build_vocab(corpus)
    return model


def train(model, corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.train(corpus, total_examples=len(corpus), epochs=2)


@pytest.mark.parametrize("sg", [1, 0], ids=["skipgram", "cbow"])
@pytest.mark.parametrize("layer", LAYERS, ids=["hs+ns", "hs", "ns"])
def test_a_locked_word_keeps_its_vector_and_the_others_train(corpus, sg, layer):
    model = built(Word2Vec, corpus, sg=sg, **layer)
    before = np.array(model.wv.vectors)
    output = np.array(model.syn1 if layer["hs"] else model.syn1neg)
    model.wv.vectors_lockf = np.ones(len(model.wv), dtype=np.float32)
    model.wv.vectors_lockf[0] = 0.0  # the most frequent word: in nearly every window
    model.wv.vectors_lockf[1] = 0.0
    train(model, corpus)
    after = np.asarray(model.wv.vectors)
    np.testing.assert_array_equal(after[:2], before[:2])
    assert np.all(np.any(after[2:] != before[2:], axis=1))
    assert not np.array_equal(np.asarray(model.syn1 if layer["hs"] else model.syn1neg), output)  # never locked


def test_the_factors_outlive_wv_and_one_factor_scales_every_row(corpus):
    model = built(Word2Vec, corpus, sg=1)
    model.wv.vectors_lockf[0] = 0.0  # gensim's default: ones(1), one factor for every row
    before = np.array(model.wv.vectors)
    train(model, corpus)
    np.testing.assert_array_equal(model.wv.vectors, before)
    assert model.wv.vectors_lockf.tolist() == [0.0]  # still set on the wv built after training
    one, each = built(Word2Vec, corpus, sg=1), built(Word2Vec, corpus, sg=1)
    one.wv.vectors_lockf[0] = 0.5
    each.wv.vectors_lockf = np.full(len(each.wv), 0.5, dtype=np.float32)
    train(one, corpus)
    train(each, corpus)
    np.testing.assert_array_equal(one.wv.vectors, each.wv.vectors)
    assert not np.array_equal(one.wv.vectors, before)


def test_factors_multiply_the_update(corpus):
    """A factor of 1 everywhere is the unlocked run bit for bit; 2 moves rows further than 1."""
    plain, ones, double = (built(Word2Vec, corpus, sg=1) for _ in range(3))
    start = np.array(plain.wv.vectors)
    ones.wv.vectors_lockf = np.ones(len(ones.wv), dtype=np.float32)
    double.wv.vectors_lockf = np.full(len(double.wv), 2.0, dtype=np.float32)
    for model in (plain, ones, double):
        train(model, corpus)
    np.testing.assert_array_equal(ones.wv.vectors, plain.wv.vectors)
    moved = [np.abs(np.asarray(m.wv.vectors) - start).sum() for m in (plain, double)]
    assert moved[1] > 1.5 * moved[0]


@pytest.mark.parametrize("sg", [1, 0], ids=["skipgram", "cbow"])
def test_fasttext_locks_word_rows_and_ngram_rows_apart(corpus, sg):
    model = built(FastText, corpus, sg=sg, hs=1, negative=5, bucket=50, min_n=2, max_n=3)
    words = len(model.wv)
    before = np.array(model.zoo_model.input)
    model.wv.vectors_vocab_lockf = np.ones(words, dtype=np.float32)
    model.wv.vectors_vocab_lockf[0] = 0.0
    model.wv.vectors_ngrams_lockf = np.ones(50, dtype=np.float32)
    model.wv.vectors_ngrams_lockf[:10] = 0.0
    train(model, corpus)
    after = np.asarray(model.zoo_model.input)
    np.testing.assert_array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[words : words + 10], before[words : words + 10])
    assert np.all(np.any(after[1:words] != before[1:words], axis=1))
    assert np.any(after[words + 10 :] != before[words + 10 :])


def test_fasttext_reads_vectors_lockf_no_more_than_gensim(corpus):
    model = built(FastText, corpus, sg=1, bucket=50, min_n=2, max_n=3)
    before = np.array(model.zoo_model.input)
    model.wv.vectors_lockf = np.zeros(len(model.wv), dtype=np.float32)
    with pytest.warns(UserWarning, match="vectors_vocab_lockf"):
        model.train(corpus, total_examples=len(corpus), epochs=1)
    assert np.all(np.any(np.asarray(model.zoo_model.input)[: len(model.wv)] != before[: len(model.wv)], axis=1))


def test_an_empty_lock_array_is_refused_by_name(corpus):
    model = built(Word2Vec, corpus, sg=1)
    model.wv.vectors_lockf = np.zeros(0, dtype=np.float32)
    with pytest.raises(InvalidParameterError, match="vectors_lockf"):
        train(model, corpus)


def test_the_jax_step_refuses_lock_factors_by_name(corpus):
    model = built(Word2Vec, corpus, sg=1).zoo_model
    lock = np.ones(model.input.shape[0], dtype=np.float32)
    with pytest.raises(InvalidParameterError, match="vectors_lockf"):
        fit(model, corpus, backend="jax", lock=lock, progress=False)


def test_the_kernels_refuse_a_lock_of_the_wrong_length(corpus):
    model = built(Word2Vec, corpus, sg=1).zoo_model
    with pytest.raises(DataError, match="one factor per input row"):
        fit(model, corpus, backend="numba", lock=np.ones(3, dtype=np.float32), progress=False)


@pytest.mark.parametrize("lockf", [0.0, 1.0])
def test_intersected_vectors_train_from_where_they_were_read_locked_by_lockf(corpus, tmp_path, lockf):
    """gensim's recipe for pretrained vectors: per-word factors, then
    ``intersect_word2vec_format(path, lockf=...)``: the words read start from the file's vectors
    and, at lockf 0, stay there while the others train."""
    model = built(Word2Vec, corpus, sg=1)
    words = model.wv.index_to_key[:3]
    pretrained = 1 + np.arange(3 * 8, dtype=np.float32).reshape(3, 8) / 100  # far from the initial ones
    path = tmp_path / "pretrained.txt"
    path.write_text("3 8\n" + "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in zip(words, pretrained, strict=True)))
    model.wv.vectors_lockf = np.ones(len(model.wv), dtype=np.float32)
    model.wv.intersect_word2vec_format(path, lockf=lockf, binary=False)
    assert model.wv.vectors_lockf[:3].tolist() == [lockf] * 3 and model.wv.vectors_lockf[3:].min() == 1
    others = np.array(model.wv.vectors[3:])
    train(model, corpus)
    if lockf == 0.0:
        np.testing.assert_array_equal(model.wv.vectors[:3], pretrained)
    else:
        assert np.all(np.any(model.wv.vectors[:3] != pretrained, axis=1))
        assert np.abs(model.wv.vectors[:3] - pretrained).max() < 0.5  # trained on from the file's vectors
    assert np.all(np.any(model.wv.vectors[3:] != others, axis=1))

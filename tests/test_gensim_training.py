"""gensim's training API (`zoo.vectors.Word2Vec`, `FastText`, callbacks): one call, gensim's names,
refusals, vocabulary updates, callbacks, files, and quality beside gensim's own Word2Vec."""

from __future__ import annotations

import collections
import math

import jax
import numpy as np
import pytest
from word_corpora import country_questions, country_sentences

import zoo
from zoo.data.corpus import build_word_vocab
from zoo.errors import DataError, InvalidParameterError, WeightsError
from zoo.vectors import CallbackAny2Vec, FastText, KeyedVectors, Word2Vec
from zoo_word2vec.backends import numba_available
from zoo_word2vec.gensim_api.vocabulary import count_words as _count
from zoo_word2vec.gensim_api.vocabulary import effective_min_count as _effective_min_count

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba (the 'fast' extra) is not installed")

CLASSES = {
    "animal": ["cat", "dog", "horse", "cow", "sheep", "goat"],
    "verb": ["eats", "sees", "likes", "finds", "wants", "pulls"],
    "color": ["red", "blue", "green", "yellow", "white", "black"],
    "food": ["apple", "bread", "grass", "corn", "rice", "hay"],
    "place": ["farm", "field", "barn", "yard", "house", "garden"],
}
MORE = {**CLASSES, "animal": [*CLASSES["animal"], "lion", "tiger"], "color": [*CLASSES["color"], "purple"]}
"""The classes of the second corpus: three words the first never saw."""

QUICK = {"vector_size": 16, "min_count": 1, "epochs": 10, "workers": 1, "sample": 0.0}
"""Small, exactly repeatable runs (one worker); no subsampling on a 30-word vocabulary."""


def farm_sentences(classes=CLASSES, n: int = 1500, seed: int = 0) -> list[list[str]]:
    """``the <animal> <verb> the <color> <food> in the <place>``: words of a class share contexts."""
    rng = np.random.default_rng(seed)
    pick = lambda c: classes[c][rng.integers(len(classes[c]))]
    return [
        ["the", pick("animal"), pick("verb"), "the", pick("color"), pick("food"), "in", "the", pick("place")]
        for _ in range(n)
    ]


def class_accuracy(wv, classes=CLASSES, words=None) -> float:
    """Share of `words` (default: every class word) whose 3 nearest neighbours are all in its class."""
    hits = total = 0
    for members in classes.values():
        for word in members:
            if words is None or word in words:
                total += 1
                hits += all(w in members for w, _ in wv.most_similar(word, topn=3))
    return hits / total


@pytest.fixture(scope="module")
def farm():
    return farm_sentences()


@pytest.fixture(scope="module")
def more():
    return farm_sentences(MORE, n=600, seed=1)


# -- one call ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sg", [1, 0])
def test_one_call_trains_and_most_similar_works(farm, sg):
    model = Word2Vec(farm, sg=sg, **QUICK)
    assert isinstance(model.wv, KeyedVectors) and model.zoo_model.spec.name == model.name
    assert model.name == ("word2vec-skipgram" if sg else "word2vec-cbow")
    assert class_accuracy(model.wv) == 1.0
    assert model.wv.most_similar("cat", topn=1)[0][0] in CLASSES["animal"]
    assert model.corpus_count == len(farm) and model.corpus_total_words == 9 * len(farm)
    assert len(model.history) == 10 and model.wv.vectors.shape == (32, 16)


@pytest.mark.parametrize(("sg", "name"), [(1, "fasttext"), (0, "fasttext-cbow")])
def test_fasttext_in_one_call_gives_unseen_words_vectors(farm, sg, name):
    model = FastText(farm, bucket=2000, sg=sg, **QUICK)
    assert model.name == name and model.sg == sg
    assert class_accuracy(model.wv) >= 0.8
    assert "horses" not in model.wv.key_to_index
    unseen = model.wv["horses"]  # from its n-grams, shared with "horse"
    assert unseen.shape == (16,) and np.all(np.isfinite(unseen))
    nearest = model.wv.most_similar(positive=[unseen], topn=1)[0][0]
    # skip-gram: the word that shares its n-grams; CBOW, whose n-gram rows learn as contexts: its class
    assert nearest == "horse" if sg else nearest in CLASSES["animal"], nearest


def test_a_corpus_file_trains_as_the_same_token_lists_do(farm, tmp_path):
    path = tmp_path / "farm.txt"
    path.write_text("\n".join(" ".join(s) for s in farm) + "\n")
    from_file = Word2Vec(corpus_file=path, sg=1, **QUICK)
    from_lists = Word2Vec(farm, sg=1, **QUICK)
    assert from_file.wv.index_to_key == from_lists.wv.index_to_key
    np.testing.assert_array_equal(from_file.wv.vectors, from_lists.wv.vectors)


# -- gensim's names ---------------------------------------------------------------------------


def test_gensim_names_set_the_registry_hyperparameters(farm):
    named = {"vector_size": 12, "window": 3, "negative": 4, "ns_exponent": 0.5, "sample": 1e-4}
    named |= {"alpha": 0.03, "min_alpha": 0.001, "epochs": 2}
    model = Word2Vec(sg=1, seed=7, min_count=1, **named)
    model.build_vocab(farm)
    spec = model.zoo_model.spec
    assert spec.name == "word2vec-skipgram"
    expected = {"embedding_size": 12, "window": 3, "negative": 4, "ns_exponent": 0.5, "sample": 1e-4}
    expected |= {"alpha": 0.03, "min_alpha": 0.001, "epochs": 2, "vocab_size": 32}
    assert {k: spec.params[k] for k in expected} == expected
    # seed is the key of the initial vectors: the same model zoo.build makes
    vocab = model.zoo_model.vocabs["words"]
    built = zoo.build("word2vec-skipgram", vocab=vocab, key=jax.random.key(7), **{k: expected[k] for k in expected})
    np.testing.assert_array_equal(model.zoo_model.input, built.input)
    cbow = Word2Vec(sg=0, min_count=1)
    cbow.build_vocab(farm)
    assert cbow.zoo_model.spec.name == "word2vec-cbow" and cbow.zoo_model.spec["alpha"] == 0.025  # gensim's default
    fast = FastText(min_n=2, max_n=4, bucket=100, min_count=1)
    fast.build_vocab(farm)
    p = fast.zoo_model.spec.params
    assert (p["min_n"], p["max_n"], p["buckets"], p["ns_exponent"], p["alpha"]) == (2, 4, 100, 0.75, 0.025)


def test_vocabulary_follows_gensims_rules():
    sentences = [["a"] * 5 + ["b"] * 3 + ["c"] * 3 + ["d"] * 2 + ["e"]]
    counts, n_sentences, n_words = _count(sentences, None)
    assert list(counts) == ["a", "b", "c", "d", "e"] and (n_sentences, n_words) == (1, 14)
    # max_final_vocab=2: min_count rises to one above the 3rd count (3), so b and c tie out and only a stays
    assert _effective_min_count(counts, 1, 2) == 4
    assert _effective_min_count(counts, 1, 3) == 3 and _effective_min_count(counts, 5, 3) == 5
    assert _effective_min_count(counts, 0, None) == 1
    # max_vocab_size=2: after a sentence holds more distinct words, those seen < 1, then < 2, ... are dropped
    pruned, _, _ = _count([["x", "y", "z"], ["x", "x", "w"], ["v", "x"]], 2)
    assert pruned == {"x": 4, "v": 1}  # {x, y, z}: none < 1 goes; {x, y, z, w}: y, z, w < 2 go; {x, v} fits
    model = Word2Vec(min_count=1, max_final_vocab=2)
    model.build_vocab(sentences)
    assert model.wv.index_to_key == ["a"]


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "option"),
    [
        (lambda: Word2Vec(null_word=1), "null_word"),
        (lambda: Word2Vec(hashfxn=lambda word: 0), "hashfxn"),
        (lambda: Word2Vec(negative=0), "negative"),
        (lambda: Word2Vec(hs=2), "hs"),
        (lambda: Word2Vec(cbow_mean=2), "cbow_mean"),
        (lambda: FastText(sg=2), "sg"),
        (lambda: Word2Vec(sg=2), "sg"),
        (lambda: Word2Vec(vector_size=0), "vector_size"),
        (lambda: Word2Vec(sample=2.0), "sample"),
        (lambda: Word2Vec(workers=0), "workers"),
        (lambda: FastText(word_ngrams=2), "word_ngrams"),
        (lambda: FastText(bucket=-1), "bucket"),
    ],
)
def test_options_zoo_does_not_implement_are_refused_by_name(make, option):
    with pytest.raises(InvalidParameterError, match=rf"\b{option}\b"):
        make()


def test_training_calls_refuse_what_they_cannot_do(farm):
    model = Word2Vec(min_count=1)
    with pytest.raises(DataError, match="build the vocabulary"):
        model.train(farm, total_examples=len(farm), epochs=1)
    with pytest.raises(DataError, match=r"update=True\) needs a model with a vocabulary"):
        model.build_vocab(farm, update=True)
    with pytest.raises(DataError, match="corpus_file=PATH"):
        model.build_vocab("farm.txt")
    with pytest.raises(DataError, match="iterator"):
        model.build_vocab(s for s in farm)
    model.build_vocab(farm)
    with pytest.raises(InvalidParameterError, match="word_count"):
        model.train(farm, word_count=10)
    with pytest.warns(UserWarning, match="total_examples=10 but the corpus has 1500"):
        model.train(farm, total_examples=10, epochs=1)


# -- continued training on new text -----------------------------------------------------------


@pytest.mark.parametrize("cls", [Word2Vec, FastText])
def test_a_vocabulary_update_keeps_every_trained_row_and_training_goes_on(farm, more, cls):
    options = {**QUICK, "bucket": 2000} if cls is FastText else {**QUICK, "sg": 1}
    model = cls(farm, **options)
    old_words, old_vectors, old_outputs = list(model.wv.index_to_key), model.wv.vectors.copy(), model.syn1neg.copy()
    old_counts = model.wv.counts.copy()
    model.build_vocab(more, update=True)
    wv = model.wv
    assert wv.index_to_key[: len(old_words)] == old_words
    assert sorted(wv.index_to_key[len(old_words) :]) == ["lion", "purple", "tiger"]
    np.testing.assert_array_equal(wv.vectors[: len(old_words)], old_vectors)
    np.testing.assert_array_equal(model.syn1neg[: len(old_words)], old_outputs)
    assert np.all(model.syn1neg[len(old_words) :] == 0.0)  # output rows of new words start at zero
    new_counts = collections.Counter(w for s in more for w in s)
    np.testing.assert_array_equal(wv.counts[: len(old_words)], old_counts + [new_counts[w] for w in old_words])
    assert [wv.get_vecattr(w, "count") for w in ("lion", "tiger")] == [new_counts["lion"], new_counts["tiger"]]
    initial = wv["lion"].copy()
    assert np.linalg.norm(initial) > 0
    model.train(more, total_examples=len(more), epochs=model.epochs)
    assert not np.allclose(model.wv["lion"], initial)
    assert class_accuracy(model.wv, MORE, words=set(old_words)) >= 0.9  # the old words did not collapse
    assert {w for w, _ in model.wv.most_similar("lion", topn=3)} <= set(MORE["animal"])


def test_a_new_vocabulary_must_extend_the_old_one(farm):
    model = Word2Vec(farm, **QUICK)
    from zoo.data.vocab import Vocab
    from zoo_word2vec.vocab_update import grow_vocab

    other = Vocab(["zebra", *model.wv.index_to_key], [1] * 33)
    with pytest.raises(DataError, match="must start with the model's 32 words"):
        grow_vocab(model.zoo_model, other, key=jax.random.key(0))


# -- callbacks --------------------------------------------------------------------------------


class Recorder(CallbackAny2Vec):
    def __init__(self):
        self.calls, self.losses, self.vectors = [], [], []

    def on_train_begin(self, model):
        self.calls.append("train_begin")

    def on_epoch_begin(self, model):
        self.calls.append("epoch_begin")

    def on_epoch_end(self, model):
        self.calls.append("epoch_end")
        self.losses.append(model.get_latest_training_loss())
        self.vectors.append(model.wv["cat"].copy())

    def on_train_end(self, model):
        self.calls.append("train_end")


class OnlyEpochEnds:
    """A callback that is no CallbackAny2Vec and has one method."""

    def __init__(self):
        self.epochs = 0

    def on_epoch_end(self, model):
        self.epochs += 1


def test_callbacks_are_called_once_per_epoch_in_order_with_the_epochs_loss_and_vectors(farm):
    recorder, ends = Recorder(), OnlyEpochEnds()
    model = Word2Vec(farm, callbacks=[recorder, ends], sg=1, **{**QUICK, "epochs": 4})
    assert recorder.calls == ["train_begin", *["epoch_begin", "epoch_end"] * 4, "train_end"] and ends.epochs == 4
    assert all(math.isfinite(x) for x in recorder.losses)
    # gensim's running loss: summed over the call's pairs so far; each epoch's mean per pair falls
    assert recorder.losses == pytest.approx(np.cumsum([h["loss"] * h["pairs"] for h in model.history]))
    assert all(a < b for a, b in zip(recorder.losses, recorder.losses[1:], strict=False))
    assert model.history[-1]["loss"] < model.history[0]["loss"]
    assert not np.array_equal(recorder.vectors[0], recorder.vectors[1])  # each epoch's vectors, as they stand
    np.testing.assert_array_equal(recorder.vectors[-1], model.wv["cat"])
    assert model.get_latest_training_loss() == recorder.losses[-1]
    again = Recorder()
    model.train(farm, total_examples=len(farm), epochs=2, callbacks=[again])
    assert again.calls == ["train_begin", *["epoch_begin", "epoch_end"] * 2, "train_end"]
    assert len(model.history) == 6


# -- files ------------------------------------------------------------------------------------


def test_save_and_load_round_trip_and_go_on_training_alike(farm, more, tmp_path):
    model = Word2Vec(farm, sg=1, seed=3, **{**QUICK, "min_count": 2, "epochs": 3})
    path = model.save(tmp_path / "w2v.safetensors")
    loaded = Word2Vec.load(path)
    assert loaded.wv.index_to_key == model.wv.index_to_key
    np.testing.assert_array_equal(loaded.wv.vectors, model.wv.vectors)
    np.testing.assert_array_equal(loaded.syn1neg, model.syn1neg)
    for name in ("sg", "seed", "min_count", "workers", "vector_size", "window", "epochs", "corpus_count", "history"):
        assert getattr(loaded, name) == getattr(model, name), name
    assert loaded.get_latest_training_loss() == model.get_latest_training_loss()
    assert KeyedVectors.load(path).index_to_key == model.wv.index_to_key  # a zoo model file like any other
    for m in (model, loaded):
        m.build_vocab(more, update=True)
        m.train(more, total_examples=len(more), epochs=2)
    np.testing.assert_array_equal(loaded.wv.vectors, model.wv.vectors)
    with pytest.raises(WeightsError, match="not one of FastText's"):
        FastText.load(path)


def test_fasttext_save_and_load_keep_unseen_words_vectors(farm, tmp_path):
    model = FastText(farm, bucket=500, **{**QUICK, "epochs": 2})
    loaded = FastText.load(model.save(tmp_path / "ft.safetensors"))
    assert (loaded.min_n, loaded.max_n, loaded.bucket) == (3, 6, 500)
    np.testing.assert_array_equal(loaded.wv["horses"], model.wv["horses"])


def test_a_file_from_zoo_train_loads_and_trains_on(farm, tmp_path):
    vocab = build_word_vocab(collections.Counter(w for s in farm for w in s), min_count=1)
    built = zoo.build("word2vec-cbow", vocab=vocab, key=jax.random.key(0), embedding_size=8, epochs=1)
    loaded = Word2Vec.load(zoo.save(built, tmp_path / "cbow.safetensors"))
    assert (loaded.sg, loaded.vector_size, loaded.alpha) == (0, 8, 0.05)  # the spec's, not gensim's defaults
    loaded.workers = 1
    loaded.train(farm, total_examples=len(farm), epochs=1)
    assert len(loaded.history) == 1


# -- beside gensim ----------------------------------------------------------------------------


def test_quality_matches_gensims_word2vec_on_the_same_corpus_and_settings(farm, tmp_path):
    gensim = pytest.importorskip("gensim")
    questions = tmp_path / "questions.txt"
    questions.write_text(country_questions())
    countries = country_sentences()
    for sg in (1, 0):
        settings = {**QUICK, "sg": sg, "seed": 1}
        ours, theirs = Word2Vec(farm, **settings), gensim.models.Word2Vec(farm, **settings)
        assert class_accuracy(ours.wv) == class_accuracy(theirs.wv) == 1.0
    settings = {**QUICK, "sg": 1, "window": 3, "epochs": 20}
    scores = []
    for seed in (1, 2):
        ours = Word2Vec(countries, seed=seed, **settings)
        theirs = gensim.models.Word2Vec(countries, seed=seed, **settings)
        scores.append((ours.wv.evaluate_word_analogies(questions)[0], theirs.wv.evaluate_word_analogies(questions)[0]))
    ours, theirs = np.mean(scores, axis=0)
    assert theirs > 0.5 and abs(ours - theirs) < 0.15, scores

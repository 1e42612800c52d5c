"""TextCNN and the CNN encoder: masking, short inputs, learning, pretrained vectors, readers."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.building.builder import component_spec
from zoo.data.tokenize import get_tokenizer
from zoo.data.vocab import Vocab
from zoo.errors import DataError, UnknownNameError
from zoo.vectors import KeyedVectors
from zoo_textcnn.data import LabelledTexts, read_label_text, read_movie_reviews, tokenize
from zoo_textcnn.optim import kim_optimizer, max_norm
from zoo_textcnn.pretrained import initialise_embeddings
from zoo_textcnn.recipe import accuracy, fit


def _encoder(registry, **params):
    return component_spec("cnn", registry=registry, **params).build(input_size=4, cell=None, key=jax.random.key(0))


@pytest.mark.parametrize("padding", ["narrow", "wide"])
def test_pads_never_win_the_max(registry, padding):
    encoder = _encoder(registry, widths=[2, 3], maps=[5], padding=padding)
    x = jax.random.normal(jax.random.key(1), (9, 4))
    mask = jnp.arange(9) < 5
    huge = jnp.where(mask[:, None], x, 1e6)  # pads that would dominate any unmasked max
    clean = encoder(x[:5], jnp.ones(5, bool))
    noisy = encoder(huge, mask)
    np.testing.assert_allclose(noisy.final, clean.final, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(noisy.states[:5], clean.states, rtol=1e-5, atol=1e-5)
    assert bool(jnp.all(noisy.states[5:] == 0))


def test_pooling_is_over_windows_inside_the_sentence(registry):
    encoder = _encoder(registry, widths=[3], maps=[2], activation="identity")
    x = jax.random.normal(jax.random.key(2), (4, 4))
    out = encoder(x, jnp.ones(4, bool))
    weight, bias = encoder.filters[0], encoder.biases[0]
    windows = [jnp.concatenate([x[t], x[t + 1], x[t + 2]]) @ weight + bias for t in range(2)]
    np.testing.assert_allclose(out.final, jnp.max(jnp.stack(windows), axis=0), rtol=1e-5, atol=1e-5)


def test_wide_padding_pools_the_windows_that_overlap_the_sentence(registry):
    encoder = _encoder(registry, widths=[3], maps=[2], activation="identity", padding="wide")
    x = jax.random.normal(jax.random.key(2), (4, 4))
    out = encoder(x, jnp.ones(4, bool))
    padded = jnp.concatenate([jnp.zeros((2, 4)), x, jnp.zeros((2, 4))])  # Kim: zero vectors around the sentence
    windows = [padded[t : t + 3].reshape(-1) @ encoder.filters[0] + encoder.biases[0] for t in range(6)]
    np.testing.assert_allclose(out.final, jnp.max(jnp.stack(windows), axis=0), rtol=1e-5, atol=1e-5)
    narrow = _encoder(registry, widths=[3], maps=[2], activation="identity")(x, jnp.ones(4, bool))  # same filters
    np.testing.assert_allclose(out.states[:2], narrow.states[:2], rtol=1e-5, atol=1e-5)  # windows inside agree


@pytest.mark.parametrize("length", [1, 2, 4])
def test_inputs_shorter_than_the_widest_filter_are_padded(registry, length):
    encoder = _encoder(registry, widths=[3, 4, 5], maps=[3])
    x = jax.random.normal(jax.random.key(3), (length, 4))
    out = encoder(x, jnp.ones(length, bool))
    assert out.states.shape == (length, 9) and out.final.shape == (9,)
    assert bool(jnp.all(jnp.isfinite(out.final)))
    # The one window of width 5 sees the sentence followed by zero vectors.
    wide = jnp.concatenate([x, jnp.zeros((5 - length, 4))]).reshape(-1) @ encoder.filters[2] + encoder.biases[2]
    np.testing.assert_allclose(out.final[6:], jax.nn.relu(wide), rtol=1e-5, atol=1e-5)


def test_an_unscoped_init_scale_reaches_the_embeddings_not_the_filters():
    spec = zoo.describe("textcnn", init_scale=None)
    assert spec.slot("embedder").params["init_scale"] is None
    assert spec.slot("encoder").params["filter_scale"] == 0.01  # Kim's filters stay as they were
    model = zoo.build("textcnn", key=jax.random.key(0), vocab_size=20, num_classes=2, embedding_size=4, init_scale=None)
    assert float(jnp.max(jnp.abs(model.encoder.filters[0]))) <= 0.01


def test_a_fully_padded_input_gives_zeros(registry):
    out = _encoder(registry, highway_layers=0)(jnp.ones((3, 4)), jnp.zeros(3, bool))
    assert bool(jnp.all(out.final == 0)) and bool(jnp.all(out.states == 0))


def _sentiment(count: int, seed: int) -> LabelledTexts:
    """Filler words plus a cue; "not" flips the cue, so a width-2 filter is needed."""
    rng = np.random.default_rng(seed)
    filler = [f"w{i}" for i in range(30)]
    texts, labels = [], []
    for _ in range(count):
        positive = bool(rng.integers(2))
        negated = bool(rng.integers(2))
        cue = ["not"] if negated else []
        cue += [str(rng.choice(["good", "great"] if positive != negated else ["bad", "awful"]))]
        words = list(rng.choice(filler, size=int(rng.integers(0, 6))))
        spot = int(rng.integers(0, len(words) + 1))
        texts.append(words[:spot] + cue + words[spot:])
        labels.append("pos" if positive else "neg")
    return LabelledTexts(texts, labels)


@pytest.mark.slow  # trains to a stated accuracy
def test_textcnn_learns_negation_and_classifies_after_reload(tmp_path):
    train, test = _sentiment(1000, 0), _sentiment(200, 1)
    model, info = fit(
        "textcnn",
        train,
        test,
        epochs=5,
        batch_size=50,
        buckets=[8],
        progress=False,
        optimizer="adadelta",  # Kim's rule, at lr 1.0: faster than Adam's 1e-3 over these 100 steps
        # Kim's start (filters U(-0.01, 0.01), a zero classifier) is too slow for 100 Adadelta steps.
        overrides={
            "embedding_size": 16,
            "maps": [8],
            "widths": [1, 2],
            "filter_scale": 0.0,
            "output_init": "uniform",
        },
    )
    assert info["best_dev"] >= 0.97, info
    assert accuracy(model, test) == pytest.approx(info["best_dev"])
    path = zoo.save(model, tmp_path / "cnn.safetensors")
    loaded = zoo.load(path)
    assert loaded.classify(["w1 not good w2", "great", ["not", "bad"], ["awful"]]) == ["neg", "pos", "pos", "neg"]
    np.testing.assert_array_equal(loaded.predict_proba(["w3 bad"]), model.predict_proba(["w3 bad"]))


def test_classify_pads_single_words_and_empty_texts():
    vocab = Vocab.build([["a", "b"]], specials=("pad", "unk"))
    labels = Vocab(["x", "y"], specials={})
    model = zoo.build("textcnn", key=jax.random.key(0), vocab={"words": vocab, "labels": labels}, embedding_size=4)
    assert not np.any(model.output.weight) and not np.any(model.output.bias)  # Kim's classifier starts at zero
    probs = model.predict_proba([[], ["a"], "b a zzz"])
    assert probs.shape == (3, 2) and np.all(np.isfinite(probs))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_max_norm_bounds_each_class_vector():
    params = {"w": jnp.asarray([[3.0, 4.0], [0.3, 0.4]])}  # norms 5 and 0.5
    transform = max_norm(3.0, lambda tree: tree["w"])
    updates, _ = transform.update({"w": jnp.zeros((2, 2))}, transform.init(params), params)
    new = params["w"] + updates["w"]
    np.testing.assert_allclose(jnp.linalg.norm(new, axis=-1), [3.0, 0.5], rtol=1e-6)
    np.testing.assert_allclose(new[0], [1.8, 2.4], rtol=1e-6)


def test_static_training_keeps_no_optimiser_state_for_the_word_vectors():
    vocab = Vocab.build([["good", "bad", "film"]], specials=("pad", "unk"))
    labels = Vocab(["neg", "pos"], specials={})
    model = zoo.build("textcnn", key=jax.random.key(0), vocab={"words": vocab, "labels": labels}, embedding_size=4)
    params = eqx.filter(model, eqx.is_inexact_array)
    sizes = {
        train: sum(x.size for x in jax.tree.leaves(kim_optimizer(train_embeddings=train).init(params)))
        for train in (True, False)
    }
    table = model.embedder.weight.size
    assert sizes[True] - sizes[False] == 2 * table  # Adadelta's two accumulators of the table
    optimizer = kim_optimizer(train_embeddings=False)
    grads = jax.tree.map(jnp.ones_like, params)  # even a non-zero gradient does not move the table
    updates, _ = optimizer.update(grads, optimizer.init(params), params)
    new = eqx.apply_updates(model, updates)
    np.testing.assert_array_equal(new.embedder.weight, model.embedder.weight)
    assert not np.allclose(new.encoder.filters[0], model.encoder.filters[0])


def test_frozen_embeddings_get_no_gradient_and_pretrained_rows_are_copied(tmp_path):
    vocab = Vocab.build([["good", "bad", "film", "rare"]], specials=("pad", "unk"))
    labels = Vocab(["neg", "pos"], specials={})
    vectors = KeyedVectors(["good", "bad", "film"], np.arange(12, dtype=np.float32).reshape(3, 4))
    path = vectors.save_word2vec_format(tmp_path / "vectors.txt")
    model = zoo.build(
        "textcnn",
        key=jax.random.key(0),
        vocab={"words": vocab, "labels": labels},
        embedding_size=4,
        freeze_embeddings=True,
    )
    model, coverage = initialise_embeddings(model, path, key=jax.random.key(1))
    assert (coverage.found, coverage.total) == (3, 4)
    np.testing.assert_array_equal(model.embedder.weight[vocab.index["bad"]], [4, 5, 6, 7])
    batch = model.example_batch(key=jax.random.key(2), batch_size=4, length=6)
    grads = eqx.filter_jit(eqx.filter_grad(lambda m: m.loss(batch, key=jax.random.key(3))))(model)
    assert bool(jnp.all(grads.embedder.weight == 0))
    assert bool(jnp.any(grads.output.weight != 0))
    with pytest.raises(DataError, match="embedding_size=3"):
        initialise_embeddings(model, (["good"], np.ones((1, 3))), key=jax.random.key(1))


def test_words_outside_the_pretrained_vocabulary_get_its_subword_vectors():
    vocab = Vocab.build([["good", "Goodish", "film"]], specials=("pad", "unk"))
    labels = Vocab(["neg", "pos"], specials={})

    def subword(word):  # a stand-in for an n-gram sum
        return np.full(4, float(len(word)), np.float32)

    vectors = KeyedVectors(["good", "film"], np.arange(8, dtype=np.float32).reshape(2, 4), oov=subword)
    model = zoo.build("textcnn", key=jax.random.key(0), vocab={"words": vocab, "labels": labels}, embedding_size=4)
    model, coverage = initialise_embeddings(model, vectors, key=jax.random.key(1))
    assert (coverage.found, coverage.total, coverage.from_subwords) == (3, 3, 1)
    assert str(coverage) == "3 of 3 words (100.0%) have pretrained vectors, 1 of them from subwords"
    np.testing.assert_array_equal(model.embedder.weight[vocab.index["Goodish"]], [7, 7, 7, 7])  # looked up lowercased
    np.testing.assert_array_equal(model.embedder.weight[vocab.index["film"]], [4, 5, 6, 7])
    assert not np.array_equal(model.embedder.weight[vocab.unk_id], [7, 7, 7, 7])  # reserved rows stay random


def test_readers(tmp_path):
    assert tokenize("It's a ''great'' film, isn't it?") == [
        "it's", "a", "'", "'", "great", "'", "'", "film", ",", "isn't", "it", "?",
    ]  # fmt: skip
    assert tokenize("It's a ''great'' film (J.R.R.), isn't it?", tokenizer="kim") == [
        "it", "'s", "a", "''", "great", "''", "film", "(", "j", "r", "r", ")", ",", "is", "n't", "it", "?",
    ]  # fmt: skip
    assert tokenize("What 's `` Nam '' ?", lowercase=False, tokenizer="kim") == ["What", "'s", "``", "Nam", "''", "?"]
    # zoo's tokenisers serve textcnn, and textcnn's serve every zoo command (lowercasing there)
    assert tokenize("Don't stop, Bob!", tokenizer="punct") == ["don't", "stop", ",", "bob", "!"]
    assert get_tokenizer("kim")("ISN'T it?") == ["is", "n't", "it", "?"] == tokenize("ISN'T it?", tokenizer="kim")
    assert get_tokenizer("words-marks")("It's OK!") == ["it's", "ok", "!"]
    with pytest.raises(UnknownNameError, match="Did you mean 'kim'"):
        tokenize("text", tokenizer="kimm")
    reviews = tmp_path / "mr.tsv"
    reviews.write_text("id\tsentiment\ttext\n1\t2.5\tGood fun\n2\t0.0\tMeh\n3\t-1.2\tDull ''plot''\n")
    data = read_movie_reviews(reviews)
    assert data.labels == ["positive", "negative"] and data.texts[1] == ["dull", "'", "'", "plot", "'", "'"]
    lines = tmp_path / "data.tsv"
    lines.write_text("spam\tBuy NOW\n\nham\tsee you\n")
    assert read_label_text(lines, lowercase=False).texts == [["Buy", "NOW"], ["see", "you"]]
    lines.write_text("no label here\n")
    with pytest.raises(DataError, match="label<TAB>text"):
        read_label_text(lines)

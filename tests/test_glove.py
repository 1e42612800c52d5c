"""GloVe: the weighting, the loss, learning on a generated corpus, files and the recipe."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from word_corpora import neighbour_accuracy, topic_sentences

import zoo
from zoo.cli.main import main
from zoo.data.cooccurrence import cooccurrence_matrix
from zoo.data.corpus import build_word_vocab, count_tokens
from zoo.errors import DataError, TrainingDiverged
from zoo.vectors import KeyedVectors
from zoo_glove.model import glove_weight
from zoo_glove.train import entries_from_matrix, fit_glove


@pytest.fixture(scope="module")
def topics():
    sentences = topic_sentences()
    vocab = build_word_vocab(count_tokens(sentences), min_count=1)
    return vocab, cooccurrence_matrix(sentences, vocab, window=3)


@pytest.fixture(scope="module")
def trained(topics):
    vocab, counts = topics
    model = zoo.build("glove", key=jax.random.key(0), vocab=vocab, embedding_size=8, x_max=10.0)
    entries = entries_from_matrix(counts, x_max=10.0, alpha=0.75)
    fitted, history = fit_glove(model, entries, epochs=25, batch_size=256, key=jax.random.key(1))
    return model, fitted, history, entries


def test_weighting_function():
    x = jnp.array([1.0, 50.0, 100.0, 1000.0])
    np.testing.assert_allclose(glove_weight(x, 100.0, 0.75), [0.01**0.75, 0.5**0.75, 1.0, 1.0], rtol=1e-6)


def test_loss_is_the_weighted_least_squares_objective(trained):
    model = trained[0]
    batch = model.example_batch(key=jax.random.key(2))
    rows, cols, counts = (np.asarray(batch[k]) for k in ("rows", "cols", "counts"))
    w, c = np.asarray(model.word), np.asarray(model.context)
    b, bc = np.asarray(model.word_bias), np.asarray(model.context_bias)
    diff = (w[rows] * c[cols]).sum(-1) + b[rows] + bc[cols] - np.log(counts)
    expected = 0.5 * np.mean(np.minimum(1, (counts / model.spec["x_max"]) ** 0.75) * diff**2)
    assert float(model.loss(batch)) == pytest.approx(expected, rel=1e-5)
    np.testing.assert_allclose(np.asarray(model.vectors()), w + c)


def test_learns_topics_and_fits_log_counts(trained):
    model, fitted, history, entries = trained
    assert history[-1]["cost"] < history[0]["cost"] / 20
    assert neighbour_accuracy(KeyedVectors.from_model(fitted)) >= 0.85  # chance: 7 of 47
    counts = jnp.exp(entries.log_counts)
    before = np.abs(np.asarray(model.residuals(entries.rows, entries.cols, counts))).mean()
    after = np.abs(np.asarray(fitted.residuals(entries.rows, entries.cols, counts))).mean()
    assert after < before / 5, (before, after)


def test_training_is_deterministic_for_a_key(topics, trained):
    model, fitted, _, entries = trained
    again, _ = fit_glove(model, entries, epochs=25, batch_size=256, key=jax.random.key(1))
    np.testing.assert_array_equal(np.asarray(again.vectors()), np.asarray(fitted.vectors()))
    other, _ = fit_glove(model, entries, epochs=25, batch_size=256, key=jax.random.key(2))
    assert not np.array_equal(np.asarray(other.vectors()), np.asarray(fitted.vectors()))


def test_saved_model_loads_as_keyed_vectors(trained, tmp_path):
    fitted = trained[1]
    path = zoo.save(fitted, tmp_path / "glove.safetensors")
    kv = KeyedVectors.load(path)
    assert kv.index_to_key == list(fitted.vocabs["words"].tokens)
    np.testing.assert_array_equal(kv.vectors, np.asarray(fitted.vectors()))
    assert list(kv.counts) == list(fitted.vocabs["words"].counts)


def test_recipe_trains_from_the_command_line(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in topic_sentences(sentences=400)))
    out = tmp_path / "g.safetensors"
    args = ["train", "glove", "--data", str(corpus), "--out", str(out), "--dim", "6", "--window", "2"]
    args += ["--min-count", "2", "--epochs", "3", "--batch-size", "128", "--set", "x_max=20"]
    checkpoint = tmp_path / "g.ckpt.safetensors"
    code = main(
        [*args, "--tokenizer", "whitespace", "--quiet", "--checkpoint", str(checkpoint), "--checkpoint-every", "2"]
    )
    assert code == 0
    model = zoo.load(out)
    np.testing.assert_array_equal(np.asarray(zoo.load(checkpoint).vectors()), np.asarray(model.vectors()))
    assert model.spec.params["embedding_size"] == 6 and model.spec.params["x_max"] == 20.0
    assert model.spec.params["window"] == 2 and len(model.vocabs["words"]) == 48


def test_a_fit_stopped_after_an_epoch_resumes_to_exactly_the_same_vectors(trained, tmp_path):
    model, fitted, history, entries = trained
    path = tmp_path / "run.ckpt.safetensors"
    settings = {"epochs": 25, "batch_size": 256, "key": jax.random.key(1), "checkpoint": path, "checkpoint_every": 4}

    def die_in_epoch_14(epoch, cost, rate):
        if epoch == 14:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit_glove(model, entries, callback=die_in_epoch_14, **settings)  # the last checkpoint: after epoch 12
    resumed, resumed_history = fit_glove(model, entries, resume=True, **settings)
    assert [h["epoch"] for h in resumed_history] == list(range(13, 26))
    assert [h["cost"] for h in resumed_history] == [h["cost"] for h in history[12:]]
    for name in ("word", "context", "word_bias", "context_bias"):
        np.testing.assert_array_equal(np.asarray(getattr(resumed, name)), np.asarray(getattr(fitted, name)))
    with pytest.raises(DataError, match=r"another GloVe run: it has batch_size=256 \(this run: 128\)"):
        fit_glove(model, entries, resume=True, **{**settings, "batch_size": 128})


def test_a_diverging_fit_stops_with_training_diverged(topics):
    vocab, counts = topics
    model = zoo.build("glove", key=jax.random.key(0), vocab=vocab, embedding_size=4, x_max=10.0)
    entries = entries_from_matrix(counts, x_max=10.0, alpha=0.75)
    with pytest.raises(TrainingDiverged, match=r"GloVe: the cost became NaN or infinite in epoch 1.*\(inf: "):
        fit_glove(model, entries, epochs=2, batch_size=256, learning_rate=float("inf"), key=jax.random.key(1))
    bad = entries._replace(log_counts=entries.log_counts.at[5].set(jnp.nan))  # a bad value in the data
    with pytest.raises(TrainingDiverged, match="check the data for bad values"):
        fit_glove(model, bad, epochs=2, batch_size=256, key=jax.random.key(1))

"""ELMo: a small biLM learns, its vectors are stateless and contextual, and a tagger uses them."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.interfaces import ContextualEmbedder
from zoo_elmo.perplexity import perplexity
from zoo_elmo.recipe import fit
from zoo_elmo.softmax import draw_log_uniform, sampled_nll
from zoo_tagger.data import TaggedSentences, tag_vocab, word_vocab
from zoo_tagger.model import with_context

RIVER = [
    "we walked along the river bank at dawn",
    "the boat drifted to the muddy bank of the river",
    "fish swim near the grassy bank of the stream",
    "the river flooded the bank after the rain",
]
MONEY = [
    "she deposited money at the bank on monday",
    "the bank raised interest on the loan",
    "he borrowed money from the bank to buy a house",
    "the bank charged a fee on her account",
]
SMALL = {
    "projection_size": 16,
    "char_embedding_size": 8,
    "max_word_length": 12,
    "chars.widths": [1, 2, 3],
    "chars.maps": [8, 8, 16],
    "cell.cell_size": 32,
    "dropout": 0.0,
}


def _sentences() -> list[list[str]]:
    rng = np.random.default_rng(0)
    lines = [s.split() for s in RIVER + MONEY]
    return [lines[i] for i in rng.integers(0, len(lines), size=256)]


@pytest.fixture(scope="module")
def trained():
    corpus = _sentences()
    model, info = fit("elmo", corpus, steps=120, batch_size=16, lr=0.01, buckets=[10], progress=False, overrides=SMALL)
    return model, info, corpus


@pytest.mark.slow  # uses the trained biLM (the module's training run)
def test_the_bilm_learns(trained):
    model, _, corpus = trained
    scores = perplexity(model, corpus[:32], buckets=[10])
    vocab_size = len(model.vocabs["words"])
    # Uniform guessing would give the vocabulary size (about 50); the sentences are nearly memorised.
    assert scores["perplexity_forward"] < 3.0 and scores["perplexity_backward"] < 3.0, (scores, vocab_size)


def _cosines(vectors: list[np.ndarray]) -> np.ndarray:
    unit = np.stack([v / np.linalg.norm(v) for v in vectors])
    return unit @ unit.T


@pytest.mark.slow  # uses the trained biLM (the module's training run)
def test_bank_gets_a_vector_per_context_while_static_vectors_are_equal(trained):
    model, _, _ = trained
    sentences = [s.split() for s in RIVER + MONEY]
    where = [s.index("bank") for s in sentences]
    layers = model.embed(sentences, layers=True)  # [num_layers, len, dim] each
    token = [v[0, k] for v, k in zip(layers, where, strict=True)]
    static = model.vectors()[model.vocabs["words"].index["bank"]]  # the static (token-layer) embedder
    for vector in token:
        np.testing.assert_allclose(vector, static, atol=1e-5)
    mixed = [v[k] for v, k in zip(model.embed(sentences), where, strict=True)]
    assert not np.allclose(mixed[0], mixed[len(RIVER)], atol=0.1)  # a river bank is not a money bank
    top = _cosines([v[-1, k] for v, k in zip(layers, where, strict=True)])
    n = len(RIVER)
    within = np.concatenate([top[:n, :n][np.triu_indices(n, 1)], top[n:, n:][np.triu_indices(n, 1)]])
    across = top[:n, n:].ravel()
    assert within.mean() > across.mean(), top  # banks of one sense are closer than banks of two


@pytest.mark.slow  # uses the trained biLM (the module's training run)
def test_vectors_are_stateless_and_padding_free(trained):
    model, _, _ = trained
    sentence = MONEY[1].split()
    alone = model.embed([sentence])[0]
    again = model.embed([sentence])[0]
    np.testing.assert_array_equal(alone, again)
    crowded = model.embed([RIVER[1].split(), sentence, ["bank"] * 30], batch_size=3)[1]  # wider padding
    np.testing.assert_allclose(crowded, alone, atol=1e-5)
    ids = jnp.asarray(model.vocabs["words"].encode(sentence))
    by_ids = eqx.filter_jit(lambda m, i: m(i))(model, ids)  # the Embedder interface spells ids itself
    np.testing.assert_allclose(by_ids, alone, atol=1e-5)
    assert isinstance(model, ContextualEmbedder) and by_ids.shape == (len(sentence), model.embedding_size)


@pytest.mark.slow  # uses the trained biLM (the module's training run)
def test_elmo_features_in_a_tagger_train_the_mix_not_the_bilm(trained, tmp_path):
    elmo, _, _ = trained
    data = TaggedSentences([["the", "bank", "of", "the", "river"]], [["DT", "NN", "IN", "DT", "NN"]])
    vocab = {"words": word_vocab(data.sentences), "tags": tag_vocab(data.tags)}
    tagger = with_context(
        "bilstm-tagger+chars=none",
        elmo,
        key=jax.random.key(0),
        vocab=vocab,
        embedding_size=8,
        hidden_size=8,
        max_word_length=elmo.spec["max_word_length"],
    )
    assert tagger.mix_weights.shape == (elmo.num_layers,)
    batch = tagger.encode(data.sentences, 8)
    batch["tags"] = np.zeros_like(batch["words"])
    grads = eqx.filter_jit(eqx.filter_grad(lambda t: t.loss(batch)))(tagger)
    assert bool(jnp.any(grads.mix_weights != 0)) and bool(grads.mix_gamma != 0)
    assert bool(jnp.all(grads.context.softmax.weight == 0))
    assert bool(jnp.all(grads.context.forward_cells[0].weight_h == 0))
    loaded = zoo.load(zoo.save(tagger, tmp_path / "tagger.safetensors"))  # the biLM travels inside
    assert loaded.tag(data.sentences) == tagger.tag(data.sentences)
    np.testing.assert_array_equal(loaded.context.softmax.weight, elmo.softmax.weight)


def test_word_level_token_layer():
    vocab = word_vocab([s.split() for s in RIVER])
    model = zoo.build(
        "elmo+chars=none+embedder=token-embedding",
        key=jax.random.key(0),
        vocab={"words": vocab},
        projection_size=8,
        embedding_size=8,
        **{"cell.cell_size": 8},
    )
    assert model.chars is None and model.embedder is not None
    batch = model.example_batch(key=jax.random.key(1), batch_size=2, length=6)
    assert "chars" not in batch
    loss = eqx.filter_jit(lambda m, b: m.loss(b))(model, batch)
    assert bool(jnp.isfinite(loss)) and float(loss) == pytest.approx(np.log(len(vocab)), rel=0.1)


def test_sampled_softmax_with_every_id_once_is_the_full_softmax():
    states = jax.random.normal(jax.random.key(0), (5, 4))
    weight, bias = jax.random.normal(jax.random.key(1), (7, 4)), jax.random.normal(jax.random.key(2), (7,))
    targets, valid = jnp.asarray([0, 3, 6, 3, 1]), jnp.asarray([True, True, True, True, False])
    full = -jnp.take_along_axis(jax.nn.log_softmax(states @ weight.T + bias), targets[:, None], 1)[:, 0]
    got = sampled_nll(states, targets, valid, weight, bias, jnp.arange(7), jnp.zeros(7))
    np.testing.assert_allclose(got, jnp.sum(full[:4]), rtol=1e-5)
    samples, log_expected = draw_log_uniform(jax.random.key(3), 1000, 64)
    assert samples.shape == (64,) and float(jnp.logaddexp.reduce(log_expected)) == pytest.approx(np.log(64), rel=1e-4)
    assert float(jnp.mean(samples < 100)) > 0.5  # frequent (low) ids are drawn most

"""Recurrent language models: learning, carried state (TBPTT), resume, perplexity, save/load."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import zoo
from zoo.data.text import split_text
from zoo.generation import generate_text
from zoo.training.trainer import train
from zoo_lm.perplexity import perplexity, perplexity_from_nll
from zoo_lm.recipe import build_vocab, train_language_model
from zoo_lm.stream import StreamBatches

TEXT = "to be or not to be that is the question\n" * 40
TINY = {"hidden_size": 24, "embedding_size": 12, "num_layers": 1}
SMALL = {"hidden_size": 8, "embedding_size": 8}


@pytest.fixture(scope="module")
def trained():
    """A character LSTM trained on a repeated line (the seeds' exercise)."""
    chars = split_text(TEXT, "char")
    vocab = build_vocab(chars, "char")
    sizes = {"hidden_size": 48, "embedding_size": 16, "init_scale": 0.3}
    model = zoo.build("char-lstm-lm", key=jax.random.key(0), vocab={"tokens": vocab}, **sizes)
    result = train_language_model(
        model,
        vocab.encode(chars),
        key=jax.random.key(1),
        batch_size=8,
        unroll=20,
        steps=150,
        optimizer=optax.adam(1e-2),
        progress=False,
    )
    return result, vocab


@pytest.mark.slow  # uses the trained character model (the module's training run)
def test_a_tiny_character_model_learns_the_text(trained):
    result, _ = trained
    assert result.compilations == 1
    # 17 symbols: 2.8 nats for a uniform guess; once learnt, every character but the first is determined
    assert result.history[-1]["loss"] < 0.1, result.history
    text = generate_text(result.model, "to be or", length=30, key=jax.random.key(0), temperature=0.0)[0]
    assert text.startswith(" not to be that is"), text


@pytest.mark.slow  # uses the trained character model (the module's training run)
def test_save_load_round_trip_gives_the_same_model_and_text(trained, tmp_path):
    model = trained[0].model
    loaded = zoo.load(zoo.save(model, tmp_path / "lm.safetensors"))
    assert loaded.spec == model.spec and loaded.vocabs == model.vocabs and loaded.level == "char"
    eqx.tree_equal(loaded, model)
    key = jax.random.key(3)
    assert generate_text(loaded, "that", length=25, key=key) == generate_text(model, "that", length=25, key=key)


@eqx.filter_jit
def rows_nll(model, rows):
    """NLL of each whole row read in one pass, ``[rows, len - 1]``."""
    ones = jnp.ones(rows.shape[1] - 1, bool)
    logits = jax.vmap(lambda r: model(r[:-1], ones, model.init_state())[0])(rows)
    logp = jax.nn.log_softmax(logits)
    return -jnp.take_along_axis(logp, rows[:, 1:, None], axis=-1)[..., 0]


def test_carried_state_equals_reading_each_row_whole_and_differs_from_resetting():
    model = zoo.build("gru-lm", key=jax.random.key(2), vocab_size=11, **TINY)
    ids = np.random.default_rng(0).integers(0, 11, 2 * 25)
    source = StreamBatches(ids, batch_size=2, unroll=6)  # 24 predictions per row: 4 batches
    nll_of = eqx.filter_jit(lambda m, batch, carry: m.token_nll(batch, carry))
    carry, carried, reset = model.initial_carry(2), [], []
    for batch in source:
        nll, carry = nll_of(model, batch, carry)
        carried.append(nll)
        reset.append(nll_of(model, batch, model.initial_carry(2))[0])
    whole = rows_nll(model, jnp.asarray(source.rows))
    np.testing.assert_allclose(np.concatenate(carried, axis=1), whole, atol=1e-5)
    assert not np.allclose(np.concatenate(reset, axis=1), whole, atol=1e-3)


def test_train_threads_the_carry_and_resumes_exactly(tmp_path):
    model = zoo.build("rnn-lm", key=jax.random.key(4), vocab_size=9, **TINY)
    ids = np.random.default_rng(1).integers(0, 9, 3 * 40)
    data = StreamBatches(ids, batch_size=3, unroll=5)
    frozen = train(
        model,
        data,
        steps=3,
        key=jax.random.key(0),
        optimizer=optax.sgd(0.0),
        carry=model.initial_carry(3),
        progress=False,
    )
    rows = jnp.asarray(data.rows[:, :15])
    _, expected = eqx.filter_jit(jax.vmap(lambda r: model(r, jnp.ones(15, bool), model.init_state())))(rows)
    for got, want in zip(jax.tree.leaves(frozen.carry), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5)

    settings = dict(key=jax.random.key(0), optimizer=optax.adam(1e-2), progress=False)
    straight = train(model, data, steps=6, carry=model.initial_carry(3), **settings)
    path = tmp_path / "ckpt.safetensors"
    train(model, data, steps=3, carry=model.initial_carry(3), checkpoint=path, **settings)
    resumed = train(model, data, steps=6, carry=model.initial_carry(3), checkpoint=path, resume=True, **settings)
    assert resumed.step == 6
    eqx.tree_equal(resumed.model, straight.model)
    for a, b in zip(jax.tree.leaves(resumed.carry), jax.tree.leaves(straight.carry), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_perplexity_is_exp_of_the_mean_nll_on_a_hand_computed_case():
    model = zoo.build("lstm-lm", key=jax.random.key(5), vocab_size=4, **TINY)
    # all weights 0 but the output bias: the hidden state stays 0, p(next) = softmax(bias) always
    zeroed = jax.tree.map(lambda a: jnp.zeros_like(a) if eqx.is_inexact_array(a) else a, model)
    probs = np.asarray([0.1, 0.2, 0.3, 0.4])
    fixed = eqx.tree_at(lambda m: m.output_bias, zeroed, jnp.log(jnp.asarray(probs, jnp.float32)))
    ids = [0, 1, 2, 3, 3, 1]
    expected = -np.mean(np.log(probs[[1, 2, 3, 3, 1]]))
    for batch_size, unroll in ((1, 2), (1, 64), (2, 1)):
        scores = perplexity(fixed, ids, batch_size=batch_size, unroll=unroll)
        count = 5 if batch_size == 1 else 4  # two rows [0 1 2], [3 3 1]: each row's first token is not predicted
        manual = expected if batch_size == 1 else -np.mean(np.log(probs[[1, 2, 3, 1]]))
        assert scores["tokens"] == count
        assert scores["perplexity"] == pytest.approx(math.exp(manual), rel=1e-5)
        assert scores["bits"] == pytest.approx(manual / math.log(2), rel=1e-5)
    assert perplexity_from_nll(0.0, 10)["perplexity"] == 1.0


def test_tied_embeddings_share_the_table_and_residual_layers_build():
    tied = zoo.build(
        "lstm-lm", key=jax.random.key(6), vocab_size=10, tie_embeddings=True, hidden_size=16, embedding_size=8
    )
    assert tied.output_weight is None and tied.projection.shape == (16, 8)
    same = zoo.build(
        "lstm-lm", key=jax.random.key(6), vocab_size=10, tie_embeddings=True, hidden_size=8, embedding_size=8
    )
    assert same.projection is None
    loss_of = eqx.filter_jit(lambda m: m.loss(m.example_batch(key=jax.random.key(0))))
    grads = eqx.filter_jit(eqx.filter_grad(loss_of))(same)
    assert bool(jnp.any(grads.embedder.weight != 0))
    deep = zoo.build(
        "lm",
        key=jax.random.key(7),
        vocab_size=10,
        num_layers=4,
        residual=True,
        **SMALL,
    )
    assert len(deep.layers) == 4 and bool(jnp.isfinite(loss_of(deep)))
    with pytest.raises(zoo.InvalidParameterError, match=r"num_layers=0 is out of range: .* \[1, 64\]"):
        zoo.build("lm", key=jax.random.key(0), num_layers=0)

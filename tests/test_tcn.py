"""The dilated causal convolutional language model (tcn-lm)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import zoo
from zoo.data.text import split_text
from zoo.generation import generate_text
from zoo_lm.conv import CausalConv1d
from zoo_lm.recipe import build_vocab, train_language_model

SIZES = {"hidden_size": 16, "embedding_size": 16, "num_levels": 3, "kernel_size": 2, "dropout": 0.0}
LIVELY = {"init_std": 0.1, "init_scale": 0.5}  # larger than Bai et al.'s 0.01: a tiny model must learn fast


def test_a_causal_convolution_reads_only_the_past_at_its_dilation():
    conv = CausalConv1d(1, 1, kernel_size=3, dilation=2, weight_norm=False, key=jax.random.key(0))
    conv = eqx.tree_at(
        lambda c: (c.weight, c.bias), conv, (jnp.asarray([1.0, 10.0, 100.0]).reshape(3, 1, 1), jnp.zeros(1))
    )
    x = jnp.arange(1.0, 9.0)[:, None]
    y, state = conv(x, jnp.ones(8, bool), conv.init_state())
    # y_t = 100 x_t + 10 x_{t-2} + 1 x_{t-4}, zeros before the start
    expected = [100 * t + 10 * (t - 2 if t > 2 else 0) + (t - 4 if t > 4 else 0) for t in range(1, 9)]
    np.testing.assert_allclose(np.asarray(y[:, 0]), expected)
    np.testing.assert_array_equal(np.asarray(state[:, 0]), [5, 6, 7, 8])
    assert conv.history == 4


def test_receptive_field_is_exact():
    model = zoo.build("tcn-lm", key=jax.random.key(1), vocab_size=11, **SIZES, **LIVELY)
    field = model.receptive_field
    assert field == 1 + 2 * (1 + 2 + 4)  # kernel 2: each block's two convolutions look back d tokens each
    ids = jax.random.randint(jax.random.key(2), (24,), 0, 11)
    far = ids.at[23 - field].set((ids[23 - field] + 1) % 11)  # just outside the window of the last output
    near = ids.at[24 - field].set((ids[24 - field] + 1) % 11)  # the oldest token inside it
    run = eqx.filter_jit(lambda m, i: m(i, jnp.ones(24, bool), m.init_state())[0][-1])
    base = run(model, ids)
    np.testing.assert_allclose(np.asarray(run(model, far)), np.asarray(base), atol=1e-6)
    assert not np.allclose(np.asarray(run(model, near)), np.asarray(base), atol=1e-6)


def test_tied_embeddings_need_equal_sizes():
    with pytest.raises(zoo.RegistryError, match="embedding_size == hidden_size"):
        zoo.build("tcn-lm", key=jax.random.key(0), vocab_size=11, **{**SIZES, "embedding_size": 8})
    untied = zoo.build(
        "tcn-lm", key=jax.random.key(0), vocab_size=11, tie_embeddings=False, **{**SIZES, "embedding_size": 8}
    )
    assert untied.output_weight.shape == (11, 16)


@pytest.mark.slow  # trains to a stated loss
def test_a_tiny_tcn_learns_text_with_carried_history(tmp_path):
    text = "to be or not to be that is the question\n" * 40
    chars = split_text(text, "char")
    vocab = build_vocab(chars, "char")
    model = zoo.build(
        "tcn-lm", key=jax.random.key(3), vocab={"tokens": vocab}, level="char", **{**SIZES, "num_levels": 4}, **LIVELY
    )
    result = train_language_model(
        model,
        vocab.encode(chars),
        key=jax.random.key(4),
        batch_size=8,
        unroll=16,
        steps=120,
        optimizer=optax.adam(1e-2),
        progress=False,
    )
    assert result.history[-1]["loss"] < 0.2, result.history
    loaded = zoo.load(zoo.save(result.model, tmp_path / "tcn.safetensors"))
    text = generate_text(loaded, "to be or", length=20, key=jax.random.key(0), temperature=0.0)[0]
    assert text.startswith(" not to be"), text

"""`zoo_lm.softmax_loss`: the chunked output-layer cross-entropy equals the plain one, value and gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo_lm.softmax_loss import chunk_rows, linear_softmax_nll


def _plain(x, weight, bias, targets, weights):
    logits = x @ weight.T + bias
    nll = jax.nn.logsumexp(logits, axis=-1) - jnp.take_along_axis(logits, targets[:, None], axis=-1)[:, 0]
    return jnp.sum(weights * nll)


def _inputs(n=23, d=7, vocab=50, seed=0):
    k = jax.random.split(jax.random.key(seed), 5)
    x = jax.random.normal(k[0], (n, d))
    weight = jax.random.normal(k[1], (vocab, d))
    bias = jax.random.normal(k[2], (vocab,))
    targets = jax.random.randint(k[3], (n,), 0, vocab)
    weights = jax.random.uniform(k[4], (n,)) * (jnp.arange(n) % 5 != 0)  # some pads
    return x, weight, bias, targets, weights


@pytest.mark.parametrize("chunk_bytes", [4 * 50 * 4, 4 * 50 * 23, 1 << 30], ids=["ragged-chunks", "one-chunk", "huge"])
def test_value_and_gradients_equal_the_plain_loss(chunk_bytes):
    args = _inputs()
    loss = jax.jit(lambda x, w, b, t, v: linear_softmax_nll(x, w, b, t, v, chunk_bytes=chunk_bytes))
    grad = jax.jit(jax.grad(loss, (0, 1, 2, 4)))  # jitted: eager, each chunk's scan body compiles on its own
    plain = jax.jit(jax.grad(_plain, (0, 1, 2, 4)))
    np.testing.assert_allclose(float(loss(*args)), float(_plain(*args)), rtol=1e-5)
    for got, want in zip(grad(*args), plain(*args), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_pads_get_no_gradient_and_the_cotangent_scales():
    x, weight, bias, targets, weights = _inputs()
    d_x = jax.grad(lambda x: 3.0 * linear_softmax_nll(x, weight, bias, targets, weights, chunk_bytes=800))(x)
    assert np.all(np.asarray(d_x)[np.asarray(weights) == 0] == 0)
    plain = jax.grad(lambda x: 3.0 * _plain(x, weight, bias, targets, weights))(x)
    np.testing.assert_allclose(np.asarray(d_x), np.asarray(plain), rtol=1e-4, atol=1e-5)


def test_under_jit_at_a_word_vocabulary():
    args = _inputs(n=700, d=16, vocab=10_002)
    value = jax.jit(linear_softmax_nll)(*args)
    np.testing.assert_allclose(float(value), float(_plain(*args)), rtol=1e-5)


def test_chunks_split_evenly_within_the_budget():
    assert chunk_rows(700, 10_002, 8 << 20) == 175  # 4 chunks of 7 MB
    assert chunk_rows(700, 100, 8 << 20) == 700
    assert chunk_rows(3, 10**9, 8) == 1

"""A `dtype` keyword, as equinox's layers take one, in zoo.nn and the embedding and recurrent
components: float32 unless given, and never a hyperparameter a file records."""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import zoo
from zoo.nn import run_cell, uniform_rows
from zoo_embedding.token import TokenEmbedding
from zoo_recurrent.cells import ElmanCell, GRUCell, LSTMCell
from zoo_recurrent.encoder import RecurrentEncoder

HALF = jnp.bfloat16


def float_dtypes(tree) -> set:
    return {leaf.dtype for leaf in jax.tree.leaves(tree) if jnp.issubdtype(leaf.dtype, jnp.floating)}


def test_uniform_rows_draws_in_the_dtype_asked_for():
    key = jax.random.key(0)
    assert uniform_rows(key, (10, 3), -1.0, 1.0).dtype == jnp.float32
    half = uniform_rows(key, (10, 3), -1.0, 1.0, block_rows=4, dtype=HALF)
    assert half.dtype == HALF and float(jnp.min(half)) >= -1.0 and float(jnp.max(half)) <= 1.0
    assert bool(jnp.all(jnp.any(half != 0, axis=1)))


@pytest.mark.parametrize("init_scale", [None, 0.1])
def test_the_token_embedding_is_built_in_its_dtype(init_scale):
    default = eqx.filter_eval_shape(TokenEmbedding, 11, embedding_size=4, init_scale=init_scale, key=jax.random.key(0))
    half = TokenEmbedding(11, embedding_size=4, init_scale=init_scale, key=jax.random.key(0), dtype=HALF)
    assert default.weight.dtype == jnp.float32 and half.weight.dtype == HALF
    assert half(jnp.asarray([1, 2, 3])).dtype == HALF


@pytest.mark.parametrize("cell", [ElmanCell, LSTMCell, GRUCell], ids=lambda c: c.__name__)
def test_a_cell_holds_its_parameters_and_state_in_its_dtype(cell):
    assert float_dtypes(eqx.filter_eval_shape(cell, 3, 5, key=jax.random.key(0))) == {jnp.dtype(jnp.float32)}
    half = eqx.filter_jit(lambda key: cell(3, 5, key=key, dtype=HALF))(jax.random.key(0))  # one compilation
    assert float_dtypes(half) == {jnp.dtype(HALF)} and float_dtypes(half.init_state()) == {jnp.dtype(HALF)}
    xs = jax.random.normal(jax.random.key(1), (6, 3), HALF)
    outputs, final = eqx.filter_jit(run_cell)(half, xs, jnp.arange(6) < 4)
    assert outputs.dtype == HALF and float_dtypes(final) == {jnp.dtype(HALF)}
    assert np.all(np.isfinite(np.asarray(outputs, np.float32)))


def test_the_recurrent_encoder_gives_its_cells_the_dtype():
    build = functools.partial(eqx.filter_eval_shape, RecurrentEncoder, 3, LSTMCell, hidden_size=4, num_layers=2)
    assert float_dtypes(build(bidirectional=True, key=jax.random.key(0), dtype=HALF)) == {jnp.dtype(HALF)}
    default = build(key=jax.random.key(0))
    assert float_dtypes(default) == {jnp.dtype(jnp.float32)}


def test_dtype_is_no_registered_hyperparameter():
    spec = zoo.describe("lstm-lm")
    assert all("dtype" not in slot.params for slot in spec.slots) and "dtype" not in spec.params

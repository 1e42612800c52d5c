"""Numerical helpers of the core (`zoo.nn`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.nn import argmax, top_k, uniform_rows


def test_uniform_rows_fills_every_row_within_bounds_and_repeats_for_a_key():
    key = jax.random.key(3)
    x = np.asarray(uniform_rows(key, (1000, 7), -0.5, 0.25, block_rows=128))  # 8 blocks, the last overlapping
    assert x.shape == (1000, 7) and x.dtype == np.float32
    assert x.min() >= -0.5 and x.max() < 0.25
    assert np.all(np.any(x != 0.0, axis=1))  # no row left unfilled, the overlapped tail included
    assert abs(x.mean() - (-0.125)) < 0.01 and abs(x.std() - 0.75 / np.sqrt(12)) < 0.01
    np.testing.assert_array_equal(x, np.asarray(uniform_rows(key, (1000, 7), -0.5, 0.25, block_rows=128)))
    assert not np.array_equal(x[:128], x[128:256])  # blocks draw from their own keys
    assert not np.array_equal(x, np.asarray(uniform_rows(jax.random.key(4), (1000, 7), -0.5, 0.25, block_rows=128)))


def test_uniform_rows_rejects_a_shape_without_rows_or_empty_blocks():
    with pytest.raises(ValueError, match="block_rows >= 1"):
        uniform_rows(jax.random.key(0), (10, 2), 0.0, 1.0, block_rows=0)
    with pytest.raises(ValueError, match="shape with rows"):
        uniform_rows(jax.random.key(0), (), 0.0, 1.0)
    assert uniform_rows(jax.random.key(0), [0, 3], 0.0, 1.0).shape == (0, 3)


def test_uniform_rows_in_one_block_is_jax_random_uniform():
    key = jax.random.key(0)
    expected = jax.random.uniform(jax.random.fold_in(key, 0), (50, 3), minval=-1.0, maxval=1.0)
    np.testing.assert_array_equal(np.asarray(uniform_rows(key, (50, 3), -1.0, 1.0)), np.asarray(expected))


@pytest.mark.parametrize(("n", "k"), [(5000, 10), (4999, 10), (1000, 3), (317, 2), (40, 10), (7, 7)])
def test_top_k_is_lax_top_k_ties_and_infinities_included(n, k):
    rng = np.random.default_rng(n + k)
    rows = [
        rng.normal(size=n),
        rng.integers(-2, 2, n).astype(float),  # ties everywhere: the lower index must win
        np.where(rng.random(n) < 0.9, -np.inf, rng.normal(size=n)),  # mostly -inf, as an empty beam
        np.full(n, -np.inf),
    ]
    x = jnp.asarray(np.stack(rows).astype(np.float32)).reshape(2, 2, n)
    values, indices = jax.jit(top_k, static_argnums=1)(x, k)
    expected_values, expected_indices = jax.lax.top_k(x, k)
    np.testing.assert_array_equal(np.asarray(values), np.asarray(expected_values))
    np.testing.assert_array_equal(np.asarray(indices), np.asarray(expected_indices))


@pytest.mark.parametrize("n", [1000, 7, 1])
def test_argmax_is_max_and_jnp_argmax_ties_infinities_and_nans_included(n):
    rng = np.random.default_rng(n)
    rows = [
        rng.normal(size=n),
        rng.integers(-2, 2, n).astype(float),  # ties: the lower index must win
        np.where(rng.random(n) < 0.9, -np.inf, rng.normal(size=n)),
        np.full(n, -np.inf),
        np.where(np.arange(n) == n // 2, np.nan, rng.normal(size=n)),  # a NaN counts as the largest
    ]
    x = jnp.asarray(np.stack(rows).astype(np.float32))
    values, indices = jax.jit(argmax)(x)
    expected = jnp.argmax(x, axis=-1)
    np.testing.assert_array_equal(np.asarray(indices), np.asarray(expected))
    np.testing.assert_array_equal(np.asarray(values), np.asarray(jnp.take_along_axis(x, expected[:, None], -1)[:, 0]))
    assert indices.dtype == jnp.int32

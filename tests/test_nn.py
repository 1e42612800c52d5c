"""Numerical helpers of the core (`zoo.nn`)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from zoo.nn import uniform_rows


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

"""Checks for attention mechanisms."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.interfaces import Attention, Memory
from zoo.testing.base import assert_gradients_reach_every_parameter, assert_trees_close, parameter_leaves
from zoo.testing.components import _Built

__all__ = ["AttentionTests"]


class AttentionTests(_Built):
    """Weights sum to 1 on real positions, exactly 0 on masked ones, never NaN."""

    zoo_kind: ClassVar[str] = "attention"
    size: ClassVar[int] = 6
    source_length: ClassVar[int] = 7

    @classmethod
    def wired(cls, registry):
        return {"query_size": cls.size, "key_size": cls.size}

    @pytest.fixture(scope="class")
    @classmethod
    def inputs(cls, module):
        values = jax.random.normal(jax.random.key(2), (3, cls.source_length, cls.size))
        mask = jnp.arange(cls.source_length)[None, :] < jnp.asarray([7, 4, 1])[:, None]
        queries = jax.random.normal(jax.random.key(3), (3, cls.size))
        return values, mask, queries

    def memory(self, module, values, mask) -> Memory:
        return Memory(values=values, keys=module.precompute(values), mask=mask)

    def test_is_an_attention(self, module):
        assert isinstance(module, Attention)
        assert isinstance(module.reads_previous_state, bool)
        assert (module.query_size, module.key_size) == (self.size, self.size)

    def test_weights_form_a_distribution_over_real_positions(self, module, inputs):
        values, mask, queries = inputs
        for row in range(3):
            context, weights = module(queries[row], self.memory(module, values[row], mask[row]))
            assert context.shape == (self.size,)
            assert weights.shape == (self.source_length,)
            assert bool(jnp.all(weights[~mask[row]] == 0)), "masked positions must get exactly 0"
            np.testing.assert_allclose(float(jnp.sum(weights)), 1.0, atol=1e-5)
            np.testing.assert_allclose(np.asarray(context), np.asarray(weights @ values[row]), atol=1e-5)

    def test_context_is_the_weighted_sum_of_any_values(self, module, inputs):
        # A decoder may hand the attention values already projected (of another width):
        # the scores come from the keys, the context is ``weights @ values``.
        values, mask, queries = inputs
        other = jax.random.normal(jax.random.key(6), (self.source_length, 3))
        for row in range(3):
            keys = module.precompute(values[row])
            context, weights = module(queries[row], Memory(values=other, keys=keys, mask=mask[row]))
            _, expected_weights = module(queries[row], self.memory(module, values[row], mask[row]))
            np.testing.assert_allclose(np.asarray(weights), np.asarray(expected_weights), rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(np.asarray(context), np.asarray(weights @ other), rtol=1e-5, atol=1e-6)

    def test_fully_masked_memory_gives_no_nan(self, module, inputs):
        values, _, queries = inputs
        nothing = jnp.zeros(self.source_length, bool)
        context, weights = module(queries[0], self.memory(module, values[0], nothing))
        assert bool(jnp.all(jnp.isfinite(context))) and bool(jnp.all(jnp.isfinite(weights)))
        grads = eqx.filter_jit(
            eqx.filter_grad(lambda m: jnp.sum(m(queries[0], self.memory(m, values[0], nothing))[0]))
        )(module)
        for path, grad in parameter_leaves(grads):
            assert bool(jnp.all(jnp.isfinite(grad))), f"NaN gradient of {path} with a fully masked memory"

    def test_padding_invariance(self, module, inputs):
        values, mask, queries = inputs
        noise = 100.0 * jax.random.normal(jax.random.key(4), (3, 5, self.size))
        longer = jnp.concatenate([values, noise], axis=1)
        longer_mask = jnp.concatenate([mask, jnp.zeros((3, 5), bool)], axis=1)
        for row in range(3):
            short = module(queries[row], self.memory(module, values[row], mask[row]))
            context, weights = module(queries[row], self.memory(module, longer[row], longer_mask[row]))
            assert_trees_close((context, weights[: self.source_length]), short)

    def test_vmap_equals_loop_and_jit(self, module, inputs):
        values, mask, queries = inputs

        def attend(m, q, v, k):
            return m(q, self.memory(m, v, k))

        batched = eqx.filter_jit(lambda m: jax.vmap(lambda q, v, k: attend(m, q, v, k))(queries, values, mask))(module)
        for row in range(3):
            assert_trees_close(
                jax.tree.map(lambda a, r=row: a[r], batched), attend(module, queries[row], values[row], mask[row])
            )

    def test_gradients_reach_every_parameter(self, module, inputs):
        values, mask, queries = inputs
        if not parameter_leaves(module):
            pytest.skip("this attention has no parameters")
        target = jax.random.normal(jax.random.key(8), (self.size,))
        grads = eqx.filter_grad(lambda m: jnp.sum(m(queries[0], self.memory(m, values[0], mask[0]))[0] * target))(
            module
        )
        assert_gradients_reach_every_parameter(grads, "attention")

"""Checks for attention mechanisms."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

from zoo.interfaces import Attention, Memory
from zoo.testing.base import assert_gradients_reach_every_parameter, assert_trees_close, parameter_leaves
from zoo.testing.components import _Built

__all__ = ["AttentionTests"]


class AttentionTests(_Built):
    """Weights sum to 1 on real positions and are exactly 0 on masked ones (all masked: all 0,
    and a zero context); stateless; padding invariant; vmap and jit equal a loop."""

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

    @pytest.fixture(scope="class")
    @classmethod
    def example(cls, inputs):
        values, mask, queries = inputs
        return queries[1], values[1], mask[1]

    @staticmethod
    def memory(module, values, mask) -> Memory:
        return Memory(values=values, keys=module.precompute(values), mask=mask)

    @classmethod
    def outputs(cls, module, example):
        query, values, mask = example
        return module(query, cls.memory(module, values, mask))

    def test_is_an_attention(self, entry, module):
        assert isinstance(module, Attention), f"{type(module).__name__} is not a zoo.Attention"
        assert isinstance(module.reads_previous_state, bool), (
            f"{self.subject(entry)}: reads_previous_state must be a bool, got {module.reads_previous_state!r}"
        )
        sizes = (module.query_size, module.key_size)
        assert sizes == (self.size, self.size), f"{self.subject(entry)}: (query_size, key_size) is {sizes}"

    def test_is_stateless(self, registry, entry, inputs):
        """Interleaved use (precompute A, precompute B, attend A, attend B) equals fresh calls, and
        using a module leaves no attribute on it but its fields: a decoder holds one attention for
        many sources, and jit rebuilds the module from its fields alone."""
        values, mask, queries = inputs
        what = f"statelessness of {self.subject(entry)}"
        fresh = [
            self.outputs(self.make(registry, entry, jax.random.key(0)), (queries[r], values[r], mask[r]))
            for r in (0, 1)
        ]
        assert not bool(jnp.allclose(fresh[0][1][:4], fresh[1][1][:4])), (
            f"{what}: memories A and B give the same weights"
        )
        used = self.make(registry, entry, jax.random.key(0))
        keys = [used.precompute(values[r]) for r in (0, 1)]
        for r, name in ((0, "A"), (1, "B")):
            got = used(queries[r], Memory(values=values[r], keys=keys[r], mask=mask[r]))
            assert_trees_close(
                got,
                fresh[r],
                what=f"{what}: memory {name} after precomputing A, then B, vs fresh ([0] context, [1] weights)",
            )
        fields = {f.name for f in dataclasses.fields(used)}
        extra = sorted(set(vars(used)) - fields)
        assert not extra, (
            f"{what}: after precompute and attend the module holds attributes {extra} beyond its fields "
            f"{sorted(fields)}; keep per-source results in the Memory, never on the module"
        )

    def test_weights_form_a_distribution_over_real_positions(self, entry, module, inputs):
        values, mask, queries = inputs
        for row in range(3):
            what = (
                f"weights form a distribution: {self.subject(entry)}, row {row} ({int(mask[row].sum())} real positions)"
            )
            context, weights = module(queries[row], self.memory(module, values[row], mask[row]))
            assert context.shape == (self.size,), f"{what}: context has shape {context.shape}"
            assert weights.shape == (self.source_length,), f"{what}: weights have shape {weights.shape}"
            assert_trees_close(
                weights,
                jnp.where(mask[row], weights, 0.0),
                exact=True,
                what=f"{what}: weights at masked positions must be exactly 0",
            )
            assert_trees_close(jnp.sum(weights), jnp.ones(()), atol=1e-5, what=f"{what}: sum of the weights")
            assert_trees_close(context, weights @ values[row], atol=1e-5, what=f"{what}: context == weights @ values")

    def test_fully_masked_memory_gives_zero_weights_and_context(self, entry, module, inputs):
        """Every position masked: every weight exactly 0, the context exactly 0, finite gradients."""
        values, _, queries = inputs
        nothing = jnp.zeros(self.source_length, bool)
        what = f"fully masked memory of {self.subject(entry)} (all {self.source_length} positions masked)"
        context, weights = module(queries[0], self.memory(module, values[0], nothing))
        hint = "mask the scores with finfo.min and zero the masked weights after the softmax (zoo.nn.masked_softmax)"
        assert_trees_close(
            weights, jnp.zeros_like(weights), exact=True, what=f"{what}: weights must be exactly 0; {hint}"
        )
        assert_trees_close(context, jnp.zeros_like(context), exact=True, what=f"{what}: the context must be exactly 0")
        grads = eqx.filter_jit(
            eqx.filter_grad(lambda m: jnp.sum(m(queries[0], self.memory(m, values[0], nothing))[0]))
        )(module)
        for path, grad in parameter_leaves(grads):
            assert bool(jnp.all(jnp.isfinite(grad))), f"{what}: the gradient of {path} is not finite"

    def test_context_is_the_weighted_sum_of_any_values(self, entry, module, inputs):
        # A decoder may hand the attention values already projected (of another width):
        # the scores come from the keys, the context is ``weights @ values``.
        values, mask, queries = inputs
        other = jax.random.normal(jax.random.key(6), (self.source_length, 3))
        for row in range(3):
            what = f"context is weights @ values of another width: {self.subject(entry)}, row {row}"
            keys = module.precompute(values[row])
            context, weights = module(queries[row], Memory(values=other, keys=keys, mask=mask[row]))
            _, expected_weights = module(queries[row], self.memory(module, values[row], mask[row]))
            assert_trees_close(weights, expected_weights, rtol=1e-6, atol=1e-7, what=f"{what}: weights")
            assert_trees_close(context, weights @ other, rtol=1e-5, atol=1e-6, what=f"{what}: context")

    def test_padding_invariance(self, entry, module, inputs):
        values, mask, queries = inputs
        noise = 100.0 * jax.random.normal(jax.random.key(4), (3, 5, self.size))
        longer = jnp.concatenate([values, noise], axis=1)
        longer_mask = jnp.concatenate([mask, jnp.zeros((3, 5), bool)], axis=1)
        for row in range(3):
            short = module(queries[row], self.memory(module, values[row], mask[row]))
            context, weights = module(queries[row], self.memory(module, longer[row], longer_mask[row]))
            assert_trees_close(
                (context, weights[: self.source_length]),
                short,
                what=f"padding invariance of {self.subject(entry)}, row {row} (5 more pads; [0] context, [1] weights)",
            )

    def test_vmap_equals_loop_and_jit(self, entry, module, inputs):
        values, mask, queries = inputs

        def attend(m, q, v, k):
            return m(q, self.memory(m, v, k))

        batched = eqx.filter_jit(lambda m: jax.vmap(lambda q, v, k: attend(m, q, v, k))(queries, values, mask))(module)
        for row in range(3):
            assert_trees_close(
                jax.tree.map(lambda a, r=row: a[r], batched),
                attend(module, queries[row], values[row], mask[row]),
                what=f"jit and vmap of {self.subject(entry)}, row {row} ([0] context, [1] weights)",
            )

    def test_gradients_reach_every_parameter(self, entry, module, inputs):
        values, mask, queries = inputs
        if not parameter_leaves(module):
            pytest.skip("this attention has no parameters")
        target = jax.random.normal(jax.random.key(8), (self.size,))
        grads = eqx.filter_grad(lambda m: jnp.sum(m(queries[0], self.memory(m, values[0], mask[0]))[0] * target))(
            module
        )
        assert_gradients_reach_every_parameter(grads, self.subject(entry))

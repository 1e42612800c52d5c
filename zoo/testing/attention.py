"""Checks for attention mechanisms (the contract of `zoo.interfaces.Attention`).

Every assertion starts with the contract it enforces and the attention it is about.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

from zoo.building.builder import component_spec
from zoo.errors import ZooError
from zoo.interfaces import Attention, LinearInValues, Memory
from zoo.testing.base import assert_gradients_reach_every_parameter, assert_trees_close, parameter_leaves
from zoo.testing.components import _Built

__all__ = ["AttentionTests"]


def _over_heads(weights):
    """The weights a decoder reports: ``[src]`` as they are, ``[heads, src]`` averaged over heads."""
    return weights if weights.ndim == 1 else jnp.mean(weights, axis=0)


class AttentionTests(_Built):
    """A context ``[context_size]`` and weights ``[src]`` or ``[heads, src]``, each a distribution
    over real positions with exact zeros on masked ones (all masked: all 0, and a zero context);
    stateless; padding invariant; vmap and jit equal a loop; for a `LinearInValues`, the context is
    the weighted sum of values of any width."""

    test_key_none_is_inference = None  # an attention is called without a key

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

    def attend(self, entry, module, query, memory: Memory, what: str):
        """``module(query, memory)``, checked to be a ``(context [context_size], weights)`` pair
        whose weights are ``[src]`` or ``[heads, src]``."""
        out = module(query, memory)
        assert isinstance(out, tuple) and len(out) == 2, (
            f"{what}: an attention returns (context, weights), got {type(out).__name__}"
            + (f" of {len(out)}" if isinstance(out, tuple) else "")
        )
        context, weights = out
        src = memory.mask.shape[0]
        assert context.shape == (module.context_size,), (
            f"{what}: the context has shape {context.shape}, but an attention returns [context_size] = "
            f"({module.context_size},) (context_size is key_size unless the attention overrides it)"
        )
        assert weights.ndim in (1, 2) and weights.shape[-1] == src, (
            f"{what}: the weights have shape {weights.shape}, but an attention returns [src] = ({src},) "
            f"or per-head [heads, src] = (heads, {src})"
        )
        return context, weights

    def test_is_an_attention(self, entry, module):
        assert isinstance(module, Attention), f"{self.subject(entry)}: {type(module).__name__} is not a zoo.Attention"
        assert isinstance(module.reads_previous_state, bool), (
            f"{self.subject(entry)}: reads_previous_state must be a bool, got {module.reads_previous_state!r}"
        )
        sizes = (module.query_size, module.key_size)
        assert sizes == (self.size, self.size), (
            f"{self.subject(entry)}: (query_size, key_size) is {sizes}, but it was built with the wired "
            f"query_size={self.size}, key_size={self.size}; keep the sizes it is given"
        )
        width = module.context_size
        assert isinstance(width, int) and not isinstance(width, bool) and width >= 1, (
            f"{self.subject(entry)}: context_size must be a positive int (the width of the context), got {width!r}"
        )

    def test_context_width_is_context_size(self, registry, entry):
        """Built with query_size 6 and key_size 4, the context is ``[context_size]`` on values of the key
        width (equal sizes would hide a context of the query's width: a skipped output projection)."""
        what = f"output width of {self.subject(entry)} (query_size={self.size}, key_size={self.size - 2})"
        spec = component_spec(entry.name, kind="attention", registry=registry, **entry.test)
        try:
            module = spec.build(query_size=self.size, key_size=self.size - 2, key=jax.random.key(0))
        except (ValueError, ZooError) as error:
            pytest.skip(f"it takes only equal query and key sizes ({type(error).__name__}: {error})")
        values = jax.random.normal(jax.random.key(2), (self.source_length, self.size - 2))
        memory = self.memory(module, values, jnp.arange(self.source_length) < 4)
        context, _ = self.attend(entry, module, jax.random.normal(jax.random.key(3), (self.size,)), memory, what)
        assert module.context_size >= 1 and context.shape == (module.context_size,), f"{what}: {context.shape}"

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
        assert not bool(jnp.allclose(fresh[0][1][..., :4], fresh[1][1][..., :4])), (
            f"{what}: memories A and B (different values, both with 4+ real positions) give the same weights; "
            "the weights must depend on the memory's keys"
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
        """A context ``[context_size]`` and weights ``[src]`` or ``[heads, src]``; the weights a decoder
        reports (the mean over heads for per-head weights) sum to 1 over real positions and are exactly
        0 on masked ones."""
        values, mask, queries = inputs
        for row in range(3):
            real = int(mask[row].sum())
            what = f"weights form a distribution: {self.subject(entry)}, row {row} ({real} real positions)"
            _, weights = self.attend(entry, module, queries[row], self.memory(module, values[row], mask[row]), what)
            reported = _over_heads(weights)
            if weights.ndim == 2:
                what += f", the mean of its {weights.shape[0]} heads' weights"
            assert_trees_close(
                reported,
                jnp.where(mask[row], reported, 0.0),
                exact=True,
                what=f"{what}: weights at masked positions must be exactly 0",
            )
            assert_trees_close(
                jnp.sum(reported),
                jnp.ones(()),
                atol=1e-5,
                what=f"{what}: the weights must sum to 1 over real positions",
            )

    def test_each_head_weights_form_a_distribution(self, entry, module, inputs):
        """Per-head weights ``[heads, src]``: every head's row is a distribution of its own over the
        real positions, exactly 0 on masked ones, and the number of heads does not depend on the input."""
        values, mask, queries = inputs
        _, first = module(queries[0], self.memory(module, values[0], mask[0]))
        if first.ndim != 2:
            pytest.skip(f"{self.subject(entry)} returns one distribution, weights of shape {first.shape}")
        heads = first.shape[0]
        for row in range(3):
            real = int(mask[row].sum())
            what = f"each head's weights form a distribution: {self.subject(entry)}, row {row} ({real} real positions)"
            _, weights = self.attend(entry, module, queries[row], self.memory(module, values[row], mask[row]), what)
            assert weights.shape[0] == heads, (
                f"{what}: {weights.shape[0]} heads here, {heads} on row 0; the number of heads is the attention's own"
            )
            for head in range(heads):
                assert_trees_close(
                    weights[head],
                    jnp.where(mask[row], weights[head], 0.0),
                    exact=True,
                    what=f"{what}: head {head}'s weights at masked positions must be exactly 0",
                )
                assert_trees_close(
                    jnp.sum(weights[head]),
                    jnp.ones(()),
                    atol=1e-5,
                    what=f"{what}: head {head}'s weights must sum to 1 over real positions",
                )

    def test_fully_masked_memory_gives_zero_weights_and_context(self, entry, module, inputs):
        """Every position masked: every weight exactly 0, the context exactly 0, finite gradients."""
        values, _, queries = inputs
        nothing = jnp.zeros(self.source_length, bool)
        what = f"fully masked memory of {self.subject(entry)} (all {self.source_length} positions masked)"
        context, weights = self.attend(entry, module, queries[0], self.memory(module, values[0], nothing), what)
        hint = "mask the scores with finfo.min and zero the masked weights after the softmax (zoo.nn.masked_softmax)"
        assert_trees_close(
            weights, jnp.zeros_like(weights), exact=True, what=f"{what}: weights must be exactly 0; {hint}"
        )
        assert_trees_close(
            context,
            jnp.zeros_like(context),
            exact=True,
            what=f"{what}: the context must be exactly 0 (add nothing to it, no bias, but what the weights mix)",
        )
        grads = eqx.filter_jit(
            eqx.filter_grad(lambda m: jnp.sum(m(queries[0], self.memory(m, values[0], nothing))[0]))
        )(module)
        for path, grad in parameter_leaves(grads):
            assert bool(jnp.all(jnp.isfinite(grad))), f"{what}: the gradient of {path} is not finite"

    def test_context_is_the_weighted_sum_of_any_values(self, entry, module, inputs):
        """A `LinearInValues` attention may be handed values already projected, of another width (a
        decoder's fast path): the scores come from the keys alone, the context is ``weights @ values``."""
        if not isinstance(module, LinearInValues):
            pytest.skip(
                f"{self.subject(entry)} does not declare zoo.interfaces.LinearInValues: its context may be any "
                "function of the values"
            )
        values, mask, queries = inputs
        other = jax.random.normal(jax.random.key(6), (self.source_length, 3))
        for row in range(3):
            what = (
                f"a LinearInValues attention's context is weights @ values of any width: {self.subject(entry)}, "
                f"row {row}, values of width 3 instead of {self.size}"
            )
            keys = module.precompute(values[row])
            out = module(queries[row], Memory(values=other, keys=keys, mask=mask[row]))
            assert isinstance(out, tuple) and len(out) == 2, f"{what}: an attention returns (context, weights)"
            context, weights = out
            assert weights.shape == (self.source_length,), (
                f"{what}: the weights have shape {weights.shape}; a LinearInValues attention returns weights "
                f"[src] = ({self.source_length},)"
            )
            _, expected_weights = module(queries[row], self.memory(module, values[row], mask[row]))
            assert_trees_close(
                weights,
                expected_weights,
                rtol=1e-6,
                atol=1e-7,
                what=f"{what}: the weights must not depend on the values (the scores read the keys)",
            )
            assert context.shape == (3,), (
                f"{what}: the context has shape {context.shape}; it must be weights @ values, of shape (3,)"
            )
            assert_trees_close(
                context, weights @ other, rtol=1e-5, atol=1e-6, what=f"{what}: the context must equal weights @ values"
            )

    def test_padding_invariance(self, entry, module, inputs):
        values, mask, queries = inputs
        noise = 100.0 * jax.random.normal(jax.random.key(4), (3, 5, self.size))
        longer = jnp.concatenate([values, noise], axis=1)
        longer_mask = jnp.concatenate([mask, jnp.zeros((3, 5), bool)], axis=1)
        for row in range(3):
            what = f"padding invariance of {self.subject(entry)}, row {row} (5 more pads; [0] context, [1] weights)"
            short = module(queries[row], self.memory(module, values[row], mask[row]))
            context, weights = self.attend(
                entry, module, queries[row], self.memory(module, longer[row], longer_mask[row]), what
            )
            assert_trees_close(
                weights[..., self.source_length :],
                jnp.zeros_like(weights[..., self.source_length :]),
                exact=True,
                what=f"{what}: the weights on the added pads must be exactly 0",
            )
            assert_trees_close((context, weights[..., : self.source_length]), short, what=what)

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
        target = jax.random.normal(jax.random.key(8), (module.context_size,))
        grads = eqx.filter_grad(lambda m: jnp.sum(m(queries[0], self.memory(m, values[0], mask[0]))[0] * target))(
            module
        )
        assert_gradients_reach_every_parameter(grads, self.subject(entry))
